//! Harmony's structural tags (`vllm/parser/harmony.py`): forced tool calls
//! (model `harmony`) and the request's output format, each after optional
//! `analysis` (and, for calls, `commentary`) messages.

use serde_json::{json, Value};

use crate::structured::format::{any_text, const_string, content, optional, or, sequence, tag};
use crate::structured::{Choice, TagTool};

/// Xgrammar refuses stop tokens under a constraint: `""` stands for them.
fn end() -> Value {
    json!(["<|end|>", ""])
}

fn tag_ending(begin: &str, body: Value) -> Value {
    json!({"type": "tag", "begin": begin, "content": body, "end": end()})
}

const CONSTRAINS: [&str; 2] = [" json", " <|constrain|>json"];
const CHANNELS: [&str; 3] = ["<|channel|>commentary", "<|channel|>analysis", "<|channel|>final"];

fn final_begin(constrain: &str) -> String {
    format!("<|channel|>final{constrain}<|message|>")
}

/// `_assemble_tag`: optional analysis (and commentary) messages, then `body`.
fn assemble(commentary: bool, body: Value) -> Value {
    let message = |channel: &str| {
        let text = tag(&format!("<|channel|>{channel}<|message|>"), any_text(&[]), "<|end|>");
        optional(sequence(vec![text, const_string("<|start|>assistant")]))
    };
    let mut elements = vec![message("analysis")];
    if commentary {
        elements.push(message("commentary"));
    }
    elements.push(body);
    sequence(elements)
}

/// `get_harmony_structural_tag` for function tools.
pub fn tools_tag(tools: &[TagTool], choice: Choice) -> Value {
    let mut tags = Vec::new();
    for tool in tools {
        for pattern in [0, 1] {
            for constrain in CONSTRAINS {
                for channel in CHANNELS {
                    let name = tool.name;
                    let begin = match pattern {
                        0 => format!(" to=functions.{name}{channel}{constrain}<|message|>"),
                        _ => format!("{channel} to=functions.{name}{constrain}<|message|>"),
                    };
                    tags.push(tag_ending(&begin, content(tool.schema(), "json")));
                }
            }
        }
    }
    if choice == Choice::Auto {
        for constrain in CONSTRAINS.into_iter().chain([""]) {
            tags.push(tag_ending(&final_begin(constrain), any_text(&[])));
        }
    }
    assemble(true, or(tags))
}

/// `_adjust_output_format`: the request's format (`structured_outputs_to_format`)
/// in the final message.
pub fn output_tag(format: Value) -> Value {
    let body = if format.get("type").and_then(Value::as_str) == Some("json_schema") {
        or(CONSTRAINS.iter().map(|c| tag_ending(&final_begin(c), format.clone())).collect())
    } else {
        tag_ending(&final_begin(""), format)
    };
    assemble(false, body)
}
