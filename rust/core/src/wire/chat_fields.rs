//! Fields of vLLM's `ChatCompletionRequest` that render reads only through the
//! template, checked as its pydantic model checks them: `tools` (function
//! tools), `documents` and `reasoning_effort` (`messages`: `message_union`).

use serde_json::{Map, Value};

use crate::pycompat::pydantic::{read, Errors, Loc};

const EFFORTS: [&str; 7] = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];

/// Content-part types only a multimodal model takes.
const MEDIA_PARTS: [&str; 8] =
    ["image_url", "input_image", "image_pil", "image_embeds", "audio_url", "input_audio", "video_url", "file"];

/// The field errors pydantic reports for these fields.
pub(crate) fn check(o: &Map<String, Value>, loc: &Loc, errs: &mut Errors) {
    if let Some(tools) = read::opt(o, "tools") {
        let tl = loc.field("tools");
        if let Some(items) = read::list(tools, &tl, errs) {
            for (i, t) in items.iter().enumerate() {
                check_tool(t, &tl.index(i), errs);
            }
        }
    }
    if let Some(docs) = read::opt(o, "documents") {
        let dl = loc.field("documents");
        if let Some(items) = read::list(docs, &dl, errs) {
            for (i, d) in items.iter().enumerate() {
                if let Some(doc) = read::dict(d, &dl.index(i), errs) {
                    // `dict[str, str]`: reported at the document (derender's
                    // locations name no dict keys).
                    for v in doc.values() {
                        read::string(v, &dl.index(i), errs);
                    }
                }
            }
        }
    }
    if let Some(effort) = read::opt(o, "reasoning_effort") {
        read::literal_str(effort, &EFFORTS, &loc.field("reasoning_effort"), errs);
    }
}

fn check_tool(t: &Value, l: &Loc, errs: &mut Errors) {
    let Some(tool) = read::dict(t, l, errs) else { return };
    if let Some(kind) = tool.get("type") {
        read::literal_str(kind, &["function"], &l.field("type"), errs);
    }
    let fl = l.field("function");
    let Some(f) = tool.get("function") else {
        errs.missing(&fl, t);
        return;
    };
    let Some(function) = read::dict(f, &fl, errs) else { return };
    match function.get("name") {
        None => errs.missing(&fl.field("name"), f),
        Some(name) => {
            read::string(name, &fl.field("name"), errs);
        }
    }
    if let Some(d) = read::opt(function, "description") {
        read::string(d, &fl.field("description"), errs);
    }
    if let Some(p) = read::opt(function, "parameters") {
        read::dict(p, &fl.field("parameters"), errs);
    }
    if let Some(s) = read::opt(function, "strict") {
        read::boolean(s, &fl.field("strict"), errs);
    }
}

/// A multimodal content part, which a text-only model refuses.
pub(crate) fn has_media_part(o: &Map<String, Value>) -> bool {
    let Some(Value::Array(messages)) = o.get("messages") else { return false };
    messages.iter().filter_map(|m| m.get("content")?.as_array()).flatten().any(is_media_part)
}

/// A content part a text-only model refuses.
pub(crate) fn is_media_part(part: &Value) -> bool {
    part.get("type").and_then(Value::as_str).is_some_and(|t| MEDIA_PARTS.contains(&t))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn kinds(body: Value) -> Vec<(&'static str, String)> {
        let mut errs = Errors::default();
        check(body.as_object().unwrap_or(&Map::new()), &Loc::root("body"), &mut errs);
        errs.list.iter().map(|e| (e.kind, e.loc.clone())).collect()
    }

    #[test]
    fn tools_are_function_tools() {
        assert!(kinds(json!({"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]})).is_empty());
        assert_eq!(kinds(json!({"tools": [{"type": "function"}]})), [("missing", "body.tools.0.function".into())]);
        assert_eq!(kinds(json!({"tools": [{"function": {"name": "f", "parameters": "x"}}]}))[0].0, "dict_type");
        let custom = kinds(json!({"tools": [{"type": "custom", "custom": {"name": "f"}}]}));
        assert_eq!(custom.iter().map(|e| e.0).collect::<Vec<_>>(), ["literal_error", "missing"]);
    }

    #[test]
    fn documents_and_efforts() {
        assert!(kinds(json!({"documents": [{"title": "a"}], "reasoning_effort": "high"})).is_empty());
        assert_eq!(kinds(json!({"documents": "x"}))[0].0, "list_type");
        assert_eq!(kinds(json!({"documents": [{"a": 1}]}))[0].0, "string_type");
        assert_eq!(kinds(json!({"reasoning_effort": "extreme"}))[0].0, "literal_error");
    }
}
