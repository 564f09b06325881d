//! Answer and thinking text (melody's `process_grounded_text`): trimming,
//! citations, and what a final pass flushes.

use serde::{Deserialize, Serialize};

use super::citations::{Piece, ScanMemo};
use super::output::Collector;

/// State of the current answer or thinking block.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct TextState {
    /// Chars emitted in this block, for citation offsets.
    #[serde(rename = "i", default)]
    pub(super) index: usize,
    /// Inside an open citation: the buffer offset up to which its body has
    /// been emitted.
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub(super) sent_upto: Option<usize>,
    /// Leading whitespace is still being dropped (set on entering thinking,
    /// cleared by the first non-blank text).
    #[serde(rename = "l", default)]
    pub(super) left_trim: bool,
    #[serde(rename = "m", default, skip_serializing_if = "ScanMemo::is_initial")]
    pub(super) memo: ScanMemo,
}

impl TextState {
    pub(super) fn is_initial(&self) -> bool {
        *self == TextState::default()
    }

    /// The buffer was replaced: earlier searches say nothing about it.
    pub(super) fn forget_scan(&mut self) {
        self.memo = ScanMemo::default();
    }

    /// A new block starts (the token's side effects in melody).
    pub(super) fn enter_block(&mut self, thinking: bool) {
        self.index = 0;
        self.sent_upto = None;
        if thinking {
            self.left_trim = true;
        }
    }

    /// One pass over the buffer; returns the bytes used up. `last` is set
    /// when no more text will join this buffer (before a token, at the end).
    pub(super) fn pass(&mut self, buffer: &str, last: bool, reasoning: bool, out: &mut Collector) -> usize {
        // Trailing whitespace is kept back: it goes out only in front of more text.
        let right_trimmed = buffer.trim_end();
        let send = if self.left_trim {
            let trimmed = right_trimmed.trim_start();
            if !trimmed.is_empty() {
                self.left_trim = false;
            }
            trimmed
        } else {
            right_trimmed
        };
        let lead = right_trimmed.len() - send.len();
        let (piece, used, memo) = self.parse_citations(send, reasoning);
        let consumed = lead + used;
        self.memo = if consumed == 0 { memo } else { ScanMemo::default() };
        let piece = match piece {
            Some(piece) if !piece.is_empty() => piece,
            _ => {
                if send.is_empty() || !last {
                    return consumed;
                }
                // The text can no longer complete a citation: what was held goes out raw.
                let unsent = match self.sent_upto.take() {
                    Some(sent) if sent < send.len() => send.get(sent..).unwrap_or_default(),
                    Some(_) => "",
                    None => send,
                };
                Piece { text: unsent.to_owned(), citations: Vec::new() }
            }
        };
        out.text(&piece.text, reasoning);
        out.citations(piece.citations);
        consumed
    }
}
