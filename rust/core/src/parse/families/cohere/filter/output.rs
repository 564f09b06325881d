//! What one filter call returns, and how the pieces one call produces fold
//! into it (melody's `aggregate`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The result of one `write_decoded`, `flush_partials` or
/// `process_full_text` call: melody's `FilterAggregatedResult` as vLLM's
/// `CohereCommandParser` reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilterOutput {
    /// Answer text emitted by this call (never `Some("")`).
    pub content: Option<String>,
    /// Thinking text emitted by this call (never `Some("")`).
    pub reasoning: Option<String>,
    /// One entry per tool-call index this call touched, ascending by index.
    pub tool_calls: Vec<ToolCallDelta>,
    /// Citations completed by this call, in text order.
    pub citations: Vec<Citation>,
}

/// The fragments of one tool call emitted by a single filter call. In a
/// stream the id, the name and the argument pieces usually arrive in
/// different calls; fields with nothing new are empty.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallDelta {
    /// Position of the call in the output, from 0, across all action blocks.
    pub index: usize,
    /// The model's `tool_call_id` text, raw (JSON escapes not decoded).
    pub id: String,
    /// The model's `tool_name` text, raw.
    pub name: String,
    /// A piece of the raw `parameters` JSON text, to be appended.
    pub arguments: String,
}

/// A `<co>text</co: sources>` span. Indices count chars (Unicode scalar
/// values) of the text emitted in the current answer or thinking block.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Citation {
    pub start_index: usize,
    pub end_index: usize,
    /// The cited text, without markers.
    pub text: String,
    pub sources: Vec<CitationSource>,
    /// The citation sits in thinking text rather than in the answer.
    pub is_thinking: bool,
}

/// One `tool_call_index:[result indices]` group of a citation's closer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CitationSource {
    pub tool_call_index: usize,
    pub tool_result_indices: Vec<usize>,
}

/// Gathers the pieces of one filter call in emission order.
#[derive(Default)]
pub(super) struct Collector {
    content: Option<String>,
    reasoning: Option<String>,
    calls: BTreeMap<usize, ToolCallDelta>,
    citations: Vec<Citation>,
}

impl Collector {
    pub(super) fn text(&mut self, text: &str, reasoning: bool) {
        if text.is_empty() {
            return;
        }
        let target = if reasoning { &mut self.reasoning } else { &mut self.content };
        target.get_or_insert_with(String::new).push_str(text);
    }

    pub(super) fn citations(&mut self, citations: Vec<Citation>) {
        self.citations.extend(citations);
    }

    fn call(&mut self, index: usize) -> &mut ToolCallDelta {
        self.calls.entry(index).or_insert_with(|| ToolCallDelta { index, ..ToolCallDelta::default() })
    }

    /// Callers pass non-empty text only: an empty field must not create an entry.
    pub(super) fn tool_id(&mut self, index: usize, id: &str) {
        id.clone_into(&mut self.call(index).id);
    }

    pub(super) fn tool_name(&mut self, index: usize, name: &str) {
        name.clone_into(&mut self.call(index).name);
    }

    pub(super) fn tool_arguments(&mut self, index: usize, arguments: &str) {
        self.call(index).arguments.push_str(arguments);
    }

    pub(super) fn finish(self) -> FilterOutput {
        FilterOutput {
            content: self.content,
            reasoning: self.reasoning,
            tool_calls: self.calls.into_values().collect(),
            citations: self.citations,
        }
    }
}
