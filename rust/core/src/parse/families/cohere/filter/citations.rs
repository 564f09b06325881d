//! Inline citations in answer and thinking text (melody's cmd3 style):
//! `<co>cited text</co: 0:[1,2],1:[3]>` becomes `cited text` plus a
//! [`Citation`]. An open citation's body is streamed as it arrives.
//!
//! Every search below is a "first occurrence in the text" search, as in
//! melody. While the filter waits for a citation to close, the buffer only
//! grows at its end, so [`ScanMemo`] keeps what earlier passes found and
//! the next pass searches only the new bytes.

use serde::{Deserialize, Serialize};

use super::find_from;
use super::grounded::TextState;
use super::output::{Citation, CitationSource};

const OPENER: &str = "<co>";
const CLOSER: &str = "</co: ";
const CLOSER_END: &str = ">";

/// Where each marker was first found in the first `upto` bytes of the
/// trimmed buffer. Only valid while nothing has been consumed from the
/// buffer since; reset otherwise.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct ScanMemo {
    #[serde(rename = "u")]
    upto: usize,
    #[serde(rename = "l", default, skip_serializing_if = "Option::is_none")]
    less_than: Option<usize>,
    #[serde(rename = "o", default, skip_serializing_if = "Option::is_none")]
    opener: Option<usize>,
    #[serde(rename = "c", default, skip_serializing_if = "Option::is_none")]
    closer: Option<usize>,
    /// The first `>` after `closer`.
    #[serde(rename = "e", default, skip_serializing_if = "Option::is_none")]
    closer_end: Option<usize>,
}

/// A marker's first full occurrence, or a proper prefix of it ending the text.
#[derive(Clone, Copy)]
enum Marker {
    Full(usize),
    Partial(usize),
    Absent,
}

/// The markers of one text, found with the help of a memo.
struct Marks {
    has_less_than: bool,
    opener: Marker,
    closer: Marker,
    closer_end: Option<usize>,
}

/// The text (and citations) one parse emits.
#[derive(Default)]
pub(super) struct Piece {
    pub(super) text: String,
    pub(super) citations: Vec<Citation>,
}

impl Piece {
    pub(super) fn is_empty(&self) -> bool {
        self.text.is_empty() && self.citations.is_empty()
    }
}

/// What parsing the start of a text gave.
enum Step {
    /// Text to emit and the bytes it used up; parsing stops.
    Emit(String, usize),
    /// A whole citation; parsing goes on after `used`.
    Cited { text: String, citation: Citation, used: usize },
    /// Nothing can be decided yet.
    Wait,
}

/// Where a proper prefix of `marker` starts if one ends `text` (for these
/// markers at most one can).
fn tail_prefix(text: &str, marker: &str) -> Option<usize> {
    (1..marker.len()).rev().find_map(|len| {
        let prefix = marker.get(..len)?;
        text.ends_with(prefix).then(|| text.len() - len)
    })
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

impl ScanMemo {
    pub(super) fn is_initial(&self) -> bool {
        *self == ScanMemo::default()
    }
}

impl Marks {
    fn find(text: &str, memo: &ScanMemo) -> (Marks, ScanMemo) {
        // A stale memo (the text got shorter) must not be trusted.
        let memo = if memo.upto <= text.len() { memo.clone() } else { ScanMemo::default() };
        let resume = |marker: &str| memo.upto.saturating_sub(marker.len() - 1);
        let less_than = memo.less_than.or_else(|| find_from(text, "<", memo.upto));
        let opener = memo.opener.or_else(|| find_from(text, OPENER, resume(OPENER)));
        let closer = memo.closer.or_else(|| find_from(text, CLOSER, resume(CLOSER)));
        let closer_end = closer.and_then(|closer_at| {
            if memo.closer == Some(closer_at) {
                memo.closer_end.or_else(|| find_from(text, CLOSER_END, memo.upto.max(closer_at + 1)))
            } else {
                find_from(text, CLOSER_END, closer_at + 1)
            }
        });
        let marks = Marks {
            has_less_than: less_than.is_some(),
            opener: opener
                .map_or_else(|| tail_prefix(text, OPENER).map_or(Marker::Absent, Marker::Partial), Marker::Full),
            closer: closer
                .map_or_else(|| tail_prefix(text, CLOSER).map_or(Marker::Absent, Marker::Partial), Marker::Full),
            closer_end,
        };
        (marks, ScanMemo { upto: text.len(), less_than, opener, closer, closer_end })
    }
}

impl TextState {
    /// melody's `parse_citations`: the piece to emit (None: nothing yet)
    /// and the bytes of `text` used up, plus the memo for `text`.
    pub(super) fn parse_citations(&mut self, text: &str, reasoning: bool) -> (Option<Piece>, usize, ScanMemo) {
        let (marks, memo) = Marks::find(text, &self.memo);
        let mut piece: Option<Piece> = None;
        let mut used = 0;
        let mut step = self.step(text, &marks, reasoning);
        loop {
            match step {
                Step::Wait => break,
                Step::Emit(emitted, step_used) => {
                    piece.get_or_insert_with(Piece::default).text.push_str(&emitted);
                    used += step_used;
                    break;
                }
                Step::Cited { text: cited_text, citation, used: step_used } => {
                    let piece = piece.get_or_insert_with(Piece::default);
                    piece.text.push_str(&cited_text);
                    piece.citations.push(citation);
                    used += step_used;
                }
            }
            // After a citation, the rest is parsed afresh (melody recurses).
            let rest = text.get(used..).unwrap_or_default();
            let (marks, _) = Marks::find(rest, &ScanMemo::default());
            step = self.step(rest, &marks, reasoning);
        }
        (piece, used, memo)
    }

    fn step(&mut self, text: &str, marks: &Marks, reasoning: bool) -> Step {
        if !marks.has_less_than {
            return self.emit_plain(text);
        }
        let opener_at = match marks.opener {
            Marker::Full(at) => at,
            Marker::Partial(_) => return Step::Wait,
            Marker::Absent => return self.emit_plain(text),
        };
        match marks.closer {
            Marker::Full(closer_at) => match marks.closer_end {
                // A closer before the opener: melody calls it invalid and
                // waits, for good, since both stay the first ones found.
                Some(_) if opener_at + OPENER.len() - 1 > closer_at => Step::Wait,
                Some(end_at) => self.cite(text, opener_at, closer_at, end_at, reasoning),
                None => self.stream_body(text, opener_at, Some(closer_at)),
            },
            Marker::Partial(closer_at) => self.stream_body(text, opener_at, Some(closer_at)),
            Marker::Absent => self.stream_body(text, opener_at, None),
        }
    }

    fn emit_plain(&mut self, text: &str) -> Step {
        self.index += chars(text);
        Step::Emit(text.to_owned(), text.len())
    }

    /// A complete `<co>body</co: sources>`.
    fn cite(&mut self, text: &str, opener_at: usize, closer_at: usize, end_at: usize, reasoning: bool) -> Step {
        let before = text.get(..opener_at).unwrap_or_default();
        let body = text.get(opener_at + OPENER.len()..closer_at).unwrap_or_default();
        let start_index = self.index + chars(before);
        let body_chars = chars(body);
        self.index = start_index + body_chars;
        // Text before the opener and the body's start may already be out.
        let emitted = match self.sent_upto.take() {
            Some(sent) if sent < closer_at => text.get(sent..closer_at).unwrap_or_default().to_owned(),
            Some(_) => String::new(),
            None => format!("{before}{body}"),
        };
        let sources = parse_sources(text.get(closer_at + CLOSER.len()..end_at).unwrap_or_default());
        let citation = Citation {
            start_index,
            end_index: start_index + body_chars,
            text: body.to_owned(),
            sources,
            is_thinking: reasoning,
        };
        Step::Cited { text: emitted, citation, used: end_at + CLOSER_END.len() }
    }

    /// Inside an open citation: emit the text before the opener and the
    /// body not sent yet, stopping at a closer (or its prefix) if any.
    /// `sent_upto` moves to the end of the text even when emission stops
    /// earlier, so a closer prefix that turns out not to be one is lost.
    fn stream_body(&mut self, text: &str, opener_at: usize, closer_at: Option<usize>) -> Step {
        let before = text.get(..opener_at).unwrap_or_default();
        self.index += chars(before);
        let start = match self.sent_upto {
            Some(sent) if sent >= text.len() => return Self::emit_before(before),
            Some(sent) => sent,
            None => opener_at + OPENER.len(),
        };
        self.sent_upto = Some(text.len() - before.len());
        let end = closer_at.filter(|&at| at > 0).unwrap_or(text.len());
        if start >= end {
            return Self::emit_before(before);
        }
        let body = text.get(start..end).unwrap_or_default();
        Step::Emit(format!("{before}{body}"), before.len())
    }

    fn emit_before(before: &str) -> Step {
        if before.is_empty() {
            Step::Wait
        } else {
            Step::Emit(before.to_owned(), before.len())
        }
    }
}

/// `0:[1,2],1:[3]` → sources; malformed groups are skipped, bad result
/// indices dropped.
fn parse_sources(inner: &str) -> Vec<CitationSource> {
    let mut groups: Vec<&str> = inner.trim().split(']').collect();
    groups.pop();
    groups
        .into_iter()
        .filter_map(|group| {
            let parts: Vec<&str> = group.trim_start_matches(',').split(':').collect();
            let [call, results] = parts.as_slice() else {
                return None;
            };
            let tool_call_index = call.trim().parse::<usize>().ok()?;
            let tool_result_indices = results
                .trim_start_matches('[')
                .split(',')
                .filter_map(|index| index.trim().parse::<usize>().ok())
                .collect();
            Some(CitationSource { tool_call_index, tool_result_indices })
        })
        .collect()
}
