//! `_minimax_m3_arg_converter`: an `<invoke>` body's parameter elements as
//! a JSON object. An element holding elements is an object, or an array
//! where its schema says so; text is coerced to the schema's types;
//! repeated names collect into a list.

use serde_json::{Map, Value};

use crate::parse::coerce::{coerce_str, schema_types};
use crate::pycompat::json::dumps;

pub(super) const NAMESPACE: &str = "]<]minimax[>[";
const ELEMENT_START: &str = "]<]minimax[>[<";
const ELEMENT_END_START: &str = "]<]minimax[>[</";
const MIXED_TEXT_FIELD: &str = "$text";
const MAX_ELEMENT_DEPTH: usize = 128;

enum Element {
    Text(String),
    Children(Vec<(String, Element)>),
}

/// The arguments of one call, for the call's schema properties.
pub(super) fn convert(raw: &str, properties: Option<&Map<String, Value>>) -> String {
    let empty = Map::new();
    let schema = Map::from_iter([("properties".to_string(), Value::Object(properties.unwrap_or(&empty).clone()))]);
    dumps(&Value::Object(convert_object(invoke_params(raw), Some(&schema))))
}

/// `_parse_invoke_params`: up to the first malformed or open element.
fn invoke_params(raw: &str) -> Vec<(String, Element)> {
    let mut params = Vec::new();
    let mut pos = 0;
    loop {
        pos += raw[pos..].len() - raw[pos..].trim_start_matches(is_py_space).len();
        if !raw[pos..].starts_with(ELEMENT_START) {
            return params;
        }
        let Some((name, value, end)) = parse_element(raw, pos, 1) else { return params };
        params.push((name, value));
        pos = end;
    }
}

/// Python's `str.isspace`.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `_parse_element` at `pos`: `(name, value, end)`, `None` if malformed.
fn parse_element(text: &str, pos: usize, depth: usize) -> Option<(String, Element, usize)> {
    if depth > MAX_ELEMENT_DEPTH {
        return None;
    }
    let name_start = pos + ELEMENT_START.len();
    let name_end = name_start + text[name_start..].find('>').filter(|&n| n > 0)?;
    let name = &text[name_start..name_end];
    if name.starts_with('/') || name.trim_matches(is_py_space).is_empty() {
        return None;
    }
    let close_tag = format!("{ELEMENT_END_START}{name}>");
    let mut pos = name_end + 1;
    let mut body = String::new();
    let mut children = Vec::new();
    loop {
        let marker = pos + text[pos..].find(NAMESPACE)?;
        body.push_str(&text[pos..marker]);
        if text[marker..].starts_with(&close_tag) {
            pos = marker + close_tag.len();
            break;
        }
        if !text[marker..].starts_with(ELEMENT_START) {
            return None;
        }
        let (child, value, end) = parse_element(text, marker, depth + 1)?;
        children.push((child, value));
        pos = end;
    }
    if children.is_empty() {
        return Some((name.to_string(), Element::Text(body), pos));
    }
    if !body.trim_matches(is_py_space).is_empty() {
        let mut field = MIXED_TEXT_FIELD.to_string();
        while children.iter().any(|(n, _)| *n == field) {
            field.insert(0, '$');
        }
        children.push((field, Element::Text(body)));
    }
    Some((name.to_string(), Element::Children(children), pos))
}

#[derive(PartialEq)]
enum Container {
    Array,
    Object,
}

/// `_container_schema`: the first array or object alternative.
fn container_schema(schema: &Map<String, Value>) -> Option<(Container, &Map<String, Value>)> {
    let types = schema.get("type");
    for (kind, name) in [(Container::Array, "array"), (Container::Object, "object")] {
        let listed = match types {
            Some(Value::String(t)) => t == name,
            Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(name)),
            _ => false,
        };
        if listed {
            return Some((kind, schema));
        }
    }
    if types.is_none_or(Value::is_null) {
        if schema.contains_key("items") {
            return Some((Container::Array, schema));
        }
        if schema.contains_key("properties") || schema.contains_key("additionalProperties") {
            return Some((Container::Object, schema));
        }
    }
    for field in ["anyOf", "oneOf"] {
        if let Some(Value::Array(choices)) = schema.get(field) {
            if let Some(found) = choices.iter().filter_map(Value::as_object).find_map(container_schema) {
                return Some(found);
            }
        }
    }
    None
}

/// `_convert_element`.
fn convert_element(value: Element, schema: Option<&Value>) -> Value {
    let schema = schema.and_then(Value::as_object);
    let container = schema.and_then(container_schema);
    match value {
        Element::Text(text) => {
            let Some(schema) = schema else { return Value::String(text) };
            let types = schema_types(Some(&Value::Object(schema.clone())));
            if let Some((kind, _)) = &container {
                if !types.iter().any(|t| t == "string") && text.trim_matches(is_py_space).is_empty() {
                    return match kind {
                        Container::Array => Value::Array(Vec::new()),
                        Container::Object => Value::Object(Map::new()),
                    };
                }
            }
            coerce_str(&text, &types)
        }
        Element::Children(children) => match container {
            Some((Container::Array, array)) => {
                let items = array.get("items");
                Value::Array(children.into_iter().map(|(_, child)| convert_element(child, items)).collect())
            }
            Some((Container::Object, object)) => Value::Object(convert_object(children, Some(object))),
            None => Value::Object(convert_object(children, None)),
        },
    }
}

/// `_convert_object`: named elements; a repeated name collects a list.
fn convert_object(elements: Vec<(String, Element)>, schema: Option<&Map<String, Value>>) -> Map<String, Value> {
    let properties = schema.and_then(|s| s.get("properties")).and_then(Value::as_object);
    let additional = schema.and_then(|s| s.get("additionalProperties"));
    let mut result = Map::new();
    let mut repeated: Vec<String> = Vec::new();
    for (name, element) in elements {
        let field_schema = match properties.and_then(|p| p.get(&name)) {
            Some(s) => Some(s),
            None => additional,
        };
        let converted = convert_element(element, field_schema);
        match result.get_mut(&name) {
            None => {
                result.insert(name, converted);
            }
            Some(Value::Array(list)) if repeated.contains(&name) => list.push(converted),
            Some(first) => {
                *first = Value::Array(vec![first.take(), converted]);
                repeated.push(name);
            }
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::convert;

    fn args(raw: &str, properties: Value) -> Value {
        serde_json::from_str(&convert(raw, properties.as_object())).unwrap_or(Value::Null)
    }

    const NS: &str = "]<]minimax[>[";

    #[test]
    fn nested_elements_follow_the_schema() {
        let raw = format!(
            "\n{NS}<user_id>42{NS}</user_id>\n{NS}<items>\n{NS}<item>{NS}<sku>b-1{NS}</sku>{NS}</item>\n{NS}</items>\n"
        );
        let props = json!({"user_id": {"type": "integer"}, "items": {"type": "array", "items": {"type": "object"}}});
        assert_eq!(args(&raw, props), json!({"user_id": 42, "items": [{"sku": "b-1"}]}));
        // Without a schema: strings, and an object of the children.
        assert_eq!(args(&raw, json!({})), json!({"user_id": "42", "items": {"item": {"sku": "b-1"}}}));
    }

    #[test]
    fn repeated_names_mixed_text_and_malformed_tails() {
        let raw = format!("{NS}<t>a{NS}</t>{NS}<t>b{NS}</t>{NS}<t>c{NS}</t>");
        assert_eq!(args(&raw, json!({})), json!({"t": ["a", "b", "c"]}));
        let raw = format!("{NS}<o>note{NS}<k>v{NS}</k>{NS}</o>");
        assert_eq!(args(&raw, json!({})), json!({"o": {"k": "v", "$text": "note"}}));
        // Parsing stops at the first unterminated element, keeping the rest.
        let raw = format!("{NS}<a>1{NS}</a>{NS}<b>2");
        assert_eq!(args(&raw, json!({"a": {"type": "number"}})), json!({"a": 1}));
        // An empty container value becomes an empty list.
        let raw = format!("{NS}<l> {NS}</l>");
        assert_eq!(args(&raw, json!({"l": {"type": "array"}})), json!({"l": []}));
    }
}
