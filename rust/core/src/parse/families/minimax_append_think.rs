//! MiniMax-M2's `minimax_m2_append_think` reasoning parser (vLLM's
//! `MiniMaxM2AppendThinkReasoningParser`): no reasoning field at all; the
//! whole output is content, with the `<think>` the template put in the prompt
//! written back in front of it, so clients that keep the raw text see the
//! model's thinking as it was generated. Streams follow vLLM's: they stay in
//! the reasoning phase (all text, tool markup included) until a `</think>`,
//! and after a prompt that closed reasoning hand the raw output, without
//! `<think>`, to the tool parser.

use std::sync::Arc;

use crate::model::Model;
use crate::parse::family::{Family, ReasoningFamily, ReasoningParserFactory};
use crate::parse::{ChatContext, Ids, ReasoningParser, Registry, Texts};
use crate::wire::response::Delta;

const START: &str = "<think>";

struct AppendThink {
    /// `<think>`, `</think>` (vLLM's `vocab.get`: either may be absent).
    start_id: Option<i64>,
    end_id: Option<i64>,
    /// A delta with ids went out (the next ones get no `<think>`).
    started: bool,
    /// The output reached a point where its last think marker was
    /// `</think>` (vLLM's reasoning phase ended there).
    ended: bool,
}

crate::impl_snapshot!(AppendThink { started, ended });

impl AppendThink {
    /// Of the think markers in `ids`, is the last one `</think>`? `None`
    /// when there is none.
    fn last_marker_is_end(&self, ids: &[i64]) -> Option<bool> {
        let marker = ids.iter().rev().find(|&&id| Some(id) == self.end_id || Some(id) == self.start_id)?;
        Some(Some(*marker) == self.end_id)
    }
}

impl ReasoningParser for AppendThink {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_reasoning(&self, text: &str, _ctx: &ChatContext) -> (Option<String>, Option<String>) {
        (None, Some(format!("{START}{text}")))
    }

    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        self.last_marker_is_end(ids).unwrap_or(false)
    }

    /// vLLM scans all ids so far, and stops asking once it is true: the
    /// state keeps the answer.
    fn is_reasoning_end_streaming(&self, _current: &[i64], _delta: &[i64]) -> bool {
        self.ended
    }

    fn extract_content_ids(&self, ids: &[i64]) -> Vec<i64> {
        ids.to_vec()
    }

    fn extract_reasoning_streaming(&mut self, t: &Texts, ids: &Ids) -> Option<Delta> {
        // vLLM's `len(previous_token_ids) == 0`: the first delta with ids.
        let first = !self.started;
        self.started |= !ids.delta.is_empty();
        // vLLM's reasoning phase ends for good at the first delta after
        // which the last think marker is `</think>`.
        self.ended |= self.last_marker_is_end(ids.delta) == Some(true);
        Some(Delta::content(if first { format!("{START}{}", t.delta) } else { t.delta.to_string() }))
    }

    fn reads_history(&self) -> bool {
        false
    }
}

struct Factory {
    start_id: Option<i64>,
    end_id: Option<i64>,
}

impl ReasoningParserFactory for Factory {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        Box::new(AppendThink { start_id: self.start_id, end_id: self.end_id, started: false, ended: false })
    }

    /// Streams are vLLM's: the prompt can end reasoning before the output
    /// starts, and tool markup before a `</think>` stays text.
    fn stream_follows_vllm(&self) -> bool {
        true
    }
}

static REASONING: ReasoningFamily = Family {
    names: &["minimax_m2_append_think"],
    needs: "",
    load: |model| {
        let id = |token: &str| model.tokenizer.token_to_id(token).map(i64::from);
        Ok(Arc::new(Factory { start_id: id(START), end_id: id("</think>") }))
    },
};

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
}
