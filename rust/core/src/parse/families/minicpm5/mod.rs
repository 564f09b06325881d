//! OpenBMB MiniCPM5 (`minicpm5`, vLLM's `MiniCPM5XMLToolParser`): calls as
//! `<function name="NAME"><param name="KEY">VALUE</param></function>`
//! blocks, each read as XML with a regex fallback (`block`), values typed
//! by the tool's schema, blocks that do not make a valid call of an offered
//! tool left as text.
//!
//! Batch drops all content once a call is found, else keeps the text
//! (blocks included) after the last `</think>`. The stream (`stream`) sends
//! text around blocks as content and each complete block as one call.

mod block;
mod normalize;
mod pyjson;
mod stream;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use block::{dumps_args, parse_block, py_strip, Tools, FUNC_BLOCK};
use normalize::normalize;
use stream::{Minicpm5Stream, START};

use crate::ids::random_hex_id;
use crate::model::Model;
use crate::parse::family::{Family, KeepSpecial, ToolFamily, ToolParserFactory};
use crate::parse::{ChatContext, Extracted, FunctionCall, Ids, Registry, Texts, ToolParser};
use crate::wire::response::Delta;

/// `_strip_thinking_content`: what follows the last `</think>`, unless
/// that is blank.
fn strip_thinking(text: &str) -> String {
    match text.rsplit_once("</think>") {
        Some((_, after)) if !after.trim_start_matches(crate::pycompat::str::py_isspace).is_empty() => {
            after.trim_start_matches(crate::pycompat::str::py_isspace).to_string()
        }
        _ => text.to_string(),
    }
}

/// `extract_tool_calls`.
fn extract(text: &str, ctx: &ChatContext) -> Extracted {
    let output = normalize(text);
    if !output.contains(START) {
        return Extracted { tools_called: false, calls: Vec::new(), content: Some(strip_thinking(&output)) };
    }
    let tools = Tools::new(ctx);
    let mut calls = Vec::new();
    let mut text_parts = String::new();
    let mut last = 0;
    for m in FUNC_BLOCK.finditer(&output) {
        text_parts.push_str(&output[last..m.start]);
        let block = &output[m.start..m.end];
        match parse_block(block, &tools) {
            Some((name, args)) => {
                let Ok(arguments) = dumps_args(&args) else {
                    // vLLM's `except`: the whole output as content.
                    return Extracted { tools_called: false, calls: Vec::new(), content: Some(output) };
                };
                calls.push(FunctionCall { id: Some(format!("call_{}", random_hex_id())), name, arguments });
            }
            None => text_parts.push_str(block),
        }
        last = m.end;
    }
    text_parts.push_str(&output[last..]);
    let content = strip_thinking(py_strip(&text_parts));
    let tools_called = !calls.is_empty();
    Extracted { tools_called, calls, content: (!tools_called).then_some(content) }
}

#[derive(Default)]
struct Minicpm5Tools {
    stream: Minicpm5Stream,
}

crate::impl_snapshot!(Minicpm5Tools {} nested { stream });

impl ToolParser for Minicpm5Tools {
    fn extract_tool_calls(&self, text: &str, ctx: &ChatContext) -> Extracted {
        extract(text, ctx)
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, ctx: &ChatContext) -> Option<Delta> {
        self.stream.push(t.delta, ctx)
    }

    fn remaining_unstreamed_args(&mut self) -> String {
        self.stream.calls().remaining()
    }

    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn reads_history(&self) -> bool {
        false
    }

    fn left_batch(&self) -> bool {
        self.stream.repeated_block
    }
}

struct Factory;

impl ToolParserFactory for Factory {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(Minicpm5Tools::default())
    }

    /// `adjust_request` keeps the special XML tags whenever tools are
    /// offered and not switched off.
    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::WithTools
    }
}

static TOOLS: ToolFamily = Family { names: &["minicpm5"], needs: "", load: |_| Ok(Arc::new(Factory)) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
}
