//! The grammar under construction: named rules whose bodies are expression
//! trees, and xgrammar's way of picking a fresh rule name from a hint.

use std::collections::HashMap;

pub(super) type RuleId = usize;

/// A character range, both ends inclusive (code points, or raw bytes where
/// xgrammar builds a class from the bytes of a property name).
pub(super) type Range = (u32, u32);

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Expr {
    Empty,
    /// Raw bytes; printed after UTF-8 decoding (invalid bytes as `\xNN`).
    Bytes(Vec<u8>),
    Class {
        negated: bool,
        ranges: Vec<Range>,
    },
    ClassStar {
        negated: bool,
        ranges: Vec<Range>,
    },
    Rule(RuleId),
    Repeat {
        rule: RuleId,
        min: i32,
        max: i32,
    },
    /// A `pattern` kept whole for xgrammar's regex engine (`json_string=true`).
    Regex(String),
    Seq(Vec<Expr>),
    Choice(Vec<Expr>),
}

impl Expr {
    pub(super) fn text(s: &str) -> Expr {
        Expr::Bytes(s.as_bytes().to_vec())
    }

    pub(super) fn class(negated: bool, ranges: &[Range]) -> Expr {
        Expr::Class { negated, ranges: ranges.to_vec() }
    }
}

/// A class member per character, in order.
pub(super) fn each_char(text: &str) -> Vec<Range> {
    text.chars().map(|c| (u32::from(c), u32::from(c))).collect()
}

/// Sequence as xgrammar's converter builds it: no node for zero or one element.
pub(super) fn seq(mut items: Vec<Expr>) -> Expr {
    match items.len() {
        0 => Expr::Empty,
        1 => items.pop().unwrap_or(Expr::Empty),
        _ => Expr::Seq(items),
    }
}

/// Choice as xgrammar's converter builds it: no node for zero or one option.
pub(super) fn choice(mut items: Vec<Expr>) -> Expr {
    match items.len() {
        0 => Expr::Empty,
        1 => items.pop().unwrap_or(Expr::Empty),
        _ => Expr::Choice(items),
    }
}

#[derive(Clone, Debug)]
pub(super) struct Rule {
    pub(super) name: String,
    pub(super) body: Expr,
    pub(super) lookahead: Option<Expr>,
}

#[derive(Default)]
pub(super) struct Grammar {
    pub(super) rules: Vec<Rule>,
    ids: HashMap<String, RuleId>,
    next_suffix: HashMap<String, u64>,
}

impl Grammar {
    /// Adds a rule under exactly `name` (the caller knows it is free).
    pub(super) fn add_named(&mut self, name: &str, body: Expr) -> RuleId {
        let id = self.rules.len();
        self.ids.insert(name.to_string(), id);
        self.rules.push(Rule { name: name.to_string(), body, lookahead: None });
        id
    }

    /// Adds a rule named after `hint`: the hint itself when free, else
    /// `hint_k` with the smallest free k (xgrammar keeps a per-hint counter,
    /// which gives the same names since rules are never removed).
    pub(super) fn add_with_hint(&mut self, hint: &str, body: Expr) -> RuleId {
        let name = self.fresh_name(hint);
        self.add_named(&name, body)
    }

    fn fresh_name(&mut self, hint: &str) -> String {
        if !self.ids.contains_key(hint) {
            return hint.to_string();
        }
        let counter = self.next_suffix.entry(hint.to_string()).or_insert(1);
        loop {
            let candidate = format!("{hint}_{counter}");
            if !self.ids.contains_key(&candidate) {
                return candidate;
            }
            *counter += 1;
        }
    }

    pub(super) fn id_of(&self, name: &str) -> Option<RuleId> {
        self.ids.get(name).copied()
    }

    pub(super) fn name_of(&self, id: RuleId) -> &str {
        self.rules.get(id).map_or("", |rule| rule.name.as_str())
    }

    pub(super) fn set_body(&mut self, id: RuleId, body: Expr) {
        if let Some(rule) = self.rules.get_mut(id) {
            rule.body = body;
        }
    }

    pub(super) fn set_lookahead(&mut self, id: RuleId, lookahead: Expr) {
        if let Some(rule) = self.rules.get_mut(id) {
            rule.lookahead = Some(lookahead);
        }
    }
}
