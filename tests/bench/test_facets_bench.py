"""The multi-facet bench's reader and judgment rules, on a small handwritten Packages sample."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import facets as F

SAMPLE = """\
Package: pyview
Version: 1.0-1
Description: simple picture browser
Tag: implemented-in::python, interface::commandline,
 use::viewing, works-with::image:raster
Section: graphics

Package: cview
Version: 2.3-1
Description: fast picture browser for X
Tag: implemented-in::c, interface::x11, uitoolkit::gtk, use::viewing,
 works-with::image
Section: graphics

Package: pyedit
Description: picture touch-up tool
Tag: implemented-in::python, interface::x11, use::editing, works-with::image,
 use::TODO

Package: notags
Description: a library without debtags
Section: libs

Package: pyview
Description: a second record of a known name
Tag: implemented-in::perl
"""


@pytest.fixture(scope="module")
def pkgs():
    return {p.name: p for p in F.read_packages(io.StringIO(SAMPLE))}


def test_reader_parses_records_tags_and_continuations(pkgs):
    assert list(pkgs) == ["pyview", "cview", "pyedit", "notags"]  # first record of a name wins
    assert pkgs["pyview"].description == "simple picture browser"
    assert pkgs["pyview"].section == "graphics"
    # a continuation line is part of the field; a sub-tag counts as its parent; TODO is dropped
    assert pkgs["pyview"].tags == {
        "implemented-in::python",
        "interface::commandline",
        "use::viewing",
        "works-with::image",
    }
    assert "use::TODO" not in pkgs["pyedit"].tags
    assert pkgs["notags"].tags == frozenset()


def test_nodes_put_tags_in_words_and_leave_empty_dimensions_out(pkgs):
    dims = F.node_dims(pkgs["cview"])
    assert dims == {
        "name": "cview",
        "description": "fast picture browser for X",
        "purpose": "viewer image",
        "language": "c",
        "interface": "x11 graphical",
        "toolkit": "gtk",
    }
    assert F.node_dims(pkgs["notags"]) == {
        "name": "notags",
        "description": "a library without debtags",
    }
    sch = F.schema(facets=True)
    assert sch.facets == ["language", "interface", "toolkit", "kind"]
    assert sch.fields == ["name", "description", "purpose"]
    assert F.schema(facets=False).facets == ["kind"]


def test_grades_follow_topic_and_constraints(pkgs):
    q = {"qid": "q", "topic": ["works-with::image", "use::viewing"], "facets": {}}
    python_cli = {**q, "facets": {"language": "python", "interface": "commandline"}}
    assert F.grade(pkgs["pyview"], python_cli) == 2
    assert F.grade(pkgs["cview"], python_cli) == 1  # the topic, not the constraints
    assert F.grade(pkgs["pyedit"], python_cli) == 0  # python, but an editor
    assert F.grade(pkgs["notags"], python_cli) == 0
    # "graphical" stands for interface::graphical or interface::x11
    graphical = {**q, "facets": {"interface": "graphical"}}
    assert F.grade(pkgs["cview"], graphical) == 2
    assert F.grade(pkgs["pyview"], graphical) == 1
    assert F.judge(pkgs.values(), [python_cli]) == {"q": {"pyview": 2, "cview": 1}}


def test_query_generation_is_seeded_and_keeps_constraining_combinations():
    records = []
    for i in range(3):
        records.append(
            f"Package: py{i}\nDescription: d\nTag: implemented-in::python, use::viewing, "
            "works-with::image\n"
        )
    for i in range(6):
        records.append(
            f"Package: c{i}\nDescription: d\nTag: implemented-in::c, use::viewing, "
            "works-with::image\n"
        )
    pkgs = F.read_packages(io.StringIO("\n".join(records)))
    qs = F.generate_queries(pkgs, n=10, seed=3)
    assert qs == F.generate_queries(pkgs, n=10, seed=3)
    # the only constraint that leaves 2-30 full matches and >= 5 partial ones is python;
    # each topic (viewer, image, image viewer) gives one query
    assert {tuple(q["topic"]) for q in qs} == {
        ("use::viewing",),
        ("works-with::image",),
        ("works-with::image", "use::viewing"),
    }
    assert all(q["facets"] == {"language": "python"} for q in qs)
    pair = next(q for q in qs if len(q["topic"]) == 2)
    assert pair["text"] in ("image viewer written in python", "python image viewer")
    qrels = F.judge(pkgs, qs)
    want = {**{f"py{i}": 2 for i in range(3)}, **{f"c{i}": 1 for i in range(6)}}
    assert qrels[pair["qid"]] == want


def test_selection_keeps_every_judged_package_and_samples_the_rest(pkgs):
    q = {"qid": "q", "topic": ["use::editing"], "facets": {"language": "python"}}
    chosen = F.select(list(pkgs.values()), [q], size=2, seed=1)
    assert chosen[0].name == "pyedit" and len(chosen) == 2
    assert len(F.select(list(pkgs.values()), [q], size=100, seed=1)) == 4


def test_wins_counts_per_query():
    assert F.wins({"a": 0.5, "b": 0.2, "c": 0.3}, {"a": 0.4, "b": 0.2, "c": 0.9}) == (1, 1, 1)
