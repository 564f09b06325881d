//! The one entry point: (route, content type, body bytes) → (status, body
//! bytes). Framework-level checks happen here in vLLM's order, so the HTTP
//! layer stays a thin pass-through.

use serde::Serialize;
use serde_json::Value;

use crate::error::ApiError;
use crate::model::Model;
use crate::pycompat::pydantic::{Errors, Loc};
use crate::served::{Core, Settings};
use crate::stats::{json_len, CallKind, Stats};
use crate::stream::Outgoing;
use crate::template::TemplateError;
use crate::wire::lazy_body::split_prompt_ids;
use crate::wire::request::{parse_chat, parse_completion, ChatBody, CompletionBody, GenResponse, StreamRequest};

/// Routes the native core answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    ChatDerender,
    CompletionDerender,
    ChatRender,
    CompletionRender,
    ResponsesRender,
    MessagesRender,
    Tokenize,
    Detokenize,
    Decisions,
    SystemOne,
}

impl Route {
    /// Every native route, in the order the HTTP layer mounts them.
    pub const ALL: [Route; 10] = [
        Route::ChatDerender,
        Route::CompletionDerender,
        Route::ChatRender,
        Route::CompletionRender,
        Route::ResponsesRender,
        Route::MessagesRender,
        Route::Tokenize,
        Route::Detokenize,
        Route::Decisions,
        Route::SystemOne,
    ];

    /// The route's HTTP path (every one is a `POST`).
    pub fn path(self) -> &'static str {
        match self {
            Route::ChatDerender => "/v1/chat/completions/derender",
            Route::CompletionDerender => "/v1/completions/derender",
            Route::ChatRender => "/v1/chat/completions/render",
            Route::CompletionRender => "/v1/completions/render",
            Route::ResponsesRender => "/v1/responses/render",
            Route::MessagesRender => "/v1/messages/render",
            Route::Tokenize => "/tokenize",
            Route::Detokenize => "/detokenize",
            Route::Decisions => "/v1/decisions",
            Route::SystemOne => "/v1/systemone",
        }
    }

    pub fn from_path(path: &str) -> Option<Route> {
        Route::ALL.into_iter().find(|r| r.path() == path)
    }
}

/// A finished HTTP answer, with what the call did (for metrics).
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
    pub stats: Stats,
}

impl From<ApiError> for Reply {
    fn from(e: ApiError) -> Reply {
        let stats = Stats { error: Some(e.kind), ..Stats::default() };
        Reply { status: e.status, body: e.to_json(), stats }
    }
}

/// The service for one model: dispatches each route to the render or the
/// derender side of the shared `Core`.
pub struct Derenderer {
    core: Core,
}

impl Derenderer {
    /// Build the service; fails when the chat template does not compile.
    pub fn new(model: Model, settings: Settings) -> Result<Self, TemplateError> {
        Ok(Derenderer { core: Core::new(model, settings)? })
    }

    /// The served model and settings.
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// Handle one request. Never panics past this point: a panic inside is
    /// answered with a 500 envelope instead of taking the worker down.
    /// `request_id` is the `X-Request-Id` header (render uses it).
    pub fn handle(&self, route: Route, content_type: Option<&str>, request_id: Option<&str>, body: &[u8]) -> Reply {
        let mut stats = Stats::default();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.handle_inner(route, content_type, request_id, body, &mut stats)
        }));
        let (status, body) = match result {
            Ok(Ok(ok)) => ok,
            Ok(Err(e)) => {
                stats.error = Some(e.kind);
                (e.status, e.to_json())
            }
            Err(_) => {
                let e = ApiError::internal("internal error while derendering (a bug: please report it)");
                stats.error = Some(e.kind);
                stats.panicked = true;
                (e.status, e.to_json())
            }
        };
        if status != 200 {
            stats.tokens = 0;
        }
        Reply { status, body, stats }
    }

    fn handle_inner(
        &self,
        route: Route,
        content_type: Option<&str>,
        request_id: Option<&str>,
        body: &[u8],
        stats: &mut Stats,
    ) -> Result<Answer, ApiError> {
        check_media_type(content_type)?;
        if let Some(reply) = self.stream_with_plain_prompt(route, body, stats) {
            return reply;
        }
        let value = parse_json(body)?;
        match route {
            Route::ChatDerender => match parse_chat(value.as_ref())? {
                ChatBody::Batch(req) => {
                    stats.kind = Some(CallKind::Batch);
                    stats.tokens = output_ids(std::slice::from_ref(&req.generate_response));
                    ok_json(&self.core.chat_batch(&req, stats)?)
                }
                ChatBody::Stream(req) => self.chat_stream_reply(&req, value.as_ref(), stats),
            },
            Route::CompletionDerender => match parse_completion(value.as_ref())? {
                CompletionBody::Batch(req) => {
                    stats.kind = Some(CallKind::Batch);
                    stats.tokens = output_ids(&req.generate_responses);
                    ok_json(&self.core.completion_batch(&req)?)
                }
                CompletionBody::Stream(req) => self.completion_stream_reply(&req, value.as_ref(), stats),
            },
            Route::ChatRender => ok_json(&self.core.chat_render(value.as_ref(), request_id)?),
            Route::CompletionRender => ok_json(&self.core.completion_render(value.as_ref(), request_id)?),
            Route::ResponsesRender => ok_json(&self.core.responses_render(value.as_ref())?),
            Route::MessagesRender => ok_json(&self.core.messages_render(value.as_ref(), request_id)?),
            Route::Tokenize => ok_json(&self.core.tokenize(value.as_ref())?),
            Route::Detokenize => ok_json(&self.core.detokenize(value.as_ref())?),
            Route::Decisions => Err(crate::decisions::decisions(value.as_ref())),
            Route::SystemOne => Err(crate::decisions::systemone(value.as_ref())),
        }
    }
}

/// `(status, body)` of an answer that worked out.
type Answer = (u16, Vec<u8>);

/// Output ids a derender call decodes (a stream chunk's are its delta).
fn output_ids(responses: &[GenResponse]) -> usize {
    responses.iter().flat_map(|r| &r.choices).map(|c| c.token_ids.as_ref().map_or(0, Vec::len)).sum()
}

impl Derenderer {
    /// The fast lane of a stream chunk whose `prompt_token_ids` is a plain
    /// id list (`wire::lazy_body`); `None` sends it down the ordinary path
    /// (which also gives a refused body its exact error).
    fn stream_with_plain_prompt(
        &self,
        route: Route,
        body: &[u8],
        stats: &mut Stats,
    ) -> Option<Result<Answer, ApiError>> {
        if !matches!(route, Route::ChatDerender | Route::CompletionDerender) {
            return None;
        }
        let (value, ids) = split_prompt_ids(body)?;
        if route == Route::ChatDerender {
            let Ok(ChatBody::Stream(mut req)) = parse_chat(Some(&value)) else { return None };
            req.prompt_token_ids = Some(ids);
            return Some(self.chat_stream_reply(&req, Some(&value), stats));
        }
        let Ok(CompletionBody::Stream(mut req)) = parse_completion(Some(&value)) else { return None };
        req.prompt_token_ids = Some(ids);
        Some(self.completion_stream_reply(&req, Some(&value), stats))
    }

    fn chat_stream_reply(
        &self,
        req: &StreamRequest,
        body: Option<&Value>,
        stats: &mut Stats,
    ) -> Result<Answer, ApiError> {
        measure_stream(req, body, stats);
        let (chunk, state) = self.core.chat_stream(req, stats)?;
        stream_json(&chunk, &state, stats)
    }

    fn completion_stream_reply(
        &self,
        req: &StreamRequest,
        body: Option<&Value>,
        stats: &mut Stats,
    ) -> Result<Answer, ApiError> {
        measure_stream(req, body, stats);
        let (chunk, state) = self.core.completion_stream(req)?;
        stream_json(&chunk, &state, stats)
    }
}

/// A stream call's kind, delta size and incoming state size.
fn measure_stream(req: &StreamRequest, body: Option<&Value>, stats: &mut Stats) {
    stats.kind = Some(CallKind::Stream);
    stats.tokens = output_ids(std::slice::from_ref(&req.generate_chunk));
    let state = body.and_then(|b| b.get("stream_state")).filter(|s| !s.is_null());
    stats.state_bytes_in = state.map(json_len);
}

/// `{"chunk": ..., "stream_state": ...}`, written field by field (as serde
/// writes the struct) to see how many bytes the state takes.
fn stream_json<C: Serialize>(chunk: &C, state: &Outgoing, stats: &mut Stats) -> Result<Answer, ApiError> {
    let encode = |e: serde_json::Error| ApiError::internal(format!("could not encode the response: {e}"));
    let mut body = b"{\"chunk\":".to_vec();
    serde_json::to_writer(&mut body, chunk).map_err(encode)?;
    body.extend_from_slice(b",\"stream_state\":");
    let start = body.len();
    serde_json::to_writer(&mut body, state).map_err(encode)?;
    stats.state_bytes_out = Some(body.len() - start);
    body.push(b'}');
    Ok((200, body))
}

fn ok_json<T: Serialize>(value: &T) -> Result<Answer, ApiError> {
    let body =
        serde_json::to_vec(value).map_err(|e| ApiError::internal(format!("could not encode the response: {e}")))?;
    Ok((200, body))
}

/// `validate_json_request`: the media type must be exactly `application/json`.
pub fn check_media_type(content_type: Option<&str>) -> Result<(), ApiError> {
    let ct = content_type.unwrap_or("").to_ascii_lowercase();
    let media = ct.split(';').next().unwrap_or("");
    if media == "application/json" {
        return Ok(());
    }
    Err(ApiError::validation("1 validation error:\n  Unsupported Media Type: Only 'application/json' is allowed", None))
}

/// Decode the body; `None` for an empty body (FastAPI's missing body).
pub fn parse_json(body: &[u8]) -> Result<Option<Value>, ApiError> {
    if body.is_empty() {
        return Ok(None);
    }
    serde_json::from_slice(body).map(Some).map_err(|e| json_error(body, &e))
}

/// A JSON decode error in the shape FastAPI reports Python's `json` errors.
fn json_error(body: &[u8], e: &serde_json::Error) -> ApiError {
    let text = String::from_utf8_lossy(body);
    let (msg, pos) = crate::pycompat::json::decode_error(&text, e);
    let mut errs = Errors::default();
    let root = Loc::root("body");
    errs.push(
        "json_invalid",
        &root,
        "JSON decode error",
        Some(&Value::Object(Default::default())),
        Some(format!("{{'error': {}}}", crate::pycompat::repr::repr_str(msg))),
    );
    let mut err = errs.into_api_error();
    // The location carries the offset: `body.<pos>`.
    err.message = err.message.replacen("'loc': 'body'", &format!("'loc': 'body.{pos}'"), 1);
    err.param = Some(format!("body.{pos}"));
    err
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::request::StreamState;
    use crate::wire::response::StreamResponse;

    #[test]
    fn stream_json_writes_what_serde_writes_and_sizes_the_state() {
        let chunk = serde_json::json!({"id": "r", "choices": [{"delta": {"content": "é\"x"}}]});
        let state = Outgoing::Vllm(StreamState { prev_tokens: vec!["a".into()], read_offset: 1, ..Default::default() });
        let mut stats = Stats::default();
        let (status, body) = stream_json(&chunk, &state, &mut stats).expect("encodes");
        assert_eq!(status, 200);
        let expected = serde_json::to_vec(&StreamResponse { chunk: &chunk, stream_state: &state }).expect("encodes");
        assert_eq!(body, expected);
        assert_eq!(stats.state_bytes_out, Some(serde_json::to_vec(&state).expect("encodes").len()));
    }
}
