//! Request validation that reports errors the way pydantic + vLLM's
//! `validation_exception_handler` print them, so a bad body gets the same
//! 400 (`loc`, `msg`, `input`) a vLLM client would see.

use serde_json::Value;

use crate::error::{sanitize, ApiError};
use crate::pycompat::repr::{repr_float, repr_str};

/// One segment of an error location.
#[derive(Clone, Copy)]
pub enum Seg<'a> {
    Name(&'static str),
    /// A key of a `dict[str, Model]` field.
    Key(&'a str),
    Index(usize),
}

/// A location as a parent-linked list, so descending costs nothing until an
/// error has to be reported.
#[derive(Clone, Copy)]
pub struct Loc<'a> {
    seg: Seg<'a>,
    parent: Option<&'a Loc<'a>>,
}

impl<'a> Loc<'a> {
    pub const fn root(name: &'static str) -> Loc<'static> {
        Loc { seg: Seg::Name(name), parent: None }
    }
    pub fn field(&'a self, name: &'static str) -> Loc<'a> {
        Loc { seg: Seg::Name(name), parent: Some(self) }
    }
    pub fn index(&'a self, i: usize) -> Loc<'a> {
        Loc { seg: Seg::Index(i), parent: Some(self) }
    }
    pub fn key(&'a self, key: &'a str) -> Loc<'a> {
        Loc { seg: Seg::Key(key), parent: Some(self) }
    }
    pub(crate) fn render(&self) -> String {
        let mut segs = Vec::new();
        let mut cur = Some(self);
        while let Some(l) = cur {
            segs.push(match l.seg {
                Seg::Name(n) => n.to_string(),
                Seg::Key(k) => k.to_string(),
                Seg::Index(i) => i.to_string(),
            });
            cur = l.parent;
        }
        segs.reverse();
        segs.join(".")
    }
}

/// One pydantic error dict.
#[derive(Debug, Clone)]
pub struct FieldError {
    pub kind: &'static str,
    pub loc: String,
    pub msg: String,
    /// The input, already summarised as vLLM does (`<list of N items>`...).
    pub input: String,
    /// The rendered `ctx` dict, if any (`{'ge': 0}`).
    pub ctx: Option<String>,
}

impl FieldError {
    fn render(&self) -> String {
        let mut s = format!(
            "{{'type': {}, 'loc': {}, 'msg': {}, 'input': {}",
            repr_str(self.kind),
            repr_str(&self.loc),
            repr_str(&self.msg),
            repr_str(&self.input)
        );
        if let Some(ctx) = &self.ctx {
            s.push_str(", 'ctx': ");
            s.push_str(ctx);
        }
        s.push('}');
        if s.chars().count() > 1000 {
            s = s.chars().take(1000).collect::<String>() + "...[truncated]";
        }
        s
    }
}

/// `_summarize_error_input`: what the error shows of the offending value.
pub fn summarize(v: Option<&Value>) -> String {
    let text = match v {
        None | Some(Value::Null) => "None".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => return format!("<list of {} items>", a.len()),
        Some(Value::Object(o)) => return format!("<dict of {} items>", o.len()),
        Some(Value::Bool(b)) => if *b { "True" } else { "False" }.to_string(),
        Some(Value::Number(n)) => py_number(n),
    };
    if text.chars().count() > 200 {
        text.chars().take(200).collect::<String>() + "...[truncated]"
    } else {
        text
    }
}

fn py_number(n: &serde_json::Number) -> String {
    if n.is_f64() {
        repr_float(n.as_f64().unwrap_or(0.0))
    } else {
        n.to_string()
    }
}

/// Collects the errors of one validation pass.
#[derive(Default)]
pub struct Errors {
    pub list: Vec<FieldError>,
}

impl Errors {
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn push(
        &mut self,
        kind: &'static str,
        loc: &Loc,
        msg: impl Into<String>,
        input: Option<&Value>,
        ctx: Option<String>,
    ) {
        self.list.push(FieldError { kind, loc: loc.render(), msg: msg.into(), input: summarize(input), ctx });
    }

    pub fn missing(&mut self, loc: &Loc, parent: &Value) {
        self.push("missing", loc, "Field required", Some(parent), None);
    }

    /// A model-level `ValueError` (pydantic `value_error` with the error in ctx).
    pub fn value_error(&mut self, loc: &Loc, message: &str, input: Option<&Value>) {
        self.push(
            "value_error",
            loc,
            format!("Value error, {message}"),
            input,
            Some(format!("{{'error': ValueError({})}}", repr_str(message))),
        );
    }

    /// The 400 vLLM's handler answers for these errors.
    pub fn into_api_error(self) -> ApiError {
        let count = self.list.len();
        let label = if count == 1 { "error" } else { "errors" };
        let mut message = format!("{count} validation {label}:\n");
        for e in self.list.iter().take(10) {
            message.push_str("  ");
            message.push_str(&e.render());
            message.push('\n');
        }
        if count > 10 {
            message.push_str(&format!("  ...and {} more {label}\n", count - 10));
        }
        let param = self.list.first().map(|e| e.loc.clone());
        ApiError::validation(sanitize(message.trim_end()), param)
    }
}

/// Typed, lax (pydantic "lax mode") readers. Each returns `None` and records
/// an error when the value does not fit.
pub mod read {
    use super::*;

    pub fn int(v: &Value, loc: &Loc, errs: &mut Errors) -> Option<i64> {
        match v {
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Some(i)
                } else if n.as_u64().is_some() {
                    Some(i64::MAX)
                } else {
                    let f = n.as_f64().unwrap_or(f64::NAN);
                    if f.is_finite() && f.fract() == 0.0 {
                        Some(f.clamp(i64::MIN as f64, i64::MAX as f64) as i64)
                    } else if f.is_finite() {
                        errs.push(
                            "int_from_float",
                            loc,
                            "Input should be a valid integer, got a number with a fractional part",
                            Some(v),
                            None,
                        );
                        None
                    } else {
                        errs.push("finite_number", loc, "Input should be a finite number", Some(v), None);
                        None
                    }
                }
            }
            Value::String(s) => match s.trim().parse::<i64>() {
                Ok(i) => Some(i),
                Err(_) => {
                    errs.push(
                        "int_parsing",
                        loc,
                        "Input should be a valid integer, unable to parse string as an integer",
                        Some(v),
                        None,
                    );
                    None
                }
            },
            _ => {
                errs.push("int_type", loc, "Input should be a valid integer", Some(v), None);
                None
            }
        }
    }

    pub fn int_ge(v: &Value, ge: i64, loc: &Loc, errs: &mut Errors) -> Option<i64> {
        let i = int(v, loc, errs)?;
        if i < ge {
            errs.push(
                "greater_than_equal",
                loc,
                format!("Input should be greater than or equal to {ge}"),
                Some(v),
                Some(format!("{{'ge': {ge}}}")),
            );
            return None;
        }
        Some(i)
    }

    pub fn int_gt(v: &Value, gt: i64, loc: &Loc, errs: &mut Errors) -> Option<i64> {
        let i = int(v, loc, errs)?;
        if i <= gt {
            errs.push(
                "greater_than",
                loc,
                format!("Input should be greater than {gt}"),
                Some(v),
                Some(format!("{{'gt': {gt}}}")),
            );
            return None;
        }
        Some(i)
    }

    pub fn float(v: &Value, loc: &Loc, errs: &mut Errors) -> Option<f64> {
        match v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => match parse_py_float(s.trim()) {
                Some(f) => Some(f),
                None => {
                    errs.push(
                        "float_parsing",
                        loc,
                        "Input should be a valid number, unable to parse string as a number",
                        Some(v),
                        None,
                    );
                    None
                }
            },
            _ => {
                errs.push("float_type", loc, "Input should be a valid number", Some(v), None);
                None
            }
        }
    }

    fn parse_py_float(s: &str) -> Option<f64> {
        match s.to_ascii_lowercase().as_str() {
            "nan" | "+nan" | "-nan" => Some(f64::NAN),
            "inf" | "+inf" | "infinity" | "+infinity" => Some(f64::INFINITY),
            "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
            other => other.parse::<f64>().ok(),
        }
    }

    pub fn string(v: &Value, loc: &Loc, errs: &mut Errors) -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            _ => {
                errs.push("string_type", loc, "Input should be a valid string", Some(v), None);
                None
            }
        }
    }

    pub fn boolean(v: &Value, loc: &Loc, errs: &mut Errors) -> Option<bool> {
        if let Some(b) = lax_bool(v) {
            return Some(b);
        }
        match v {
            // An int other than 0 / 1 or an unknown word is a parsing error;
            // anything else a type error.
            Value::String(_) => errs.push(
                "bool_parsing",
                loc,
                "Input should be a valid boolean, unable to interpret input",
                Some(v),
                None,
            ),
            Value::Number(n) if !n.is_f64() => errs.push(
                "bool_parsing",
                loc,
                "Input should be a valid boolean, unable to interpret input",
                Some(v),
                None,
            ),
            _ => errs.push("bool_type", loc, "Input should be a valid boolean", Some(v), None),
        }
        None
    }

    /// What pydantic's lax mode reads as a bool: true/false, 0/1 and the
    /// usual words.
    pub fn lax_bool(v: &Value) -> Option<bool> {
        match v {
            Value::Bool(b) => Some(*b),
            Value::Number(n) if n.as_i64() == Some(0) || n.as_f64() == Some(0.0) => Some(false),
            Value::Number(n) if n.as_i64() == Some(1) || n.as_f64() == Some(1.0) => Some(true),
            Value::String(s) => match s.to_ascii_lowercase().as_str() {
                "0" | "off" | "f" | "false" | "n" | "no" => Some(false),
                "1" | "on" | "t" | "true" | "y" | "yes" => Some(true),
                _ => None,
            },
            _ => None,
        }
    }

    pub fn list<'v>(v: &'v Value, loc: &Loc, errs: &mut Errors) -> Option<&'v Vec<Value>> {
        match v {
            Value::Array(a) => Some(a),
            _ => {
                errs.push("list_type", loc, "Input should be a valid list", Some(v), None);
                None
            }
        }
    }

    pub fn dict<'v>(v: &'v Value, loc: &Loc, errs: &mut Errors) -> Option<&'v serde_json::Map<String, Value>> {
        match v {
            Value::Object(o) => Some(o),
            _ => {
                errs.push("dict_type", loc, "Input should be a valid dictionary", Some(v), None);
                None
            }
        }
    }

    /// A nested pydantic model given something that is not an object.
    pub fn model<'v>(
        v: &'v Value,
        class: &str,
        loc: &Loc,
        errs: &mut Errors,
    ) -> Option<&'v serde_json::Map<String, Value>> {
        match v {
            Value::Object(o) => Some(o),
            _ => {
                errs.push(
                    "model_type",
                    loc,
                    format!("Input should be a valid dictionary or instance of {class}"),
                    Some(v),
                    Some(format!("{{'class_name': {}}}", repr_str(class))),
                );
                None
            }
        }
    }

    /// A list of ints; `min` is the lower bound each element must meet.
    pub fn int_list(v: &Value, min: Option<i64>, loc: &Loc, errs: &mut Errors) -> Option<Vec<i64>> {
        let items = list(v, loc, errs)?;
        let mut out = Vec::with_capacity(items.len());
        let before = errs.list.len();
        for (i, item) in items.iter().enumerate() {
            // Fast path: plain non-negative JSON integers.
            if let Some(x) = item.as_i64() {
                if min.is_none_or(|m| x >= m) {
                    out.push(x);
                    continue;
                }
            }
            let l = loc.index(i);
            let parsed = match min {
                Some(m) => int_ge(item, m, &l, errs),
                None => int(item, &l, errs),
            };
            if let Some(x) = parsed {
                out.push(x);
            }
        }
        (errs.list.len() == before).then_some(out)
    }

    /// A `Literal[...]` of strings.
    pub fn literal_str(v: &Value, allowed: &[&str], loc: &Loc, errs: &mut Errors) -> Option<String> {
        if let Value::String(s) = v {
            if allowed.contains(&s.as_str()) {
                return Some(s.clone());
            }
        }
        // Pydantic lists choices as "'a', 'b' or 'c'".
        let quoted: Vec<String> = allowed.iter().map(|a| repr_str(a)).collect();
        let expected = match quoted.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => quoted.join(""),
        };
        errs.push(
            "literal_error",
            loc,
            format!("Input should be {expected}"),
            Some(v),
            Some(format!("{{'expected': {}}}", repr_str(&expected))),
        );
        None
    }

    /// A `Literal[True]` / `Literal[False]`.
    pub fn literal_bool(v: &Value, expected: bool, loc: &Loc, errs: &mut Errors) -> bool {
        if v.as_bool() == Some(expected) {
            return true;
        }
        let e = if expected { "True" } else { "False" };
        errs.push(
            "literal_error",
            loc,
            format!("Input should be {e}"),
            Some(v),
            Some(format!("{{'expected': {}}}", repr_str(e))),
        );
        false
    }

    /// Optional field: absent or null → `None` without error.
    pub fn opt<'v>(obj: &'v serde_json::Map<String, Value>, key: &str) -> Option<&'v Value> {
        obj.get(key).filter(|v| !v.is_null())
    }
}
