//! rednote-hilab dots (`dots`, vLLM's `DotsToolParser`): calls in
//! `<dots_function_call>...</dots_function_call>` blocks, each holding
//! `<invoke name=NAME><parameter name=K>V</parameter>...</invoke>` elements
//! (values typed by the tool's schema) or one JSON object with `name` and
//! `arguments`. Only offered tools become calls.
//!
//! Batch reads every block and keeps the text before the first one. The
//! stream buffers from a start marker to its end marker and sends a block's
//! calls whole, except a JSON body, which goes out as soon as it parses;
//! text outside blocks streams as it comes (vLLM's stream keeps what batch
//! drops, and never flushes a start-marker prefix held at the end).

use std::sync::{Arc, LazyLock};

use serde_json::{Map, Value};

use crate::model::Model;
use crate::parse::call_stream::CallStream;
use crate::parse::family::{Family, ToolFamily, ToolParserFactory};
use crate::parse::partial_json::py_isspace;
use crate::parse::{random_tool_call_id, ChatContext, Extracted, FunctionCall, Ids, Registry, Texts, ToolParser};
use crate::pycompat::json::{dumps, dumps_str, loads, partial_tag_overlap};
use crate::pycompat::num::{float_json, integral_float_text, py_float, py_int};
use crate::pycompat::re::Pattern;
use crate::wire::response::{Delta, DeltaToolCall};

const START: &str = "<dots_function_call>";
const END: &str = "</dots_function_call>";

static BLOCK: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"(?s)<dots_function_call>\s*(.*?)\s*</dots_function_call>"));
static INVOKE: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"(?s)<invoke\s+name\s*=\s*(?P<name>[^>]+)>(?P<body>.*?)</invoke>"));
static PARAMETER: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"(?s)<parameter\s+name\s*=\s*(?P<name>[^>]+)>(?P<value>.*?)</parameter>"));

fn py_strip(s: &str) -> &str {
    s.trim_matches(py_isspace)
}

/// `_extract_name`: stripped, one pair of matching quotes removed.
fn extract_name(value: &str) -> &str {
    let v = py_strip(value);
    let mut chars = v.chars();
    match (chars.next(), chars.next_back()) {
        (Some(a), Some(b)) if a == b && (a == '"' || a == '\'') => &v[1..v.len() - 1],
        _ => v,
    }
}

/// `_resolve_param_type`: the schema's `type`, through `$defs` references
/// and `anyOf` / `oneOf` / `allOf` (null alternatives skipped).
fn resolve_type<'a>(schema: Option<&'a Value>, defs: &'a Map<String, Value>, depth: usize) -> Option<&'a Value> {
    let schema = schema?.as_object().filter(|_| depth <= 10)?;
    if let Some(kind) = schema.get("type") {
        return Some(kind);
    }
    if let Some(name) = schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
        let last = name.rsplit('/').next().unwrap_or(name);
        return resolve_type(defs.get(last), defs, depth + 1);
    }
    for keyword in ["anyOf", "oneOf", "allOf"] {
        let Some(alternatives) = schema.get(keyword).and_then(Value::as_array) else { continue };
        for alternative in alternatives {
            if alternative.get("type").and_then(Value::as_str) == Some("null") {
                continue;
            }
            if let Some(kind) = resolve_type(Some(alternative), defs, depth + 1) {
                return Some(kind);
            }
        }
    }
    None
}

/// `_convert_param_value`, as the JSON text `json.dumps` writes for it.
fn convert(value: &str, kind: &Value) -> String {
    if value.to_lowercase() == "null" {
        return "null".into();
    }
    let kind = match kind {
        Value::Array(items) => items.iter().find(|i| i.as_str() != Some("null")).unwrap_or(&Value::Null),
        other => other,
    };
    // `str(kind).lower()`: only a string can name a known type.
    let kind = match kind {
        Value::Null => "string".to_string(),
        Value::String(s) => s.to_lowercase(),
        _ => String::new(),
    };
    let typed = match kind.as_str() {
        "string" | "str" | "text" => None,
        "integer" | "int" => py_int(value),
        "number" | "float" => py_float(value).map(|f| {
            if f.is_finite() && f.fract() == 0.0 {
                integral_float_text(f)
            } else {
                float_json(f)
            }
        }),
        "boolean" | "bool" => Some(matches!(value.to_lowercase().as_str(), "true" | "1").to_string()),
        _ => loads(value).map(|v| dumps(&v)),
    };
    typed.unwrap_or_else(|| dumps_str(value))
}

/// A call read from a block: its name and its arguments as JSON text.
struct Call {
    /// `None`: not a string.
    name: Option<String>,
    /// `None`: not a JSON object (the call is not valid).
    arguments: Option<String>,
}

/// `_parse_xml_invoke`.
fn parse_invoke(name: &str, body: &str, ctx: &ChatContext) -> Call {
    let name = extract_name(name).to_string();
    let schema = ctx.tool_parameters(&name).and_then(Value::as_object);
    let empty = Map::new();
    let properties = schema.and_then(|s| s.get("properties")).and_then(Value::as_object).unwrap_or(&empty);
    let defs = schema.and_then(|s| s.get("$defs")).and_then(Value::as_object).unwrap_or(&empty);
    // A dict: a repeated parameter keeps its first place and its last value.
    let mut args: Vec<(String, String)> = Vec::new();
    for p in PARAMETER.finditer(body) {
        let key = extract_name(p.group(1).unwrap_or("")).to_string();
        let value = py_strip(p.group(2).unwrap_or(""));
        let string = Value::String("string".into());
        let kind = match properties.get(&key) {
            Some(schema) => resolve_type(Some(schema), defs, 0).filter(|k| crate::pycompat::truthy(k)).unwrap_or(&string),
            None => &string,
        };
        let text = convert(value, kind);
        match args.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = text,
            None => args.push((key, text)),
        }
    }
    let body: Vec<String> = args.iter().map(|(k, v)| format!("{}: {v}", dumps_str(k))).collect();
    Call { name: Some(name), arguments: Some(format!("{{{}}}", body.join(", "))) }
}

/// `_parse_block`: its calls; `Err` where vLLM raises (not JSON, or not an
/// object).
fn parse_block(content: &str, ctx: &ChatContext) -> Result<Vec<Call>, ()> {
    let content = py_strip(content);
    if content.starts_with("<invoke") {
        return Ok(INVOKE
            .finditer(content)
            .iter()
            .map(|m| parse_invoke(m.group(1).unwrap_or(""), m.group(2).unwrap_or(""), ctx))
            .collect());
    }
    let parsed = loads(content).ok_or(())?;
    let obj = parsed.as_object().ok_or(())?;
    let name = obj.get("name").and_then(Value::as_str).map(str::to_string);
    // `parsed.get("arguments", parsed.get("parameters", {})) or {}`
    let args = obj.get("arguments").or_else(|| obj.get("parameters"));
    let arguments = match args {
        Some(v) if crate::pycompat::truthy(v) => v.is_object().then(|| dumps(v)),
        _ => Some("{}".to_string()),
    };
    Ok(vec![Call { name, arguments }])
}

/// `_validated_call`: an offered tool's name and its arguments.
fn validated(call: Call, ctx: &ChatContext) -> Option<(String, String)> {
    let name = call.name?;
    let known = ctx.tools.iter().any(|t| t.pointer("/function/name").and_then(Value::as_str) == Some(name.as_str()));
    Some((name, call.arguments.filter(|_| known)?))
}

#[derive(Default)]
struct DotsParser {
    /// `_buffer`: text from a start marker (or a prefix of one) on.
    buffer: String,
    calls: CallStream,
}

crate::impl_snapshot!(DotsParser { buffer } nested { calls });

impl DotsParser {
    /// `_append_complete_stream_call`.
    fn append_call(&mut self, name: String, arguments: String, out: &mut Vec<DeltaToolCall>) {
        self.calls.current += 1;
        self.calls.prev.push(serde_json::json!({"name": name, "arguments": loads(&arguments)}));
        self.calls.streamed.push(arguments.clone());
        out.push(DeltaToolCall::opening(self.calls.current, random_tool_call_id(), name, Some(arguments)));
    }

    /// `_stream_complete_json_body`: a JSON body that already parses.
    fn stream_json_body(&mut self, ctx: &ChatContext, out: &mut Vec<DeltaToolCall>) {
        let content = py_strip(&self.buffer[START.len()..]);
        if content.is_empty() || !loads(content).is_some_and(|v| v.is_object()) {
            return;
        }
        let Ok(mut calls) = parse_block(content, ctx) else { return };
        let Some((name, serialized)) = calls.pop().and_then(|c| validated(c, ctx)) else { return };
        if !self.calls.name_sent {
            self.calls.current += 1;
            out.push(DeltaToolCall::opening(self.calls.current, random_tool_call_id(), name.clone(), Some(String::new())));
            self.calls.prev.push(serde_json::json!({"name": name, "arguments": loads(&serialized)}));
            self.calls.streamed.push(String::new());
            self.calls.name_sent = true;
        }
        let Some(streamed) = usize::try_from(self.calls.current).ok().and_then(|i| self.calls.streamed.get_mut(i)) else {
            return;
        };
        if let Some(diff) = serialized.strip_prefix(streamed.as_str()).filter(|d| !d.is_empty()) {
            let diff = diff.to_string();
            streamed.push_str(&diff);
            out.push(DeltaToolCall::arguments(self.calls.current, diff));
        }
    }

    /// A closed block's body: its calls, or its text where it has none.
    fn close_block(&mut self, content: &str, ctx: &ChatContext, text: &mut Vec<String>, out: &mut Vec<DeltaToolCall>) {
        let parsed = match parse_block(content, ctx) {
            Ok(calls) if !calls.is_empty() => calls,
            // vLLM raises on an invoke-less block too.
            _ => {
                text.push(py_strip(content).to_string());
                return;
            }
        };
        let had_streamed_call = self.calls.name_sent;
        let mut valid: Vec<(String, String)> = parsed.into_iter().filter_map(|c| validated(c, ctx)).collect();
        if self.calls.name_sent && !valid.is_empty() {
            let (name, serialized) = valid.remove(0);
            if let Ok(i) = usize::try_from(self.calls.current) {
                let streamed = self.calls.streamed.get(i).cloned().unwrap_or_default();
                if let Some(rest) = serialized.strip_prefix(streamed.as_str()).filter(|r| !r.is_empty()) {
                    out.push(DeltaToolCall::arguments(self.calls.current, rest.to_string()));
                }
                if let Some(slot) = self.calls.prev.get_mut(i) {
                    *slot = serde_json::json!({"name": name, "arguments": loads(&serialized)});
                }
                if let Some(slot) = self.calls.streamed.get_mut(i) {
                    *slot = serialized;
                }
            }
        }
        let none_valid = valid.is_empty();
        for (name, arguments) in valid {
            self.append_call(name, arguments, out);
        }
        if none_valid && !had_streamed_call {
            text.push(py_strip(content).to_string());
        }
    }
}

impl ToolParser for DotsParser {
    fn completes_to_batch(&self) -> bool {
        true
    }

    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_tool_calls(&self, text: &str, ctx: &ChatContext) -> Extracted {
        let Some(marker) = text.find(START) else {
            return Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
        };
        let mut calls = Vec::new();
        for block in BLOCK.finditer(text) {
            // A block that raises keeps no call; the others still count.
            let Ok(parsed) = parse_block(block.group(1).unwrap_or(""), ctx) else { continue };
            for (name, arguments) in parsed.into_iter().filter_map(|c| validated(c, ctx)) {
                calls.push(FunctionCall { id: None, name, arguments });
            }
        }
        if calls.is_empty() {
            return Extracted { tools_called: false, calls, content: Some(text.to_string()) };
        }
        let before = py_strip(&text[..marker]);
        Extracted { tools_called: true, calls, content: (!before.is_empty()).then(|| before.to_string()) }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, ctx: &ChatContext) -> Option<Delta> {
        self.buffer.push_str(t.delta);
        let mut text: Vec<String> = Vec::new();
        let mut out: Vec<DeltaToolCall> = Vec::new();
        while !self.buffer.is_empty() {
            let Some(marker) = self.buffer.find(START) else {
                let held = partial_tag_overlap(&self.buffer, START);
                let keep_from = self.buffer.len() - held;
                text.push(self.buffer[..keep_from].to_string());
                self.buffer.drain(..keep_from);
                for part in &mut text {
                    *part = part.replace(END, "");
                }
                break;
            };
            if marker > 0 {
                text.push(self.buffer[..marker].to_string());
                self.buffer.drain(..marker);
            }
            let Some(end) = self.buffer[START.len()..].find(END).map(|i| i + START.len()) else {
                self.stream_json_body(ctx, &mut out);
                break;
            };
            let content = self.buffer[START.len()..end].to_string();
            self.buffer.drain(..end + END.len());
            self.close_block(&content, ctx, &mut text, &mut out);
            self.calls.name_sent = false;
        }
        let content = text.concat();
        if content.is_empty() && out.is_empty() {
            return None;
        }
        Some(Delta { content: (!content.is_empty()).then_some(content), tool_calls: out, ..Default::default() })
    }

    fn remaining_unstreamed_args(&mut self) -> String {
        self.calls.remaining()
    }

    fn supports_required_and_named(&self) -> bool {
        false
    }
}

struct Dots;

impl ToolParserFactory for Dots {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(DotsParser::default())
    }

    /// `supports_required_and_named = False`: forced choices are read in
    /// the model's own markup.
    fn native_forced_choices(&self) -> bool {
        true
    }
}

static TOOLS: ToolFamily = Family { names: &["dots"], needs: "", load: |_| Ok(Arc::new(Dots)) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> ChatContext {
        let tools = serde_json::json!([{"type": "function", "function": {"name": "search", "parameters": {
            "type": "object", "properties": {"q": {"type": "string"}, "n": {"anyOf": [{"type": "null"}, {"type": "number"}]}}
        }}}]);
        let req = serde_json::json!({"tools": tools});
        ChatContext::from_request(req.as_object().expect("object"), &Default::default())
    }

    #[test]
    fn batch_reads_invokes_and_json_bodies() {
        let p = DotsParser::default();
        let text = "Hi. <dots_function_call>\n<invoke name=\"search\">\n<parameter name=\"q\">a b</parameter>\
                    <parameter name=\"n\">3.0</parameter></invoke>\n</dots_function_call> tail\
                    <dots_function_call>{\"name\": \"search\", \"arguments\": null}</dots_function_call>";
        let got = p.extract_tool_calls(text, &ctx());
        let calls: Vec<(&str, &str)> = got.calls.iter().map(|c| (c.name.as_str(), c.arguments.as_str())).collect();
        assert_eq!(calls, [("search", r#"{"q": "a b", "n": 3}"#), ("search", "{}")]);
        assert_eq!(got.content.as_deref(), Some("Hi."));
        // Unknown tools are no calls: the whole text is content.
        let unknown = "<dots_function_call>{\"name\": \"other\", \"arguments\": {}}</dots_function_call>";
        assert_eq!(p.extract_tool_calls(unknown, &ctx()).content.as_deref(), Some(unknown));
    }

    #[test]
    fn stream_sends_a_json_body_once_it_parses() {
        let ctx = ctx();
        let mut p = DotsParser::default();
        let mut sent = Vec::new();
        for chunk in ["ok <dots_func", "tion_call>{\"name\": \"search\", ", "\"arguments\": {\"q\": \"x\"}}", "</dots_function_call>"] {
            let texts = Texts { previous: "", current: "", delta: chunk };
            let ids = Ids { previous: &[], current: &[], delta: &[] };
            sent.push(p.extract_tool_calls_streaming(&texts, &ids, &ctx).map(|d| {
                let args: Vec<String> = d.tool_calls.iter().filter_map(|c| c.function.as_ref()?.arguments.clone()).collect();
                (d.content, args)
            }));
        }
        assert_eq!(sent[0], Some((Some("ok ".into()), vec![])));
        assert_eq!(sent[1], None);
        assert_eq!(sent[2], Some((None, vec![String::new(), r#"{"q": "x"}"#.to_string()])));
        assert_eq!(sent[3], None);
    }
}
