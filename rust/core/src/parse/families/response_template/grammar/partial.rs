//! `_spells_closer`: whether a call's argument framing can spell the
//! call's closer across its pieces, read with partial matches (the `regex`
//! module's `fullmatch(..., partial=True)`: the text could still grow into
//! a match). A lazy DFA answers both kinds of match.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use regex_automata::hybrid::dfa::DFA;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input};

/// A piece of a call's text: what it spells, what it may end with, and
/// whether it may hold a whole closer.
pub struct Piece {
    pub text: String,
    pub endings: String,
    pub holds: bool,
}

fn alternation(literals: &[String]) -> String {
    literals.iter().map(|l| regex_syntax_escape(l)).collect::<Vec<_>>().join("|")
}

fn regex_syntax_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `_endings`: every suffix of the literals.
pub fn endings(literals: &[String]) -> String {
    let mut all = Vec::new();
    for literal in literals {
        for (i, _) in literal.char_indices() {
            all.push(regex_syntax_escape(&literal[i..]));
        }
    }
    all.join("|")
}

/// `_literal_piece`: one of the literals after `before`.
pub fn literal_piece(literals: &[String], before: &str) -> Piece {
    let either = format!("{before}(?:{})", alternation(literals));
    Piece { endings: format!("{either}|{}", endings(literals)), text: either, holds: true }
}

/// A pattern read anchored at both ends.
struct Whole {
    dfa: DFA,
}

impl Whole {
    fn new(pattern: &str, dotall: bool) -> Option<Whole> {
        let dfa = DFA::builder().syntax(syntax::Config::new().dot_matches_new_line(dotall)).build(pattern).ok()?;
        Some(Whole { dfa })
    }

    /// `fullmatch` (`partial`: or the text could still grow into one).
    fn fullmatch(&self, text: &str, partial: bool) -> bool {
        let mut cache = self.dfa.create_cache();
        let input = Input::new(text).anchored(Anchored::Yes);
        let Ok(mut sid) = self.dfa.start_state_forward(&mut cache, &input) else { return partial };
        for &b in text.as_bytes() {
            match self.dfa.next_state(&mut cache, sid, b) {
                Ok(next) => sid = next,
                Err(_) => return partial,
            }
            if sid.is_dead() {
                return false;
            }
        }
        if partial {
            return true;
        }
        self.dfa.next_eoi_state(&mut cache, sid).is_ok_and(|s| s.is_match())
    }
}

/// `_spells_closer`, cached as vLLM caches it (every request derives its
/// tools' tags anew, mostly from the same tools).
pub fn spells_closer(closers: &[String], pieces: &[Piece], repeats: bool) -> bool {
    static CACHE: OnceLock<Mutex<HashMap<String, bool>>> = OnceLock::new();
    let mut key = format!("{repeats}\u{0}{}", closers.join("\u{1}"));
    for p in pieces {
        key.push_str(&format!("\u{0}{}\u{1}{}\u{1}{}", p.text, p.endings, p.holds));
    }
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.lock().ok().and_then(|c| c.get(&key).copied()) {
        return hit;
    }
    let spelled = spells(closers, pieces, repeats);
    if let Ok(mut c) = cache.lock() {
        if c.len() >= 512 {
            c.clear();
        }
        c.insert(key, spelled);
    }
    spelled
}

/// A piece Rust's regex syntax cannot read counts as spelling a closer:
/// no grammar is better than a wrong one.
fn spells(closers: &[String], pieces: &[Piece], repeats: bool) -> bool {
    let texts: Vec<&str> = pieces.iter().map(|p| p.text.as_str()).collect();
    let repeated = if repeats { format!("(?:{})*", texts.concat()) } else { String::new() };
    // Another call or an answer may follow the call's own closer.
    let closed = format!("(?:{})[\\s\\S]*", alternation(closers));
    for (index, piece) in pieces.iter().enumerate() {
        let (Some(ends), Some(rest)) = (
            Whole::new(&piece.endings, false),
            Whole::new(&format!("{}{repeated}{closed}", texts[index + 1..].concat()), true),
        ) else {
            return true;
        };
        for closer in closers {
            if piece.holds && ends.fullmatch(closer, true) {
                return true;
            }
            // A closer that starts in this piece and ends in the text after it.
            for (split, _) in closer.char_indices().skip(1) {
                if ends.fullmatch(&closer[..split], false) && rest.fullmatch(&closer[split..], true) {
                    return true;
                }
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(items: &[&str]) -> Vec<String> {
        items.iter().map(|i| i.to_string()).collect()
    }

    #[test]
    fn partial_matches_read_as_the_regex_module_does() {
        let w = Whole::new("abc|x", false).unwrap();
        assert!(w.fullmatch("ab", true) && !w.fullmatch("ab", false) && w.fullmatch("abc", false));
        assert!(!w.fullmatch("abd", true));
    }

    #[test]
    fn json_syntax_closers_are_spelled() {
        let json = Piece { text: r"[\s\S]*".into(), endings: r"[\s\S]*[\]}]".into(), holds: false };
        // `]` ends JSON and starts the closer `]]`.
        assert!(spells_closer(&s(&["]]"]), &[json], false));
        let json = Piece { text: r"[\s\S]*".into(), endings: r"[\s\S]*[\]}]".into(), holds: false };
        assert!(!spells_closer(&s(&["</tool_call>"]), &[json], false));
    }

    #[test]
    fn beams_parameters_spell_no_closer() {
        let pieces = [
            literal_piece(&s(&["<rfl:parameter name=\""]), r"\n?"),
            Piece { text: r#"(?:[^"]+)"#.into(), endings: endings(&s(&["city", "x<|"])), holds: false },
            literal_piece(&s(&["\">"]), ""),
            Piece { text: r"[\s\S]*".into(), endings: r"[\s\S]+".into(), holds: false },
            literal_piece(&s(&["</rfl:parameter>"]), ""),
        ];
        assert!(!spells_closer(&s(&["<|call|>", "<|end|>"]), &pieces, true));
        // A literal holding a closer spells it.
        let pieces = [literal_piece(&s(&["<|call|>x"]), "")];
        assert!(spells_closer(&s(&["<|call|>"]), &pieces, false));
    }
}
