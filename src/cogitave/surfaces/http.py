"""The HTTP surface: REST, the JSON content API, GraphQL and MCP in one FastAPI app.

===========================  ==============================================================
``POST /search``             a JSON :class:`SearchRequest` -> ``SearchResponse.to_dict()``
                             (``?format=markdown&max_tokens=N``: the hits as Markdown)
``GET /nodes/{uid}``         the content API (uids may hold ``/``; escape ``#`` as ``%23``)
``GET /nodes/{uid}/related`` ``labels`` (comma list), ``direction``, ``depth``, ``limit``
``GET /fetch``               ``ref`` (URL, path, uid, page#anchor), ``max_tokens``,
                             ``offset``, ``format`` (json or markdown): a page as Markdown
``GET /learning-path``       ``target``
``GET /facets``              ``uids`` (comma list), ``labels``, ``depth``
``GET /xref``                ``ref`` (``base``, ``limit``)
``POST /graph/query``        ``{"query": "MATCH ...", "params": {...}}``
``GET /roots``, ``/health``  the roots; liveness and ``pid`` (never behind the API key)
``GET /``, ``/static/...``   the search page (its own files are open; its fetches send the key)
``/graphql``, ``/mcp``       Strawberry GraphQL; MCP over streamable HTTP
===========================  ==============================================================

Each route is one service operation (:mod:`cogitave.service.ops`): it builds the operation's
typed arguments from what the request gave (the defaults are the argument type's) and encodes
the typed answer. Every error is ``{"error": {"code", "message", "details"?}}`` with the
engine error's HTTP status; bad request syntax is 400, an oversized body 413, a missing or
wrong API key 401, a request past a cost bound 400 ``too_costly``
(:mod:`cogitave.surfaces.cost`), a full worker queue 503. Request work runs on a bounded
worker pool, never on the event loop.
"""

from __future__ import annotations

import errno
import hmac
import json
import os
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import TypeAdapter
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cogitave import __version__
from cogitave.errors import (
    BodyTooLargeError,
    CogitaveError,
    ConflictError,
    HTTPError,
    InputError,
    InternalError,
    UnauthorizedError,
    UnavailableError,
)
from cogitave.query.types import MAX_LIMIT
from cogitave.reader import Reader
from cogitave.service import ops
from cogitave.service.args import (
    FacetsArgs,
    FetchArgs,
    GraphQueryArgs,
    LearningPathArgs,
    LibraryArgs,
    RelatedArgs,
    SearchArgs,
    XrefArgs,
)
from cogitave.service.render import MAX_TOKENS, MIN_TOKENS
from cogitave.surfaces.cost import (
    DEFAULT_LIMITS,
    RETRY_AFTER_S,
    SWITCH_INTERVAL_S,
    WORKERS,
    Budget,
    Limits,
    WorkerPool,
)
from cogitave.surfaces.graphql import graphql_router
from cogitave.surfaces.mcp import build_mcp

MCP_PATH = "/mcp"
OPEN_PATHS = frozenset({"/health", "/"})
STATIC_DIR = Path(__file__).with_name("static")
STATIC_PREFIX = "/static/"  # the page's own files: no data, so never behind the API key
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
}
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def error_body(err: CogitaveError) -> dict[str, Any]:
    """The error shape of every HTTP answer: ``{"error": {"code", "message", "details"?}}``."""
    return {"error": err.to_dict()}


def _error_response(err: CogitaveError) -> JSONResponse:
    headers: dict[str, str] | None = None
    if err.http_status == 401:
        headers = {"WWW-Authenticate": "Bearer"}
    elif err.http_status == 503:
        headers = {"Retry-After": str(RETRY_AFTER_S)}
    return JSONResponse(error_body(err), status_code=err.http_status, headers=headers)


def json_errors(app: ASGIApp) -> ASGIApp:
    """``app`` with its plain-text error answers (status 400 and up, not JSON) rewritten in
    the common shape, ``{"error": {"code", "message"}}``, the text as the message: the MCP
    transport answers a wrong ``Content-Type``, ``Host`` or ``Origin`` in plain text."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        start: Message | None = None
        text = bytearray()

        async def rewrite(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers") or ())
                kind = headers.get(b"content-type", b"")
                if message["status"] >= 400 and not kind.startswith(b"application/json"):
                    start = message
                    return
            elif message["type"] == "http.response.body" and start is not None:
                if len(text) < CogitaveError.MAX_MESSAGE:
                    text.extend(message.get("body", b"")[: CogitaveError.MAX_MESSAGE])
                if message.get("more_body", False):
                    return
                reason = text.decode("utf-8", "replace").strip() or "request refused"
                err = HTTPError(start["status"], f"MCP transport: {reason}")
                response = _error_response(err)
                await response(scope, _no_body, send)
                return
            await send(message)

        await app(scope, receive, rewrite)

    return wrapped


async def _no_body() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


class GuardMiddleware:
    """Bearer API key on everything but ``/health``; body size cap (413) on every request."""

    def __init__(self, app: ASGIApp, *, api_key: str | None, max_body_bytes: int) -> None:
        self.app = app
        self.api_key = api_key.encode() if api_key else None
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        if scope["type"] == "websocket":
            if self.api_key and not self._authorized(headers):
                await send({"type": "websocket.close", "code": 1008})
                return
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        is_open = path in OPEN_PATHS or path.startswith(STATIC_PREFIX)
        if self.api_key and not is_open and not self._authorized(headers):
            err = UnauthorizedError("missing or wrong API key: send 'Authorization: Bearer KEY'")
            await _error_response(err)(scope, receive, send)
            return
        declared = headers.get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            await _error_response(self._too_large())(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body_bytes:
                    raise self._too_large()
            return message

        await self.app(scope, counted, send)

    def _authorized(self, headers: dict[bytes, bytes]) -> bool:
        scheme, _, token = headers.get(b"authorization", b"").partition(b" ")
        return (
            scheme.lower() == b"bearer"
            and self.api_key is not None
            and hmac.compare_digest(token.strip(), self.api_key)
        )

    def _too_large(self) -> BodyTooLargeError:
        return BodyTooLargeError(f"request body is larger than {self.max_body_bytes} bytes")


@dataclass(frozen=True)
class McpSessions:
    """MCP-over-HTTP sessions. ``stateless`` (the default) keeps no session table at all:
    every tool call is one request/response, so nothing accumulates. Otherwise at most
    ``max_sessions`` are open, and one idle for ``idle_timeout_s`` is closed."""

    stateless: bool = True
    max_sessions: int = 32
    idle_timeout_s: float = 300.0

    @classmethod
    def of(cls, sessions: int, idle_s: float) -> McpSessions:
        """From ``--mcp-sessions`` (0: stateless, else the cap) and ``--mcp-idle``."""
        if sessions < 0 or idle_s <= 0:
            raise InputError("--mcp-sessions must be >= 0 and --mcp-idle > 0")
        return cls(stateless=sessions == 0, max_sessions=max(1, sessions), idle_timeout_s=idle_s)


class McpEndpoint:
    """``/mcp``: the MCP streamable-HTTP transport, one session manager per app lifespan."""

    def __init__(
        self, col: Reader, host: str, sessions: McpSessions, pool: WorkerPool, limits: Limits
    ) -> None:
        self.server = build_mcp(col, pool=pool, limits=limits)
        self.host = host
        self.sessions = sessions
        self.handler: Callable[[Scope, Receive, Send], Awaitable[None]] | None = None

    @asynccontextmanager
    async def running(self, max_body_bytes: int) -> AsyncIterator[None]:
        # The SDK's session manager runs once; a fresh one per lifespan lets tests restart.
        s = self.sessions
        self.server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            host=self.host,
            max_request_body_size=max_body_bytes,
            stateless_http=s.stateless,
            session_idle_timeout=s.idle_timeout_s,
            max_sessions=s.max_sessions,
        )
        manager = self.server.session_manager
        async with manager.run():
            self.handler = manager.handle_request
            try:
                yield
            finally:
                self.handler = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.sessions.stateless and scope.get("method") == "GET":
            # Stateless: nothing is ever pushed, so no idle event stream is held open per
            # connection; the MCP spec lets a server answer this GET with 405.
            err = HTTPError(405, "this MCP endpoint is stateless: no server-sent event stream")
            await _error_response(err)(scope, receive, send)
            return
        if self.handler is None:
            err = UnavailableError("the MCP transport is not running (app lifespan not started)")
            await _error_response(err)(scope, receive, send)
            return
        await json_errors(self.handler)(scope, receive, send)


def _search_schema() -> dict[str, Any]:
    """OpenAPI schema of the /search body, derived from :class:`SearchArgs` itself."""
    schema = TypeAdapter(SearchArgs).json_schema()
    schema["additionalProperties"] = False
    schema["properties"].pop("request", None)
    schema["properties"]["limit"] |= {"minimum": 1, "maximum": MAX_LIMIT}
    schema["properties"]["max_tokens"] |= {"minimum": MIN_TOKENS, "maximum": MAX_TOKENS}
    return schema


GRAPH_QUERY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["query"],
    "properties": {
        "query": {"type": "string", "description": "MATCH ... RETURN (read-only subset)"},
        "params": {"type": "object", "description": "values for $name placeholders"},
    },
}


def _body_doc(schema: dict[str, Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


async def _json_body(request: Request) -> Any:
    raw = await request.body()
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"malformed JSON body: {e}") from None
    except (ValueError, RecursionError):  # integers past Python's digit limit; deep nesting
        raise InputError("JSON body too deeply nested or with numbers too large") from None


def _validation_message(exc: RequestValidationError) -> tuple[str, list[dict[str, Any]]]:
    errors = [
        {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", "")), "type": e["type"]}
        for e in exc.errors()
    ]
    text = "; ".join(f"{'.'.join(e['loc'][1:]) or 'request'}: {e['msg']}" for e in errors)
    return text or "invalid request", errors


def check_api_key(api_key: str | None) -> str | None:
    """``None`` (no key) or a usable key; an empty or blank key is refused, never read as
    "authentication off"."""
    if api_key is None:
        return None
    if not isinstance(api_key, str) or not api_key.strip():
        raise InputError(
            "the API key is empty: set COGITAVE_API_KEY to a secret (or unset it to serve "
            "without a key on loopback)"
        )
    return api_key.strip()


def create_app(
    collection: Reader,
    *,
    api_key: str | None = None,
    max_body_bytes: int = 1_000_000,
    host: str = "127.0.0.1",
    limits: Limits = DEFAULT_LIMITS,
    workers: int = WORKERS,
    mcp_sessions: McpSessions = McpSessions(),
) -> FastAPI:
    """The app over an opened collection. ``host`` is where it will listen: on loopback the
    MCP transport also checks ``Host``/``Origin`` headers against DNS rebinding. Every
    request gets a :class:`~cogitave.surfaces.cost.Budget` of ``limits``; its work runs on a
    pool of ``workers`` threads, never on the event loop."""
    col = collection
    api_key = check_api_key(api_key)
    pool = WorkerPool(workers)
    mcp = McpEndpoint(col, host, mcp_sessions, pool, limits)

    async def work(fn: Callable[[], Any], *, heavy: bool = False) -> Response:
        """Run ``fn`` (a service operation) on the pool under a fresh budget; encode its
        answer there too."""
        budget = Budget(limits)
        data = await pool.run(budget, lambda: budget.encode(ops.to_json(fn())), heavy=heavy)
        return Response(data, media_type="application/json")

    async def markdown(fn: Callable[[], str]) -> Response:
        """Run ``fn`` (an operation's Markdown) on the pool under a fresh budget."""
        budget = Budget(limits)

        def text() -> bytes:
            return budget.check_text(fn())

        data = await pool.run(budget, text)
        return Response(data, media_type="text/markdown; charset=utf-8")

    def given(**kw: Any) -> dict[str, Any]:
        """The query parameters the request gave (the operation's defaults fill the rest)."""
        return {k: v for k, v in kw.items() if v is not None}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with mcp.running(max_body_bytes):
            yield

    app = FastAPI(
        title="Cogitave Query",
        summary="Hybrid retrieval over documentation and knowledge graphs.",
        version=__version__,
        lifespan=lifespan,
    )
    app.state.mcp = mcp
    app.add_middleware(GuardMiddleware, api_key=api_key, max_body_bytes=max_body_bytes)

    @app.exception_handler(CogitaveError)
    async def _engine_error(_: Request, exc: CogitaveError) -> JSONResponse:
        return _error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _bad_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        text, errors = _validation_message(exc)
        return _error_response(InputError(text, details={"errors": errors}))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error_response(HTTPError(exc.status_code, str(exc.detail)))

    @app.exception_handler(Exception)
    async def _crash(_: Request, exc: Exception) -> JSONResponse:
        # Starlette still logs the traceback; the caller gets the shape, not the internals.
        return _error_response(InternalError("internal error; see the server log"))

    @app.post("/search", tags=["search"], openapi_extra=_body_doc(_search_schema()))
    async def search(
        request: Request,
        format: Annotated[
            str, Query(description="json (the ranking) or markdown (the agents' answer).")
        ] = "json",
        max_tokens: Annotated[
            int | None,
            Query(description=f"Token budget of markdown, {MIN_TOKENS}-{MAX_TOKENS}."),
        ] = None,
    ) -> Response:
        """Ranked search; the body mirrors the search arguments, unknown fields are an
        error. ``?format=markdown`` answers the hits as Markdown within ``max_tokens``."""
        if format not in ("json", "markdown"):
            raise InputError(f"format must be json or markdown, not {format!r}")
        body = await _json_body(request)
        if max_tokens is not None and isinstance(body, dict):
            body = {**body, "max_tokens": max_tokens}
        args = SearchArgs.from_dict(body)
        if format == "markdown":
            return await markdown(lambda: ops.docs_search(col, args).markdown)
        return await work(lambda: ops.search_answer(col, args))

    @app.get("/nodes/{uid:path}/related", tags=["graph"])
    async def related(
        uid: str,
        labels: Annotated[str | None, Query(description="Comma-separated edge labels.")] = None,
        direction: Annotated[str | None, Query(description="out, in or both.")] = None,
        depth: Annotated[int | None, Query(description="Hops, 1-4.")] = None,
        limit: Annotated[int | None, Query(description="Rows, 1-1000.")] = None,
        library: Annotated[
            str | None, Query(description="A library (name or name@version).")
        ] = None,
        version: Annotated[str | None, Query(description="The library's version.")] = None,
    ) -> Response:
        """Neighbours of a node within `depth` hops, each with the path that reached it."""
        args = RelatedArgs(
            uid,
            **given(
                labels=labels,
                direction=direction,
                depth=depth,
                limit=limit,
                library=library,
                version=version,
            ),
        )
        return await work(lambda: ops.related(col, args), heavy=True)

    @app.get("/nodes/{uid:path}", tags=["content"])
    async def node(uid: str) -> Response:
        """One node: kind, dimensions, content, out-edges, meta and code if any."""
        return await work(lambda: ops.node(col, uid))

    @app.get("/fetch", tags=["content"])
    async def fetch(
        ref: Annotated[str, Query(description="A URL, path, uid, or page#anchor.")],
        max_tokens: Annotated[
            int | None, Query(description=f"Token budget, {MIN_TOKENS}-{MAX_TOKENS}.")
        ] = None,
        offset: Annotated[int | None, Query(description="Continue from this block offset.")] = None,
        format: Annotated[str, Query(description="markdown or json.")] = "json",
        library: Annotated[
            str | None, Query(description="A library (name or name@version).")
        ] = None,
        version: Annotated[str | None, Query(description="The library's version.")] = None,
    ) -> Response:
        """A page or one section as Markdown (budgeted, with a continuation offset)."""
        if format not in ("json", "markdown"):
            raise InputError(f"format must be json or markdown, not {format!r}")
        args = FetchArgs(
            ref, **given(max_tokens=max_tokens, offset=offset, library=library, version=version)
        )
        if format == "markdown":
            return await markdown(lambda: ops.fetch(col, args).markdown)
        return await work(lambda: ops.fetch(col, args))

    @app.get("/learning-path", tags=["graph"])
    async def learning_path(
        target: str, library: str | None = None, version: str | None = None
    ) -> Response:
        """What to read before `target` (uid, skill:<slug>, role:<slug>, or a name)."""
        args = LearningPathArgs(target, library, version)
        return await work(lambda: ops.learning_path(col, args), heavy=True)

    @app.get("/facets", tags=["graph"])
    async def facets(uids: str, labels: str | None = None, depth: int | None = None) -> Response:
        """Kinds, edge labels and exact values around comma-separated `uids` (a result set)."""
        args = FacetsArgs(uids, **given(labels=labels, depth=depth))  # type: ignore[arg-type]
        return await work(lambda: ops.facets(col, args), heavy=True)

    @app.get("/xref", tags=["graph"])
    async def xref(
        ref: str,
        base: str | None = None,
        limit: int | None = None,
        library: str | None = None,
        version: str | None = None,
    ) -> Response:
        """Node candidates for a uid, alias, path, URL path, page#anchor or title."""
        args = XrefArgs(ref, **given(base=base, limit=limit, library=library, version=version))
        return await work(lambda: ops.resolve_xref(col, args))

    @app.post("/graph/query", tags=["graph"], openapi_extra=_body_doc(GRAPH_QUERY_SCHEMA))
    async def graph_query(request: Request) -> Response:
        """Bounded read-only MATCH ... RETURN (depth <= 4, LIMIT <= 1000, 250 ms)."""
        args = GraphQueryArgs.from_dict(await _json_body(request))
        return await work(lambda: ops.query_graph(col, args), heavy=True)

    @app.get("/libraries", tags=["libraries"])
    async def libraries() -> Response:
        """The libraries held: versions newest first, sizes, provenance, default versions."""
        return await work(lambda: ops.list_libraries(col))

    @app.get("/libraries/resolve", tags=["libraries"])
    async def resolve_library(name: str, limit: int | None = None) -> Response:
        """Which held library a name means, best first, with its versions."""
        args = LibraryArgs(name, **given(limit=limit))
        return await work(lambda: ops.resolve_library(col, args))

    @app.get("/roots", tags=["content"])
    async def roots() -> Response:
        """The root this server reads and the retained roots, newest first."""
        return await work(lambda: ops.roots(col))

    @app.get("/health", tags=["ops"])
    async def health() -> dict[str, Any]:
        """Liveness and the id of the server process that answered (``serve --processes``
        runs several); open even when an API key is set. Answered on the event loop, which
        never runs request work, so it stays fast while heavy requests run."""
        return {"status": "ok", "pid": os.getpid()}

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        """The search page (static HTML; it calls the endpoints above)."""
        return FileResponse(STATIC_DIR / "index.html", headers=PAGE_HEADERS)

    app.mount(STATIC_PREFIX.rstrip("/"), StaticFiles(directory=STATIC_DIR), name="static")
    app.include_router(
        graphql_router(col, pool=pool, limits=limits), prefix="/graphql", include_in_schema=False
    )
    app.add_route(MCP_PATH, mcp, methods=["GET", "POST", "DELETE"], include_in_schema=False)
    return app


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: any free port), or a one-line error: a
    busy port is told before anything claims to be serving on it."""
    if not 0 <= port <= 65535:
        raise InputError(f"--port {port}: a port is a number from 0 to 65535")
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.create_server((host, port), family=family)  # SO_REUSEADDR, as uvicorn
    except socket.gaierror as e:
        raise InputError(f"--host {host}: {e.strerror}") from None
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise ConflictError(
                f"port {port} on {host} is in use (another server?); choose one with --port"
            ) from None
        if e.errno == errno.EACCES:
            raise InputError(f"--port {port}: permission denied (below 1024 needs root)") from None
        raise InputError(f"cannot listen on {host}:{port}: {e.strerror}") from None
    return no_delay(sock)


def no_delay(sock: socket.socket) -> socket.socket:
    """``sock`` (listening) made so that every connection it accepts sends without delay.

    With Nagle's algorithm on, the second response of a keep-alive connection waits for the
    client's delayed ACK (~40 ms on Linux). asyncio turns it off (``TCP_NODELAY``) on each
    accepted connection, but only for a socket whose protocol number says TCP, and
    ``socket.create_server`` makes its socket with protocol 0, which its accepted sockets
    copy. So the listener is wrapped again as ``IPPROTO_TCP``, and also gets ``TCP_NODELAY``
    itself, which accepted sockets inherit on Linux."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    family = sock.family
    return socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, fileno=sock.detach())


def serve(
    collection: Reader,
    sock: socket.socket,
    *,
    host: str = "127.0.0.1",
    api_key: str | None = None,
    workers: int = WORKERS,
    mcp_sessions: McpSessions = McpSessions(),
    shared: bool = False,
) -> None:
    """Warm the reader (the first request must not pay for loading the lexicon and the
    encoder), follow the roots writers publish, and run the app with uvicorn on ``sock``
    (from :func:`bind`) until interrupted. ``shared``: other server processes accept on
    ``sock`` too (:mod:`cogitave.surfaces.processes`), so it is
    :func:`~cogitave.surfaces.processes.balanced` among them."""
    import uvicorn

    from cogitave.surfaces.processes import balanced

    collection.warm()
    collection.follow()
    app = create_app(
        collection, api_key=api_key, host=host, workers=workers, mcp_sessions=mcp_sessions
    )
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    sockets = [balanced(sock) if shared else sock]
    loop = "asyncio" if shared else "auto"  # asyncio accepts through the socket object
    uvicorn.Server(uvicorn.Config(app, log_level="info", loop=loop)).run(sockets=sockets)
