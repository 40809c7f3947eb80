"""One root error class with stable codes that every surface maps the same way.

The tree::

    CogitaveError                      code            HTTP
    ├── InputError                     bad_input       400   a request or record is malformed
    │   ├── SchemaError                schema          400   schema file or dimension misuse
    │   ├── EdgeLabelError             edge_label      400   label outside the closed vocabulary
    │   ├── IngestError                ingest          400   bad source records (file:line list)
    │   └── QueryError                 query           400   empty / oversized / malformed query
    │   └── TooCostlyError             too_costly      400   a request past a cost bound
    │                                                        (expansions, response bytes, wall
    │                                                        time, a GraphQL document's size);
    │                                                        ``details["bound"]``
    ├── UnauthorizedError              unauthorized    401   missing or wrong bearer API key
    ├── NotFoundError                  not_found       404   collection, root, or uid unknown
    ├── ConflictError                  conflict        409   writer lock held, collection exists
    ├── BodyTooLargeError              too_large       413   request body over the server's cap
    ├── HTTPError                      (per status)    4xx   transport errors (unknown path, wrong
    │                                                        method, unreadable GraphQL request)
    ├── CorruptionError                corrupt         500*  checksum mismatch naming the file
    ├── StorageError                   io              500*  the collection's files could not be
    │                                                        written (a full disk, a read-only
    │                                                        mount); the previous root stays
    ├── EncoderError                   encoder         500*  encoder unavailable / mismatched
    ├── InternalError                  internal        500*  unexpected fault (details only logged)
    ├── CrawlFailedError               crawl_failed    502   a crawl whose failed URLs passed
    │                                                        --max-failures; nothing published
    │                                                        (``details["report"]``)
    ├── PackageIndexError              package_index   502   a package index's metadata is
    │                                                        missing, unreachable or malformed
    ├── DependenciesFailedError        deps_failed     502   ``index --project``: more
    │                                                        dependencies failed than
    │                                                        --max-failures allows
    │                                                        (``details["report"]``)
    ├── UnavailableError               unavailable     503   server busy or a part not running
    └── QueryGraphError                (own codes)     400   bounded graph query violation

(*) corruption, storage and encoder errors are faults of the installation, not of the
caller's input; the surfaces still answer with a JSON body and a code, never a traceback.

Surfaces read ``code``, ``http_status`` and ``message``; they never inspect the class.
"""

from __future__ import annotations

from typing import Any, ClassVar


class CogitaveError(Exception):
    """Root of every error the engine raises on purpose."""

    code: ClassVar[str] = "error"
    http_status: ClassVar[int] = 400

    MAX_MESSAGE: ClassVar[int] = 600

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        # messages may quote the caller's input: never echo a megabyte back
        if len(message) > self.MAX_MESSAGE:
            message = message[: self.MAX_MESSAGE] + "… (truncated)"
        super().__init__(message)
        self.message = message
        self.details = details or {}

    def to_dict(self) -> dict[str, Any]:
        """The JSON body every surface returns: ``{"code", "message", "details"?}``."""
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            body["details"] = self.details
        return body


class InputError(CogitaveError):
    code = "bad_input"


class SchemaError(InputError):
    code = "schema"


class EdgeLabelError(InputError):
    code = "edge_label"


class IngestError(InputError):
    """Bad source records; ``details["errors"]`` lists ``{"file", "line", "reason"}``."""

    code = "ingest"


class QueryError(InputError):
    code = "query"


class NotFoundError(CogitaveError):
    code = "not_found"
    http_status = 404


class ConflictError(CogitaveError):
    code = "conflict"
    http_status = 409


class CorruptionError(CogitaveError):
    code = "corrupt"
    http_status = 500


class StorageError(CogitaveError):
    """Writing the collection failed at the file system (``ENOSPC``, ``EROFS``, ``EIO``): a
    publish stops there and HEAD still names the previous, whole root."""

    code = "io"
    http_status = 500


class EncoderError(CogitaveError):
    code = "encoder"
    http_status = 500


class TooCostlyError(InputError):
    """A request past one of the cost bounds; ``details`` name the bound and its maximum."""

    code = "too_costly"

    def __init__(self, bound: str, maximum: float, message: str) -> None:
        super().__init__(message, details={"bound": bound, "max": maximum})
        self.bound = bound


class UnauthorizedError(CogitaveError):
    """A missing or wrong bearer API key."""

    code = "unauthorized"
    http_status = 401


class BodyTooLargeError(CogitaveError):
    """A request body over the server's ``max_body_bytes``."""

    code = "too_large"
    http_status = 413


class HTTPError(CogitaveError):
    """A transport error (unknown path, wrong method, unreadable request) in the common shape."""

    CODES: ClassVar[dict[int, str]] = {
        400: "bad_request",
        403: "forbidden",
        404: "not_found",
        405: "method_not_allowed",
        406: "not_acceptable",
        413: "too_large",
        415: "unsupported_media_type",
        421: "misdirected_request",
    }

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.http_status = status  # type: ignore[misc]
        self.code = self.CODES.get(status, "http")  # type: ignore[misc]


class InternalError(CogitaveError):
    """An unexpected fault: answered in the common shape, details only in the server log."""

    code = "internal"
    http_status = 500


class CrawlFailedError(CogitaveError):
    """A crawl that met more failures than it may (``--max-failures``): the site, not the
    caller's input, is at fault, so nothing is published; ``details["report"]`` is the crawl
    report."""

    code = "crawl_failed"
    http_status = 502


class PackageIndexError(CogitaveError):
    """A package index (PyPI's JSON API, an npm registry) that did not say what a
    dependency's metadata is: not found, unreachable, or not the JSON expected."""

    code = "package_index"
    http_status = 502


class DependenciesFailedError(CogitaveError):
    """``index --project`` whose failed dependencies passed ``--max-failures``; what was
    fetched stays, ``details["report"]`` is the run's report."""

    code = "deps_failed"
    http_status = 502


class UnavailableError(CogitaveError):
    """The server is busy (its worker queue is full) or a part of it is not running."""

    code = "unavailable"
    http_status = 503


class QueryGraphError(CogitaveError):
    """A bounded-graph-query violation. ``code`` is set per instance:
    ``read_only``, ``label``, ``depth``, ``unbounded``, ``timeout``, ``param``, ``syntax``,
    ``limit``."""

    code = "query_graph"
    CODES: ClassVar[frozenset[str]] = frozenset(
        {"read_only", "label", "depth", "unbounded", "timeout", "param", "syntax", "limit"}
    )

    def __init__(self, code: str, message: str, *, details: dict[str, Any] | None = None) -> None:
        if code not in self.CODES:
            raise ValueError(f"unknown QueryGraphError code {code!r}")
        super().__init__(message, details=details)
        self.code = code  # type: ignore[misc]
