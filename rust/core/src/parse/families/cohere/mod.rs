//! Cohere Command's output (`cohere_command3` / `cohere_command4`: vLLM's
//! `CohereCommandParser`, which both names' tool and reasoning parsers
//! become). One output filter (`filter`, cohere-melody's `PyFilter` with the
//! cmd3 or cmd4 preset) reads the decoded text, special tokens kept:
//!
//! ```text
//! <|START_THINKING|>REASONING<|END_THINKING|><|START_RESPONSE|>TEXT <co>span</co: 0:[1]><|END_RESPONSE|>
//! <|START_ACTION|>[{"tool_call_id": "0", "tool_name": "NAME", "parameters": {...}}]<|END_ACTION|>
//! ```
//!
//! Render folds the request's tools and JSON schema into one structural tag
//! (`tool_grammar`). Spec: `tests/models/cohere_command/RENDERER.md` 3-5 and
//! `FILTER.md`.

mod filter;
mod tool_grammar;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::ApiError;
use crate::model::Model;
use crate::parse::family::{
    token_ids, Composition, Family, KeepSpecial, ReasoningFamily, ReasoningParserFactory, ToolFamily,
    ToolParserFactory,
};
use crate::parse::snapshot::{Snapshot, SnapshotError};
use crate::parse::unified::{Grammar, GrammarRequest, Placeholder, Route, Selected, UnifiedFactory, UnifiedParser};
use crate::pycompat::json::{dumps_with, DumpOptions};
use crate::pycompat::repr::repr_str;
use crate::parse::{ChatContext, FunctionCall, Registry, ReasoningParser, ToolChoice, ToolParser};
use crate::structured::StrictLevel;
use crate::wire::response::{Delta, DeltaFunctionCall, DeltaToolCall};
use filter::{Filter, FilterOutput, Preset};
use tool_grammar::{structural_tag, TagStyle};

const CMD3: &str = "cohere_command3";
const CMD4: &str = "cohere_command4";

/// One choice's parser: the streaming filter and the call ids it sent
/// before their names (vLLM holds an id until its name arrives).
struct Cohere {
    preset: Preset,
    /// A tool parser is configured and `tool_choice` is not `"none"`.
    tools_allowed: bool,
    include_reasoning: bool,
    filter: Filter,
    pending_ids: BTreeMap<i64, String>,
}

/// A citation as vLLM's `Citation` writes it: without the Cohere v2
/// handler's source map, every source is dropped.
fn citation(c: &filter::Citation) -> Value {
    json!({
        "start": c.start_index,
        "end": c.end_index,
        "text": c.text,
        "sources": [],
        "content_index": null,
        "type": if c.is_thinking { "THINKING_CONTENT" } else { "TEXT_CONTENT" },
    })
}

fn join(parts: impl Iterator<Item = Option<String>>) -> Option<String> {
    let present: Vec<String> = parts.flatten().collect();
    (!present.is_empty()).then(|| present.concat())
}

impl Cohere {
    /// `_tool_call_deltas`: empty names and arguments are placeholders; an
    /// id waits for its call's name.
    fn call_deltas(&mut self, out: &FilterOutput) -> Vec<DeltaToolCall> {
        let mut deltas = Vec::new();
        for call in &out.tool_calls {
            let index = call.index as i64;
            let name = Some(call.name.clone()).filter(|n| !n.is_empty());
            let arguments = Some(call.arguments.clone()).filter(|a| !a.is_empty());
            if !call.id.is_empty() {
                self.pending_ids.insert(index, call.id.clone());
            }
            if name.is_none() && arguments.is_none() {
                continue;
            }
            let opening = name.is_some();
            let id = if opening {
                Some(call.id.clone()).filter(|i| !i.is_empty()).or_else(|| self.pending_ids.remove(&index))
            } else {
                None
            };
            deltas.push(DeltaToolCall {
                id,
                kind: opening.then_some("function"),
                index,
                function: Some(DeltaFunctionCall { name, arguments }),
            });
        }
        deltas
    }

    /// `_to_delta` over one chunk's filter results.
    fn delta(&mut self, results: &[FilterOutput]) -> Option<Delta> {
        let content = join(results.iter().map(|r| r.content.clone()));
        let reasoning = if self.include_reasoning { join(results.iter().map(|r| r.reasoning.clone())) } else { None };
        let mut tool_calls = Vec::new();
        let mut citations = Vec::new();
        for r in results {
            if !r.tool_calls.is_empty() && self.tools_allowed {
                tool_calls.extend(self.call_deltas(r));
            }
            citations.extend(r.citations.iter().map(citation));
        }
        let nonempty = |s: &Option<String>| s.as_deref().is_some_and(|s| !s.is_empty());
        if !nonempty(&content) && !nonempty(&reasoning) && tool_calls.is_empty() && citations.is_empty() {
            return None;
        }
        Some(Delta { content, reasoning, tool_calls, citations, ..Default::default() })
    }
}

impl UnifiedParser for Cohere {
    fn parse(&mut self, text: &str, _: &[i64], _: Option<&[i64]>) -> (Option<String>, Option<String>, Vec<FunctionCall>) {
        let out = Filter::new(self.preset).process_full_text(text);
        let calls = if self.tools_allowed {
            out.tool_calls
                .iter()
                .map(|c| FunctionCall { id: Some(c.id.clone()), name: c.name.clone(), arguments: c.arguments.clone() })
                .collect()
        } else {
            Vec::new()
        };
        (out.reasoning, out.content, calls)
    }

    fn parse_delta(&mut self, text: &str, _: &[i64], _: Option<&[i64]>, finished: bool) -> Option<Delta> {
        let mut results = vec![self.filter.write_decoded(text)];
        if finished {
            results.push(self.filter.flush_partials());
        }
        self.delta(&results)
    }

    fn is_reasoning_end(&self, _: &[i64]) -> bool {
        false
    }
}

impl Snapshot for Cohere {
    fn save_state(&self) -> Result<Value, SnapshotError> {
        Ok(json!([serde_json::to_value(&self.filter)?, serde_json::to_value(&self.pending_ids)?]))
    }

    fn load_state(&mut self, state: Value) -> Result<(), SnapshotError> {
        let mut fields = crate::parse::snapshot::fields(state, 2, "cohere")?;
        self.filter = serde_json::from_value(fields.next().unwrap_or_default())?;
        self.pending_ids = serde_json::from_value(fields.next().unwrap_or_default())?;
        Ok(())
    }
}

struct Factory {
    preset: Preset,
}

impl UnifiedFactory for Factory {
    fn create(&self, ctx: &ChatContext, _: &Arc<Model>, selected: Selected) -> Box<dyn UnifiedParser> {
        Box::new(Cohere {
            preset: self.preset,
            tools_allowed: selected.tools && ctx.tool_choice != ToolChoice::None,
            include_reasoning: ctx.include_reasoning,
            filter: Filter::new(self.preset),
            pending_ids: BTreeMap::new(),
        })
    }

    /// `_apply_structural_tags`: tools and a JSON schema become one tag,
    /// whatever the tool choice.
    fn grammar(&self, request: &GrammarRequest, _: Selected, _: Option<StrictLevel>) -> Result<Option<Grammar>, ApiError> {
        let output = request.output.and_then(Value::as_object);
        if output.and_then(|o| o.get("structural_tag")).is_some_and(|t| !t.is_null()) {
            return Ok(None);
        }
        // A Responses request's `text.format` becomes structured outputs
        // only after `adjust_request`: its tools alone make the tag.
        let (schema, tools): (_, &[Value]) = match request.route {
            Route::Chat => (response_schema(output)?, &request.ctx.tools),
            Route::Responses { tools, .. } => (None, tools),
        };
        if schema.is_none() && tools.is_empty() {
            return Ok(None);
        }
        let Some(architecture) = request.model.architecture.as_deref() else { return Ok(None) };
        let Some(style) = TagStyle::for_architecture(architecture) else {
            return Err(ApiError::bad_request(format!(
                "Failed to build structural_tag guided decoding constraints from this request's JSON schema and/or tools. The configured model architecture ({}) does not support Cohere command structural tags, or the schema cannot be expressed in that format.",
                repr_str(architecture)
            )));
        };
        let tag = structural_tag(style, schema.as_ref(), Some(tools)).map_err(|e| ApiError::bad_request(e.to_string()))?;
        let ascii = DumpOptions { ensure_ascii: true, ..Default::default() };
        Ok(tag.map(|tag| Grammar {
            structural_tag: dumps_with(&tag, &ascii),
            from_message_start: false,
            as_request_outputs: true,
        }))
    }
}

/// The response's JSON schema: `structured_outputs.json_object`, or the
/// schema in `structured_outputs.json` (`response_format` laid over it),
/// unwrapped from an OpenAI `{"name", "schema"}` wrapper.
fn response_schema(output: Option<&serde_json::Map<String, Value>>) -> Result<Option<Value>, ApiError> {
    let Some(o) = output else { return Ok(None) };
    if o.get("json_object").is_some_and(crate::pycompat::truthy) {
        return Ok(Some(json!({"type": "object"})));
    }
    let body = match o.get("json") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(text)) => {
            if text.trim().is_empty() {
                return Err(ApiError::bad_request("structured_outputs.json cannot be empty."));
            }
            match crate::pycompat::json::loads(text) {
                Some(Value::Object(body)) => body,
                Some(_) => return Err(ApiError::bad_request("structured_outputs.json must decode to a JSON object.")),
                None => return Err(ApiError::bad_request("structured_outputs.json must be valid JSON.")),
            }
        }
        Some(Value::Object(body)) => body.clone(),
        Some(_) => return Ok(None),
    };
    let unwrap = |v: &Value| v.as_object().map(|c| c.get("schema").filter(|n| n.is_object()).cloned().unwrap_or_else(|| v.clone()));
    let inner = ["schema", "json_schema"].iter().find_map(|k| body.get(*k).and_then(unwrap));
    Ok(Some(inner.unwrap_or(Value::Object(body))))
}

impl ReasoningParserFactory for Factory {
    fn create(&self, _: &ChatContext, _: &Arc<Model>) -> Box<dyn ReasoningParser> {
        Box::new(Placeholder)
    }
    fn keep_special_tokens(&self) -> bool {
        true
    }
    fn unified(&self) -> Option<&dyn UnifiedFactory> {
        Some(self)
    }
}

impl ToolParserFactory for Factory {
    fn create(&self, _: &ChatContext, _: &Arc<Model>, _: bool) -> Box<dyn ToolParser> {
        Box::new(Placeholder)
    }
    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::Always
    }
    /// Forced choices are not refused: the tag constrains every choice.
    fn native_forced_choices(&self) -> bool {
        true
    }
    fn unified(&self) -> Option<&dyn UnifiedFactory> {
        Some(self)
    }
}

const NEEDS: &str = "Cohere's <|START_THINKING|> / <|END_THINKING|> tokens";

fn load(model: &Model, preset: Preset) -> Result<Arc<Factory>, String> {
    token_ids(model, ["<|START_THINKING|>", "<|END_THINKING|>"], "the vocabulary lacks <|START_THINKING|> / <|END_THINKING|>")?;
    Ok(Arc::new(Factory { preset }))
}

static CMD3_TOOLS: ToolFamily = Family { names: &[CMD3], needs: NEEDS, load: |m| Ok(load(m, Preset::Cmd3)?) };
static CMD4_TOOLS: ToolFamily = Family { names: &[CMD4], needs: NEEDS, load: |m| Ok(load(m, Preset::Cmd4)?) };
static CMD3_REASONING: ReasoningFamily = Family { names: &[CMD3], needs: NEEDS, load: |m| Ok(load(m, Preset::Cmd3)?) };
static CMD4_REASONING: ReasoningFamily = Family { names: &[CMD4], needs: NEEDS, load: |m| Ok(load(m, Preset::Cmd4)?) };
static COMPOSITION: Composition = Composition { names: &[CMD3, CMD4], model_type: None, validate: |_, _, _| Ok(()) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&CMD3_TOOLS);
    registry.tool_family(&CMD4_TOOLS);
    registry.reasoning_family(&CMD3_REASONING);
    registry.reasoning_family(&CMD4_REASONING);
    registry.composition(&COMPOSITION);
}
