//! Kimi K3's chat encoding (vLLM's `kimi_k3` mode calls the tokenizer's own
//! `apply_chat_template(..., tokenize=True)`): no template, a chat is a list
//! of segments in K3's "XTML",
//!
//! ```text
//! <|open|>message role="user"<|sep|>TEXT<|close|>message<|sep|><|end_of_msg|>
//! ```
//!
//! each encoded on its own: the markers as their tokens, every piece of
//! caller text (tags, attribute values, content) as ordinary text, where a
//! `<|open|>` a user typed is bytes, not a marker. The rules and the cases
//! that show them are in `tests/models/kimi_k3/RENDERER.md` section 3.

use serde_json::{Map, Value};

use crate::pycompat::json::{dumps_with, DumpOptions};
use crate::pycompat::repr::repr_value;
use crate::pycompat::str::py_isspace;
use crate::pycompat::truthy;

const OPEN: &str = "<|open|>";
const CLOSE: &str = "<|close|>";
const SEP: &str = "<|sep|>";
const END_OF_MSG: &str = "<|end_of_msg|>";
const IMAGE_PLACEHOLDER: &str = "<|kimi_image_placeholder|>";
/// The efforts the renderer (and the encoding) accept.
pub const EFFORTS: [&str; 3] = ["low", "high", "max"];
/// The tokenizer encodes text in slices of this many characters...
const SLICE_CHARS: usize = 400_000;
/// ...each cut so that no piece holds a longer run of whitespace or of
/// non-whitespace (tiktoken's guard against quadratic BPE).
const MAX_RUN: usize = 25_000;

/// Why a chat cannot be written (the encoding's ValueError or
/// AssertionError): vLLM answers each 400 with its text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EncodeError(pub String);

/// The keywords the tokenizer's `apply_chat_template` reads, after vLLM's
/// renderer translated the request's (`render::kimi_k3`).
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub thinking: bool,
    /// `thinking_effort` (the tokenizer's default is `"max"`).
    pub effort: Option<Value>,
    pub tool_choice: Option<Value>,
    pub response_format: Option<Value>,
    /// `response_schema`, given as a keyword.
    pub response_schema: Option<Value>,
    pub add_generation_prompt: bool,
    /// `image_prompts`: what each image placeholder in caller text becomes.
    pub image_prompts: Option<Vec<String>>,
}

/// The tokenizer's "ordinary" encoding (tiktoken's, with no special token
/// allowed): the same tokenizer with no added token, so caller text that
/// spells a marker is encoded as text.
pub struct Ordinary(tokenizers::Tokenizer);

impl Ordinary {
    /// Built once when the model loads, from the tokenizer's own JSON.
    pub fn of(tokenizer: &tokenizers::Tokenizer) -> Result<Ordinary, String> {
        let text = tokenizer.to_string(false).map_err(|e| e.to_string())?;
        let mut json: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        if let Some(o) = json.as_object_mut() {
            o.insert("added_tokens".into(), Value::Array(Vec::new()));
        }
        let bare: tokenizers::Tokenizer = json.to_string().parse().map_err(|e: tokenizers::Error| e.to_string())?;
        Ok(Ordinary(bare))
    }

    pub fn encode(&self, text: &str) -> Vec<u32> {
        self.0.encode(text, false).map(|e| e.get_ids().to_vec()).unwrap_or_default()
    }
}

/// A piece of the prompt: a marker (encoded with special tokens
/// recognised) or caller text (encoded as ordinary text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Control(String),
    Text(String),
}

/// The tokenizer's encodings: `special` recognises added tokens,
/// `ordinary` does not.
pub struct Encoders<'a> {
    pub special: &'a dyn Fn(&str) -> Vec<u32>,
    pub ordinary: &'a dyn Fn(&str) -> Vec<u32>,
}

/// `apply_chat_template(conversation, tools, tokenize=True, ...)`.
pub fn render(
    messages: &[Value],
    tools: Option<&Value>,
    options: &Options,
    encoders: &Encoders,
) -> Result<Vec<u32>, EncodeError> {
    let segments = segments(messages, tools, options)?;
    let mut ids = Vec::new();
    for segment in &segments {
        match segment {
            Segment::Control(text) => encode_sliced(text, encoders.special, &mut ids),
            Segment::Text(text) => encode_sliced(text, encoders.ordinary, &mut ids),
        }
    }
    Ok(ids)
}

fn encode_sliced(text: &str, encode: &dyn Fn(&str) -> Vec<u32>, ids: &mut Vec<u32>) {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for slice in chars.chunks(SLICE_CHARS) {
        let start = slice[0].0;
        let end = slice.last().map_or(start, |(i, c)| i + c.len_utf8());
        for piece in runs(&text[start..end]) {
            ids.extend(encode(piece));
        }
    }
}

/// `text` cut so that no piece holds more than `MAX_RUN` consecutive
/// whitespace or non-whitespace characters (`str.isspace`).
fn runs(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let (mut start, mut run) = (0, 0);
    let mut in_space = text.chars().next().is_some_and(py_isspace);
    for (i, c) in text.char_indices() {
        let space = py_isspace(c);
        if space != in_space {
            run = 1;
            in_space = space;
        } else {
            run += 1;
            if run > MAX_RUN {
                pieces.push(&text[start..i]);
                start = i;
                run = 1;
            }
        }
    }
    pieces.push(&text[start..]);
    pieces
}

/// Python's `str(value)`.
fn py_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => repr_value(other),
    }
}

/// `json.dumps(sorted(value), ensure_ascii=False, separators=(",", ":"))`.
fn compact(value: &Value) -> String {
    let opts = DumpOptions { separators: Some((",".into(), ":".into())), sort_keys: true, ..Default::default() };
    dumps_with(value, &opts)
}

/// `json.dumps(value, ensure_ascii=False)`.
fn dumps(value: &Value) -> String {
    dumps_with(value, &DumpOptions::default())
}

fn escape(value: &str) -> String {
    value.replace('&', "&amp;").replace('"', "&quot;")
}

struct Writer<'a> {
    out: Vec<Segment>,
    images: Images<'a>,
}

struct Images<'a> {
    prompts: Option<&'a [String]>,
    used: usize,
}

impl Images<'_> {
    fn next(&mut self) -> Result<String, EncodeError> {
        let Some(prompts) = self.prompts else { return Ok(IMAGE_PLACEHOLDER.to_string()) };
        let prompt =
            prompts.get(self.used).ok_or_else(|| EncodeError("More image placeholders than image prompts.".into()))?;
        self.used += 1;
        Ok(prompt.clone())
    }
}

impl Writer<'_> {
    fn control(&mut self, text: &str) {
        if !text.is_empty() {
            self.out.push(Segment::Control(text.to_string()));
        }
    }

    fn text(&mut self, text: &str) {
        if !text.is_empty() {
            self.out.push(Segment::Text(text.to_string()));
        }
    }

    /// Caller text, image placeholders split out when prompts are given.
    fn caller(&mut self, text: &str) -> Result<(), EncodeError> {
        if self.images.prompts.is_none() || !text.contains(IMAGE_PLACEHOLDER) {
            self.text(text);
            return Ok(());
        }
        let pieces: Vec<&str> = text.split(IMAGE_PLACEHOLDER).collect();
        for (n, piece) in pieces.iter().enumerate() {
            self.text(piece);
            if n + 1 < pieces.len() {
                let prompt = self.images.next()?;
                self.control(&prompt);
            }
        }
        Ok(())
    }

    fn open(&mut self, tag: &str, attrs: &[(&str, String)]) {
        self.control(OPEN);
        self.text(tag);
        for (key, value) in attrs {
            // Four text segments per attribute: ` key`, `="`, value, `"`.
            self.text(&format!(" {key}"));
            self.text("=\"");
            self.text(&escape(value));
            self.text("\"");
        }
        self.control(SEP);
    }

    fn close(&mut self, tag: &str) {
        self.control(CLOSE);
        self.text(tag);
        self.control(SEP);
    }

    fn note(&mut self, kind: &str, body: &str) {
        self.open("message", &[("role", "system".into()), ("type", kind.into())]);
        self.text(body.trim_matches(py_isspace));
        self.close("message");
        self.control(END_OF_MSG);
    }

    fn content(&mut self, content: Option<&Value>) -> Result<(), EncodeError> {
        match content {
            None | Some(Value::Null) => Ok(()),
            Some(Value::String(s)) => self.caller(s),
            Some(Value::Array(parts)) => {
                for part in parts {
                    let kind = part.get("type").and_then(Value::as_str);
                    if matches!(kind, Some("image" | "image_url")) {
                        let prompt = self.images.next()?;
                        self.control(&prompt);
                    } else {
                        self.caller(&part.get("text").map(py_str).unwrap_or_default())?;
                    }
                }
                Ok(())
            }
            Some(other) => self.caller(&py_str(other)),
        }
    }

    fn declare_tools(&mut self, tools: &Value, dynamic: bool) {
        let json = compact(tools);
        let body = if dynamic {
            format!("## New Tools Available\nThe system dynamically extends the toolset via lazy-loading.\nYou have access to all existing and extended tools.\nHere are the specs for the extended tools.\n\n```json\n{json}\n```")
        } else {
            format!("# Tools\nHere are the available tools, described in JSONSchema.\n\n```json\n{json}\n```")
        };
        self.open("message", &[("role", "system".into()), ("type", "tool-declare".into())]);
        self.text(&body);
        self.close("message");
        self.control(END_OF_MSG);
    }

    fn assistant(&mut self, message: &Map<String, Value>, thinking: bool) -> Result<(), EncodeError> {
        if thinking {
            let reasoning = message
                .get("reasoning_content")
                .filter(|r| truthy(r))
                .or_else(|| message.get("reasoning"))
                .filter(|r| !r.is_null());
            self.open("think", &[]);
            if let Some(r) = reasoning {
                let text = py_str(r);
                if !text.trim_matches(py_isspace).is_empty() {
                    self.caller(&text)?;
                }
            }
            self.close("think");
        }
        self.open("response", &[]);
        self.content(message.get("content"))?;
        self.close("response");
        let Some(calls) = message.get("tool_calls").filter(|c| truthy(c)).and_then(Value::as_array) else {
            return Ok(());
        };
        self.open("tools", &[]);
        for (index, call) in calls.iter().enumerate() {
            let function = call.get("function").unwrap_or(call);
            let name = function.get("name").map(py_str).unwrap_or_default();
            self.open("call", &[("tool", name), ("index", (index + 1).to_string())]);
            if let Some(Value::Object(arguments)) = function.get("arguments") {
                for (key, value) in arguments {
                    self.open("argument", &[("key", key.clone()), ("type", value_type(value).into())]);
                    let text = match value {
                        Value::String(s) => s.clone(),
                        other => dumps(other),
                    };
                    self.caller(&text)?;
                    self.close("argument");
                }
            }
            self.close("call");
        }
        self.close("tools");
        Ok(())
    }
}

fn value_type(value: &Value) -> &'static str {
    match value {
        Value::Bool(_) => "boolean",
        Value::Null => "null",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Object(_) => "object",
        Value::Array(_) => "array",
    }
}

/// The tokenizer's own reordering of each run of tool results into the
/// preceding assistant's call order (by `tool_call_id` or `id`), when
/// every result matches a call; a matched result takes the call's name
/// as `tool` (and as `name`, if it has one).
fn reorder_tool_results(messages: &[Value]) -> Vec<Value> {
    let role = |m: &Value| m.get("role").and_then(Value::as_str).map(str::to_string);
    let mut out = Vec::with_capacity(messages.len());
    let mut positions: Vec<(String, (usize, Option<Value>))> = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        let message = &messages[i];
        match role(message).as_deref() {
            Some("assistant") if message.is_object() => {
                positions.clear();
                let calls = message.get("tool_calls").filter(|c| truthy(c)).and_then(Value::as_array);
                for (position, call) in calls.into_iter().flatten().enumerate() {
                    let Some(id) = call.get("id").filter(|id| !id.is_null()) else { continue };
                    let key = py_str(id);
                    if positions.iter().any(|(k, _)| *k == key) {
                        continue;
                    }
                    let name = match call.get("function") {
                        Some(f @ Value::Object(_)) => f.get("name").cloned(),
                        _ => call.get("name").cloned(),
                    };
                    positions.push((key, (position + 1, name)));
                }
                out.push(message.clone());
                i += 1;
            }
            Some("tool") if message.is_object() => {
                let mut run = Vec::new();
                let mut unmatched = false;
                while i < messages.len() && messages[i].is_object() && role(&messages[i]).as_deref() == Some("tool") {
                    let tool = &messages[i];
                    let reference = tool.get("tool_call_id").or_else(|| tool.get("id")).filter(|r| !r.is_null());
                    let hit = reference.and_then(|r| positions.iter().find(|(k, _)| *k == py_str(r)));
                    match hit {
                        Some((_, (position, name))) => run.push((*position, run.len(), tool, name.clone())),
                        None => {
                            unmatched = true;
                            run.push((0, run.len(), tool, None));
                        }
                    }
                    i += 1;
                }
                if unmatched {
                    out.extend(run.into_iter().map(|(_, _, tool, _)| tool.clone()));
                    continue;
                }
                run.sort_by_key(|(position, order, _, _)| (*position, *order));
                for (_, _, tool, name) in run {
                    let mut tool = tool.clone();
                    if let (Some(name), Some(o)) = (name, tool.as_object_mut()) {
                        if o.contains_key("name") {
                            o.insert("name".into(), name.clone());
                        }
                        o.insert("tool".into(), name);
                    }
                    out.push(tool);
                }
            }
            _ => {
                out.push(message.clone());
                i += 1;
            }
        }
    }
    out
}

/// `response_format`'s schema, as the tokenizer reads one (`_schema_of`).
fn schema_of(response_format: Option<&Value>) -> Option<Value> {
    let holder = response_format?.get("json_schema").filter(|h| !h.is_null())?;
    match holder {
        Value::Object(o) => Some(o.get("schema").or_else(|| o.get("json_schema")).unwrap_or(holder).clone()),
        other => Some(other.clone()),
    }
}

/// The segments of a chat: `build_chat_segments`.
pub fn segments(messages: &[Value], tools: Option<&Value>, options: &Options) -> Result<Vec<Segment>, EncodeError> {
    let messages = reorder_tool_results(messages);
    let mut w = Writer { out: Vec::new(), images: Images { prompts: options.image_prompts.as_deref(), used: 0 } };
    if let Some(tools) = tools.filter(|t| truthy(t)) {
        w.declare_tools(tools, false);
    }
    let thinking = options.thinking;
    if let Some(effort) = options.effort.as_ref().filter(|_| thinking) {
        let name = effort.as_str().filter(|e| EFFORTS.contains(e));
        let Some(name) = name else {
            return Err(EncodeError(format!(
                "Unsupported thinking_effort={}; supported values are ['high', 'low', 'max'].",
                repr_value(effort)
            )));
        };
        w.note(
            "thinking-effort",
            &format!("`thinking_effort` guides on how much to think in your thinking channel (not including the response channel), supported values include `low`, `medium`, `high`, and `max`.\nNow the system is invoked with `thinking_effort={name}`."),
        );
    }
    let mut last_calls: Option<Vec<Value>> = None;
    let mut tool_index = 0usize;
    for message in &messages {
        let Some(m) = message.as_object() else { continue };
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let declared = m.get("tools").filter(|t| truthy(t));
        let name_attr = |attrs: &mut Vec<(&str, String)>| {
            if let Some(name) = m.get("name").filter(|n| truthy(n)) {
                attrs.push(("name", py_str(name)));
            }
        };
        match role {
            "user" | "system" if role == "user" || declared.is_none() => {
                let mut attrs = vec![("role", role.to_string())];
                name_attr(&mut attrs);
                w.open("message", &attrs);
                w.content(m.get("content"))?;
                w.close("message");
                w.control(END_OF_MSG);
            }
            "system" => {
                if let Some(tools) = declared {
                    w.declare_tools(tools, true);
                }
            }
            "tool" => {
                tool_index += 1;
                let own = m.get("tool").or_else(|| m.get("name")).filter(|n| !n.is_null());
                let from_call = || {
                    let call = last_calls.as_ref()?.get(tool_index - 1)?;
                    call.get("function").unwrap_or(call).get("name").cloned()
                };
                let Some(name) = own.cloned().or_else(from_call) else {
                    return Err(EncodeError("Kimi K3 tool messages need a resolvable tool name: carry `tool`/`name`, or match a preceding assistant tool_call by order.".into()));
                };
                w.open(
                    "message",
                    &[("role", "tool".into()), ("tool", py_str(&name)), ("index", tool_index.to_string())],
                );
                w.content(m.get("content"))?;
                w.close("message");
                w.control(END_OF_MSG);
            }
            "assistant" => {
                last_calls = m.get("tool_calls").and_then(Value::as_array).cloned();
                tool_index = 0;
                let mut attrs = vec![("role", "assistant".to_string())];
                name_attr(&mut attrs);
                w.open("message", &attrs);
                w.assistant(m, thinking)?;
                w.close("message");
                w.control(END_OF_MSG);
            }
            _ => {}
        }
    }
    match options.tool_choice.as_ref().and_then(Value::as_str) {
        Some("required") => w.note(
            "tool-choice",
            "The system is invoked with `tool_choice=required`.\nYou MUST call tools in the next message.",
        ),
        Some("none") => w.note(
            "tool-choice",
            "The system is invoked with `tool_choice=none`.\nYou MUST NOT call any tools in the next message.",
        ),
        _ => {}
    }
    let format = options.response_format.as_ref();
    let kind = match format {
        Some(Value::Object(o)) => o.get("type").unwrap_or(&Value::Null).as_str(),
        Some(other) => other.as_str(),
        None => None,
    };
    const RAW_JSON: &str =
        "Your response must be raw JSON data without markdown code blocks (```json) or any additional formatting.";
    match kind {
        Some("json_object") => {
            w.note("response-format", &format!("The system is invoked with `response_format=json_object`.\n{RAW_JSON}"))
        }
        Some("json_schema") => {
            let schema = options.response_schema.clone().or_else(|| schema_of(format)).unwrap_or(Value::Null);
            w.note(
                "response-format",
                &format!("The system is invoked with `response_format=json_schema`.\n{RAW_JSON}\nThe JSON data must match the following schema:\n```json\n{}\n```", compact(&schema)),
            );
        }
        _ => {}
    }
    if options.add_generation_prompt {
        w.open("message", &[("role", "assistant".into())]);
        w.open(if thinking { "think" } else { "response" }, &[]);
    }
    if let Some(prompts) = options.image_prompts.as_ref().filter(|p| p.len() != w.images.used) {
        return Err(EncodeError(format!(
            "image prompt count {} != consumed placeholder count {}",
            prompts.len(),
            w.images.used
        )));
    }
    Ok(w.out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(segments: &[Segment]) -> String {
        segments
            .iter()
            .map(|s| match s {
                Segment::Control(t) | Segment::Text(t) => t.as_str(),
            })
            .collect()
    }

    #[test]
    fn a_user_turn_and_the_generation_prompt() {
        let options = Options { thinking: false, add_generation_prompt: true, ..Default::default() };
        let segs = segments(&[json!({"role": "user", "content": "a \"q\" & <|open|>", "name": "ann"})], None, &options)
            .expect("renders");
        assert_eq!(
            text(&segs),
            "<|open|>message role=\"user\" name=\"ann\"<|sep|>a \"q\" & <|open|><|close|>message<|sep|><|end_of_msg|><|open|>message role=\"assistant\"<|sep|><|open|>response<|sep|>"
        );
        // The user's marker is text; attribute values are escaped.
        assert!(segs.contains(&Segment::Text("a \"q\" & <|open|>".into())));
        assert!(segs.contains(&Segment::Text("ann".into())));
    }

    #[test]
    fn tool_results_take_call_order_and_names() {
        let messages = [
            json!({"role": "assistant", "content": "", "tool_calls": [
                {"id": "a", "function": {"name": "f", "arguments": {"x": 1}}},
                {"id": "b", "function": {"name": "g", "arguments": {}}}]}),
            json!({"role": "tool", "tool_call_id": "b", "content": "B"}),
            json!({"role": "tool", "tool_call_id": "a", "content": "A"}),
        ];
        let segs = segments(&messages, None, &Options::default()).expect("renders");
        let t = text(&segs);
        assert!(t.contains("<|open|>argument key=\"x\" type=\"number\"<|sep|>1<|close|>argument<|sep|>"), "{t}");
        let a = t.find("tool=\"f\" index=\"1\"<|sep|>A").expect("f first");
        let b = t.find("tool=\"g\" index=\"2\"<|sep|>B").expect("g second");
        assert!(a < b);
    }

    #[test]
    fn long_runs_are_cut() {
        // A run past the limit is cut; a change of class starts a new run.
        let text = format!("{}{}", "a".repeat(MAX_RUN + 2), " ".repeat(3));
        let lens: Vec<usize> = runs(&text).iter().map(|p| p.len()).collect();
        assert_eq!(lens, vec![MAX_RUN, 5]);
    }

    #[test]
    fn unresolvable_tool_names_and_unused_image_prompts_are_refused() {
        let err = segments(&[json!({"role": "tool", "content": "x"})], None, &Options::default()).unwrap_err();
        assert!(err.0.starts_with("Kimi K3 tool messages need a resolvable tool name"));
        let options = Options { image_prompts: Some(vec!["<img>".into()]), ..Default::default() };
        let err = segments(&[], None, &options).unwrap_err();
        assert_eq!(err.0, "image prompt count 1 != consumed placeholder count 0");
    }
}
