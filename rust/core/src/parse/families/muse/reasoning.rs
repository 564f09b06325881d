//! `MuseReasoningParser` (and Glimmer's profile): the whole text is
//! reclassified into channels on every delta, and only what was not sent
//! yet goes out. Reasoning is `to=self` (and, for Spark, header-less)
//! messages; content `to=user` (and Spark's `to=commentary`); the first
//! message to a tool that holds ATEM markup is handed to the tool parser,
//! header included.

use std::sync::{Arc, OnceLock};

use crate::model::Model;
use crate::parse::family::ReasoningParserFactory;
use crate::parse::{ChatContext, Ids, ReasoningParser, Snapshot, Texts};
use crate::pycompat::re::Pattern;
use crate::wire::response::Delta;

pub(super) const FUNCTION_CALLS_OPEN: &str = "<atem:function_calls>";
const INVOKE_OPEN: &str = "<atem:invoke";
const EOM: &str = "<|eom|>";
const EOT: &str = "<|eot|>";
const ASSISTANT_TURN_OPEN: &str = "<|start|>assistant";
const HOLDBACK_MARKERS: [&str; 4] = [EOM, EOT, "<|start|>", "<|message|>"];
const NON_TOOL: [&str; 4] = ["self", "user", "commentary", "developer"];

/// vLLM's patterns, compiled once.
struct Patterns {
    channel_header: Pattern,
    collapse: Pattern,
    reasoning: Pattern,
    content: Pattern,
    strip_reasoning: Pattern,
    strip_open_reasoning: Pattern,
    open_reasoning: Pattern,
    open_tail_header: Pattern,
    muse_header: Pattern,
    boundary: Pattern,
    other_role: Pattern,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        const HDR: &str = r"to=[^\s<]+<\|message\|>";
        Patterns {
            channel_header: Pattern::new(r"to=([^\s<]+)<\|message\|>"),
            collapse: Pattern::new(r"(?s)<\|eom\|>(?:(?!to=self<\|message\|>).)*?to=self<\|message\|>"),
            reasoning: Pattern::new(r"(?s)to=self<\|message\|>(.*?)<\|eom\|>"),
            content: Pattern::new(r"(?s)to=user<\|message\|>(.*?)(?=<\|eot\|>|<\|eom\|>|$)"),
            strip_reasoning: Pattern::new(r"(?s)(?:<\|start\|>assistant\s*)?to=self<\|message\|>.*?<\|eom\|>"),
            strip_open_reasoning: Pattern::new(&format!(
                r"(?s)(?:<\|start\|>assistant\s*)?to=self<\|message\|>(?:(?!<\|eom\|>)(?!{HDR}).)*(?={HDR}|$)"
            )),
            open_reasoning: Pattern::new(&format!(
                r"(?s)to=self<\|message\|>((?:(?!<\|eom\|>)(?!{HDR}).)*)(?={HDR}|$)"
            )),
            open_tail_header: Pattern::new(r"[\s](?:t|to|to=[^\s<]*)$"),
            muse_header: Pattern::new(r"(?:<\|start\|>assistant\s*)?(?:to=([^\s<]+))?<\|message\|>"),
            boundary: Pattern::new(r"<\|eom\|>|<\|eot\|>|<\|start\|>"),
            other_role: Pattern::new(r"<\|start\|>(?!assistant(?:\s|<|$))[^\s<]+"),
        }
    })
}

/// One Spark message: recipient, body, closed, and its framed text.
struct Message<'t> {
    recipient: Option<&'t str>,
    body: &'t str,
    closed: bool,
    framed: &'t str,
    start: usize,
}

/// `_muse_messages`.
fn muse_messages(text: &str) -> Vec<Message<'_>> {
    let p = patterns();
    let headers = p.muse_header.finditer(text);
    let mut out = Vec::with_capacity(headers.len());
    for (i, h) in headers.iter().enumerate() {
        let end = headers.get(i + 1).map_or(text.len(), |n| n.start);
        let boundary = p.boundary.search(&text[h.end..end]).map(|b| h.end + b.start);
        let body_end = boundary.unwrap_or(end);
        out.push(Message {
            recipient: h.group(1),
            body: &text[h.end..body_end],
            closed: boundary.is_some() || i + 1 < headers.len(),
            framed: &text[h.start..end],
            start: h.start,
        });
    }
    out
}

fn has_atem(body: &str) -> bool {
    body.contains(FUNCTION_CALLS_OPEN) || body.contains(INVOKE_OPEN)
}

/// `_muse_current_turn`: prompt examples and earlier turns are cut off.
fn muse_current_turn(text: &str) -> &str {
    match patterns().other_role.finditer(text).last() {
        Some(role) => text[role.end..].find(ASSISTANT_TURN_OPEN).map_or("", |i| &text[role.end + i..]),
        None => text,
    }
}

/// `_current_assistant_turn`.
fn current_assistant_turn(text: &str) -> &str {
    text.rfind(ASSISTANT_TURN_OPEN).map_or(text, |i| &text[i + ASSISTANT_TURN_OPEN.len()..])
}

/// `_trim_open_body`: hold back a tail that may still be framing.
fn trim_open_body(body: &str) -> &str {
    let mut body = body;
    loop {
        let mut trimmed = body;
        for marker in HOLDBACK_MARKERS {
            let longest = (marker.len() - 1).min(trimmed.len());
            let cut = (1..=longest).rev().find(|&k| {
                let at = trimmed.len() - k;
                trimmed.is_char_boundary(at) && marker.starts_with(&trimmed[at..])
            });
            if let Some(k) = cut {
                trimmed = &trimmed[..trimmed.len() - k];
                break;
            }
        }
        if let Some(tail) = patterns().open_tail_header.search(trimmed) {
            trimmed = &trimmed[..tail.start];
        }
        if trimmed.len() == body.len() {
            return body;
        }
        body = trimmed;
    }
}

pub(super) struct Factory {
    pub(super) glimmer: bool,
}

impl ReasoningParserFactory for Factory {
    fn create(&self, _ctx: &ChatContext, model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        Box::new(Muse {
            glimmer: self.glimmer,
            model: model.clone(),
            emitted_reasoning: String::new(),
            emitted_content: String::new(),
            handoff_done: false,
        })
    }

    fn keep_special_tokens(&self) -> bool {
        true
    }
}

struct Muse {
    /// `_glimmer_compat`: Glimmer's original channel rules.
    glimmer: bool,
    model: Arc<Model>,
    emitted_reasoning: String,
    emitted_content: String,
    handoff_done: bool,
}

impl Muse {
    /// `_scoped_turn` (Glimmer): the current turn without reasoning spans.
    fn scoped_turn(text: &str) -> String {
        let p = patterns();
        p.strip_open_reasoning.remove(&p.strip_reasoning.remove(current_assistant_turn(text)))
    }

    /// `_tool_channel_remainder`: from the first tool channel's header on.
    fn tool_channel_remainder(&self, text: &str) -> String {
        if !self.glimmer {
            let scoped = muse_current_turn(text);
            return muse_messages(scoped)
                .iter()
                .find(|m| m.recipient.is_some_and(|r| !NON_TOOL.contains(&r)) && has_atem(m.body))
                .map_or(String::new(), |m| scoped[m.start..].to_string());
        }
        let scoped = Self::scoped_turn(text);
        let first = patterns().channel_header.finditer(&scoped).into_iter().find(|m| {
            let r = m.group(1).unwrap_or("");
            r != "self" && r != "user"
        });
        first.map_or(String::new(), |m| scoped[m.start..].to_string())
    }

    /// `_classify_bodies`: `(reasoning, content)` of the text so far.
    fn classify(&self, text: &str) -> (String, String) {
        let (mut reasoning, mut content) = (String::new(), String::new());
        if !self.glimmer {
            for m in muse_messages(text) {
                let body = if m.closed { m.body } else { trim_open_body(m.body) };
                match m.recipient {
                    None | Some("self") => reasoning.push_str(body),
                    Some("user" | "commentary") => content.push_str(body),
                    _ => {}
                }
            }
            return (reasoning, content);
        }
        let p = patterns();
        let mut pos = 0;
        while pos < text.len() {
            let Some(h) = p.channel_header.search(&text[pos..]) else { break };
            let body_start = pos + h.end;
            let rest = &text[body_start..];
            let eom = rest.find(EOM).map(|i| body_start + i);
            let eot = rest.find(EOT).map(|i| body_start + i);
            let next = p.channel_header.search(rest).map(|n| body_start + n.start);
            let end = [eom, eot, next].into_iter().flatten().min();
            let body_end = end.unwrap_or(text.len());
            let body = if end.is_none() { trim_open_body(&text[body_start..]) } else { &text[body_start..body_end] };
            match h.group(1) {
                Some("self") => reasoning.push_str(body),
                Some("user") if !has_atem(body) => content.push_str(body),
                _ => {}
            }
            pos = match end {
                Some(e) if Some(e) == eom => e + EOM.len(),
                Some(e) if Some(e) == eot => e + EOT.len(),
                _ => body_end,
            };
        }
        (reasoning, content)
    }

    fn extract_spark(text: &str) -> (Option<String>, Option<String>) {
        let messages = muse_messages(text);
        if messages.is_empty() {
            return (None, (!text.is_empty()).then(|| text.to_string()));
        }
        let reasoning: String =
            messages.iter().filter(|m| matches!(m.recipient, None | Some("self"))).map(|m| m.body).collect();
        let tool_call =
            messages.iter().any(|m| m.recipient.is_some_and(|r| !NON_TOOL.contains(&r)) && has_atem(m.body));
        let content: String = if tool_call {
            messages.iter().filter(|m| !matches!(m.recipient, None | Some("self" | "developer"))).map(|m| m.framed).collect()
        } else {
            messages.iter().filter(|m| matches!(m.recipient, Some("user" | "commentary"))).map(|m| m.body).collect()
        };
        ((!reasoning.is_empty()).then_some(reasoning), (!content.is_empty()).then_some(content))
    }

    fn extract_glimmer(text: &str) -> (Option<String>, Option<String>) {
        let p = patterns();
        let collapsed = p.collapse.replace(text, "\n");
        let blocks = p.reasoning.findall(&collapsed);
        let mut reasoning = (!blocks.is_empty()).then(|| blocks.join("\n"));
        if let Some(open) = p.open_reasoning.search(text).and_then(|m| m.group(1)).filter(|g| !g.is_empty()) {
            reasoning = Some(match reasoning {
                Some(r) => format!("{r}\n{open}"),
                None => open.to_string(),
            });
        }
        let remainder = p.strip_open_reasoning.remove(&p.strip_reasoning.remove(text));
        if has_atem(&remainder) {
            return (reasoning, (!remainder.is_empty()).then_some(remainder));
        }
        if let Some(m) = p.content.search(text) {
            return (reasoning, m.group(1).filter(|c| !c.is_empty()).map(str::to_string));
        }
        if text.contains("to=self<|message|>") {
            return (reasoning, None);
        }
        (None, (!text.is_empty()).then(|| text.to_string()))
    }
}

/// `s[n:]` in characters, as Python slices.
fn skip_chars(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or("", |(i, _)| &s[i..])
}

/// What `current` adds to what was sent, when it only grew.
fn grown(current: &str, sent: &mut String) -> Option<String> {
    let rest = current.strip_prefix(sent.as_str()).filter(|r| !r.is_empty())?.to_string();
    *sent = current.to_string();
    Some(rest)
}

impl ReasoningParser for Muse {
    fn extract_reasoning(&self, text: &str, _ctx: &ChatContext) -> (Option<String>, Option<String>) {
        if self.glimmer {
            Self::extract_glimmer(text)
        } else {
            Self::extract_spark(text)
        }
    }

    /// The model opened a tool channel holding ATEM markup.
    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        has_atem(&self.tool_channel_remainder(&self.model.decode(ids)))
    }

    fn extract_content_ids(&self, _ids: &[i64]) -> Vec<i64> {
        Vec::new()
    }

    fn extract_reasoning_streaming(&mut self, t: &Texts, _ids: &Ids) -> Option<Delta> {
        if !self.glimmer && !self.handoff_done {
            let remainder = self.tool_channel_remainder(t.current);
            if !remainder.is_empty() {
                let prefix = &t.current[..t.current.len() - remainder.len()];
                let (reasoning, content) = self.classify(prefix);
                let mut pending = String::new();
                let r = skip_chars(&reasoning, self.emitted_reasoning.chars().count());
                if !r.is_empty() {
                    pending += &format!("to=self<|message|>{r}<|eom|>");
                }
                let c = skip_chars(&content, self.emitted_content.chars().count());
                if !c.is_empty() {
                    pending += &format!("to=commentary<|message|>{c}<|eom|>");
                }
                self.handoff_done = true;
                return Some(Delta::content(pending + &remainder));
            }
        }
        let (reasoning, content) = self.classify(t.current);
        let reasoning = grown(&reasoning, &mut self.emitted_reasoning);
        let content = grown(&content, &mut self.emitted_content);
        if !self.handoff_done {
            let remainder = self.tool_channel_remainder(t.current);
            if has_atem(&remainder) {
                self.handoff_done = true;
                return Some(Delta { reasoning, content: Some(remainder), ..Default::default() });
            }
        }
        (reasoning.is_some() || content.is_some()).then(|| Delta { reasoning, content, ..Default::default() })
    }

    /// The `to=user` body not streamed yet, when the stream ends mid-reasoning.
    fn streaming_fallback_content(&self, previous_text: &str, _ctx: &ChatContext) -> Option<String> {
        let (_, content) = self.classify(previous_text);
        Some(skip_chars(&content, self.emitted_content.chars().count()).to_string()).filter(|c| !c.is_empty())
    }

    fn snapshot(&mut self) -> Option<&mut dyn Snapshot> {
        Some(self)
    }

    /// Text outside any message streams nothing, as in vLLM's stream;
    /// batch answers it (all of it as content, where nothing is framed).
    fn left_batch(&self, text: &str) -> bool {
        let (reasoning, content) = self.classify(text);
        !self.handoff_done && !text.is_empty() && reasoning.is_empty() && content.is_empty()
    }
}

crate::impl_snapshot!(Muse { emitted_reasoning, emitted_content, handoff_done });
