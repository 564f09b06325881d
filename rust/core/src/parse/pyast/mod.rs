//! Just enough of Python's `ast.parse` for pythonic tool calls: a module
//! whose first statement is a list display of calls, with the call
//! arguments read as literal values (vLLM's `get_parameter_value`).
//!
//! Expressions outside the literal subset are still parsed (as `Other`) so
//! that valid Python is told apart from a syntax error; constructs this
//! parser does not know (lambda, walrus, compound statements) count as
//! syntax errors, which only matters in text that is not a tool call.
//!
//! `grammar` holds the statement and expression parser, `literals` its
//! strings and numbers.

mod grammar;
mod literals;
#[cfg(test)]
mod tests;

use grammar::Parser;

use crate::pycompat::json::dumps_str;
use crate::pycompat::repr::repr_float;

/// A value `get_parameter_value` returns (what `json.dumps` then writes).
#[derive(Debug, Clone, PartialEq)]
pub enum PyValue {
    None,
    Bool(bool),
    /// Decimal digits with an optional leading `-` (Python ints are unbounded).
    Int(String),
    Float(f64),
    Str(String),
    List(Vec<PyValue>),
    /// Insertion-ordered; keys are constants.
    Dict(Vec<(PyValue, PyValue)>),
    /// A set, bytes, a complex number or Ellipsis (`literal_eval_any`
    /// only): `json.dumps` raises on it.
    Unwritable,
}

/// One call of the list: dotted name and keyword arguments (a `**x`
/// argument has the key `None`, as in `ast.keyword.arg`).
#[derive(Debug, Clone, PartialEq)]
pub struct PyCall {
    pub name: String,
    pub arguments: PyValue,
}

/// Why the text is not a list of literal calls (all mean "not tool calls").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotCalls;

/// The parsed first statement: its calls, and whether a set display occurs
/// anywhere in the module (`make_valid_python` rejects completions with one).
#[derive(Debug, Clone, PartialEq)]
pub struct CallList {
    pub calls: Vec<PyCall>,
    pub has_set: bool,
}

/// `ast.parse(text)`, then `body[0]` as a list of calls converted with
/// `handle_single_tool`.
pub fn parse_call_list(text: &str) -> Result<CallList, NotCalls> {
    let mut p = Parser { s: text.chars().collect(), i: 0, depth: 0, has_set: false };
    let first = p.module()?;
    let Some(Node::List(items)) = first else { return Err(NotCalls) };
    let calls = items.iter().map(single_tool).collect::<Result<Vec<_>, _>>()?;
    Ok(CallList { calls, has_set: p.has_set })
}

/// Does `ast.parse(text)` succeed (within this parser's subset)?
pub fn parses(text: &str) -> bool {
    let mut p = Parser { s: text.chars().collect(), i: 0, depth: 0, has_set: false };
    p.module().is_ok()
}

/// `ast.literal_eval(text)`: `None` where Python raises (not one literal
/// expression: names, calls, f-strings, bytes, complex numbers). Tuples read
/// as lists (`json.dumps` writes them so); a set, which `json.dumps` cannot
/// write, counts as not a literal.
pub fn literal_eval(text: &str) -> Option<PyValue> {
    literal_eval_with(text, false)
}

/// `ast.literal_eval(text)` with the values `json.dumps` cannot write kept
/// as `PyValue::Unwritable`, for callers that dump later and must fail then.
pub fn literal_eval_any(text: &str) -> Option<PyValue> {
    literal_eval_with(text, true)
}

fn literal_eval_with(text: &str, keep: bool) -> Option<PyValue> {
    let text = text.trim_start_matches([' ', '\t']);
    let mut p = Parser { s: text.chars().collect(), i: 0, depth: 0, has_set: false };
    p.skip_blank_lines();
    let node = p.expr().ok()?;
    p.skip_blank_lines();
    if p.peek().is_some() {
        return None;
    }
    literal(&node, keep)
}

fn literal(node: &Node, keep: bool) -> Option<PyValue> {
    Some(match node {
        Node::Const(Lit::Unsupported) if keep => PyValue::Unwritable,
        Node::Const(lit) => constant(lit)?,
        Node::List(items) | Node::Tuple(items) => {
            PyValue::List(items.iter().map(|i| literal(i, keep)).collect::<Option<_>>()?)
        }
        Node::Set(items) if keep => {
            items.iter().try_for_each(|i| literal(i, keep).map(drop))?;
            PyValue::Unwritable
        }
        Node::Dict(entries) => {
            let mut out = Vec::new();
            for (k, v) in entries {
                dict_insert(&mut out, literal(k.as_ref()?, keep)?, literal(v, keep)?);
            }
            PyValue::Dict(out)
        }
        Node::Sign(negative, operand) => match literal(operand, keep)? {
            PyValue::Int(d) if *negative => PyValue::Int(negate(&d)),
            PyValue::Float(f) if *negative => PyValue::Float(-f),
            v @ (PyValue::Int(_) | PyValue::Float(_) | PyValue::Unwritable) => v,
            _ => return None,
        },
        _ => return None,
    })
}

impl PyValue {
    /// `json.dumps(value, ensure_ascii=False)`.
    pub fn dumps(&self) -> Result<String, NotCalls> {
        let mut out = String::new();
        self.write(&mut out)?;
        Ok(out)
    }

    fn write(&self, out: &mut String) -> Result<(), NotCalls> {
        match self {
            PyValue::None => out.push_str("null"),
            PyValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            PyValue::Int(d) => out.push_str(d),
            PyValue::Float(f) => out.push_str(&float_json(*f)),
            PyValue::Str(s) => out.push_str(&dumps_str(s)),
            PyValue::Unwritable => return Err(NotCalls),
            PyValue::List(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write(out)?;
                }
                out.push(']');
            }
            PyValue::Dict(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    let key = match k {
                        PyValue::Str(s) => s.clone(),
                        PyValue::Int(d) => d.clone(),
                        PyValue::Float(f) => float_json(*f),
                        PyValue::Bool(b) => (if *b { "true" } else { "false" }).to_string(),
                        PyValue::None => "null".to_string(),
                        // json.dumps raises TypeError for other key types.
                        _ => return Err(NotCalls),
                    };
                    out.push_str(&dumps_str(&key));
                    out.push_str(": ");
                    v.write(out)?;
                }
                out.push('}');
            }
        }
        Ok(())
    }
}

fn float_json(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        (if f > 0.0 { "Infinity" } else { "-Infinity" }).into()
    } else {
        repr_float(f)
    }
}

/// Python dict-key equality: `1 == 1.0 == True`, strings by value.
fn key_id(k: &PyValue) -> String {
    match k {
        PyValue::None => "N".into(),
        PyValue::Bool(b) => format!("n{}", *b as u8),
        PyValue::Int(d) => format!("n{d}"),
        PyValue::Float(f) if f.fract() == 0.0 && f.abs() < 1e18 => format!("n{}", *f as i64),
        PyValue::Float(f) => format!("f{}", repr_float(*f)),
        PyValue::Str(s) => format!("s{s}"),
        _ => String::new(),
    }
}

/// Insert like a Python dict: a repeated key keeps its first position.
fn dict_insert(entries: &mut Vec<(PyValue, PyValue)>, k: PyValue, v: PyValue) {
    let id = key_id(&k);
    match entries.iter_mut().find(|(e, _)| key_id(e) == id) {
        Some(slot) => slot.1 = v,
        None => entries.push((k, v)),
    }
}

/// A constant literal as the AST holds it.
#[derive(Debug, Clone, PartialEq)]
enum Lit {
    None,
    Bool(bool),
    Int(String),
    Float(f64),
    Str(String),
    /// bytes, complex, Ellipsis: constants with no JSON form.
    Unsupported,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Const(Lit),
    Name(String),
    List(Vec<Node>),
    Tuple(Vec<Node>),
    Set(Vec<Node>),
    /// `None` key = `**x` unpacking.
    Dict(Vec<(Option<Node>, Node)>),
    Call {
        func: Box<Node>,
        keywords: Vec<(Option<String>, Node)>,
    },
    Attr(Box<Node>, String),
    /// `-x` / `+x`.
    Sign(bool, Box<Node>),
    /// An f-string: its text when it has no placeholders.
    FString(Option<String>),
    /// Any other valid expression.
    Other,
}

/// `handle_single_tool`.
fn single_tool(node: &Node) -> Result<PyCall, NotCalls> {
    let Node::Call { func, keywords } = node else { return Err(NotCalls) };
    let name = dotted_name(func)?;
    let mut args = Vec::new();
    for (k, v) in keywords {
        let key = k.clone().map_or(PyValue::None, PyValue::Str);
        dict_insert(&mut args, key, value(v)?);
    }
    Ok(PyCall { name, arguments: PyValue::Dict(args) })
}

fn dotted_name(node: &Node) -> Result<String, NotCalls> {
    match node {
        Node::Name(n) => Ok(n.clone()),
        Node::Attr(base, attr) => Ok(format!("{}.{attr}", dotted_name(base)?)),
        _ => Err(NotCalls),
    }
}

/// `get_parameter_value`.
fn value(node: &Node) -> Result<PyValue, NotCalls> {
    Ok(match node {
        Node::Const(lit) => match constant(lit) {
            Some(v) => v,
            None => return Err(NotCalls),
        },
        Node::Dict(entries) => {
            let mut out = Vec::new();
            for (k, v) in entries {
                let Some(Node::Const(lit)) = k else { return Err(NotCalls) };
                let key = constant(lit).ok_or(NotCalls)?;
                dict_insert(&mut out, key, value(v)?);
            }
            PyValue::Dict(out)
        }
        Node::List(items) | Node::Tuple(items) | Node::Set(items) => {
            PyValue::List(items.iter().map(value).collect::<Result<_, _>>()?)
        }
        Node::FString(Some(s)) => PyValue::Str(s.clone()),
        Node::Name(n) => match n.as_str() {
            "null" => PyValue::None,
            "true" => PyValue::Bool(true),
            "false" => PyValue::Bool(false),
            _ => return Err(NotCalls),
        },
        Node::Sign(negative, operand) => match value(operand)? {
            PyValue::Int(d) if *negative => PyValue::Int(negate(&d)),
            PyValue::Float(f) if *negative => PyValue::Float(-f),
            v @ (PyValue::Int(_) | PyValue::Float(_)) => v,
            _ => return Err(NotCalls),
        },
        _ => return Err(NotCalls),
    })
}

fn constant(lit: &Lit) -> Option<PyValue> {
    Some(match lit {
        Lit::None => PyValue::None,
        Lit::Bool(b) => PyValue::Bool(*b),
        Lit::Int(d) => PyValue::Int(d.clone()),
        Lit::Float(f) => PyValue::Float(*f),
        Lit::Str(s) => PyValue::Str(s.clone()),
        Lit::Unsupported => return None,
    })
}

fn negate(d: &str) -> String {
    match d.strip_prefix('-') {
        Some(rest) => rest.to_string(),
        None if d == "0" => d.to_string(),
        None => format!("-{d}"),
    }
}
