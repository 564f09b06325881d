//! How vLLM 0.33.0 accepts or refuses each `messages[i]` of a chat request:
//! pydantic's smart union over `ChatCompletionMessageParam` (spec:
//! `tests/reference/message_union/SPEC.md`). A message that fits no member
//! gets every member's errors at request time; one that fits picks a
//! member, and if that member took `content` or `tool_calls` as a lazy
//! `Iterable`, their items are only checked later: tool calls by the
//! request's after-validator, content parts while the chat parser walks
//! them, each failing in its own format.

mod schema;
mod smart;

use std::borrow::Cow;

use serde_json::Value;

use crate::error::{sanitize, ApiError};
use crate::pycompat::pydantic::{summarize, Errors, FieldError, Loc};
use crate::pycompat::repr::repr_value;
use schema::{lazy_items, media_part, Ty, MESSAGE};
use smart::{RawError, Seg, Validator};

/// The before-validators that iterate `messages` or its `tool_calls`
/// (`check_system_message_content_type` runs first of all and walks
/// `messages`; `_normalize_messages_before` calls `list()` on a non-list
/// `tool_calls`): a value Python cannot iterate is a `TypeError`, answered
/// as a plain 400.
pub(crate) fn check_messages_iterable(req: &serde_json::Map<String, Value>) -> Result<(), ApiError> {
    match req.get("messages") {
        Some(v @ (Value::Null | Value::Bool(_) | Value::Number(_))) => Err(not_iterable(v)),
        _ => Ok(()),
    }
}

pub(crate) fn check_tool_calls_iterable(req: &serde_json::Map<String, Value>) -> Result<(), ApiError> {
    let Some(Value::Array(messages)) = req.get("messages") else { return Ok(()) };
    for m in messages {
        if let Some(v @ (Value::Bool(_) | Value::Number(_))) = m.get("tool_calls") {
            return Err(not_iterable(v));
        }
    }
    Ok(())
}

fn not_iterable(v: &Value) -> ApiError {
    ApiError::bad_request(format!("'{}' object is not iterable", crate::pycompat::type_name(v)))
}

/// Request-time field errors of `messages` (a list), in message order.
pub(crate) fn check_messages(messages: &[Value], loc: &Loc, errs: &mut Errors) {
    for (i, m) in messages.iter().enumerate() {
        let m = normalized(m);
        if let Err(errors) = winner(&m) {
            let prefix = format!("{}.{i}", loc.render());
            errs.list.extend(errors.iter().map(|e| request_error(&prefix, e)));
        }
    }
}

/// `_materialize_tool_calls_after`: once every field validated, the lazy
/// `tool_calls` of each message the Assistant member took are listed; the
/// first failing call ends validation (its location names the call's index,
/// not the message's).
pub(crate) fn check_tool_calls(messages: &[Value], loc: &Loc, errs: &mut Errors) {
    for m in messages {
        let m = normalized(m);
        let Some(call) = winner(&m).ok().and_then(|member| lazy_items(member, "tool_calls")) else { continue };
        let Some(calls) = m.get("tool_calls").filter(|c| !c.is_null()) else { continue };
        let calls = iterated(calls);
        if let Some(errors) = first_bad_item(&calls, call) {
            let prefix = loc.render();
            errs.list.extend(errors.iter().map(|e| request_error(&prefix, e)));
            return;
        }
    }
}

/// What the chat parser's walk does next.
pub(crate) enum Walk {
    Next,
    /// vLLM raised at this part in a way the caller reports itself.
    Stop,
}

/// vLLM's chat parser walks the messages in order and each message's
/// content parts in order. A lazily accepted `content` has its items
/// validated right there: the first one its member's part type refuses is a
/// 400 in pydantic's own `ValidatorIterator` format, and so is an
/// assistant's first refused tool call after its content. `visit` sees
/// every part that got that far (`Some(part)`) and the end of each
/// message's parts (`None`).
pub(crate) fn walk_parts(
    messages: &[Value],
    mut visit: impl FnMut(Option<&Value>) -> Result<Walk, ApiError>,
) -> Result<(), ApiError> {
    for m in messages {
        let m = normalized(m);
        let Ok(member) = winner(&m) else { continue };
        if let Ty::Model(_) = member {
            // openai_harmony's `Message` is an object, which the parser
            // then indexes like a dict.
            return Err(ApiError::bad_request("'Message' object is not subscriptable"));
        }
        let content = m.get("content").filter(|c| c.is_array() || c.is_object());
        let lazy = lazy_items(member, "content");
        if let Some(content) = content {
            for (i, part) in iterated(content).iter().enumerate() {
                if let Some(ty) = lazy {
                    let mut v = Validator::at(vec![Seg::Index(i)]);
                    if !v.check(ty, part) {
                        return Err(pydantic_error("ValidatorIterator", &v.errors));
                    }
                }
                if let Walk::Stop = visit(Some(part))? {
                    return Ok(());
                }
            }
        }
        if let Walk::Stop = visit(None)? {
            return Ok(());
        }
        // Then `list(tool_calls)`: where no after-validator listed them
        // (`/tokenize`), a bad call surfaces here.
        let calls = m.get("tool_calls").filter(|c| !c.is_null());
        if let (Some(call), Some(calls)) = (lazy_items(member, "tool_calls"), calls) {
            if let Some(errors) = first_bad_item(&iterated(calls), call) {
                return Err(pydantic_error("ValidatorIterator", &errors));
            }
        }
    }
    Ok(())
}

/// The re-validation vLLM's part parser gives a media part whose URL it
/// reads (`TypeAdapter(...).validate_python`), in pydantic's own format.
pub(crate) fn check_media_part(kind: &str, part: &Value) -> Result<(), ApiError> {
    let Some((name, ty)) = media_part(kind) else { return Ok(()) };
    let mut v = Validator::default();
    match v.check(ty, part) {
        true => Ok(()),
        false => Err(pydantic_error(name, &v.errors)),
    }
}

/// The message after `_normalize_messages_before`: a non-list `tool_calls`
/// becomes `list(tool_calls)` (a string's characters, a dict's keys) and
/// `reasoning_content` is renamed `reasoning` unless that is set.
fn normalized(m: &Value) -> Cow<'_, Value> {
    let Value::Object(o) = m else { return Cow::Borrowed(m) };
    let odd_calls = matches!(o.get("tool_calls"), Some(Value::String(_) | Value::Object(_)));
    if !odd_calls && !o.contains_key("reasoning_content") {
        return Cow::Borrowed(m);
    }
    let mut o = o.clone();
    if let Some(calls) = o.get("tool_calls").filter(|_| odd_calls) {
        let listed = Value::Array(iterated(calls).into_owned());
        o.insert("tool_calls".into(), listed);
    }
    if let Some(rc) = o.shift_remove("reasoning_content") {
        if !rc.is_null() && o.get("reasoning").is_none_or(Value::is_null) {
            o.insert("reasoning".into(), rc);
        }
    }
    Cow::Owned(Value::Object(o))
}

/// What Python's iteration yields: a list's items, a dict's keys, a
/// string's characters.
fn iterated(v: &Value) -> Cow<'_, [Value]> {
    match v {
        Value::Array(items) => Cow::Borrowed(items),
        Value::Object(o) => Cow::Owned(o.keys().map(|k| Value::String(k.clone())).collect()),
        Value::String(s) => Cow::Owned(s.chars().map(|c| Value::String(c.to_string())).collect()),
        _ => Cow::Borrowed(&[]),
    }
}

/// The member a message validates as, or every member's errors.
fn winner(m: &Value) -> Result<&'static Ty, Vec<RawError<'_>>> {
    let mut v = Validator::default();
    match v.pick(&MESSAGE, m) {
        Some(i) => Ok(MESSAGE[i]),
        None => Err(v.errors),
    }
}

/// The first item that `item` refuses, with its errors.
fn first_bad_item<'v>(items: &'v [Value], item: &Ty) -> Option<Vec<RawError<'v>>> {
    items.iter().enumerate().find_map(|(i, x)| {
        let mut v = Validator::at(vec![Seg::Index(i)]);
        (!v.check(item, x)).then_some(v.errors)
    })
}

/// vLLM's request-time entry: the location cleaned as
/// `clean_loc_for_param` cleans it, the input summarised.
fn request_error(prefix: &str, e: &RawError) -> FieldError {
    let mut loc = prefix.to_string();
    for seg in &e.loc {
        let text = seg.text();
        if !is_internal_segment(&text) {
            loc.push('.');
            loc.push_str(&text);
        }
    }
    FieldError { kind: e.kind, loc, msg: e.msg.clone(), input: summarize(Some(e.input)), ctx: e.ctx.clone() }
}

/// `_is_internal_loc_segment`: pydantic's wrapper and union-branch markers.
fn is_internal_segment(seg: &str) -> bool {
    const MARKERS: [&str; 29] = [
        "function-wrap",
        "function-after",
        "function-before",
        "function-plain",
        "json-or-python",
        "lax-or-strict",
        "chain",
        "default",
        "nullable",
        "tagged-union",
        "union",
        "call",
        "arguments",
        "is-instance",
        "is-subclass",
        "callable",
        "str",
        "int",
        "float",
        "bool",
        "bytes",
        "bytearray",
        "list",
        "tuple",
        "dict",
        "set",
        "frozenset",
        "complex",
        "none",
    ];
    seg.contains(['[', ']', '{', '}', '(', ')'])
        || MARKERS.contains(&seg.to_lowercase().as_str())
        || seg.eq_ignore_ascii_case("nonetype")
}

/// pydantic's `str(ValidationError)` (titled by what was validated), which
/// vLLM answers as a plain 400.
fn pydantic_error(title: &str, errors: &[RawError]) -> ApiError {
    let n = errors.len();
    let mut text = format!("{n} validation error{} for {title}", if n == 1 { "" } else { "s" });
    for e in errors {
        let loc: Vec<String> = e.loc.iter().map(Seg::text).collect();
        let mut shown = repr_value(e.input);
        if shown.chars().count() > 50 {
            let chars: Vec<char> = shown.chars().collect();
            let head: String = chars[..25].iter().collect();
            let tail: String = chars[chars.len() - 24..].iter().collect();
            shown = format!("{head}...{tail}");
        }
        text.push_str(&format!(
            "\n{}\n  {} [type={}, input_value={shown}, input_type={}]\n    For further information visit https://errors.pydantic.dev/2.14/v/{}",
            loc.join("."),
            e.msg,
            e.kind,
            crate::pycompat::type_name(e.input),
            e.kind
        ));
    }
    ApiError::bad_request(sanitize(&text))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn member(m: Value) -> &'static str {
        match winner(&m) {
            Ok(ty) => ty.tag(),
            Err(_) => "none",
        }
    }

    #[test]
    fn the_member_that_sets_most_fields_wins_and_ties_keep_the_earlier() {
        assert_eq!(member(json!({"role": "user", "content": "hi"})), "ChatCompletionUserMessageParam");
        // Text parts count in vLLM's custom member's eager list, not in the lazy Iterable.
        let parts = json!({"role": "user", "content": [{"type": "text", "text": "hi"}]});
        assert_eq!(member(parts), "CustomChatCompletionMessageParam");
        assert_eq!(member(json!({"role": "user", "content": ["hi"]})), "ChatCompletionUserMessageParam");
        assert_eq!(member(json!({"role": "robot", "content": "hi"})), "CustomChatCompletionMessageParam");
        let harmony = json!({"author": {"role": "user"}, "content": []});
        assert_eq!(member(harmony), "Message");
    }

    #[test]
    fn a_message_no_member_takes_reports_every_members_errors() {
        let mut errs = Errors::default();
        check_messages(&[json!({"role": "user", "content": null})], &Loc::root("body").field("messages"), &mut errs);
        assert_eq!(errs.list.len(), 19);
        assert_eq!(errs.list[0].loc, "body.messages.0.ChatCompletionDeveloperMessageParam.content");
        assert_eq!((errs.list[0].kind, errs.list[1].kind), ("string_type", "iterable_type"));
        let mut errs = Errors::default();
        check_messages(&[json!("hello")], &Loc::root("body").field("messages"), &mut errs);
        let kinds: Vec<&str> = errs.list.iter().map(|e| e.kind).collect();
        assert_eq!(kinds.len(), 8);
        assert_eq!(kinds[7], "model_attributes_type");
    }

    #[test]
    fn lazy_parts_and_tool_calls_fail_when_read() {
        let lazy = [json!({"role": "user", "content": [{"type": "input_text", "text": "x"}]})];
        let err = walk_parts(&lazy, |_| Ok(Walk::Next)).err().map(|e| e.message).unwrap_or_default();
        assert!(
            err.starts_with("7 validation errors for ValidatorIterator\n0.ChatCompletionContentPartTextParam.type\n"),
            "{err}"
        );
        let call = json!({"type": "function", "function": {"name": "f", "arguments": "{}"}});
        let messages = [json!({"role": "assistant", "tool_calls": [call]})];
        let mut errs = Errors::default();
        check_tool_calls(&messages, &Loc::root("body"), &mut errs);
        assert_eq!(errs.list[0].loc, "body.0.ChatCompletionMessageFunctionToolCallParam.id");
        assert_eq!(errs.list.len(), 4);
    }
}
