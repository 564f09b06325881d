//! What a closed region's text becomes: the field's content parser
//! (`text`, `int`, `float`, `bool`, `json`, `xml-inline`, `kv-lines`), the
//! tool schema's types on call arguments, then the field's transform. An
//! `Err` is the region's "malformed" (Python's KeyError/TypeError/ValueError).

use std::collections::HashMap;

use onig::{Regex, RegexOptions, Syntax};
use serde_json::{Map, Number, Value};

use super::template::{Field, CONTENT_PARSERS};
use crate::pycompat::num::{integral_float_text, py_float, py_int};
use crate::pycompat::str::py_isspace;
use crate::pycompat::truthy;
use crate::pycompat::type_name;

pub type Malformed = String;

/// A tool's argument schemas (`properties`), by tool name.
pub type ToolParams = HashMap<String, Map<String, Value>>;

/// `ResponseParser(tools=...)`: each function tool's `parameters.properties`.
pub fn tool_params(tools: &[Value]) -> ToolParams {
    let mut out = ToolParams::new();
    for tool in tools {
        let Value::Object(t) = tool else { continue };
        let function = t.get("function").unwrap_or(tool);
        let Some(name) = function.get("name").and_then(Value::as_str) else { continue };
        let properties = function.get("parameters").and_then(|p| p.get("properties")).and_then(Value::as_object);
        out.insert(name.to_string(), properties.cloned().unwrap_or_default());
    }
    out
}

fn strip(text: &str, args: &Map<String, Value>) -> String {
    if args.get("strip").is_none_or(truthy) {
        text.trim_matches(py_isspace).to_string()
    } else {
        text.to_string()
    }
}

fn int_value(digits: &str) -> Result<Value, Malformed> {
    if let Ok(i) = digits.parse::<i64>() {
        return Ok(Value::from(i));
    }
    digits.parse::<u64>().map(Value::from).map_err(|_| format!("integer out of range: {digits}"))
}

fn float_value(f: f64) -> Result<Value, Malformed> {
    Number::from_f64(f).map(Value::Number).ok_or_else(|| "a float JSON cannot hold".to_string())
}

fn pattern(p: &str) -> Result<Regex, Malformed> {
    Regex::with_options(p, RegexOptions::REGEX_OPTION_MULTILINE, Syntax::python()).map_err(|e| e.to_string())
}

/// `parse_content`.
pub fn parse(text: &str, name: &str, args: &Map<String, Value>) -> Result<Value, Malformed> {
    match name {
        "text" => Ok(Value::String(strip(text, args))),
        "int" => int_value(&py_int(&strip(text, args)).ok_or("invalid literal for int()")?),
        "float" => float_value(py_float(&strip(text, args)).ok_or("could not convert string to float")?),
        "bool" => Ok(Value::Bool(matches!(strip(text, args).to_lowercase().as_str(), "true" | "1"))),
        "json" => json(text, args),
        "xml-inline" => xml_inline(text, args),
        "kv-lines" => kv_lines(text, args),
        other => Err(format!("unknown content parser {other}")),
    }
}

const LAX_OPEN: char = '\u{1}';
const LAX_CLOSE: char = '\u{2}';

/// `_json`: JSON with optional custom string delimiters and bare keys.
fn json(text: &str, args: &Map<String, Value>) -> Result<Value, Malformed> {
    let delims: Vec<(String, String)> = match args.get("string_delims") {
        Some(Value::Array(pairs)) => pairs
            .iter()
            .map(|p| match p.as_array().map(Vec::as_slice) {
                Some([Value::String(o), Value::String(c)]) => Ok((o.clone(), c.clone())),
                _ => Err("string_delims entries must be [open, close] strings".to_string()),
            })
            .collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    if !delims.is_empty() && (text.contains(LAX_OPEN) || text.contains(LAX_CLOSE)) {
        return Err("json: input contains reserved sentinel characters".into());
    }
    let mut working = text.to_string();
    let mut captured: Vec<String> = Vec::new();
    for (open, close) in &delims {
        let re = pattern(&format!("{}(.*?){}", crate::pycompat::re::escape(open), crate::pycompat::re::escape(close)))?;
        let mut out = String::with_capacity(working.len());
        let mut at = 0;
        for caps in re.captures_iter(&working) {
            let Some((s, e)) = caps.pos(0) else { continue };
            out.push_str(&working[at..s]);
            captured.push(caps.at(1).unwrap_or("").to_string());
            out.push_str(&format!("{LAX_OPEN}{}{LAX_CLOSE}", captured.len() - 1));
            at = e;
        }
        out.push_str(&working[at..]);
        working = out;
    }
    if args.get("unquoted_keys").is_some_and(truthy) {
        let re = pattern(r"(?<=[{,])(\w+):")?;
        let mut out = String::with_capacity(working.len());
        let mut at = 0;
        for caps in re.captures_iter(&working) {
            let Some((s, e)) = caps.pos(0) else { continue };
            out.push_str(&working[at..s]);
            out.push_str(&format!("\"{}\":", caps.at(1).unwrap_or("")));
            at = e;
        }
        out.push_str(&working[at..]);
        working = out;
    }
    for (i, s) in captured.iter().enumerate() {
        let quoted = crate::pycompat::json::dumps(&Value::String(s.clone()));
        working = working.replace(&format!("{LAX_OPEN}{i}{LAX_CLOSE}"), &quoted);
    }
    match crate::pycompat::json::loads(&working) {
        Some(v) => Ok(v),
        None if args.get("allow_non_json").is_some_and(truthy) => Ok(Value::String(strip(text, args))),
        None => Err("json parser could not parse region as JSON".into()),
    }
}

/// `_sub_parse`: a value through the optional `value_parser`.
fn sub_parse(raw: Option<&str>, value_parser: Option<&Value>) -> Result<Value, Malformed> {
    let Some(vp) = value_parser.filter(|v| !v.is_null()) else {
        return Ok(raw.map_or(Value::Null, |r| Value::String(r.to_string())));
    };
    let Value::Object(vp) = vp else { return Err("value_parser must be a dict".into()) };
    let raw = raw.ok_or("value_parser on a missing value")?;
    let name = match vp.get("name") {
        None => "text",
        Some(Value::String(n)) if CONTENT_PARSERS.contains(&n.as_str()) => n.as_str(),
        Some(_) => return Err("unknown value_parser".into()),
    };
    let empty = Map::new();
    let args = match vp.get("args") {
        None => &empty,
        Some(Value::Object(a)) => a,
        Some(_) => return Err("value_parser args must be a dict".into()),
    };
    parse(raw, name, args)
}

/// `_xml_inline`: `tag_pattern`'s `key` / `value` groups into a dict.
fn xml_inline(text: &str, args: &Map<String, Value>) -> Result<Value, Malformed> {
    let Some(Value::String(tag)) = args.get("tag_pattern") else {
        return Err("xml-inline: 'tag_pattern' content_arg is required".into());
    };
    let re = pattern(tag)?;
    let mut groups: HashMap<String, u32> = HashMap::new();
    re.foreach_name(|name, idx| {
        if let Some(&i) = idx.first() {
            groups.insert(name.to_string(), i);
        }
        true
    });
    let merge = args.get("merge_duplicates").is_some_and(truthy);
    let mut out = Map::new();
    for caps in re.captures_iter(text) {
        let group = |name: &str| groups.get(name).and_then(|&i| caps.at(i as usize));
        let Some(key) = group("key") else {
            return Err("xml-inline: tag_pattern must have a named group 'key'".into());
        };
        let raw = if groups.contains_key("value") { group("value") } else { Some("") };
        let value = sub_parse(raw, args.get("value_parser"))?;
        match out.get_mut(key) {
            Some(existing) if merge => match existing {
                Value::Array(items) => items.push(value),
                other => *other = Value::Array(vec![other.take(), value]),
            },
            _ => {
                out.insert(key.to_string(), value);
            }
        }
    }
    Ok(Value::Object(out))
}

/// `_kv_lines`: `key<sep>value` lines into a dict.
fn kv_lines(text: &str, args: &Map<String, Value>) -> Result<Value, Malformed> {
    let get = |key: &str, default: &str| match args.get(key) {
        None => Ok(default.to_string()),
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(_) => Err(format!("kv-lines: bad {key}")),
    };
    let (line_sep, kv_sep) = (get("line_sep", "\n")?, get("kv_sep", ":")?);
    let mut out = Map::new();
    for line in text.split(line_sep.as_str()) {
        let line = strip(line, args);
        let Some((k, v)) = line.split_once(kv_sep.as_str()) else { continue };
        let value = sub_parse(Some(&strip(v, args)), args.get("value_parser"))?;
        out.insert(strip(k, args), value);
    }
    Ok(Value::Object(out))
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The path of a whole-string `{a.b.c}` placeholder.
fn placeholder_path(s: &str) -> Option<Vec<&str>> {
    let inner = s.strip_prefix('{')?.strip_suffix('}')?;
    let parts: Vec<&str> = inner.split('.').collect();
    parts.iter().all(|p| !p.is_empty() && p.chars().all(is_word)).then_some(parts)
}

/// Does `s` hold a `{placeholder}` anywhere?
fn has_placeholder(s: &str) -> bool {
    s.char_indices()
        .filter(|(_, c)| *c == '{')
        .any(|(i, _)| s[i + 1..].find('}').is_some_and(|j| placeholder_path(&s[i..i + j + 2]).is_some()))
}

/// `validate_transform_strings`.
pub fn validate_transform(scope: &str, transform: &Value) -> Result<(), String> {
    match transform {
        Value::Object(m) => m.values().try_for_each(|v| validate_transform(scope, v)),
        Value::Array(items) => items.iter().try_for_each(|v| validate_transform(scope, v)),
        Value::String(s) if has_placeholder(s) && placeholder_path(s).is_none() => Err(format!(
            "{scope}: transform string {} mixes a {{placeholder}} with literal text. Use either a whole-string placeholder (e.g. \"{{content}}\") or a plain literal; string interpolation is not supported.",
            crate::pycompat::repr::repr_str(s)
        )),
        _ => Ok(()),
    }
}

/// `_apply_transform`.
fn apply(transform: &Value, scope: &Map<String, Value>) -> Result<Value, Malformed> {
    match transform {
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| Ok((k.clone(), apply(v, scope)?)))
            .collect::<Result<Map<_, _>, _>>()
            .map(Value::Object),
        Value::Array(items) => items.iter().map(|v| apply(v, scope)).collect::<Result<Vec<_>, _>>().map(Value::Array),
        Value::String(s) => {
            let Some(path) = placeholder_path(s) else { return Ok(transform.clone()) };
            let mut value = scope.get(path[0]).ok_or_else(|| format!("transform placeholder '{s}' is not defined"))?;
            for key in &path[1..] {
                let Value::Object(m) = value else {
                    return Err(format!("transform placeholder '{s}' cannot index into {}", type_name(value)));
                };
                value = m.get(*key).ok_or_else(|| format!("transform placeholder '{s}' is missing key '{key}'"))?;
            }
            Ok(value.clone())
        }
        other => Ok(other.clone()),
    }
}

/// `process_field`, then the tool schema's types, then `join`'s check.
pub fn process(
    body: &str,
    field: &Field,
    captures: &Map<String, Value>,
    tools: &ToolParams,
) -> Result<Value, Malformed> {
    let value = parse(body, &field.content, &field.content_args)?;
    let mut value = match &field.transform {
        None => value,
        Some(t) if field.transform_each => {
            let Value::Array(items) = value else {
                return Err(format!("Field '{}': transform_each requires a list", field.name));
            };
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                let Value::Object(item) = item else {
                    return Err(format!("Field '{}': transform_each requires dict elements", field.name));
                };
                let mut scope = captures.clone();
                scope.extend(item);
                out.push(apply(t, &scope)?);
            }
            Value::Array(out)
        }
        Some(t) => {
            let mut scope = captures.clone();
            scope.insert("content".into(), value);
            apply(t, &scope)?
        }
    };
    if !tools.is_empty() {
        coerce_calls(&mut value, tools);
    }
    if field.join.is_some() && !value.is_string() {
        return Err(format!("Field '{}': 'join' requires each match to parse to a string", field.name));
    }
    Ok(value)
}

/// `_coerce_tool_calls`: string arguments of known tools to their types.
fn coerce_calls(value: &mut Value, tools: &ToolParams) {
    if let Value::Array(items) = value {
        items.iter_mut().for_each(|v| coerce_calls(v, tools));
        return;
    }
    let Some(Value::Object(function)) = value.get_mut("function") else { return };
    let Some(name) = function.get("name").and_then(Value::as_str).map(str::to_string) else { return };
    let Some(properties) = tools.get(&name).filter(|p| !p.is_empty()) else { return };
    let Some(Value::Object(arguments)) = function.get_mut("arguments") else { return };
    for (key, argument) in arguments.iter_mut() {
        let types = properties.get(key).map(schema_types).unwrap_or_default();
        if types.is_empty() {
            continue;
        }
        match argument {
            Value::String(raw) => *argument = coerce(raw, &types),
            Value::Array(items) if !types.iter().any(|t| t == "array") => {
                for item in items.iter_mut() {
                    if let Value::String(raw) = item {
                        *item = coerce(raw, &types);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `_schema_types`: declared types, through `anyOf` / `oneOf` and `nullable`.
pub fn schema_types(schema: &Value) -> Vec<String> {
    let Value::Object(s) = schema else { return Vec::new() };
    let mut types: Vec<String> = match s.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => Vec::new(),
    };
    for union in ["anyOf", "oneOf"] {
        if let Some(Value::Array(choices)) = s.get(union) {
            types.extend(choices.iter().flat_map(schema_types));
        }
    }
    if s.get("nullable").is_some_and(truthy) && !types.iter().any(|t| t == "null") {
        types.push("null".into());
    }
    types
}

/// `_coerce`: the first declared type the text reads as, else the text.
fn coerce(raw: &str, types: &[String]) -> Value {
    for t in types {
        let v = match t.as_str() {
            "integer" => match py_int(raw) {
                Some(digits) => int_value(&digits).ok(),
                None => py_float(raw)
                    .filter(|f| f.is_finite() && f.fract() == 0.0)
                    .and_then(|f| int_value(&integral_float_text(f)).ok()),
            },
            "number" => py_float(raw).filter(|f| f.is_finite()).and_then(|f| {
                if f.fract() == 0.0 && !raw.contains('.') {
                    int_value(&integral_float_text(f)).ok()
                } else {
                    float_value(f).ok()
                }
            }),
            "boolean" => match raw.trim_matches(py_isspace).to_lowercase().as_str() {
                "true" | "1" => Some(Value::Bool(true)),
                "false" | "0" => Some(Value::Bool(false)),
                _ => None,
            },
            "null" => matches!(raw.trim_matches(py_isspace), "null" | "None").then_some(Value::Null),
            "object" => crate::pycompat::json::loads(raw).filter(Value::is_object),
            "array" => crate::pycompat::json::loads(raw).filter(Value::is_array),
            _ => None,
        };
        if let Some(v) = v {
            return v;
        }
    }
    Value::String(raw.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn coerces_by_schema() {
        let t = |s: &str| vec![s.to_string()];
        assert_eq!(coerce("3.0", &t("integer")), json!(3));
        assert_eq!(coerce("2.5", &t("integer")), json!("2.5"));
        assert_eq!(coerce("1e2", &t("number")), json!(100));
        assert_eq!(coerce("2.0", &t("number")), json!(2.0));
        assert_eq!(coerce(" True ", &t("boolean")), json!(true));
        assert_eq!(coerce("None", &t("null")), json!(null));
        assert_eq!(coerce("[1]", &t("object")), json!("[1]"));
    }

    #[test]
    fn json_dialects() {
        let args = json!({"unquoted_keys": true, "string_delims": [["<|\"|>", "<|\"|>"]]});
        let v = json(r#"{a:<|"|>x "y"<|"|>,b:2}"#, args.as_object().unwrap()).unwrap();
        assert_eq!(v, json!({"a": "x \"y\"", "b": 2}));
    }

    #[test]
    fn transforms_check_placeholders() {
        assert!(validate_transform("F", &json!({"a": "{content}", "b": "lit"})).is_ok());
        assert!(validate_transform("F", &json!("x {content}")).is_err());
        let scope = json!({"content": {"a": {"b": 1}}});
        assert_eq!(apply(&json!(["{content.a.b}"]), scope.as_object().unwrap()).unwrap(), json!([1]));
    }
}
