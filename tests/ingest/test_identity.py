"""A source tree -> the library's name and version as its docs give them, and the git commit:
each source of a name and a version, their precedence, and git read from ``.git`` as files
(built here with real git commands when git is installed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cogitave.errors import IngestError
from cogitave.ingest.confined import TreeReader
from cogitave.ingest.gitrepo import read_head
from cogitave.ingest.sources import SourceIdentity, identify
from tests.ingest.helpers import write

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")


def names(path: Path, **kw: object) -> tuple[str | None, str, str | None, str]:
    found = identify(path, **kw)  # type: ignore[arg-type]
    return found.name, found.name_from, found.version, found.version_from


# -- names and versions from the site's config -------------------------------------------------
def test_mkdocs_site_name(tmp_path: Path) -> None:
    write(tmp_path, "docs/en/mkdocs.yml", "site_name: FastAPI\nsite_url: https://x.dev/\n")
    write(tmp_path, "docs/en/docs/index.md", "# Home\n")
    assert names(tmp_path)[:2] == ("FastAPI", "docs/en/mkdocs.yml site_name")
    assert names(tmp_path / "docs/en/mkdocs.yml")[:2] == ("FastAPI", "mkdocs.yml site_name")


def test_docusaurus_title_and_the_version_served_by_default(tmp_path: Path) -> None:
    write(
        tmp_path,
        "website/docusaurus.config.ts",
        """
        // title: 'Not this'
        const config: Config = {
          title: 'Jest',
          themeConfig: { navbar: { title: 'Jest docs' } },
          presets: [['classic', { docs: { path: '../docs' } }]],
        };
        export default config;
        """,
    )
    write(tmp_path, "docs/a.md", "# A\n")
    write(tmp_path, "website/package.json", '{"name": "website", "version": "0.0.0"}')
    assert names(tmp_path) == ("Jest", "website/docusaurus.config.ts title", None, "")
    write(tmp_path, "website/versions.json", '["29.7", "29.6"]')
    write(tmp_path, "website/versioned_docs/version-29.7/a.md", "# A\n")
    write(tmp_path, "website/versioned_docs/version-29.6/a.md", "# A\n")
    assert names(tmp_path)[2:] == ("29.7", "website/versions.json (served by default)")
    # the unreleased docs served by default: their version only when the config labels them
    config = (tmp_path / "website/docusaurus.config.ts").read_text()
    served = config.replace("path: '../docs'", "path: '../docs', lastVersion: 'current'")
    write(tmp_path, "website/docusaurus.config.ts", served)
    assert names(tmp_path)[2] is None
    labelled = served.replace(
        "lastVersion: 'current'", "lastVersion: 'current', versions: { current: { label: 'v30' } }"
    )
    write(tmp_path, "website/docusaurus.config.ts", labelled)
    assert names(tmp_path)[2:] == ("v30", "website/docusaurus.config.ts versions.current")


def test_sphinx_project_and_release_read_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    write(
        tmp_path,
        "docs/conf.py",
        f"""
        import pathlib
        pathlib.Path({str(marker)!r}).write_text("ran")
        project = 'Requests'
        version = '2.32'
        release: str = '2.32.3'
        """,
    )
    write(tmp_path, "docs/index.rst", "Home\n====\n")
    assert names(tmp_path) == ("Requests", "docs/conf.py project", "2.32.3", "docs/conf.py release")
    assert not marker.exists()
    # a computed release is not known without running conf.py: `version` then, else the package
    write(tmp_path, "docs/conf.py", "import x\nproject = 'Requests'\nrelease = x.__version__\n")
    write(tmp_path, "pyproject.toml", "[project]\nname = 'requests'\nversion = '2.32.3'\n")
    assert names(tmp_path)[2:] == ("2.32.3", "pyproject.toml [project] version")
    write(tmp_path, "docs/conf.py", "project = 'Requests'\nversion = '2.32'\n")
    assert names(tmp_path)[2:] == ("2.32", "docs/conf.py version")


def test_vitepress_starlight_and_hugo_titles(tmp_path: Path) -> None:
    vite = tmp_path / "vite"
    write(
        vite,
        "docs/.vitepress/config.mts",
        "export default defineConfig({\n  locales: { fr: { title: 'VitePress FR' } },\n"
        "  title: 'VitePress',\n})\n",
    )
    write(vite, "docs/index.md", "# Home\n")
    assert names(vite)[:2] == ("VitePress", "docs/.vitepress/config.mts title")
    astro = tmp_path / "astro"
    write(
        astro,
        "astro.config.mjs",
        "import starlight from '@astrojs/starlight';\nexport default defineConfig({\n"
        "  integrations: [starlight({ title: { en: 'My Docs', fr: 'Mes docs' } })],\n})\n",
    )
    write(astro, "src/content/docs/index.md", "# Home\n")
    assert names(astro)[:2] == ("My Docs", "astro.config.mjs title")
    hugo = tmp_path / "hugo"
    write(hugo, "hugo.toml", "title = 'Hugo'\n[params]\nversion = '0.140'\n")
    write(hugo, "content/_index.md", "# Home\n")
    assert names(hugo) == (
        "Hugo",
        "the Hugo config's title",
        "0.140",
        "the Hugo config's params.version",
    )
    write(hugo, "hugo.toml", "[languages.en]\ntitle = 'Hugo EN'\n[languages.fr]\ntitle = 'FR'\n")
    assert names(hugo)[0] == "Hugo EN"


# -- the package, then the folder --------------------------------------------------------------
def test_the_nearest_package_inside_the_tree(tmp_path: Path) -> None:
    tree = tmp_path / "httpx"
    write(tree, "docs/index.md", "# Home\n")
    assert names(tree) == ("httpx", "the folder's name", None, "")
    # a generic folder name gives the folder above's
    assert names(tree / "docs")[:2] == ("httpx", "the name of the folder above docs/")
    write(tree, "package.json", json.dumps({"name": "httpx-js", "version": "1.0.0"}))
    assert names(tree) == ("httpx-js", "package.json name", "1.0.0", "package.json version")
    write(tree, "pyproject.toml", "[project]\nname = 'httpx'\nversion = '0.28.1'\n")
    assert names(tree) == (
        "httpx",
        "pyproject.toml [project] name",
        "0.28.1",
        "pyproject.toml [project] version",
    )
    # a package above the tree is outside it: not read
    assert names(tree / "docs")[:3] == ("httpx", "the name of the folder above docs/", None)
    # the nearest one at or above the docs root wins; a private package.json is a site's,
    # not the library's
    write(tree, "mkdocs.yml", "docs_dir: docs\n")
    write(tree, "docs/package.json", json.dumps({"name": "site", "private": True}))
    assert names(tree)[0] == "httpx"
    write(tree, "docs/package.json", json.dumps({"name": "httpx-docs", "version": "0.0.0"}))
    assert names(tree)[:3] == ("httpx-docs", "docs/package.json name", None)


@pytest.mark.parametrize(
    ("pyproject", "file", "text", "where"),
    [
        ("", "src/my_lib/__init__.py", "__version__ = '1.4.0'\n", "src/my_lib/__init__.py"),
        ("", "my_lib/_version.py", "__version__ = version = '1.4.0'\n", "my_lib/_version.py"),
        ("", "my_lib/version.py", "__version__: str = '1.4.0'\n", "my_lib/version.py"),
        (
            "[tool.hatch.version]\npath = 'lib/about.py'\n",
            "lib/about.py",
            "VERSION = '1.4.0'\n",
            "lib/about.py",
        ),
        (
            "[tool.setuptools.dynamic]\nversion = {attr = 'pkg.meta.VERSION'}\n",
            "src/pkg/meta.py",
            "VERSION = '1.4.0'\n",
            "src/pkg/meta.py",
        ),
    ],
)
def test_a_dynamic_python_version(
    tmp_path: Path, pyproject: str, file: str, text: str, where: str
) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        "[project]\nname = 'my-lib'\ndynamic = ['version']\n" + pyproject,
    )
    write(tmp_path, "docs/index.md", "# Home\n")
    marker = tmp_path / "ran"
    write(tmp_path, file, f"open({str(marker)!r}, 'w')\n" + text)
    name = "__version__" if "__version__" in text else "VERSION"
    assert names(tmp_path)[2:] == ("1.4.0", f"{where} {name}")
    assert not marker.exists()


def test_precedence_config_then_package_then_git_then_folder(tmp_path: Path) -> None:
    write(tmp_path, "mkdocs.yml", "site_name: Demo Docs\n")
    write(tmp_path, "docs/index.md", "# Home\n")
    write(tmp_path, "pyproject.toml", "[project]\nname = 'demo'\nversion = '3.1'\n")
    found = identify(tmp_path)
    assert found == SourceIdentity(
        "Demo Docs", "3.1", None, "mkdocs.yml site_name", found.version_from
    )
    write(tmp_path, "pyproject.toml", "[tool.ruff]\nline-length = 100\n")  # not a package
    assert names(tmp_path)[:3] == ("Demo Docs", "mkdocs.yml site_name", None)
    write(tmp_path, "mkdocs.yml", "nav: []\n")
    assert names(tmp_path)[:2] == (tmp_path.name, "the folder's name")


def test_a_missing_source(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="source not found"):
        identify(tmp_path / "gone")


# -- git ------------------------------------------------------------------------------------
def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "A",
        "GIT_AUTHOR_EMAIL": "a@example.dev",
        "GIT_COMMITTER_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@example.dev",
    }
    assert GIT is not None
    done = subprocess.run(
        [GIT, "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def repo(root: Path) -> tuple[str, str]:
    """A work tree with two commits: (first, second); HEAD on main at the second."""
    write(root, "mkdocs.yml", "site_name: Demo\n")
    write(root, "docs/index.md", "# Home\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "one")
    first = git(root, "rev-parse", "HEAD")
    write(root, "docs/more.md", "# More\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "two")
    return first, git(root, "rev-parse", "HEAD")


@needs_git
def test_git_head_on_a_branch_and_detached(tmp_path: Path) -> None:
    first, second = repo(tmp_path)
    git(tmp_path, "tag", "v0.9.0", first)
    head = read_head(tmp_path / "docs", TreeReader(tmp_path))
    assert head is not None and (head.commit, head.branch, head.tags) == (second, "main", ())
    found = identify(tmp_path)
    assert (found.commit, found.version) == (second, None)  # the tag names another commit
    git(tmp_path, "checkout", "-q", "--detach", first)
    head = read_head(tmp_path, TreeReader(tmp_path))
    assert head is not None and (head.commit, head.branch, head.tags) == (first, None, ("v0.9.0",))
    found = identify(tmp_path)
    assert (found.commit, found.version, found.version_from) == (first, "0.9.0", "git tag v0.9.0")


@needs_git
@pytest.mark.parametrize("annotated", [False, True])
@pytest.mark.parametrize("packing", ["loose", "packed-refs", "packed-objects", "gc"])
def test_git_tags_loose_and_packed(tmp_path: Path, annotated: bool, packing: str) -> None:
    _first, second = repo(tmp_path)
    git(tmp_path, "tag", *(["-a", "-m", "release"] if annotated else []), "v2.1.0")
    git(tmp_path, "tag", "docs-build")  # not a version
    if packing == "packed-refs":
        git(tmp_path, "pack-refs", "--all")
    elif packing == "packed-objects":  # refs loose, the tag object only in a pack
        git(tmp_path, "repack", "-a", "-d", "-q")
        git(tmp_path, "prune-packed")
        assert not list((tmp_path / ".git/objects").glob("??/*"))
    elif packing == "gc":
        git(tmp_path, "gc", "-q")
    found = identify(tmp_path)
    assert (found.commit, found.version, found.version_from) == (second, "2.1.0", "git tag v2.1.0")
    head = read_head(tmp_path, TreeReader(tmp_path))
    assert head is not None and head.tags == ("docs-build", "v2.1.0")


@needs_git
def test_the_package_version_comes_before_the_tag(tmp_path: Path) -> None:
    repo(tmp_path)
    git(tmp_path, "tag", "-a", "-m", "r", "pkg@4.0.0")
    git(tmp_path, "tag", "v4.0.0-rc.1")
    assert names(tmp_path)[2:] == ("4.0.0-rc.1", "git tag v4.0.0-rc.1")  # unprefixed first
    write(tmp_path, "package.json", json.dumps({"name": "pkg", "version": "4.0.0"}))
    assert names(tmp_path)[2:] == ("4.0.0", "package.json version")


@needs_git
def test_a_git_file_is_followed_only_inside_the_tree(tmp_path: Path) -> None:
    main = tmp_path / "main"
    _first, second = repo(main)
    # a worktree: its .git file points into the main repository, outside this tree
    wt = tmp_path / "wt"
    git(main, "worktree", "add", "-q", "-b", "other", str(wt))
    assert identify(wt).commit is None
    allowed = identify(wt, allow_outside=[main / ".git"])
    assert allowed.commit == second
    # a .git file naming a folder outside: refused quietly
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere, "docs/index.md", "# Home\n")
    write(elsewhere, ".git", f"gitdir: {main / '.git'}\n")
    assert identify(elsewhere).commit is None
    # a tree inside a repository whose .git is above it: outside, unless allowed
    assert identify(main / "docs").commit is None
    assert identify(main / "docs", allow_outside=[main / ".git"]).commit == second
    # a git folder kept inside the tree (a submodule's, `--separate-git-dir`) is followed
    inner = tmp_path / "inner"
    write(inner, "docs/index.md", "# Home\n")
    git(inner, "init", "-q", f"--separate-git-dir={inner / 'store'}")
    git(inner, "add", "docs")
    git(inner, "commit", "-q", "-m", "one")
    assert identify(inner).commit == git(inner, "rev-parse", "HEAD")


@needs_git
def test_git_is_never_run_and_odd_refs_are_passed_over(tmp_path: Path) -> None:
    _first, second = repo(tmp_path)
    marker = tmp_path / "ran"
    with (tmp_path / ".git/config").open("a") as f:
        f.write(f"[core]\n\tfsmonitor = touch {marker}\n")
    assert identify(tmp_path).commit == second
    assert not marker.exists()
    (tmp_path / ".git/HEAD").write_text("ref: ../../../etc/passwd\n")
    assert identify(tmp_path).commit is None
    (tmp_path / ".git/HEAD").write_text("ref: refs/heads/none\n")
    assert identify(tmp_path).commit is None
    (tmp_path / ".git/HEAD").write_text(second + "\n")
    assert identify(tmp_path).commit == second
