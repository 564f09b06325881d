//! xgrammar's normal form, which is what gets printed: every rule body is a
//! choice of sequences of atoms (an empty alternative, if any, first), or a
//! bare `Regex`. Nested choices inside a sequence, and regexes anywhere but a
//! whole body, move to new rules named after the rule being normalised; those
//! rules go to the end, in the order they are made (innermost first).

use super::grammar::{Expr, Grammar};

pub(super) fn normalize(grammar: &mut Grammar) {
    for rule in &mut grammar.rules {
        rule.body = collapse(std::mem::replace(&mut rule.body, Expr::Empty));
        rule.lookahead = rule.lookahead.take().map(collapse);
    }
    // Rules lifted out below are already normal: only the originals are visited.
    for index in 0..grammar.rules.len() {
        let name = grammar.name_of(index).to_string();
        let body = std::mem::replace(&mut grammar.rules[index].body, Expr::Empty);
        let lookahead = grammar.rules[index].lookahead.take();
        let mut lifter = Lifter { grammar, name };
        let body = lifter.rule_body(body);
        let lookahead = lookahead.map(|assertion| match assertion {
            Expr::Seq(items) => Expr::Seq(lifter.sequence(items)),
            atom => Expr::Seq(vec![atom]),
        });
        grammar.rules[index].body = body;
        grammar.rules[index].lookahead = lookahead;
    }
}

/// One-element sequences and choices disappear, and a one-character class
/// becomes that character as a string.
fn collapse(expr: Expr) -> Expr {
    match expr {
        Expr::Seq(items) => only_or(items, Expr::Seq),
        Expr::Choice(items) => only_or(items, Expr::Choice),
        Expr::Class { negated: false, ranges } if ranges.len() == 1 && ranges[0].0 == ranges[0].1 => {
            match char::from_u32(ranges[0].0) {
                Some(c) => Expr::text(c.encode_utf8(&mut [0; 4])),
                None => Expr::Class { negated: false, ranges },
            }
        }
        other => other,
    }
}

fn only_or(items: Vec<Expr>, wrap: fn(Vec<Expr>) -> Expr) -> Expr {
    let mut items: Vec<Expr> = items.into_iter().map(collapse).collect();
    if items.len() == 1 {
        items.pop().unwrap_or(Expr::Empty)
    } else {
        wrap(items)
    }
}

struct Lifter<'g> {
    grammar: &'g mut Grammar,
    name: String,
}

impl Lifter<'_> {
    fn lift(&mut self, body: Expr) -> Expr {
        let name = self.name.clone();
        Expr::Rule(self.grammar.add_with_hint(&name, body))
    }

    fn rule_body(&mut self, expr: Expr) -> Expr {
        match expr {
            regex @ Expr::Regex(_) => regex,
            Expr::Choice(options) => Expr::Choice(self.alternatives(options)),
            Expr::Seq(items) => Expr::Choice(vec![Expr::Seq(self.sequence(items))]),
            Expr::Empty => Expr::Choice(vec![Expr::Empty]),
            atom => Expr::Choice(vec![Expr::Seq(vec![atom])]),
        }
    }

    /// Flattened alternatives, each a sequence; one `""` first if any
    /// alternative can be empty.
    fn alternatives(&mut self, options: Vec<Expr>) -> Vec<Expr> {
        let mut out = Vec::with_capacity(options.len());
        let mut saw_empty = false;
        for option in options {
            match option {
                Expr::Seq(items) => {
                    let items = self.sequence(items);
                    if items.is_empty() {
                        saw_empty = true;
                    } else {
                        out.push(Expr::Seq(items));
                    }
                }
                Expr::Choice(nested) => {
                    for alternative in self.alternatives(nested) {
                        match alternative {
                            Expr::Empty => saw_empty = true,
                            other => out.push(other),
                        }
                    }
                }
                Expr::Empty => saw_empty = true,
                regex @ Expr::Regex(_) => {
                    let rule = self.lift(regex);
                    out.push(Expr::Seq(vec![rule]));
                }
                atom => out.push(Expr::Seq(vec![atom])),
            }
        }
        if saw_empty {
            out.insert(0, Expr::Empty);
        }
        out
    }

    /// Flattened atoms of a sequence; a choice with several alternatives
    /// becomes a reference to a new rule.
    fn sequence(&mut self, items: Vec<Expr>) -> Vec<Expr> {
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            match item {
                Expr::Seq(nested) => out.extend(self.sequence(nested)),
                Expr::Empty => {}
                regex @ Expr::Regex(_) => out.push(self.lift(regex)),
                Expr::Choice(options) => {
                    let mut alternatives = self.alternatives(options);
                    if alternatives.len() == 1 {
                        match alternatives.pop() {
                            Some(Expr::Seq(atoms)) => out.extend(atoms),
                            Some(Expr::Empty) | None => {}
                            Some(other) => out.push(other),
                        }
                    } else {
                        out.push(self.lift(Expr::Choice(alternatives)));
                    }
                }
                atom => out.push(atom),
            }
        }
        out
    }
}
