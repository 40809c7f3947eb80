"""Docusaurus, VitePress and Next.js trees (fixtures in tests/fixtures/docs) -> URLs, anchors,
edges, breadcrumbs and clean Markdown content."""

from __future__ import annotations

from pathlib import Path

from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs import read_docs
from cogitave.ingest.docs.docusaurus import detect_docusaurus
from cogitave.ingest.docs.site import Site
from cogitave.ingest.docs.urls import page_url, rewrite_path, rewrite_rule, url_of
from cogitave.ingest.docs.vitepress import detect_vitepress
from tests.ingest.helpers import assert_graph_closed, by_uid, edges_of, write

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "docs"


def test_docusaurus_site() -> None:
    batch = read_docs(FIXTURES / "docusaurus")
    nodes = by_uid(batch)
    assert batch.stats["shape"] == "docusaurus"
    assert_graph_closed(batch)
    # url + baseUrl + routeBasePath; numeric prefixes dropped; slug and id front matter.
    assert nodes["intro"].meta["url"] == "https://demo.example.dev/site/docs/intro"
    assert nodes["guides/01-install"].meta["url"].endswith("/site/docs/guides/install")
    assert nodes["guides/02-configure"].meta["url"].endswith("/site/docs/guides/settings")
    assert nodes["api/client"].meta["url"].endswith("/site/docs/api/client")
    assert nodes["intro"].meta["path"] == "docs/intro.mdx"
    # Links by file (relative), by route URL, with `{#custom}` heading ids.
    assert edges_of(nodes["intro"], "xref") == ["guides/01-install"]
    assert edges_of(nodes["intro#next"], "xref") == ["api/client#connect"]
    assert edges_of(nodes["guides/02-configure"], "xref") == ["intro#next"]
    assert batch.stats["links"]["resolved_share"] == 1.0
    # sidebar_position orders the pages of a folder; _category_.json titles the folder.
    assert edges_of(nodes["guides/02-configure"], "dependsOn") == ["guides/01-install"]
    assert nodes["guides/02-configure"].meta["breadcrumb"] == ["Guides", "Configure"]
    # MDX: imports/exports and JSX dropped, container title kept, code kept with language.
    content = nodes["intro"].content or ""
    assert "import " not in content and "export const" not in content
    assert "<Tabs>" not in content and "TabItem" not in content and ":::" not in content
    assert "**Remember**\nInstall **first**." in content
    assert "```bash\nnpm install demo\n```" in content
    assert "\n\n\n" not in content  # removed markup leaves no runs of blank lines
    # Links in content lead to the pages' absolute URLs, anchors as written.
    assert "[installation guide](https://demo.example.dev/site/docs/guides/install)" in content
    assert "[API](https://demo.example.dev/site/docs/api/client#connect)" in content
    code = [n for n in batch.nodes if n.kind == "code_sample" and n.uid.startswith("intro#")]
    assert [n.dims["language"] for n in code] == ["bash"]


def test_vitepress_site() -> None:
    batch = read_docs(FIXTURES / "vitepress")
    nodes = by_uid(batch)
    assert batch.stats["shape"] == "vitepress"
    assert_graph_closed(batch)
    # sitemap hostname + base, clean URLs, index.md -> the folder URL.
    assert nodes["guide/index"].meta["url"] == "https://vp.example.dev/demo/guide/"
    assert nodes["guide/features"].meta["url"] == "https://vp.example.dev/demo/guide/features"
    assert "guide/features#config-file" in nodes  # VitePress slugs
    assert edges_of(nodes["guide/index"], "xref") == [
        "guide/features",
        "guide/features#config-file",
    ]
    assert edges_of(nodes["guide/features"], "partOf") == ["guide/index"]
    # ::: code-group keeps both fences; `<<< @/snippets/hello.js` imports the file.
    section = nodes["guide/features#config-file"]
    assert section.content is not None and ":::" not in section.content
    assert "```sh [npm]\nnpm create demo\n```" in section.content
    getting_started = nodes["guide/index"].content or ""
    assert "[features](https://vp.example.dev/demo/guide/features)" in getting_started
    imported = nodes["guide/features#import-code"].content or ""
    assert "```javascript\nexport const hello" in imported
    assert "src:docs/snippets/hello.js" in nodes


def test_vitepress_without_clean_urls(tmp_path: Path) -> None:
    write(tmp_path, "docs/.vitepress/config.mts", "export default { base: '/' }\n")
    write(tmp_path, "docs/guide/a.md", "# A\n")
    site = detect_vitepress(tmp_path, TreeReader(tmp_path))
    assert site is not None and not site.clean_urls and site.site_url == ""
    assert url_of(site, "guide/a.md", {}) == "/guide/a.html"
    assert url_of(site, "guide/index.md", {}) == "/guide/"


def test_nextjs_content_folder_with_jsx_components() -> None:
    batch = read_docs(FIXTURES / "nextjs", base_url="https://react.example")
    nodes = by_uid(batch)
    assert batch.stats["shape"] == "nextjs"
    assert nodes["learn/index"].meta["url"] == "https://react.example/learn"
    assert nodes["learn/state"].meta["url"] == "https://react.example/learn/state"
    # `{/*id*/}` heading ids; site-absolute links with anchors.
    assert edges_of(nodes["learn/state#adding-state"], "xref") == ["reference/react/useState#usage"]
    assert edges_of(nodes["reference/react/useState#usage"], "xref") == ["learn/index#components"]
    content = nodes["learn/index"].content or ""
    # A title from front matter heads the content; the components' text stays.
    assert content.startswith("# Quick Start\n\nWelcome to the docs.")
    assert "<Intro>" not in content and "* How to add state" in content
    sandpack = nodes["learn/state#code-1"]
    assert sandpack.dims["language"] == "js" and "useState(0)" in str(sandpack.dims["code"])
    assert "Call [`useState`]" in (nodes["learn/state#adding-state"].content or "")
    assert nodes["reference/react/useState"].meta["breadcrumb"] == [
        "Reference",
        "React",
        "useState",
    ]


def test_docusaurus_config_in_the_folder_and_defaults(tmp_path: Path) -> None:
    write(tmp_path, "docusaurus.config.js", "module.exports = { url: 'https://x.dev' };\n")
    write(tmp_path, "docs/a.md", "# A\n")
    write(tmp_path, "docs/_partial.md", "# Not a page\n")
    site = detect_docusaurus(tmp_path, TreeReader(tmp_path))
    assert site is not None and site.route_base == "/docs" and site.site_url == "https://x.dev/"
    assert [p.name for p in site.files()] == ["a.md"]  # `_` files are partials


def test_docusaurus_trailing_slash(tmp_path: Path) -> None:
    write(
        tmp_path,
        "docusaurus.config.js",
        "module.exports = {\n  url: 'https://x.dev',\n  trailingSlash: true,\n};\n",
    )
    write(tmp_path, "docs/a.md", "# A\n\nSee [b](/docs/guides/b/).\n")
    write(tmp_path, "docs/guides/b.md", "# B\n")
    nodes = by_uid(read_docs(tmp_path))
    assert nodes["a"].meta["url"] == "https://x.dev/docs/a/"
    assert nodes["guides/b"].meta["url"] == "https://x.dev/docs/guides/b/"
    assert edges_of(nodes["a"], "xref") == ["guides/b"]
    write(tmp_path, "docusaurus.config.js", "module.exports = { trailingSlash: false };\n")
    assert by_uid(read_docs(tmp_path))["a"].meta["url"] == "/docs/a"


def test_page_urls_of_each_generator() -> None:
    docusaurus = Site("docusaurus", Path("."), Path("."), "github", route_base="/docs")
    assert page_url("docusaurus", "guides/guides.md", {}, docusaurus) == "/docs/guides"
    assert page_url("docusaurus", "a/b.md", {"slug": "/top"}, docusaurus) == "/docs/top"
    assert page_url("docusaurus", "a/b.md", {"id": "c"}, docusaurus) == "/docs/a/c"
    assert page_url("sphinx", "library/index.rst.txt", {}) == "/library/index.html"
    assert page_url("nextjs", "learn/index.md", {}) == "/learn"


def test_hugo_base_url_from_its_config(tmp_path: Path) -> None:
    write(tmp_path, "hugo.toml", 'baseURL = "https://gohugo.example/"\ntitle = "x"\n')
    write(tmp_path, "content/_index.md", "---\ntitle: Home\n---\n")
    write(tmp_path, "content/docs/a.md", "---\ntitle: A\n---\n## Part\n\nText.\n")
    nodes = by_uid(read_docs(tmp_path))
    assert nodes["docs/a"].meta["url"] == "https://gohugo.example/docs/a/"
    assert nodes["docs/a#part"].meta["url"] == "https://gohugo.example/docs/a/#part"
    assert nodes["docs/a"].meta["breadcrumb"] == ["Docs", "A"]
    yaml_site = tmp_path / "y"
    write(yaml_site, "config/_default/hugo.yaml", "baseURL: https://y.example/sub/\n")
    write(yaml_site, "content/b.md", "# B\n")
    b = by_uid(read_docs(yaml_site))["b"]
    assert b.meta["url"] == "https://y.example/sub/b/"


def test_sphinx_with_myst_reads_markdown_pages_too(tmp_path: Path) -> None:
    write(tmp_path, "docs/conf.py", 'extensions = ["myst_parser"]\n')
    write(tmp_path, "docs/index.rst", "Home\n====\n\nSee :doc:`guide`.\n")
    write(tmp_path, "docs/guide.md", "# Guide\n\n## Part\n\nText.\n")
    write(tmp_path, "docs/_build/html/index.html", "<html></html>\n")
    batch = read_docs(tmp_path)
    nodes = by_uid(batch)
    assert batch.stats["shape"] == "sphinx"
    assert nodes["guide"].meta["url"] == "/guide.html"
    assert nodes["guide#part"].meta["url"] == "/guide.html#part"
    assert edges_of(nodes["index"], "xref") == ["guide"]


# -- files a site's config keeps out of the build ---------------------------------------------


def pages_of(root: Path) -> set[str]:
    return {n.uid for n in read_docs(root).nodes if n.kind == "page"}


def test_mkdocs_exclude_docs_and_draft_docs(tmp_path: Path) -> None:
    write(
        tmp_path,
        "mkdocs.yml",
        """
        site_name: X
        exclude_docs: |
          # comments are skipped
          *.tmp.md
          /private/
        draft_docs: |
          drafts/
        not_in_nav: |
          /extra.md
        """,
    )
    for rel in ("index.md", "extra.md", "notes.tmp.md", "private/a.md", "drafts/b.md",
                "guide/private/c.md", "templates/t.md"):  # fmt: skip
        write(tmp_path, f"docs/{rel}", f"# {rel}\n")
    batch = read_docs(tmp_path)
    # `/private/` is anchored at the docs root; MkDocs' own `/templates/` still applies.
    assert {n.uid for n in batch.nodes if n.kind == "page"} == {"index", "extra", "guide/private/c"}
    assert sorted(batch.stats["unpublished"]) == [
        "docs/drafts/b.md: draft_docs",
        "docs/notes.tmp.md: exclude_docs",
        "docs/private/a.md: exclude_docs",
        "docs/templates/t.md: exclude_docs",
    ]


def test_mkdocs_default_excludes_templates(tmp_path: Path) -> None:
    write(tmp_path, "mkdocs.yml", "site_name: X\n")
    write(tmp_path, "docs/index.md", "# Home\n")
    write(tmp_path, "docs/templates/base.md", "# Theme override\n")
    assert pages_of(tmp_path) == {"index"}


def test_sphinx_exclude_patterns(tmp_path: Path) -> None:
    conf = (
        "exclude_patterns = ['_build', 'includes/*', 'README.rst']\n"
        "exclude_patterns += ['**/old-*.rst']\n"
        "exclude_patterns.append('venv')\n"
    )
    write(tmp_path, "docs/conf.py", conf)
    write(tmp_path, "docs/index.rst", "Home\n====\n\n.. include:: includes/note.rst\n")
    write(tmp_path, "docs/includes/note.rst", "The shared note.\n")
    write(tmp_path, "docs/README.rst", "Readme\n======\n")
    write(tmp_path, "docs/a/old-b.rst", "Old\n===\n")
    write(tmp_path, "docs/old-c.rst", "Old\n===\n")
    write(tmp_path, "docs/venv/lib/x.rst", "Lib\n===\n")
    write(tmp_path, "docs/guide.rst", "Guide\n=====\n")
    batch = read_docs(tmp_path)
    assert {n.uid for n in batch.nodes if n.kind == "page"} == {"index", "guide"}
    assert batch.stats["unpublished_count"] == 5
    assert "The shared note." in by_uid(batch)["index"].content  # an include still reads it


def test_sphinx_exclude_patterns_computed_is_noted(tmp_path: Path) -> None:
    write(tmp_path, "docs/conf.py", "import os\nexclude_patterns = os.listdir('x')\n")
    write(tmp_path, "docs/index.rst", "Home\n====\n")
    batch = read_docs(tmp_path)
    assert any("exclude_patterns" in n for n in batch.stats["notes"])
    assert pages_of(tmp_path) == {"index"}


def test_vitepress_src_exclude(tmp_path: Path) -> None:
    write(
        tmp_path,
        "docs/.vitepress/config.mts",
        "export default {\n  srcExclude: ['**/README.md', 'drafts/*.md'],\n}\n",
    )
    for rel in ("index.md", "README.md", "guide/README.md", "drafts/x.md", "guide/a.md"):
        write(tmp_path, f"docs/{rel}", f"# {rel}\n")
    assert pages_of(tmp_path) == {"index", "guide/a"}


def test_docusaurus_versioned_site_reads_the_released_version(tmp_path: Path) -> None:
    write(tmp_path, "docusaurus.config.js", "module.exports = { url: 'https://x.dev' };\n")
    write(tmp_path, "versions.json", '["2.1", "2.0"]\n')
    write(tmp_path, "docs/a.md", "# A\n\nUnreleased wording.\n")
    write(tmp_path, "versioned_docs/version-2.1/a.md", "# A\n\nReleased wording.\n")
    write(tmp_path, "versioned_docs/version-2.0/a.md", "# A\n\nOld wording.\n")
    batch = read_docs(tmp_path)
    a = by_uid(batch)["a"]
    assert "Released wording." in (a.content or "")
    assert a.meta["url"] == "https://x.dev/docs/a"
    assert a.meta["path"] == "versioned_docs/version-2.1/a.md"
    assert any("version-2.1" in n for n in batch.stats["notes"])
    # A `path` inside the docs options' `versions` is a version's URL path, not the folder.
    write(
        tmp_path,
        "docusaurus.config.js",
        "module.exports = { url: 'https://x.dev', presets: [['classic', { docs: {\n"
        "  lastVersion: '2.0', versions: { current: { label: 'next', path: '3.x' } },\n"
        "  routeBasePath: 'docs' } }]] };\n",
    )
    batch = read_docs(tmp_path)
    assert batch.stats["shape"] == "docusaurus"
    assert "Old wording." in (by_uid(batch)["a"].content or "")
    # lastVersion: 'current' serves docs/ at the docs route.
    write(
        tmp_path,
        "docusaurus.config.js",
        "module.exports = { url: 'https://x.dev', presets: [['classic', "
        "{ docs: { lastVersion: 'current' } }]] };\n",
    )
    assert "Unreleased wording." in (by_uid(read_docs(tmp_path))["a"].content or "")


def test_vitepress_locales_read_the_root_language_only(tmp_path: Path) -> None:
    write(
        tmp_path,
        "docs/.vitepress/config.mts",
        """
        export default defineConfig({
          locales: {
            // the site's own language
            root: { label: 'English', lang: 'en' },
            zh: { label: '简体中文', themeConfig: { nav: [{ text: 'a, b', link: '/zh/' }] } },
            'pt-BR': pt,
          },
        })
        """,
    )
    write(tmp_path, "docs/index.md", "# Home\n\nAlso in [Chinese](/zh/).\n")
    write(tmp_path, "docs/guide.md", "# Guide\n")
    write(tmp_path, "docs/zh/index.md", "# 首页\n")
    write(tmp_path, "docs/pt-BR/guide.md", "# Guia\n")
    write(tmp_path, "docs/zhuyin/notes.md", "# A folder that only starts like a locale\n")
    batch = read_docs(tmp_path)
    assert {n.uid for n in batch.nodes if n.kind == "page"} == {"index", "guide", "zhuyin/notes"}
    assert sorted(batch.stats["unpublished"]) == [
        "docs/pt-BR/guide.md: locales: another language",
        "docs/zh/index.md: locales: another language",
    ]
    assert batch.stats["links"]["outside"] == 1  # the link to the Chinese tree
    assert any("read the root locale only" in n for n in batch.stats["notes"])


def test_vitepress_rewrites() -> None:
    rules = [
        rewrite_rule("en/:rest*", ":rest*"),
        rewrite_rule("packages/pkg-a/src/pkg-a-docs.md", "pkg-a/index.md"),
        rewrite_rule("packages/:pkg/src/:slug*", ":pkg/:slug*"),
    ]
    assert rewrite_path("en/guide/cms.md", rules) == "guide/cms.md"
    assert rewrite_path("packages/pkg-a/src/pkg-a-docs.md", rules) == "pkg-a/index.md"
    assert rewrite_path("packages/foo/src/bar/baz.md", rules) == "foo/bar/baz.md"
    assert rewrite_path("other/x.md", rules) == "other/x.md"


def test_vitepress_root_locale_in_a_folder_served_by_rewrites(tmp_path: Path) -> None:
    # VitePress's own docs: English in en/, served at the root through `rewrites`.
    write(
        tmp_path,
        "docs/.vitepress/config.ts",
        """
        export default defineConfig({
          rewrites: {
            'en/:rest*': ':rest*'
          },
          cleanUrls: true,
          locales: { root: { label: 'English' }, zh: { label: '简体中文' } },
        })
        """,
    )
    write(tmp_path, "docs/en/index.md", "# Home\n\nSee [routing](/guide/routing#params).\n")
    write(tmp_path, "docs/en/guide/routing.md", "# Routing\n\n## Params\n")
    write(tmp_path, "docs/zh/guide/routing.md", "# 路由\n")
    batch = read_docs(tmp_path)
    nodes = by_uid(batch)
    assert nodes["en/guide/routing"].meta["url"] == "/guide/routing"
    assert nodes["en/index"].meta["url"] == "/"
    assert edges_of(nodes["en/index"], "xref") == ["en/guide/routing#params"]
    assert "zh/guide/routing" not in nodes


def test_mkdocs_i18n_suffix_reads_the_default_language(tmp_path: Path) -> None:
    write(
        tmp_path,
        "mkdocs.yml",
        """
        site_name: X
        plugins:
          - search
          - i18n:
              docs_structure: suffix
              languages:
                - locale: en
                  default: true
                  name: English
                - locale: fr
                  name: Français
        """,
    )
    for rel in ("index.md", "index.fr.md", "guide/a.md", "guide/a.fr.md", "guide/b.en.md"):
        write(tmp_path, f"docs/{rel}", f"# {rel}\n\nSee [fr](/fr/).\n")
    batch = read_docs(tmp_path)
    nodes = by_uid(batch)
    assert {u for u, n in nodes.items() if n.kind == "page"} == {"index", "guide/a", "guide/b.en"}
    assert nodes["guide/b.en"].meta["url"] == "/guide/b/"
    assert sorted(batch.stats["unpublished"]) == [
        "docs/guide/a.fr.md: i18n: another language",
        "docs/index.fr.md: i18n: another language",
    ]
    assert batch.stats["links"]["outside"] == 3  # each page's link to the French tree


def test_mkdocs_i18n_folder_structure(tmp_path: Path) -> None:
    write(
        tmp_path,
        "mkdocs.yml",
        "site_name: X\nplugins:\n  - i18n:\n      docs_structure: folder\n"
        "      languages:\n        - locale: en\n          default: true\n"
        "        - locale: de\n",
    )
    write(tmp_path, "docs/en/index.md", "# Home\n")
    write(tmp_path, "docs/en/guide.md", "# Guide\n")
    write(tmp_path, "docs/de/guide.md", "# Anleitung\n")
    nodes = by_uid(read_docs(tmp_path))
    assert {u for u, n in nodes.items() if n.kind == "page"} == {"en/index", "en/guide"}
    assert nodes["en/guide"].meta["url"] == "/guide/"
    assert nodes["en/index"].meta["url"] == "/"


def test_myst_targets_resolve_from_markdown_and_rst(tmp_path: Path) -> None:
    write(tmp_path, "docs/conf.py", 'extensions = ["myst_parser"]\n')
    write(tmp_path, "docs/index.rst", "Home\n====\n\nSee :ref:`guide-setup`.\n")
    write(
        tmp_path,
        "docs/guide.md",
        """
        # Guide

        (guide-setup)=
        ## Setup

        ```text
        (not-a-target)=
        ```
        """,
    )
    write(
        tmp_path,
        "docs/other.md",
        "# Other\n\nSee [](guide-setup), [again](#guide-setup), {ref}`guide-setup`,\n"
        "{ref}`the setup <guide-setup>` and {doc}`guide`; `{ref}` alone is code.\n",
    )
    batch = read_docs(tmp_path)
    nodes = by_uid(batch)
    assert edges_of(nodes["other"], "xref") == ["guide#setup", "guide"]
    assert edges_of(nodes["index"], "xref") == ["guide#setup"]
    assert batch.stats["links"]["unresolved"] == 0
    assert batch.stats["links"]["internal"] == 6
    assert batch.stats["links"]["missing_anchor"] == 0
    content = nodes["guide"].content or ""
    assert "(guide-setup)=" not in content  # the target line is markup, not text
    assert "(not-a-target)=" in content  # inside a fence it is code


def test_translations_beside_the_pages(tmp_path: Path) -> None:
    # Fumadocs-style: the default language unsuffixed, translations as page.<lang>.mdx.
    root = tmp_path / "fuma"
    for stem in ("a", "b", "c"):
        write(root, f"{stem}.mdx", f"# {stem}\n")
        write(root, f"{stem}.fr.mdx", f"# {stem} (fr)\n")
        write(root, f"{stem}.cn.mdx", f"# {stem} (cn)\n")
    write(root, "d.mdx", "# d\n")
    write(root, "setup.py.md", "# Python setup\n")  # a programming language, not a translation
    batch = read_docs(root)
    assert {n.uid for n in batch.nodes if n.kind == "page"} == {"a", "b", "c", "d", "setup.py"}
    assert batch.stats["unpublished_count"] == 6
    assert any("(cn, fr): read the unsuffixed pages" in n for n in batch.stats["notes"])
    # Nextra-style: every page suffixed; English is read, served without its suffix.
    root = tmp_path / "nextra"
    for stem in ("a", "b", "c"):
        write(root, f"docs/{stem}.en-US.mdx", f"# {stem}\n")
        write(root, f"docs/{stem}.zh-CN.mdx", f"# {stem} (zh)\n")
    nodes = by_uid(read_docs(root))
    assert {u for u, n in nodes.items() if n.kind == "page"} == {
        "docs/a.en-US", "docs/b.en-US", "docs/c.en-US",
    }  # fmt: skip
    assert nodes["docs/a.en-US"].meta["url"] == "/docs/a/"
    # Fewer than three translated pages: a dotted name, left alone.
    root = tmp_path / "few"
    write(root, "notes.md", "# Notes\n")
    write(root, "notes.de.md", "# Notizen\n")
    assert {n.uid for n in read_docs(root).nodes if n.kind == "page"} == {"notes", "notes.de"}


def test_starlight_site(tmp_path: Path) -> None:
    write(
        tmp_path,
        "docs/astro.config.mjs",
        """
        import starlight from '@astrojs/starlight';
        export const locales = {
          root: { label: 'English', lang: 'en' },
          'zh-cn': { label: '简体中文', lang: 'zh-CN' },
        };
        export default defineConfig({
          site: 'https://docs.example.dev',
          base: '/kit',
          integrations: [starlight({ title: 'Kit', locales })],
        });
        """,
    )
    write(
        tmp_path,
        "docs/src/content/docs/index.mdx",
        "---\ntitle: Home\n---\nSee [setup](/kit/guides/setup/).\n",
    )
    write(tmp_path, "docs/src/content/docs/guides/Setup.md", "---\ntitle: Setup\n---\n## Install\n")
    write(
        tmp_path,
        "docs/src/content/docs/guides/moved.md",
        "---\ntitle: M\nslug: elsewhere/page\n---\n",
    )
    write(tmp_path, "docs/src/content/docs/guides/wip.md", "---\ntitle: WIP\ndraft: true\n---\n")
    write(tmp_path, "docs/src/content/docs/zh-cn/index.mdx", "---\ntitle: 首页\n---\n")
    batch = read_docs(tmp_path)
    nodes = by_uid(batch)
    assert batch.stats["shape"] == "starlight"
    assert {u for u, n in nodes.items() if n.kind == "page"} == {
        "index", "guides/Setup", "guides/moved",
    }  # fmt: skip
    assert nodes["index"].meta["url"] == "https://docs.example.dev/kit/"
    assert nodes["guides/Setup"].meta["url"] == "https://docs.example.dev/kit/guides/setup/"
    assert nodes["guides/Setup#install"].meta["url"].endswith("/kit/guides/setup/#install")
    assert nodes["guides/moved"].meta["url"] == "https://docs.example.dev/kit/elsewhere/page/"
    assert edges_of(nodes["index"], "xref") == ["guides/Setup"]
    assert sorted(batch.stats["unpublished"]) == [
        "docs/src/content/docs/guides/wip.md: draft",
        "docs/src/content/docs/zh-cn/index.mdx: locales: another language",
    ]
