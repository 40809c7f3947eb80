"""The reader's follower: it keeps looking through a failed look, and starts again after a
stop (a server that unfollows and follows again keeps following)."""

from __future__ import annotations

import threading

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
