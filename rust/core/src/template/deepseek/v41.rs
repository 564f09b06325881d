//! DeepSeek-V4.1's encoder (vLLM's `deepseek_v41` mode,
//! `tokenizers/deepseek_v41.py` and `deepseek_v41_encoding.py`). It reads
//! the request's own messages (not the parsed conversation), writes the
//! DSML names with a leading space, a numeric reasoning-effort preamble and
//! `<｜System｜>` markers. Its rules, as differences from V4's, are in
//! `tests/models/deepseek_v41/ENCODER.md`.

use serde_json::{json, Map, Value};

use super::v4::{
    last_blocks, push_tool_result, sort_tool_results_by_call_order, tool_result_text, IMAGE_PLACEHOLDER, TASKS,
};
use super::{
    drop_thinking_messages, push_extras, push_tool_calls, py_str, role, str_or_empty, tools_from_openai_format,
    EncodeError, Tags, ASSISTANT, BOS, EOS, THINK_END, THINK_START, USER,
};
use crate::pycompat::repr::{repr_str, repr_value};
use crate::pycompat::truthy;

const SYSTEM: &str = "<｜System｜>";
const TAGS: Tags = Tags { block: " calls", invoke: " invoke", parameter: " parameter" };
const ROLES: [&str; 5] = ["system", "developer", "user", "assistant", "tool"];
const EFFORT_ERROR: &str =
    "DeepSeek V4.1 reasoning_effort must be low, high, xhigh, max, or an integer within [1, 100] in chat_template_kwargs";

/// The encoder's options, as V4.1's `apply_chat_template` reads its keywords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub thinking: bool,
    pub drop_thinking: bool,
    /// The budget the preamble names, 1 to 100.
    pub effort: u8,
}

impl Options {
    /// `thinking`/`enable_thinking` (on when neither is given),
    /// `reasoning_effort` ("none" turns thinking off; none given is high;
    /// low, high, xhigh and max name 50, 75, 75 and 100; an integer 1 to 100
    /// is itself; anything else is refused, thinking or not) and
    /// `drop_thinking` (default on).
    pub fn from_kwargs(kwargs: &Map<String, Value>) -> Result<Options, EncodeError> {
        let set = |k: &str| kwargs.get(k).is_some_and(truthy);
        let mut thinking = if kwargs.contains_key("thinking") || kwargs.contains_key("enable_thinking") {
            set("thinking") || set("enable_thinking")
        } else {
            true
        };
        let effort = match kwargs.get("reasoning_effort") {
            None | Some(Value::Null) => 75,
            Some(Value::String(e)) => match e.as_str() {
                "none" => {
                    thinking = false;
                    75
                }
                "low" => 50,
                "high" | "xhigh" => 75,
                "max" => 100,
                _ => return Err(EncodeError::Invalid(EFFORT_ERROR.into())),
            },
            // `type(effort) is int`: not a bool, not a float.
            Some(Value::Number(n)) => match n.as_i64().filter(|e| (1..=100).contains(e)) {
                Some(e) if !n.is_f64() => e as u8,
                _ => return Err(EncodeError::Invalid(EFFORT_ERROR.into())),
            },
            Some(_) => return Err(EncodeError::Invalid(EFFORT_ERROR.into())),
        };
        let drop_thinking = kwargs.get("drop_thinking").is_none_or(truthy);
        Ok(Options { thinking, drop_thinking, effort })
    }
}

/// `apply_chat_template` of the V4.1 tokenizer up to the prompt text:
/// `messages` the request's messages, `tools` the `tools` keyword, attached
/// to the first system message (an empty one is put first when there is
/// none).
pub fn apply(messages: &[Value], tools: Option<&Value>, options: Options) -> Result<String, EncodeError> {
    let mut messages = normalize(messages)?;
    if let Some(tools) = tools.filter(|t| truthy(t)) {
        let at = match messages.iter().position(|m| role(m) == Some("system")) {
            Some(i) => i,
            None => {
                messages.insert(0, json!({"role": "system", "content": ""}));
                0
            }
        };
        if let Some(system) = messages[at].as_object_mut() {
            system.insert("tools".into(), tools.clone());
        }
    }
    encode_messages(messages, options)
}

/// `_normalize_messages`: roles checked, `reasoning` copied to
/// `reasoning_content`, content parts joined by blank lines (an image is its
/// placeholder), and the placeholder refused in any text. Tool-call
/// arguments must be as vLLM's conversation parsing leaves them in the same
/// dicts (objects: `render::messages::with_parsed_arguments`).
fn normalize(messages: &[Value]) -> Result<Vec<Value>, EncodeError> {
    let mut out = Vec::with_capacity(messages.len());
    for message in messages {
        let mut msg = match message {
            Value::Object(o) => o.clone(),
            _ => Map::new(),
        };
        msg.insert("_image_indices".into(), json!([]));
        let role = msg.get("role").and_then(Value::as_str).map(str::to_string);
        if !role.as_deref().is_some_and(|r| ROLES.contains(&r)) {
            return Err(EncodeError::Invalid(format!("Invalid role: {}", py_str(msg.get("role")))));
        }
        if let Some(reasoning) = msg.get("reasoning").cloned() {
            msg.insert("reasoning_content".into(), reasoning);
        }
        reject_placeholder(msg.get("reasoning_content"))?;
        match msg.get("content").cloned() {
            Some(text @ Value::String(_)) => reject_placeholder(Some(&text))?,
            // vLLM's request model keeps an empty part list of a user
            // message as a lazy validator, which the encoder's deep copy
            // cannot copy.
            Some(Value::Array(blocks)) if blocks.is_empty() && role.as_deref() == Some("user") => {
                return Err(EncodeError::Invalid(
                    "cannot pickle 'pydantic_core._pydantic_core.ValidatorIterator' object".into(),
                ))
            }
            Some(Value::Array(blocks)) => {
                let mut parts = Vec::with_capacity(blocks.len());
                for block in &blocks {
                    match block.get("type").and_then(Value::as_str) {
                        Some("text" | "input_text" | "output_text") => {
                            reject_placeholder(block.get("text"))?;
                            parts.push(py_str(Some(block.get("text").unwrap_or(&Value::String(String::new())))));
                        }
                        Some("image_url" | "input_image" | "image_pil") => parts.push(IMAGE_PLACEHOLDER.into()),
                        _ => {
                            let kind = block.get("type").map_or_else(|| "None".into(), repr_value);
                            return Err(EncodeError::Invalid(format!(
                                "DeepSeek V4.1 supports text and image content only; got {kind}"
                            )));
                        }
                    }
                }
                msg.insert("content".into(), Value::String(parts.join("\n\n")));
            }
            _ => {}
        }
        out.push(Value::Object(msg));
    }
    Ok(out)
}

fn reject_placeholder(text: Option<&Value>) -> Result<(), EncodeError> {
    match text {
        Some(Value::String(s)) if s.contains(IMAGE_PLACEHOLDER) => Err(EncodeError::Invalid(format!(
            "Message text contains image special token {}; provide images as image content parts.",
            repr_str(IMAGE_PLACEHOLDER)
        ))),
        _ => Ok(()),
    }
}

/// `encode_messages` (no context): tool messages merged into user turns,
/// their results in call order, history reasoning dropped, then each
/// message in turn.
fn encode_messages(messages: Vec<Value>, options: Options) -> Result<String, EncodeError> {
    let mut messages = merge_tool_messages(messages);
    sort_tool_results_by_call_order(&mut messages);
    // Tools anywhere keep every turn's reasoning.
    let drop = options.drop_thinking && !messages.iter().any(|m| m.get("tools").is_some_and(truthy));
    if options.thinking && drop {
        let keep = ["user", "system", "tool", "latest_reminder", "direct_search_results"];
        messages = drop_thinking_messages(&messages, &keep, last_user_index(&messages), "reasoning_content");
    }
    let options = Options { drop_thinking: drop, ..options };
    let last_user = last_user_index(&messages);
    let mut prompt = String::from(BOS);
    for index in 0..messages.len() {
        render_message(index, &messages, options, last_user, &mut prompt)?;
    }
    Ok(prompt)
}

/// `merge_tool_messages`: a tool message becomes a `tool_result` block of
/// the user turn before it (or of a new one); a user message's text joins
/// the turn before it unless that turn carries a task. A user message keeps
/// its other fields.
fn merge_tool_messages(messages: Vec<Value>) -> Vec<Value> {
    let mut merged: Vec<Value> = Vec::with_capacity(messages.len());
    for mut msg in messages {
        match role(&msg) {
            Some("tool") => push_tool_result(&mut merged, &msg),
            Some("user") => {
                let blocks = match msg.get("content_blocks").filter(|b| !b.is_null()) {
                    Some(Value::Array(b)) => b.clone(),
                    Some(other) => vec![other.clone()],
                    None => {
                        vec![json!({"type": "text", "text": msg.get("content").cloned().unwrap_or_else(|| "".into())})]
                    }
                };
                let open = merged.last().is_some_and(|m| m.get("task").is_none_or(Value::is_null));
                match last_blocks(&mut merged).filter(|_| open) {
                    Some(existing) => existing.extend(blocks),
                    None => {
                        if let Some(o) = msg.as_object_mut() {
                            o.insert("content_blocks".into(), Value::Array(blocks));
                        }
                        merged.push(msg);
                    }
                }
            }
            _ => merged.push(msg),
        }
    }
    merged
}

/// `find_last_user_index`: the last user or developer message, or a system
/// message past the first, that is not only tool results; -1 when none.
fn last_user_index(messages: &[Value]) -> isize {
    let opens_turn = |(i, m): &(usize, &Value)| {
        let counts = match role(m) {
            Some("user" | "developer") => true,
            Some("system") => *i > 0,
            _ => false,
        };
        let only_results = match m.get("content_blocks") {
            Some(Value::Array(blocks)) if !blocks.is_empty() => !blocks
                .iter()
                .any(|b| matches!(b.get("type").and_then(Value::as_str), Some("text" | "image" | "image_url"))),
            _ => false,
        };
        counts && !only_results
    };
    messages.iter().enumerate().rev().find(opens_turn).map_or(-1, |(i, _)| i as isize)
}

fn render_message(
    index: usize,
    messages: &[Value],
    options: Options,
    last_user: isize,
    prompt: &mut String,
) -> Result<(), EncodeError> {
    let msg = &messages[index];
    let own = role(msg);
    let content = msg.get("content");
    let tools = msg.get("tools").filter(|t| truthy(t)).map(tools_from_openai_format).transpose()?;
    let response_format = msg.get("response_format").filter(|r| truthy(r));
    let thinking = options.thinking;
    // The first message opens with the system marker when thinking (the
    // effort preamble) or when it is a system message.
    if index == 0 && (thinking || own == Some("system")) {
        prompt.push_str(SYSTEM);
    }
    if index == 0 && thinking {
        prompt.push_str(&format!(
            "Reasoning Effort: {} (range 1-100, the higher the value, the more thorough the reasoning)\n\n",
            options.effort
        ));
    }
    match own {
        Some("system") => {
            if index > 0 {
                prompt.push_str(SYSTEM);
            }
            prompt.push_str(&str_or_empty(content));
            push_extras(tools.as_deref(), response_format, &TAGS, prompt);
        }
        Some("developer") => {
            if !content.is_some_and(truthy) {
                return Err(EncodeError::Internal(format!(
                    "Invalid message for role `developer`: {}",
                    repr_message(msg)
                )));
            }
            prompt.push_str(USER);
            prompt.push_str(&py_str(content));
            push_extras(tools.as_deref(), response_format, &TAGS, prompt);
        }
        Some("user") => {
            prompt.push_str(USER);
            match msg.get("content_blocks") {
                Some(Value::Array(blocks)) if !blocks.is_empty() => {
                    let mut parts = Vec::with_capacity(blocks.len());
                    for (i, block) in blocks.iter().enumerate() {
                        parts.push(block_text(i, block)?);
                    }
                    prompt.push_str(&parts.join("\n\n"));
                }
                _ => prompt.push_str(&str_or_empty(content)),
            }
        }
        Some("assistant") => {
            // The answer to a task has no thinking part.
            let after_task = index > 0 && messages[index - 1].get("task").is_some_and(|t| !t.is_null());
            if thinking && !after_task && (!options.drop_thinking || index as isize > last_user) {
                prompt.push_str(&str_or_empty(msg.get("reasoning_content")));
                prompt.push_str(THINK_END);
            }
            prompt.push_str(&str_or_empty(content));
            if let Some(calls) = msg.get("tool_calls").filter(|c| truthy(c)) {
                check_calls(calls)?;
                push_tool_calls(calls, &TAGS, prompt)?;
            }
            if !msg.get("wo_eos").is_some_and(truthy) {
                prompt.push_str(EOS);
            }
        }
        _ => return Err(EncodeError::Internal(format!("Unknown role: {}", py_str(msg.get("role"))))),
    }
    // A generation prompt (or a task's marker) only where the conversation
    // ends or an assistant turn follows.
    if messages.get(index + 1).is_some_and(|m| role(m) != Some("assistant")) {
        return Ok(());
    }
    if let Some(task) = msg.get("task").filter(|t| !t.is_null()) {
        let Some((name, token)) = TASKS.iter().find(|(name, _)| task.as_str() == Some(name)) else {
            let valid: Vec<String> = TASKS.iter().map(|(name, _)| repr_str(name)).collect();
            return Err(EncodeError::Internal(format!(
                "Invalid task: '{}'. Valid tasks are: [{}]",
                py_str(Some(task)),
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
        Some("system") => index > 0,
        _ => false,
    };
    if opens {
        prompt.push_str(ASSISTANT);
        let think = thinking && (!options.drop_thinking || index as isize >= last_user);
        prompt.push_str(if think { THINK_START } else { THINK_END });
    }
    Ok(())
}

/// `tool_calls_from_openai_format`: every call needs a function name.
fn check_calls(calls: &Value) -> Result<(), EncodeError> {
    for call in calls.as_array().into_iter().flatten() {
        let function = call.get("function").ok_or_else(|| EncodeError::Internal("'function'".into()))?;
        function.get("name").ok_or_else(|| EncodeError::Internal("'name'".into()))?;
    }
    Ok(())
}

/// One block of a user turn: its text, a tool result, or a marker for a
/// block kind the encoder does not write.
fn block_text(i: usize, block: &Value) -> Result<String, EncodeError> {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => match block.get("text") {
            None => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(EncodeError::Invalid(format!(
                "sequence item {i}: expected str instance, {} found",
                crate::pycompat::type_name(other)
            ))),
        },
        Some("tool_result") => Ok(tool_result_text(block)),
        _ => Ok(format!("[Unsupported {}]", py_str(block.get("type")))),
    }
}

/// A message as the assertion prints it: pydantic puts a message's declared
/// fields first (`content`, `role`, `name`), then the rest as given.
fn repr_message(msg: &Value) -> String {
    let Value::Object(o) = msg else { return repr_value(msg) };
    let mut ordered = Map::new();
    for key in ["content", "role", "name"] {
        if let Some(v) = o.get(key) {
            ordered.insert(key.into(), v.clone());
        }
    }
    for (k, v) in o {
        if !ordered.contains_key(k) {
            ordered.insert(k.clone(), v.clone());
        }
    }
    repr_value(&Value::Object(ordered))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(messages: Value, tools: Option<Value>, kwargs: Value) -> Result<String, EncodeError> {
        let options = Options::from_kwargs(kwargs.as_object().unwrap())?;
        apply(messages.as_array().unwrap(), tools.as_ref(), options)
    }

    const EFF75: &str = "Reasoning Effort: 75 (range 1-100, the higher the value, the more thorough the reasoning)\n\n";

    #[test]
    fn thinking_opens_with_the_system_marker_and_the_numeric_effort() {
        let m = json!([{"role": "user", "content": "Hi"}]);
        assert_eq!(
            encode(m.clone(), None, json!({})).unwrap(),
            format!("{BOS}{SYSTEM}{EFF75}{USER}Hi{ASSISTANT}<think>")
        );
        assert_eq!(
            encode(m.clone(), None, json!({"reasoning_effort": 20})).unwrap(),
            format!("{BOS}{SYSTEM}{}{USER}Hi{ASSISTANT}<think>", EFF75.replace("75", "20"))
        );
        assert_eq!(
            encode(m.clone(), None, json!({"thinking": false})).unwrap(),
            format!("{BOS}{USER}Hi{ASSISTANT}</think>")
        );
        for bad in [json!("medium"), json!(0), json!(101), json!(50.0), json!(true), json!("50")] {
            let err = encode(m.clone(), None, json!({"thinking": false, "reasoning_effort": bad})).unwrap_err();
            assert_eq!(err, EncodeError::Invalid(EFFORT_ERROR.into()));
        }
    }

    #[test]
    fn a_mid_conversation_system_message_writes_its_marker_and_opens_the_reply() {
        let m = json!([
            {"role": "user", "content": "Q"},
            {"role": "assistant", "content": "A"},
            {"role": "system", "content": "Be brief."},
        ]);
        assert_eq!(
            encode(m, None, json!({"thinking": false})).unwrap(),
            format!("{BOS}{USER}Q{ASSISTANT}</think>A{EOS}{SYSTEM}Be brief.{ASSISTANT}</think>")
        );
    }

    #[test]
    fn calls_are_written_with_spaced_names() {
        let m = json!([
            {"role": "user", "content": "Q"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}},
                {"id": "b", "type": "function", "function": {"name": "g", "arguments": {}}},
            ]},
            {"role": "tool", "content": "r", "tool_call_id": "a"},
        ]);
        let out = encode(m, None, json!({"thinking": false})).unwrap();
        let d = "｜DSML｜";
        let calls = format!(
            "\n\n<{d} calls>\n<{d} invoke name=\"f\">\n<{d} parameter name=\"x\" string=\"false\">1</{d} parameter>\n</{d} invoke>\n<{d} invoke name=\"g\">\n\n</{d} invoke>\n</{d} calls>"
        );
        // The results are a user turn of their own, which opens the reply.
        assert_eq!(
            out,
            format!("{BOS}{USER}Q{ASSISTANT}</think>{calls}{EOS}{USER}<tool_result>r</tool_result>{ASSISTANT}</think>")
        );
    }

    #[test]
    fn errors_read_as_vllms() {
        let err = |m: Value| encode(m, None, json!({})).unwrap_err().to_string();
        assert_eq!(err(json!([{"role": "latest_reminder", "content": "x"}])), "Invalid role: latest_reminder");
        assert_eq!(
            err(json!([{"role": "user", "content": "a <｜deepseek_image｜>"}])),
            "Message text contains image special token '<｜deepseek_image｜>'; provide images as image content parts."
        );
        // (Thinking drops a developer message before the last user turn.)
        let developer = json!([{"role": "developer", "content": ""}, {"role": "user", "content": "Q"}]);
        assert_eq!(
            encode(developer, None, json!({"thinking": false})).unwrap_err().to_string(),
            "Invalid message for role `developer`: {'content': '', 'role': 'developer', '_image_indices': []}"
        );
        assert_eq!(
            err(json!([{"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}]}])),
            "DeepSeek V4.1 supports text and image content only; got 'refusal'"
        );
    }
}
