"""``cogitave index --project``: every dependency of a real application (the checked-in
``tests/fixtures/project``: a pyproject and its uv.lock) indexed at the version its lockfile
pins, from packages installed in a local environment built in the test; the plan, a second
run that does nothing, a bumped pin, pruning, ``--only`` and ``--dev``; dependencies not
installed fetched from what a local package index names (a local bare repository at its
tag, a docs site served on 127.0.0.1), and one whose metadata is missing reported and
counted against ``--max-failures``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cogitave.libraries.collection import LibraryCollection
from tests.helpers import run_cli
from tests.ingest.web.helpers import Route, page, serve
from tests.libraries.helpers import INSTALLED, libraries, make_app


def files(folder: Path) -> dict[str, int]:
    """Every file and folder of a collection, with its modification time (what readers
    hold, ``readers/``, left out: a read pins the root it reads)."""
    return {
        str(p.relative_to(folder)): p.stat().st_mtime_ns
        for p in folder.rglob("*")
        if "readers" not in p.relative_to(folder).parts
    }


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setenv("COGITAVE_CACHE", str(tmp_path / "cache"))
    # nothing here may reach the public index: an unreachable one fails loudly instead
    monkeypatch.setenv("COGITAVE_PYPI_URL", "http://127.0.0.1:9/pypi")


@pytest.fixture
def col(tmp_path: Path) -> Path:
    """An empty collection of libraries, BM25 only (no encoder: fast)."""
    c = tmp_path / "deps"
    LibraryCollection.create(c, encoder=None)
    return c


def test_every_runtime_dependency_at_its_pin_from_the_installed_package(
    tmp_path: Path, col: Path
) -> None:
    app = make_app(tmp_path)
    before = files(col)
    plan = run_cli("index", "-c", str(col), "--project", str(app), "--dry-run")
    assert files(col) == before  # the plan writes nothing
    lines = plan.stdout.splitlines()
    for name in ("click", "idna", "packaging"):
        (line,) = [x for x in lines if x.startswith(f"{name} {INSTALLED[name]} ")]
        assert "(locked in uv.lock)" in line and "from installed:" in line
        assert f"{name}-{INSTALLED[name]}.dist-info" in line
    assert not any(x.startswith("mdurl") for x in lines)  # a dev dependency
    assert "3 to fetch (dry run: nothing written)" in plan.stdout

    res = run_cli("index", "-c", str(col), "--project", str(app), "-q")
    held = libraries(col)
    assert set(held) == {"click@8.5.1", "idna@3.20", "packaging@26.4"}
    for ref, source in held.items():
        name, version = ref.split("@")
        assert source.startswith("installed:") and source.endswith(f"{name}-{version}.dist-info")
    assert "3 fetched, 0 failed" in res.stdout
    assert "API entries" in res.stdout
    found = run_cli("search", "IDNA encode a label", "-c", str(col), "--json", "--library", "idna")
    assert json.loads(found.stdout)["results"]

    # a second run: every version held already, nothing read or published
    before = files(col)
    again = run_cli("index", "-c", str(col), "--project", str(app))
    assert files(col) == before
    assert "3 held already, 0 fetched" in again.stdout

    # a bumped pin: only that one is fetched; --prune then drops the version nothing pins
    lock = app / "uv.lock"
    lock.write_text(lock.read_text().replace('version = "26.4"', 'version = "26.5"'))
    site = app / ".venv" / "lib" / "python3.11" / "site-packages"
    info = site / "packaging-26.4.dist-info"
    meta = info / "METADATA"
    meta.write_text(meta.read_text().replace("Version: 26.4", "Version: 26.5", 1))
    info.rename(site / "packaging-26.5.dist-info")
    bumped = run_cli("index", "-c", str(col), "--project", str(app), "-q")
    assert "2 held already, 1 fetched" in bumped.stdout
    assert "packaging 26.5 (locked in uv.lock): fetched from installed:" in bumped.stdout
    assert {"packaging@26.4", "packaging@26.5"} <= set(libraries(col))
    pruned = run_cli("index", "-c", str(col), "--project", str(app), "--prune", "-q")
    assert "pruned packaging@26.4" in pruned.stdout
    assert set(libraries(col)) == {"click@8.5.1", "idna@3.20", "packaging@26.5"}


def test_only_and_dev_choose_the_dependencies(tmp_path: Path, col: Path) -> None:
    app = make_app(tmp_path)
    only = run_cli("index", "-c", str(col), "--project", str(app), "--only", "IDNA", "--dry-run")
    assert [x.split()[0] for x in only.stdout.splitlines()[:-1]] == ["idna"]
    dev = run_cli("index", "-c", str(col), "--project", str(app), "--dev", "--only", "mdurl",
                  "-q")  # fmt: skip
    assert set(libraries(col)) == {"mdurl@0.1.2"}
    assert "1 fetched" in dev.stdout
    bad = run_cli("index", "-c", str(col), "--project", str(app), "--only", "requests", ok=False)
    assert bad.returncode == 2 and "uses no requests" in bad.stderr
    mixed = run_cli("index", "-c", str(col), "--project", str(app), str(app), ok=False)
    assert mixed.returncode == 2 and "drop SOURCE" in mixed.stderr


def test_an_installed_version_other_than_the_pin_is_not_used(tmp_path: Path, col: Path) -> None:
    app = make_app(tmp_path, {"idna": "3.20"})
    (app / "requirements.txt").write_text("idna==3.19\n")
    (app / "pyproject.toml").unlink()
    (app / "uv.lock").unlink()
    res = run_cli("index", "-c", str(col), "--project", str(app), "--max-failures", "1")
    assert "installed: installed at 3.20, not 3.19" in res.stdout
    assert "0 fetched, 1 failed" in res.stdout
    assert not libraries(col)


# -- not installed: what the package index names ----------------------------------------------
def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    out = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)
    return out.stdout.decode().strip()


def bare_repository(root: Path) -> Path:
    """A bare repository whose ``v1.2.3`` tag holds a ``docs/`` folder (and a later commit
    on main that the tag does not)."""
    work, bare = root / "widget-work", root / "widget.git"
    for rel, text in {
        "README.md": "# Widget\n\nThe project readme.\n",
        "src/widget.py": "def spin():\n    pass\n",
        "docs/index.md": "# Widget\n\nWidgets spin gadgets around the frobnicator.\n",
        "docs/usage.md": "# Usage\n\nCall spin to rotate the frobnicator.\n",
    }.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    git(work, "init", "-q", "-b", "main")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "docs")
    git(work, "tag", "v1.2.3")
    (work / "docs" / "later.md").write_text("# Later\n\nUnreleased words.\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "later")
    git(root, "init", "-q", "--bare", "-b", "main", str(bare))
    git(work, "push", "-q", str(bare), "main", "v1.2.3")
    return bare


def pypi(info: dict[str, object]) -> Route:
    body = json.dumps({"info": info, "urls": []}).encode()
    return Route(body, headers={"Content-Type": "application/json"}, etag=False)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_not_installed_from_the_index_repository_or_site_and_failures_reported(
    tmp_path: Path, col: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = bare_repository(tmp_path)
    routes = {
        "/pypi/widgetlib/1.2.3/json": pypi(
            {"name": "widgetlib", "project_urls": {"Source": f"file://{bare}", "Bug": 7}}
        ),
        "/sitedocs/": page("Sitelib", '<p>Sitelib renders gizmos.</p><a href="api/">API</a>'),
        "/sitedocs/api/": page("API", "<p>The gizmo function renders one gizmo quickly.</p>"),
    }
    with serve(routes) as server:
        routes["/pypi/sitelib/2.0.0/json"] = pypi(
            {"name": "sitelib", "project_urls": {"Documentation": f"{server.url}/sitedocs/"},
             "home_page": ["not", "a", "url"]}
        )  # fmt: skip
        server.routes.update(routes)
        monkeypatch.setenv("COGITAVE_PYPI_URL", f"{server.url}/pypi")
        app = tmp_path / "svc"
        app.mkdir()
        (app / "requirements.txt").write_text("widgetlib==1.2.3\nsitelib==2.0.0\ngonelib==0.1.0\n")

        plan = run_cli("index", "-c", str(col), "--project", str(app), "--dry-run")
        assert f"widgetlib 1.2.3 (pinned in requirements.txt): from git+file://{bare}@v1.2.3" in (
            plan.stdout
        )
        assert "installed: not installed" in plan.stdout
        assert f"sitelib 2.0.0 (pinned in requirements.txt): from {server.url}/sitedocs/" in (
            plan.stdout
        )
        assert "gonelib 0.1.0" in plan.stdout and "not found (HTTP 404)" in plan.stdout
        assert not libraries(col)

        # past --max-failures (0): the run fails with its report; what was fetched stays
        failed = run_cli("index", "-c", str(col), "--project", str(app), "--max-failures", "0",
                         "-q", ok=False)  # fmt: skip
        assert failed.returncode == 1 and "error[deps_failed]" in failed.stderr
        assert "gonelib 0.1.0 (pinned in requirements.txt): failed:" in failed.stderr
        assert "/pypi/gonelib/0.1.0/json: not found (HTTP 404)" in failed.stderr
        held = libraries(col)
        assert held["widgetlib@1.2.3"] == f"git+file://{bare}@v1.2.3#docs"
        assert held["sitelib@2.0.0"] == f"{server.url}/sitedocs/"

        # within --max-failures: exit 0, the others held already, the failure reported
        hits = server.hits["/pypi/widgetlib/1.2.3/json"]
        ok = run_cli("index", "-c", str(col), "--project", str(app), "--max-failures", "1", "-q")
        assert "2 held already, 0 fetched, 1 failed" in ok.stdout
        assert server.hits["/pypi/widgetlib/1.2.3/json"] == hits  # held: nothing asked

    found = run_cli("search", "frobnicator", "-c", str(col), "--json", "--library", "widgetlib")
    uids = {h["uid"] for h in json.loads(found.stdout)["results"]}
    assert uids and not any("later" in u for u in uids)  # the tag's tree, not main's
    found = run_cli("search", "gizmo", "-c", str(col), "--json", "--library", "sitelib")
    assert json.loads(found.stdout)["results"]


def test_a_public_index_may_not_point_at_local_files(tmp_path: Path, col: Path) -> None:
    from cogitave.libraries.environment import Environment
    from cogitave.libraries.project import Dependency
    from cogitave.libraries.steps import Context, NotHere, RepositoryStep, SiteStep, Want

    dep = Dependency("evil", "evil", "python", "1.0", None, "requirements.txt")
    want = Want(dep, "1.0", "pinned")
    bases = ("https://pypi.org/pypi", "https://x")
    ctx = Context(col, Environment((), None), bases, {}, resolve=lambda host: ["151.101.0.223"])
    from cogitave.libraries.metadata import PackageMeta

    key = ("python", "evil", "1.0")
    ctx.metas[key] = PackageMeta("u", "file:///etc", None, "http://127.0.0.1/", None)
    got = RepositoryStep().plan(want, ctx)
    assert isinstance(got, NotHere) and "a local path, from a public package index" in got.reason
    got = SiteStep().plan(want, ctx)
    assert isinstance(got, NotHere) and "a private address" in got.reason


def test_sources_setting_overrides_every_step(tmp_path: Path, col: Path) -> None:
    app = make_app(tmp_path, {"idna": "3.20"})
    (app / "requirements.txt").write_text("idna==3.20\n")
    (app / "pyproject.toml").unlink()
    (app / "uv.lock").unlink()
    docs = tmp_path / "idna-docs-3.20"
    docs.mkdir()
    (docs / "index.md").write_text("# idna\n\nOur own notes on punycode labels.\n")
    src = str(tmp_path / "idna-docs-{version}")
    res = run_cli("index", "-c", str(col), "--project", str(app), "--dry-run",
                  "--set", f'libraries.sources={{"IDNA" = "{src}"}}')  # fmt: skip
    assert f"idna 3.20 (pinned in requirements.txt): from {docs} (sources:" in res.stdout
    run_cli("index", "-c", str(col), "--project", str(app), "-q",
            "--set", f'libraries.sources={{"IDNA" = "{src}"}}')  # fmt: skip
    assert libraries(col) == {"idna@3.20": str(docs)}


def test_an_npm_dependency_from_node_modules(tmp_path: Path, col: Path) -> None:
    app = tmp_path / "web"
    pkg = app / "node_modules" / "tinyfetch"
    pkg.mkdir(parents=True)
    (app / "package.json").write_text(
        json.dumps({"name": "web", "dependencies": {"tinyfetch": "^2.0.0"}})
    )
    lock = {"name": "web", "lockfileVersion": 3, "packages": {
        "": {"name": "web", "dependencies": {"tinyfetch": "^2.0.0"}},
        "node_modules/tinyfetch": {"version": "2.1.0"}}}  # fmt: skip
    (app / "package-lock.json").write_text(json.dumps(lock))
    (pkg / "package.json").write_text(json.dumps({"name": "tinyfetch", "version": "2.1.0",
                                                  "types": "index.d.ts"}))  # fmt: skip
    (pkg / "README.md").write_text("# tinyfetch\n\nA small fetch wrapper.\n")
    (pkg / "index.d.ts").write_text(
        "/** Fetch a URL and retry on a dropped connection. */\n"
        "export declare function fetchRetry(url: string, tries?: number): Promise<Response>;\n"
    )
    res = run_cli("index", "-c", str(col), "--project", str(app), "-q")
    assert "tinyfetch 2.1.0 (locked in package-lock.json): fetched from installed:" in res.stdout
    assert "1 API entries" in res.stdout
    assert libraries(col)["tinyfetch@2.1.0"] == f"installed:{pkg / 'package.json'}"
    found = run_cli("search", "retry dropped connection", "-c", str(col), "--json")
    assert any("fetchretry" in h["uid"].lower() for h in json.loads(found.stdout)["results"])


def test_a_registry_pack_comes_before_the_installed_package(tmp_path: Path, col: Path) -> None:
    from cogitave.libraries.registry import publish

    app = make_app(tmp_path, {"idna": "3.20"})
    (app / "requirements.txt").write_text("idna==3.20\n")
    (app / "pyproject.toml").unlink()
    (app / "uv.lock").unlink()
    other = tmp_path / "built"
    LibraryCollection.create(other, encoder=None)
    run_cli("index", "-c", str(other), "--project", str(app), "-q")
    reg = tmp_path / "registry"
    publish(other, "idna@3.20", reg)
    sets = ("--set", f'libraries.registries=["{reg}"]')
    plan = run_cli("index", "-c", str(col), "--project", str(app), "--dry-run", *sets)
    assert f"idna 3.20 (pinned in requirements.txt): from registry:{reg} (registry:" in plan.stdout
    res = run_cli("index", "-c", str(col), "--project", str(app), "-q", *sets)
    assert f"fetched from registry:{reg} (registry)" in res.stdout
    assert libraries(col) == {"idna@3.20": f"registry:{reg}"}


def test_a_docs_folder_the_distribution_ships_is_indexed_with_its_api(
    tmp_path: Path, col: Path
) -> None:
    app = make_app(tmp_path, {"idna": "3.20"})
    (app / "requirements.txt").write_text("idna==3.20\n")
    (app / "pyproject.toml").unlink()
    (app / "uv.lock").unlink()
    shipped = app / ".venv" / "lib" / "python3.11" / "site-packages" / "idna" / "docs"
    shipped.mkdir()
    (shipped / "howto.md").write_text("# How to\n\nTranscode a zebra label with the codec.\n")
    plan = run_cli("index", "-c", str(col), "--project", str(app), "--dry-run")
    assert "with its docs folder idna/docs" in plan.stdout
    res = run_cli("index", "-c", str(col), "--project", str(app), "-q")
    assert "idna 3.20 (pinned in requirements.txt): fetched from installed:" in res.stdout
    found = run_cli("search", "zebra label", "-c", str(col), "--json")
    assert json.loads(found.stdout)["results"][0]["uid"] == "idna@3.20:howto"
    api = run_cli("search", "idna encode", "-c", str(col), "--json", "--kind", "api")
    assert json.loads(api.stdout)["results"]
