//! The incremental lexer of vLLM's parser engine: splits text into literal
//! terminals and content, holding back only a suffix that may still grow
//! into a terminal. Works on chars, as Python's `str` does.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

pub const CONTENT: &str = "__CONTENT__";

/// One lexed piece: a terminal name (or [`CONTENT`]) and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct LexToken {
    pub terminal: String,
    pub value: String,
    pub token_count: usize,
}

/// The literal terminals, precomputed for matching (`LexerShape`).
#[derive(Debug, Clone)]
pub struct LexerShape {
    /// `(literal chars, terminal name)`.
    literals: Vec<(Vec<char>, String)>,
    first_chars: HashSet<char>,
    prefix_set: HashSet<Vec<char>>,
    by_first: HashMap<char, Vec<(Vec<char>, String)>>,
}

impl LexerShape {
    /// `(terminal name, literal)` pairs; longer literals win on ties of
    /// position, as in vLLM (sorted by pattern length, literals only).
    pub fn new(terminals: &[(String, String)]) -> LexerShape {
        let mut sorted: Vec<&(String, String)> = terminals.iter().collect();
        sorted.sort_by_key(|(_, lit)| std::cmp::Reverse(regex_escaped_len(lit)));
        let literals: Vec<(Vec<char>, String)> = sorted.iter().map(|(n, l)| (l.chars().collect(), n.clone())).collect();
        let first_chars = literals.iter().filter_map(|(l, _)| l.first().copied()).collect();
        let mut prefix_set = HashSet::new();
        for (l, _) in &literals {
            for i in 1..l.len() {
                prefix_set.insert(l[..i].to_vec());
            }
        }
        let mut by_first: HashMap<char, Vec<(Vec<char>, String)>> = HashMap::new();
        for (l, n) in &literals {
            if let Some(&c) = l.first() {
                by_first.entry(c).or_default().push((l.clone(), n.clone()));
            }
        }
        LexerShape { literals, first_chars, prefix_set, by_first }
    }

    /// One shape per terminal set, shared: streams rebuild their engine on
    /// every call, and building the prefix tables dominated that.
    pub fn shared(terminals: &[(String, String)]) -> Arc<LexerShape> {
        type Cache = Mutex<HashMap<Vec<(String, String)>, Arc<LexerShape>>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let mut shapes = CACHE.get_or_init(Default::default).lock().unwrap_or_else(PoisonError::into_inner);
        shapes.entry(terminals.to_vec()).or_insert_with(|| Arc::new(LexerShape::new(terminals))).clone()
    }

    pub fn is_first_char(&self, c: char) -> bool {
        self.first_chars.contains(&c)
    }
}

/// `len(re.escape(lit))`, the sort key vLLM uses.
fn regex_escaped_len(lit: &str) -> usize {
    lit.chars().map(|c| if c.is_alphanumeric() || c == '_' || !c.is_ascii() { 1 } else { 2 }).sum()
}

#[derive(Debug, Clone)]
pub struct IncrementalLexer {
    shape: Arc<LexerShape>,
    pub buffer: Vec<char>,
    counts: Vec<usize>,
}

impl IncrementalLexer {
    pub fn new(shape: Arc<LexerShape>) -> IncrementalLexer {
        IncrementalLexer { shape, buffer: Vec::new(), counts: Vec::new() }
    }

    pub fn shape(&self) -> &LexerShape {
        &self.shape
    }

    pub fn reset(&mut self) {
        self.buffer.clear();
        self.counts.clear();
    }

    pub fn feed(&mut self, text: &str, token_texts: &[String], token_count: usize) -> Vec<LexToken> {
        let chars: Vec<char> = text.chars().collect();
        let counts = char_token_counts(&chars, token_texts, token_count);
        if self.buffer.is_empty()
            && !self.shape.first_chars.is_empty()
            && !chars.iter().any(|c| self.shape.is_first_char(*c))
        {
            return vec![LexToken {
                terminal: CONTENT.into(),
                value: text.to_string(),
                token_count: counts.iter().sum(),
            }];
        }
        self.buffer.extend(chars);
        self.counts.extend(counts);
        self.drain(false)
    }

    pub fn flush(&mut self) -> Vec<LexToken> {
        let mut tokens = Vec::new();
        if !self.buffer.is_empty() {
            tokens.extend(self.drain(true));
        }
        if !self.buffer.is_empty() {
            tokens.push(LexToken {
                terminal: CONTENT.into(),
                value: self.buffer.iter().collect(),
                token_count: self.counts.iter().sum(),
            });
            self.buffer.clear();
            self.counts.clear();
        }
        tokens
    }

    fn pop(&mut self, len: usize) -> (String, usize) {
        let value: String = self.buffer.drain(..len).collect();
        let count = self.counts.drain(..len.min(self.counts.len())).sum();
        (value, count)
    }

    fn drain(&mut self, fin: bool) -> Vec<LexToken> {
        let mut tokens = Vec::new();
        while !self.buffer.is_empty() {
            if !self.shape.first_chars.is_empty() && !self.buffer.iter().any(|c| self.shape.is_first_char(*c)) {
                let (value, token_count) = self.pop(self.buffer.len());
                tokens.push(LexToken { terminal: CONTENT.into(), value, token_count });
                break;
            }
            let first = self.buffer[0];
            let candidates = self.shape.by_first.get(&first).cloned().unwrap_or_default();
            let mut best: Option<(String, usize)> = None;
            for (lit, name) in &candidates {
                if self.buffer.starts_with(lit) && best.as_ref().is_none_or(|(_, l)| lit.len() > *l) {
                    best = Some((name.clone(), lit.len()));
                }
            }
            if !fin && self.shape.prefix_set.contains(&self.buffer) {
                if let Some((name, len)) = &best {
                    let longer = candidates.iter().any(|(lit, _)| lit.len() > *len && lit.starts_with(&self.buffer));
                    if !longer {
                        let (value, token_count) = self.pop(*len);
                        tokens.push(LexToken { terminal: name.clone(), value, token_count });
                        continue;
                    }
                }
                break;
            }
            if let Some((name, len)) = best {
                let (value, token_count) = self.pop(len);
                tokens.push(LexToken { terminal: name, value, token_count });
            } else {
                let end = self.content_boundary().max(1);
                let (value, token_count) = self.pop(end);
                tokens.push(LexToken { terminal: CONTENT.into(), value, token_count });
            }
        }
        tokens
    }

    /// `_find_content_boundary`: where a literal might start after index 0.
    fn content_boundary(&self) -> usize {
        let buf = &self.buffer;
        let n = buf.len();
        for i in 1..n {
            if !self.shape.is_first_char(buf[i]) {
                continue;
            }
            let remaining = n - i;
            for (lit, _) in &self.shape.literals {
                let check = remaining.min(lit.len());
                if buf[i..i + check] == lit[..check] {
                    return i;
                }
            }
        }
        n
    }
}

/// `_char_token_counts`: attribute each token to the char where its text starts.
fn char_token_counts(chars: &[char], token_texts: &[String], token_count: usize) -> Vec<usize> {
    let mut counts = vec![0usize; chars.len()];
    if chars.is_empty() {
        return counts;
    }
    if !token_texts.is_empty() {
        let (mut pos, mut assigned) = (0usize, 0usize);
        for t in token_texts {
            let tc: Vec<char> = t.chars().collect();
            if tc.is_empty() {
                continue;
            }
            let found = (pos..=chars.len().saturating_sub(tc.len())).find(|&i| chars[i..].starts_with(&tc));
            let Some(found) = found.filter(|_| tc.len() <= chars.len()) else { continue };
            counts[found] += 1;
            assigned += 1;
            pos = found + tc.len();
        }
        if token_count > assigned {
            counts[0] += token_count - assigned;
        }
    } else if token_count > 0 {
        counts[0] = token_count;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lexer() -> IncrementalLexer {
        let terms = [("THINK_END".to_string(), "</think>".to_string()), ("CLOSE".to_string(), ">".to_string())];
        IncrementalLexer::new(Arc::new(LexerShape::new(&terms)))
    }

    #[test]
    fn splits_terminals_and_holds_back_prefixes() {
        let mut l = lexer();
        let t = l.feed("abc</th", &[], 0);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].value, "abc");
        assert_eq!(l.buffer.iter().collect::<String>(), "</th");
        let t = l.feed("ink>x", &[], 0);
        assert_eq!(t.iter().map(|t| t.terminal.as_str()).collect::<Vec<_>>(), ["THINK_END", CONTENT]);
        let mut l = lexer();
        let t = l.feed("a>b", &[], 0);
        assert_eq!(t.iter().map(|t| t.value.as_str()).collect::<Vec<_>>(), ["a", ">", "b"]);
    }

    #[test]
    fn flush_releases_the_held_text() {
        let mut l = lexer();
        assert!(l.feed("</", &[], 0).is_empty());
        let t = l.flush();
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].value, "</");
    }
}

crate::impl_snapshot!(IncrementalLexer { buffer, counts });
