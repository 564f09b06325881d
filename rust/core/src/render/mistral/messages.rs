//! OpenAI chat messages as mistral_common reads them for a v13 tekken
//! tokenizer: `ChatCompletionRequest.from_openai` (message kinds, chunks,
//! tool calls), the request validator in test mode, and the normalizer
//! that merges runs of one role.

use serde_json::{Map, Value};

use crate::pycompat::json::{dumps_with, DumpOptions};
use crate::pycompat::repr::repr_value;

/// A content chunk: text or a `[THINK]` block (`closed`: it ends).
#[derive(Debug, Clone, PartialEq)]
pub enum Chunk {
    Text(String),
    Think { text: String, closed: bool },
}

/// Message content: none, a string, or chunks.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    None,
    Str(String),
    Chunks(Vec<Chunk>),
}

#[derive(Debug, Clone)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as Python's `json.dumps(..., ensure_ascii=False)`.
    pub arguments: String,
}

#[derive(Debug, Clone)]
pub enum Message {
    User(Content),
    System(Content),
    Assistant { content: Content, calls: Vec<ToolCall>, prefix: bool },
    Tool { id: String, name: Option<String>, content: Content },
}

impl Message {
    fn role(&self) -> &'static str {
        match self {
            Message::User(_) => "user",
            Message::System(_) => "system",
            Message::Assistant { .. } => "assistant",
            Message::Tool { .. } => "tool",
        }
    }
}

/// A request mistral_common refuses: its message, verbatim.
pub type Refusal = String;

pub(super) fn json_text(value: &Value) -> String {
    dumps_with(value, &DumpOptions { ensure_ascii: false, ..Default::default() })
}

/// `_content_from_openai` after transformers' `_maybe_adapt_message`
/// (parts without a type are dropped).
fn content(raw: Option<&Value>) -> Result<Content, Refusal> {
    match raw {
        None | Some(Value::Null) => Ok(Content::None),
        Some(Value::String(s)) => Ok(Content::Str(s.clone())),
        Some(Value::Array(parts)) => {
            let mut chunks = Vec::new();
            for part in parts {
                let kind = part.get("type").and_then(Value::as_str).unwrap_or("");
                let text = |key: &str| part.get(key).and_then(Value::as_str).unwrap_or("").to_string();
                match kind {
                    "" => continue,
                    "text" => chunks.push(Chunk::Text(text("text"))),
                    "thinking" => chunks.push(Chunk::Think {
                        text: text("thinking"),
                        closed: part.get("closed").and_then(Value::as_bool).unwrap_or(true),
                    }),
                    other => return Err(format!("'{other}' is not a valid ChunkTypes")),
                }
            }
            Ok(Content::Chunks(chunks))
        }
        Some(other) => Ok(Content::Str(other.to_string())),
    }
}

fn required<'a>(msg: &'a Map<String, Value>, key: &str) -> Result<&'a Value, Refusal> {
    msg.get(key).ok_or_else(|| format!("'{key}'"))
}

fn has_think(content: &Content) -> bool {
    matches!(content, Content::Chunks(c) if c.iter().any(|c| matches!(c, Chunk::Think { .. })))
}

/// `ToolCall.from_openai`: `id`, `type`, `function` (`name`, `arguments`;
/// any other key of `function` is refused). Arguments are already objects
/// (vLLM's `_postprocess_messages`).
fn tool_call(call: &Value) -> Result<ToolCall, Refusal> {
    let function = call.get("function").and_then(Value::as_object).cloned().unwrap_or_default();
    if let Some((key, value)) = function.iter().find(|(k, _)| !["name", "arguments"].contains(&k.as_str())) {
        let kind = crate::pycompat::type_name(value);
        return Err(format!(
            "1 validation error for ToolCall\nfunction.{key}\n  Extra inputs are not permitted [type=extra_forbidden, input_value={}, input_type={kind}]\n    For further information visit https://errors.pydantic.dev/2.14/v/extra_forbidden",
            repr_value(value)
        ));
    }
    let arguments = match function.get("arguments") {
        Some(v @ Value::Object(_)) => json_text(v),
        _ => "{}".to_string(),
    };
    Ok(ToolCall {
        id: call.get("id").and_then(Value::as_str).unwrap_or("null").to_string(),
        name: function.get("name").and_then(Value::as_str).unwrap_or("").to_string(),
        arguments,
    })
}

/// `convert_openai_messages`, then `continue_final_message` marking the
/// last message a prefix.
pub fn convert(messages: &[Value], continue_final: bool) -> Result<Vec<Message>, Refusal> {
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        let msg = m.as_object().cloned().unwrap_or_default();
        let role = msg.get("role").and_then(Value::as_str).unwrap_or("");
        let message = match role {
            "user" => Message::User(content(Some(required(&msg, "content")?))?),
            "system" => Message::System(content(Some(required(&msg, "content")?))?),
            "tool" => {
                let id = required(&msg, "tool_call_id")?.as_str().unwrap_or("").to_string();
                let body = content(Some(required(&msg, "content")?))?;
                let name = msg.get("name").and_then(Value::as_str).map(str::to_string);
                Message::Tool { id, name, content: body }
            }
            "assistant" => {
                let calls = match msg.get("tool_calls") {
                    Some(Value::Array(calls)) => calls.iter().map(tool_call).collect::<Result<Vec<_>, _>>()?,
                    _ => Vec::new(),
                };
                let mut body = content(msg.get("content"))?;
                // vLLM's request model moved `reasoning_content` to `reasoning`.
                let reasoning = msg.get("reasoning").filter(|r| !r.is_null()).or_else(|| msg.get("reasoning_content"));
                if let Some(reasoning) = reasoning.filter(|r| !r.is_null()) {
                    if has_think(&body) {
                        return Err("Message cannot have both thinking chunks in `content` and a top-level `reasoning` or `reasoning_content` field.".into());
                    }
                    let think = Chunk::Think { text: reasoning.as_str().unwrap_or("").to_string(), closed: true };
                    body = match body {
                        Content::None => Content::Chunks(vec![think]),
                        Content::Str(s) => Content::Chunks(vec![think, Chunk::Text(s)]),
                        Content::Chunks(mut c) => {
                            c.insert(0, think);
                            Content::Chunks(c)
                        }
                    };
                }
                Message::Assistant { content: body, calls, prefix: false }
            }
            other => return Err(format!("Unknown message role: {other}")),
        };
        check_chunks(&message)?;
        out.push(message);
    }
    if continue_final {
        if let Some(Message::Assistant { prefix, .. }) = out.last_mut() {
            *prefix = true;
        }
    }
    Ok(out)
}

/// Chunk kinds a role may hold (user and tool messages hold text only
/// here); pydantic's message, without the input it echoes.
fn check_chunks(message: &Message) -> Result<(), Refusal> {
    let (role, body) = match message {
        Message::User(c) => ("user", c),
        Message::Tool { content, .. } => ("tool", content),
        _ => return Ok(()),
    };
    if has_think(body) {
        let name = if role == "user" { "UserMessage" } else { "ToolMessage" };
        return Err(format!(
            "1 validation error for {name}\n  Value error, ThinkChunk cannot be used in {role} message."
        ));
    }
    Ok(())
}

/// Python's `re.match(r"^[a-zA-Z0-9_-]{1,64}$", name)` (`$` also before a
/// final newline).
fn valid_function_name(name: &str) -> bool {
    let name = name.strip_suffix('\n').unwrap_or(name);
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn name_error(name: &str) -> Refusal {
    format!(
        "Function name was {name} but must be a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64."
    )
}

const ID_ERROR: &str = "Tool call id must be a non-empty string other than 'null' for tokenizer version 13 or newer.";

/// The id check of a tool call (`call`) or a tool result: any set id from
/// v13; before, nine ASCII letters or digits (V3's), and `"null"` only
/// while fine-tuning, for a call.
fn id_error(id: &str, version: u32, call: bool) -> Option<String> {
    if version >= 13 {
        return (id.is_empty() || id == "null").then(|| ID_ERROR.to_string());
    }
    if call && id == "null" {
        return Some("Tool call id 'null' is only allowed for the last assistant message in finetuning mode.".into());
    }
    let nine = id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric());
    (!nine).then(|| format!("Tool call id was {id} but must be a-z, A-Z, 0-9, with a length of 9."))
}

/// `MistralRequestValidatorV13` (V11 for tekken v11) in test mode: the
/// order of roles, tool calls paired with results, then each message, then
/// each tool's schema and name.
pub fn validate(messages: &[Message], tools: &[(&str, Option<&Value>)], version: u32) -> Result<(), Refusal> {
    match messages {
        [] => return Err("Conversation must have at least one message".into()),
        [only] if !matches!(only, Message::User(_) | Message::System(_)) => {
            return Err("Conversation must start with a user message or system message".into())
        }
        [.., Message::Assistant { prefix: false, .. }] if messages.len() > 1 => {
            return Err(
                "Expected last role User or Tool (or Assistant with prefix) for serving but got assistant".into()
            )
        }
        _ => {}
    }
    for pair in messages.windows(2) {
        let (prev, cur) = (pair[0].role(), pair[1].role());
        let allowed: &[&str] = match prev {
            "system" => &["user", "assistant", "system"],
            "user" => &["assistant", "system", "user"],
            "assistant" => &["assistant", "user", "tool"],
            _ => &["assistant", "tool", "user"],
        };
        if !allowed.contains(&cur) {
            return Err(format!("Unexpected role '{cur}' after role '{prev}'"));
        }
    }
    // V11 pairs tool results with call ids; V5 (v7) does not.
    let pairs = version >= 11;
    let (mut expected, mut observed): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    for m in messages.iter().skip(1).filter(|_| pairs) {
        match m {
            Message::Tool { id, .. } => {
                if observed.contains(&id.as_str()) {
                    return Err(format!("Duplicate tool call id {id} in tool results"));
                }
                if !expected.contains(&id.as_str()) {
                    return Err(format!("Unexpected tool call id {id} in tool results"));
                }
                observed.push(id);
            }
            Message::Assistant { calls, .. } => {
                if expected.len() != observed.len() {
                    return Err("Not the same number of function calls and responses".into());
                }
                expected.clear();
                observed.clear();
                for call in calls {
                    if expected.contains(&call.id.as_str()) {
                        return Err(format!("Duplicate tool call id {} in assistant message", call.id));
                    }
                    expected.push(&call.id);
                }
            }
            _ => {}
        }
    }
    for m in messages {
        match m {
            Message::Assistant { calls, content, .. } => {
                if version < 11 && has_think(content) {
                    return Err("Unexpected content chunk types in assistant message: ['ThinkChunk']".into());
                }
                for call in calls {
                    if let Some(error) = id_error(&call.id, version, true) {
                        return Err(error);
                    }
                    if !valid_function_name(&call.name) {
                        return Err(name_error(&call.name));
                    }
                }
            }
            Message::Tool { id, name, .. } => {
                if let Some(name) = name.as_deref().filter(|n| !valid_function_name(n)) {
                    return Err(name_error(name));
                }
                if let Some(error) = id_error(id, version, false) {
                    return Err(error);
                }
            }
            _ => {}
        }
    }
    for (name, parameters) in tools {
        if let Some(bad) = parameters.and_then(bad_schema_type) {
            return Err(format!(
                "Invalid tool schema: {} is not valid under any of the given schemas",
                repr_value(bad)
            ));
        }
        if !valid_function_name(name) {
            return Err(name_error(name));
        }
    }
    Ok(())
}

/// A `type` that Draft 7's meta-schema refuses (a simple type name or a
/// list of them), searched through the schema's subschemas in order
/// (`Draft7Validator.check_schema`, for this keyword).
fn bad_schema_type(schema: &Value) -> Option<&Value> {
    const TYPES: [&str; 7] = ["array", "boolean", "integer", "null", "number", "object", "string"];
    let o = schema.as_object()?;
    for (key, value) in o {
        let found = match key.as_str() {
            "type" => {
                let ok = match value {
                    Value::String(t) => TYPES.contains(&t.as_str()),
                    Value::Array(items) => items.iter().all(|t| t.as_str().is_some_and(|t| TYPES.contains(&t))),
                    _ => false,
                };
                (!ok).then_some(value)
            }
            "properties" | "patternProperties" | "definitions" | "dependencies" => {
                value.as_object().and_then(|m| m.values().find_map(bad_schema_type))
            }
            "items" | "allOf" | "anyOf" | "oneOf" => match value {
                Value::Array(list) => list.iter().find_map(bad_schema_type),
                other => bad_schema_type(other),
            },
            "additionalItems"
            | "additionalProperties"
            | "contains"
            | "propertyNames"
            | "if"
            | "then"
            | "else"
            | "not" => bad_schema_type(value),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The normalizer's content aggregation: text pieces of a run joined by
/// blank lines, think blocks kept apart; a string when only text remains.
fn aggregate<'a>(contents: impl IntoIterator<Item = &'a Content>) -> Content {
    let (mut all, mut cur): (Vec<Chunk>, String) = (Vec::new(), String::new());
    let mut cur_started = false;
    let push_text = |text: &str, cur: &mut String, started: &mut bool| {
        if *started {
            cur.push_str("\n\n");
        }
        cur.push_str(text);
        *started = true;
    };
    for content in contents {
        match content {
            Content::None => {}
            Content::Str(s) if s.is_empty() => {}
            Content::Str(s) => push_text(s, &mut cur, &mut cur_started),
            Content::Chunks(chunks) => {
                for chunk in chunks {
                    match chunk {
                        Chunk::Text(t) if t.is_empty() => {}
                        Chunk::Text(t) => push_text(t, &mut cur, &mut cur_started),
                        think => {
                            if cur_started {
                                all.push(Chunk::Text(std::mem::take(&mut cur)));
                                cur_started = false;
                            }
                            all.push(think.clone());
                        }
                    }
                }
            }
        }
    }
    if all.is_empty() {
        return Content::Str(cur);
    }
    if cur_started {
        all.push(Chunk::Text(cur));
    }
    Content::Chunks(all)
}

/// `InstructRequestNormalizerV13`: a run of user or assistant messages
/// becomes one message; system messages stay where they are, one each;
/// tool results of a run follow the order of the calls they answer (from
/// v11; v7 keeps the request's order).
pub fn normalize(messages: Vec<Message>, version: u32) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    let mut latest_calls: Vec<String> = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        let role = messages[i].role();
        let end = (i..messages.len()).find(|&j| messages[j].role() != role).unwrap_or(messages.len());
        let run = &messages[i..end];
        match role {
            "user" => {
                out.push(Message::User(aggregate(run.iter().map(|m| match m {
                    Message::User(c) => c,
                    _ => &Content::None,
                }))));
            }
            "system" => {
                for m in run {
                    if let Message::System(c) = m {
                        out.push(Message::System(aggregate([c])));
                    }
                }
            }
            "assistant" => {
                let mut calls = Vec::new();
                let mut prefix = false;
                let mut contents = Vec::new();
                for m in run {
                    if let Message::Assistant { content, calls: c, prefix: p } = m {
                        contents.push(content);
                        calls.extend(c.iter().cloned());
                        prefix |= *p;
                    }
                }
                latest_calls = calls.iter().map(|c| c.id.clone()).collect();
                out.push(Message::Assistant { content: aggregate(contents), calls, prefix });
            }
            _ => {
                let mut results: Vec<(usize, usize, Message)> = run
                    .iter()
                    .enumerate()
                    .filter_map(|(n, m)| match m {
                        Message::Tool { id, name, content } => {
                            let order = latest_calls.iter().position(|c| c == id).unwrap_or(usize::MAX);
                            let msg =
                                Message::Tool { id: id.clone(), name: name.clone(), content: aggregate([content]) };
                            Some((order, n, msg))
                        }
                        _ => None,
                    })
                    .collect();
                if version >= 11 {
                    results.sort_by_key(|(order, n, _)| (*order, *n));
                }
                out.extend(results.into_iter().map(|(_, _, m)| m));
            }
        }
        i = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text(c: &Content) -> String {
        match c {
            Content::Str(s) => s.clone(),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn runs_of_a_role_merge_with_blank_lines_and_systems_stay_apart() {
        let messages = convert(
            &[
                json!({"role": "system", "content": "S1"}),
                json!({"role": "system", "content": "S2"}),
                json!({"role": "user", "content": "a"}),
                json!({"role": "user", "content": [{"type": "text", "text": "b"}, {"type": "text", "text": "c"}]}),
            ],
            false,
        )
        .expect("converts");
        let normal = normalize(messages, 13);
        assert_eq!(normal.len(), 3);
        match &normal[2] {
            Message::User(c) => assert_eq!(text(c), "a\n\nb\n\nc"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tool_results_follow_the_order_of_the_calls() {
        let call = |id: &str| json!({"id": id, "type": "function", "function": {"name": "f", "arguments": {}}});
        let messages = convert(
            &[
                json!({"role": "user", "content": "q"}),
                json!({"role": "assistant", "tool_calls": [call("aaaaaaaaa"), call("bbbbbbbbb")]}),
                json!({"role": "tool", "tool_call_id": "bbbbbbbbb", "content": "rb"}),
                json!({"role": "tool", "tool_call_id": "aaaaaaaaa", "content": "ra"}),
            ],
            false,
        )
        .expect("converts");
        validate(&messages, &[], 13).expect("valid");
        let bad = json!({"type": "object", "properties": {"x": {"type": "nonsense"}}});
        assert_eq!(
            validate(&messages, &[("f", Some(&bad))], 13).expect_err("refused"),
            "Invalid tool schema: 'nonsense' is not valid under any of the given schemas"
        );
        let ids: Vec<String> = normalize(messages, 13)
            .into_iter()
            .filter_map(|m| match m {
                Message::Tool { id, .. } => Some(id),
                _ => None,
            })
            .collect();
        assert_eq!(ids, ["aaaaaaaaa", "bbbbbbbbb"]);
    }

    #[test]
    fn refusals_name_the_problem_as_mistral_common_does() {
        let err = |m: Vec<Value>| {
            let converted = convert(&m, false);
            converted.and_then(|c| validate(&c, &[], 13)).expect_err("refused")
        };
        assert_eq!(err(vec![json!({"role": "wizard", "content": "x"})]), "Unknown message role: wizard");
        assert_eq!(
            err(vec![
                json!({"role": "user", "content": "x"}),
                json!({"role": "tool", "tool_call_id": "a", "content": "r"})
            ]),
            "Unexpected role 'tool' after role 'user'"
        );
        assert_eq!(err(vec![json!({"role": "user"})]), "'content'");
        assert!(valid_function_name("get_weather\n") && !valid_function_name("get weather"));
    }
}
