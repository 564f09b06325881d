//! The strings that switch the filter's mode, per preset, and how a buffer
//! is searched for them.

use serde::{Deserialize, Serialize};

use super::find_from;

/// The two option sets vLLM uses (`PyFilterOptions().cmd3()` / `.cmd4()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Preset {
    #[serde(rename = "cmd3")]
    Cmd3,
    #[serde(rename = "cmd4")]
    Cmd4,
}

/// What the filter does with text (melody's `FilterMode`, the four reachable ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum Mode {
    /// `GroundedAnswer`: content, with citations.
    #[serde(rename = "a")]
    Answer,
    /// `ToolReason`: reasoning, with citations.
    #[serde(rename = "r")]
    Reasoning,
    /// `ToolAction`: tool-call JSON.
    #[serde(rename = "t")]
    Action,
    /// Text is dropped.
    #[serde(rename = "i")]
    Ignore,
}

const CMD3_TOKENS: &[(&str, Mode)] = &[
    ("<|START_THINKING|>", Mode::Reasoning),
    ("<|END_THINKING|>", Mode::Answer),
    ("<|START_ACTION|>", Mode::Action),
    ("<|END_ACTION|>", Mode::Ignore),
    ("<|START_RESPONSE|>", Mode::Answer),
    ("<|END_RESPONSE|>", Mode::Ignore),
];

const CMD4_TOKENS: &[(&str, Mode)] = &[
    ("<|START_THINKING|>", Mode::Reasoning),
    ("<|END_THINKING|>", Mode::Answer),
    ("<|START_ACTION|>", Mode::Action),
    ("<|END_ACTION|>", Mode::Ignore),
    ("<|START_RESPONSE|>", Mode::Answer),
    ("<|END_RESPONSE|>", Mode::Ignore),
    ("<|START_TEXT|>", Mode::Answer),
    ("<|END_TEXT|>", Mode::Ignore),
];

/// Every token starts with this, and no token contains it again.
const TOKEN_START: &str = "<|";

/// A mode token found in a buffer.
pub(super) struct TokenHit {
    pub(super) at: usize,
    pub(super) len: usize,
    pub(super) mode: Mode,
}

impl Preset {
    fn tokens(self) -> &'static [(&'static str, Mode)] {
        match self {
            Preset::Cmd3 => CMD3_TOKENS,
            Preset::Cmd4 => CMD4_TOKENS,
        }
    }

    pub(super) fn initial_mode(self) -> Mode {
        match self {
            Preset::Cmd3 => Mode::Answer,
            // cmd4 prompts end with the thinking opener already written.
            Preset::Cmd4 => Mode::Reasoning,
        }
    }

    /// Bytes before the end of an already-searched buffer where a token
    /// completed by new text can start.
    pub(super) fn token_overlap(self) -> usize {
        self.tokens().iter().map(|(token, _)| token.len() - 1).max().unwrap_or(0)
    }

    /// The earliest token starting at or after byte `from`.
    pub(super) fn find_token(self, text: &str, from: usize) -> Option<TokenHit> {
        let bytes = text.as_bytes();
        let mut at = from;
        while let Some(start) = find_from(text, TOKEN_START, at) {
            let tail = bytes.get(start..).unwrap_or_default();
            if let Some(&(token, mode)) = self.tokens().iter().find(|(token, _)| tail.starts_with(token.as_bytes())) {
                return Some(TokenHit { at: start, len: token.len(), mode });
            }
            at = start + 1;
        }
        None
    }

    /// The text ends with a proper prefix of some token (`<`, `<|STA`, ...),
    /// so the next chunk may complete it.
    pub(super) fn ends_in_token_prefix(self, text: &str) -> bool {
        let bytes = text.as_bytes();
        self.tokens().iter().any(|(token, _)| {
            let token = token.as_bytes();
            (1..token.len()).any(|len| token.get(..len).is_some_and(|prefix| bytes.ends_with(prefix)))
        })
    }
}
