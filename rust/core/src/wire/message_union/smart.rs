//! pydantic-core's validators for the types in `schema`, on JSON input
//! validated as Python (lax where pydantic is lax), with its smart-union
//! rule: every member is tried; the one that set the most TypedDict/model
//! fields wins, ties keep the earlier member; a member that succeeds without
//! a field count (a plain `str`, a generator) wins at once. Errors are kept
//! raw (full location, the offending value) so each caller prints them its
//! own way.

use serde_json::Value;

use super::schema::{Class, Ty};
use crate::pycompat::pydantic::read::lax_bool;
use crate::pycompat::repr::repr_str;

#[derive(Clone, Debug)]
pub(super) enum Seg {
    Name(&'static str),
    Key(String),
    Index(usize),
}

impl Seg {
    pub(super) fn text(&self) -> String {
        match self {
            Seg::Name(n) => (*n).to_string(),
            Seg::Key(k) => k.clone(),
            Seg::Index(i) => i.to_string(),
        }
    }
}

/// One pydantic line error, before formatting.
pub(super) struct RawError<'v> {
    pub kind: &'static str,
    pub loc: Vec<Seg>,
    pub msg: String,
    pub input: &'v Value,
    pub ctx: Option<String>,
}

/// One validation pass: the current location, the fields-set count pydantic
/// keeps in its validation state, and the errors so far.
#[derive(Default)]
pub(super) struct Validator<'v> {
    path: Vec<Seg>,
    count: Option<usize>,
    pub errors: Vec<RawError<'v>>,
}

impl<'v> Validator<'v> {
    pub(super) fn at(path: Vec<Seg>) -> Self {
        Validator { path, count: None, errors: Vec::new() }
    }

    fn error(&mut self, kind: &'static str, msg: impl Into<String>, input: &'v Value, ctx: Option<String>) {
        self.errors.push(RawError { kind, loc: self.path.clone(), msg: msg.into(), input, ctx });
    }

    fn add_fields_set(&mut self, n: usize) {
        *self.count.get_or_insert(0) += n;
    }

    /// Validate `v` as `ty`; `false` when it failed (errors recorded).
    pub(super) fn check(&mut self, ty: &Ty, v: &'v Value) -> bool {
        match ty {
            Ty::Str => v.is_string() || self.fail("string_type", "Input should be a valid string", v),
            Ty::Int => self.int(v),
            Ty::Float => self.float(v),
            Ty::Bool => self.boolean(v),
            Ty::Any => true,
            Ty::Literal(values) => {
                v.as_str().is_some_and(|s| values.contains(&s)) || self.expected("literal_error", values, v)
            }
            Ty::Enum(values) => v.as_str().is_some_and(|s| values.contains(&s)) || self.expected("enum", values, v),
            Ty::Instance(class) => {
                let ctx = format!("{{'class': {}}}", repr_str(class));
                self.error("is_instance_of", format!("Input should be an instance of {class}"), v, Some(ctx));
                false
            }
            Ty::Nullable(inner) => v.is_null() || self.check(inner, v),
            Ty::Union(members) => self.pick(members, v).is_some(),
            Ty::Generator(_) => {
                matches!(v, Value::String(_) | Value::Array(_) | Value::Object(_))
                    || self.fail("iterable_type", "Input should be iterable", v)
            }
            Ty::List(item) => match v {
                Value::Array(items) => {
                    let mut ok = true;
                    for (i, x) in items.iter().enumerate() {
                        self.path.push(Seg::Index(i));
                        ok &= self.check(item, x);
                        self.path.pop();
                    }
                    ok
                }
                _ => self.fail("list_type", "Input should be a valid list", v),
            },
            Ty::Dict(value) => match v {
                Value::Object(o) => {
                    let mut ok = true;
                    for (k, x) in o {
                        self.path.push(Seg::Key(k.clone()));
                        ok &= self.check(value, x);
                        self.path.pop();
                    }
                    ok
                }
                _ => self.fail("dict_type", "Input should be a valid dictionary", v),
            },
            Ty::TypedDict(class) => self.fields(class, v, "dict_type", "Input should be a valid dictionary"),
            Ty::Model(class) => self.fields(
                class,
                v,
                "model_attributes_type",
                "Input should be a valid dictionary or object to extract fields from",
            ),
        }
    }

    /// A smart-mode union: the index of the winning member, or `None` with
    /// every member's errors (each under its tag) recorded.
    pub(super) fn pick(&mut self, members: &[&Ty], v: &'v Value) -> Option<usize> {
        let old_count = self.count;
        let outer = std::mem::take(&mut self.errors);
        let mut failures = Vec::new();
        let mut best: Option<(usize, usize)> = None;
        for (i, member) in members.iter().enumerate() {
            self.count = None;
            self.path.push(Seg::Name(member.tag()));
            let ok = self.check(member, v);
            self.path.pop();
            let errors = std::mem::take(&mut self.errors);
            if !ok {
                if best.is_none() {
                    failures.extend(errors);
                }
                continue;
            }
            match self.count {
                None => {
                    self.count = old_count;
                    self.errors = outer;
                    return Some(i);
                }
                Some(n) => {
                    if best.is_none_or(|(_, cur)| cur < n) {
                        best = Some((i, n));
                    }
                }
            }
        }
        self.count = old_count;
        self.errors = outer;
        match best {
            Some((i, n)) => {
                self.add_fields_set(n);
                Some(i)
            }
            None => {
                self.errors.extend(failures);
                None
            }
        }
    }

    fn fields(&mut self, class: &Class, v: &'v Value, kind: &'static str, msg: &str) -> bool {
        let Value::Object(o) = v else { return self.fail(kind, msg, v) };
        let mut ok = true;
        let mut set = 0;
        for field in class.fields {
            self.path.push(Seg::Name(field.name));
            match o.get(field.name) {
                Some(x) => {
                    if self.check(field.ty, x) {
                        set += 1;
                    } else {
                        ok = false;
                    }
                }
                None if field.required => ok = self.fail("missing", "Field required", v),
                None => {}
            }
            self.path.pop();
        }
        if ok {
            self.add_fields_set(set);
        }
        ok
    }

    fn fail(&mut self, kind: &'static str, msg: &str, v: &'v Value) -> bool {
        self.error(kind, msg, v, None);
        false
    }

    fn expected(&mut self, kind: &'static str, values: &[&str], v: &'v Value) -> bool {
        let quoted: Vec<String> = values.iter().map(|a| repr_str(a)).collect();
        let expected = match quoted.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => quoted.concat(),
        };
        let ctx = format!("{{'expected': {}}}", repr_str(&expected));
        self.error(kind, format!("Input should be {expected}"), v, Some(ctx));
        false
    }

    fn int(&mut self, v: &'v Value) -> bool {
        match v {
            Value::Bool(_) => true,
            Value::Number(n) if n.is_i64() || n.is_u64() => true,
            Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => true,
            Value::Number(_) => {
                self.fail("int_from_float", "Input should be a valid integer, got a number with a fractional part", v)
            }
            Value::String(s) if s.trim().parse::<i128>().is_ok() => true,
            Value::String(_) => {
                self.fail("int_parsing", "Input should be a valid integer, unable to parse string as an integer", v)
            }
            _ => self.fail("int_type", "Input should be a valid integer", v),
        }
    }

    fn float(&mut self, v: &'v Value) -> bool {
        match v {
            Value::Bool(_) | Value::Number(_) => true,
            Value::String(s) if s.trim().parse::<f64>().is_ok() => true,
            Value::String(_) => {
                self.fail("float_parsing", "Input should be a valid number, unable to parse string as a number", v)
            }
            _ => self.fail("float_type", "Input should be a valid number", v),
        }
    }

    fn boolean(&mut self, v: &'v Value) -> bool {
        match (lax_bool(v), v) {
            (Some(_), _) => true,
            (None, Value::String(_)) => {
                self.fail("bool_parsing", "Input should be a valid boolean, unable to interpret input", v)
            }
            (None, _) => self.fail("bool_type", "Input should be a valid boolean", v),
        }
    }
}
