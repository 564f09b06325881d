//! `TokenIDScanner`: terminals that are single tokens are recognised by id,
//! and the delta text is split around them (holding back what the
//! detokenizer has not released yet).

use std::collections::HashMap;

use crate::model::Model;

pub const DROP: &str = "__DROP__";

#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Text { text: String, token_texts: Vec<String>, token_count: usize },
    Terminal { terminal: String, text: String },
}

fn text(text: impl Into<String>, token_texts: Vec<String>, token_count: usize) -> Item {
    Item::Text { text: text.into(), token_texts, token_count }
}

#[derive(Debug, Clone, Default)]
pub struct Scanner {
    pub id_to_terminal: HashMap<i64, String>,
    deferred: Vec<(String, String)>,
    deferred_prefix_counts: Vec<usize>,
    deferred_trailing: usize,
    deferred_post_text: String,
}

/// Python's `str.find` from a char position, in chars.
fn find_from(hay: &[char], needle: &[char], from: usize) -> Option<usize> {
    if needle.is_empty() {
        return (from <= hay.len()).then_some(from);
    }
    if needle.len() > hay.len() {
        return None;
    }
    (from..=hay.len() - needle.len()).find(|&i| hay[i..i + needle.len()] == *needle)
}

/// `str.rfind(needle, 0, end)`, in chars.
fn rfind_before(hay: &[char], needle: &[char], end: usize) -> Option<usize> {
    if needle.len() > end {
        return None;
    }
    (0..=end - needle.len()).rev().find(|&i| hay[i..i + needle.len()] == *needle)
}

fn chars(s: &str) -> Vec<char> {
    s.chars().collect()
}

impl Scanner {
    pub fn new(id_to_terminal: HashMap<i64, String>) -> Scanner {
        Scanner { id_to_terminal, ..Default::default() }
    }

    pub fn has_deferred(&self) -> bool {
        !self.deferred.is_empty()
    }

    pub fn reset(&mut self) {
        self.deferred.clear();
        self.deferred_prefix_counts.clear();
        self.deferred_trailing = 0;
        self.deferred_post_text.clear();
    }

    fn decode_all(model: &Model, ids: &[i64]) -> Vec<String> {
        ids.iter().map(|&id| model.decode(&[id])).collect()
    }

    pub fn scan(&mut self, model: &Model, delta_text: &str, ids: &[i64]) -> Vec<Item> {
        let mut prefix_items = Vec::new();
        let mut effective = delta_text.to_string();
        let mut deferred_trailing = 0;
        if !self.deferred.is_empty() {
            let (items, rest, trailing) = self.resolve_deferred(delta_text, ids.len());
            prefix_items = items;
            effective = rest;
            deferred_trailing = trailing;
        }
        if self.id_to_terminal.is_empty() || !ids.iter().any(|id| self.id_to_terminal.contains_key(id)) {
            if !effective.is_empty() {
                let texts = Self::decode_all(model, ids);
                let n = texts.len();
                let count = if prefix_items.is_empty() { n } else { deferred_trailing + n };
                prefix_items.push(text(effective, texts, count));
            }
            return prefix_items;
        }
        let decoded = Self::decode_all(model, ids);
        let mut results: Vec<Item> = Vec::new();
        let mut acc: Vec<String> = Vec::new();
        let flush_acc = |acc: &mut Vec<String>, results: &mut Vec<Item>| {
            if !acc.is_empty() {
                let joined: String = acc.concat();
                if !joined.is_empty() {
                    let n = acc.len();
                    results.push(text(joined, std::mem::take(acc), n));
                }
                acc.clear();
            }
        };
        for (i, id) in ids.iter().enumerate() {
            match self.id_to_terminal.get(id) {
                Some(terminal) => {
                    flush_acc(&mut acc, &mut results);
                    results.push(Item::Terminal { terminal: terminal.clone(), text: decoded[i].clone() });
                }
                None => acc.push(decoded[i].clone()),
            }
        }
        flush_acc(&mut acc, &mut results);
        if deferred_trailing > 0 {
            results.insert(0, text("", Vec::new(), deferred_trailing));
        }
        if !effective.is_empty() {
            results = self.recover_holdback_text(&effective, results);
        } else {
            let mut prefix_count = 0;
            for r in &results {
                match r {
                    Item::Text { token_count, .. } => prefix_count += token_count,
                    Item::Terminal { terminal, text } => {
                        self.deferred.push((terminal.clone(), text.clone()));
                        self.deferred_prefix_counts.push(prefix_count);
                        prefix_count = 0;
                    }
                }
            }
            self.deferred_trailing += prefix_count;
            results.clear();
        }
        prefix_items.extend(results);
        prefix_items
    }

    pub fn flush_pending(&mut self) -> Vec<Item> {
        if self.deferred.is_empty() && self.deferred_post_text.is_empty() {
            return Vec::new();
        }
        let mut results = Vec::new();
        if !self.deferred_post_text.is_empty() {
            let count = self.deferred_prefix_counts.first().copied().unwrap_or(0);
            results.push(text(std::mem::take(&mut self.deferred_post_text), Vec::new(), count));
        }
        for (terminal, t) in self.deferred.drain(..) {
            results.push(Item::Terminal { terminal, text: t });
        }
        if self.deferred_trailing > 0 {
            results.push(text("", Vec::new(), self.deferred_trailing));
        }
        self.deferred_prefix_counts.clear();
        self.deferred_trailing = 0;
        results
    }

    fn resolve_deferred(&mut self, delta_text: &str, current_count: usize) -> (Vec<Item>, String, usize) {
        let deferred = std::mem::take(&mut self.deferred);
        let prefix_counts = std::mem::take(&mut self.deferred_prefix_counts);
        let mut trailing = std::mem::take(&mut self.deferred_trailing);
        let mut results = Vec::new();
        let mut remaining: Vec<char> =
            chars(&format!("{}{}", std::mem::take(&mut self.deferred_post_text), delta_text));
        for (idx, (terminal, t)) in deferred.into_iter().enumerate() {
            let mut prefix_count = prefix_counts[idx];
            let tc = chars(&t);
            match find_from(&remaining, &tc, 0) {
                Some(pos) if pos > 0 => {
                    results.push(text(remaining[..pos].iter().collect::<String>(), Vec::new(), prefix_count));
                    results.push(Item::Terminal { terminal, text: t });
                    remaining = remaining[pos + tc.len()..].to_vec();
                }
                Some(_) => {
                    results.push(Item::Terminal { terminal, text: t });
                    remaining = remaining[tc.len()..].to_vec();
                }
                None => {
                    if !remaining.is_empty() {
                        self.deferred_post_text.extend(remaining.iter());
                        prefix_count += current_count;
                        remaining.clear();
                    }
                    self.deferred.push((terminal, t));
                    self.deferred_prefix_counts.push(prefix_count);
                }
            }
        }
        if !self.deferred.is_empty() {
            self.deferred_trailing = trailing;
            trailing = 0;
        }
        (results, remaining.into_iter().collect(), trailing)
    }

    fn item_text(item: &Item) -> &str {
        match item {
            Item::Text { text, .. } | Item::Terminal { text, .. } => text,
        }
    }

    fn recover_holdback_text(&mut self, delta_text: &str, results: Vec<Item>) -> Vec<Item> {
        if results.is_empty() {
            return vec![text(delta_text, Vec::new(), 0)];
        }
        let reconstructed: String = results.iter().map(Self::item_text).collect();
        if reconstructed.is_empty() {
            let mut out = vec![text(delta_text, Vec::new(), 0)];
            out.extend(results);
            return out;
        }
        let d = chars(delta_text);
        match find_from(&d, &chars(&reconstructed), 0) {
            Some(pos) if pos > 0 => {
                let mut out = vec![text(d[..pos].iter().collect::<String>(), Vec::new(), 0)];
                out.extend(results);
                out
            }
            Some(_) => results,
            None => self.rebuild_from_anchors(&d, results),
        }
    }

    fn rebuild_from_anchors(&mut self, d: &[char], results: Vec<Item>) -> Vec<Item> {
        let anchors: Vec<(String, String)> = results
            .iter()
            .filter_map(|r| match r {
                Item::Terminal { terminal, text } => Some((terminal.clone(), text.clone())),
                Item::Text { .. } => None,
            })
            .collect();
        if anchors.is_empty() {
            return vec![text(d.iter().collect::<String>(), Vec::new(), 0)];
        }
        let mut groups: Vec<Vec<String>> = vec![Vec::new(); anchors.len() + 1];
        let mut counts = vec![0usize; anchors.len() + 1];
        let mut g = 0;
        for item in &results {
            match item {
                Item::Terminal { .. } => g += 1,
                Item::Text { token_texts, token_count, .. } => {
                    groups[g].extend(token_texts.iter().cloned());
                    counts[g] += token_count;
                }
            }
        }
        let mut positions: Vec<Option<usize>> = vec![None; anchors.len()];
        let mut end = d.len();
        for i in (0..anchors.len()).rev() {
            if let Some(pos) = rfind_before(d, &chars(&anchors[i].1), end) {
                positions[i] = Some(pos);
                end = pos;
            }
        }
        let mut out = Vec::new();
        let mut consumed = 0usize;
        for (i, (terminal, t)) in anchors.iter().enumerate() {
            match positions[i] {
                Some(pos) if pos >= consumed => {
                    if pos > consumed {
                        out.push(text(d[consumed..pos].iter().collect::<String>(), groups[i].clone(), counts[i]));
                    }
                    out.push(Item::Terminal { terminal: terminal.clone(), text: t.clone() });
                    consumed = pos + t.chars().count();
                }
                _ => {
                    let later = positions[i + 1..].iter().any(Option::is_some);
                    if !later && consumed < d.len() && terminal != DROP {
                        self.deferred_post_text.extend(d[consumed..].iter());
                        consumed = d.len();
                    }
                    self.deferred.push((terminal.clone(), t.clone()));
                    self.deferred_prefix_counts.push(counts[i]);
                }
            }
        }
        if consumed < d.len() {
            out.push(text(
                d[consumed..].iter().collect::<String>(),
                groups[anchors.len()].clone(),
                counts[anchors.len()],
            ));
        }
        out
    }
}

crate::impl_snapshot!(Scanner { deferred, deferred_prefix_counts, deferred_trailing, deferred_post_text });
