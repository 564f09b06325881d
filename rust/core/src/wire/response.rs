//! Response bodies, fields in vLLM's declaration order (that is the wire
//! order), every declared field present, `null` where vLLM has `None`.

use serde::Serialize;
use serde_json::Value;

use crate::logprobs::{ChatLogprobs, CompletionLogprobs};
use crate::wire::request::StopReason;

impl Serialize for StopReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            StopReason::Int(i) => s.serialize_i64(*i),
            StopReason::Str(t) => s.serialize_str(t),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Usage {
    pub prompt_tokens: i64,
    pub total_tokens: i64,
    pub completion_tokens: i64,
    pub prompt_tokens_details: Option<Value>,
    pub completion_tokens_details: Option<Value>,
}

impl Usage {
    pub fn new(prompt_tokens: i64, completion_tokens: i64) -> Usage {
        Usage {
            prompt_tokens,
            total_tokens: prompt_tokens + completion_tokens,
            completion_tokens,
            prompt_tokens_details: None,
            completion_tokens_details: None,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct FunctionCall {
    pub name: String,
    pub arguments: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: FunctionCall,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChatMessage {
    pub role: &'static str,
    pub content: Option<String>,
    pub refusal: Option<String>,
    pub annotations: Option<Value>,
    pub audio: Option<Value>,
    pub function_call: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    pub reasoning: Option<String>,
}

impl ChatMessage {
    pub fn assistant(content: Option<String>, reasoning: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        ChatMessage {
            role: "assistant",
            content,
            refusal: None,
            annotations: None,
            audio: None,
            function_call: None,
            tool_calls,
            reasoning,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ChatChoice {
    pub index: i64,
    pub message: ChatMessage,
    pub logprobs: Option<ChatLogprobs>,
    pub finish_reason: Option<String>,
    pub stop_reason: Option<StopReason>,
    pub token_ids: Option<Vec<i64>>,
    pub routed_experts: Option<Value>,
    pub weight_versions: Option<Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChatCompletion {
    pub id: String,
    pub object: &'static str,
    pub created: i64,
    pub model: String,
    pub choices: Vec<ChatChoice>,
    pub service_tier: Option<Value>,
    pub system_fingerprint: Option<Value>,
    pub usage: Usage,
    pub prompt_logprobs: Option<Value>,
    pub prompt_token_ids: Option<Vec<i64>>,
    pub prompt_text: Option<Value>,
    pub kv_transfer_params: Option<Value>,
    pub ec_transfer_params: Option<Value>,
    pub metrics: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeltaFunctionCall {
    pub name: Option<String>,
    pub arguments: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DeltaToolCall {
    pub id: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<&'static str>,
    pub index: i64,
    pub function: Option<DeltaFunctionCall>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Delta {
    pub role: Option<&'static str>,
    pub content: Option<String>,
    pub reasoning: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<DeltaToolCall>,
    /// Cohere's citations (`CohereDeltaMessage.citations`), only when set.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub citations: Vec<Value>,
}

impl DeltaToolCall {
    /// A call's first delta: its id, type and name, with any arguments.
    pub fn opening(index: i64, id: String, name: String, arguments: Option<String>) -> Self {
        DeltaToolCall {
            id: Some(id),
            kind: Some("function"),
            index,
            function: Some(DeltaFunctionCall { name: Some(name), arguments }),
        }
    }

    /// More of a call's arguments.
    pub fn arguments(index: i64, arguments: String) -> Self {
        DeltaToolCall {
            id: None,
            kind: None,
            index,
            function: Some(DeltaFunctionCall { name: None, arguments: Some(arguments) }),
        }
    }
}

impl Delta {
    /// Content alone.
    pub fn content(text: impl Into<String>) -> Self {
        Delta { content: Some(text.into()), ..Default::default() }
    }

    /// Tool calls alone.
    pub fn tool_calls(calls: Vec<DeltaToolCall>) -> Self {
        Delta { tool_calls: calls, ..Default::default() }
    }

    /// No text and no call (a role alone aside).
    pub fn sends_nothing(&self) -> bool {
        let empty = |t: &Option<String>| t.as_deref().is_none_or(str::is_empty);
        empty(&self.content) && empty(&self.reasoning) && self.tool_calls.is_empty()
    }

    /// `other` with `text` added at the end of its content or its
    /// reasoning, calls compared without their (random) ids.
    pub fn is_with_text(&self, other: &Delta, text: &str) -> bool {
        let calls = |d: &Delta| d.tool_calls.iter().map(|c| (c.index, c.function.clone())).collect::<Vec<_>>();
        let field = |t: &Option<String>| t.clone().unwrap_or_default();
        let (content, content_before) = (field(&self.content), field(&other.content));
        let (reasoning, reasoning_before) = (field(&self.reasoning), field(&other.reasoning));
        let added = |now: &str, before: &str| now.strip_prefix(before) == Some(text);
        calls(self) == calls(other)
            && ((added(&content, &content_before) && reasoning == reasoning_before)
                || (added(&reasoning, &reasoning_before) && content == content_before))
    }

    /// One delta for two parsed one after the other within a chunk.
    pub fn then(self, next: Delta) -> Delta {
        let join = |a: Option<String>, b: Option<String>| match (a, b) {
            (Some(a), Some(b)) => Some(a + &b),
            (a, b) => a.or(b),
        };
        let mut tool_calls = self.tool_calls;
        tool_calls.extend(next.tool_calls);
        let mut citations = self.citations;
        citations.extend(next.citations);
        Delta {
            role: self.role.or(next.role),
            content: join(self.content, next.content),
            reasoning: join(self.reasoning, next.reasoning),
            tool_calls,
            citations,
        }
    }
}

impl From<DeltaToolCall> for Delta {
    fn from(call: DeltaToolCall) -> Self {
        Delta::tool_calls(vec![call])
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ChatStreamChoice {
    pub index: i64,
    pub delta: Delta,
    pub logprobs: Option<ChatLogprobs>,
    pub finish_reason: Option<String>,
    pub stop_reason: Option<StopReason>,
    pub token_ids: Option<Vec<i64>>,
    pub weight_versions: Option<Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChatChunk {
    pub id: String,
    pub object: &'static str,
    pub created: i64,
    pub model: String,
    pub choices: Vec<ChatStreamChoice>,
    pub usage: Option<Usage>,
    pub system_fingerprint: Option<Value>,
    pub prompt_token_ids: Option<Vec<i64>>,
    pub prompt_text: Option<Value>,
    pub metrics: Option<Value>,
    pub kv_transfer_params: Option<Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CompletionChoice {
    pub index: i64,
    pub text: String,
    pub logprobs: Option<CompletionLogprobs>,
    pub finish_reason: Option<String>,
    pub stop_reason: Option<StopReason>,
    pub token_ids: Option<Vec<i64>>,
    pub prompt_logprobs: Option<Value>,
    pub prompt_token_ids: Option<Vec<i64>>,
    pub routed_experts: Option<Value>,
    pub weight_versions: Option<Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Completion {
    pub id: String,
    pub object: &'static str,
    pub created: i64,
    pub model: String,
    pub choices: Vec<CompletionChoice>,
    pub service_tier: Option<Value>,
    pub system_fingerprint: Option<Value>,
    pub usage: Usage,
    pub kv_transfer_params: Option<Value>,
    pub ec_transfer_params: Option<Value>,
    pub metrics: Option<Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CompletionStreamChoice {
    pub index: i64,
    pub text: String,
    pub logprobs: Option<CompletionLogprobs>,
    pub finish_reason: Option<String>,
    pub stop_reason: Option<StopReason>,
    pub prompt_token_ids: Option<Vec<i64>>,
    pub token_ids: Option<Vec<i64>>,
    pub weight_versions: Option<Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CompletionChunk {
    pub id: String,
    pub object: &'static str,
    pub created: i64,
    pub model: String,
    pub choices: Vec<CompletionStreamChoice>,
    pub usage: Option<Usage>,
    pub system_fingerprint: Option<Value>,
    pub metrics: Option<Value>,
    pub kv_transfer_params: Option<Value>,
}

/// `{"chunk": ..., "stream_state": ...}` of a streaming derender call.
#[derive(Serialize)]
pub struct StreamResponse<'a, C: Serialize> {
    pub chunk: &'a C,
    pub stream_state: &'a crate::stream::Outgoing,
}

/// `PerRequestMetrics` re-serialised: declared fields first, extras kept.
pub fn normalize_metrics(metrics: &Option<Value>) -> Option<Value> {
    let Some(Value::Object(m)) = metrics else {
        return None;
    };
    let mut out = serde_json::Map::new();
    for key in ["time_to_first_token_ms", "generation_time_ms", "queue_time_ms", "mean_itl_ms", "tokens_per_second"] {
        let v = match m.get(key) {
            Some(Value::Number(n)) => {
                n.as_f64().and_then(serde_json::Number::from_f64).map_or(Value::Null, Value::Number)
            }
            _ => Value::Null,
        };
        out.insert(key.to_string(), v);
    }
    out.insert("speculative_decoding".into(), m.get("speculative_decoding").cloned().unwrap_or(Value::Null));
    for (k, v) in m {
        if !out.contains_key(k) {
            out.insert(k.clone(), v.clone());
        }
    }
    Some(Value::Object(out))
}

/// `prompt_logprobs` (`list[dict[int, Logprob] | None]`) re-serialised:
/// each candidate as `{logprob, rank, decoded_token}`.
pub fn normalize_prompt_logprobs(p: &Option<Value>) -> Option<Value> {
    let Some(Value::Array(items)) = p else {
        return None;
    };
    let out = items
        .iter()
        .map(|pos| match pos {
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| {
                        let get = |f: &str| v.get(f).cloned().unwrap_or(Value::Null);
                        let logprob = match v.get("logprob") {
                            Some(Value::Number(n)) => {
                                n.as_f64().and_then(serde_json::Number::from_f64).map_or(Value::Null, Value::Number)
                            }
                            _ => Value::Null,
                        };
                        let mut c = serde_json::Map::new();
                        c.insert("logprob".into(), logprob);
                        c.insert("rank".into(), get("rank"));
                        c.insert("decoded_token".into(), get("decoded_token"));
                        (k.clone(), Value::Object(c))
                    })
                    .collect(),
            ),
            _ => Value::Null,
        })
        .collect();
    Some(Value::Array(out))
}
