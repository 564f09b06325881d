//! vLLM-exact incremental detokenization (`detokenize_incrementally` plus
//! the bounded window of `OnlineDerenderer._detokenize_delta`).
//!
//! The window holds raw vocabulary pieces from `prefix_offset` on; text is
//! only emitted once it no longer ends in U+FFFD, so multi-byte characters
//! split across tokens (or chunks) come out whole.

use crate::model::Model;

/// vLLM's `INITIAL_INCREMENTAL_DETOKENIZATION_OFFSET`.
const PREFIX_WINDOW: usize = 5;

/// The carried decode window (`prev_tokens`, `prefix_offset`, `read_offset`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Window {
    pub prev_tokens: Vec<String>,
    pub prefix_offset: usize,
    pub read_offset: usize,
}

impl Window {
    /// `_seed_stream_state`: the last 7 prompt pieces, so the first output
    /// token decodes in context (SentencePiece leading spaces).
    pub fn seed(model: &Model, prompt_ids: Option<&[i64]>, skip_special: bool) -> Window {
        let Some(ids) = prompt_ids.filter(|p| !p.is_empty()) else {
            return Window::default();
        };
        let tail = &ids[ids.len().saturating_sub(PREFIX_WINDOW + 2)..];
        let prev_tokens = model.window_pieces(tail, skip_special);
        let read_offset = prev_tokens.len();
        Window { prev_tokens, prefix_offset: read_offset.saturating_sub(PREFIX_WINDOW), read_offset }
    }

    /// Is this a window the algorithm could have produced? Anything else is
    /// a hand-edited state, refused instead of decoding garbage.
    pub fn is_consistent(&self) -> bool {
        self.prefix_offset <= self.read_offset && self.read_offset <= self.prev_tokens.len()
    }

    /// Decode `ids` onto the window and return the text they complete.
    pub fn decode(&mut self, model: &Model, ids: &[i64], skip_special: bool) -> String {
        let mut out = String::new();
        for &id in ids {
            self.step(model, id, skip_special, &mut out);
        }
        out
    }

    fn step(&mut self, model: &Model, id: i64, skip_special: bool, out: &mut String) {
        let new_piece = if model.in_vocab(id) { model.window_piece(id, skip_special) } else { Some(String::new()) };
        self.prev_tokens.extend(new_piece);
        let count = self.prev_tokens.len();
        let window = &self.prev_tokens[self.prefix_offset..];
        let prefix_text = model.pieces_to_string(&window[..self.read_offset - self.prefix_offset], skip_special);
        let new_text = model.pieces_to_string(window, skip_special);
        let prefix_chars = prefix_text.chars().count();
        if new_text.chars().count() > prefix_chars && !new_text.ends_with('\u{FFFD}') {
            let start = new_text.char_indices().nth(prefix_chars).map_or(new_text.len(), |(i, _)| i);
            out.push_str(&new_text[start..]);
            self.prefix_offset = self.read_offset;
            self.read_offset = count;
        }
        // Drop what can never be read again and rebase the offsets.
        self.prev_tokens.drain(..self.prefix_offset);
        self.read_offset -= self.prefix_offset;
        self.prefix_offset = 0;
    }
}
