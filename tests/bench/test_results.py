"""``bench/_machine.write_section``: a bench replaces its own section of RESULTS.md, in place,
and the run it replaces goes to the dated history file. Only temporary files are written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import _machine as M

HEAD = "# Benchmark results\n\nThe latest run of each bench.\n"


def section(name: str, body: str) -> str:
    return f"<!-- bench:{name} -->\n{body}\n<!-- /bench:{name} -->\n"


QUALITY = "## Ranking quality (2026-11-30)\n\nMachine: A.\n\n| a | b |\n|---|---|\n| 1 | 2 |"
FACETS = "## Multi-facet collection: Debian packages (2026-11-30)\n\nMachine: A.\n\nfacets table"
LOAD = "## Load with heavy requests: `bench/load.py --mix`\n\nno date here\n\nMachine: A."


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    results, history = tmp_path / "RESULTS.md", tmp_path / "history"
    text = HEAD + "\n" + section("quality", QUALITY) + "\n" + section("facets", FACETS)
    results.write_text(text + "\n" + section("load", LOAD))
    return results, history


def write(files: tuple[Path, Path], name: str, text: str) -> None:
    M.write_section(name, text, results=files[0], history=files[1])


def test_replaces_only_its_section_and_moves_the_old_run_to_history(files):
    results, history = files
    before = results.read_text()
    new = "\n## Ranking quality (2026-12-02)\n\nMachine: B.\n\n| a | b |\n|---|---|\n| 3 | 4 |\n"
    write(files, "quality", new)
    after = results.read_text()
    assert after == before.replace(QUALITY, new.strip("\n"))
    # the other sections and the header are byte-identical
    assert after.startswith(HEAD)
    assert after.endswith("\n" + section("facets", FACETS) + "\n" + section("load", LOAD))
    assert after.count("## Ranking quality") == 1
    assert sorted(p.name for p in history.iterdir()) == ["2026-11-30.md"]
    assert (history / "2026-11-30.md").read_text() == QUALITY + "\n"


def test_history_file_is_appended_to_with_a_blank_line(files):
    history = files[1]
    history.mkdir()
    (history / "2026-11-30.md").write_text("## Earlier (2026-11-30)\n\nold\n")
    write(files, "facets", "## Multi-facet collection: Debian packages (2026-12-02)\n\nnew")
    assert (history / "2026-11-30.md").read_text() == (
        "## Earlier (2026-11-30)\n\nold\n\n" + FACETS + "\n"
    )


def test_identical_text_is_a_no_op(files):
    results, history = files
    before = results.read_bytes()
    write(files, "quality", "\n" + QUALITY + "\n")
    write(files, "quality", QUALITY)
    assert results.read_bytes() == before
    assert not history.exists()


def test_rerun_twice_records_each_replaced_run_once(files):
    results, history = files
    write(files, "quality", "## Ranking quality (2026-12-02)\n\nsecond")
    write(files, "quality", "## Ranking quality (2026-12-02)\n\nthird")
    write(files, "quality", "## Ranking quality (2026-12-02)\n\nthird")
    assert (history / "2026-11-30.md").read_text() == QUALITY + "\n"
    assert (history / "2026-12-02.md").read_text() == "## Ranking quality (2026-12-02)\n\nsecond\n"
    assert "third" in results.read_text() and "second" not in results.read_text()


def test_a_run_already_in_history_is_not_copied_again(files):
    """The runs carried over from the old log are in the history already."""
    history = files[1]
    history.mkdir()
    kept = "## Other (2026-11-29)\n\nx\n\n" + LOAD + "\n\n## More (2026-11-29)\n"
    (history / "2026-11-29.md").write_text(kept)
    write(files, "load", "## Load with heavy requests (2026-12-02): `bench/load.py --mix`\n\nnew")
    assert (history / "2026-11-29.md").read_text() == kept
    assert sorted(p.name for p in history.iterdir()) == ["2026-11-29.md"]


def test_pointer_lines_stay_out_of_history(files):
    results, history = files
    pointer = "History: the earlier runs are in history/2026-11-29.md."
    results.write_text(results.read_text().replace(FACETS, FACETS + "\n\n" + pointer))
    write(files, "facets", "## Multi-facet collection: Debian packages (2026-12-02)\n\nnew")
    assert (history / "2026-11-30.md").read_text() == FACETS + "\n"
    write(files, "facets", "## Multi-facet collection: Debian packages (2026-12-02)\n\nnewer")
    assert pointer not in "".join(p.read_text() for p in history.iterdir())


def test_a_carried_over_run_with_a_pointer_is_not_copied_again(files):
    results, history = files
    history.mkdir()
    (history / "2026-11-30.md").write_text("## Before (2026-11-30)\n\n" + FACETS + "\n")
    pointer = "History: the earlier runs are in history/2026-11-29.md."
    results.write_text(results.read_text().replace(FACETS, FACETS + "\n\n" + pointer))
    write(files, "facets", "## Multi-facet collection: Debian packages (2026-12-02)\n\nnew")
    assert (history / "2026-11-30.md").read_text() == "## Before (2026-11-30)\n\n" + FACETS + "\n"


def test_undated_run_goes_to_today(files, monkeypatch):
    history = files[1]
    monkeypatch.setattr(M.time, "strftime", lambda fmt: "2026-12-03")
    write(files, "load", "## Load with heavy requests (2026-12-03)\n\nnew")
    assert (history / "2026-12-03.md").read_text() == LOAD + "\n"


def test_missing_section_is_added_in_the_order_of_sections(files):
    results, history = files
    before = results.read_text()
    write(files, "docs_quality", "\n## Documentation questions (2026-12-02)\n\nq\n")
    after = results.read_text()
    added = section("docs_quality", "## Documentation questions (2026-12-02)\n\nq")
    # quality < docs_quality < facets in SECTIONS: it lands before facets
    marker = "<!-- bench:facets -->"
    assert after == before.replace(marker, added + "\n" + marker)
    write(files, "concurrency", "## Concurrency (2026-12-02)\n\nc")  # before load
    assert results.read_text().index("bench:concurrency") < results.read_text().index("bench:load")
    assert not history.exists()


def test_section_added_at_the_end_and_to_a_new_file(tmp_path):
    results, history = tmp_path / "RESULTS.md", tmp_path / "history"
    M.write_section("load", LOAD, results=results, history=history)
    assert results.read_text() == section("load", LOAD)
    M.write_section("my_new_bench", "## New (2026-12-02)\n\nn", results=results, history=history)
    assert results.read_text() == (
        section("load", LOAD) + "\n" + section("my_new_bench", "## New (2026-12-02)\n\nn")
    )


def test_default_paths_are_module_attributes(tmp_path, monkeypatch):
    monkeypatch.setattr(M, "RESULTS", tmp_path / "R.md")
    monkeypatch.setattr(M, "HISTORY", tmp_path / "h")
    M.write_section("quality", QUALITY)
    M.write_section("quality", "## Ranking quality (2026-12-02)\n\nnew")
    assert (tmp_path / "h" / "2026-11-30.md").read_text() == QUALITY + "\n"
    assert "new" in (tmp_path / "R.md").read_text()


def test_write_leaves_no_temporary_files(files):
    results, history = files
    write(files, "quality", "## Ranking quality (2026-12-02)\n\nnew")
    assert sorted(p.name for p in results.parent.iterdir()) == ["RESULTS.md", "history"]
    assert [p.name for p in history.iterdir()] == ["2026-11-30.md"]


def test_unclosed_section_is_an_error(tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text("<!-- bench:quality -->\n## Ranking quality (2026-11-30)\n")
    with pytest.raises(ValueError, match="bench:quality"):
        M.write_section("quality", "x", results=results, history=tmp_path / "h")
    assert results.read_text() == "<!-- bench:quality -->\n## Ranking quality (2026-11-30)\n"
