//! What it takes to answer byte for byte as vLLM's Python does: `repr()`,
//! `json.loads` / `json.dumps`, pydantic's validation errors, `re` patterns,
//! `str` index arithmetic, and Python's truthiness of a JSON value.

pub mod json;
pub mod num;
pub mod pydantic;
pub mod re;
pub mod repr;
pub mod sre;
pub mod str;

use serde_json::Value;

/// `bool(value)` in Python, for a value decoded from JSON.
/// Python's `type(x).__name__` for the object `json.loads` makes of a value.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}
