//! vLLM's rewrites that make a model's broken pythonic tool text parse
//! (`tool_parsers/utils.py`): raw control characters and leading-zero
//! integers, unescaped nested quotes, and parameters named after Python
//! keywords. Each is a no-op on text that already parses.

use serde_json::{Map, Value};

use crate::parse::partial_json::py_isspace;
use crate::parse::pyast::parses;
use crate::pycompat::json::{dumps, loads};

const RESERVED_SUFFIX: &str = "_pyreservedkw_";

/// `keyword.iskeyword`.
fn is_keyword(name: &str) -> bool {
    const KEYWORDS: [&str; 35] = [
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
        "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
        "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
    ];
    KEYWORDS.contains(&name)
}

fn is_name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The end of the string literal opened by `quote` at `open` (its closing
/// quote's index, or the text's end), copying it to `out`.
fn copy_string(c: &[char], open: usize, out: &mut String) -> usize {
    let quote = c[open];
    out.push(quote);
    let mut i = open + 1;
    while i < c.len() {
        out.push(c[i]);
        if c[i] == '\\' && i + 1 < c.len() {
            out.push(c[i + 1]);
            i += 2;
            continue;
        }
        if c[i] == quote {
            return i + 1;
        }
        i += 1;
    }
    i
}

/// `escape_ctrl_chars_in_strings`.
pub(super) fn escape_ctrl_chars(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let c: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        match quote {
            None => {
                if ch == '\'' || ch == '"' {
                    quote = Some(ch);
                }
                out.push(ch);
            }
            Some(_) if ch == '\\' && i + 1 < c.len() => {
                out.push(ch);
                out.push(c[i + 1]);
                i += 2;
                continue;
            }
            Some(q) if ch == q => {
                quote = None;
                out.push(ch);
            }
            Some(_) => match ch {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\0' => out.push_str("\\x00"),
                _ => out.push(ch),
            },
        }
        i += 1;
    }
    out
}

/// `normalize_leading_zero_ints`: `07` → `7` outside strings.
pub(super) fn normalize_leading_zero_ints(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '\'' || ch == '"' {
            i = copy_string(&c, i, &mut out);
        } else if is_name_start(ch) {
            let end = (i..c.len()).find(|&j| !is_name_char(c[j])).unwrap_or(c.len());
            out.extend(&c[i..end]);
            i = end;
        } else if ch.is_ascii_digit() {
            let end = (i..c.len()).find(|&j| !(c[j].is_ascii_digit() || c[j] == '_')).unwrap_or(c.len());
            let token: String = c[i..end].iter().collect();
            let digits = token.replace('_', "");
            let follower = c.get(end).copied();
            let after_dot = i > 0 && c[i - 1] == '.';
            let significant = digits.trim_start_matches('0');
            if digits.starts_with('0')
                && !significant.is_empty()
                && !after_dot
                && !matches!(follower, Some('.' | 'e' | 'E' | 'j' | 'J'))
            {
                out.push_str(significant);
            } else {
                out.push_str(&token);
            }
            i = end;
        } else {
            out.push(ch);
            i += 1;
        }
    }
    out
}

/// `rename_reserved_kwargs`: `(from=1` → `(from_pyreservedkw_=1`, and
/// whether anything was renamed.
pub(super) fn rename_reserved_kwargs(text: &str) -> (String, bool) {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let (mut changed, mut last_sig) = (false, None::<char>);
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '\'' || ch == '"' {
            i = copy_string(&c, i, &mut out);
            last_sig = Some(ch);
        } else if is_name_start(ch) {
            let end = (i..c.len()).find(|&j| !is_name_char(c[j])).unwrap_or(c.len());
            let name: String = c[i..end].iter().collect();
            let look = (end..c.len()).find(|&j| !c[j].is_whitespace()).unwrap_or(c.len());
            let keyword_arg = is_keyword(&name)
                && c.get(look) == Some(&'=')
                && c.get(look + 1) != Some(&'=')
                && matches!(last_sig, Some('(' | ','));
            out.push_str(&name);
            if keyword_arg {
                out.push_str(RESERVED_SUFFIX);
                changed = true;
            }
            last_sig = c.get(end - 1).copied();
            i = end;
        } else {
            out.push(ch);
            if !ch.is_whitespace() {
                last_sig = Some(ch);
            }
            i += 1;
        }
    }
    (out, changed)
}

/// `_restore_reserved` on a call's JSON arguments.
pub(super) fn restore_reserved_kwarg_names(arguments: &str) -> String {
    let Some(Value::Object(args)) = loads(arguments) else { return arguments.to_string() };
    let mut restored = Map::new();
    for (key, value) in &args {
        let stem = key.strip_suffix(RESERVED_SUFFIX).filter(|s| is_keyword(s));
        restored.insert(stem.unwrap_or(key).to_string(), value.clone());
    }
    if restored == args {
        arguments.to_string()
    } else {
        dumps(&Value::Object(restored))
    }
}

const QUOTE_FOLLOWERS: [char; 5] = [',', ')', ']', '}', ':'];

/// The next non-blank character after `pos` can follow a closing quote.
fn is_closer(c: &[char], pos: usize) -> bool {
    let k = (pos + 1..c.len()).find(|&k| !py_isspace(c[k]));
    k.is_some_and(|k| QUOTE_FOLLOWERS.contains(&c[k]))
}

fn is_escaped(c: &[char], index: usize) -> bool {
    c[..index].iter().rev().take_while(|&&ch| ch == '\\').count() % 2 == 1
}

/// Unescaped `quote`s from `start` on.
fn unescaped_quotes(c: &[char], start: usize, quote: char) -> Vec<usize> {
    let mut out = Vec::new();
    let mut j = start;
    while j < c.len() {
        if c[j] == '\\' {
            j += 2;
            continue;
        }
        if c[j] == quote {
            out.push(j);
        }
        j += 1;
    }
    out
}

/// `escape_nested_quotes_in_strings`: the first string whose first closing
/// quote cannot close it gets the one closing quote that makes the text
/// parse, its inner quotes escaped; ambiguous or hopeless text is left.
pub(super) fn escape_nested_quotes(text: &str) -> (String, bool) {
    let c: Vec<char> = text.chars().collect();
    let mut prefix = String::new();
    let mut i = 0;
    while i < c.len() {
        let quote = c[i];
        if quote != '\'' && quote != '"' {
            prefix.push(quote);
            i += 1;
            continue;
        }
        let quotes = unescaped_quotes(&c, i + 1, quote);
        let Some(&first) = quotes.first() else { return (text.to_string(), false) };
        if is_closer(&c, first) {
            prefix.extend(&c[i..=first]);
            i = first + 1;
            continue;
        }
        let mut winners = quotes.iter().filter(|&&close| is_closer(&c, close)).filter_map(|&close| {
            let mut candidate = prefix.clone();
            candidate.push(quote);
            for j in i + 1..close {
                if c[j] == quote && !is_escaped(&c, j) {
                    candidate.push('\\');
                }
                candidate.push(c[j]);
            }
            candidate.push(quote);
            candidate.extend(&c[close + 1..]);
            parses(&escape_ctrl_chars(&candidate)).then_some(candidate)
        });
        return match (winners.next(), winners.next()) {
            (Some(only), None) => (only, true),
            _ => (text.to_string(), false),
        };
    }
    (text.to_string(), false)
}

/// `contains_broken_string_literal`: some string's first closing quote
/// cannot close it (or is last, its follower unknown).
pub(super) fn contains_broken_string_literal(text: &str) -> bool {
    let c: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < c.len() {
        let quote = c[i];
        if quote == '\\' {
            i += 2;
            continue;
        }
        if quote != '\'' && quote != '"' {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        let mut close = None;
        while j < c.len() {
            if c[j] == '\\' {
                j += 2;
                continue;
            }
            if c[j] == quote {
                close = Some(j);
                break;
            }
            j += 1;
        }
        let Some(close) = close else { return false };
        if !is_closer(&c, close) {
            return true;
        }
        i = close + 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_as_vllm_does() {
        assert_eq!(escape_ctrl_chars("f(a='x\ny')\n"), "f(a='x\\ny')\n");
        assert_eq!(normalize_leading_zero_ints("f(m=07, d=00, x=1.07, s='07')"), "f(m=7, d=00, x=1.07, s='07')");
        assert_eq!(
            rename_reserved_kwargs("[f(from=1, x=True, y='in=2')]"),
            ("[f(from_pyreservedkw_=1, x=True, y='in=2')]".into(), true)
        );
        assert_eq!(restore_reserved_kwarg_names(r#"{"from_pyreservedkw_": 1}"#), r#"{"from": 1}"#);
        assert_eq!(
            escape_nested_quotes("[run(cmd='sed -n '1,9p' f.py')]"),
            ("[run(cmd='sed -n \\'1,9p\\' f.py')]".into(), true)
        );
        assert!(contains_broken_string_literal("[run(cmd='sed -n '1,9p"));
        assert!(!contains_broken_string_literal("[run(cmd='sed"));
    }
}
