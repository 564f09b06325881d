"""`/inference/v1/generate` as `vllm serve --tokens-only` answers it."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from derender._native import Derenderer
from derender.engine.scenarios import Scenarios


def _error(status: int, message: str, param: str | None = None) -> JSONResponse:
    body = {
        "error": {"message": message, "type": "BadRequestError", "param": param, "code": status}
    }
    return JSONResponse(body, status_code=status)


def _usage(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "total_tokens": prompt + completion,
        "completion_tokens": completion,
        "prompt_tokens_details": None,
        "completion_tokens_details": None,
    }


def _logprobs(ids: list[int], k: int) -> dict[str, Any]:
    """Deterministic integer-id logprobs: the sampled token first, then k others."""
    content = []
    for i, tid in enumerate(ids):
        top = [{"token_id": tid, "logprob": -0.05 * (i % 7), "rank": 1}]
        top += [
            {"token_id": (tid + j) % 100000, "logprob": -1.0 - j, "rank": j + 1}
            for j in range(1, k + 1)
        ]
        content.append(
            {"token_id": tid, "logprob": -0.05 * (i % 7), "rank": 1, "top_logprobs": top}
        )
    return {"content": content}


class Engine:
    def __init__(
        self, core: Derenderer, scenarios: Scenarios, delay_s: float, per_event: int
    ) -> None:
        self.core = core
        self.scenarios = scenarios
        self.delay_s = delay_s
        self.per_event = max(1, per_event)

    def outputs(self, req: dict[str, Any]) -> list[tuple[list[int], str]]:
        """Token ids and finish reason per choice."""
        prompt_ids: list[int] = req["token_ids"]
        sp = req.get("sampling_params") or {}
        n = int(sp.get("n", 1))
        max_tokens = int(sp.get("max_tokens", 16))
        prompt_text = self.core.decode(prompt_ids)
        eos = self.core.eos_token_id
        out = []
        for index in range(n):
            ids = self.core.encode(self.scenarios.output(prompt_text, req, index))
            if eos is not None and not sp.get("ignore_eos"):
                ids.append(eos)
            finish = "stop"
            if len(ids) > max_tokens:
                ids, finish = ids[:max_tokens], "length"
            out.append((ids, finish))
        return out

    def response(self, req: dict[str, Any]) -> dict[str, Any]:
        sp = req.get("sampling_params") or {}
        k = sp.get("logprobs")
        choices, total = [], 0
        for index, (ids, finish) in enumerate(self.outputs(req)):
            total += len(ids)
            choices.append(
                {
                    "index": index,
                    "finish_reason": finish,
                    "stop_reason": None,
                    "token_ids": ids,
                    "routed_experts": None,
                    "sampling_mask": None,
                    "weight_versions": None,
                    "logprobs": _logprobs(ids, int(k)) if k is not None else None,
                }
            )
        prompt = len(req["token_ids"])
        return {
            "request_id": req.get("request_id") or uuid.uuid4().hex[:16],
            "model": req.get("model"),
            "created": int(time.time()),
            "usage": _usage(prompt, total),
            "prompt_logprobs": None,
            "prompt_token_id_logprobs": None,
            "prompt_token_ids": req["token_ids"] if req.get("return_token_ids") else None,
            "mm_placeholders": None,
            "metrics": None,
            "kv_transfer_params": None,
            "ec_transfer_params": None,
            "output_mode": "tokens",
            "choices": choices,
        }

    async def stream(self, req: dict[str, Any]) -> AsyncIterator[bytes]:
        sp = req.get("sampling_params") or {}
        options = req.get("stream_options") or {}
        k = sp.get("logprobs")
        request_id = req.get("request_id") or uuid.uuid4().hex[:16]
        prompt = len(req["token_ids"])
        outputs = self.outputs(req)
        sent = [0] * len(outputs)
        first = True
        # Interleave the choices event by event, as the engine does for n > 1.
        while any(s < len(ids) for s, (ids, _) in zip(sent, outputs, strict=True)):
            for index, (ids, finish) in enumerate(outputs):
                if sent[index] >= len(ids):
                    continue
                chunk = ids[sent[index] : sent[index] + self.per_event]
                sent[index] += len(chunk)
                done = sent[index] >= len(ids)
                event: dict[str, Any] = {"request_id": request_id}
                event["usage"] = (
                    _usage(prompt, sent[index]) if options.get("continuous_usage_stats") else None
                )
                if first and req.get("return_token_ids"):
                    event["prompt_token_ids"] = req["token_ids"]
                first = False
                event["output_mode"] = "tokens"
                event["choices"] = [
                    {
                        "index": index,
                        "finish_reason": finish if done else None,
                        "stop_reason": None,
                        "token_ids": chunk,
                        "routed_experts": None,
                        "sampling_mask": None,
                        "weight_versions": None,
                        "logprobs": _logprobs(chunk, int(k)) if k is not None else None,
                    }
                ]
                yield f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode()
                if self.delay_s:
                    await asyncio.sleep(self.delay_s)
        if options.get("include_usage"):
            total = sum(len(ids) for ids, _ in outputs)
            usage = {
                "prompt_tokens": prompt,
                "total_tokens": prompt + total,
                "completion_tokens": total,
            }
            final = {
                "request_id": request_id,
                "usage": usage,
                "output_mode": "tokens",
                "choices": [],
            }
            yield f"data: {json.dumps(final)}\n\n".encode()
        yield b"data: [DONE]\n\n"


def create_engine_app(
    core: Derenderer,
    scenarios: Scenarios | None = None,
    delay_ms: float = 0.0,
    tokens_per_event: int = 1,
) -> Starlette:
    engine = Engine(core, scenarios or Scenarios(), delay_ms / 1000.0, tokens_per_event)

    async def generate(request: Request) -> Response:
        try:
            req = json.loads(await request.body())
        except ValueError:
            return _error(400, "request body is not valid JSON", "body")
        if not isinstance(req, dict):
            return _error(400, "request body must be a JSON object", "body")
        ids = req.get("token_ids")
        if (
            not isinstance(ids, list)
            or not ids
            or not all(isinstance(i, int) and i >= 0 for i in ids)
        ):
            return _error(
                400, "token_ids must be a non-empty list of non-negative integers", "token_ids"
            )
        if not isinstance(req.get("sampling_params") or {}, dict):
            return _error(400, "sampling_params must be an object", "sampling_params")
        if req.get("stream"):
            return StreamingResponse(engine.stream(req), media_type="text/event-stream")
        return JSONResponse(engine.response(req))

    async def health(request: Request) -> Response:
        return Response(status_code=200)

    return Starlette(
        routes=[
            Route("/inference/v1/generate", generate, methods=["POST"]),
            Route("/health", health, methods=["GET"]),
        ]
    )
