"""The HTTP layer: Starlette routes that hand raw bodies to the native core.

Everything vLLM-specific about a request (validation, errors, the answer) is
decided in Rust; this module only moves bytes and adds the server routes
(`/health`, `/v1/models`, `/metrics`, ...) and API-key checks.
"""

from __future__ import annotations

import hashlib
import hmac
import time
import uuid
from contextlib import AbstractContextManager, nullcontext

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


async def _call_native(
    core: Derenderer,
    limit: float | None,
    path: str,
    body: bytes,
    content_type: str | None,
    request_id: str | None,
) -> tuple[int, bytes]:
    """`core.handle`: inline for small bodies (cheapest), on a worker thread for big
    ones (the event loop stays free) and for every body under a time limit: a
    call past it is abandoned to finish on its thread, its answer dropped."""
    if limit is None and len(body) <= _INLINE_BODY_BYTES:
        return core.handle(path, body, content_type, request_id)
    return await anyio.to_thread.run_sync(
        core.handle, path, body, content_type, request_id, abandon_on_cancel=limit is not None
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


def create_app(config: ServerConfig, core: Derenderer | None = None) -> Starlette:
    """Build the ASGI app for one model (loading it unless `core` is given)."""
    if core is None:
        core = Derenderer(config.model, **config.core_kwargs())  # type: ignore[arg-type]
    metrics = Metrics()
    started = int(time.time())

    async def native(request: Request) -> Response:
        t0 = time.perf_counter()
        path = request.url.path
        content_type = request.headers.get("content-type")
        request_id = request.headers.get("x-request-id")
        body: bytes | None = None
        try:
            with _time_limit(config.request_timeout):
                body = await _read_body(request, config.max_request_bytes)
                status, out = await _call_native(
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
            answer = _timed_out(config.request_timeout, body_received=body is not None)
            metrics.observe(path, answer.status_code, time.perf_counter() - t0, len(body or b""))
            return answer
        metrics.observe(path, status, time.perf_counter() - t0, len(body))
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
    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error})
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
