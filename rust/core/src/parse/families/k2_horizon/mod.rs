//! K2 Horizon (`reasoning/k2_horizon_reasoning_parser.py`,
//! `tool_parsers/k2_horizon_tool_parser.py`): IFM markup. Reasoning sits
//! between the think markers of the request's `reasoning_effort`, and ends
//! at its closer or at `<ifm|tool_calls>`; one group of calls, in JSON or
//! XML (`tool_call_format` template kwarg), read when the group closes.

mod calls;

use std::sync::Arc;

use serde_json::Value;

use crate::error::ApiError;
use crate::model::Model;
use crate::parse::family::{token_ids, Family, KeepSpecial, ReasoningFamily, ReasoningParserFactory, ToolFamily, ToolParserFactory};
use crate::parse::{ChatContext, Ids, ReasoningParser, Registry, Snapshot, Texts, ToolParser};
use crate::pycompat::json::partial_tag_overlap;
use crate::pycompat::repr::repr_value;
use crate::wire::response::Delta;

pub(super) const TOOL_CALLS_START: &str = "<ifm|tool_calls>";

/// `_EFFORT_TOKENS`: the think markers of each `reasoning_effort`.
const EFFORTS: [(&str, &str, &str); 3] = [
    ("high", "<ifm|think>", "</ifm|think>"),
    ("medium", "<ifm|think_fast>", "</ifm|think_fast>"),
    ("low", "<ifm|think_faster>", "</ifm|think_faster>"),
];

const MARKERS: [&str; 6] = [
    "<ifm|think>",
    "</ifm|think>",
    "<ifm|think_fast>",
    "</ifm|think_fast>",
    "<ifm|think_faster>",
    "</ifm|think_faster>",
];

/// The markers' ids, read once at startup (the tool-calls opener may be
/// missing, as in vLLM).
struct Vocab {
    ids: [i64; 6],
    tool_start_id: Option<i64>,
}

impl Vocab {
    fn id(&self, marker: &str) -> Option<i64> {
        MARKERS.iter().position(|m| *m == marker).map(|i| self.ids[i])
    }
}

impl ReasoningParserFactory for Vocab {
    /// vLLM's stream reads the prompt: one that closed its think block
    /// (thinking off) starts the output in content.
    fn stream_follows_vllm(&self) -> bool {
        true
    }

    fn create(&self, ctx: &ChatContext, _model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        let effort = ctx.template_kwargs.get("reasoning_effort").cloned().unwrap_or(Value::from("high"));
        let found = EFFORTS.iter().find(|(name, _, _)| effort.as_str() == Some(*name));
        let failure = found.is_none().then(|| {
            ApiError::bad_request(format!(
                "Unsupported reasoning_effort {}. Supported values: high, medium, low.",
                repr_value(&effort)
            ))
        });
        let (_, start, end) = found.copied().unwrap_or(EFFORTS[0]);
        Box::new(K2Reasoning {
            start,
            end,
            start_id: self.id(start),
            end_id: self.id(end),
            tool_start_id: self.tool_start_id,
            failure,
            buffer: String::new(),
            at_start: true,
            finished: false,
        })
    }
}

/// `K2HorizonReasoningParser`.
struct K2Reasoning {
    start: &'static str,
    end: &'static str,
    start_id: Option<i64>,
    end_id: Option<i64>,
    tool_start_id: Option<i64>,
    /// The constructor's `ValueError` (an unknown effort).
    failure: Option<ApiError>,
    buffer: String,
    at_start: bool,
    finished: bool,
}

impl K2Reasoning {
    /// `_strip_stream_start`: a leading start marker is dropped; `false`
    /// while the buffer may still become one.
    fn strip_stream_start(&mut self) -> bool {
        if !self.at_start {
            return true;
        }
        if self.start.starts_with(self.buffer.as_str()) {
            if self.buffer != self.start {
                return false;
            }
            self.buffer.clear();
        } else if let Some(rest) = self.buffer.strip_prefix(self.start) {
            self.buffer = rest.to_string();
        }
        self.at_start = false;
        true
    }
}

impl ReasoningParser for K2Reasoning {
    fn extract_reasoning(&self, text: &str, _ctx: &ChatContext) -> (Option<String>, Option<String>) {
        let output = text.strip_prefix(self.start).unwrap_or(text);
        let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
        if let Some((reasoning, content)) = output.split_once(self.end) {
            return (Some(reasoning.to_string()), some(content));
        }
        if let Some(at) = output.find(TOOL_CALLS_START) {
            return (Some(output[..at].to_string()), Some(output[at..].to_string()));
        }
        (Some(String::new()), some(output))
    }

    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        for &id in ids.iter().rev() {
            if Some(id) == self.start_id {
                return false;
            }
            if Some(id) == self.end_id || Some(id) == self.tool_start_id {
                return true;
            }
        }
        false
    }

    fn is_reasoning_end_streaming(&self, _current: &[i64], delta: &[i64]) -> bool {
        self.finished || self.end_id.is_some_and(|end| delta.contains(&end))
    }

    fn extract_content_ids(&self, ids: &[i64]) -> Vec<i64> {
        if let Some(i) = self.end_id.and_then(|end| ids.iter().position(|&x| x == end)) {
            return ids[i + 1..].to_vec();
        }
        if let Some(i) = self.tool_start_id.and_then(|t| ids.iter().position(|&x| x == t)) {
            return ids[i..].to_vec();
        }
        if self.finished {
            ids.to_vec()
        } else {
            Vec::new()
        }
    }

    fn extract_reasoning_streaming(&mut self, t: &Texts, _ids: &Ids) -> Option<Delta> {
        if self.finished {
            return (!t.delta.is_empty()).then(|| Delta::content(t.delta));
        }
        self.buffer.push_str(t.delta);
        if !self.strip_stream_start() {
            return None;
        }
        let split = match (self.buffer.find(self.end), self.buffer.find(TOOL_CALLS_START)) {
            (Some(end), _) => (end, end + self.end.len()),
            (None, Some(tool)) => (tool, tool),
            (None, None) => {
                let held = partial_tag_overlap(&self.buffer, self.end).max(partial_tag_overlap(&self.buffer, TOOL_CALLS_START));
                let sendable = self.buffer.len() - held;
                let reasoning: String = self.buffer.drain(..sendable).collect();
                return (!reasoning.is_empty()).then(|| Delta { reasoning: Some(reasoning), ..Default::default() });
            }
        };
        let buffer = std::mem::take(&mut self.buffer);
        self.finished = true;
        let content = (!buffer[split.1..].is_empty()).then(|| buffer[split.1..].to_string());
        Some(Delta { reasoning: Some(buffer[..split.0].to_string()), content, ..Default::default() })
    }

    fn failure(&self) -> Option<ApiError> {
        self.failure.clone()
    }

    fn reads_history(&self) -> bool {
        false
    }

    fn snapshot(&mut self) -> Option<&mut dyn Snapshot> {
        Some(self)
    }
}

crate::impl_snapshot!(K2Reasoning { buffer, at_start, finished });

/// The tool side: a fresh `calls::K2Tools` per request.
struct Tools;

impl ToolParserFactory for Tools {
    fn create(&self, ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(calls::K2Tools::new(ctx))
    }

    /// `adjust_request` only checks `tool_call_format`.
    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::Never
    }

    /// Forced choices are read in the model's own markup.
    fn native_forced_choices(&self) -> bool {
        true
    }
}

static REASONING: ReasoningFamily = Family {
    names: &["k2_horizon"],
    needs: "the <ifm|think...> markers of every reasoning effort as single tokens",
    load: |model| {
        let reason = "K2HorizonReasoningParser reasoning parser could not locate think start/end tokens in the tokenizer!";
        let tool_start_id = model.tokenizer.token_to_id(TOOL_CALLS_START).map(i64::from);
        Ok(Arc::new(Vocab { ids: token_ids(model, MARKERS, reason)?, tool_start_id }))
    },
};

static TOOLS: ToolFamily = Family { names: &["k2_horizon"], needs: "", load: |_| Ok(Arc::new(Tools)) };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
}
