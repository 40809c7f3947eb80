"""A git repository as a source: ``git+URL[@REF][#SUBDIR]`` parsed, cloned shallow from a
local bare repository made in the test, read confined to the checkout, its commit and tag
kept as provenance, and re-synced after a new commit."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cogitave import Collection, indexing
from cogitave.errors import IngestError, InputError
from cogitave.indexing import SourceSpec
from cogitave.ingest import clone
from cogitave.ingest.clone import checkout
from cogitave.ingest.remote import GitSource, WebSource, file_url, locate, parse_git
from cogitave.libraries.collection import LibraryCollection

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

DOCS = {
    "README.md": "# Tool\n",
    "docs/mkdocs.yml": "site_name: Tool\nnav:\n  - index.md\n  - usage.md\n",
    "docs/docs/index.md": "# Tool\n\nThe tool turns widgets into gadgets.\n",
    "docs/docs/usage.md": "# Usage\n\nRun the tool on widgets.\n\n## Flags\n\nUse --fast.\n",
}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    out = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)
    return out.stdout.decode().strip()


def commit(work: Path, files: dict[str, str], message: str) -> str:
    for rel, text in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", message)
    return git(work, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, Path]:
    """(a work tree, the bare repository it pushes to), one tagged commit pushed."""
    work, bare = tmp_path / "work", tmp_path / "tool.git"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    commit(work, DOCS, "docs")
    os.symlink("/etc/passwd", work / "docs" / "docs" / "passwd.md")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "a link out")
    git(work, "tag", "-a", "v1.2.0", "-m", "release")
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(work, "push", "-q", str(bare), "main", "--tags")
    return work, bare


def test_what_a_source_argument_names(tmp_path: Path) -> None:
    g = parse_git("git+https://github.com/org/repo.git@v2.0#docs/en")
    assert (g.url, g.ref, g.subdir) == ("https://github.com/org/repo.git", "v2.0", "docs/en")
    ssh = parse_git("git+ssh://git@host.example/org/repo")
    assert (ssh.url, ssh.ref) == ("ssh://git@host.example/org/repo", None)
    assert parse_git("git+file:///srv/repo.git@main").ref == "main"
    for bad in ("git+https://h/r@--upload-pack=x", "git+https://h/r#../..", "git+ftp://h/r"):
        with pytest.raises(InputError):
            parse_git(bad)
    assert isinstance(locate("https://docs.python.org/3/"), WebSource)
    assert locate("some/folder") == Path("some/folder")
    with pytest.raises(InputError):
        locate("ftp://example.org/docs")
    bare = tmp_path / "b.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    assert isinstance(locate(str(bare)), GitSource)


def test_a_shallow_checkout_is_confined(repo: tuple[Path, Path], tmp_path: Path) -> None:
    work, bare = repo
    got = checkout(parse_git(f"git+file://{bare}@v1.2.0#docs"), tmp_path / "cache")
    assert got.commit == git(work, "rev-parse", "HEAD") and got.tag == "v1.2.0"
    assert got.path == got.root / "docs" and (got.path / "mkdocs.yml").is_file()
    assert git(got.root, "rev-list", "--count", "HEAD") == "1"  # shallow
    link = got.path / "docs" / "passwd.md"
    assert not link.is_symlink() and link.read_text() == "/etc/passwd"
    with pytest.raises(IngestError, match="no folder"):
        checkout(parse_git(f"git+file://{bare}#nothere"), tmp_path / "cache")
    with pytest.raises(IngestError, match="git fetch"):
        checkout(parse_git(f"git+file://{tmp_path}/missing.git"), tmp_path / "cache")


def test_index_a_repository_then_resync(
    repo: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, bare = repo
    monkeypatch.setenv("COGITAVE_CACHE", str(tmp_path / "cache"))
    col = tmp_path / "libs"
    LibraryCollection.create(col, encoder=None)
    text = f"git+file://{bare}#docs"
    first = indexing.index(SourceSpec(locate(text), col))
    assert first.library == "tool@1.2.0"  # the version defaults to the tag
    (entry,) = LibraryCollection.open(col).libraries()
    assert entry.source == text and entry.commit == git(work, "rev-parse", "HEAD")
    uids = set(first.published.added) if first.published else set()
    assert {"tool@1.2.0:usage", "tool@1.2.0:usage#flags"} <= uids
    assert not any("passwd" in u and "root:" in u for u in uids)
    # a new commit: only what changed is written
    new = commit(work, {"docs/docs/usage.md": DOCS["docs/docs/usage.md"] + "\nMore words.\n"},
                 "more")  # fmt: skip
    git(work, "push", "-q", str(bare), "main")
    again = indexing.index(SourceSpec(locate(text), col, version="1.2.0"))
    assert again.published is not None
    assert again.published.changed == ["tool@1.2.0:usage", "tool@1.2.0:usage#flags"]
    assert not again.published.added and not again.published.deleted
    (entry,) = LibraryCollection.open(col).libraries()
    assert entry.commit == new
    lib = json.loads((col / "LIBRARIES.json").read_text())
    assert lib["libraries"][0]["commit"] == new


def test_a_remote_cannot_redirect_git_elsewhere(tmp_path: Path) -> None:
    # A repository URL (from a package index's metadata, say) whose server answers git with
    # a redirect to another address: git does not follow it, and the other server sees
    # nothing.
    from tests.ingest.web.helpers import Route, serve

    with serve({}) as target:
        moved = target.url + "/repo.git/info/refs"

        def redirect(handler: object) -> tuple[int, dict[str, str], bytes]:
            return 302, {"Location": moved}, b""

        routes = {"/repo.git/info/refs": Route(b"", answer=redirect)}
        with serve(routes) as origin, pytest.raises(IngestError):
            checkout(GitSource(origin.url + "/repo.git"), cache=tmp_path / "cache")
        assert sum(target.hits.values()) == 0


SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://github.com/org/tool.git", "https://github.com/org/tool/blob/{c}/docs/a%20b.md"),
        ("git@github.com:org/tool.git", "https://github.com/org/tool/blob/{c}/docs/a%20b.md"),
        ("ssh://git@github.com:22/org/tool", "https://github.com/org/tool/blob/{c}/docs/a%20b.md"),
        ("https://user:token@www.github.com/org/tool", "https://github.com/org/tool/blob/{c}/docs/a%20b.md"),
        ("https://gitlab.com/group/sub/tool.git", "https://gitlab.com/group/sub/tool/-/blob/{c}/docs/a%20b.md"),
        ("https://codeberg.org/org/tool", "https://codeberg.org/org/tool/src/commit/{c}/docs/a%20b.md"),
        ("https://bitbucket.org/org/tool.git", "https://bitbucket.org/org/tool/src/{c}/docs/a%20b.md"),
    ],
)  # fmt: skip
def test_a_file_of_a_known_host_at_a_commit(url: str, shown: str) -> None:
    # from the URL git fetches alone: no request is made, credentials never shown
    assert file_url(url, SHA, "docs/a b.md") == shown.format(c=SHA)
    assert file_url(url, SHA) == shown.format(c=SHA).removesuffix("docs/a%20b.md")


def test_no_web_view_for_other_sources() -> None:
    for url in (
        "file:///srv/tool.git",
        "/srv/tool.git",
        "https://git.example.org/org/tool",  # a host whose web view is not known
        "https://github.com/org",  # no repository
        "https://github.com/org/tool/extra",
        "https://github.com/org/../tool",
        "ftp://github.com/org/tool",
    ):
        assert file_url(url, SHA, "x.md") is None, url
    assert file_url("https://github.com/org/tool", "main", "x.md") is None  # not a commit


def test_a_clone_of_a_known_host_links_to_its_files_at_the_commit(
    repo: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The source names github.com; git's own ``insteadOf`` maps that URL to the local bare
    repository (and only ``file://`` is allowed, so nothing leaves the machine)."""
    work, bare = repo
    wrapper = tmp_path / "git"
    wrapper.write_text(
        "#!/bin/sh\nGIT_ALLOW_PROTOCOL=file exec git "
        f'-c url.file://{bare}.insteadOf=https://github.com/org/tool "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setattr(clone, "GIT", str(wrapper))
    monkeypatch.setenv("COGITAVE_CACHE", str(tmp_path / "cache"))
    col = tmp_path / "col"
    text = "git+https://github.com/org/tool@v1.2.0#docs"
    res = indexing.index(SourceSpec(locate(text), col))
    head = git(work, "rev-parse", "HEAD")
    view = f"https://github.com/org/tool/blob/{head}/docs/"
    reader = Collection.open(col)
    urls = {u: reader.get(u).meta["url"] for u in ("usage", "usage#flags")}
    assert urls == {"usage": view + "docs/usage.md", "usage#flags": view + "docs/usage.md#flags"}
    assert (
        f"URLs at each page's file in the repository's web view, at the commit read ({view})"
        in (res.report)
    )
    # a base URL, given or named by the project, comes first
    again = indexing.index(SourceSpec(locate(text), col, base_url="https://tool.example/"))
    assert "URLs under https://tool.example/, as given (--base-url)" in again.report
    assert Collection.open(col).get("usage").meta["url"] == "https://tool.example/usage/"


def test_a_local_clone_has_no_web_view_and_says_so(
    repo: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, bare = repo
    monkeypatch.setenv("COGITAVE_CACHE", str(tmp_path / "cache"))
    res = indexing.index(SourceSpec(locate(f"git+file://{bare}#docs"), tmp_path / "col"))
    url = Collection.open(tmp_path / "col").get("usage").meta["url"]
    assert url == "/usage/" and "no public URL" in res.report
