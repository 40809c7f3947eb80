"""Documentation trees -> nodes and edges: MkDocs, Hugo, Docusaurus, VitePress, Starlight,
Next.js, Sphinx (sources or a built tree's ``_sources``) and plain folders of Markdown, MDX or
reStructuredText. :func:`read_docs` is the entry point (see :mod:`cogitave.ingest.docs.read`).
"""

from cogitave.ingest.docs.frontmatter import FrontMatterMapping
from cogitave.ingest.docs.nodes import MIN_SECTION_TERMS
from cogitave.ingest.docs.read import DocsBatch, docs_schema, read_docs

__all__ = ["MIN_SECTION_TERMS", "DocsBatch", "FrontMatterMapping", "docs_schema", "read_docs"]
