"""The HTTP layer: Starlette routes that hand raw bodies to the native core.

Everything vLLM-specific about a request (validation, errors, the answer) is
decided in Rust; this module only moves bytes and adds the server routes
(`/health`, `/v1/models`, `/metrics`, ...) and API-key checks.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import anyio
from starlette.applications import Starlette
from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from derender import __version__, _native, logs, openapi, user_middleware
from derender._native import Derenderer
from derender.config import ServerConfig
from derender.metrics import CoreStats, Metrics, SharedMetrics
from derender.tokenizer_info import tokenizer_info

# Bodies larger than this are derendered on a worker thread so a big batch
# call does not stall the event loop; small ones run inline (cheaper).
_INLINE_BODY_BYTES = 64 * 1024
_GUARDED_PREFIXES = ("/v1", "/v2", "/inference", "/cohere")
# Where a native route leaves its call's `CallStats` for `ObserveMiddleware`.
_STATS_KEY = "derender.stats"


def _error(status: int, message: str, kind: str, param: str | None = None) -> JSONResponse:
    body = {"error": {"message": message, "type": kind, "param": param, "code": status}}
    return JSONResponse(body, status_code=status)


class BodyTooLarge(Exception):
    pass


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


class ApiKeyMiddleware:
    """vLLM's bearer-token check on /v1, /v2, /inference and /cohere paths."""

    def __init__(self, app: ASGIApp, keys: list[str]) -> None:
        self.app = app
        self.digests = [hashlib.sha256(k.encode()).digest() for k in keys]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope.get("method") == "OPTIONS":
            await self.app(scope, receive, send)
            return
        root = scope.get("root_path", "")
        path = (
            scope["path"][len(root) :] if root and scope["path"].startswith(root) else scope["path"]
        )
        if not path.startswith(_GUARDED_PREFIXES) or self._authorized(scope):
            await self.app(scope, receive, send)
            return
        response = JSONResponse({"error": "Unauthorized"}, status_code=401)
        await response(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        headers = dict(scope.get("headers") or [])
        value = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, token = value.partition(" ")
        if scheme.lower() != "bearer":
            return False
        digest = hashlib.sha256(token.encode()).digest()
        return any(hmac.compare_digest(digest, d) for d in self.digests)


class RequestIdMiddleware:
    """`--enable-request-id-headers`: every answer carries `X-Request-Id`, the
    request's own or a fresh uuid4 (hex), as vLLM's XRequestIdMiddleware."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        request_id = Headers(scope=scope).get("x-request-id") or uuid.uuid4().hex

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(raw=message["headers"]).append("X-Request-Id", request_id)
            await send(message)

        await self.app(scope, receive, send_with_id)


class RootPathMiddleware:
    """`--root-path`: the proxy's path prefix (FastAPI's `app.root_path`):
    routes answer under it and without it."""

    def __init__(self, app: ASGIApp, root_path: str) -> None:
        self.app = app
        self.root_path = root_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            scope = {**scope, "root_path": self.root_path}
        await self.app(scope, receive, send)


async def _call_native(
    core: Derenderer,
    limit: float | None,
    path: str,
    body: bytes,
    content_type: str | None,
    request_id: str | None,
) -> tuple[int, bytes, CoreStats]:
    """`core.handle_measured`: inline for small bodies (cheapest), on a worker thread for big
    ones (the event loop stays free) and for every body under a time limit: a
    call past it is abandoned to finish on its thread, its answer dropped."""
    if limit is None and len(body) <= _INLINE_BODY_BYTES:
        return core.handle_measured(path, body, content_type, request_id)
    return await anyio.to_thread.run_sync(
        core.handle_measured,
        path,
        body,
        content_type,
        request_id,
        abandon_on_cancel=limit is not None,
    )


def _time_limit(limit: float | None) -> AbstractContextManager[object]:
    """A cancel scope raising TimeoutError past `limit`; none without one."""
    return anyio.fail_after(limit) if limit is not None else nullcontext()


def _timed_out(limit: float | None, body_received: bool) -> JSONResponse:
    """`--request-timeout` passed: 408 while the client was still sending the
    body (its side), 503 once the server had it (retryable, as vLLM's
    overload errors: a load balancer or SDK may try another replica)."""
    if not body_received:
        message = f"the request body did not arrive within the server's {limit:g} s limit"
        return _error(408, f"{message} (--request-timeout)", "Request Timeout")
    message = f"the server did not finish this request within its {limit:g} s limit"
    return _error(503, f"{message} (--request-timeout); retry later", "Service Unavailable")


class ObserveMiddleware:
    """Outermost layer: times every request, counts its body bytes, feeds the metrics and
    writes the access log line (never a body). Paths outside `routes` are labelled `other`
    so clients cannot grow the label sets."""

    def __init__(self, app: ASGIApp, metrics: Metrics, routes: frozenset[str]) -> None:
        self.app = app
        self.metrics = metrics
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        self.metrics.begin()
        sizes = [0, 0]  # request body, response body
        status = 500  # unless the app answers

        async def counting_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                sizes[0] += len(message.get("body", b""))
            return message

        async def counting_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                sizes[1] += len(message.get("body", b""))
            await send(message)

        error = None
        try:
            await self.app(scope, counting_receive, counting_send)
        except Exception as exc:
            # Answered by `internal_error` outside this layer; uvicorn logs the traceback.
            error = "InternalServerError"
            fields = {**_who(scope), "exception": type(exc).__name__}
            logs.SERVER.error("unhandled error (answered 500)", extra={"fields": fields})
            raise
        finally:
            seconds = time.perf_counter() - t0
            path = scope["path"]
            route = path if path in self.routes else "other"
            stats: CoreStats | None = scope.get(_STATS_KEY)
            if error is None and status >= 400:
                error = stats.error if stats is not None and stats.error else _phrase(status)
            self.metrics.observe(route, status, seconds, sizes[0], sizes[1], error, stats)
            if stats is not None and stats.panicked:
                fields = {**_who(scope), "status": status}
                logs.SERVER.error("rust panic caught (answered 500)", extra={"fields": fields})
            if logs.ACCESS.isEnabledFor(logging.INFO):
                fields = {
                    **_who(scope),
                    "status": status,
                    "latency_ms": round(seconds * 1000, 3),
                    "request_bytes": sizes[0],
                    "response_bytes": sizes[1],
                }
                if stats is not None and stats.kind is not None:
                    fields["kind"] = stats.kind
                    fields["tokens"] = stats.tokens
                if error is not None:
                    fields["error"] = error
                logs.ACCESS.info("request", extra={"fields": fields})


def _who(scope: Scope) -> dict[str, object]:
    """A request's method, path, request id and client, for a log line."""
    request_id = None
    for name, value in scope.get("headers") or ():
        if name == b"x-request-id":
            request_id = logs.clip(value.decode("latin-1"))
    client = scope.get("client")
    return {
        "method": scope.get("method"),
        "route": logs.clip(scope["path"]),
        "request_id": request_id,
        "client": client[0] if client else None,
    }


def _log_request(path: str, request_id: str | None, body: bytes | None, limit: int | None) -> None:
    """`--enable-log-requests`: vLLM's render server logs /tokenize and /detokenize
    calls at INFO (`Received request ...`) and every request's body at DEBUG,
    cut to `--max-log-len` characters."""
    if path in ("/tokenize", "/detokenize"):
        prefix = path.removeprefix("/")
        rid = f"{prefix}-{request_id or uuid.uuid4().hex}"
        logs.SERVER.info(f"Received request {logs.clip(rid)}: params: None, lora_request: None.")
    if logs.SERVER.isEnabledFor(logging.DEBUG) and body is not None:
        text = body.decode("utf-8", "replace")
        shown = text if limit is None else text[:limit]
        logs.SERVER.debug(f"Request {path} JSON body: {shown}")


def create_app(config: ServerConfig, core: Derenderer | None = None) -> Starlette:
    """Build the ASGI app for one model (loading it unless `core` is given)."""
    if core is None:
        core = Derenderer(config.model, **config.core_kwargs())  # type: ignore[arg-type]
    metrics = Metrics(__version__)
    # Workers of one server add up their metrics through a shared directory.
    shared = SharedMetrics(config.metrics_dir, metrics) if config.metrics_dir else None
    started = int(time.time())

    async def native(request: Request) -> Response:
        path = request.url.path
        content_type = request.headers.get("content-type")
        request_id = request.headers.get("x-request-id")
        body: bytes | None = None
        try:
            with _time_limit(config.request_timeout):
                body = await _read_body(request, config.max_request_bytes)
                status, out, stats = await _call_native(
                    core, config.request_timeout, path, body, content_type, request_id
                )
        except BodyTooLarge:
            limit = config.max_request_bytes
            return _error(
                413,
                f"request body exceeds the server limit of {limit} bytes (--max-request-bytes)",
                "Request Entity Too Large",
                "body",
            )
        except TimeoutError:
            return _timed_out(config.request_timeout, body_received=body is not None)
        request.scope[_STATS_KEY] = stats
        if config.enable_log_requests:
            _log_request(path, request_id, body, config.max_log_len)
        return Response(out, status_code=status, media_type="application/json")

    async def health(request: Request) -> Response:
        return Response(status_code=200)

    async def version(request: Request) -> Response:
        return JSONResponse({"version": __version__})

    async def models(request: Request) -> Response:
        cards = []
        for name in core.served_model_names:
            cards.append(
                {
                    "id": name,
                    "object": "model",
                    "created": started,
                    "owned_by": "vllm",
                    "root": config.model,
                    "parent": None,
                    "max_model_len": core.max_model_len,
                    "permission": [
                        {
                            "id": f"modelperm-{uuid.uuid4().hex[:16]}",
                            "object": "model_permission",
                            "created": started,
                            "allow_create_engine": False,
                            "allow_sampling": True,
                            "allow_logprobs": True,
                            "allow_search_indices": False,
                            "allow_view": True,
                            "allow_fine_tuning": False,
                            "organization": "*",
                            "group": None,
                            "is_blocking": False,
                        }
                    ],
                }
            )
        return JSONResponse({"object": "list", "data": cards})

    async def metrics_route(request: Request) -> Response:
        text = shared.render() if shared else metrics.render()
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4")

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        answer = _error(exc.status_code, str(exc.detail), _phrase(exc.status_code))
        answer.headers.update(exc.headers or {})  # a 405's Allow
        return answer

    async def internal_error(request: Request, exc: Exception) -> Response:
        # Starlette re-raises after answering, so uvicorn logs the traceback.
        return _error(500, "internal server error (a bug: please report it)", "InternalServerError")

    async def load(request: Request) -> Response:
        # vLLM counts nothing on a render server (no --enable-server-load-tracking).
        return JSONResponse({"server_load": 0})

    async def kv_event_sources(request: Request) -> Response:
        return JSONResponse({})

    async def invocations(request: Request) -> Response:
        # SageMaker's route dispatches to the generate handlers, none of which
        # a render server has.
        message = "Cannot find suitable handler for request. Expected one of: []"
        return _error(400, message, "BadRequestError")

    if config.enable_tokenizer_info_endpoint:
        info = tokenizer_info(
            Path(core.tokenizer_path),
            config.tokenizer or config.model,
            config.chat_template,
            mode=config.tokenizer_mode,
        )

        async def tokenizer_info_route(request: Request) -> Response:
            return JSONResponse(info)

    # The core names its own routes (every one a POST).
    routes = [Route(path, native, methods=["POST"]) for path in _native.native_routes()]
    routes += [
        Route("/health", health, methods=["GET"]),
        Route("/ping", health, methods=["GET", "POST"]),
        Route("/version", version, methods=["GET"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/metrics", metrics_route, methods=["GET"]),
        Route("/load", load, methods=["GET"]),
        Route("/kv_event_sources", kv_event_sources, methods=["GET"]),
        Route("/invocations", invocations, methods=["POST"]),
    ]
    if config.enable_tokenizer_info_endpoint:
        routes.append(Route("/tokenizer_info", tokenizer_info_route, methods=["GET"]))
    if not config.disable_docs:
        routes += _doc_routes(routes)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if shared is None:
            yield
            return
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(shared.run)
            yield
            tasks.cancel_scope.cancel()
        shared.dump()  # the last counts, for the workers still serving

    handlers = {HTTPException: http_error, Exception: internal_error}
    app = Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan)
    # vLLM's order: CORS innermost, then the key check, then X-Request-Id.
    app.add_middleware(
        CORSMiddleware,
        allow_origins=config.allowed_origins,
        allow_credentials=config.allow_credentials,
        allow_methods=config.allowed_methods,
        allow_headers=config.allowed_headers,
    )
    if config.api_keys:
        app.add_middleware(ApiKeyMiddleware, keys=config.api_keys)
    if config.enable_request_id_headers:
        app.add_middleware(RequestIdMiddleware)
    if config.root_path:
        app.add_middleware(RootPathMiddleware, root_path=config.root_path)
    user_middleware.add(app, config.middleware)
    # Added last, so it wraps everything (401s included).
    known = frozenset(r.path for r in routes)
    app.add_middleware(ObserveMiddleware, metrics=metrics, routes=known)
    app.state.core = core
    app.state.config = config
    return app


def _doc_routes(routes: list[Route]) -> list[Route]:
    """`/openapi.json` describing `routes`, and the pages that read it."""
    served = [(m.lower(), r.path) for r in routes for m in sorted(r.methods or ()) if m != "HEAD"]
    spec = openapi.document(served, "derender", __version__)

    def url(request: Request) -> str:
        return request.scope.get("root_path", "") + "/openapi.json"

    async def schema(request: Request) -> Response:
        return JSONResponse(spec)

    async def docs(request: Request) -> Response:
        return HTMLResponse(openapi.swagger_page(url(request), "derender"))

    async def redoc(request: Request) -> Response:
        return HTMLResponse(openapi.redoc_page(url(request), "derender"))

    return [
        Route("/openapi.json", schema, methods=["GET"]),
        Route("/docs", docs, methods=["GET"]),
        Route("/redoc", redoc, methods=["GET"]),
    ]


def _phrase(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def create_app_from_env() -> Starlette:
    """uvicorn factory used by `derender serve` (also for --workers N)."""
    config = ServerConfig.from_env()
    logs.configure(config.log_level)
    return create_app(config)


__all__ = ["create_app", "create_app_from_env"]
