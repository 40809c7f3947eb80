"""Reading a project folder as a whole: a malformed or unreadable file is one warning, any
content never raises, workspace members are read, and every file goes through one confined
reader (regular, inside the folder, bounded).

Every fixture is written into ``tmp_path`` in the real format (and version) of its file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cogitave.errors import InputError
from cogitave.libraries.project import ProjectDeps, read_project
from tests.libraries.project.helpers import PYPROJECT_PEP621, UV_LOCK, by_key, write

# --------------------------------------------------------------------------- malformed files


GOOD = {"requirements.txt": "attrs==23.2.0\n"}

MALFORMED: list[tuple[str, str, str]] = [
    ("pyproject.toml", '[project]\nname = "x"\ndependencies = ["fastapi"', "not valid TOML"),
    ("pyproject.toml", '[project]\ndependencies = "fastapi>=0.100"\n', "not a list of strings"),
    ("pyproject.toml", '[project]\ndependencies = ["fastapi >=>= 1"]\n', "not a requirement"),
    ("pyproject.toml", "[tool.poetry.dependencies]\nDjango = 4\n", "neither a version"),
    ("uv.lock", 'version = 1\n[[package]]\nname = "fastapi"\nversion = ', "not valid TOML"),
    ("uv.lock", 'version = 1\npackage = "fastapi"\n', "not an array of tables"),
    ("poetry.lock", '[[package]]\nname = "django"\nversion = 4.2\n', "not a string"),
    ("pdm.lock", '[[package]]\nname = "rich"\ngroups = "default"\n', "not a list of strings"),
    ("Pipfile", "[packages]\nflask = 3\n", "not a string"),
    ("Pipfile.lock", '{"default": {"flask": {"version": "==3.0', "not valid JSON"),
    ("Pipfile.lock", '{"default": ["flask"]}', "not a table"),
    ("package.json", '{"dependencies": {"react": "^18', "not valid JSON"),
    ("package.json", '{"dependencies": {"react": 18}}', "not a string"),
    ("package.json", "[1, 2]", "not a table"),
    ("package-lock.json", '{"lockfileVersion": 3, "packages": {"": ', "not valid JSON"),
    ("package-lock.json", '{"lockfileVersion": 3, "packages": []}', "not a table"),
    ("package-lock.json", '{"lockfileVersion": 1, "dependencies": {"a": {}}}', "not a string"),
    ("pnpm-lock.yaml", "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies: [\n", "YAML"),
    ("pnpm-lock.yaml", "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies: x\n", "table"),
    ("pnpm-lock.yaml", "- a\n- b\n", "not a table"),
    ("yarn.lock", '# yarn lockfile v1\n\nlodash@^4:\n  resolved "x"\n', "has no version"),
    ("yarn.lock", "# yarn lockfile v1\n\nlodash@^4\n  version 1\n", "expected 'descriptor:'"),
    ("yarn.lock", '__metadata:\n  version: 8\n\n"a@npm:^1":\n  version: [\n', "YAML"),
    ("yarn.lock", '__metadata:\n  version: 8\n\n"a@npm:^1": 3\n', "not a table"),
]


@pytest.mark.parametrize(("name", "text", "reason"), MALFORMED)
def test_a_malformed_file_is_one_warning_and_the_others_are_still_read(
    tmp_path: Path, name: str, text: str, reason: str
) -> None:
    write(tmp_path, GOOD)
    (tmp_path / name).write_text(text, encoding="utf-8")
    result = read_project(tmp_path)
    assert len(result.warnings) == 1, result.warnings
    warning = result.warnings[0]
    assert warning.startswith(f"{name}: ") and reason in warning, warning
    assert "\n" not in warning
    assert name not in result.files and "requirements.txt" in result.files
    assert [d.key for d in result.dependencies if d.ecosystem == "python"][-1] == "attrs"


def test_a_malformed_lockfile_leaves_the_manifest_without_versions(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": PYPROJECT_PEP621, "uv.lock": UV_LOCK[:200]})
    result = read_project(tmp_path)
    assert len(result.warnings) == 1 and result.warnings[0].startswith("uv.lock: ")
    assert by_key(result)["fastapi"].version is None


def test_unreadable_files_warn(tmp_path: Path) -> None:
    (tmp_path / "package.json").mkdir()  # a folder where a file is expected
    (tmp_path / "poetry.lock").write_bytes(b"\xff\xfe[[package]]")
    result = read_project(tmp_path)
    assert result.dependencies == () and result.files == ()
    assert sorted(w.split(":")[0] for w in result.warnings) == ["package.json", "poetry.lock"]
    assert any("not UTF-8" in w for w in result.warnings)


def test_an_empty_folder_has_no_dependencies_and_no_warning(tmp_path: Path) -> None:
    assert read_project(tmp_path) == ProjectDeps((), (), ())


def test_a_missing_folder_raises(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        read_project(tmp_path / "nowhere")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="not a folder"):
        read_project(tmp_path / "file")


# --------------------------------------------------------------------------- any content


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from(["", "1.2.3", "^1", "a@1", "*"]),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["", ".", "a", "version", "dependencies", "packages", "node_modules/a"]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)
lockfile_shapes = st.dictionaries(
    st.sampled_from(
        [
            *("package", "project", "tool", "dependencies", "devDependencies", "packages"),
            *("importers", "default", "develop", "dependency-groups", "lockfileVersion"),
        ]
    ),
    json_values,
    max_size=4,
)


@settings(max_examples=60, deadline=None)
@given(data=lockfile_shapes)
def test_property_any_content_of_the_right_syntax_never_raises(data: dict) -> None:
    import tempfile

    import tomli_w

    def no_none(value: object) -> object:
        if isinstance(value, dict):
            return {k: no_none(v) for k, v in value.items() if v is not None}
        if isinstance(value, list):
            return [no_none(v) for v in value if v is not None]
        return value

    text = json.dumps(data)
    files = {name: text for name in ("package.json", "package-lock.json", "Pipfile.lock")}
    files |= {"pnpm-lock.yaml": text, "yarn.lock": "__metadata:\n  version: 8\n" + text}
    toml = tomli_w.dumps(no_none(data))  # type: ignore[arg-type]
    files |= {n: toml for n in ("pyproject.toml", "uv.lock", "poetry.lock", "pdm.lock", "Pipfile")}
    with tempfile.TemporaryDirectory() as folder:
        for name, content in files.items():
            (Path(folder) / name).write_text(content)
        result = read_project(Path(folder))
    assert all("\n" not in w for w in result.warnings)
    assert len(result.warnings) + len(result.files) == len(files)


# --------------------------------------------------------------------------- workspaces

UV_WORKSPACE_LOCK = """
version = 1
requires-python = ">=3.11"

[manifest]
members = ["app", "repo"]

[[package]]
name = "app"
version = "0.1.0"
source = { editable = "backend" }
dependencies = [{ name = "fastapi" }]

[[package]]
name = "fastapi"
version = "0.141.1"
source = { registry = "https://pypi.org/simple" }
"""

BUN_LOCK = """
{
  "lockfileVersion": 1,
  "workspaces": {
    "": {
      "name": "repo",
    },
    "frontend": {
      "name": "frontend",
      "dependencies": {
        "react": "^19.2.0",
        "@tanstack/react-query": "^5.100.0",
        "ui": "workspace:*",
      },
    },
  },
  "packages": {
    "react": ["react@19.2.8", "", {}, "sha512-x"],
    "@tanstack/react-query": ["@tanstack/react-query@5.101.4", "", {}, "sha512-y"],
    "ui": ["ui@workspace:packages/ui"],
    "some-lib/react": ["react@18.3.1", "", {}, "sha512-z"],
  },
}
"""


ROOT_PYPROJECT = '[project]\nname = "repo"\n\n[tool.uv.workspace]\nmembers = ["backend"]\n'
MEMBER_PYPROJECT = '[project]\nname = "app"\ndependencies = ["fastapi>=0.141"]\n'


def test_workspace_members_give_the_dependencies_and_the_root_lockfiles_their_versions(
    tmp_path: Path,
) -> None:
    """A uv workspace and a bun workspace (full-stack-fastapi-template's layout): the members'
    manifests are read, the root lockfiles pin them, the members themselves are not
    dependencies, and bun.lock's nested installs do not shadow the top-level one."""
    write(
        tmp_path,
        {
            "pyproject.toml": ROOT_PYPROJECT,
            "uv.lock": UV_WORKSPACE_LOCK,
            "backend/pyproject.toml": MEMBER_PYPROJECT,
            "package.json": json.dumps({"name": "repo", "workspaces": ["frontend", "packages/*"]}),
            "frontend/package.json": json.dumps(
                {
                    "name": "frontend",
                    "dependencies": {
                        "react": "^19.2.0",
                        "@tanstack/react-query": "^5.100.0",
                        "ui": "workspace:*",
                    },
                }
            ),
            "packages/ui/package.json": json.dumps({"name": "ui", "dependencies": {}}),
            "bun.lock": BUN_LOCK,
        },
    )
    result = read_project(tmp_path)
    assert result.warnings == ()
    assert "backend/pyproject.toml" in result.files and "bun.lock" in result.files
    deps = by_key(result)
    assert set(deps) == {"fastapi", "react", "@tanstack/react-query"}
    assert (deps["fastapi"].version, deps["fastapi"].source) == ("0.141.1", "uv.lock")
    assert (deps["react"].version, deps["react"].source) == ("19.2.8", "bun.lock")
    assert deps["@tanstack/react-query"].version == "5.101.4"


def test_a_workspace_member_outside_the_project_is_not_read(tmp_path: Path) -> None:
    outside = write(tmp_path / "elsewhere", {"package.json": json.dumps(
        {"name": "x", "dependencies": {"left-pad": "1.3.0"}})})  # fmt: skip
    project = tmp_path / "project"
    write(project, {"package.json": json.dumps({"workspaces": ["../elsewhere", "linked"]})})
    (project / "linked").symlink_to(outside, target_is_directory=True)
    result = read_project(project)
    assert result.dependencies == ()
    assert any("leaves the project" in w for w in result.warnings)
    assert any("outside the project" in w for w in result.warnings)


def test_bun_lock_alone_reports_the_root_workspaces_dependencies(tmp_path: Path) -> None:
    lock = BUN_LOCK.replace('"name": "repo",', '"name": "repo",\n"dependencies": {"react": "^19"},')
    write(tmp_path, {"bun.lock": lock})
    deps = by_key(read_project(tmp_path))
    assert set(deps) == {"react"} and deps["react"].version == "19.2.8"


# -- every file is read through one confined reader: regular, inside, bounded -------------------
def read_with_timeout(folder: Path) -> ProjectDeps:
    """read_project in a thread: a read that blocks fails the test instead of hanging it."""
    import threading

    got: list[ProjectDeps | BaseException] = []

    def run() -> None:
        try:
            got.append(read_project(folder))
        except BaseException as e:  # handed to the test
            got.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout=60)
    assert not t.is_alive(), "read_project blocked"
    (res,) = got
    if isinstance(res, BaseException):
        raise res
    return res


def test_a_lockfile_linked_to_a_device_is_refused_not_read(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": '[project]\nname = "app"\ndependencies = ["fastapi"]\n'})
    (tmp_path / "uv.lock").symlink_to("/dev/zero")
    (tmp_path / "package-lock.json").symlink_to("/dev/urandom")
    deps = read_with_timeout(tmp_path)
    assert [d.name for d in deps.dependencies] == ["fastapi"]
    assert any(w.startswith("uv.lock: ") and "/dev/zero" in w for w in deps.warnings)
    assert any(w.startswith("package-lock.json: ") for w in deps.warnings)


def test_a_fifo_lockfile_is_refused_without_blocking(tmp_path: Path) -> None:
    import os

    write(tmp_path, {"requirements.txt": "httpx==0.27.0\n"})
    os.mkfifo(tmp_path / "uv.lock")
    os.mkfifo(tmp_path / "requirements-dev.txt")
    deps = read_with_timeout(tmp_path)
    assert [(d.name, d.version) for d in deps.dependencies] == [("httpx", "0.27.0")]
    assert "uv.lock: not a regular file; not read" in deps.warnings
    assert "requirements-dev.txt: not a regular file; not read" in deps.warnings


def test_a_lockfile_linked_out_of_the_project_is_not_read(tmp_path: Path) -> None:
    secret = write(tmp_path / "elsewhere", {"poetry.lock": LOCK_OUTSIDE})
    project = tmp_path / "project"
    write(project, {"requirements.txt": "httpx\n"})
    (project / "poetry.lock").symlink_to(secret / "poetry.lock")
    (project / "inside.lock").write_text(LOCK_OUTSIDE)
    deps = read_with_timeout(project)
    assert [(d.name, d.version) for d in deps.dependencies] == [("httpx", None)]
    assert any(w.startswith("poetry.lock: resolves to ") and "outside" in w for w in deps.warnings)


def test_a_lockfile_over_the_bound_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cogitave.libraries.project import reading

    monkeypatch.setattr(reading, "MAX_FILE_BYTES", 1000)
    write(tmp_path, {"requirements.txt": "httpx==0.27.0\n" + "# pad\n" * 400})
    deps = read_with_timeout(tmp_path)
    assert deps.dependencies == ()
    assert any("larger than" in w for w in deps.warnings), deps.warnings


LOCK_OUTSIDE = """\
[[package]]
name = "secret-package"
version = "9.9.9"
"""
