//! Python `re` patterns, for parsers whose vLLM code is a set of regexes
//! too tangled to restate by hand (lazy groups, lookaheads, `$` before a
//! final newline). Oniguruma, which `tokenizers` already builds, has a
//! Python syntax: backtracking, `\s` and `\w` over Unicode, and `$` as
//! Python reads it without `re.MULTILINE`.
//!
//! A backtracking search can take exponential time on adversarial text
//! (`<tool_call>` and 4,096 spaces takes Python's `regex` 96 s on one
//! poolside pattern). Oniguruma gives up after its retry limit; the search
//! then runs on the `regex` crate, whose leftmost-first semantics give a
//! backtracking engine's spans and groups in linear time, for every
//! pattern it can compile.

use std::sync::OnceLock;

use onig::{MatchParam, Regex, RegexOptions, Region, SearchOptions, Syntax};

/// A compiled pattern. Patterns are constants of the parsers: one that
/// does not compile is a bug, caught by the tests that use it.
pub struct Pattern {
    source: String,
    onig: Option<Regex>,
    linear: OnceLock<Option<regex::Regex>>,
}

/// One match: the whole span and the groups' texts.
pub struct Match<'t> {
    pub start: usize,
    pub end: usize,
    groups: Vec<Option<&'t str>>,
}

impl<'t> Match<'t> {
    /// `m.group(i)`, `None` for a group that did not take part.
    pub fn group(&self, i: usize) -> Option<&'t str> {
        self.groups.get(i).copied().flatten()
    }
}

/// The search gave up (Oniguruma's retry limit).
struct GaveUp;

/// `source` for the `regex` crate, or `None` where it would read it
/// otherwise than Python: `$` (Python's also matches before a final
/// newline) and `\s`, widened to Python's whitespace (`\x1c`-`\x1f` too).
fn linear_source(source: &str) -> Option<String> {
    let mut out = String::with_capacity(source.len() + 16);
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        match c {
            '$' => return None,
            '\\' => match chars.next()? {
                's' => out.push_str(r"[\s\x1c-\x1f]"),
                next => {
                    out.push('\\');
                    out.push(next);
                }
            },
            _ => out.push(c),
        }
    }
    Some(out)
}

impl Pattern {
    pub fn new(pattern: &str) -> Pattern {
        Pattern {
            source: pattern.to_string(),
            onig: Regex::with_options(pattern, RegexOptions::REGEX_OPTION_NONE, Syntax::python()).ok(),
            linear: OnceLock::new(),
        }
    }

    fn matches<'t>(&self, text: &'t str) -> Vec<Match<'t>> {
        let Some(re) = &self.onig else { return Vec::new() };
        match backtracking(re, text) {
            Ok(found) => found,
            Err(GaveUp) => {
                match self.linear.get_or_init(|| linear_source(&self.source).and_then(|s| regex::Regex::new(&s).ok())) {
                    Some(linear) => linear
                        .captures_iter(text)
                        .filter_map(|caps| {
                            let whole = caps.get(0)?;
                            let groups = caps.iter().map(|g| g.map(|g| g.as_str())).collect();
                            Some(Match { start: whole.start(), end: whole.end(), groups })
                        })
                        .collect(),
                    // No engine answers in time: taken as no match.
                    None => Vec::new(),
                }
            }
        }
    }

    /// `re.search`.
    pub fn search<'t>(&self, text: &'t str) -> Option<Match<'t>> {
        self.matches(text).into_iter().next()
    }

    /// `re.finditer`.
    pub fn finditer<'t>(&self, text: &'t str) -> Vec<Match<'t>> {
        self.matches(text)
    }

    /// `re.findall` of a pattern with one group.
    pub fn findall<'t>(&self, text: &'t str) -> Vec<&'t str> {
        self.matches(text).into_iter().map(|m| m.group(1).unwrap_or("")).collect()
    }

    /// `re.sub(pattern, "", text)`.
    pub fn remove(&self, text: &str) -> String {
        self.replace(text, "")
    }

    /// `re.sub(pattern, with, text)` for a replacement without escapes.
    pub fn replace(&self, text: &str, with: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for m in self.matches(text) {
            out.push_str(&text[at..m.start]);
            out.push_str(with);
            at = m.end;
        }
        out.push_str(&text[at..]);
        out
    }
}

/// Oniguruma's `captures_iter` (an empty match right after the last match
/// is skipped), without its panic when a search gives up.
fn backtracking<'t>(re: &Regex, text: &'t str) -> Result<Vec<Match<'t>>, GaveUp> {
    let mut found = Vec::new();
    let (mut at, mut last_end) = (0, None);
    while at <= text.len() {
        let mut region = Region::new();
        let searched = re.search_with_param(
            text,
            at,
            text.len(),
            SearchOptions::SEARCH_OPTION_NONE,
            Some(&mut region),
            MatchParam::default(),
        );
        if searched.map_err(|_| GaveUp)?.is_none() {
            break;
        }
        let Some((start, end)) = region.pos(0) else { break };
        if start == end && last_end == Some(end) {
            at += text[at..].chars().next().map_or(1, char::len_utf8);
            continue;
        }
        (at, last_end) = (end, Some(end));
        let groups = (0..region.len()).map(|i| region.pos(i).map(|(a, b)| &text[a..b])).collect();
        found.push(Match { start, end, groups });
    }
    Ok(found)
}

/// `re.fullmatch(pattern, text, pos)` (`dotall`: with `re.DOTALL`);
/// `None` when the pattern does not compile.
pub fn fullmatch_at(pattern: &str, text: &str, pos: usize, dotall: bool) -> Option<bool> {
    let options = if dotall { RegexOptions::REGEX_OPTION_MULTILINE } else { RegexOptions::REGEX_OPTION_NONE };
    // The match must run to the end of the text, whichever way it gets there.
    let whole = Regex::with_options(&format!("(?:{pattern})(?![\\s\\S])"), options, Syntax::python()).ok()?;
    let at = text.char_indices().nth(pos).map_or(text.len(), |(i, _)| i);
    Some(whole.match_with_options(text, at, onig::SearchOptions::SEARCH_OPTION_NONE, None).is_some())
}

/// `re.fullmatch(pattern, text)`, without flags.
pub fn fullmatch(pattern: &str, text: &str) -> Option<bool> {
    fullmatch_at(pattern, text, 0, false)
}

/// `re.escape`: Python's special characters behind a backslash.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "()[]{}?*+-|^$\\.&~# \t\n\r\u{b}\u{c}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_text_matches_itself() {
        let text = "<a:b.c|d(e)*>";
        assert_eq!(escape(text), "<a:b\\.c\\|d\\(e\\)\\*>");
        let p = Pattern::new(&format!("{}(.*?){}", escape(text), escape("$")));
        assert_eq!(p.findall(&format!("{text}x$ {text}ab")), vec!["x"]);
    }

    #[test]
    fn reads_as_python_does() {
        // `$` also matches before a final newline; lazy groups stop early.
        let p = Pattern::new(r"\[TOOL_CALLS\]([\s\S]*?)(?=\n|$)");
        assert_eq!(p.findall("a[TOOL_CALLS][1]\nb[TOOL_CALLS][2]"), ["[1]", "[2]"]);
        let p = Pattern::new(r"x(.*?)$");
        assert_eq!(p.search("x12\n").and_then(|m| m.group(1)), Some("12"));
        assert_eq!(Pattern::new(r"```(?:json)?\s*([\s\S]*?)```").remove("a```json [1]```b"), "ab");
        assert!(Pattern::new("(").search("(").is_none());
    }

    #[test]
    fn a_search_that_gives_up_answers_from_the_linear_engine() {
        // Python's `regex` takes 96 s on the padded call and finds none;
        // the well-formed call after it is found.
        let p = Pattern::new(r"(?s)<tool_call>\s*([^\n<]+?)\s*\n?\s*(<arg_key>.*?)?</tool_call>");
        let padded = format!("<tool_call>{}<x</tool_call>", " ".repeat(4096));
        assert!(p.search(&padded).is_none());
        let text = format!("{padded}<tool_call>f\n<arg_key>a</arg_key></tool_call>");
        let found = p.finditer(&text);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].group(1), found[0].group(2)), (Some("f"), Some("<arg_key>a</arg_key>")));
        assert_eq!(linear_source(r"a\s[^\s]\\s"), Some(r"a[\s\x1c-\x1f][^[\s\x1c-\x1f]]\\s".to_string()));
        assert_eq!(linear_source(r"x$"), None);
    }

    #[test]
    fn fullmatch_runs_to_the_end() {
        assert_eq!(fullmatch(".+?", "ab"), Some(true));
        assert_eq!(fullmatch(".+?", "a\nb"), Some(false));
        assert_eq!(fullmatch_at(".+?", "a\nb", 0, true), Some(true));
        assert_eq!(fullmatch("a|ab", "ab"), Some(true));
        assert_eq!(fullmatch_at("b", "ab", 1, false), Some(true));
        assert_eq!(fullmatch("(", "("), None);
    }
}
