"""The docs reader's former entry point, kept for the command line until it calls
:func:`cogitave.ingest.sources.read_source`: use :func:`cogitave.ingest.docs.read_docs`."""

from cogitave.ingest.docs import read_docs as read_markdown

__all__ = ["read_markdown"]
