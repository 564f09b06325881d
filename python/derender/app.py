"""The HTTP layer: Starlette routes that hand raw bodies to the native core.

Everything vLLM-specific about a request (validation, errors, the answer) is
decided in Rust; this module only moves bytes and adds the server routes
(`/health`, `/v1/models`, `/metrics`, ...) and API-key checks.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import time
import uuid

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from derender import __version__
from derender._native import Derenderer
from derender.config import ServerConfig
from derender.metrics import Metrics

# Bodies larger than this are derendered on a worker thread so a big batch
# call does not stall the event loop; small ones run inline (cheaper).
_INLINE_BODY_BYTES = 64 * 1024
_GUARDED_PREFIXES = ("/v1", "/v2", "/inference", "/cohere")
# Where uvicorn logs an application's errors.
log = logging.getLogger("uvicorn.error")


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


def create_app(config: ServerConfig, core: Derenderer | None = None) -> Starlette:
    """Build the ASGI app for one model (loading it unless `core` is given)."""
    if core is None:
        core = Derenderer(config.model, **config.core_kwargs())  # type: ignore[arg-type]
    metrics = Metrics()
    started = int(time.time())

    async def native(request: Request) -> Response:
        t0 = time.perf_counter()
        path = request.url.path
        try:
            body = await _read_body(request, config.max_request_bytes)
        except BodyTooLarge:
            limit = config.max_request_bytes
            return _error(
                413,
                f"request body exceeds the server limit of {limit} bytes (--max-request-bytes)",
                "Request Entity Too Large",
                "body",
            )
        content_type = request.headers.get("content-type")
        request_id = request.headers.get("x-request-id")
        if len(body) > _INLINE_BODY_BYTES:
            status, out = await anyio.to_thread.run_sync(
                core.handle, path, body, content_type, request_id
            )
        else:
            status, out = core.handle(path, body, content_type, request_id)
        metrics.observe(path, status, time.perf_counter() - t0, len(body))
        if status >= 500:
            # The core caught a panic (a bug): say which request met it.
            reply = out[:2000].decode("utf-8", "replace")
            log.error("%s answered %d (x-request-id %s): %s", path, status, request_id, reply)
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
        return PlainTextResponse(metrics.render(), media_type="text/plain; version=0.0.4")

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return _error(exc.status_code, str(exc.detail), _phrase(exc.status_code))

    async def internal_error(request: Request, exc: Exception) -> Response:
        # Starlette re-raises after answering, so uvicorn logs the traceback.
        return _error(500, "internal server error (a bug: please report it)", "InternalServerError")

    routes = [
        Route("/v1/chat/completions/derender", native, methods=["POST"]),
        Route("/v1/completions/derender", native, methods=["POST"]),
        Route("/v1/chat/completions/render", native, methods=["POST"]),
        Route("/v1/completions/render", native, methods=["POST"]),
        Route("/tokenize", native, methods=["POST"]),
        Route("/detokenize", native, methods=["POST"]),
        Route("/health", health, methods=["GET"]),
        Route("/ping", health, methods=["GET", "POST"]),
        Route("/version", version, methods=["GET"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/metrics", metrics_route, methods=["GET"]),
    ]
    handlers = {HTTPException: http_error, Exception: internal_error}
    app = Starlette(routes=routes, exception_handlers=handlers)
    if config.api_keys:
        app.add_middleware(ApiKeyMiddleware, keys=config.api_keys)
    app.state.core = core
    app.state.config = config
    return app


def _phrase(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def create_app_from_env() -> Starlette:
    """uvicorn factory used by `derender serve` (also for --workers N)."""
    return create_app(ServerConfig.from_env())


__all__ = ["create_app", "create_app_from_env"]
