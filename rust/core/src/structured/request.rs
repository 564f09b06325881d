//! The request's own structured outputs: `extract_structured_outputs` (the
//! `StructuredOutputsParams` that goes into `sampling_params`) and, for
//! `tool_choice: "auto"` with a tool-call tag, the xgrammar format the tag is
//! OR-ed with (`structured_outputs_to_format`) when xgrammar takes it
//! (`_xgrammar_supports`).

use serde_json::{json, Map, Value};

use super::tool_tags::RequestFormat;
use crate::pycompat::json::{dumps_with, DumpOptions};

/// `StructuredOutputsParams` fields, in serialisation order, with defaults.
pub(crate) const PARAM_FIELDS: [(&str, Value); 11] = [
    ("json", Value::Null),
    ("regex", Value::Null),
    ("choice", Value::Null),
    ("grammar", Value::Null),
    ("json_object", Value::Null),
    ("disable_any_whitespace", Value::Bool(false)),
    ("disable_additional_properties", Value::Bool(false)),
    ("whitespace_pattern", Value::Null),
    ("structural_tag", Value::Null),
    ("_backend", Value::Null),
    ("_backend_was_auto", Value::Bool(false)),
];

/// The constraint fields (exactly one must be set).
pub(crate) const CONSTRAINTS: [&str; 6] = ["json", "regex", "choice", "grammar", "json_object", "structural_tag"];

/// Nesting caps (`MAX_STRUCTURED_OUTPUT_JSON_NESTING`, plus
/// `STRUCTURAL_TAG_WRAPPER_NESTING` for structural tags).
pub(crate) const MAX_JSON_NESTING: usize = 64;
pub(crate) const STRUCTURAL_TAG_EXTRA_NESTING: usize = 16;

/// `extract_structured_outputs`: `structured_outputs` with `response_format`
/// over it, as the full `StructuredOutputsParams` object; `None` when the
/// request has neither.
pub fn request_params(o: &Map<String, Value>) -> Option<Value> {
    let given = o.get("structured_outputs").and_then(Value::as_object);
    let overrides = o.get("response_format").and_then(Value::as_object).and_then(response_format_override);
    if given.is_none() && overrides.is_none() {
        return None;
    }
    let mut params = Map::new();
    for (key, default) in PARAM_FIELDS {
        let value = if key.starts_with('_') { None } else { given.and_then(|g| g.get(key)).cloned() };
        // The bool fields as pydantic coerced them ("yes" -> true).
        let value = match value {
            Some(v) if matches!(default, Value::Bool(_)) || key == "json_object" => {
                Some(crate::pycompat::pydantic::read::lax_bool(&v).map_or(v, Value::Bool))
            }
            other => other,
        };
        params.insert(key.into(), value.unwrap_or(default));
    }
    if let Some((key, value)) = overrides {
        params.insert(key.into(), value);
    }
    Some(Value::Object(params))
}

/// The field `response_format` sets (`structured_outputs_from_response_format`).
pub(crate) fn response_format_override(rf: &Map<String, Value>) -> Option<(&'static str, Value)> {
    match rf.get("type").and_then(Value::as_str)? {
        "json_object" => Some(("json_object", Value::Bool(true))),
        "json_schema" => {
            let js = rf.get("json_schema")?;
            Some(("json", js.get("schema").or_else(|| js.get("json_schema")).cloned().unwrap_or(Value::Null)))
        }
        // `json.dumps(response_format.model_dump(by_alias=True))`: declared
        // fields first, extra ones after, ASCII-escaped.
        "structural_tag" => {
            let legacy = rf.contains_key("structures");
            let declared: &[&str] = if legacy { &["type", "structures", "triggers"] } else { &["type", "format"] };
            let mut dumped = Map::new();
            for key in declared {
                let value = rf.get(*key).cloned().unwrap_or(Value::Null);
                let value = match (*key, value) {
                    ("structures", Value::Array(items)) => Value::Array(items.iter().map(legacy_structure).collect()),
                    (_, v) => v,
                };
                dumped.insert((*key).into(), value);
            }
            for (k, v) in rf.iter().filter(|(k, _)| !declared.contains(&k.as_str())) {
                dumped.insert(k.clone(), v.clone());
            }
            let opts = DumpOptions { ensure_ascii: true, ..Default::default() };
            Some(("structural_tag", Value::String(dumps_with(&Value::Object(dumped), &opts))))
        }
        _ => None,
    }
}

/// A `LegacyStructuralTag` as dumped: `begin`, `schema`, `end`, then extras.
fn legacy_structure(item: &Value) -> Value {
    let Some(o) = item.as_object() else { return item.clone() };
    let mut out = Map::new();
    for key in ["begin", "schema", "end"] {
        out.insert(key.into(), o.get(key).cloned().unwrap_or(Value::Null));
    }
    for (k, v) in o.iter().filter(|(k, _)| !["begin", "schema", "end"].contains(&k.as_str())) {
        out.insert(k.clone(), v.clone());
    }
    Value::Object(out)
}

/// What `_apply_structural_tag` makes of the request's structured outputs.
pub fn request_format(params: Option<&Value>) -> RequestFormat {
    match params {
        None => RequestFormat::Absent,
        Some(p) => match to_format(p) {
            Some(f) => RequestFormat::Format(f),
            None => RequestFormat::Unsupported,
        },
    }
}

fn set<'a>(p: &'a Value, key: &str) -> Option<&'a Value> {
    p.get(key).filter(|v| !v.is_null())
}

/// Python truthiness of an optional field.
fn truthy(p: &Value, key: &str) -> bool {
    set(p, key).is_some_and(crate::pycompat::truthy)
}

/// `structured_outputs_to_format`, for a constraint xgrammar takes on its
/// own; `None` when `_xgrammar_supports` says no.
fn to_format(p: &Value) -> Option<Value> {
    // `replace()` re-runs `__post_init__`: exactly one constraint.
    if CONSTRAINTS.iter().filter(|k| set(p, k).is_some()).count() != 1 {
        return None;
    }
    // `validate_xgrammar_grammar`'s order: regex, choice, json, json_object,
    // grammar, structural_tag; anything else is refused.
    if let Some(regex) = set(p, "regex") {
        let pattern = regex.as_str()?;
        return regex_supported(pattern).then(|| json!({"type": "regex", "pattern": pattern}));
    }
    if truthy(p, "choice") {
        let choices = set(p, "choice")?.as_array()?;
        let consts: Option<Vec<Value>> =
            choices.iter().map(|c| c.as_str().map(crate::structured::format::const_string)).collect();
        return Some(json!({"type": "or", "elements": consts?}));
    }
    if let Some(schema) = set(p, "json") {
        let schema = match schema {
            Value::String(text) => serde_json::from_str(text).ok()?,
            other => other.clone(),
        };
        if exceeds_nesting(&schema, MAX_JSON_NESTING) || !(schema.is_object() || schema.is_boolean()) {
            return None;
        }
        if schema.as_object().is_some_and(unsupported_json_features) {
            return None;
        }
        return Some(crate::structured::format::content(schema, "json"));
    }
    if truthy(p, "json_object") {
        return Some(crate::structured::format::content(json!({"type": "object"}), "json"));
    }
    if truthy(p, "grammar") {
        let grammar = set(p, "grammar")?.as_str()?;
        // vLLM converts Lark to EBNF with xgrammar's converter; derender
        // hands the Lark text on as such (same language, other spelling).
        let syntax = if grammar_is_likely_lark(grammar) { "lark" } else { "ebnf" };
        return Some(json!({"type": "grammar", "grammar": grammar, "syntax": syntax}));
    }
    if truthy(p, "structural_tag") {
        let text = set(p, "structural_tag")?.as_str()?;
        let tag: Value = serde_json::from_str(text).ok()?;
        if exceeds_nesting(&tag, MAX_JSON_NESTING + STRUCTURAL_TAG_EXTRA_NESTING) {
            return None;
        }
        return super::tag_check::format_of(&tag);
    }
    None
}

/// `_exceeds_json_nesting`: objects and arrays nested deeper than `limit`.
pub(crate) fn exceeds_nesting(v: &Value, limit: usize) -> bool {
    let mut level: Vec<&Value> = vec![v];
    for _ in 0..limit {
        level = level
            .into_iter()
            .flat_map(|node| -> Box<dyn Iterator<Item = &Value>> {
                match node {
                    Value::Object(o) => Box::new(o.values()),
                    Value::Array(a) => Box::new(a.iter()),
                    _ => Box::new(std::iter::empty()),
                }
            })
            .filter(|c| c.is_object() || c.is_array())
            .collect();
        if level.is_empty() {
            return false;
        }
    }
    true
}

/// What xgrammar's regex converter refuses that derender can see without
/// it: NUL, lookaround and backreferences. (Other malformed patterns pass
/// here and fail in the engine.)
fn regex_supported(pattern: &str) -> bool {
    let lookaround = ["(?=", "(?!", "(?<=", "(?<!"].iter().any(|l| pattern.contains(l));
    let bytes = pattern.as_bytes();
    let backref = bytes.windows(2).enumerate().any(|(i, w)| {
        w[0] == b'\\'
            && w[1].is_ascii_digit()
            && w[1] != b'0'
            && bytes[..i].iter().rev().take_while(|b| **b == b'\\').count() % 2 == 0
    });
    !pattern.contains('\0') && !lookaround && !backref
}

/// `grammar_is_likely_lark`: no line (comments stripped) defines a rule with `::=`.
fn grammar_is_likely_lark(grammar: &str) -> bool {
    !grammar.split('\n').any(|line| {
        let cut = [line.find('#'), line.find("//")].into_iter().flatten().min().unwrap_or(line.len());
        line[..cut].contains("::=")
    })
}

/// The string formats xgrammar writes as regexes (a JSON schema's `format`).
pub(crate) const STRING_FORMATS: [&str; 14] = [
    "email",
    "date",
    "time",
    "date-time",
    "duration",
    "ipv4",
    "ipv6",
    "hostname",
    "uuid",
    "uri",
    "uri-reference",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
];

/// `has_xgrammar_unsupported_json_features`, over every nested object.
fn unsupported_json_features(o: &Map<String, Value>) -> bool {
    let types: Vec<&str> = match o.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let is = |t: &str| types.contains(&t);
    let bounded = |s: &Map<String, Value>| {
        (s.contains_key("pattern") || s.contains_key("format"))
            && (s.contains_key("minLength") || s.contains_key("maxLength"))
    };
    if (is("integer") || is("number")) && o.contains_key("multipleOf") {
        return true;
    }
    if is("array") && ["uniqueItems", "contains", "minContains", "maxContains"].iter().any(|k| o.contains_key(*k)) {
        return true;
    }
    if is("string") {
        let format_ok = o.get("format").is_none_or(|f| f.as_str().is_some_and(|f| STRING_FORMATS.contains(&f)));
        if !format_ok || bounded(o) {
            return true;
        }
    }
    if is("object") && o.contains_key("propertyNames") {
        let names_bounded = o.get("propertyNames").and_then(Value::as_object).is_some_and(bounded);
        let unevaluated_closed = o.get("unevaluatedProperties").is_some_and(|v| *v != Value::Bool(true));
        if names_bounded || o.contains_key("patternProperties") || o.contains_key("properties") || unevaluated_closed {
            return true;
        }
    }
    if is("object") {
        if let Some(pp) = o.get("patternProperties").and_then(Value::as_object) {
            if o.contains_key("properties") || pp.len() > 1 {
                return true;
            }
        }
    }
    if o.get("allOf").and_then(Value::as_array).is_some_and(|a| a.len() >= 2) {
        return true;
    }
    o.values().any(|v| match v {
        Value::Object(child) => unsupported_json_features(child),
        Value::Array(items) => items.iter().filter_map(Value::as_object).any(unsupported_json_features),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format_of(so: Value) -> RequestFormat {
        let mut o = Map::new();
        o.insert("structured_outputs".into(), so);
        request_format(request_params(&o).as_ref())
    }

    #[test]
    fn lark_grammars_go_into_the_or_as_lark() {
        let RequestFormat::Format(f) = format_of(json!({"grammar": "start: \"a\" | \"b\""})) else { panic!() };
        assert_eq!(f, json!({"type": "grammar", "grammar": "start: \"a\" | \"b\"", "syntax": "lark"}));
        // A commented-out `::=` does not make a grammar EBNF.
        assert!(grammar_is_likely_lark("start: \"a\" // x ::= y"));
        assert!(!grammar_is_likely_lark("# lark?\nroot ::= \"a\""));
    }

    #[test]
    fn what_xgrammar_refuses_leaves_the_format_unsupported() {
        for so in [
            json!({"regex": "a\u{0}"}),
            json!({"regex": "(?!x)y"}),
            json!({"regex": "(a)\\1"}),
            json!({"json": 5}),
            json!({"json": "{not json"}),
            json!({"json": {"type": "string", "format": "color"}}),
            json!({"json": {"allOf": [{}, {}]}}),
            json!({"choice": []}),
            json!({"regex": "a", "json_object": true}),
            json!({"structural_tag": "{\"format\": {\"type\": \"tag\", \"begin\": 1}}"}),
        ] {
            assert_eq!(format_of(so.clone()), RequestFormat::Unsupported, "{so}");
        }
        // An escaped backslash before a digit is no backreference.
        assert!(regex_supported("a\\\\1"));
    }

    #[test]
    fn request_params_are_the_whole_params_object() {
        let mut o = Map::new();
        o.insert("response_format".into(), json!({"type": "json_object"}));
        o.insert("structured_outputs".into(), json!({"disable_any_whitespace": true, "_backend": "x"}));
        let p = request_params(&o).unwrap();
        assert_eq!(p["json_object"], true);
        assert_eq!(p["disable_any_whitespace"], true);
        // Set by the engine only.
        assert_eq!(p["_backend"], Value::Null);
        assert_eq!(p.as_object().unwrap().len(), 11);
        assert_eq!(request_params(&Map::new()), None);
    }

    #[test]
    fn structural_tag_formats_are_dumped_in_full() {
        let text = r#"{"type": "structural_tag", "format": {"type": "tags_with_separator", "separator": ",",
            "tags": [{"begin": {"token": 7}, "content": {"type": "any_text"}, "end": ["a", "b"], "x": 1}]}}"#;
        let RequestFormat::Format(f) = format_of(json!({"structural_tag": text})) else { panic!() };
        let dumped = crate::pycompat::json::dumps(&f);
        assert_eq!(
            dumped,
            r#"{"type": "tags_with_separator", "tags": [{"type": "tag", "begin": {"type": "token", "token": 7}, "content": {"type": "any_text", "excludes": [], "max_tokens": null, "max_chars": null}, "end": ["a", "b"]}], "separator": ",", "at_least_one": false, "stop_after_first": false}"#
        );
    }
}
