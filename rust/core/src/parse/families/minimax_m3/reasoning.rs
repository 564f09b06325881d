//! `MiniMaxM3ReasoningParser`: `<mm:think>...</mm:think>` found in the
//! text (the markers may arrive as several tokens), thinking already open
//! when the request's `thinking_mode` is `"enabled"` (the template
//! prefills the start marker), and a stray leading `</mm:think>` dropped.

use std::sync::Arc;

use serde_json::Value;

use crate::model::Model;
use crate::parse::family::ReasoningParserFactory;
use crate::parse::{ChatContext, Ids, ReasoningParser, Snapshot, Texts};
use crate::wire::response::Delta;

pub(super) const START: &str = "<mm:think>";
pub(super) const END: &str = "</mm:think>";

/// The markers' token ids, read once from the vocabulary.
pub(super) struct Factory {
    start_ids: Arc<[i64]>,
    end_ids: Arc<[i64]>,
}

impl Factory {
    pub(super) fn load(model: &Model) -> Result<Factory, String> {
        let known = |t: &str| model.tokenizer.token_to_id(t).is_some();
        if !known(START) || !known(END) {
            return Err(
                "MiniMaxM3ReasoningParser reasoning parser could not locate think start/end tokens in the tokenizer!"
                    .into(),
            );
        }
        Ok(Factory { start_ids: model.encode_plain(START).into(), end_ids: model.encode_plain(END).into() })
    }
}


impl ReasoningParserFactory for Factory {
    /// vLLM's stream reads the prompt, whose last marker settles the start
    /// (the template's instructions close a think block in every prompt).
    fn stream_follows_vllm(&self) -> bool {
        true
    }

    fn create(&self, ctx: &ChatContext, model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        let initial = ctx.template_kwargs.get("thinking_mode") == Some(&Value::String("enabled".into()));
        Box::new(MiniMaxM3 {
            model: model.clone(),
            start_ids: self.start_ids.clone(),
            end_ids: self.end_ids.clone(),
            initial,
            ended: false,
            active: initial,
            pending_marker: false,
            last_delta_ids: None,
            last_content_ids: None,
        })
    }
}

struct MiniMaxM3 {
    model: Arc<Model>,
    start_ids: Arc<[i64]>,
    end_ids: Arc<[i64]>,
    /// `_initial_in_reasoning`.
    initial: bool,
    ended: bool,
    active: bool,
    pending_marker: bool,
    /// The last delta's ids and the content ids they carry, for the
    /// `extract_content_ids` call that follows the end of reasoning.
    last_delta_ids: Option<Vec<i64>>,
    last_content_ids: Option<Vec<i64>>,
}

fn contains_seq(ids: &[i64], marker: &[i64]) -> bool {
    !marker.is_empty() && ids.windows(marker.len()).any(|w| w == marker)
}

fn rfind_seq(ids: &[i64], marker: &[i64]) -> Option<usize> {
    if marker.is_empty() {
        return None;
    }
    ids.windows(marker.len()).rposition(|w| w == marker)
}

/// Do `ids` end with a proper prefix of `marker`?
fn ends_with_seq_prefix(ids: &[i64], marker: &[i64]) -> bool {
    let longest = ids.len().min(marker.len().saturating_sub(1));
    (1..=longest).any(|n| ids[ids.len() - n..] == marker[..n])
}

/// `text` without a tail that could grow into `marker`.
fn strip_partial_marker(text: &str, marker: &str) -> String {
    let longest = text.len().min(marker.len().saturating_sub(1));
    for n in (1..=longest).rev() {
        let at = text.len() - n;
        if text.is_char_boundary(at) && marker.starts_with(&text[at..]) {
            return text[..at].to_string();
        }
    }
    text.to_string()
}

fn some(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_string())
}

/// `_visible_delta`.
fn visible_delta(previous: Option<&str>, current: Option<&str>) -> Option<String> {
    let current = current.filter(|c| !c.is_empty())?;
    match previous.filter(|p| !p.is_empty()) {
        None => Some(current.to_string()),
        Some(p) => match current.strip_prefix(p) {
            Some(rest) => some(rest),
            None => Some(current.to_string()),
        },
    }
}

impl MiniMaxM3 {
    /// `_visible_segments`: `(reasoning, content)` of the text so far,
    /// without markers or a tail that may still become one.
    fn visible(&self, text: &str) -> (Option<String>, Option<String>) {
        if text.is_empty() {
            return (None, None);
        }
        let mut text = text;
        if !self.initial {
            if END.starts_with(text) && text.len() < END.len() {
                return (None, None);
            }
            if let Some(rest) = text.strip_prefix(END) {
                if rest.is_empty() {
                    return (None, None);
                }
                text = rest;
            }
        }
        if self.initial && !text.contains(START) {
            return match text.split_once(END) {
                Some((reasoning, content)) => (some(reasoning), some(content)),
                None => (some(&strip_partial_marker(text, END)), None),
            };
        }
        let Some((before, after)) = text.split_once(START) else {
            return (None, some(&strip_partial_marker(text, START)));
        };
        match after.split_once(END) {
            Some((reasoning, content)) => (some(reasoning), some(&format!("{before}{content}"))),
            None => (some(&strip_partial_marker(after, END)), some(before)),
        }
    }

    /// `_content_suffix_token_ids`: the delta's ids that make `content`.
    fn content_suffix_ids(&self, delta_text: &str, delta_ids: &[i64], content: Option<&str>) -> Vec<i64> {
        let Some(content) = content else { return Vec::new() };
        if content == delta_text {
            return delta_ids.to_vec();
        }
        if let Some(prefix) = delta_text.strip_suffix(content) {
            if let Some(n) = (0..=delta_ids.len()).find(|&n| self.model.decode(&delta_ids[..n]) == prefix) {
                return delta_ids[n..].to_vec();
            }
        }
        self.model.encode_plain(content)
    }
}

impl ReasoningParser for MiniMaxM3 {
    fn extract_reasoning(&self, text: &str, _ctx: &ChatContext) -> (Option<String>, Option<String>) {
        if !self.initial {
            if let Some(content) = text.strip_prefix(END) {
                return (None, some(content));
            }
        }
        if self.initial && !text.contains(START) {
            return match text.split_once(END) {
                Some((reasoning, content)) => (Some(reasoning.to_string()), some(content)),
                None => (Some(text.to_string()), None),
            };
        }
        let Some((before, after)) = text.split_once(START) else {
            return (None, Some(text.to_string()));
        };
        match after.split_once(END) {
            Some((reasoning, content)) => (Some(reasoning.to_string()), some(&format!("{before}{content}"))),
            None => (Some(after.to_string()), some(before)),
        }
    }

    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        match (rfind_seq(ids, &self.start_ids), rfind_seq(ids, &self.end_ids)) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(start), Some(end)) => end > start,
        }
    }

    fn is_reasoning_end_streaming(&self, current: &[i64], delta: &[i64]) -> bool {
        if self.ended {
            return true;
        }
        if self.active || self.pending_marker {
            return false;
        }
        if contains_seq(delta, &self.end_ids) || contains_seq(current, &self.end_ids) {
            return true;
        }
        if self.initial
            || ends_with_seq_prefix(current, &self.start_ids)
            || ends_with_seq_prefix(current, &self.end_ids)
        {
            return false;
        }
        !contains_seq(current, &self.start_ids) && !current.is_empty()
    }

    fn extract_content_ids(&self, ids: &[i64]) -> Vec<i64> {
        if self.last_delta_ids.as_deref() == Some(ids) {
            if let Some(content) = &self.last_content_ids {
                return content.clone();
            }
        }
        if let Some(end) = rfind_seq(ids, &self.end_ids) {
            return ids[end + self.end_ids.len()..].to_vec();
        }
        if contains_seq(ids, &self.start_ids) || self.initial {
            return Vec::new();
        }
        ids.to_vec()
    }

    fn extract_reasoning_streaming(&mut self, t: &Texts, ids: &Ids) -> Option<Delta> {
        if t.delta.is_empty() {
            return None;
        }
        if t.previous.is_empty() {
            self.ended = false;
            self.active = self.initial;
            self.pending_marker = false;
            self.last_delta_ids = None;
            self.last_content_ids = None;
        }
        let (previous_reasoning, previous_content) = self.visible(t.previous);
        let (reasoning, content) = self.visible(t.current);
        if t.current.contains(END) || content.is_some() {
            self.ended = true;
            self.active = false;
            self.pending_marker = false;
        } else {
            self.last_delta_ids = None;
            self.last_content_ids = None;
            self.active = self.initial || t.current.contains(START) || reasoning.is_some();
            self.pending_marker = !self.active && (START.starts_with(t.current) || END.starts_with(t.current));
        }
        let reasoning = visible_delta(previous_reasoning.as_deref(), reasoning.as_deref());
        let content = visible_delta(previous_content.as_deref(), content.as_deref());
        if self.ended {
            self.last_content_ids = Some(self.content_suffix_ids(t.delta, ids.delta, content.as_deref()));
            self.last_delta_ids = Some(ids.delta.to_vec());
        }
        if reasoning.is_none() && content.is_none() {
            return None;
        }
        Some(Delta { reasoning, content, ..Default::default() })
    }

    fn snapshot(&mut self) -> Option<&mut dyn Snapshot> {
        Some(self)
    }
}

crate::impl_snapshot!(MiniMaxM3 { ended, active, pending_marker, last_delta_ids, last_content_ids });
