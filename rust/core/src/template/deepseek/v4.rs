//! DeepSeek-V4's encoder (vLLM's `deepseek_v4` mode,
//! `tokenizers/deepseek_v4_encoding.py` and the keywords
//! `tokenizers/deepseek_v4.py` turns into its options). Tool results are
//! merged into user turns as `<tool_result>` blocks, thinking is on unless
//! the keywords turn it off, and the reasoning effort writes a preamble.

use serde_json::{json, Map, Value};

use super::{
    drop_thinking_messages, last_user_index, push_extras, push_tool_calls, py_len, py_str, repr, role, str_or_empty,
    tools_from_openai_format, EncodeError, ASSISTANT, BOS, EOS, THINK_END, THINK_START, USER, V4_TAGS,
};
use crate::pycompat::repr::repr_str;
use crate::pycompat::truthy;

pub(super) const LATEST_REMINDER: &str = "<｜latest_reminder｜>";
/// `DS_TASK_SP_TOKENS`, in the order vLLM's error lists them (a Python set's).
pub(super) const TASKS: [(&str, &str); 6] = [
    ("authority", "<｜authority｜>"),
    ("domain", "<｜domain｜>"),
    ("read_url", "<｜read_url｜>"),
    ("action", "<｜action｜>"),
    ("title", "<｜title｜>"),
    ("query", "<｜query｜>"),
];
pub(super) const IMAGE_PLACEHOLDER: &str = "<｜deepseek_image｜>";

/// `REASONING_EFFORT_PROMPTS["high"]`.
const EFFORT_HIGH: &str = "Reasoning Effort: Absolute maximum with no shortcuts permitted.\nYou MUST be very thorough in your thinking and comprehensively decompose the problem to resolve the root cause, rigorously stress-testing your logic against all potential paths, edge cases, and adversarial scenarios.\nExplicitly write out your entire deliberation process, documenting every intermediate step, considered alternative, and rejected hypothesis to ensure absolutely no assumption is left unchecked.\n\n";
/// `REASONING_EFFORT_PROMPTS["max"]`.
const EFFORT_MAX: &str = "Reasoning Effort: Beyond maximum — exhaustive, relentless, and uncompromising.\nYou MUST reason with the utmost depth and rigor, leaving absolutely nothing to chance: exhaustively decompose the problem into its most fundamental components, trace every causal chain to its root, and resolve the underlying cause rather than any surface symptom.\nDo not stop reasoning until you have independently verified the solution from multiple angles and are certain that no assumption remains unchecked and no error remains undiscovered.\n\n";

/// How much the model is asked to reason: the preamble of the first
/// message in thinking mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effort {
    Low,
    High,
    Max,
}

/// The encoder's options, as the V4 tokenizer derives them from the
/// `apply_chat_template` keywords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub thinking: bool,
    pub drop_thinking: bool,
    pub effort: Option<Effort>,
}

impl Options {
    /// `thinking`/`enable_thinking` (on when neither is given),
    /// `reasoning_effort` (`none` turns thinking off; low, minimal and
    /// medium are low; max is max; any other string is high; none given is
    /// high when thinking) and `drop_thinking` (default on).
    pub fn from_kwargs(kwargs: &Map<String, Value>) -> Options {
        let set = |k: &str| kwargs.get(k).is_some_and(truthy);
        let mut thinking = if kwargs.contains_key("thinking") || kwargs.contains_key("enable_thinking") {
            set("thinking") || set("enable_thinking")
        } else {
            true
        };
        let effort = match kwargs.get("reasoning_effort") {
            Some(Value::String(e)) => match e.as_str() {
                "none" => {
                    thinking = false;
                    None
                }
                "max" => Some(Effort::Max),
                "low" | "minimal" | "medium" => Some(Effort::Low),
                _ => Some(Effort::High),
            },
            _ => thinking.then_some(Effort::High),
        };
        let drop_thinking = kwargs.get("drop_thinking").is_none_or(truthy);
        Options { thinking, drop_thinking, effort }
    }
}

/// `apply_chat_template` of the V4 tokenizer up to the prompt text:
/// `conversation` as vLLM parses it (content format "openai"), `tools` the
/// `tools` keyword, attached to the first system message (one is put first
/// when there is none).
pub fn apply(conversation: &[Value], tools: Option<&Value>, options: Options) -> Result<String, EncodeError> {
    let mut messages = conversation.to_vec();
    if let Some(tools) = tools.filter(|t| py_len(t).is_some_and(|n| n > 0)) {
        let at = match messages.iter().position(|m| role(m) == Some("system")) {
            Some(i) => i,
            None => {
                messages.insert(0, json!({"role": "system"}));
                0
            }
        };
        if let Some(system) = messages[at].as_object_mut() {
            system.insert("tools".into(), tools.clone());
        }
    }
    encode_messages(messages, options)
}

/// `encode_messages` (no context): tool messages merged into user turns,
/// their results put in call order, then each message in turn.
fn encode_messages(messages: Vec<Value>, options: Options) -> Result<String, EncodeError> {
    let mut messages = merge_tool_messages(messages)?;
    sort_tool_results_by_call_order(&mut messages);
    // Tools anywhere keep every turn's reasoning.
    let drop = options.drop_thinking && !messages.iter().any(|m| m.get("tools").is_some_and(truthy));
    if options.thinking && drop {
        let keep = ["user", "system", "tool", "latest_reminder", "direct_search_results"];
        messages = drop_thinking_messages(&messages, &keep, last_user_index(&messages), "reasoning");
    }
    let last_user = last_user_index(&messages);
    let mut prompt = String::from(BOS);
    for index in 0..messages.len() {
        render_message(index, &messages, Options { drop_thinking: drop, ..options }, last_user, &mut prompt)?;
    }
    Ok(prompt)
}

/// `flatten_content_blocks`: a list of parts as one text, parts joined by
/// blank lines; anything else as it is.
fn flatten(content: Option<&Value>) -> Result<Option<Value>, EncodeError> {
    let Some(Value::Array(blocks)) = content else { return Ok(content.cloned()) };
    let mut parts = Vec::with_capacity(blocks.len());
    for (i, block) in blocks.iter().enumerate() {
        let Value::Object(o) = block else {
            parts.push(py_str(Some(block)));
            continue;
        };
        match o.get("type").and_then(Value::as_str) {
            Some("image" | "image_url") => parts.push(IMAGE_PLACEHOLDER.to_string()),
            Some("text") => match o.get("text") {
                None => parts.push(String::new()),
                Some(Value::String(s)) => parts.push(s.clone()),
                Some(other) => {
                    return Err(EncodeError::Invalid(format!(
                        "sequence item {i}: expected str instance, {} found",
                        crate::pycompat::type_name(other)
                    )))
                }
            },
            _ => {
                let kind = o.get("type").map_or_else(|| "None".to_string(), shown_type);
                return Err(EncodeError::Invalid(format!("Unsupported content block type: {kind}")));
            }
        }
    }
    Ok(Some(Value::String(parts.join("\n\n"))))
}

/// `repr()` of a part's `type`.
fn shown_type(kind: &Value) -> String {
    match kind {
        Value::String(s) => repr_str(s),
        other => repr(other),
    }
}

/// `merge_tool_messages`: a tool message becomes a `tool_result` block of a
/// user turn; consecutive user and tool messages share one turn.
fn merge_tool_messages(messages: Vec<Value>) -> Result<Vec<Value>, EncodeError> {
    let mut merged: Vec<Value> = Vec::with_capacity(messages.len());
    for msg in messages {
        match role(&msg) {
            Some("tool") => push_tool_result(&mut merged, &msg),
            Some("user") => {
                let text = flatten(Some(msg.get("content").unwrap_or(&Value::String(String::new()))))?;
                let text = text.unwrap_or(Value::Null);
                let block = json!({"type": "text", "text": text});
                // A turn that carries a task takes no more text.
                let open = merged.last().is_some_and(|m| m.get("task").is_none_or(Value::is_null));
                match last_blocks(&mut merged).filter(|_| open) {
                    Some(blocks) => blocks.push(block),
                    None => {
                        let mut turn = json!({"role": "user", "content": text, "content_blocks": [block]});
                        if let (Some(task), Some(o)) = (msg.get("task"), turn.as_object_mut()) {
                            o.insert("task".into(), task.clone());
                        }
                        merged.push(turn);
                    }
                }
            }
            _ => merged.push(msg),
        }
    }
    Ok(merged)
}

/// A tool message as a `tool_result` block of the last merged user turn,
/// or of a new one.
pub(super) fn push_tool_result(merged: &mut Vec<Value>, msg: &Value) {
    let block = json!({
        "type": "tool_result",
        "tool_use_id": msg.get("tool_call_id").cloned().unwrap_or_else(|| "".into()),
        "content": msg.get("content").cloned().unwrap_or_else(|| "".into()),
    });
    match last_blocks(merged) {
        Some(blocks) => blocks.push(block),
        None => merged.push(json!({"role": "user", "content_blocks": [block]})),
    }
}

/// The blocks of the last merged message when it is a user turn that has them.
pub(super) fn last_blocks(merged: &mut [Value]) -> Option<&mut Vec<Value>> {
    let last = merged.last_mut()?;
    if role(last) != Some("user") {
        return None;
    }
    last.get_mut("content_blocks").and_then(Value::as_array_mut)
}

/// `sort_tool_results_by_call_order`: a turn's tool results in the order of
/// the calls of the assistant message before it, by call id (unknown ids
/// count as the first call; the sort is stable).
pub(super) fn sort_tool_results_by_call_order(messages: &mut [Value]) {
    let mut order: Vec<(String, usize)> = Vec::new();
    for msg in messages.iter_mut() {
        match role(msg) {
            Some("assistant") => {
                let Some(Value::Array(calls)) = msg.get("tool_calls").filter(|c| truthy(c)) else { continue };
                order.clear();
                for (i, call) in calls.iter().enumerate() {
                    let id = call
                        .get("id")
                        .filter(|v| truthy(v))
                        .or_else(|| call.get("function").and_then(|f| f.get("id")))
                        .filter(|v| truthy(v));
                    if let Some(id) = id {
                        let key = py_str(Some(id));
                        match order.iter_mut().find(|(k, _)| *k == key) {
                            Some(entry) => entry.1 = i,
                            None => order.push((key, i)),
                        }
                    }
                }
            }
            Some("user") => {
                let Some(blocks) = msg.get_mut("content_blocks").and_then(Value::as_array_mut) else { continue };
                let is_result = |b: &Value| b.get("type").and_then(Value::as_str) == Some("tool_result");
                let results: Vec<Value> = blocks.iter().filter(|b| is_result(b)).cloned().collect();
                if results.len() < 2 || order.is_empty() {
                    continue;
                }
                let rank = |b: &Value| {
                    let id = b.get("tool_use_id").and_then(Value::as_str);
                    id.and_then(|id| order.iter().find(|(k, _)| k == id)).map_or(0, |(_, i)| *i)
                };
                let mut sorted = results;
                sorted.sort_by_key(rank);
                let mut next = sorted.into_iter();
                for block in blocks.iter_mut().filter(|b| is_result(b)) {
                    if let Some(b) = next.next() {
                        *block = b;
                    }
                }
            }
            _ => {}
        }
    }
}

fn render_message(
    index: usize,
    messages: &[Value],
    options: Options,
    last_user: isize,
    prompt: &mut String,
) -> Result<(), EncodeError> {
    let msg = &messages[index];
    let content = flatten(msg.get("content"))?;
    let content = content.as_ref();
    let tools = msg.get("tools").filter(|t| truthy(t)).map(tools_from_openai_format).transpose()?;
    let response_format = msg.get("response_format").filter(|r| truthy(r));
    let thinking = options.thinking;
    if index == 0 && thinking {
        prompt.push_str(match options.effort {
            Some(Effort::High) => EFFORT_HIGH,
            Some(Effort::Max) => EFFORT_MAX,
            Some(Effort::Low) | None => "",
        });
    }
    let own = role(msg);
    match own {
        Some("system") => {
            prompt.push_str(&str_or_empty(content));
            push_extras(tools.as_deref(), response_format, &V4_TAGS, prompt);
        }
        Some("developer") => {
            if !content.is_some_and(truthy) {
                return Err(EncodeError::Invalid(format!("Invalid message for role `developer`: {}", repr(msg))));
            }
            prompt.push_str(USER);
            prompt.push_str(&py_str(content));
            push_extras(tools.as_deref(), response_format, &V4_TAGS, prompt);
        }
        Some("user") => {
            prompt.push_str(USER);
            match msg.get("content_blocks").filter(|b| truthy(b)) {
                Some(Value::Array(blocks)) => {
                    let parts: Vec<String> = blocks.iter().map(block_text).collect();
                    prompt.push_str(&parts.join("\n\n"));
                }
                _ => prompt.push_str(&str_or_empty(content)),
            }
        }
        Some("latest_reminder") => {
            prompt.push_str(LATEST_REMINDER);
            prompt.push_str(&py_str(content));
        }
        Some("tool") => {
            return Err(EncodeError::Internal(
                "deepseek_v4 merges tool messages into user; please preprocess with merge_tool_messages()".into(),
            ))
        }
        Some("assistant") => {
            // The answer to a task has no thinking part.
            let after_task = index > 0 && messages[index - 1].get("task").is_some_and(|t| !t.is_null());
            if thinking && !after_task && (!options.drop_thinking || index as isize > last_user) {
                prompt.push_str(&str_or_empty(msg.get("reasoning")));
                prompt.push_str(THINK_END);
            }
            prompt.push_str(&str_or_empty(content));
            if let Some(calls) = msg.get("tool_calls").filter(|c| truthy(c)) {
                push_tool_calls(calls, &V4_TAGS, prompt)?;
            }
            prompt.push_str(EOS);
        }
        _ => return Err(EncodeError::Invalid(format!("Invalid role: {}", py_str(msg.get("role"))))),
    }
    // What follows decides the transition: a generation prompt after a user
    // or developer turn, or after a system message that ends the
    // conversation or opens an assistant turn.
    let next = messages.get(index + 1).map(role);
    if next.is_some_and(|r| !matches!(r, Some("assistant" | "latest_reminder"))) {
        return Ok(());
    }
    if let Some(task) = msg.get("task").filter(|t| !t.is_null()) {
        let Some((name, token)) = TASKS.iter().find(|(name, _)| task.as_str() == Some(name)) else {
            let valid: Vec<String> = TASKS.iter().map(|(name, _)| repr_str(name)).collect();
            return Err(EncodeError::Invalid(format!(
                "Invalid task: {}. Valid tasks are: [{}]",
                repr(task),
                valid.join(", ")
            )));
        };
        if *name == "action" {
            prompt.push_str(ASSISTANT);
            prompt.push_str(if thinking { THINK_START } else { THINK_END });
        }
        prompt.push_str(token);
        return Ok(());
    }
    let opens = match own {
        Some("user" | "developer") => true,
        Some("system") => next.is_none() || next == Some(Some("assistant")),
        _ => false,
    };
    if opens {
        prompt.push_str(ASSISTANT);
        let think = thinking && (!options.drop_thinking || index as isize >= last_user);
        prompt.push_str(if think { THINK_START } else { THINK_END });
    }
    Ok(())
}

/// One block of a merged user turn.
fn block_text(block: &Value) -> String {
    let kind = block.get("type").and_then(Value::as_str);
    match kind {
        Some("text") => py_str(Some(block.get("text").unwrap_or(&Value::String(String::new())))),
        Some("image" | "image_url") => IMAGE_PLACEHOLDER.to_string(),
        Some("tool_result") => tool_result_text(block),
        _ => format!("[Unsupported {}]", py_str(block.get("type"))),
    }
}

/// A `tool_result` block as `<tool_result>...</tool_result>` (a list of
/// parts as their texts, blank lines between; V4.1 writes the same).
pub(super) fn tool_result_text(block: &Value) -> String {
    let content = match block.get("content") {
        Some(Value::Array(parts)) => {
            let texts: Vec<String> = parts
                .iter()
                .map(|p| match p.get("type").and_then(Value::as_str) {
                    Some("text") => py_str(Some(p.get("text").unwrap_or(&Value::String(String::new())))),
                    _ => format!("[Unsupported {}]", py_str(p.get("type"))),
                })
                .collect();
            texts.join("\n\n")
        }
        other => py_str(Some(other.unwrap_or(&Value::String(String::new())))),
    };
    format!("<tool_result>{content}</tool_result>")
}

#[cfg(test)]
mod tests {
    use super::super::{DSML, TOOLS_TAIL};
    use super::*;

    fn encode(messages: Value, tools: Option<Value>, kwargs: Value) -> Result<String, EncodeError> {
        let options = Options::from_kwargs(kwargs.as_object().unwrap());
        apply(messages.as_array().unwrap(), tools.as_ref(), options)
    }

    fn text(s: &str) -> Value {
        json!([{"type": "text", "text": s}])
    }

    #[test]
    fn thinking_is_on_by_default_with_the_high_effort_preamble() {
        let m = json!([{"role": "user", "content": text("Hi")}]);
        assert_eq!(
            encode(m.clone(), None, json!({})).unwrap(),
            format!("{BOS}{EFFORT_HIGH}{USER}Hi{ASSISTANT}<think>")
        );
        assert_eq!(
            encode(m.clone(), None, json!({"thinking": false})).unwrap(),
            format!("{BOS}{USER}Hi{ASSISTANT}</think>")
        );
        assert_eq!(
            encode(m.clone(), None, json!({"reasoning_effort": "medium"})).unwrap(),
            format!("{BOS}{USER}Hi{ASSISTANT}<think>")
        );
        assert_eq!(
            encode(m, None, json!({"reasoning_effort": "none"})).unwrap(),
            format!("{BOS}{USER}Hi{ASSISTANT}</think>")
        );
    }

    #[test]
    fn tool_results_join_the_user_turn_in_call_order() {
        let call =
            |id: &str, name: &str| json!({"id": id, "type": "function", "function": {"name": name, "arguments": {}}});
        let m = json!([
            {"role": "user", "content": text("Q")},
            {"role": "assistant", "content": [], "tool_calls": [call("a", "f"), call("b", "g")]},
            {"role": "tool", "content": "second", "tool_call_id": "b"},
            {"role": "tool", "content": "first", "tool_call_id": "a"},
            {"role": "user", "content": text("thanks")},
        ]);
        let out = encode(m, None, json!({"thinking": false})).unwrap();
        let calls = format!(
            "\n\n<{DSML}tool_calls>\n<{DSML}invoke name=\"f\">\n\n</{DSML}invoke>\n<{DSML}invoke name=\"g\">\n\n</{DSML}invoke>\n</{DSML}tool_calls>"
        );
        assert_eq!(
            out,
            format!("{BOS}{USER}Q{ASSISTANT}</think>{calls}{EOS}{USER}<tool_result>first</tool_result>\n\n<tool_result>second</tool_result>\n\nthanks{ASSISTANT}</think>")
        );
    }

    #[test]
    fn tools_attach_to_the_first_system_message() {
        let tools = json!([{"type": "function", "function": {"name": "f"}}]);
        let m = json!([{"role": "system", "content": text("Be brief.")}, {"role": "user", "content": text("Q")}]);
        let out = encode(m, Some(tools), json!({"thinking": false})).unwrap();
        assert!(out.starts_with(&format!("{BOS}Be brief.\n\n## Tools\n\n")));
        assert!(out.ends_with(&format!("{{\"name\": \"f\"}}{TOOLS_TAIL}{USER}Q{ASSISTANT}</think>")));
    }

    #[test]
    fn errors_read_as_vllms() {
        let err = |m: Value| encode(m, None, json!({})).unwrap_err().to_string();
        assert_eq!(err(json!([{"role": "wizard", "content": "x"}])), "Invalid role: wizard");
        assert_eq!(
            err(json!([{"role": "user", "content": [{"type": "tool_reference", "name": "x"}]}])),
            "Unsupported content block type: 'tool_reference'"
        );
        assert_eq!(encode(json!([]), None, json!({})).unwrap(), BOS);
    }
}
