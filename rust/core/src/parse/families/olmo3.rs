//! AllenAI OLMo 3: `olmo3` tool calls (vLLM's `Olmo3PythonicToolParser`:
//! one Python call per line inside `<function_calls>`, see `pythonic`) and
//! `olmo3` reasoning (`Olmo3ReasoningParser`): `<think>` / `</think>` are
//! plain text in its vocabulary, so streams cut the text at the markers in
//! a small buffer that holds what may be part of one, and the end of
//! reasoning is found as the tokens `</` (or `Ġ</`), `think`, `>`.

use std::sync::Arc;

use super::pythonic::{Pythonic, Wrapper};
use crate::model::Model;
use crate::parse::family::{token_ids, Family, ReasoningFamily, ReasoningParserFactory, ToolFamily};
use crate::parse::{ChatContext, Ids, ReasoningParser, Registry, Texts};
use crate::wire::response::Delta;

const START: &str = "<think>";
const END: &str = "</think>";

/// `string_overlap(delta, tag)`: how much of `tag` overlaps `delta`, in
/// vLLM's order of tries (the shorter inside the longer, then the shorter's
/// end against the longer's start, then the reverse); `None` when nothing does.
fn tag_overlap(delta: &str, tag: &str) -> Option<usize> {
    let d: Vec<char> = delta.chars().collect();
    let t: Vec<char> = tag.chars().collect();
    let (short, long) = if d.len() < t.len() { (&d, &t) } else { (&t, &d) };
    let contains = |hay: &[char], needle: &[char]| needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle);
    if contains(long, short) {
        return Some(if d.len() < t.len() { d.len() } else { t.len() });
    }
    let n = short.len();
    for i in (1..n).rev() {
        if short[n - i..] == long[..i] {
            return Some(i);
        }
    }
    for i in (1..n).rev() {
        if long[long.len() - i..] == short[..i] {
            return Some(i);
        }
    }
    None
}

fn reasoning(text: String) -> Delta {
    Delta { reasoning: Some(text), ..Default::default() }
}

struct Olmo3Reasoning {
    /// `Ġ</` and `</`; `think` and `>`.
    first_ids: [i64; 2],
    rest_ids: [i64; 2],
    /// `Olmo3ReasoningBuffer`: the text held back, and whether it is in
    /// reasoning (the start) or in content.
    buffer: String,
    in_reasoning: bool,
    /// The last two output ids (an end marker may straddle chunks), and
    /// whether the end marker's ids were seen.
    tail: Vec<i64>,
    ended: bool,
}

crate::impl_snapshot!(Olmo3Reasoning { buffer, in_reasoning, tail, ended });

impl Olmo3Reasoning {
    fn ends_in(&self, ids: &[i64]) -> bool {
        ids.windows(3).any(|w| self.first_ids.contains(&w[0]) && w[1..] == self.rest_ids)
    }

    /// `process_buffer`.
    fn process(&mut self) -> Option<Delta> {
        if let Some(i) = self.buffer.find(START) {
            self.in_reasoning = true;
            let pretext = self.buffer[..i].to_string();
            self.buffer.drain(..i + START.len());
            if i > 0 {
                return Some(Delta::content(pretext));
            }
        }
        if let Some(i) = self.buffer.rfind(END) {
            self.in_reasoning = false;
            let pretext = self.buffer[..i].to_string();
            self.buffer.drain(..i + END.len());
            if i > 0 {
                return Some(reasoning(pretext));
            }
        }
        let text = std::mem::take(&mut self.buffer);
        Some(if self.in_reasoning { reasoning(text) } else { Delta::content(text) })
    }

    /// `add_text`: hold the buffer while the delta may be part of a marker.
    fn add(&mut self, delta: &str) -> Option<Delta> {
        self.buffer.push_str(delta);
        let partial = |tag: &str| tag_overlap(delta, tag).is_some_and(|n| n < tag.chars().count());
        let (partial_start, partial_end) = (partial(START), partial(END));
        if partial_start && self.buffer.contains(START) && !partial_end {
            return self.process();
        }
        if partial_end && self.buffer.contains(END) {
            return self.process();
        }
        if partial_start || partial_end {
            return None;
        }
        self.process()
    }
}

impl ReasoningParser for Olmo3Reasoning {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    /// `^(?:<think>)?(?P<reasoning>.*?)</think>(?P<content>.*)$`.
    fn extract_reasoning(&self, text: &str, _ctx: &ChatContext) -> (Option<String>, Option<String>) {
        let body = text.strip_prefix(START).unwrap_or(text);
        match body.find(END) {
            Some(i) => {
                let (reasoning, content) = (&body[..i], &body[i + END.len()..]);
                let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
                (some(reasoning), some(content))
            }
            None => (None, Some(text.to_string())),
        }
    }

    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        self.ends_in(ids)
    }

    /// vLLM looks at all output ids so far; the state keeps whether the
    /// marker was among the earlier ones, and their last two.
    fn is_reasoning_end_streaming(&self, _current: &[i64], _delta: &[i64]) -> bool {
        self.ended
    }

    fn extract_content_ids(&self, _ids: &[i64]) -> Vec<i64> {
        Vec::new()
    }

    fn extract_reasoning_streaming(&mut self, t: &Texts, ids: &Ids) -> Option<Delta> {
        let window: Vec<i64> = self.tail.iter().chain(ids.delta).copied().collect();
        self.ended |= self.ends_in(&window);
        self.tail = window[window.len().saturating_sub(2)..].to_vec();
        let delta = self.add(t.delta);
        if delta.is_none() && self.buffer.contains(END) {
            return self.process();
        }
        delta
    }

    fn reads_history(&self) -> bool {
        false
    }

    /// Before `</think>` the stream sends reasoning, as vLLM's does, where
    /// batch answers the text without the marker as content.
    fn left_batch(&self, _text: &str) -> bool {
        !self.ended
    }
}

struct Olmo3 {
    first_ids: [i64; 2],
    rest_ids: [i64; 2],
}

impl ReasoningParserFactory for Olmo3 {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        Box::new(Olmo3Reasoning {
            first_ids: self.first_ids,
            rest_ids: self.rest_ids,
            buffer: String::new(),
            in_reasoning: true,
            tail: Vec::new(),
            ended: false,
        })
    }
}

static REASONING: ReasoningFamily = Family {
    names: &["olmo3"],
    needs: "Ġ</, </, think, > in the vocabulary",
    load: |model| {
        // vLLM indexes its vocabulary with these (a KeyError without them).
        let first_ids = token_ids(model, ["Ġ</", "</"], "KeyError: 'Ġ</' or '</' is not in the vocabulary")?;
        let rest_ids = token_ids(model, ["think", ">"], "KeyError: 'think' or '>' is not in the vocabulary")?;
        Ok(Arc::new(Olmo3 { first_ids, rest_ids }))
    },
};

static TOOLS: ToolFamily = Family { names: &["olmo3"], needs: "", load: |_| Ok(Arc::new(Pythonic(Wrapper::Olmo3))) };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parser() -> Olmo3Reasoning {
        Olmo3Reasoning {
            first_ids: [1, 2],
            rest_ids: [3, 4],
            buffer: String::new(),
            in_reasoning: true,
            tail: Vec::new(),
            ended: false,
        }
    }

    #[test]
    fn overlaps_follow_vllms_order_of_tries() {
        assert_eq!(tag_overlap("in", START), Some(2)); // inside the tag
        assert_eq!(tag_overlap("abc<thi", START), Some(4)); // end against start
        assert_eq!(tag_overlap("nk>abc", START), Some(3)); // start against end
        assert_eq!(tag_overlap("a<think>b", START), Some(7)); // whole
        assert_eq!(tag_overlap("xyz", START), None);
    }

    #[test]
    fn streams_split_at_markers_and_hold_what_may_be_one() {
        let mut p = parser();
        let mut out = Vec::new();
        for piece in ["<think>", "plan", "</", "think>", "answer"] {
            let t = Texts { previous: "", current: "", delta: piece };
            let got = p.extract_reasoning_streaming(&t, &Ids { previous: &[], current: &[], delta: &[] });
            out.push(got.map(|d| (d.reasoning, d.content)));
        }
        let r = |s: &str| Some((Some(s.to_string()), None));
        let c = |s: &str| Some((None, Some(s.to_string())));
        assert_eq!(out, vec![r(""), r("plan"), None, c(""), c("answer")]);
    }

    #[test]
    fn the_end_marker_is_found_across_chunks_by_its_ids() {
        let mut p = parser();
        let t = Texts { previous: "", current: "", delta: "" };
        p.extract_reasoning_streaming(&t, &Ids { previous: &[], current: &[], delta: &[9, 2] });
        assert!(!p.is_reasoning_end_streaming(&[], &[]));
        p.extract_reasoning_streaming(&t, &Ids { previous: &[], current: &[], delta: &[3, 4] });
        assert!(p.is_reasoning_end_streaming(&[], &[]));
    }
}
