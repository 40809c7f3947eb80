"""The graph tools behind the MCP surface, under one name: related nodes
(:mod:`~cogitave.graph.related`), facets (:mod:`~cogitave.graph.facets`), xref resolution
(:mod:`~cogitave.graph.xref`) and learning paths (:mod:`~cogitave.graph.learning`)."""

from __future__ import annotations

from cogitave.graph.facets import Facets, facets
from cogitave.graph.learning import LearningPath, LearningStep, get_learning_path
from cogitave.graph.related import (
    DEFAULT_TIMEOUT_MS,
    MAX_TIMEOUT_MS,
    PathStep,
    Related,
    RelatedResult,
    get_related,
)
from cogitave.graph.xref import XrefCandidate, XrefResult, path_key, resolve_xref, slug

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "MAX_TIMEOUT_MS",
    "Facets",
    "LearningPath",
    "LearningStep",
    "PathStep",
    "Related",
    "RelatedResult",
    "XrefCandidate",
    "XrefResult",
    "facets",
    "get_learning_path",
    "get_related",
    "path_key",
    "resolve_xref",
    "slug",
]
