//! Schema coercion of XML-style tool arguments (vLLM's
//! `extract_types_from_schema`, `coerce_to_schema_type`, `_coerce_value`):
//! values arrive as strings and become what the tool's JSON schema says.

use serde_json::{Map, Value};

use crate::pycompat::json::loads;

/// `extract_types_from_schema`: every type the schema allows.
pub fn schema_types(schema: Option<&Value>) -> Vec<String> {
    let Some(Value::Object(s)) = schema else { return vec!["string".into()] };
    let mut types: Vec<String> = Vec::new();
    let mut add = |t: &str| {
        if !types.iter().any(|x| x == t) {
            types.push(t.to_string());
        }
    };
    match s.get("type") {
        Some(Value::String(t)) => add(t),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).for_each(&mut add),
        _ => {}
    }
    if let Some(Value::Array(values)) = s.get("enum") {
        for v in values {
            add(match v {
                Value::Null => "null",
                Value::Bool(_) => "boolean",
                Value::Number(n) if n.is_f64() => "number",
                Value::Number(_) => "integer",
                Value::String(_) => "string",
                Value::Array(_) => "array",
                Value::Object(_) => "object",
            });
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(choices)) = s.get(key) {
            for c in choices {
                for t in schema_types(Some(c)) {
                    add(&t);
                }
            }
        }
    }
    if types.is_empty() {
        types.push("string".into());
    }
    types
}

fn alias(t: &str) -> String {
    let t = t.trim().to_lowercase();
    let mapped = match t.as_str() {
        "str" | "text" | "varchar" | "char" | "enum" => "string",
        "int" | "int32" | "int64" | "uint" | "uint32" | "uint64" | "long" | "short" | "unsigned" => "integer",
        "float" | "float32" | "float64" | "double" => "number",
        "bool" => "boolean",
        "dict" => "object",
        "arr" | "list" | "sequence" => "array",
        other => other,
    };
    mapped.to_string()
}

fn is_finite(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.as_f64().is_some_and(f64::is_finite),
        Value::Array(a) => a.iter().all(is_finite),
        Value::Object(o) => o.values().all(is_finite),
        _ => true,
    }
}

/// Python's `int(str)` for the common forms.
fn py_int(s: &str) -> Option<Value> {
    let t = s.trim().replace('_', "");
    t.parse::<i64>().ok().map(Value::from)
}

/// `coerce_to_schema_type`: the first type (by priority) the string fits.
pub fn coerce_str(value: &str, types: &[String]) -> Value {
    let types: Vec<String> = types.iter().map(|t| alias(t)).collect();
    let has = |t: &str| types.iter().any(|x| x == t);
    for candidate in ["null", "integer", "number", "boolean", "object", "array", "string"] {
        if !has(candidate) {
            continue;
        }
        match candidate {
            "null" if value.to_lowercase() == "null" => return Value::Null,
            "string" => return Value::String(value.to_string()),
            "integer" => {
                if let Some(v) = py_int(value) {
                    return v;
                }
            }
            "number" => {
                if let Some(v) = py_int(value) {
                    return v;
                }
                if let Ok(f) = value.trim().parse::<f64>() {
                    if f.is_finite() {
                        return if f.fract() == 0.0 && f.abs() < 9.0e15 {
                            Value::from(f as i64)
                        } else {
                            serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
                        };
                    }
                }
            }
            "boolean" => match value.trim().to_lowercase().as_str() {
                "true" | "1" => return Value::Bool(true),
                "false" | "0" => return Value::Bool(false),
                _ => {}
            },
            "object" | "array" => {
                if let Some(v) = loads(value).filter(is_finite) {
                    return v;
                }
            }
            _ => {}
        }
    }
    match loads(value) {
        Some(v) if is_finite(&v) => v,
        _ => Value::String(value.to_string()),
    }
}

fn same_kind(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.is_f64() == y.is_f64(),
        _ => std::mem::discriminant(a) == std::mem::discriminant(b),
    }
}

/// `_coerce_value`: `(value, changed)`.
fn coerce_value(value: &mut Value, schema: &Value) -> bool {
    match value {
        Value::String(s) => {
            let coerced = coerce_str(s, &schema_types(Some(schema)));
            if coerced != Value::String(s.clone()) {
                *value = coerced;
                return true;
            }
            false
        }
        Value::Object(o) => match schema.get("properties") {
            Some(Value::Object(props)) => coerce_dict(o, props),
            _ => false,
        },
        Value::Array(items) => match schema.get("items") {
            Some(items_schema @ Value::Object(_)) => {
                let mut changed = false;
                for item in items.iter_mut() {
                    changed |= coerce_value(item, items_schema);
                }
                changed
            }
            _ => false,
        },
        other => {
            let as_str = crate::pycompat::json::dumps(other);
            let coerced = coerce_str(&as_str, &schema_types(Some(schema)));
            if !same_kind(&coerced, other) || coerced != *other {
                *other = coerced;
                return true;
            }
            false
        }
    }
}

/// `_coerce_dict`: coerce each argument by its property schema.
pub fn coerce_dict(args: &mut Map<String, Value>, properties: &Map<String, Value>) -> bool {
    let mut changed = false;
    for (key, value) in args.iter_mut() {
        if let Some(prop @ Value::Object(_)) = properties.get(key) {
            changed |= coerce_value(value, prop);
        }
    }
    changed
}
