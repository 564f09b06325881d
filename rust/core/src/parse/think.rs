//! `<think>…</think>` reasoning (`BaseThinkingReasoningParser`), as the
//! `deepseek_r1` family uses it, and `deepseek_v3` (R1 behaviour only when
//! the request turns thinking on, else everything is content).

use std::sync::Arc;

use super::family::ReasoningParserFactory;
use super::{ChatContext, Ids, ReasoningParser, Texts};
use crate::model::Model;
use crate::wire::response::Delta;

fn delta(reasoning: Option<String>, content: Option<String>) -> Option<Delta> {
    Some(Delta { reasoning, content, ..Default::default() })
}

/// DeepSeek-R1-style thinking markers matched by token id.
pub struct ThinkParser {
    pub start: String,
    pub end: String,
    pub start_id: i64,
    pub end_id: i64,
    /// Markers in earlier chunks (vLLM looks for them in all ids so far).
    seen_start: bool,
    seen_end: bool,
    /// Reasoning text went out before any start marker: batch (which drops
    /// it) is out of reach, so a later marker stays, as in vLLM's stream.
    sent_before_start: bool,
    /// vLLM's stream keeps a start marker inside a longer delta as
    /// reasoning text (`ReasoningParserFactory::stream_follows_vllm`).
    pub keeps_start_marker: bool,
}

impl ThinkParser {
    pub fn new(start: &str, end: &str, start_id: i64, end_id: i64) -> ThinkParser {
        let (start, end) = (start.to_string(), end.to_string());
        ThinkParser {
            start,
            end,
            start_id,
            end_id,
            seen_start: false,
            seen_end: false,
            sent_before_start: false,
            keeps_start_marker: false,
        }
    }

    /// `BaseThinkingReasoningParser.extract_reasoning_streaming`.
    fn base_streaming(&self, t: &Texts, ids: &Ids) -> Option<Delta> {
        let d = t.delta;
        if ids.delta.len() == 1 && (ids.delta[0] == self.start_id || ids.delta[0] == self.end_id) {
            return None;
        }
        let split_at_end = |text: &str, from: usize| {
            let end = text.find(&self.end).unwrap_or(text.len());
            let reasoning = text[from.min(end)..end].to_string();
            let content = text.get(end + self.end.len()..).unwrap_or("").to_string();
            delta(Some(reasoning), (!content.is_empty()).then_some(content))
        };
        if self.seen_start {
            if ids.delta.contains(&self.end_id) {
                return split_at_end(d, 0);
            }
            if self.seen_end {
                return delta(None, Some(d.to_string()));
            }
            return delta(Some(d.to_string()), None);
        }
        if ids.delta.contains(&self.start_id) {
            if ids.delta.contains(&self.end_id) {
                let start = d.find(&self.start).map_or(0, |i| i + self.start.len());
                return split_at_end(d, start);
            }
            // vLLM keeps the literal start marker (and any text before it)
            // when it arrives inside a longer delta; batch drops both. Once
            // text before the marker has gone out, batch's answer (which
            // drops it) is out of reach, so the stream keeps it as vLLM's.
            if self.keeps_start_marker || self.sent_before_start {
                return delta(Some(d.to_string()), None);
            }
            let start = d.find(&self.start).map_or(0, |i| i + self.start.len());
            return delta(Some(d[start..].to_string()), None);
        }
        delta(None, Some(d.to_string()))
    }
}

impl ReasoningParser for ThinkParser {
    fn snapshot(&mut self) -> Option<&mut dyn super::Snapshot> {
        Some(self)
    }

    fn extract_reasoning(&self, text: &str, _ctx: &ChatContext) -> (Option<String>, Option<String>) {
        let body = match text.find(&self.start) {
            Some(i) => &text[i + self.start.len()..],
            None => text,
        };
        match body.find(&self.end) {
            None => (Some(body.to_string()), None),
            Some(i) => {
                let content = &body[i + self.end.len()..];
                (Some(body[..i].to_string()), (!content.is_empty()).then(|| content.to_string()))
            }
        }
    }

    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        for &id in ids.iter().rev() {
            if id == self.start_id {
                return false;
            }
            if id == self.end_id {
                return true;
            }
        }
        false
    }

    fn is_reasoning_end_streaming(&self, _current: &[i64], delta: &[i64]) -> bool {
        delta.contains(&self.end_id)
    }

    fn extract_content_ids(&self, ids: &[i64]) -> Vec<i64> {
        let head = &ids[..ids.len().saturating_sub(1)];
        match head.iter().position(|&i| i == self.end_id) {
            Some(p) => ids[p + 1..].to_vec(),
            None => Vec::new(),
        }
    }

    /// `DeepSeekR1ReasoningParser.extract_reasoning_streaming`: without a
    /// start marker anywhere, text is reasoning until the end marker.
    fn extract_reasoning_streaming(&mut self, t: &Texts, ids: &Ids) -> Option<Delta> {
        let out = self.r1_streaming(t, ids);
        let sent = out.as_ref().and_then(|d| d.reasoning.as_deref()).is_some_and(|r| !r.is_empty());
        self.sent_before_start |= sent && !self.seen_start && !ids.delta.contains(&self.start_id);
        self.seen_start |= ids.delta.contains(&self.start_id);
        self.seen_end |= ids.delta.contains(&self.end_id);
        out
    }

    fn reads_history(&self) -> bool {
        false
    }
}

impl ThinkParser {
    fn r1_streaming(&self, t: &Texts, ids: &Ids) -> Option<Delta> {
        let ret = self.base_streaming(t, ids)?;
        if self.seen_start || ids.delta.contains(&self.start_id) {
            return Some(ret);
        }
        let d = t.delta;
        if ids.delta.contains(&self.end_id) {
            let end = d.find(&self.end).unwrap_or(d.len());
            let content = d.get(end + self.end.len()..).unwrap_or("").to_string();
            return delta(Some(d[..end].to_string()), (!content.is_empty()).then_some(content));
        }
        if self.seen_end {
            return delta(None, Some(d.to_string()));
        }
        delta(Some(d.to_string()), None)
    }
}

/// `deepseek_v3`: R1 reasoning when `thinking` / `enable_thinking` is on,
/// otherwise no reasoning at all.
pub struct DeepSeekV3Reasoning {
    pub inner: Option<ThinkParser>,
    /// `poolside_v1`: the token that opens an assistant turn, where the
    /// backward search of `is_reasoning_end` stops (a `</think>` in an
    /// earlier turn does not end this one's reasoning).
    pub turn_start: Option<i64>,
}

impl ReasoningParser for DeepSeekV3Reasoning {
    fn snapshot(&mut self) -> Option<&mut dyn super::Snapshot> {
        Some(self)
    }

    fn extract_reasoning(&self, text: &str, ctx: &ChatContext) -> (Option<String>, Option<String>) {
        match &self.inner {
            Some(p) => p.extract_reasoning(text, ctx),
            None => (None, Some(text.to_string())),
        }
    }
    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        match (&self.inner, self.turn_start) {
            (None, _) => true,
            (Some(p), None) => p.is_reasoning_end(ids),
            (Some(p), Some(turn)) => {
                let this_turn = ids.iter().rposition(|&id| id == turn).map_or(ids, |i| &ids[i + 1..]);
                p.is_reasoning_end(this_turn)
            }
        }
    }
    fn is_reasoning_end_streaming(&self, current: &[i64], delta: &[i64]) -> bool {
        self.inner.as_ref().is_none_or(|p| p.is_reasoning_end_streaming(current, delta))
    }
    fn extract_content_ids(&self, ids: &[i64]) -> Vec<i64> {
        match &self.inner {
            Some(p) => p.extract_content_ids(ids),
            None => ids.to_vec(),
        }
    }
    fn reads_history(&self) -> bool {
        false
    }

    fn extract_reasoning_streaming(&mut self, t: &Texts, ids: &Ids) -> Option<Delta> {
        match &mut self.inner {
            Some(p) => p.extract_reasoning_streaming(t, ids),
            None => (!t.delta.is_empty()).then(|| Delta::content(t.delta)),
        }
    }
}

crate::impl_snapshot!(ThinkParser { seen_start, seen_end, sent_before_start });

impl super::Snapshot for DeepSeekV3Reasoning {
    fn save_state(&self) -> Result<serde_json::Value, super::SnapshotError> {
        self.inner.as_ref().map_or(Ok(serde_json::Value::Null), super::Snapshot::save_state)
    }

    fn load_state(&mut self, state: serde_json::Value) -> Result<(), super::SnapshotError> {
        match &mut self.inner {
            Some(p) => p.load_state(state),
            None if state.is_null() => Ok(()),
            None => Err(super::SnapshotError::Shape("thinking is off: no reasoning state".into())),
        }
    }
}

/// When a `<think>` family reasons, per request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    /// Always (`deepseek_r1`).
    Always,
    /// Only when `thinking` or `enable_thinking` is truthy (`deepseek_v3`).
    OnRequest,
    /// Unless `thinking` or `enable_thinking` is given and neither is
    /// truthy (`holo2`: `DeepSeekV3ReasoningWithThinkingParser`).
    DefaultOn,
    /// By the `reasoning_effort` template kwarg: off when it is `no_think`;
    /// when it is unset or empty, `default_on` (Hunyuan: off for HY3, on
    /// for HY4).
    Effort { default_on: bool },
}

impl Switch {
    fn on(self, ctx: &ChatContext) -> bool {
        match self {
            Switch::Always => true,
            Switch::OnRequest => ctx.kwarg_true("thinking") || ctx.kwarg_true("enable_thinking"),
            Switch::DefaultOn => ctx.thinking_or_enable_thinking(),
            Switch::Effort { default_on } => match ctx.template_kwargs.get("reasoning_effort") {
                Some(effort) if crate::pycompat::truthy(effort) => effort.as_str() != Some("no_think"),
                _ => default_on,
            },
        }
    }
}

/// The factory of a `<think>`-marker family: its markers (matched by token
/// id), when it reasons, and where an assistant turn starts.
pub struct ThinkFamily {
    pub markers: [String; 2],
    pub ids: [i64; 2],
    pub switch: Switch,
    pub turn_start: Option<i64>,
    /// See `ReasoningParserFactory::stream_follows_vllm`.
    pub stream_follows_vllm: bool,
}

impl ThinkFamily {
    /// `<think>` / `</think>` under `switch`.
    pub fn think(ids: [i64; 2], switch: Switch) -> ThinkFamily {
        ThinkFamily {
            markers: ["<think>".into(), "</think>".into()],
            ids,
            switch,
            turn_start: None,
            stream_follows_vllm: false,
        }
    }

    fn parser(&self) -> ThinkParser {
        let mut parser = ThinkParser::new(&self.markers[0], &self.markers[1], self.ids[0], self.ids[1]);
        parser.keeps_start_marker = self.stream_follows_vllm;
        parser
    }
}

impl ReasoningParserFactory for ThinkFamily {
    /// Holo2's constructor turns both switches on in the kwargs it is given
    /// when neither is set.
    fn adjust_template_kwargs(&self, kwargs: &mut serde_json::Map<String, serde_json::Value>) {
        let unset = |k: &str| kwargs.get(k).is_none_or(serde_json::Value::is_null);
        if self.switch == Switch::DefaultOn && unset("thinking") && unset("enable_thinking") {
            kwargs.insert("thinking".into(), true.into());
            kwargs.insert("enable_thinking".into(), true.into());
        }
    }

    fn stream_follows_vllm(&self) -> bool {
        self.stream_follows_vllm
    }

    fn create(&self, ctx: &ChatContext, _model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        if self.switch == Switch::Always {
            return Box::new(self.parser());
        }
        let inner = self.switch.on(ctx).then(|| self.parser());
        Box::new(DeepSeekV3Reasoning { inner, turn_start: self.turn_start })
    }
}

#[cfg(test)]
mod tests {
    use super::ThinkParser;
    use crate::parse::{Ids, Texts};

    /// `(reasoning, content)` of each delta, R1's stream over `chunks` of
    /// `(text, ids)`.
    fn stream(chunks: &[(&str, &[i64])]) -> Vec<(Option<String>, Option<String>)> {
        let mut parser = ThinkParser::new("<think>", "</think>", 1, 2);
        let (mut text, mut ids) = (String::new(), Vec::new());
        let mut out = Vec::new();
        for (delta, delta_ids) in chunks {
            let current = format!("{text}{delta}");
            let current_ids: Vec<i64> = ids.iter().chain(delta_ids.iter()).copied().collect();
            let t = Texts { previous: &text, current: &current, delta };
            let i = Ids { previous: &ids, current: &current_ids, delta: delta_ids };
            let d = crate::parse::ReasoningParser::extract_reasoning_streaming(&mut parser, &t, &i);
            out.push(d.map_or((None, None), |d| (d.reasoning, d.content)));
            (text, ids) = (current, current_ids);
        }
        out
    }

    #[test]
    fn a_start_marker_after_text_already_sent_stays_in_the_reasoning_as_vllms() {
        // "Intro" went out as reasoning before `<think>` came inside a longer
        // delta: batch drops both, so only vLLM's stream, which keeps the
        // marker, can still be matched.
        let got = stream(&[("Intro", &[10]), ("<think>why", &[1, 11]), ("</think>ok", &[2, 12])]);
        let want = |r: &str| Some(r.to_string());
        assert_eq!(got[0], (want("Intro"), None));
        assert_eq!(got[1], (want("<think>why"), None));
        assert_eq!(got[2], (want(""), want("ok")));
        // Nothing sent before: the marker is dropped, as batch drops it.
        let got = stream(&[("<think>why", &[1, 11]), ("</think>ok", &[2, 12])]);
        assert_eq!(got[0], (want("why"), None));
    }
}
