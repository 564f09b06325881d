//! The literal strings a template's delimiter patterns stand for
//! (`_literals` and its helpers), the escaping the tags' regexes use, and
//! the regexes built from literals (`_nonempty_start`, `_other_names`).

/// Stands for `^` while a pattern is expanded.
pub const START: char = '\0';
/// Precedes the text of a final lookahead while a pattern is expanded.
pub const AHEAD: char = '\u{1}';
/// vLLM's bound on the strings one delimiter pattern expands to.
const MAX_LITERALS: usize = 16;
/// `_REGEX_META`.
const META: &str = ".^$*+?{}[]\\|()";

/// `_literals`: the literal alternatives a pattern spells, `^` allowed only
/// at the message start and a final lookahead only with `lookahead`.
pub fn literals(pattern: &str, message_start: bool, lookahead: bool) -> Option<Vec<String>> {
    let chars: Vec<char> = pattern.chars().collect();
    let (found, index) = alternatives(&chars, 0);
    let found = found.filter(|_| index == chars.len())?;
    let allowed = usize::from(lookahead);
    if found.iter().any(|l| l.chars().filter(|&c| c == AHEAD).count() > allowed) {
        return None;
    }
    if !message_start {
        return (!found.iter().any(|l| l.contains(START))).then_some(found);
    }
    let start = START.to_string();
    Some(
        found
            .iter()
            .filter(|l| !l.chars().skip(1).any(|c| c == START) && **l != start)
            .map(|l| l.strip_prefix(START).unwrap_or(l).to_string())
            .collect(),
    )
}

/// `list(dict.fromkeys(items))`.
pub fn unique(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

fn alternatives(p: &[char], mut index: usize) -> (Option<Vec<String>>, usize) {
    let mut found = Vec::new();
    loop {
        let (branch, next) = concatenation(p, index);
        index = next;
        let Some(branch) = branch else { return (None, index) };
        found.extend(branch);
        if p.get(index) != Some(&'|') {
            break;
        }
        index += 1;
    }
    let found = unique(found);
    ((found.len() <= MAX_LITERALS).then_some(found), index)
}

fn starts_with(p: &[char], index: usize, s: &str) -> bool {
    let s: Vec<char> = s.chars().collect();
    p.get(index..index + s.len()) == Some(s.as_slice())
}

fn concatenation(p: &[char], mut index: usize) -> (Option<Vec<String>>, usize) {
    let mut found = vec![String::new()];
    while index < p.len() && !"|)".contains(p[index]) {
        let mut atom: Vec<String>;
        if starts_with(p, index, "(?:") || starts_with(p, index, "(?=") {
            let ahead = p[index + 2] == '=';
            let (inner, next) = alternatives(p, index + 3);
            index = next;
            match inner {
                Some(inner) if p.get(index) == Some(&')') => atom = inner,
                _ => return (None, index),
            }
            index += 1;
            if ahead {
                atom = atom.into_iter().map(|l| format!("{AHEAD}{l}")).collect();
            }
        } else if p[index] == '\\' && index + 1 < p.len() {
            let escaped = p[index + 1];
            let known = match escaped {
                'n' => Some('\n'),
                'r' => Some('\r'),
                't' => Some('\t'),
                _ => None,
            };
            if escaped.is_alphanumeric() && known.is_none() {
                return (None, index);
            }
            atom = vec![known.unwrap_or(escaped).to_string()];
            index += 2;
        } else if p[index] == '^' {
            atom = vec![START.to_string()];
            index += 1;
        } else if META.contains(p[index]) {
            return (None, index);
        } else {
            atom = vec![p[index].to_string()];
            index += 1;
        }
        if p.get(index) == Some(&'?') {
            atom.insert(0, String::new());
            index += 1;
        }
        // A lookahead reads as a literal only at the end of the pattern.
        if found.iter().any(|prefix| prefix.contains(AHEAD)) {
            return (None, index);
        }
        found = found.iter().flat_map(|prefix| atom.iter().map(move |suffix| format!("{prefix}{suffix}"))).collect();
        if found.len() > MAX_LITERALS {
            return (None, index);
        }
    }
    (Some(found), index)
}

/// `_split_group`: a named group's prefix, body and suffix.
pub fn split_group(pattern: &str, name: &str) -> Option<(String, String, String)> {
    let opener = format!("(?P<{name}>");
    let start = pattern.find(&opener)?;
    let chars: Vec<(usize, char)> = pattern.char_indices().collect();
    let mut i = chars.iter().position(|&(b, _)| b == start)?;
    let (mut depth, mut in_class) = (0i64, false);
    while i < chars.len() {
        let (at, c) = chars[i];
        if c == '\\' {
            i += 2;
            continue;
        }
        if in_class {
            in_class = c != ']';
        } else if c == '[' {
            in_class = true;
        } else if c == '(' {
            depth += 1;
        } else if c == ')' {
            depth -= 1;
            if depth == 0 {
                let body = pattern[start + opener.len()..at].to_string();
                return Some((pattern[..start].to_string(), body, pattern[at + 1..].to_string()));
            }
        }
        i += 1;
    }
    None
}

/// `_escape`: `_REGEX_META` behind a backslash.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if META.contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `_class_escape`: a character inside an xgrammar character class.
pub fn class_escape(c: char) -> String {
    match c {
        '\t' => r"\t".into(),
        '\n' => r"\n".into(),
        '\r' => r"\r".into(),
        '\\' | ']' | '^' | '-' | '[' => format!("\\{c}"),
        c => c.to_string(),
    }
}

/// `_continuing`: the literals, plus the rest of each after a message-start
/// anchor it begins with, where the opener (`fullmatch` at some index of
/// the rest) still finds it.
pub fn continuing(
    found: Option<Vec<String>>,
    anchors: Option<&[String]>,
    opener: impl Fn(&str, usize) -> bool,
) -> Option<Vec<String>> {
    let found = found?;
    let anchors = match anchors {
        Some(a) if !found.is_empty() && !a.is_empty() => a,
        _ => return Some(found),
    };
    let mut rests = Vec::new();
    for literal in &found {
        for anchor in anchors {
            if literal.chars().count() > anchor.chars().count() && literal.starts_with(anchor.as_str()) {
                rests.push(literal[anchor.len()..].to_string());
            }
        }
    }
    rests.retain(|rest| (0..rest.chars().count()).any(|i| opener(rest, i)));
    Some(unique(found.into_iter().chain(rests)))
}

/// `_nonempty_start`: the start of non-empty text that does not begin with
/// a closer, leaving every closer's spelling on a character that starts
/// none of them.
pub fn nonempty_start(closers: &[String]) -> String {
    let closers: Vec<Vec<char>> = closers.iter().filter(|c| !c.is_empty()).map(|c| c.chars().collect()).collect();
    let starts: Vec<char> = closers.iter().map(|c| c[0]).collect();
    let mut prefixes: Vec<Vec<char>> = vec![Vec::new()];
    for closer in &closers {
        for end in 1..closer.len() {
            let prefix = closer[..end].to_vec();
            if !prefixes.contains(&prefix) {
                prefixes.push(prefix);
            }
        }
    }
    let mut branches = Vec::new();
    for prefix in &prefixes {
        let text: String = prefix.iter().collect();
        // A prefix holding a whole closer has already closed the text.
        if closers.iter().any(|c| text.contains(&c.iter().collect::<String>())) {
            continue;
        }
        let mut excluded: Vec<char> = starts.clone();
        excluded.extend(
            closers.iter().filter(|c| c.len() > prefix.len() && c.starts_with(prefix)).map(|c| c[prefix.len()]),
        );
        excluded.sort_unstable();
        excluded.dedup();
        let excluded: String = excluded.into_iter().map(class_escape).collect();
        branches.push(format!("{}[^{excluded}]", escape(&text)));
    }
    branches.join("|")
}

/// A trie of names, children in insertion order.
#[derive(Default)]
struct Trie {
    end: bool,
    children: Vec<(char, Trie)>,
}

/// `_other_names`: a regex for the names `pattern` (a negatable class,
/// repeated) matches besides `names`, or `None` when it is no such pattern.
pub fn other_names(pattern: &str, names: &[&str]) -> Option<String> {
    if names.is_empty() {
        return Some(pattern.to_string());
    }
    let negated = negatable_class(pattern)?;
    let other = |chars: &[char]| {
        let mut chars = chars.to_vec();
        chars.sort_unstable();
        format!("[^{negated}{}]", chars.into_iter().map(class_escape).collect::<String>())
    };
    let mut trie = Trie::default();
    for name in names {
        let mut node = &mut trie;
        for c in name.chars() {
            let at = match node.children.iter().position(|(k, _)| *k == c) {
                Some(at) => at,
                None => {
                    node.children.push((c, Trie::default()));
                    node.children.len() - 1
                }
            };
            node = &mut node.children[at].1;
        }
        node.end = true;
    }
    fn rest(node: &Trie, first: bool, other: &dyn Fn(&[char]) -> String) -> String {
        let keys: Vec<char> = node.children.iter().map(|(c, _)| *c).collect();
        let mut branches = vec![format!("{}{}*", other(&keys), other(&[]))];
        branches.extend(
            node.children.iter().map(|(c, child)| format!("{}{}", escape(&c.to_string()), rest(child, false, other))),
        );
        format!("(?:{})", branches.join("|")) + if first || node.end { "" } else { "?" }
    }
    Some(rest(&trie, true, &other))
}

/// `\w+`, `\S+` or `[^...]+`: the negated set's body (`\W`, `\s`, or the
/// class's own text).
fn negatable_class(pattern: &str) -> Option<String> {
    match pattern {
        r"\w+" => return Some(r"\W".into()),
        r"\S+" => return Some(r"\s".into()),
        _ => {}
    }
    let body = pattern.strip_prefix("[^")?.strip_suffix("]+")?;
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            // An escape takes any character but a line break.
            '\\' if i + 1 < chars.len() && chars[i + 1] != '\n' => i += 2,
            '\\' | ']' => return None,
            _ => i += 1,
        }
    }
    (!chars.is_empty()).then(|| body.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(items: &[&str]) -> Vec<String> {
        items.iter().map(|i| i.to_string()).collect()
    }

    #[test]
    fn patterns_expand_to_their_literals() {
        assert_eq!(literals(r"<\|start\|>assistant", false, false), Some(s(&["<|start|>assistant"])));
        assert_eq!(literals(r"(?:<\|start\|>assistant )?", true, false), Some(s(&["", "<|start|>assistant "])));
        assert_eq!(literals(r"a(?:b|c)d?", false, false), Some(s(&["ab", "abd", "ac", "acd"])));
        assert_eq!(literals(r"^x|y", true, false), Some(s(&["x", "y"])));
        assert_eq!(literals(r"^x|y", false, false), None);
        assert_eq!(literals(r"\d", false, false), None);
        assert_eq!(literals(r"a(?=b)", false, true), Some(s(&["a\u{1}b"])));
        assert_eq!(literals(r"a(?=b)", false, false), None);
        assert_eq!(literals(r"a(?=b)c", false, true), None);
        assert_eq!(literals(r"a?b?c?d?e?", false, false), None);
    }

    #[test]
    fn groups_split_at_their_brackets() {
        let p = r#"(?:<\|start\|>assistant )?to=(?P<name>.+?)<\|channel\|>"#;
        let (before, body, after) = split_group(p, "name").unwrap();
        assert_eq!(
            (before.as_str(), body.as_str(), after.as_str()),
            (r"(?:<\|start\|>assistant )?to=", ".+?", r"<\|channel\|>")
        );
        assert_eq!(split_group("(?P<key>[)])x", "key").unwrap().1, "[)]");
    }

    #[test]
    fn nonempty_text_leaves_each_closer_early() {
        assert_eq!(
            nonempty_start(&s(&["<|end|>"])),
            r"[^<]|<[^<|]|<\|[^<e]|<\|e[^<n]|<\|en[^<d]|<\|end[^<|]|<\|end\|[^<>]"
        );
    }

    #[test]
    fn other_names_leave_the_given_ones_out() {
        assert_eq!(other_names(".+?", &["a"]), None);
        assert_eq!(other_names(".+?", &[]).as_deref(), Some(".+?"));
        assert_eq!(
            other_names(r"\w+", &["ab"]).as_deref(),
            Some(r"(?:[^\Wa][^\W]*|a(?:[^\Wb][^\W]*|b(?:[^\W][^\W]*))?)")
        );
    }
}
