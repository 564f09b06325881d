//! Derender request bodies: parsed from JSON and validated in one pass, with
//! pydantic-style errors (field order, lax coercions) so bad input gets the
//! 400 vLLM would answer.

use serde_json::{Map, Value};

use super::message_union;
use crate::error::ApiError;
use crate::pycompat::pydantic::{read, Errors, Loc};
use crate::structured::checks as structured;

pub use crate::logprobs::{Candidate, GenLogprobs, LogprobEntry};
pub use crate::stream::StreamState;

pub type Obj = Map<String, Value>;

#[derive(Debug, Clone, PartialEq)]
pub enum StopReason {
    Int(i64),
    Str(String),
}

#[derive(Debug, Clone)]
pub struct GenChoice {
    pub index: i64,
    pub finish_reason: Option<String>,
    pub stop_reason: Option<StopReason>,
    pub token_ids: Option<Vec<i64>>,
    pub logprobs: Option<GenLogprobs>,
}

#[derive(Debug, Clone, Default)]
pub struct GenUsage {
    pub prompt_tokens: i64,
    pub completion_tokens: Option<i64>,
}

/// A `GenerateTokensResponse` or one `GenerateTokensStreamResponse` chunk.
#[derive(Debug, Clone)]
pub struct GenResponse {
    pub request_id: String,
    pub usage: Option<GenUsage>,
    pub prompt_logprobs: Option<Value>,
    pub prompt_token_ids: Option<Vec<i64>>,
    pub metrics: Option<Value>,
    pub kv_transfer_params: Option<Value>,
    pub choices: Vec<GenChoice>,
}

/// What derender reads from `chat_request` / `completion_request`.
#[derive(Debug, Clone, Default)]
pub struct OutputOptions {
    /// `stop` normalised to a list of non-empty strings.
    pub stop: Vec<String>,
    /// Python truthiness of the raw `stop` (streams reject it).
    pub stop_given: bool,
    pub stop_token_ids: Vec<i64>,
    pub ignore_eos: bool,
    pub skip_special_tokens: Option<bool>,
    pub include_stop_str_in_output: bool,
    pub min_tokens: i64,
    /// Chat: `logprobs` (bool). Completions: unused.
    pub logprobs_flag: bool,
    /// Chat: `top_logprobs`. Completions: `logprobs` (int).
    pub top_logprobs: Option<i64>,
    pub logprob_token_ids: bool,
    pub return_token_ids: bool,
    /// The whole request object, for the parser layer.
    pub raw: Obj,
}

#[derive(Debug, Clone)]
pub struct ChatBatchRequest {
    pub model: Option<String>,
    pub generate_response: GenResponse,
    pub prompt_tokens: Option<i64>,
    pub prompt_token_ids: Option<Vec<i64>>,
    pub chat_request: Option<OutputOptions>,
}

#[derive(Debug, Clone)]
pub struct StreamRequest {
    pub model: Option<String>,
    pub generate_chunk: GenResponse,
    pub stream_state: Option<crate::stream::Incoming>,
    pub prompt_tokens: Option<i64>,
    pub prompt_token_ids: Option<Vec<i64>>,
    /// `chat_request` or `completion_request`.
    pub request: Option<OutputOptions>,
}

#[derive(Debug, Clone)]
pub struct CompletionBatchRequest {
    pub model: Option<String>,
    pub generate_responses: Vec<GenResponse>,
    pub prompt_tokens: Option<Vec<i64>>,
    pub prompt_token_ids: Option<Vec<Option<Vec<i64>>>>,
    pub completion_request: Option<OutputOptions>,
}

pub enum ChatBody {
    Batch(Box<ChatBatchRequest>),
    Stream(Box<StreamRequest>),
}

pub enum CompletionBody {
    Batch(Box<CompletionBatchRequest>),
    Stream(Box<StreamRequest>),
}

/// Which OpenAI request a `chat_request` / `completion_request` (or a render
/// body) is.
#[derive(Clone, Copy, PartialEq)]
pub enum Api {
    Chat,
    Completion,
}

impl Api {
    fn members(self) -> (&'static str, &'static str) {
        match self {
            Api::Chat => ("DerenderChatRequest", "DerenderChatStreamRequest"),
            Api::Completion => ("DerenderCompletionRequest", "DerenderCompletionStreamRequest"),
        }
    }
    fn request_field(self) -> &'static str {
        match self {
            Api::Chat => "chat_request",
            Api::Completion => "completion_request",
        }
    }
}

/// Parse a `/v1/chat/completions/derender` body (`None` = empty body).
pub fn parse_chat(body: Option<&Value>) -> Result<ChatBody, ApiError> {
    match parse_union(body, Api::Chat)? {
        Parsed::Batch(b) => Ok(ChatBody::Batch(Box::new(ChatBatchRequest {
            model: b.model,
            generate_response: b.responses.into_iter().next().ok_or_else(|| ApiError::internal("missing response"))?,
            prompt_tokens: b.prompt_tokens.and_then(|p| p.into_iter().next()),
            prompt_token_ids: b.prompt_token_ids.and_then(|p| p.into_iter().next()).flatten(),
            chat_request: b.request,
        }))),
        Parsed::Stream(s) => Ok(ChatBody::Stream(s)),
    }
}

/// Parse a `/v1/completions/derender` body (`None` = empty body).
pub fn parse_completion(body: Option<&Value>) -> Result<CompletionBody, ApiError> {
    match parse_union(body, Api::Completion)? {
        Parsed::Batch(b) => Ok(CompletionBody::Batch(Box::new(CompletionBatchRequest {
            model: b.model,
            generate_responses: b.responses,
            prompt_tokens: b.prompt_tokens,
            prompt_token_ids: b.prompt_token_ids,
            completion_request: b.request,
        }))),
        Parsed::Stream(s) => Ok(CompletionBody::Stream(s)),
    }
}

struct BatchParts {
    model: Option<String>,
    responses: Vec<GenResponse>,
    prompt_tokens: Option<Vec<i64>>,
    prompt_token_ids: Option<Vec<Option<Vec<i64>>>>,
    request: Option<OutputOptions>,
}

enum Parsed {
    Batch(Box<BatchParts>),
    Stream(Box<StreamRequest>),
}

fn parse_union(body: Option<&Value>, api: Api) -> Result<Parsed, ApiError> {
    let body = match body {
        None => {
            let mut errs = Errors::default();
            errs.push("missing", &Loc::root("body"), "Field required", None, None);
            return Err(errs.into_api_error());
        }
        Some(b) => b,
    };
    let (batch_name, stream_name) = api.members();
    let root = Loc::root("body");
    let batch_loc = root.field(batch_name);
    let stream_loc = root.field(stream_name);
    let Some(obj) = body.as_object() else {
        let mut errs = Errors::default();
        for loc in [&batch_loc, &stream_loc] {
            errs.push(
                "model_attributes_type",
                loc,
                "Input should be a valid dictionary or object to extract fields from",
                Some(body),
                None,
            );
        }
        return Err(errs.into_api_error());
    };
    // The request models' "before" validators raise outside pydantic's
    // error collection, so they win over every field error.
    if let Some(Value::Object(req)) = obj.get(api.request_field()) {
        request_prechecks(req, api)?;
    }
    let wants_stream = obj.get("stream") == Some(&Value::Bool(true));
    let mut errs = Errors::default();
    if wants_stream {
        if let Some(s) = stream_member(obj, api, &stream_loc, &mut errs) {
            return Ok(Parsed::Stream(Box::new(s)));
        }
    } else if let Some(b) = batch_member(obj, api, &batch_loc, &mut errs) {
        return Ok(Parsed::Batch(Box::new(b)));
    }
    // Both members failed: report them in declaration order, as pydantic does.
    let mut all = Errors::default();
    batch_member(obj, api, &batch_loc, &mut all);
    stream_member(obj, api, &stream_loc, &mut all);
    Err(all.into_api_error())
}

fn batch_member(obj: &Obj, api: Api, loc: &Loc, errs: &mut Errors) -> Option<BatchParts> {
    let before = errs.list.len();
    if let Some(v) = obj.get("stream") {
        read::literal_bool(v, false, &loc.field("stream"), errs);
    }
    let model = opt_string(obj, "model", loc, errs);
    let mut responses = Vec::new();
    let mut prompt_tokens = None;
    let mut prompt_token_ids = None;
    match api {
        Api::Chat => {
            let l = loc.field("generate_response");
            match obj.get("generate_response") {
                None => errs.missing(&l, &Value::Object(obj.clone())),
                Some(v) => {
                    if let Some(r) = gen_response(v, false, &l, errs) {
                        responses.push(r);
                    }
                }
            }
            if let Some(v) = read::opt(obj, "prompt_tokens") {
                prompt_tokens = read::int(v, &loc.field("prompt_tokens"), errs).map(|p| vec![p]);
            }
            if let Some(v) = read::opt(obj, "prompt_token_ids") {
                prompt_token_ids =
                    read::int_list(v, Some(0), &loc.field("prompt_token_ids"), errs).map(|p| vec![Some(p)]);
            }
        }
        Api::Completion => {
            let l = loc.field("generate_responses");
            match obj.get("generate_responses") {
                None => errs.missing(&l, &Value::Object(obj.clone())),
                Some(v) => {
                    if let Some(items) = read::list(v, &l, errs) {
                        for (i, item) in items.iter().enumerate() {
                            if let Some(r) = gen_response(item, false, &l.index(i), errs) {
                                responses.push(r);
                            }
                        }
                    }
                }
            }
            if let Some(v) = read::opt(obj, "prompt_tokens") {
                prompt_tokens = read::int_list(v, None, &loc.field("prompt_tokens"), errs);
            }
            if let Some(v) = read::opt(obj, "prompt_token_ids") {
                let l = loc.field("prompt_token_ids");
                if let Some(items) = read::list(v, &l, errs) {
                    let mut out = Vec::with_capacity(items.len());
                    for (i, item) in items.iter().enumerate() {
                        if item.is_null() {
                            out.push(None);
                        } else {
                            out.push(read::int_list(item, Some(0), &l.index(i), errs));
                        }
                    }
                    prompt_token_ids = Some(out);
                }
            }
        }
    }
    let request = output_options(obj, api, loc, errs);
    if errs.list.len() != before {
        return None;
    }
    if api == Api::Completion {
        let n = responses.len();
        let problem = if let Some(p) = prompt_tokens.as_ref().filter(|p| p.len() != n) {
            Some(format!("prompt_tokens length ({}) must equal generate_responses length ({n})", p.len()))
        } else {
            prompt_token_ids
                .as_ref()
                .filter(|p| p.len() != n)
                .map(|p| format!("prompt_token_ids length ({}) must equal generate_responses length ({n})", p.len()))
        };
        if let Some(message) = problem {
            errs.value_error(&Loc::root("body"), &message, Some(&Value::Object(obj.clone())));
            return None;
        }
    }
    Some(BatchParts { model, responses, prompt_tokens, prompt_token_ids, request })
}

fn stream_member(obj: &Obj, api: Api, loc: &Loc, errs: &mut Errors) -> Option<StreamRequest> {
    let before = errs.list.len();
    match obj.get("stream") {
        None => errs.missing(&loc.field("stream"), &Value::Object(obj.clone())),
        Some(v) => {
            read::literal_bool(v, true, &loc.field("stream"), errs);
        }
    }
    let model = opt_string(obj, "model", loc, errs);
    let l = loc.field("generate_chunk");
    let generate_chunk = match obj.get("generate_chunk") {
        None => {
            errs.missing(&l, &Value::Object(obj.clone()));
            None
        }
        Some(v) => gen_response(v, true, &l, errs),
    };
    let stream_state = read::opt(obj, "stream_state").and_then(|v| stream_state(v, &loc.field("stream_state"), errs));
    let prompt_tokens = read::opt(obj, "prompt_tokens").and_then(|v| read::int(v, &loc.field("prompt_tokens"), errs));
    let prompt_token_ids = read::opt(obj, "prompt_token_ids")
        .and_then(|v| read::int_list(v, Some(0), &loc.field("prompt_token_ids"), errs));
    let request = output_options(obj, api, loc, errs);
    if errs.list.len() != before {
        return None;
    }
    Some(StreamRequest {
        model,
        generate_chunk: generate_chunk?,
        stream_state,
        prompt_tokens,
        prompt_token_ids,
        request,
    })
}

fn opt_string(obj: &Obj, key: &'static str, loc: &Loc, errs: &mut Errors) -> Option<String> {
    read::opt(obj, key).and_then(|v| read::string(v, &loc.field(key), errs))
}

fn opt_bool(obj: &Obj, key: &'static str, loc: &Loc, errs: &mut Errors) -> Option<bool> {
    read::opt(obj, key).and_then(|v| read::boolean(v, &loc.field(key), errs))
}

fn opt_int(obj: &Obj, key: &'static str, loc: &Loc, errs: &mut Errors) -> Option<i64> {
    read::opt(obj, key).and_then(|v| read::int(v, &loc.field(key), errs))
}

fn gen_response(v: &Value, stream: bool, loc: &Loc, errs: &mut Errors) -> Option<GenResponse> {
    let class = if stream { "GenerateTokensStreamResponse" } else { "GenerateTokensResponse" };
    let obj = read::model(v, class, loc, errs)?;
    let before = errs.list.len();
    let request_id = match read::opt(obj, "request_id") {
        Some(v) => read::string(v, &loc.field("request_id"), errs),
        None if obj.contains_key("request_id") => {
            read::string(&Value::Null, &loc.field("request_id"), errs);
            None
        }
        None => Some(crate::ids::random_hex_id()),
    };
    if !stream {
        opt_string(obj, "model", loc, errs);
        opt_int(obj, "created", loc, errs);
    }
    let usage = read::opt(obj, "usage").and_then(|u| usage(u, &loc.field("usage"), errs));
    let prompt_logprobs = if stream {
        None
    } else {
        read::opt(obj, "prompt_logprobs")
            .and_then(|p| read::list(p, &loc.field("prompt_logprobs"), errs))
            .map(|l| Value::Array(l.clone()))
    };
    let prompt_token_ids = read::opt(obj, "prompt_token_ids")
        .and_then(|p| read::int_list(p, Some(0), &loc.field("prompt_token_ids"), errs));
    let metrics = read::opt(obj, "metrics")
        .and_then(|m| read::model(m, "PerRequestMetrics", &loc.field("metrics"), errs))
        .map(|m| Value::Object(m.clone()));
    let kv_transfer_params = if stream {
        None
    } else {
        read::opt(obj, "kv_transfer_params")
            .and_then(|k| read::dict(k, &loc.field("kv_transfer_params"), errs))
            .map(|m| Value::Object(m.clone()))
    };
    if let Some(mode) = obj.get("output_mode") {
        read::literal_str(mode, &["tokens"], &loc.field("output_mode"), errs);
    }
    let l = loc.field("choices");
    let mut choices = Vec::new();
    match obj.get("choices") {
        None => errs.missing(&l, v),
        Some(c) => {
            if let Some(items) = read::list(c, &l, errs) {
                choices.reserve(items.len());
                for (i, item) in items.iter().enumerate() {
                    if let Some(ch) = gen_choice(item, stream, &l.index(i), errs) {
                        choices.push(ch);
                    }
                }
            }
        }
    }
    if errs.list.len() != before {
        return None;
    }
    Some(GenResponse {
        request_id: request_id?,
        usage,
        prompt_logprobs,
        prompt_token_ids,
        metrics,
        kv_transfer_params,
        choices,
    })
}

fn usage(v: &Value, loc: &Loc, errs: &mut Errors) -> Option<GenUsage> {
    let obj = read::model(v, "UsageInfo", loc, errs)?;
    let before = errs.list.len();
    let prompt_tokens = obj.get("prompt_tokens").map_or(Some(0), |p| read::int(p, &loc.field("prompt_tokens"), errs));
    if let Some(t) = obj.get("total_tokens") {
        read::int(t, &loc.field("total_tokens"), errs);
    }
    let completion_tokens = match obj.get("completion_tokens") {
        None => Some(0),
        Some(Value::Null) => None,
        Some(c) => read::int(c, &loc.field("completion_tokens"), errs),
    };
    (errs.list.len() == before).then(|| GenUsage { prompt_tokens: prompt_tokens.unwrap_or(0), completion_tokens })
}

fn gen_choice(v: &Value, stream: bool, loc: &Loc, errs: &mut Errors) -> Option<GenChoice> {
    let class = if stream { "GenerateTokensStreamChoice" } else { "GenerateTokensChoice" };
    let obj = read::model(v, class, loc, errs)?;
    let before = errs.list.len();
    let index = match obj.get("index") {
        None => {
            errs.missing(&loc.field("index"), v);
            None
        }
        Some(i) => read::int(i, &loc.field("index"), errs),
    };
    let finish_reason = match obj.get("finish_reason") {
        None if !stream => Some("stop".to_string()),
        None | Some(Value::Null) => None,
        Some(f) => read::string(f, &loc.field("finish_reason"), errs),
    };
    let stop_reason = match read::opt(obj, "stop_reason") {
        None => None,
        Some(Value::String(s)) => Some(StopReason::Str(s.clone())),
        Some(s) => read::int(s, &loc.field("stop_reason"), errs).map(StopReason::Int),
    };
    let token_ids = match read::opt(obj, "token_ids") {
        None => None,
        Some(t) => {
            let l = loc.field("token_ids");
            let ids = read::int_list(t, None, &l, errs);
            if let Some(ids) = &ids {
                if !stream && ids.iter().any(|&x| x < 0) {
                    errs.value_error(&l, "token_ids must not contain negative values", Some(t));
                }
            }
            ids
        }
    };
    if let Some(r) = read::opt(obj, "routed_experts") {
        read::string(r, &loc.field("routed_experts"), errs);
    }
    let logprobs = read::opt(obj, "logprobs").and_then(|l| gen_logprobs(l, &loc.field("logprobs"), errs));
    if errs.list.len() != before {
        return None;
    }
    Some(GenChoice { index: index?, finish_reason, stop_reason, token_ids, logprobs })
}

fn gen_logprobs(v: &Value, loc: &Loc, errs: &mut Errors) -> Option<GenLogprobs> {
    let obj = read::model(v, "GenerateLogProbs", loc, errs)?;
    let Some(content) = read::opt(obj, "content") else {
        return Some(GenLogprobs { content: None });
    };
    let l = loc.field("content");
    let items = read::list(content, &l, errs)?;
    let before = errs.list.len();
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let il = l.index(i);
        let Some(o) = read::model(item, "GenerateLogProbsContent", &il, errs) else {
            continue;
        };
        let (token_id, logprob) = candidate_fields(o, item, &il, errs);
        let mut top = Vec::new();
        if let Some(t) = o.get("top_logprobs") {
            let tl = il.field("top_logprobs");
            if let Some(cands) = read::list(t, &tl, errs) {
                top.reserve(cands.len());
                for (j, c) in cands.iter().enumerate() {
                    let cl = tl.index(j);
                    if let Some(co) = read::model(c, "GenerateLogProb", &cl, errs) {
                        if let (Some(token_id), Some(logprob)) = candidate_fields(co, c, &cl, errs) {
                            top.push(Candidate { token_id, logprob });
                        }
                    }
                }
            }
        }
        if let (Some(token_id), Some(logprob)) = (token_id, logprob) {
            out.push(LogprobEntry { token_id, logprob, top_logprobs: top });
        }
    }
    (errs.list.len() == before).then_some(GenLogprobs { content: Some(out) })
}

fn candidate_fields(o: &Obj, whole: &Value, loc: &Loc, errs: &mut Errors) -> (Option<i64>, Option<f64>) {
    let token_id = match o.get("token_id") {
        None => {
            errs.missing(&loc.field("token_id"), whole);
            None
        }
        Some(t) => read::int(t, &loc.field("token_id"), errs),
    };
    let logprob = match o.get("logprob") {
        None => {
            errs.missing(&loc.field("logprob"), whole);
            None
        }
        Some(l) => read::float(l, &loc.field("logprob"), errs),
    };
    if let Some(r) = read::opt(o, "rank") {
        read::int(r, &loc.field("rank"), errs);
    }
    (token_id, logprob)
}

fn stream_state(v: &Value, loc: &Loc, errs: &mut Errors) -> Option<crate::stream::Incoming> {
    use crate::stream::{Envelope, Incoming};
    // Our envelope is told apart by its `format` key (vLLM's state has none).
    if let Some(obj) = v.as_object().filter(|o| o.contains_key("format")) {
        let field = |key: &'static str, errs: &mut Errors| match obj.get(key) {
            Some(x) => read::string(x, &loc.field(key), errs),
            None => {
                errs.missing(&loc.field(key), v);
                None
            }
        };
        let (format, data) = (field("format", errs), field("data", errs));
        let mac = obj.get("mac").filter(|m| !m.is_null()).and_then(|m| read::string(m, &loc.field("mac"), errs));
        return Some(Incoming::Sealed(Envelope { format: format?, data: data?, mac }));
    }
    vllm_stream_state(v, loc, errs).map(Incoming::Vllm)
}

fn vllm_stream_state(v: &Value, loc: &Loc, errs: &mut Errors) -> Option<StreamState> {
    let obj = read::model(v, "DerenderStreamState", loc, errs)?;
    let before = errs.list.len();
    let mut s = StreamState::default();
    if let Some(p) = obj.get("prev_tokens") {
        let l = loc.field("prev_tokens");
        if let Some(items) = read::list(p, &l, errs) {
            let inner = errs.list.len();
            for (i, t) in items.iter().enumerate() {
                if let Some(t) = read::string(t, &l.index(i), errs) {
                    s.prev_tokens.push(t);
                }
            }
            if errs.list.len() == inner && items.len() > 1024 {
                errs.value_error(&l, &format!("prev_tokens length ({}) exceeds maximum (1024)", items.len()), Some(p));
            }
        }
    }
    let ge0 = |key: &'static str, errs: &mut Errors| {
        obj.get(key).and_then(|x| read::int_ge(x, 0, &loc.field(key), errs)).unwrap_or(0)
    };
    s.prefix_offset = ge0("prefix_offset", errs);
    s.read_offset = ge0("read_offset", errs);
    s.role_sent = obj.get("role_sent").and_then(|x| read::boolean(x, &loc.field("role_sent"), errs)).unwrap_or(false);
    if let Some(c) = obj.get("logprob_context_token_ids") {
        let l = loc.field("logprob_context_token_ids");
        if let Some(ids) = read::int_list(c, None, &l, errs) {
            if ids.len() > 4 {
                errs.push(
                    "too_long",
                    &l,
                    format!("List should have at most 4 items after validation, not {}", ids.len()),
                    Some(c),
                    Some(format!("{{'field_type': 'List', 'max_length': 4, 'actual_length': {}}}", ids.len())),
                );
            } else {
                s.logprob_context_token_ids = ids;
            }
        }
    }
    s.logprob_text_offset = ge0("logprob_text_offset", errs);
    if let Some(o) = obj.get("output_token_ids") {
        s.output_token_ids = read::int_list(o, None, &loc.field("output_token_ids"), errs).unwrap_or_default();
    }
    if let Some(o) = obj.get("output_chunk_lens") {
        let l = loc.field("output_chunk_lens");
        if let Some(items) = read::list(o, &l, errs) {
            for (i, x) in items.iter().enumerate() {
                if let Some(n) = read::int_gt(x, 0, &l.index(i), errs) {
                    s.output_chunk_lens.push(n);
                }
            }
        }
    }
    s.tools_streamed =
        obj.get("tools_streamed").and_then(|x| read::boolean(x, &loc.field("tools_streamed"), errs)).unwrap_or(false);
    if let Some(ids) = obj.get("last_tool_call_ids") {
        let l = loc.field("last_tool_call_ids");
        if let Some(items) = read::list(ids, &l, errs) {
            for (i, t) in items.iter().enumerate() {
                if let Some(t) = read::string(t, &l.index(i), errs) {
                    s.last_tool_call_ids.push(t);
                }
            }
        }
    }
    if let Some(h) = obj.get("held_token_ids") {
        s.held_token_ids = read::int_list(h, None, &loc.field("held_token_ids"), errs).unwrap_or_default();
        if s.held_token_ids.len() > 1 {
            errs.push(
                "too_long",
                &loc.field("held_token_ids"),
                "List should have at most 1 item after validation",
                Some(h),
                None,
            );
        }
    }
    if errs.list.len() != before {
        return None;
    }
    let total: i64 = s.output_chunk_lens.iter().sum();
    if total != s.output_token_ids.len() as i64 {
        errs.value_error(
            loc,
            &format!(
                "output_chunk_lens must sum to len(output_token_ids) (got sum={total}, len(output_token_ids)={})",
                s.output_token_ids.len()
            ),
            Some(v),
        );
        return None;
    }
    Some(s)
}

/// The fields of `chat_request` / `completion_request` that derender reads.
fn output_options(obj: &Obj, api: Api, loc: &Loc, errs: &mut Errors) -> Option<OutputOptions> {
    let key = api.request_field();
    let v = read::opt(obj, key)?;
    let class = match api {
        Api::Chat => "ChatCompletionRequest",
        Api::Completion => "CompletionRequest",
    };
    let l = loc.field(key);
    let o = read::model(v, class, &l, errs)?;
    request_fields(o, api, &l, errs)
}

/// Validate a `ChatCompletionRequest` / `CompletionRequest` object located at
/// `l` and read the fields derender uses.
pub fn request_fields(o: &Obj, api: Api, l: &Loc, errs: &mut Errors) -> Option<OutputOptions> {
    let before = errs.list.len();
    let mut opts = OutputOptions { raw: o.clone(), ..Default::default() };
    if api == Api::Chat {
        match o.get("messages") {
            None => errs.missing(&l.field("messages"), &Value::Object(o.clone())),
            Some(m) => {
                if let Some(messages) = read::list(m, &l.field("messages"), errs) {
                    message_union::check_messages(messages, &l.field("messages"), errs);
                }
            }
        }
    }
    opt_string(o, "model", l, errs);
    structured::check_field_types(o, l, errs);
    if let Some(stop) = read::opt(o, "stop") {
        match stop {
            Value::String(s) => {
                opts.stop_given = !s.is_empty();
                if !s.is_empty() {
                    opts.stop.push(s.clone());
                }
            }
            _ => {
                let sl = l.field("stop");
                if let Some(items) = read::list(stop, &sl, errs) {
                    opts.stop_given = !items.is_empty();
                    for (i, s) in items.iter().enumerate() {
                        if let Some(s) = read::string(s, &sl.index(i), errs) {
                            if !s.is_empty() {
                                opts.stop.push(s);
                            }
                        }
                    }
                }
            }
        }
    }
    if let Some(ids) = read::opt(o, "stop_token_ids") {
        opts.stop_token_ids = read::int_list(ids, None, &l.field("stop_token_ids"), errs).unwrap_or_default();
    }
    opts.ignore_eos = opt_bool(o, "ignore_eos", l, errs).unwrap_or(false);
    opts.skip_special_tokens = opt_bool(o, "skip_special_tokens", l, errs);
    opts.include_stop_str_in_output = opt_bool(o, "include_stop_str_in_output", l, errs).unwrap_or(false);
    opts.min_tokens = opt_int(o, "min_tokens", l, errs).unwrap_or(0);
    match api {
        Api::Chat => {
            super::chat_fields::check(o, l, errs);
            opts.logprobs_flag = opt_bool(o, "logprobs", l, errs).unwrap_or(false);
            opts.top_logprobs = match o.get("top_logprobs") {
                None => Some(0),
                Some(Value::Null) => None,
                Some(t) => read::int(t, &l.field("top_logprobs"), errs),
            };
        }
        Api::Completion => {
            opts.top_logprobs = opt_int(o, "logprobs", l, errs);
            opts.logprobs_flag = opts.top_logprobs.is_some();
        }
    }
    if let Some(ids) = read::opt(o, "logprob_token_ids") {
        opts.logprob_token_ids =
            read::int_list(ids, None, &l.field("logprob_token_ids"), errs).is_some_and(|v| !v.is_empty());
    }
    opts.return_token_ids = opt_bool(o, "return_token_ids", l, errs).unwrap_or(false);
    if let Some(tools) = read::opt(o, "tools") {
        read::list(tools, &l.field("tools"), errs);
    }
    check_scalars(o, api, l, errs);
    if api == Api::Chat && errs.list.len() == before {
        if let Some(Value::Array(messages)) = o.get("messages") {
            message_union::check_tool_calls(messages, l, errs);
        }
    }
    (errs.list.len() == before).then_some(opts)
}

#[derive(Clone, Copy)]
enum Kind {
    Float,
    Int,
    Bool,
    Str,
    Dict,
    /// An int no smaller than the bound (pydantic `Field(ge=...)`).
    IntGe(i64),
    /// One of the listed strings (`Literal[...]`).
    OneOf(&'static [&'static str]),
}

/// Typed scalar fields of `ChatCompletionRequest` / `CompletionRequest` that
/// derender does not otherwise read, so a wrong type still gets vLLM's 400.
/// `true` = nullable.
const CHAT_SCALARS: &[(&str, Kind, bool)] = &[
    ("frequency_penalty", Kind::Float, true),
    ("logit_bias", Kind::Dict, true),
    ("max_tokens", Kind::Int, true),
    ("max_completion_tokens", Kind::Int, true),
    ("n", Kind::Int, true),
    ("presence_penalty", Kind::Float, true),
    ("seed", Kind::Int, true),
    ("stream", Kind::Bool, true),
    ("temperature", Kind::Float, true),
    ("top_p", Kind::Float, true),
    ("include_reasoning", Kind::Bool, false),
    ("parallel_tool_calls", Kind::Bool, true),
    ("user", Kind::Str, true),
    ("use_beam_search", Kind::Bool, false),
    ("top_k", Kind::Int, true),
    ("min_p", Kind::Float, true),
    ("repetition_penalty", Kind::Float, true),
    ("length_penalty", Kind::Float, false),
    ("spaces_between_special_tokens", Kind::Bool, false),
    ("echo", Kind::Bool, false),
    ("add_generation_prompt", Kind::Bool, false),
    ("continue_final_message", Kind::Bool, false),
    ("add_special_tokens", Kind::Bool, false),
    ("chat_template", Kind::Str, true),
    ("chat_template_kwargs", Kind::Dict, true),
    ("priority", Kind::Int, false),
    ("request_id", Kind::Str, false),
    ("truncate_prompt_tokens", Kind::IntGe(-1), true),
    ("truncation_side", Kind::OneOf(&["left", "right"]), true),
    ("return_token_offsets", Kind::Bool, true),
    ("kv_transfer_params", Kind::Dict, true),
    ("ec_transfer_params", Kind::Dict, true),
];

const COMPLETION_SCALARS: &[(&str, Kind, bool)] = &[
    ("echo", Kind::Bool, true),
    ("frequency_penalty", Kind::Float, true),
    ("logit_bias", Kind::Dict, true),
    ("max_tokens", Kind::Int, true),
    ("n", Kind::Int, false),
    ("presence_penalty", Kind::Float, true),
    ("seed", Kind::Int, true),
    ("stream", Kind::Bool, true),
    ("suffix", Kind::Str, true),
    ("temperature", Kind::Float, true),
    ("top_p", Kind::Float, true),
    ("user", Kind::Str, true),
    ("use_beam_search", Kind::Bool, false),
    ("top_k", Kind::Int, true),
    ("min_p", Kind::Float, true),
    ("repetition_penalty", Kind::Float, true),
    ("length_penalty", Kind::Float, false),
    ("spaces_between_special_tokens", Kind::Bool, false),
    ("prompt_logprobs", Kind::Int, true),
    ("add_special_tokens", Kind::Bool, false),
    ("priority", Kind::Int, false),
    ("request_id", Kind::Str, false),
    ("truncate_prompt_tokens", Kind::IntGe(-1), true),
    ("truncation_side", Kind::OneOf(&["left", "right"]), true),
    ("return_token_offsets", Kind::Bool, true),
    ("kv_transfer_params", Kind::Dict, true),
    ("ec_transfer_params", Kind::Dict, true),
];

fn check_scalars(o: &Obj, api: Api, loc: &Loc, errs: &mut Errors) {
    let table = match api {
        Api::Chat => CHAT_SCALARS,
        Api::Completion => COMPLETION_SCALARS,
    };
    for &(key, kind, nullable) in table {
        let Some(v) = o.get(key) else { continue };
        if v.is_null() && nullable {
            continue;
        }
        let l = loc.field(key);
        match kind {
            Kind::Float => {
                let _ = read::float(v, &l, errs);
            }
            Kind::Int => {
                let _ = read::int(v, &l, errs);
            }
            Kind::Bool => {
                let _ = read::boolean(v, &l, errs);
            }
            Kind::Str => {
                let _ = read::string(v, &l, errs);
            }
            Kind::Dict => {
                let _ = read::dict(v, &l, errs);
            }
            Kind::IntGe(bound) => {
                let _ = read::int_ge(v, bound, &l, errs);
            }
            Kind::OneOf(allowed) => {
                let _ = read::literal_str(v, allowed, &l, errs);
            }
        }
    }
}

/// Python truthiness of an optional JSON value.
fn truthy(v: Option<&Value>) -> bool {
    v.is_some_and(crate::pycompat::truthy)
}

/// The request models' `mode="before"` validators (`check_generation_prompt`,
/// `check_tool_usage`, `check_structured_outputs_count`, `check_logprobs`,
/// `validate_stream_options`, `validate_response_format`,
/// `check_cache_salt_support`), in the order pydantic runs them, then the
/// one field check that raises past pydantic.
pub fn request_prechecks(req: &Obj, api: Api) -> Result<(), ApiError> {
    if api == Api::Chat {
        message_union::check_messages_iterable(req)?;
        if truthy(req.get("continue_final_message")) && truthy(req.get("add_generation_prompt")) {
            return Err(ApiError::validator(
                "Cannot set both `continue_final_message` and `add_generation_prompt` to True.",
                None,
            ));
        }
        check_tool_usage(req)?;
        structured::check_count(req, api == Api::Chat)?;
    }
    if truthy(req.get("logprob_token_ids")) && truthy(req.get("use_beam_search")) {
        return Err(ApiError::validator(
            "`logprob_token_ids` is not supported with beam search.",
            Some("logprob_token_ids"),
        ));
    }
    if api == Api::Chat {
        if truthy(req.get("logprob_token_ids")) && !truthy(req.get("logprobs")) {
            return Err(ApiError::validator(
                "when using `logprob_token_ids`, `logprobs` must be set to true.",
                Some("logprob_token_ids"),
            ));
        }
        for field in ["prompt_logprobs", "top_logprobs"] {
            if let Some(v) = req.get(field).filter(|v| !v.is_null()) {
                let Some(x) = v.as_f64().filter(|_| !v.is_boolean()) else {
                    let msg = format!("`{field}` must be an integer.");
                    return Err(ApiError::invalid_param(
                        format!("{msg} (parameter={field}, value={})", crate::pycompat::pydantic::summarize(Some(v))),
                        field,
                    ));
                };
                let stream = truthy(req.get("stream"));
                if field == "prompt_logprobs" {
                    if stream && (x > 0.0 || x == -1.0) {
                        return Err(ApiError::validator(
                            "`prompt_logprobs` are not available when `stream=True`.",
                            Some(field),
                        ));
                    }
                    if x < 0.0 && x != -1.0 {
                        return Err(ApiError::invalid_param(format!("`prompt_logprobs` must be a positive value or -1. (parameter=prompt_logprobs, value={})", crate::pycompat::pydantic::summarize(Some(v))), field));
                    }
                } else {
                    if x < 0.0 && x != -1.0 {
                        return Err(ApiError::invalid_param(
                            format!(
                                "`top_logprobs` must be a positive value or -1. (parameter=top_logprobs, value={})",
                                crate::pycompat::pydantic::summarize(Some(v))
                            ),
                            field,
                        ));
                    }
                    if (x == -1.0 || x > 0.0) && !truthy(req.get("logprobs")) {
                        return Err(ApiError::validator(
                            "when using `top_logprobs`, `logprobs` must be set to true.",
                            Some(field),
                        ));
                    }
                }
            }
        }
    }
    if truthy(req.get("stream_options")) && !truthy(req.get("stream")) {
        return Err(ApiError::validator(
            "Stream options can only be defined when `stream=True`.",
            Some("stream_options"),
        ));
    }
    if api == Api::Completion {
        structured::check_count(req, api == Api::Chat)?;
    }
    structured::check_response_format(req)?;
    if api == Api::Chat {
        message_union::check_tool_calls_iterable(req)?;
    }
    check_cache_salt(req)?;
    if api == Api::Chat {
        for key in ["mm_processor_kwargs", "media_io_kwargs"] {
            if truthy(req.get(key)) {
                let what = if key == "media_io_kwargs" { "media loading" } else { "preprocessing" };
                return Err(ApiError::validator(&format!("Per-request {key} are disabled by default because they can change multimodal {what} resource usage. Start the server with --trust-request-mm-kwargs only when clients are trusted."), Some(key)));
            }
        }
    }
    check_thinking_budget(req.get("thinking_token_budget"))?;
    check_repetition_detection(req.get("repetition_detection"))?;
    // Field validation: `StructuredOutputsParams.__post_init__` raises past
    // pydantic, so it wins over every other field's error.
    let mut field_errs = Errors::default();
    structured::check_field_types(req, &Loc::root("body"), &mut field_errs);
    if field_errs.is_empty() {
        structured::check_one_constraint(req)?;
    }
    Ok(())
}

/// `validate_cache_salt`.
pub(crate) fn check_cache_salt(req: &Obj) -> Result<(), ApiError> {
    if let Some(salt) = req.get("cache_salt").filter(|v| !v.is_null()) {
        match salt.as_str() {
            Some(s) if !s.is_empty() => {
                if s.chars().count() > 128 || s.chars().any(|c| matches!(c, '@' | '/' | '\\' | '\0')) {
                    return Err(ApiError::validator("Parameter 'cache_salt' must be at most 128 characters and must not contain '@', '/', '\\\\', or NUL.", Some("cache_salt")));
                }
            }
            _ => {
                return Err(ApiError::validator(
                    "Parameter 'cache_salt' must be a non-empty string if provided.",
                    Some("cache_salt"),
                ))
            }
        }
    }
    Ok(())
}

/// `validate_thinking_token_budget` (a field validator raising past
/// pydantic): a non-negative int, or -1 for unlimited.
fn check_thinking_budget(v: Option<&Value>) -> Result<(), ApiError> {
    let Some(v) = v.filter(|v| !v.is_null()) else { return Ok(()) };
    if v.as_i64().is_some_and(|b| b >= -1) {
        return Ok(());
    }
    let shown = crate::pycompat::pydantic::summarize(Some(v));
    Err(ApiError::invalid_param(
        format!("`thinking_token_budget` must be a non-negative integer or -1 for unlimited. (parameter=thinking_token_budget, value={shown})"),
        "thinking_token_budget",
    ))
}

/// `RepetitionDetectionParams.__post_init__`.
fn check_repetition_detection(v: Option<&Value>) -> Result<(), ApiError> {
    let Some(p) = v.and_then(Value::as_object) else { return Ok(()) };
    let field = |k: &str| p.get(k).and_then(Value::as_i64).unwrap_or(0);
    let (max, min, count) = (field("max_pattern_size"), field("min_pattern_size"), field("min_count"));
    if max < 0 || min < 0 || min > max {
        return Err(ApiError::validator("max_pattern_size, min_pattern_size must be >=0, with min_pattern_size <= max_pattern_size. Set both to 0 to disable repetitive pattern detection.", None));
    }
    if max > 0 && count < 2 {
        return Err(ApiError::validator("min_count must be >= 2 to detect repetitive patterns in engine output. If you do not wish to detect repetitive patterns, set max_pattern_size to 0.", None));
    }
    Ok(())
}

fn check_tool_usage(req: &Obj) -> Result<(), ApiError> {
    let tools = req.get("tools");
    if matches!(tools, Some(Value::Array(a)) if a.is_empty()) {
        return Err(ApiError::validator(
            "`tools` must not be an empty array. Either provide at least one tool or omit the field entirely.",
            Some("tools"),
        ));
    }
    let Some(choice) = req.get("tool_choice") else {
        return Ok(());
    };
    if choice.is_null() || choice.as_str() == Some("none") {
        return Ok(());
    }
    let Some(tools) = tools.filter(|t| !t.is_null()) else {
        return Err(ApiError::validator("When using `tool_choice`, `tools` must be set.", Some("tool_choice")));
    };
    let usage = "Correct usage: `{\"type\": \"function\", \"function\": {\"name\": \"my_function\"}}`";
    match choice {
        Value::String(s) if s == "auto" || s == "required" => Ok(()),
        Value::Object(o) => {
            let Some(Value::Object(function)) = o.get("function") else {
                let shown = crate::pycompat::pydantic::summarize(o.get("function"));
                return Err(ApiError::validator(
                    &format!("Invalid value for `function`: `{shown}` in `tool_choice`! {usage}"),
                    Some("tool_choice.function"),
                ));
            };
            let Some(name) = function.get("name") else {
                return Err(ApiError::validator(
                    &format!("Expected field `name` in `function` in `tool_choice`! {usage}"),
                    Some("tool_choice.function.name"),
                ));
            };
            let name = match name.as_str() {
                Some(n) if !n.is_empty() => n,
                _ => {
                    let shown = crate::pycompat::pydantic::summarize(Some(name));
                    return Err(ApiError::validator(
                        &format!("Invalid `name` in `function`: `{shown}` in `tool_choice`! {usage}"),
                        Some("tool_choice.function.name"),
                    ));
                }
            };
            let found = tools.as_array().is_some_and(|list| {
                list.iter().any(|t| t.get("function").and_then(|f| f.get("name")).and_then(Value::as_str) == Some(name))
            });
            if found {
                Ok(())
            } else {
                Err(ApiError::validator(
                    "The tool specified in `tool_choice` does not match any of the specified `tools`",
                    Some("tool_choice"),
                ))
            }
        }
        other => {
            let shown = crate::pycompat::pydantic::summarize(Some(other));
            Err(ApiError::validator(&format!("Invalid value for `tool_choice`: {shown}! Only named tools, \"none\", \"auto\" or \"required\" are supported."), Some("tool_choice")))
        }
    }
}
