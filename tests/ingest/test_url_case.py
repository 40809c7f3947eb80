"""A page's URL keeps the case of its file name unless its generator lower-cases it (Hugo,
Starlight): an agent that follows ``/reference/react/useeffect`` on react.dev lands on a
wrong page. One tree per layout, each with the page ``reference/useEffect``."""

from __future__ import annotations

from pathlib import Path

import pytest

from cogitave.ingest.docs import read_docs
from tests.ingest.helpers import write

PAGE = "# useEffect\n\nSynchronize a component with an external system.\n"

# layout -> (files besides the page, the page's path, the folder to read, its URL path)
LAYOUTS: dict[str, tuple[dict[str, str], str, str, str]] = {
    "mkdocs": ({"mkdocs.yml": "site_name: S\n"}, "docs", ".", "/reference/useEffect/"),
    "docusaurus": (
        {"docusaurus.config.js": "module.exports = { url: 'https://x.dev' };\n"},
        "docs",
        ".",
        "/docs/reference/useEffect",
    ),
    "vitepress": (
        {"docs/.vitepress/config.js": "export default {\n  cleanUrls: true,\n}\n"},
        "docs",
        ".",
        "/reference/useEffect",
    ),
    "nextjs": (
        {"next.config.js": "module.exports = {}\n"},
        "src/content",
        ".",
        "/reference/useEffect",
    ),
    # react.dev's content folder given on its own: no Hugo marks, so not read as Hugo
    "nextjs content folder": (
        {"next.config.js": "module.exports = {}\n"},
        "src/content",
        "src/content",
        "/reference/useEffect/",
    ),
    "nextjs src folder": (
        {"next.config.js": "module.exports = {}\n"},
        "src/content",
        "src",
        "/content/reference/useEffect/",
    ),
    "sphinx": ({"conf.py": "project = 'S'\n"}, ".", ".", "/reference/useEffect.html"),
    "plain": ({}, ".", ".", "/reference/useEffect/"),
    # the generators that lower-case
    "hugo": ({"hugo.toml": "title = 'S'\n"}, "content", ".", "/reference/useeffect/"),
    "hugo content folder": (
        {"content/_index.md": "# Home\n"},
        "content",
        "content",
        "/reference/useeffect/",
    ),
    "starlight": (
        {"astro.config.mjs": "import starlight from '@astrojs/starlight';\n"},
        "src/content/docs",
        ".",
        "/reference/useeffect/",
    ),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_url_case_is_the_served_case(tmp_path: Path, layout: str) -> None:
    files, folder, read, url = LAYOUTS[layout]
    for rel, text in files.items():
        write(tmp_path, rel, text)
    suffix = ".rst" if layout == "sphinx" else ".md"
    body = "useEffect\n=========\n\nSynchronize.\n" if layout == "sphinx" else PAGE
    write(tmp_path, f"{folder}/reference/useEffect{suffix}", body)
    batch = read_docs(tmp_path / read)
    urls = {n.meta["path"]: n.meta["url"] for n in batch.nodes if "#" not in n.uid}
    (page_url,) = [u for p, u in urls.items() if p.endswith(f"useEffect{suffix}")]
    assert page_url.split("://", 1)[-1].removeprefix("x.dev") == url, (layout, urls)
