//! cohere-melody 0.15.3's output filter (`PyFilter` with the `cmd3()` or
//! `cmd4()` options), which vLLM 0.33.0's `CohereCommandParser` runs over
//! decoded model output to get content, reasoning, tool calls and
//! citations, batch and streaming. Behaviour, quirks included, follows
//! tests/models/cohere_command/FILTER.md; the tests replay answers recorded
//! from `PyFilter` itself.
//!
//! The filter keeps the text it cannot decide on yet in one buffer. Mode
//! tokens (`<|START_THINKING|>`, ...) switch between answer, thinking,
//! tool-call JSON and ignored text; a buffer ending in a token's prefix is
//! held back whole. All state lives in [`Filter`], which serializes, so a
//! stream can be carried between requests. Each call does work in
//! proportion to its new text: searches resume where the last pass stopped.

mod actions;
mod citations;
mod grounded;
mod json_prefix;
mod output;
mod special;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use actions::ActionState;
use grounded::TextState;
use output::Collector;
pub use output::{Citation, FilterOutput};
use special::Mode;
pub use special::Preset;

/// One request choice's filter state, between calls.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Filter {
    #[serde(rename = "p")]
    preset: Preset,
    #[serde(rename = "m")]
    mode: Mode,
    /// After `flush_partials` or `process_full_text` every call returns nothing.
    #[serde(rename = "d", default, skip_serializing_if = "is_false")]
    done: bool,
    /// Text not used up yet.
    #[serde(rename = "b", default, skip_serializing_if = "String::is_empty")]
    buffer: String,
    #[serde(rename = "t", default, skip_serializing_if = "TextState::is_initial")]
    text: TextState,
    #[serde(rename = "a", default, skip_serializing_if = "ActionState::is_initial")]
    actions: ActionState,
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// Byte offset of the first `needle` in `haystack` at or after `from`.
/// Needles are ASCII, so a match never splits a char even when `from` does.
fn find_from(haystack: &str, needle: &str, from: usize) -> Option<usize> {
    let needle = needle.as_bytes();
    if needle.is_empty() {
        return None;
    }
    haystack.as_bytes().get(from..)?.windows(needle.len()).position(|window| window == needle).map(|at| at + from)
}

impl Filter {
    #[must_use]
    pub fn new(preset: Preset) -> Self {
        Filter {
            preset,
            mode: preset.initial_mode(),
            done: false,
            buffer: String::new(),
            text: TextState::default(),
            actions: ActionState::default(),
        }
    }

    /// One stream chunk (vLLM's `delta_text`).
    pub fn write_decoded(&mut self, text: &str) -> FilterOutput {
        let mut out = Collector::default();
        self.write(text, &mut out);
        out.finish()
    }

    /// End of stream: whatever is still held is processed once, as final.
    pub fn flush_partials(&mut self) -> FilterOutput {
        let mut out = Collector::default();
        self.finish(&mut out);
        out.finish()
    }

    /// A whole output at once (vLLM's batch `parse`): like a stream cut
    /// just after every mode token, then flushed.
    pub fn process_full_text(&mut self, text: &str) -> FilterOutput {
        let mut out = Collector::default();
        let mut rest = text;
        while !rest.is_empty() {
            let end = self.preset.find_token(rest, 0).map_or(rest.len(), |hit| hit.at + hit.len);
            let (piece, after) = rest.split_at_checked(end).unwrap_or((rest, ""));
            self.write(piece, &mut out);
            rest = after;
        }
        self.finish(&mut out);
        out.finish()
    }

    fn finish(&mut self, out: &mut Collector) {
        self.done = true;
        let buffer = std::mem::take(&mut self.buffer);
        if !buffer.is_empty() {
            self.handle(&buffer, true, out);
        }
    }

    fn write(&mut self, text: &str, out: &mut Collector) {
        if self.done {
            return;
        }
        // A buffer that held a token prefix has not been through a pass yet.
        let passed = !self.preset.ends_in_token_prefix(&self.buffer);
        // Earlier text was searched already; a token can only start this close to its end.
        let mut search_from = self.buffer.len().saturating_sub(self.preset.token_overlap());
        let mut switched = false;
        self.buffer.push_str(text);
        while let Some(hit) = self.preset.find_token(&self.buffer, search_from) {
            let buffer = std::mem::take(&mut self.buffer);
            let before = buffer.get(..hit.at).unwrap_or_default();
            if !before.is_empty() {
                // What the old mode does not use here is dropped with the token.
                self.handle(before, true, out);
            }
            self.enter(hit.mode);
            self.buffer = buffer.get(hit.at + hit.len..).unwrap_or_default().to_owned();
            search_from = 0;
            switched = true;
        }
        if self.mode == Mode::Ignore {
            self.drop_ignored();
            return;
        }
        if self.buffer.is_empty() || self.preset.ends_in_token_prefix(&self.buffer) {
            return;
        }
        // Answer and thinking passes are idempotent and blind to trailing
        // whitespace, so a blank chunk after a pass changes nothing.
        let text_mode = matches!(self.mode, Mode::Answer | Mode::Reasoning);
        if text_mode && passed && !switched && text.chars().all(char::is_whitespace) {
            return;
        }
        let mut buffer = std::mem::take(&mut self.buffer);
        let used = self.handle(&buffer, false, out);
        if buffer.is_char_boundary(used) {
            buffer.drain(..used);
        }
        self.buffer = buffer;
    }

    /// Ignored text never comes out: keep only what may start a token.
    fn drop_ignored(&mut self) {
        if !self.preset.ends_in_token_prefix(&self.buffer) {
            self.buffer.clear();
            return;
        }
        let mut start = self.buffer.len().saturating_sub(self.preset.token_overlap());
        while !self.buffer.is_char_boundary(start) {
            start -= 1;
        }
        self.buffer.drain(..start);
    }

    /// A mode token's side effects, after the text before it was handled.
    fn enter(&mut self, mode: Mode) {
        match mode {
            Mode::Reasoning => self.text.enter_block(true),
            Mode::Answer => self.text.enter_block(false),
            Mode::Action | Mode::Ignore => {}
        }
        self.mode = mode;
        self.text.forget_scan();
        self.actions.forget_scan();
    }

    /// Runs the current mode over `buffer`; returns the bytes used up.
    fn handle(&mut self, buffer: &str, last: bool, out: &mut Collector) -> usize {
        match self.mode {
            Mode::Ignore => 0,
            Mode::Action => self.actions.pass(buffer, out),
            Mode::Answer => self.text.pass(buffer, last, false, out),
            Mode::Reasoning => self.text.pass(buffer, last, true, out),
        }
    }
}
