//! The argument typing HY3 and HY4 share (`_parse_value` and its
//! helpers): a value's text read by the types its tool's schema gives the
//! key, through the parsers' type aliases, as the JSON `json.dumps` writes.

use serde_json::{Map, Value};

use crate::parse::pyast::literal_eval;
use crate::parse::ChatContext;
use crate::pycompat::json::{dumps, dumps_str, loads};
use crate::pycompat::num::{float_json, py_float, py_int};
use crate::pycompat::str::py_isspace;

/// Python's `str.strip()`.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(py_isspace)
}

/// `_normalize_type`: aliases, then `int*`/`num*`-style prefixes.
fn normalize(raw: &str) -> String {
    let alias = match raw {
        "str" | "text" | "varchar" | "char" | "enum" => Some("string"),
        "bool" | "binary" => Some("boolean"),
        "int" => Some("integer"),
        "float" | "double" => Some("number"),
        "list" => Some("array"),
        "dict" | "map" => Some("object"),
        _ => None,
    };
    if let Some(a) = alias {
        return a.to_string();
    }
    let lower = raw.to_lowercase();
    if ["int", "uint", "long", "short", "unsigned"].iter().any(|p| lower.starts_with(p)) {
        "integer".into()
    } else if ["num", "float"].iter().any(|p| lower.starts_with(p)) {
        "number".into()
    } else {
        raw.to_string()
    }
}

/// `_get_types`: the property's non-null types (a type that is not a
/// string counts as one no branch names).
pub fn types(ctx: &ChatContext, tool: &str, key: &str) -> Vec<String> {
    let empty = Map::new();
    let schema = ctx
        .tool_parameters(tool)
        .and_then(|p| p.get("properties"))
        .and_then(|p| p.get(key))
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let options: Vec<Value> = match (schema.get("type"), schema.get("anyOf"), schema.get("oneOf")) {
        (Some(Value::Array(list)), _, _) => list.iter().map(|t| serde_json::json!({ "type": t })).collect(),
        (Some(_), _, _) => vec![Value::Object(schema.clone())],
        (None, Some(Value::Array(any)), _) => any.clone(),
        (None, None, Some(Value::Array(one))) => one.clone(),
        _ => vec![serde_json::json!({"type": "string"})],
    };
    let mut out: Vec<String> = Vec::new();
    for option in &options {
        let kind = match option.get("type") {
            None => "string".to_string(),
            Some(Value::String(s)) => normalize(s),
            Some(_) => "\u{0}other".to_string(),
        };
        if kind != "null" && !out.contains(&kind) {
            out.push(kind);
        }
    }
    out
}

/// `_parse_value`, as the JSON text `json.dumps` writes for it.
pub fn parse_value(value: &str, ctx: &ChatContext, tool: &str, key: &str) -> String {
    let types = types(ctx, tool, key);
    let has = |t: &str| types.iter().any(|x| x == t);
    if has("boolean") {
        match value.to_lowercase().as_str() {
            "true" => return "true".into(),
            "false" => return "false".into(),
            _ => {}
        }
    }
    if has("integer") {
        if let Some(i) = py_int(value) {
            return i;
        }
    }
    if has("number") {
        let number = if value.contains(['.', 'e', 'E']) { py_float(value).map(float_json) } else { py_int(value) };
        if let Some(n) = number {
            return n;
        }
    }
    if types.iter().any(|t| !["string", "boolean", "integer", "number"].contains(&t.as_str())) {
        if let Some(v) = loads(value) {
            return dumps(&v);
        }
    }
    if has("string") {
        return dumps_str(value);
    }
    // `_deserialize`: JSON, a Python literal, else the text.
    if let Some(v) = loads(value) {
        return dumps(&v);
    }
    literal_eval(value).and_then(|v| v.dumps().ok()).unwrap_or_else(|| dumps_str(value))
}

/// A dict of JSON texts, as `json.dumps` writes it.
pub fn object(entries: &[(String, String)]) -> String {
    let body: Vec<String> = entries.iter().map(|(k, v)| format!("{}: {v}", dumps_str(k))).collect();
    format!("{{{}}}", body.join(", "))
}


#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn normalize_maps_aliases_and_prefixes() {
        assert_eq!(normalize("dict"), "object");
        assert_eq!(normalize("UInt32"), "integer");
        assert_eq!(normalize("numeric"), "number");
        assert_eq!(normalize("Str"), "Str");
    }
}
