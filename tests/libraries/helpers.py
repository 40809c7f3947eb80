"""What the tests of a project's dependencies share: the checked-in application and a local
environment of real installed packages at the versions its lockfile pins."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import idna

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "project"
SITE_PACKAGES = Path(idna.__file__).resolve().parents[1]
INSTALLED = {"click": "8.5.1", "idna": "3.20", "packaging": "26.4", "mdurl": "0.1.2"}


def make_app(root: Path, packages: dict[str, str] = INSTALLED) -> Path:
    """The fixture application copied to ``root``, with a ``.venv`` holding copies of the
    real installed packages (their folders and ``*.dist-info``)."""
    app = root / "app"
    shutil.copytree(FIXTURE, app)
    site = app / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    for name, version in packages.items():
        shutil.copytree(SITE_PACKAGES / name, site / name)
        # the installed distribution, whatever version this environment holds, recorded at
        # the version the fixture's lockfile pins (so the tests do not depend on the venv)
        (found,) = sorted(SITE_PACKAGES.glob(f"{name}-*.dist-info"))[-1:]
        info = site / f"{name}-{version}.dist-info"
        shutil.copytree(found, info)
        meta = info / "METADATA"
        text = meta.read_text(encoding="utf-8")
        meta.write_text(re.sub(r"(?m)^Version: .*$", f"Version: {version}", text, count=1))
    return app


def libraries(col: Path) -> dict[str, str]:
    """``name@version`` -> its recorded source."""
    data = json.loads((col / "LIBRARIES.json").read_text())
    return {f"{e['name']}@{e['version']}": e["source"] for e in data["libraries"]}
