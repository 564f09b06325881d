//! DeepSeek-V3.2's encoder (vLLM's `deepseek_v32` mode, `tokenizers/
//! deepseek_v32_encoding.py`). Its rules, quirks and error texts are in
//! `tests/models/deepseek_v32/ENCODER.md`.

use serde_json::{Map, Value};

use super::{
    drop_thinking_messages, last_user_index, push_response_format, push_tool_calls, py_len, py_str, repr, role,
    str_or_empty, tool_schemas, tools_from_openai_format, EncodeError, ASSISTANT, BOS, DSML, EOS, THINK_END,
    THINK_START, USER, V32_TAGS,
};
use crate::pycompat::truthy;

/// The system text that lists the tools (`TOOLS_SYSTEM_TEMPLATE`), with
/// `{dsml}` for the DSML marker; the schemas and `</functions>\n` follow it.
const TOOLS_HEAD: &str = r#"## Tools
You have access to a set of tools you can use to answer the user's question.
You can invoke functions by writing a "<{dsml}function_calls>" block like the following as part of your reply to the user:
<{dsml}function_calls>
<{dsml}invoke name="$FUNCTION_NAME">
<{dsml}parameter name="$PARAMETER_NAME" string="true|false">$PARAMETER_VALUE</{dsml}parameter>
...
</{dsml}invoke>
<{dsml}invoke name="$FUNCTION_NAME2">
...
</{dsml}invoke>
</{dsml}function_calls>
String and scalar parameters should be specified as is without any escaping or quotes, while lists and objects should use JSON format. The "string" attribute should be set to "true" for string type parameters and "false" for other types (numbers, booleans, arrays, objects).
If the thinking_mode is enabled, then after function results you should strongly consider outputting a thinking block. Here is an example:
<{dsml}function_calls>
...
</{dsml}function_calls>
<function_results>
...
</function_results>
<think>...thinking about results</think>
Here are the functions available in JSONSchema format:
<functions>
"#;

/// `apply_chat_template` of the V3.2 tokenizer, up to the prompt text:
/// `conversation` as vLLM parses it (content format "string"), `tools` the
/// `tools` keyword (the request's tool dicts unless the kwargs replace them),
/// `thinking` its `thinking or enable_thinking`.
pub fn apply(conversation: &[Value], tools: Option<&Value>, thinking: bool) -> Result<String, EncodeError> {
    let mut messages = conversation.to_vec();
    if let Some(tools) = tools.filter(|t| py_len(t).is_some_and(|n| n > 0)) {
        // The tools go in a message of their own, ahead of everything.
        let mut system = Map::new();
        system.insert("role".into(), "system".into());
        system.insert("tools".into(), tools.clone());
        messages.insert(0, Value::Object(system));
    }
    let last = messages.last().ok_or_else(|| EncodeError::Internal("list index out of range".into()))?;
    let drop_thinking = role(last) == Some("user");
    encode_messages(&messages, thinking, drop_thinking)
}

/// `encode_messages`: BOS, then every message in turn.
fn encode_messages(messages: &[Value], thinking: bool, drop_thinking: bool) -> Result<String, EncodeError> {
    let dropped;
    let full = if thinking && drop_thinking {
        dropped = drop_thinking_messages(messages, &["user", "system", "tool"], last_user_index(messages), "reasoning");
        &dropped
    } else {
        messages
    };
    let last_user = last_user_index(full);
    let mut prompt = String::from(BOS);
    // The loop runs over the original count: a shrunk list ends in an
    // index error, as the Python does.
    for index in 0..messages.len() {
        render_message(index, full, thinking, last_user, &mut prompt)?;
    }
    Ok(prompt)
}

fn render_message(
    index: usize,
    messages: &[Value],
    thinking: bool,
    last_user: isize,
    prompt: &mut String,
) -> Result<(), EncodeError> {
    let Some(msg) = messages.get(index) else {
        return Err(EncodeError::Invalid(format!(
            "Index {index} out of range for messages list of length {}",
            messages.len()
        )));
    };
    let content = msg.get("content");
    let tools = msg.get("tools").filter(|t| truthy(t)).map(tools_from_openai_format).transpose()?;
    let response_format = msg.get("response_format").filter(|r| truthy(r));
    let last_turn = index as isize == last_user;
    match role(msg) {
        Some("system") => {
            prompt.push_str(&str_or_empty(content));
            push_extras(tools.as_deref(), response_format, prompt);
        }
        Some("developer") => {
            if !content.is_some_and(truthy) {
                return Err(EncodeError::Invalid(format!("Invalid message for role `developer`: {}", repr(msg))));
            }
            prompt.push_str(USER);
            push_extras(tools.as_deref(), response_format, prompt);
            prompt.push_str("\n\n# The user's message is: ");
            prompt.push_str(&py_str(content));
            prompt.push_str(ASSISTANT);
            prompt.push_str(if last_turn && thinking { THINK_START } else { THINK_END });
        }
        Some("user") => {
            prompt.push_str(USER);
            prompt.push_str(&py_str(content));
            prompt.push_str(ASSISTANT);
            prompt.push_str(if last_turn && thinking { THINK_START } else { THINK_END });
        }
        Some("tool") => render_tool_result(index, messages, thinking, last_user, prompt)?,
        Some("assistant") => {
            let calls = msg.get("tool_calls").filter(|c| truthy(c));
            if thinking && index as isize > last_user {
                let reasoning = msg.get("reasoning");
                if !(reasoning.is_some_and(truthy) || calls.is_some()) {
                    return Err(EncodeError::Invalid(format!(
                        "ThinkingMode: thinking, invalid message without reasoning/tool_calls `{}` after last user message",
                        repr(msg)
                    )));
                }
                // No opener: the user turn or the tool results wrote it.
                prompt.push_str(&str_or_empty(reasoning));
                prompt.push_str(THINK_END);
            }
            prompt.push_str(&str_or_empty(content));
            if let Some(calls) = calls {
                push_tool_calls(calls, &V32_TAGS, prompt)?;
            }
            // (`prefix`, which would leave the message open, never survives
            // vLLM's message parsing.)
            prompt.push_str(EOS);
        }
        other => {
            let shown = other.map_or_else(|| py_str(msg.get("role")), str::to_string);
            return Err(EncodeError::Invalid(format!("Invalid role: {shown}")));
        }
    }
    Ok(())
}

/// A tool result: matched to the assistant message before the run of tool
/// messages by position only (ids are not read).
fn render_tool_result(
    index: usize,
    messages: &[Value],
    thinking: bool,
    last_user: isize,
    prompt: &mut String,
) -> Result<(), EncodeError> {
    // Python indexing: -1 is the last message.
    let at = |i: isize| &messages[if i < 0 { messages.len() - 1 } else { i as usize }];
    let mut prev = index as isize - 1;
    let mut assistant = at(prev);
    while prev >= 0 && role(assistant) == Some("tool") {
        prev -= 1;
        assistant = at(prev);
    }
    if !(index == 0 || prev >= 0 && role(assistant) == Some("assistant")) {
        return Err(EncodeError::Invalid(format!("Invalid messages at {index}:\n{}", repr(assistant))));
    }
    let order = index as isize - prev;
    let calls = assistant.get("tool_calls").filter(|c| truthy(c)).and_then(py_len).unwrap_or(0) as isize;
    if calls < order {
        return Err(EncodeError::Invalid("No tool calls but found tool output".into()));
    }
    if order == 1 {
        prompt.push_str("\n\n<function_results>");
    }
    prompt.push_str("\n<result>");
    prompt.push_str(&py_str(messages[index].get("content")));
    prompt.push_str("</result>");
    if order == calls {
        prompt.push_str("\n</function_results>\n\n");
        prompt.push_str(if index as isize >= last_user && thinking { THINK_START } else { THINK_END });
    }
    Ok(())
}

/// A system or developer message's tools and response format.
fn push_extras(tools: Option<&[Value]>, response_format: Option<&Value>, prompt: &mut String) {
    if let Some(tools) = tools {
        prompt.push_str("\n\n");
        prompt.push_str(&TOOLS_HEAD.replace("{dsml}", DSML));
        prompt.push_str(&tool_schemas(tools));
        prompt.push_str("\n</functions>\n");
    }
    if let Some(rf) = response_format {
        prompt.push_str("\n\n");
        push_response_format(rf, prompt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn encode(messages: Value, tools: Option<Value>, thinking: bool) -> Result<String, EncodeError> {
        apply(messages.as_array().unwrap(), tools.as_ref(), thinking)
    }

    #[test]
    fn every_user_turn_is_followed_by_the_assistant_marker_and_a_think_marker() {
        let m = json!([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"},
                       {"role": "user", "content": "Q"}]);
        assert_eq!(
            encode(m.clone(), None, false).unwrap(),
            format!("{BOS}{USER}Hi{ASSISTANT}</think>Yo{EOS}{USER}Q{ASSISTANT}</think>")
        );
        assert_eq!(
            encode(m, None, true).unwrap(),
            format!("{BOS}{USER}Hi{ASSISTANT}</think>Yo{EOS}{USER}Q{ASSISTANT}<think>")
        );
    }

    #[test]
    fn a_tool_call_and_its_result_render_as_dsml() {
        let m = json!([
            {"role": "user", "content": "Q"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "type": "function",
                "function": {"name": "f", "arguments": {"city": "Paris", "n": 2}}}]},
            {"role": "tool", "content": "ok", "tool_call_id": "a"},
        ]);
        let text = encode(m, None, true).unwrap();
        let call = format!(
            "\n\n<{DSML}function_calls>\n<{DSML}invoke name=\"f\">\n<{DSML}parameter name=\"city\" string=\"true\">Paris</{DSML}parameter>\n<{DSML}parameter name=\"n\" string=\"false\">2</{DSML}parameter>\n</{DSML}invoke>\n</{DSML}function_calls>"
        );
        assert_eq!(
            text,
            format!("{BOS}{USER}Q{ASSISTANT}<think></think>{call}{EOS}\n\n<function_results>\n<result>ok</result>\n</function_results>\n\n<think>")
        );
    }

    #[test]
    fn tools_are_a_system_message_of_their_own_ahead_of_the_rest() {
        let tools = json!([{"type": "function", "function": {"name": "f", "description": null, "parameters": null}}]);
        let text = encode(
            json!([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q"}]),
            Some(tools),
            false,
        )
        .unwrap();
        assert!(text.starts_with(&format!("{BOS}\n\n## Tools\n")));
        assert!(text.ends_with(&format!(
            "<functions>\n{{\"name\": \"f\", \"description\": null, \"parameters\": null}}\n</functions>\nBe brief.{USER}Q{ASSISTANT}</think>"
        )));
    }

    #[test]
    fn errors_read_as_vllms() {
        let err = |m: Value, thinking| encode(m, None, thinking).unwrap_err().to_string();
        assert_eq!(err(json!([{"role": "wizard", "content": "x"}]), false), "Invalid role: wizard");
        assert_eq!(
            err(json!([{"role": "developer", "content": "", "tools": null}]), false),
            "Invalid message for role `developer`: {'role': 'developer', 'content': '', 'tools': None}"
        );
        // An earlier developer message is dropped in thinking mode, and the
        // loop then runs past the shrunk list.
        assert_eq!(
            err(
                json!([{"role": "developer", "content": "d", "tools": null}, {"role": "assistant", "content": "a"},
                       {"role": "user", "content": "u"}]),
                true
            ),
            "Index 2 out of range for messages list of length 2"
        );
        assert_eq!(
            err(json!([{"role": "user", "content": "u"}, {"role": "assistant", "content": "Sure."}]), true),
            "ThinkingMode: thinking, invalid message without reasoning/tool_calls `{'role': 'assistant', 'content': 'Sure.'}` after last user message"
        );
        assert_eq!(
            err(json!([{"role": "user", "content": "u"}, {"role": "tool", "content": "r"}]), false),
            "Invalid messages at 1:\n{'role': 'user', 'content': 'u'}"
        );
        assert_eq!(err(json!([{"role": "tool", "content": "r"}]), false), "No tool calls but found tool output");
        assert_eq!(encode(json!([]), None, false), Err(EncodeError::Internal("list index out of range".into())));
    }
}
