//! The request models' checks of `structured_outputs` and `response_format`:
//! vLLM 0.33's `check_structured_outputs_count` and `validate_response_format`
//! (`mode="before"` validators), then `StructuredOutputsParams.__post_init__`
//! (exactly one constraint). vLLM raises these as `VLLMValidationError`,
//! which pydantic does not catch, so each is a plain 400 that ends
//! validation; the field-type errors inside `structured_outputs` stay
//! pydantic's and are reported with the other fields.

use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::pycompat::pydantic::{read, Errors, Loc};
use crate::pycompat::repr::repr_value;
use crate::structured::request::{
    exceeds_nesting, CONSTRAINTS, MAX_JSON_NESTING, PARAM_FIELDS, STRUCTURAL_TAG_EXTRA_NESTING,
};
use crate::structured::tag_check::format_of;

fn refused(message: String, parameter: Option<&str>) -> ApiError {
    ApiError::validator(&message, parameter)
}

fn set<'a>(o: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    o.get(key).filter(|v| !v.is_null())
}

/// `check_structured_outputs_count` (`chat`: the chat request model, else
/// completions): at most one of json / regex / choice;
/// on chat, none of them beside a named tool choice; a given structural tag
/// must be one xgrammar accepts.
pub(crate) fn check_count(req: &Map<String, Value>, chat: bool) -> Result<(), ApiError> {
    // A non-object is left to the field's own type check.
    let Some(so) = set(req, "structured_outputs").and_then(Value::as_object) else {
        return Ok(());
    };
    let count = ["json", "regex", "choice"].iter().filter(|k| set(so, k).is_some()).count();
    let parameter = (!chat).then_some("structured_outputs");
    if count > 1 {
        let message = "You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').";
        return Err(refused(message.into(), parameter));
    }
    if chat && count > 0 {
        // `data.get("tool_choice", "none") not in ("none", "auto", "required")`:
        // an explicit null counts as a choice too.
        let plain = match req.get("tool_choice") {
            None => true,
            Some(Value::String(s)) => matches!(s.as_str(), "none" | "auto" | "required"),
            Some(_) => false,
        };
        if !plain {
            return Err(refused(
                "You can only either use constraints for structured outputs or tools, not both.".into(),
                None,
            ));
        }
    }
    match set(so, "structural_tag") {
        Some(tag) => check_tag_payload(tag, "structured_outputs"),
        None => Ok(()),
    }
}

/// `validate_response_format`: a `json_schema` format needs its schema, a
/// `structural_tag` format must be one xgrammar accepts.
pub(crate) fn check_response_format(req: &Map<String, Value>) -> Result<(), ApiError> {
    let Some(rf) = set(req, "response_format").and_then(Value::as_object) else {
        return Ok(());
    };
    match rf.get("type").and_then(Value::as_str) {
        Some("json_schema") if set(rf, "json_schema").is_none() => Err(refused(
            "When response_format type is 'json_schema', the 'json_schema' field must be provided.".into(),
            Some("response_format"),
        )),
        Some("structural_tag") => {
            let invalid =
                || refused("Invalid response_format structural_tag specification.".into(), Some("response_format"));
            format_of(&Value::Object(rf.clone())).ok_or_else(invalid)?;
            check_nesting(&Value::Object(rf.clone()))
        }
        _ => Ok(()),
    }
}

/// `validate_structural_tag_payload`: a non-empty JSON text (nested no
/// deeper than the cap) describing a tag xgrammar can compile.
fn check_tag_payload(payload: &Value, parameter: &str) -> Result<(), ApiError> {
    let invalid = || refused(format!("Invalid {parameter} structural_tag specification."), Some(parameter));
    let text = match payload {
        Value::String(s) if s.is_empty() => return Err(invalid()),
        Value::String(s) => s,
        // `validate_xgrammar_grammar` skips a falsy tag, and `json.loads`
        // refuses anything that is not text.
        other if !crate::pycompat::truthy(other) => return Ok(()),
        _ => return Err(invalid()),
    };
    let tag: Value = match serde_json::from_str(text) {
        Ok(tag) => tag,
        // serde_json stops at 128 levels, deeper than the cap.
        Err(e) if e.to_string().contains("recursion limit") => return Err(nested_too_deeply()),
        Err(_) => return Err(invalid()),
    };
    check_nesting(&tag)?;
    format_of(&tag).map(|_| ()).ok_or_else(invalid)
}

fn check_nesting(tag: &Value) -> Result<(), ApiError> {
    if exceeds_nesting(tag, MAX_JSON_NESTING + STRUCTURAL_TAG_EXTRA_NESTING) {
        return Err(nested_too_deeply());
    }
    Ok(())
}

fn nested_too_deeply() -> ApiError {
    ApiError::bad_request("The JSON schema is nested too deeply: objects and arrays may nest at most 64 levels")
}

/// The field types of `StructuredOutputsParams`, as pydantic reports them.
pub(crate) fn check_field_types(req: &Map<String, Value>, loc: &Loc, errs: &mut Errors) {
    let Some(v) = set(req, "structured_outputs") else { return };
    let l = loc.field("structured_outputs");
    let Some(so) = v.as_object() else {
        errs.push(
            "dataclass_type",
            &l,
            "Input should be a dictionary or an instance of StructuredOutputsParams",
            Some(v),
            Some("{'class_name': 'StructuredOutputsParams'}".into()),
        );
        return;
    };
    // In the dataclass's field order, as pydantic reports them.
    for (key, _) in PARAM_FIELDS.iter().filter(|(k, _)| !k.starts_with('_')) {
        let Some(x) = so.get(*key) else { continue };
        let fl = l.field(key);
        match *key {
            // `bool` (not optional) fields refuse null too.
            "disable_any_whitespace" | "disable_additional_properties" => {
                read::boolean(x, &fl, errs);
            }
            _ if x.is_null() => {}
            "json" if !x.is_string() && !x.is_object() => {
                // `str | dict`: one error per union member, both at the field.
                errs.push("string_type", &fl, "Input should be a valid string", Some(x), None);
                errs.push("dict_type", &fl, "Input should be a valid dictionary", Some(x), None);
            }
            "choice" => {
                if let Some(items) = read::list(x, &fl, errs) {
                    for (i, item) in items.iter().enumerate() {
                        read::string(item, &fl.index(i), errs);
                    }
                }
            }
            "json_object" => {
                read::boolean(x, &fl, errs);
            }
            "regex" | "grammar" | "whitespace_pattern" | "structural_tag" => {
                read::string(x, &fl, errs);
            }
            _ => {}
        }
    }
}

/// `StructuredOutputsParams.__post_init__`: exactly one constraint. Runs
/// once the fields are well typed.
pub(crate) fn check_one_constraint(req: &Map<String, Value>) -> Result<(), ApiError> {
    match set(req, "structured_outputs").and_then(Value::as_object) {
        Some(so) => one_constraint(so),
        None => Ok(()),
    }
}

/// The same rule on a params object, e.g. after `response_format` was laid
/// over the request's `structured_outputs` (`dataclasses.replace`).
pub(crate) fn one_constraint(so: &Map<String, Value>) -> Result<(), ApiError> {
    let count = CONSTRAINTS.iter().filter(|k| set(so, k).is_some()).count();
    if count == 1 {
        return Ok(());
    }
    // The dataclass's `__dict__`: every field, the engine-set ones at their defaults.
    let fields: Vec<String> = PARAM_FIELDS
        .iter()
        .map(|(key, default)| {
            let value = if key.starts_with('_') { default } else { so.get(*key).unwrap_or(default) };
            format!("'{key}': {}", repr_value(value))
        })
        .collect();
    let shown = format!("{{{}}}", fields.join(", "));
    let message = if count > 1 {
        format!("You can only use one kind of structured outputs constraint but multiple are specified: {shown}")
    } else {
        format!("You must use one kind of structured outputs constraint but none are specified: {shown}")
    };
    Err(ApiError::bad_request(message))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn message(r: Result<(), ApiError>) -> String {
        r.err().map(|e| e.message).unwrap_or_default()
    }

    #[test]
    fn two_of_json_regex_choice_are_refused_before_anything_else() {
        let req = obj(json!({"structured_outputs": {"json": {}, "regex": "a"}}));
        assert!(message(check_count(&req, true)).contains("one kind of constraints"));
        let completion = check_count(&req, false).unwrap_err();
        assert!(completion.message.contains("(parameter=structured_outputs)"));
        // json + grammar passes the before-check; `__post_init__` refuses it.
        let req = obj(json!({"structured_outputs": {"json": {}, "grammar": "root ::= \"a\""}}));
        assert!(check_count(&req, true).is_ok());
        assert!(message(check_one_constraint(&req)).contains("multiple are specified: {'json': {}, 'regex': None"));
    }

    #[test]
    fn constraints_beside_a_named_or_null_tool_choice_are_refused() {
        for choice in [json!({"type": "function", "function": {"name": "f"}}), Value::Null] {
            let req = obj(json!({"structured_outputs": {"regex": "a"}, "tool_choice": choice}));
            assert!(message(check_count(&req, true)).contains("not both"), "{choice}");
            assert!(check_count(&req, false).is_ok());
        }
        for choice in ["none", "auto", "required"] {
            let req = obj(json!({"structured_outputs": {"regex": "a"}, "tool_choice": choice}));
            assert!(check_count(&req, true).is_ok(), "{choice}");
        }
    }

    #[test]
    fn no_constraint_is_refused_with_the_params_as_python_prints_them() {
        let req = obj(json!({"structured_outputs": {"disable_any_whitespace": true}}));
        assert_eq!(
            message(check_one_constraint(&req)),
            "You must use one kind of structured outputs constraint but none are specified: {'json': None, 'regex': None, 'choice': None, 'grammar': None, 'json_object': None, 'disable_any_whitespace': True, 'disable_additional_properties': False, 'whitespace_pattern': None, 'structural_tag': None, '_backend': None, '_backend_was_auto': False}"
        );
        // `json_object: false` is a constraint too (only None is unset).
        let req = obj(json!({"structured_outputs": {"regex": "a", "json_object": false}}));
        assert!(check_one_constraint(&req).is_err());
        let req = obj(json!({"structured_outputs": {"choice": ["a", "b"], "_backend": "x"}}));
        assert!(check_one_constraint(&req).is_ok());
    }

    #[test]
    fn structural_tags_must_parse_as_tags() {
        let good = json!({"type": "structural_tag", "format": {"type": "const_string", "value": "x"}}).to_string();
        let legacy =
            json!({"structures": [{"begin": "<a>", "schema": {}, "end": "</a>"}], "triggers": ["<a"]}).to_string();
        for tag in [good, legacy] {
            let req = obj(json!({"structured_outputs": {"structural_tag": tag}}));
            assert!(check_count(&req, true).is_ok(), "{tag}");
        }
        for tag in
            [json!(""), json!("{bad"), json!("[1]"), json!({"format": {}}), json!("{\"format\": {\"type\": \"nope\"}}")]
        {
            let req = obj(json!({"structured_outputs": {"structural_tag": tag}}));
            assert_eq!(
                message(check_count(&req, true)),
                "Invalid structured_outputs structural_tag specification. (parameter=structured_outputs)",
                "{tag}"
            );
        }
        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        let req = obj(json!({"structured_outputs": {"structural_tag": deep}}));
        assert!(message(check_count(&req, true)).contains("nested too deeply"));
    }

    #[test]
    fn response_formats_are_checked_before_the_fields() {
        let req = obj(json!({"response_format": {"type": "json_schema"}}));
        assert!(message(check_response_format(&req)).contains("'json_schema' field must be provided"));
        let req = obj(json!({"response_format": {"type": "structural_tag", "format": {"type": "nope"}}}));
        assert!(message(check_response_format(&req)).contains("Invalid response_format structural_tag"));
        let req = obj(
            json!({"response_format": {"type": "structural_tag", "format": {"type": "const_string", "value": "x"}}}),
        );
        assert!(check_response_format(&req).is_ok());
        let req = obj(json!({"response_format": {"type": "json_object"}}));
        assert!(check_response_format(&req).is_ok());
    }

    #[test]
    fn field_types_are_pydantics_errors() {
        let mut errs = Errors::default();
        let req =
            obj(json!({"structured_outputs": {"json": 1, "choice": [1], "regex": 2, "disable_any_whitespace": 3}}));
        check_field_types(&req, &Loc::root("body"), &mut errs);
        let kinds: Vec<&str> = errs.list.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, ["string_type", "dict_type", "string_type", "string_type", "bool_parsing"]);
        let mut errs = Errors::default();
        check_field_types(&obj(json!({"structured_outputs": "x"})), &Loc::root("body"), &mut errs);
        assert_eq!(errs.list[0].kind, "dataclass_type");
    }
}
