"""The API's self-description: `/openapi.json` and the `/docs` and `/redoc`
pages vLLM's FastAPI app serves. The operations carry vLLM's summaries and
operation ids; bodies are described as JSON objects (derender checks them in
the core, not with pydantic models), see docs/divergences.md."""

from __future__ import annotations

from typing import Any

# (method, path) -> (summary, the handler's name in vLLM, takes a JSON body).
OPERATIONS: dict[tuple[str, str], tuple[str, str, bool]] = {
    ("post", "/detokenize"): ("Detokenize", "detokenize", True),
    ("get", "/health"): ("Health", "health", False),
    ("post", "/invocations"): ("Decorated Func", "decorated_func", False),
    ("get", "/kv_event_sources"): ("Kv Event Sources", "kv_event_sources", False),
    ("get", "/load"): ("Get Server Load Metrics", "get_server_load_metrics", False),
    ("get", "/metrics"): ("Metrics", "metrics", False),
    ("get", "/ping"): ("Ping", "ping", False),
    ("post", "/ping"): ("Ping", "ping", False),
    ("post", "/tokenize"): ("Tokenize", "tokenize", True),
    ("post", "/v1/chat/completions/derender"): (
        "Derender Chat Completion",
        "derender_chat_completion",
        True,
    ),
    ("post", "/v1/chat/completions/render"): (
        "Render Chat Completion",
        "render_chat_completion",
        True,
    ),
    ("post", "/v1/completions/derender"): ("Derender Completion", "derender_completion", True),
    ("post", "/v1/completions/render"): ("Render Completion", "render_completion", True),
    ("post", "/v1/messages/render"): ("Render Messages", "render_messages", True),
    ("post", "/v1/decisions"): ("Create Decision", "create_decision", True),
    ("get", "/v1/models"): ("Show Available Models", "show_available_models", False),
    ("post", "/v1/responses/render"): ("Render Responses", "render_responses", True),
    ("post", "/v1/systemone"): (
        "Create Structured Decision",
        "create_structured_decision",
        True,
    ),
    ("get", "/version"): ("Show Version", "show_version", False),
}

_ANSWER = {"description": "Successful Response", "content": {"application/json": {"schema": {}}}}


def operation_id(name: str, path: str, method: str) -> str:
    """FastAPI's generated id: the handler, the path's words, the method."""
    words = "".join(c if c.isalnum() else "_" for c in path)
    return f"{name}{words}_{method}"


def document(served: list[tuple[str, str]], title: str, version: str) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the `(method, path)` operations served."""
    paths: dict[str, dict[str, Any]] = {}
    for method, path in sorted(served, key=lambda mp: (mp[1], mp[0])):
        summary, name, has_body = OPERATIONS.get(
            (method, path), (path.strip("/").replace("_", " ").title(), "handler", False)
        )
        op: dict[str, Any] = {
            "summary": summary,
            "operationId": operation_id(name, path, method),
            "responses": {"200": _ANSWER},
        }
        if has_body:
            body = {"application/json": {"schema": {"type": "object"}}}
            op["requestBody"] = {"content": body, "required": True}
        paths.setdefault(path, {})[method] = op
    return {"openapi": "3.1.0", "info": {"title": title, "version": version}, "paths": paths}


def swagger_page(openapi_url: str, title: str) -> str:
    """The Swagger UI page (its script from the jsDelivr CDN, as FastAPI's)."""
    cdn = "https://cdn.jsdelivr.net/npm/swagger-ui-dist@5"
    return f"""<!DOCTYPE html>
<html>
<head>
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link type="text/css" rel="stylesheet" href="{cdn}/swagger-ui.css">
<title>{title} - Swagger UI</title>
</head>
<body>
<div id="swagger-ui"></div>
<script src="{cdn}/swagger-ui-bundle.js"></script>
<script>
SwaggerUIBundle({{url: '{openapi_url}', dom_id: '#swagger-ui', deepLinking: true}})
</script>
</body>
</html>
"""


def redoc_page(openapi_url: str, title: str) -> str:
    """The ReDoc page (its script from the jsDelivr CDN, as FastAPI's)."""
    return f"""<!DOCTYPE html>
<html>
<head>
<title>{title} - ReDoc</title>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body {{ margin: 0; padding: 0; }}</style>
</head>
<body>
<redoc spec-url="{openapi_url}"></redoc>
<script src="https://cdn.jsdelivr.net/npm/redoc@2/bundles/redoc.standalone.js"></script>
</body>
</html>
"""
