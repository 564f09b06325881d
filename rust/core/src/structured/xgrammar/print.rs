//! xgrammar's grammar printer: one `name ::= body` line per rule, literals
//! with C-style escapes.

use super::grammar::{Expr, Grammar, Range};

pub(super) fn print(grammar: &Grammar) -> String {
    let mut out = String::new();
    for rule in &grammar.rules {
        out.push_str(&rule.name);
        out.push_str(" ::= ");
        expr(&rule.body, grammar, &mut out);
        if let Some(lookahead) = &rule.lookahead {
            out.push_str(" (=");
            expr(lookahead, grammar, &mut out);
            out.push(')');
        }
        out.push('\n');
    }
    out
}

fn expr(e: &Expr, grammar: &Grammar, out: &mut String) {
    match e {
        Expr::Empty => out.push_str("\"\""),
        Expr::Bytes(bytes) => quoted(bytes, out),
        Expr::Class { negated, ranges } => class(*negated, ranges, out),
        Expr::ClassStar { negated, ranges } => {
            class(*negated, ranges, out);
            out.push('*');
        }
        Expr::Rule(id) => out.push_str(grammar.name_of(*id)),
        Expr::Repeat { rule, min, max } => {
            out.push_str(&format!("{}{{{min}, {max}}}", grammar.name_of(*rule)));
        }
        Expr::Regex(pattern) => {
            out.push_str("Regex(");
            quoted(pattern.as_bytes(), out);
            out.push_str(", json_string=true)");
        }
        Expr::Seq(items) => joined(items, " ", grammar, out),
        Expr::Choice(items) => joined(items, " | ", grammar, out),
    }
}

fn joined(items: &[Expr], separator: &str, grammar: &Grammar, out: &mut String) {
    out.push('(');
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            out.push_str(separator);
        }
        expr(item, grammar, out);
    }
    out.push(')');
}

fn quoted(bytes: &[u8], out: &mut String) {
    out.push('"');
    for code_point in code_points(bytes) {
        push_escaped(code_point, false, out);
    }
    out.push('"');
}

fn class(negated: bool, ranges: &[Range], out: &mut String) {
    out.push('[');
    if negated {
        out.push('^');
    }
    for &(low, high) in ranges {
        push_escaped(low, true, out);
        if low != high {
            out.push('-');
            push_escaped(high, true, out);
        }
    }
    out.push(']');
}

/// UTF-8 decoding as xgrammar's printer does it: the text ends at a NUL
/// byte (it is handled as a C string) and an invalid byte stands for itself.
fn code_points(bytes: &[u8]) -> Vec<u32> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while let Some(&first) = bytes.get(index) {
        if first == 0 {
            break;
        }
        let (length, initial) = match first {
            0x00..=0x7f => (1, u32::from(first)),
            0xc0..=0xdf => (2, u32::from(first & 0x1f)),
            0xe0..=0xef => (3, u32::from(first & 0x0f)),
            0xf0..=0xf7 => (4, u32::from(first & 0x07)),
            _ => (0, 0),
        };
        let continuation = bytes.get(index + 1..index + length.max(1));
        match continuation {
            Some(rest) if length > 0 && rest.iter().all(|b| b & 0xc0 == 0x80) => {
                out.push(rest.iter().fold(initial, |acc, b| (acc << 6) | u32::from(b & 0x3f)));
                index += length;
            }
            _ => {
                out.push(u32::from(first));
                index += 1;
            }
        }
    }
    out
}

/// xgrammar's `EscapeString` for one code point (in a character class `-`
/// and `]` are escaped too).
pub(super) fn push_escaped(code_point: u32, in_class: bool, out: &mut String) {
    if let Some(fixed) = fixed_escape(code_point, in_class) {
        out.push_str(fixed);
        return;
    }
    match code_point {
        0x20..=0x7e => out.push(char::from(code_point as u8)),
        0..=0xff => out.push_str(&format!("\\x{code_point:02x}")),
        0x100..=0xffff => out.push_str(&format!("\\u{code_point:04x}")),
        _ => out.push_str(&format!("\\U{code_point:08x}")),
    }
}

fn fixed_escape(code_point: u32, in_class: bool) -> Option<&'static str> {
    Some(match code_point {
        0x27 => "\\'",
        0x22 => "\\\"",
        0x3f => "\\?",
        0x5c => "\\\\",
        0x07 => "\\a",
        0x08 => "\\b",
        0x0c => "\\f",
        0x0a => "\\n",
        0x0d => "\\r",
        0x09 => "\\t",
        0x0b => "\\v",
        0x00 => "\\0",
        0x1b => "\\e",
        0x2d if in_class => "\\-",
        0x5d if in_class => "\\]",
        _ => return None,
    })
}
