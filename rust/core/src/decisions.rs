//! `POST /v1/decisions` and `POST /v1/systemone`. vLLM's render server
//! mounts both routers but never gives them a handler (they need an engine),
//! so a body that validates is answered 501; one that does not gets the 400
//! pydantic gives for `DecisionRequest` (openai/decisions/protocol.py) or
//! `StructuredDecisionRequest` (generate/structured_decisions/protocol.py).

use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::pycompat::pydantic::{read, Errors, Loc};
use crate::wire::request::check_cache_salt;

/// `ShortText` and `InputText`: strict strings with these lengths at most.
const SHORT: usize = 1_048_576;
const INPUT: usize = 10_485_760;
const QUESTION_TAGS: [&str; 3] = ["predicate", "choice", "score"];

/// `/v1/decisions`: the 400 for a body `DecisionRequest` refuses, else 501.
pub fn decisions(body: Option<&Value>) -> ApiError {
    let o = match request_object(body) {
        Ok(o) => o,
        Err(e) => return e,
    };
    let root = Loc::root("body");
    let mut errs = Errors::default();
    let field = |k: &str| o.get(k);
    match field("model") {
        Some(v) => strict_str(v, SHORT, &root.field("model"), &mut errs),
        None => errs.missing(&root.field("model"), &Value::Object(o.clone())),
    }
    match field("input") {
        Some(v) => decision_input(v, &root.field("input"), &mut errs),
        None => errs.missing(&root.field("input"), &Value::Object(o.clone())),
    }
    match field("questions") {
        Some(v) => questions(v, &root.field("questions"), &mut errs),
        None => errs.missing(&root.field("questions"), &Value::Object(o.clone())),
    }
    if let Some(v) = read::opt(o, "safety_identifier") {
        strict_str(v, 128, &root.field("safety_identifier"), &mut errs);
    }
    if let Some(v) = o.get("joint") {
        strict_bool(v, &root.field("joint"), &mut errs);
    }
    forbid_extra(o, &["model", "input", "questions", "safety_identifier", "joint", "cache_salt"], &root, &mut errs);
    answer(errs, "The model does not support the Decisions API")
}

/// `/v1/systemone`: the 400 for a body `StructuredDecisionRequest` refuses, else 501.
pub fn systemone(body: Option<&Value>) -> ApiError {
    let o = match request_object(body) {
        Ok(o) => o,
        Err(e) => return e,
    };
    let root = Loc::root("body");
    let mut errs = Errors::default();
    let whole = Value::Object(o.clone());
    if let Some(v) = read::opt(o, "model") {
        read::string(v, &root.field("model"), &mut errs);
    }
    if !o.contains_key("state") {
        errs.missing(&root.field("state"), &whole);
    }
    match o.get("questions") {
        Some(v) => question_specs(v, &root.field("questions"), &mut errs),
        None => errs.missing(&root.field("questions"), &whole),
    }
    if let Some(v) = read::opt(o, "instructions") {
        read::string(v, &root.field("instructions"), &mut errs);
    }
    for key in ["images", "audio", "videos"] {
        if let Some(v) = read::opt(o, key) {
            let loc = root.field(key);
            if let Some(items) = read::list(v, &loc, &mut errs) {
                for (i, item) in items.iter().enumerate() {
                    read::string(item, &loc.index(i), &mut errs);
                }
            }
        }
    }
    if let Some(v) = read::opt(o, "chat_template_kwargs") {
        read::dict(v, &root.field("chat_template_kwargs"), &mut errs);
    }
    if let Some(v) = o.get("joint") {
        strict_bool(v, &root.field("joint"), &mut errs);
    }
    if let Some(v) = o.get("priority") {
        priority(v, &root.field("priority"), &mut errs);
    }
    if let Some(v) = o.get("request_id") {
        read::string(v, &root.field("request_id"), &mut errs);
    }
    let known = [
        "model",
        "state",
        "questions",
        "instructions",
        "images",
        "audio",
        "videos",
        "chat_template_kwargs",
        "joint",
        "cache_salt",
        "priority",
        "request_id",
    ];
    forbid_extra(o, &known, &root, &mut errs);
    answer(errs, "The model does not support the structured decision API")
}

fn answer(errs: Errors, not_implemented: &str) -> ApiError {
    if errs.is_empty() {
        return ApiError::not_implemented(not_implemented);
    }
    errs.into_api_error()
}

/// The body as an object (`null` is a missing body, as FastAPI reads it),
/// after both models' `cache_salt` before-validator.
fn request_object(body: Option<&Value>) -> Result<&Map<String, Value>, ApiError> {
    let o = crate::render::body_object(body.filter(|b| !b.is_null()))?;
    check_cache_salt(o)?;
    Ok(o)
}

/// `DecisionRequest.input`: `InputText | list[DecisionInputMessage]`.
fn decision_input(v: &Value, loc: &Loc, errs: &mut Errors) {
    text_or_list(v, loc, errs, |items, errs| {
        too_long(v, 131_072, loc, errs);
        for (i, item) in items.iter().enumerate() {
            input_message(item, &loc.index(i), errs);
        }
    });
}

/// pydantic's smart union of `InputText` and a list: valid if either branch
/// is, else both branches' errors (the string's under `constrained-str`).
fn text_or_list(v: &Value, loc: &Loc, errs: &mut Errors, items: impl FnOnce(&[Value], &mut Errors)) {
    let mut as_text = Errors::default();
    strict_str(v, INPUT, &loc.field("constrained-str"), &mut as_text);
    if as_text.is_empty() {
        return;
    }
    let mut as_list = Errors::default();
    if let Some(list) = read::list(v, loc, &mut as_list) {
        items(list, &mut as_list);
    }
    if as_list.is_empty() {
        return;
    }
    errs.list.extend(as_text.list);
    errs.list.extend(as_list.list);
}

/// `DecisionInputMessage`, after its `reject_images` before-validator.
fn input_message(v: &Value, loc: &Loc, errs: &mut Errors) {
    let Some(o) = read::model(v, "DecisionInputMessage", loc, errs) else { return };
    let parts = o.get("content").and_then(Value::as_array);
    if parts.is_some_and(|p| p.iter().any(|part| part.get("type").and_then(Value::as_str) == Some("input_image"))) {
        return errs.value_error(loc, "Decisions supports text input only; images are not supported", Some(v));
    }
    match o.get("role") {
        Some(r) => drop(read::literal_str(r, &["user"], &loc.field("role"), errs)),
        None => errs.missing(&loc.field("role"), v),
    }
    match o.get("content") {
        Some(c) => {
            let at = loc.field("content");
            text_or_list(c, &at, errs, |items, errs| {
                too_long(c, 16_384, &at, errs);
                for (i, item) in items.iter().enumerate() {
                    input_text(item, &at.index(i), errs);
                }
            });
        }
        None => errs.missing(&loc.field("content"), v),
    }
    if let Some(t) = o.get("type") {
        read::literal_str(t, &["message"], &loc.field("type"), errs);
    }
    forbid_extra(o, &["role", "content", "type"], loc, errs);
}

/// `DecisionInputText`.
fn input_text(v: &Value, loc: &Loc, errs: &mut Errors) {
    let Some(o) = read::model(v, "DecisionInputText", loc, errs) else { return };
    match o.get("type") {
        Some(t) => drop(read::literal_str(t, &["input_text"], &loc.field("type"), errs)),
        None => errs.missing(&loc.field("type"), v),
    }
    match o.get("text") {
        Some(t) => strict_str(t, INPUT, &loc.field("text"), errs),
        None => errs.missing(&loc.field("text"), v),
    }
    forbid_extra(o, &["type", "text"], loc, errs);
}

/// `questions`: 1 to 200 questions, a union tagged by `type`.
fn questions(v: &Value, loc: &Loc, errs: &mut Errors) {
    let Some(items) = read::list(v, loc, errs) else { return };
    if items.is_empty() {
        return too_short(v, 1, loc, errs);
    }
    too_long(v, 200, loc, errs);
    for (i, item) in items.iter().enumerate() {
        question(item, &loc.index(i), errs);
    }
}

fn question(v: &Value, loc: &Loc, errs: &mut Errors) {
    let Some(o) = v.as_object() else {
        return errs.push(
            "model_attributes_type",
            loc,
            "Input should be a valid dictionary or object to extract fields from",
            Some(v),
            None,
        );
    };
    let discriminator = "{'discriminator': \"'type'\"".to_string();
    let tag = match o.get("type") {
        None => {
            let msg = "Unable to extract tag using discriminator 'type'";
            return errs.push("union_tag_not_found", loc, msg, Some(v), Some(discriminator + "}"));
        }
        Some(t) => t.as_str().map_or_else(|| t.to_string(), str::to_string),
    };
    let Some(&tag) = QUESTION_TAGS.iter().find(|k| **k == tag) else {
        let expected = "'predicate', 'choice', 'score'";
        let msg = format!(
            "Input tag {} found using 'type' does not match any of the expected tags: {expected}",
            crate::pycompat::repr::repr_str(&tag)
        );
        let ctx = format!(
            "{discriminator}, 'tag': {}, 'expected_tags': {}}}",
            crate::pycompat::repr::repr_str(&tag),
            crate::pycompat::repr::repr_str(expected)
        );
        return errs.push("union_tag_invalid", loc, msg, Some(v), Some(ctx));
    };
    let at = loc.field(tag);
    let before = errs.list.len();
    match o.get("instructions") {
        Some(i) => strict_str(i, SHORT, &at.field("instructions"), errs),
        None => errs.missing(&at.field("instructions"), v),
    }
    if let Some(n) = read::opt(o, "name") {
        strict_str(n, SHORT, &at.field("name"), errs);
    }
    let mut known = vec!["instructions", "name", "type"];
    match tag {
        "choice" => {
            known.push("choices");
            match o.get("choices") {
                Some(c) => choices(c, &at.field("choices"), errs),
                None => errs.missing(&at.field("choices"), v),
            }
        }
        "score" => {
            known.push("levels");
            match o.get("levels") {
                Some(l) => levels(l, &at.field("levels"), errs),
                None => errs.missing(&at.field("levels"), v),
            }
        }
        _ => {}
    }
    forbid_extra(o, &known, &at, errs);
    if errs.list.len() > before {
        return;
    }
    // The after-validators, on a question that validated.
    if o.get("name").is_some_and(Value::is_null) {
        return errs.value_error(&at, "name must be a string when provided", Some(v));
    }
    if tag == "choice" && !distinct_values(o.get("choices")) {
        errs.value_error(&at, "choice values must be distinct", Some(v));
    }
}

/// `ChoiceQuestion.choices`: 2 to 255 `ChoiceOption`s.
fn choices(v: &Value, loc: &Loc, errs: &mut Errors) {
    let Some(items) = read::list(v, loc, errs) else { return };
    if items.len() < 2 {
        return too_short(v, 2, loc, errs);
    }
    too_long(v, 255, loc, errs);
    for (i, item) in items.iter().enumerate() {
        let at = loc.index(i);
        let Some(o) = read::model(item, "ChoiceOption", &at, errs) else { continue };
        match o.get("value") {
            Some(Value::String(_)) => strict_str(&o["value"], usize::MAX, &at.field("value"), errs),
            Some(Value::Bool(_)) => {}
            Some(other) => {
                let value = at.field("value");
                errs.push("string_type", &value.field("str"), "Input should be a valid string", Some(other), None);
                errs.push("bool_type", &value.field("bool"), "Input should be a valid boolean", Some(other), None);
            }
            None => errs.missing(&at.field("value"), item),
        }
        if let Some(d) = o.get("description") {
            strict_str(d, SHORT, &at.field("description"), errs);
        }
        forbid_extra(o, &["value", "description"], &at, errs);
    }
}

/// `ScoreQuestion.levels`: 2 to 10 `ScoreLevel`s.
fn levels(v: &Value, loc: &Loc, errs: &mut Errors) {
    let Some(items) = read::list(v, loc, errs) else { return };
    if items.len() < 2 {
        return too_short(v, 2, loc, errs);
    }
    if items.len() > 10 {
        return too_long(v, 10, loc, errs);
    }
    for (i, item) in items.iter().enumerate() {
        let at = loc.index(i);
        let Some(o) = read::model(item, "ScoreLevel", &at, errs) else { continue };
        match o.get("label") {
            Some(l) => strict_str(l, SHORT, &at.field("label"), errs),
            None => errs.missing(&at.field("label"), item),
        }
        if let Some(d) = o.get("description") {
            strict_str(d, SHORT, &at.field("description"), errs);
        }
        forbid_extra(o, &["label", "description"], &at, errs);
    }
}

/// Python's set of `(type(value), value)`: `"a"` and `true` differ, two `"a"`s do not.
fn distinct_values(choices: Option<&Value>) -> bool {
    let values: Vec<&Value> =
        choices.and_then(Value::as_array).into_iter().flatten().filter_map(|c| c.get("value")).collect();
    values.iter().enumerate().all(|(i, a)| values[..i].iter().all(|b| a != b))
}

/// `StructuredDecisionRequest.questions`: `dict[str, QuestionSpec]`
/// (`QuestionSpec` allows extra fields; only `type` is required).
fn question_specs(v: &Value, loc: &Loc, errs: &mut Errors) {
    let Some(specs) = read::dict(v, loc, errs) else { return };
    for (key, spec) in specs {
        let at = loc.key(key);
        let Some(o) = read::model(spec, "QuestionSpec", &at, errs) else { continue };
        match o.get("type") {
            Some(t) => drop(read::string(t, &at.field("type"), errs)),
            None => errs.missing(&at.field("type"), spec),
        }
    }
}

/// `priority: int = Field(ge=-(2**63), le=2**63 - 1)`.
fn priority(v: &Value, loc: &Loc, errs: &mut Errors) {
    if let Value::Number(n) = v {
        if n.as_i64().is_none() && n.as_u64().is_some() {
            let le = i64::MAX;
            let msg = format!("Input should be less than or equal to {le}");
            return errs.push("less_than_equal", loc, msg, Some(v), Some(format!("{{'le': {le}}}")));
        }
        if n.as_f64().is_some_and(|f| f.fract() == 0.0 && f < i64::MIN as f64) {
            let ge = i64::MIN;
            let msg = format!("Input should be greater than or equal to {ge}");
            return errs.push("greater_than_equal", loc, msg, Some(v), Some(format!("{{'ge': {ge}}}")));
        }
    }
    read::int(v, loc, errs);
}

/// `StrictStr` with `max_length`.
fn strict_str(v: &Value, max: usize, loc: &Loc, errs: &mut Errors) {
    let Some(s) = read::string(v, loc, errs) else { return };
    if s.chars().count() > max {
        let msg = format!("String should have at most {max} characters");
        errs.push("string_too_long", loc, msg, Some(v), Some(format!("{{'max_length': {max}}}")));
    }
}

fn strict_bool(v: &Value, loc: &Loc, errs: &mut Errors) {
    if !v.is_boolean() {
        errs.push("bool_type", loc, "Input should be a valid boolean", Some(v), None);
    }
}

/// `min_length` on a list `v` (one with fewer items).
fn too_short(v: &Value, min: usize, loc: &Loc, errs: &mut Errors) {
    let n = v.as_array().map_or(0, Vec::len);
    let msg = format!("List should have at least {min} item{} after validation, not {n}", plural(min));
    let ctx = format!("{{'field_type': 'List', 'min_length': {min}, 'actual_length': {n}}}");
    errs.push("too_short", loc, msg, Some(v), Some(ctx));
}

/// `max_length` on a list `v`.
fn too_long(v: &Value, max: usize, loc: &Loc, errs: &mut Errors) {
    let n = v.as_array().map_or(0, Vec::len);
    if n <= max {
        return;
    }
    let msg = format!("List should have at most {max} item{} after validation, not {n}", plural(max));
    let ctx = format!("{{'field_type': 'List', 'max_length': {max}, 'actual_length': {n}}}");
    errs.push("too_long", loc, msg, Some(v), Some(ctx));
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `extra="forbid"`: each unknown key, after the fields, in body order.
fn forbid_extra(o: &Map<String, Value>, known: &[&str], loc: &Loc, errs: &mut Errors) {
    for (key, value) in o {
        if !known.contains(&key.as_str()) {
            errs.push("extra_forbidden", &loc.key(key), "Extra inputs are not permitted", Some(value), None);
        }
    }
}
