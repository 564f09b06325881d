//! vLLM's `extract_tool_calls_streaming` for MiniCPM5: each call rescans
//! the whole text with the block regex and moves `_processed_len` past what
//! it sent. A complete block goes out as one call (or back as content); an
//! open block of an offered tool sends its name, then the arguments of its
//! complete params, less the closing brace.
//!
//! The state holds the normalized text only from the last point the block
//! regex's scan cannot reach back past (the start of the block around or
//! after `_processed_len`, or of a `<function` prefix at the end), so a
//! call costs O(open block), not O(output).

use serde_json::json;

use super::block::{dumps_args, parse_block, partial_params, Raised, Tools, FUNC_BLOCK, FUNC_NAME, PARAM_MISSING_NAME};
use super::normalize::{normalize_step, pending_len};
use crate::parse::call_stream::CallStream;
use crate::parse::{random_tool_call_id, ChatContext};
use crate::pycompat::json::partial_tag_overlap;
use crate::wire::response::{Delta, DeltaToolCall};

pub(super) const START: &str = "<function";
const END: &str = "</function>";

#[derive(Default)]
pub(super) struct Minicpm5Stream {
    /// The normalized output from a point the scan never reaches back past.
    text: String,
    /// `_processed_len`, as a byte offset into `text`.
    processed: usize,
    /// `<function` occurred in the output.
    seen_start: bool,
    /// A complete block that reads as no call went back as content after
    /// its text had streamed as content (vLLM's stream repeats it; batch
    /// has it once).
    pub(super) repeated_block: bool,
    calls: CallStream,
}

crate::impl_snapshot!(Minicpm5Stream { text, processed, seen_start, repeated_block } nested { calls }
    check |s| if s.text.is_char_boundary(s.processed) { Ok(()) } else { Err(crate::parse::SnapshotError::Range("processed")) });

/// `_streaming_args_diff`.
fn args_diff(prev: &str, args: &str, complete: bool) -> Option<String> {
    let prev = if prev == "{}" { "" } else { prev };
    let target = if complete { args } else { args.strip_suffix('}').unwrap_or(args) };
    let rest = if prev.is_empty() {
        Some(target)
    } else if target == prev {
        None
    } else if let Some(rest) = target.strip_prefix(prev) {
        Some(rest)
    } else {
        prev.strip_suffix('}').and_then(|open| target.strip_prefix(open))
    };
    rest.filter(|r| !r.is_empty()).map(str::to_string)
}

fn content(text: &str) -> Option<Delta> {
    Some(Delta::content(text))
}

impl Minicpm5Stream {
    #[cfg(test)]
    pub(super) fn held_len(&self) -> usize {
        self.text.len()
    }

    pub(super) fn calls(&mut self) -> &mut CallStream {
        &mut self.calls
    }

    /// `_emit_tool_args_delta`.
    fn emit_args(&mut self, index: usize, args: &str, complete: bool) -> Option<Delta> {
        let prev = self.calls.streamed.get(index).cloned().unwrap_or_default();
        let diff = args_diff(&prev, args, complete)?;
        if self.calls.streamed.len() <= index {
            self.calls.streamed.resize(index + 1, String::new());
        }
        self.calls.streamed[index] = prev + &diff;
        Some(Delta::tool_calls(vec![DeltaToolCall::arguments(index as i64, diff)]))
    }

    fn slot(&mut self, index: usize) {
        if self.calls.streamed.len() <= index {
            self.calls.streamed.resize(index + 1, String::new());
        }
        if self.calls.prev.len() <= index {
            self.calls.prev.resize(index + 1, json!({}));
        }
    }

    /// `_process_complete_block_streaming`.
    fn complete_block(&mut self, block: &str, tools: &Tools) -> Result<Delta, Raised> {
        let Some((name, args)) = parse_block(block, tools) else {
            self.repeated_block = true;
            return Ok(Delta::content(block));
        };
        let args_json = dumps_args(&args)?;
        if !self.calls.name_sent {
            self.calls.current += 1;
            let index = self.calls.current as usize;
            self.slot(index);
            self.calls.streamed[index].clone_from(&args_json);
            self.calls.prev[index] = json!({"name": name, "arguments": args_json});
            let call = DeltaToolCall::opening(index as i64, random_tool_call_id(), name, Some(args_json));
            return Ok(Delta::tool_calls(vec![call]));
        }
        let index = self.calls.current.max(0) as usize;
        self.slot(index);
        if let Some(obj) = self.calls.prev[index].as_object_mut() {
            obj.insert("arguments".into(), args_json.clone().into());
        }
        let delta = self.emit_args(index, &args_json, true);
        self.calls.name_sent = false;
        Ok(delta.unwrap_or_else(|| Delta::content("")))
    }

    /// `_process_partial_block_streaming`.
    fn partial_block(&mut self, block: &str, tools: &Tools) -> Result<Option<Delta>, Raised> {
        if PARAM_MISSING_NAME.search(block).is_some() {
            return Ok(None);
        }
        let Some(m) = FUNC_NAME.search(block) else { return Ok(None) };
        let name = super::block::py_strip(m.group(1).unwrap_or("")).to_string();
        if !tools.has(&name) {
            return Ok(None);
        }
        if !self.calls.name_sent {
            self.calls.current += 1;
            self.calls.name_sent = true;
            let index = self.calls.current as usize;
            self.slot(index);
            self.calls.prev[index] = json!({"name": name});
            return Ok(Some(Delta::tool_calls(vec![self.calls_opening(index, name)])));
        }
        let args = partial_params(block, &name, tools)?;
        if args.is_empty() {
            return Ok(None);
        }
        let args_json = dumps_args(&args)?;
        let index = self.calls.current.max(0) as usize;
        self.slot(index);
        if let Some(obj) = self.calls.prev[index].as_object_mut() {
            obj.insert("arguments".into(), args_json.clone().into());
        }
        Ok(self.emit_args(index, &args_json, false))
    }

    fn calls_opening(&self, index: usize, name: String) -> DeltaToolCall {
        DeltaToolCall::opening(index as i64, random_tool_call_id(), name, None)
    }

    /// One call of vLLM's method, on the normalized text so far.
    fn step(&mut self, delta_empty: bool, tools: &Tools) -> Result<Option<Delta>, Raised> {
        if !self.seen_start {
            let rest = self.text[self.processed..].to_string();
            self.processed = self.text.len();
            return Ok((!rest.is_empty()).then(|| Delta::content(rest)));
        }
        let text = self.text.clone();
        for m in FUNC_BLOCK.finditer(&text) {
            if m.end <= self.processed {
                continue;
            }
            if m.start > self.processed {
                let gap = &text[self.processed..m.start];
                self.processed = m.start;
                return Ok(content(gap));
            }
            let delta = self.complete_block(&text[m.start..m.end], tools)?;
            self.processed = m.end;
            return Ok(Some(delta));
        }
        let remainder = &text[self.processed..];
        if remainder.is_empty() {
            let ended_call = self.calls.current >= 0 && !self.calls.name_sent;
            return Ok((delta_empty && ended_call).then(|| Delta::content("")));
        }
        match remainder.find(START) {
            Some(at) if at > 0 => {
                self.processed += at;
                Ok(content(&remainder[..at]))
            }
            None => {
                if partial_tag_overlap(remainder, START) > 0 {
                    return Ok(None);
                }
                self.processed = text.len();
                Ok(content(remainder))
            }
            // A block opening at `_processed_len` with its end marker in
            // the text is always one the scan above already took.
            Some(_) if remainder.contains(END) => Ok(None),
            Some(_) => self.partial_block(remainder, tools),
        }
    }

    /// Drops the text before the last point the scan cannot reach back
    /// past, keeping a normalization pattern's prefix at the end.
    fn trim(&mut self) {
        let mut cut = self.processed.min(self.text.len() - pending_len(&self.text));
        let mut last_end = 0;
        for m in FUNC_BLOCK.finditer(&self.text) {
            if m.start < cut && cut < m.end {
                cut = m.start;
            }
            last_end = m.end;
        }
        // The block the scan would open next (prefixes of the marker are
        // ASCII: their chars are bytes).
        let tail = &self.text[last_end..];
        let open = match tail.find(START) {
            Some(at) => last_end + at,
            None => self.text.len() - partial_tag_overlap(tail, START),
        };
        cut = cut.min(open);
        if cut > 0 && self.text.is_char_boundary(cut) {
            self.text.drain(..cut);
            self.processed -= cut;
        }
    }

    pub(super) fn push(&mut self, delta: &str, ctx: &ChatContext) -> Option<Delta> {
        normalize_step(&mut self.text, delta);
        self.seen_start = self.seen_start || self.text.contains(START);
        let out = self.step(delta.is_empty(), &Tools::new(ctx)).unwrap_or(None);
        self.trim();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::args_diff;

    #[test]
    fn args_diff_follows_vllm() {
        assert_eq!(args_diff("", r#"{"a": 1}"#, false).as_deref(), Some(r#"{"a": 1"#));
        assert_eq!(args_diff(r#"{"a": 1"#, r#"{"a": 1}"#, true).as_deref(), Some("}"));
        assert_eq!(args_diff("{}", r#"{"a": 1}"#, true).as_deref(), Some(r#"{"a": 1}"#));
        assert_eq!(args_diff(r#"{"a": 2"#, r#"{"a": 1}"#, true), None);
    }
}
