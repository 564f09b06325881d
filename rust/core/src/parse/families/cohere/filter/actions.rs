//! Tool calls in action blocks (melody's `parse_actions`, JSON format).
//! The parser does not parse the JSON list: it searches for the keys in
//! order (`tool_call_id`, `tool_name`, `parameters`) and emits the raw
//! text it finds, so key order, numbers as ids and the like matter.
//! Its state carries across action blocks and is never reset.

use serde::{Deserialize, Serialize};

use super::find_from;
use super::json_prefix::JsonPrefix;
use super::output::Collector;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
enum Phase {
    /// Looking for `"tool_call_id": "` (or `"tool_call": "`).
    #[default]
    #[serde(rename = "s")]
    SeekId,
    #[serde(rename = "i")]
    InId,
    /// Looking for `"tool_name": "`.
    #[serde(rename = "n")]
    SeekName,
    #[serde(rename = "m")]
    InName,
    /// Looking for non-empty `"parameters": {"`, or a `}` ending the call.
    #[serde(rename = "p")]
    SeekArguments,
    #[serde(rename = "a")]
    InArguments,
}

/// Tool-call parsing state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct ActionState {
    #[serde(rename = "p", default)]
    phase: Phase,
    /// Index of the call being parsed.
    #[serde(rename = "i", default)]
    call: usize,
    #[serde(rename = "j", default, skip_serializing_if = "JsonPrefix::is_initial")]
    arguments: JsonPrefix,
    #[serde(rename = "d", default, skip_serializing_if = "Dedent::is_initial")]
    dedent: Dedent,
    /// The buffer before this offset was searched without success by the
    /// current phase; only new text needs a look.
    #[serde(rename = "f", default)]
    scan_from: usize,
    /// A key match starting at `scan_from` was still undecided when the
    /// text ended: the pattern part it was in, and the byte it reached.
    #[serde(rename = "o", default, skip_serializing_if = "Option::is_none")]
    scan_open: Option<(usize, usize)>,
}

/// Removes up to 8 leading whitespace chars per line of argument text
/// (melody re-indents pretty-printed parameters this way).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Dedent {
    #[serde(rename = "r", default)]
    removed: u8,
    #[serde(rename = "t", default)]
    line_has_text: bool,
}

const MAX_DEDENT: u8 = 8;

/// `"key": ` followed by optional whitespace and then, literally, `then`;
/// `\s` in melody's regexes is Unicode whitespace, as is `char::is_whitespace`.
struct KeyPattern {
    keys: &'static [&'static str],
    then: &'static [Then],
}

#[derive(Clone, Copy)]
enum Then {
    Spaces,
    Char(u8),
}

const ID_KEY: KeyPattern =
    KeyPattern { keys: &["\"tool_call_id\":", "\"tool_call\":"], then: &[Then::Spaces, Then::Char(b'"')] };
const NAME_KEY: KeyPattern = KeyPattern { keys: &["\"tool_name\":"], then: &[Then::Spaces, Then::Char(b'"')] };
const PARAMETERS_KEY: &str = "\"parameters\":";
/// Only a non-empty object (`{` then a quoted key) is streamed as arguments.
const OBJECT_ARGUMENTS: KeyPattern =
    KeyPattern { keys: &[PARAMETERS_KEY], then: &[Then::Spaces, Then::Char(b'{'), Then::Spaces, Then::Char(b'"')] };

enum Attempt {
    Match(usize),
    /// The text ends before the match is decided: where to go on (the
    /// pattern part and byte), or None when it ended inside the key.
    Open(Option<(usize, usize)>),
    Fail,
}

enum Search {
    /// End of the leftmost match.
    Found(usize),
    /// No match yet; one can only start at `from` or later, and the
    /// attempt at `from` may go on where it stopped.
    NotFound { from: usize, open: Option<(usize, usize)> },
}

fn skip_spaces(text: &str, at: usize) -> usize {
    let rest = text.get(at..).unwrap_or_default();
    at + (rest.len() - rest.trim_start().len())
}

impl KeyPattern {
    fn attempt(&self, text: &str, start: usize) -> Attempt {
        let rest = text.as_bytes().get(start..).unwrap_or_default();
        let mut open = false;
        for key in self.keys {
            let key = key.as_bytes();
            if rest.starts_with(key) {
                return self.attempt_then(text, 0, start + key.len());
            }
            open |= key.starts_with(rest);
        }
        if open {
            Attempt::Open(None)
        } else {
            Attempt::Fail
        }
    }

    /// Matches the parts after the key from part `first` on, at byte `at`.
    fn attempt_then(&self, text: &str, first: usize, mut at: usize) -> Attempt {
        for (part, then) in self.then.iter().enumerate().skip(first) {
            match *then {
                Then::Spaces => at = skip_spaces(text, at),
                Then::Char(expected) => match text.as_bytes().get(at) {
                    None => {
                        // More text may bring more spaces before the char.
                        let after_spaces = part > 0 && matches!(self.then.get(part - 1), Some(Then::Spaces));
                        return Attempt::Open(Some((if after_spaces { part - 1 } else { part }, at)));
                    }
                    Some(&byte) if byte == expected => at += 1,
                    Some(_) => return Attempt::Fail,
                },
            }
        }
        Attempt::Match(at)
    }

    /// Leftmost match at or after `from` (every key starts with `"`). An
    /// attempt left open at `from` goes on where it stopped, so a long run
    /// of spaces is read once; while it stays open no later start can match,
    /// since inside a key and its spaces only the key's first `"` can start one.
    fn search(&self, text: &str, from: usize, open: Option<(usize, usize)>) -> Search {
        let mut at = from;
        if let Some((part, resume_at)) = open {
            match self.attempt_then(text, part, resume_at) {
                Attempt::Match(end) => return Search::Found(end),
                Attempt::Open(open) => return Search::NotFound { from, open },
                Attempt::Fail => at = from + 1,
            }
        }
        let mut first_open = None;
        while let Some(start) = find_from(text, "\"", at) {
            match self.attempt(text, start) {
                Attempt::Match(end) => return Search::Found(end),
                Attempt::Open(open) => {
                    first_open.get_or_insert((start, open));
                }
                Attempt::Fail => {}
            }
            at = start + 1;
        }
        match first_open {
            Some((from, open)) => Search::NotFound { from, open },
            None => Search::NotFound { from: text.len(), open: None },
        }
    }
}

/// The first `"` not escaped by an odd run of backslashes, at or after `from`.
fn closing_quote(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = from;
    while let Some(quote) = find_from(text, "\"", at) {
        let backslashes =
            bytes.get(..quote).unwrap_or_default().iter().rev().take_while(|&&byte| byte == b'\\').count();
        if backslashes % 2 == 0 {
            return Some(quote);
        }
        at = quote + 1;
    }
    None
}

impl Dedent {
    fn is_initial(&self) -> bool {
        *self == Dedent::default()
    }

    fn apply(&mut self, text: &str) -> String {
        let mut kept = String::with_capacity(text.len());
        for c in text.chars() {
            if c == '\n' {
                self.removed = 0;
                self.line_has_text = false;
            } else if c.is_whitespace() {
                if self.removed < MAX_DEDENT && !self.line_has_text {
                    self.removed += 1;
                    continue;
                }
            } else {
                self.line_has_text = true;
            }
            kept.push(c);
        }
        kept
    }
}

impl ActionState {
    pub(super) fn is_initial(&self) -> bool {
        *self == ActionState::default()
    }

    /// The buffer was replaced: earlier searches say nothing about it.
    pub(super) fn forget_scan(&mut self) {
        self.scan_from = 0;
        self.scan_open = None;
    }

    /// One pass over the buffer; returns the bytes used up.
    pub(super) fn pass(&mut self, buffer: &str, out: &mut Collector) -> usize {
        // A trailing backslash may escape the next chunk's first char.
        if buffer.ends_with('\\') {
            return 0;
        }
        let mut used = 0;
        while let Some(rest) = buffer.get(used..).filter(|rest| !rest.is_empty()) {
            match self.step(rest, out) {
                Some(step_used) => {
                    used += step_used;
                    self.forget_scan();
                }
                None => {
                    used += self.drop_searched();
                    break;
                }
            }
        }
        used
    }

    /// While seeking a key, text before where a match could start is never
    /// looked at again: letting it go keeps the state small. (Not so for the
    /// arguments search, which goes back to the first `"parameters":`.)
    fn drop_searched(&mut self) -> usize {
        if !matches!(self.phase, Phase::SeekId | Phase::SeekName) {
            return 0;
        }
        let dropped = std::mem::take(&mut self.scan_from);
        self.scan_open = self.scan_open.map(|(part, at)| (part, at.saturating_sub(dropped)));
        dropped
    }

    /// One phase's work on `rest`: the bytes it used up, or None when it
    /// must wait for more text (with `scan_from` set for the next try).
    fn step(&mut self, rest: &str, out: &mut Collector) -> Option<usize> {
        match self.phase {
            Phase::SeekId => self.seek(&ID_KEY, rest, Phase::InId),
            Phase::SeekName => self.seek(&NAME_KEY, rest, Phase::InName),
            Phase::InId | Phase::InName => {
                let Some(quote) = closing_quote(rest, self.scan_from) else {
                    self.scan_from = rest.len();
                    return None;
                };
                // Raw text: escapes are not decoded.
                let value = rest.get(..quote).unwrap_or_default();
                let in_id = self.phase == Phase::InId;
                if !value.is_empty() {
                    if in_id {
                        out.tool_id(self.call, value);
                    } else {
                        out.tool_name(self.call, value);
                    }
                }
                self.phase = if in_id { Phase::SeekName } else { Phase::SeekArguments };
                Some(quote + 1)
            }
            Phase::SeekArguments => match OBJECT_ARGUMENTS.search(rest, self.scan_from, self.scan_open) {
                Search::Found(_) => {
                    // Arguments start at the FIRST `"parameters":`, which may
                    // belong to an earlier call with empty parameters.
                    let key = find_from(rest, PARAMETERS_KEY, 0).unwrap_or_default();
                    self.phase = Phase::InArguments;
                    Some(skip_spaces(rest, key + PARAMETERS_KEY.len()))
                }
                Search::NotFound { from, open } => {
                    // No arguments object: the call ends at the next `}`,
                    // which is not in text searched or matched before.
                    let searched = self.scan_open.map_or(self.scan_from, |(_, at)| at.max(self.scan_from));
                    let Some(brace) = find_from(rest, "}", searched) else {
                        (self.scan_from, self.scan_open) = (from, open);
                        return None;
                    };
                    self.end_call();
                    Some(brace)
                }
            },
            Phase::InArguments => {
                // Until the JSON is complete every byte is argument text,
                // even after an error that no later text can repair.
                let complete = self.arguments.first_complete(rest);
                let used = complete.unwrap_or(rest.len());
                let arguments = self.dedent.apply(rest.get(..used).unwrap_or_default());
                if !arguments.is_empty() {
                    out.tool_arguments(self.call, &arguments);
                }
                if complete.is_some() {
                    self.end_call();
                }
                Some(used)
            }
        }
    }

    fn seek(&mut self, pattern: &KeyPattern, rest: &str, next: Phase) -> Option<usize> {
        match pattern.search(rest, self.scan_from, self.scan_open) {
            Search::Found(end) => {
                self.phase = next;
                Some(end)
            }
            Search::NotFound { from, open } => {
                (self.scan_from, self.scan_open) = (from, open);
                None
            }
        }
    }

    fn end_call(&mut self) {
        self.call += 1;
        self.phase = Phase::SeekId;
    }
}
