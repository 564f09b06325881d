//! Repairs to vLLM's DeepSeek tool-call streaming. vLLM's chunks are kept
//! wherever they assemble to its own batch answer; where they cannot (a
//! chunk closing a call without a trailing `"}`, several call markers in one
//! chunk, text next to the call block that batch drops or keeps), the chunk
//! gets what is missing so the stream assembles to the batch answer. Each
//! repair only fires where vLLM's stream would never catch up by itself.

use super::deepseek::{
    match_v31_call, match_v3_call, seen, DeepSeekToolParser, Format, CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END,
};
use crate::parse::{FunctionCall, Ids, Texts};
use crate::wire::response::Delta;

impl DeepSeekToolParser {
    /// What batch reports as content for `text`.
    fn batch_content<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        let Some(first) = text.find(CALLS_BEGIN) else { return text.into() };
        let mut content = std::borrow::Cow::Borrowed(&text[..first]);
        if self.format == Format::V3 {
            if let Some(end) = text.rfind(CALLS_END) {
                content.to_mut().push_str(&text[end + CALLS_END.len()..]);
            }
        }
        content
    }

    /// Each call opener's `(name, arguments)` once its call is closed and
    /// parses as batch parses it (within its own segment).
    fn closed_calls(&self, text: &str) -> Vec<Option<(String, String)>> {
        let starts: Vec<usize> = text.match_indices(CALL_BEGIN).map(|(i, _)| i + CALL_BEGIN.len()).collect();
        starts
            .iter()
            .enumerate()
            .map(|(k, &start)| {
                let segment_end = starts.get(k + 1).map_or(text.len(), |next| next - CALL_BEGIN.len());
                let body = &text[start..];
                if !text[start..segment_end].contains(CALL_END) {
                    return None;
                }
                let (name, args, len) = match self.format {
                    Format::V3 => match_v3_call(body).map(|(_, n, a, len)| (n, a, len))?,
                    Format::V31 => match_v31_call(body)?,
                };
                (start + len <= segment_end).then(|| (name.to_string(), args.to_string()))
            })
            .collect()
    }

    /// Bring vLLM's delta for this chunk (`delta`, computed when the current
    /// call index was `before` and the arguments streamed were
    /// `streamed_before`) in line with the batch parse of the text so far.
    pub(super) fn repair(
        &mut self,
        delta: Option<Delta>,
        before: i64,
        streamed_before: &[String],
        t: &Texts,
        ids: &Ids,
    ) -> Option<Delta> {
        if !ids.current.contains(&self.ids.calls_begin) {
            if let Some(c) = delta.as_ref().and_then(|d| d.content.as_deref()) {
                self.content_sent.push_str(c);
            }
            return delta;
        }
        let was_none = delta.is_none();
        let mut d = delta.unwrap_or_default();
        let mut changed = false;

        // vLLM counts one new call per chunk; its deltas always concern the
        // last opener, whose index is the number of openers so far.
        let openers = self.ids.call_begin.map_or(0, |id| ids.current.iter().filter(|&&x| x == id).count());
        let last = openers as i64 - 1;
        let calls = &mut self.calls;
        if last > calls.current {
            let opened = calls.current != before;
            if opened {
                for tc in &mut d.tool_calls {
                    if tc.index == calls.current {
                        tc.index = last;
                    }
                }
                let entry = calls.streamed.pop().unwrap_or_default();
                calls.streamed.resize(openers - 1, String::new());
                calls.streamed.push(entry);
            } else {
                // Every opener is closed (vLLM took its closing branch). vLLM
                // then read a later call's text as call `current`'s: drop its
                // delta for that call; the closed-call pass below sends what
                // each call lacks.
                d.tool_calls.retain(|tc| tc.index != calls.current);
                let cur = usize::try_from(calls.current).unwrap_or(usize::MAX);
                if let (Some(s), Some(old)) = (calls.streamed.get_mut(cur), streamed_before.get(cur)) {
                    s.clone_from(old);
                }
                calls.streamed.resize(openers, String::new());
                calls.name_sent = true;
                changed = true;
            }
            if calls.prev.len() < openers - 1 {
                calls.prev.resize(openers - 1, seen(None));
            }
            calls.current = last;
        }
        if calls.named.len() < openers {
            calls.named.resize(openers, false);
        }
        if calls.streamed.len() < openers {
            calls.streamed.resize(openers, String::new());
        }
        for tc in &d.tool_calls {
            let named = tc.function.as_ref().is_some_and(|f| f.name.is_some());
            if let (true, Ok(i)) = (named, usize::try_from(tc.index)) {
                if let Some(sent) = calls.named.get_mut(i) {
                    *sent = true;
                }
            }
        }

        // A closed call never gets another vLLM delta: send what it lacks.
        for (i, call) in self.closed_calls(t.current).into_iter().enumerate() {
            let Some((name, arguments)) = call else { continue };
            let calls = &mut self.calls;
            if i >= calls.named.len() || i >= calls.streamed.len() {
                continue;
            }
            // A call named here gets all its arguments with its name.
            if !calls.named[i] {
                calls.streamed[i].clear();
            }
            if let Some(tc) = calls.complete(i, &FunctionCall { id: None, name, arguments }) {
                d.tool_calls.push(tc);
                changed = true;
            }
        }
        d.tool_calls.sort_by_key(|tc| tc.index);

        // Content: what batch keeps of the text so far, minus what was sent
        // (with calls begun, whitespace alone is no content).
        let mut truth = self.batch_content(t.current);
        if truth.trim().is_empty() {
            truth = "".into();
        }
        let expected = truth.strip_prefix(self.content_sent.as_str()).unwrap_or("").to_string();
        if d.content.as_deref().unwrap_or("") != expected {
            d.content = (!expected.is_empty()).then_some(expected);
            changed = true;
        }
        if let Some(c) = &d.content {
            self.content_sent.push_str(c);
        }
        if was_none && !changed {
            return None;
        }
        Some(d)
    }
}
