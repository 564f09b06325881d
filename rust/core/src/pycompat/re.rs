//! Python `re` patterns, for parsers whose vLLM code is a set of regexes
//! too tangled to restate by hand (lazy groups, lookaheads, `$` before a
//! final newline). Oniguruma, which `tokenizers` already builds, has a
//! Python syntax: backtracking, `\s` and `\w` over Unicode, and `$` as
//! Python reads it without `re.MULTILINE`.

use onig::{Regex, RegexOptions, Syntax};

/// A compiled pattern. Patterns are constants of the parsers: one that
/// does not compile is a bug, caught by the tests that use it.
pub struct Pattern(Option<Regex>);

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

impl Pattern {
    pub fn new(pattern: &str) -> Pattern {
        Pattern(Regex::with_options(pattern, RegexOptions::REGEX_OPTION_NONE, Syntax::python()).ok())
    }

    fn matches<'s, 't: 's>(&'s self, text: &'t str) -> impl Iterator<Item = Match<'t>> + 's {
        self.0.iter().flat_map(move |re| re.captures_iter(text)).filter_map(|caps| {
            let (start, end) = caps.pos(0)?;
            Some(Match { start, end, groups: (0..caps.len()).map(|i| caps.at(i)).collect() })
        })
    }

    /// `re.search`.
    pub fn search<'t>(&self, text: &'t str) -> Option<Match<'t>> {
        self.matches(text).next()
    }

    /// `re.finditer`.
    pub fn finditer<'t>(&self, text: &'t str) -> Vec<Match<'t>> {
        self.matches(text).collect()
    }

    /// `re.findall` of a pattern with one group.
    pub fn findall<'t>(&self, text: &'t str) -> Vec<&'t str> {
        self.matches(text).map(|m| m.group(1).unwrap_or("")).collect()
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
    fn fullmatch_runs_to_the_end() {
        assert_eq!(fullmatch(".+?", "ab"), Some(true));
        assert_eq!(fullmatch(".+?", "a\nb"), Some(false));
        assert_eq!(fullmatch_at(".+?", "a\nb", 0, true), Some(true));
        assert_eq!(fullmatch("a|ab", "ab"), Some(true));
        assert_eq!(fullmatch_at("b", "ab", 1, false), Some(true));
        assert_eq!(fullmatch("(", "("), None);
    }
}
