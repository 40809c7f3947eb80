"""The reader's follower: it keeps looking through a failed look (logged, once while it
repeats), and starts again after a stop (a server that unfollows and follows again keeps
following)."""

from __future__ import annotations

import logging
import threading

import pytest

from cogitave.errors import CorruptionError
from cogitave.reader import Follower


def test_a_failed_look_is_forgotten_and_the_follower_keeps_looking() -> None:
    looks: list[int] = []
    forgotten = threading.Event()
    again = threading.Event()

    def look() -> None:
        looks.append(1)
        if len(looks) == 1:
            raise OSError("a root retired mid-open")
        again.set()

    f = Follower(look, forgotten.set)
    f.start(0.01)
    f.start(0.01)  # a second start while following does nothing
    try:
        assert forgotten.wait(5) and again.wait(5)
    finally:
        f.stop()


def test_a_stopped_follower_starts_again() -> None:
    looked = threading.Event()
    f = Follower(looked.set, lambda: None)
    f.start(0.01)
    try:
        assert looked.wait(5)
        f.stop()
        looked.clear()
        f.start(0.01)  # the stop of the first run does not end the second at once
        assert looked.wait(5)
    finally:
        f.stop()


def test_a_failed_look_is_logged_once_while_it_repeats(caplog: pytest.LogCaptureFixture) -> None:
    looks: list[int] = []
    done = threading.Event()

    def look() -> None:
        looks.append(1)
        if len(looks) <= 3:
            raise OSError("HEAD names a root that is not there")
        if len(looks) == 4:
            return  # a look that works
        if len(looks) == 5:
            raise CorruptionError("roots/abc.json: checksum mismatch")
        done.set()

    f = Follower(look, lambda: None)
    with caplog.at_level(logging.WARNING, logger="cogitave"):
        f.start(0.001)
        try:
            assert done.wait(5)
        finally:
            f.stop()
    said = [r for r in caplog.records if r.name == "cogitave"]
    assert [r.getMessage().split(" (still")[0] for r in said] == [
        "following the collection's new roots: OSError: HEAD names a root that is not there",
        "following the collection's new roots: CorruptionError: roots/abc.json: checksum mismatch",
    ]
    assert said[0].exc_info and not said[1].exc_info  # a coded error needs no traceback
