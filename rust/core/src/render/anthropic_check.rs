//! `AnthropicMessagesRequest` as pydantic validates it (lax mode, fields in
//! declaration order, model validators after), with the 400 vLLM's
//! validation handler prints for a body that does not fit.

use serde_json::Value;

use crate::error::ApiError;
use crate::pycompat::pydantic::{read, summarize, Errors, FieldError, Loc};
use crate::pycompat::repr::repr_str;
use crate::wire::request::Obj;

/// `AnthropicContentBlock`: its type, its raw fields, its tool change.
pub struct Block<'a> {
    pub kind: String,
    pub obj: &'a Obj,
    pub tool: Option<ToolChange>,
}

impl Block<'_> {
    /// A validated `str | None` field.
    pub fn str_field(&self, key: &str) -> Option<&str> {
        self.obj.get(key).and_then(Value::as_str)
    }
}

pub enum Content<'a> {
    Text(String),
    Blocks(Vec<Block<'a>>),
}

pub struct Message<'a> {
    pub role: String,
    pub content: Content<'a>,
}

#[derive(Clone)]
pub struct Tool {
    pub name: String,
    pub description: Option<String>,
    pub input_schema: Obj,
    pub strict: Option<bool>,
    pub defer_loading: Option<bool>,
}

pub enum ToolChange {
    Reference(String),
    Definition(Tool),
}

pub enum Thinking {
    Enabled(i64),
    Disabled,
    Adaptive,
}

pub struct ToolChoice {
    pub kind: String,
    pub name: Option<String>,
    pub disable_parallel_tool_use: bool,
}

pub struct Request<'a> {
    pub model: String,
    pub messages: Vec<Message<'a>>,
    pub max_tokens: i64,
    pub output_effort: Option<String>,
    pub output_schema: Option<Value>,
    pub thinking: Option<Thinking>,
    pub stop_sequences: Option<Vec<String>>,
    pub stream: bool,
    pub system: Option<Content<'a>>,
    pub temperature: Option<f64>,
    pub tool_choice: Option<ToolChoice>,
    pub tools: Option<Vec<Tool>>,
    pub top_k: Option<i64>,
    pub top_p: Option<f64>,
    pub watermarking: Option<bool>,
}

const BLOCK_TYPES: [&str; 9] = [
    "text",
    "image",
    "tool_use",
    "tool_result",
    "tool_reference",
    "thinking",
    "redacted_thinking",
    "tool_addition",
    "tool_removal",
];
const MAX_STOP_STRINGS: usize = 4;

/// A nested model given something that is not an object (FastAPI hands
/// pydantic parsed JSON, so this is the error it reports).
fn model_obj<'v>(v: &'v Value, loc: &Loc, errs: &mut Errors) -> Option<&'v Obj> {
    if v.is_object() {
        return v.as_object();
    }
    errs.push(
        "model_attributes_type",
        loc,
        "Input should be a valid dictionary or object to extract fields from",
        Some(v),
        None,
    );
    None
}

fn opt_str(o: &Obj, key: &'static str, loc: &Loc, errs: &mut Errors) -> Option<String> {
    read::opt(o, key).and_then(|v| read::string(v, &loc.field(key), errs))
}

fn opt_bool(o: &Obj, key: &'static str, loc: &Loc, errs: &mut Errors) -> Option<bool> {
    read::opt(o, key).and_then(|v| read::boolean(v, &loc.field(key), errs))
}

fn opt_dict(o: &Obj, key: &'static str, loc: &Loc, errs: &mut Errors) {
    if let Some(v) = read::opt(o, key) {
        read::dict(v, &loc.field(key), errs);
    }
}

fn required<'v>(o: &'v Obj, key: &'static str, loc: &Loc, parent: &Value, errs: &mut Errors) -> Option<&'v Value> {
    match o.get(key) {
        Some(v) => Some(v),
        None => {
            errs.missing(&loc.field(key), parent);
            None
        }
    }
}

/// Validate the body; every error pydantic would report, in its order.
pub fn check(o: &Obj) -> Result<Request<'_>, ApiError> {
    let root = Loc::root("body");
    let whole = Value::Object(o.clone());
    let mut errs = Errors::default();
    let model = required(o, "model", &root, &whole, &mut errs).and_then(|v| {
        let loc = root.field("model");
        let s = read::string(v, &loc, &mut errs)?;
        if s.is_empty() {
            errs.value_error(&loc, "Model is required", Some(v));
            return None;
        }
        Some(s)
    });
    let messages = required(o, "messages", &root, &whole, &mut errs).and_then(|v| {
        let loc = root.field("messages");
        let items = read::list(v, &loc, &mut errs)?;
        let before = errs.list.len();
        let out: Vec<Option<Message>> =
            items.iter().enumerate().map(|(i, m)| message(m, &loc.index(i), &mut errs)).collect();
        (errs.list.len() == before).then(|| out.into_iter().flatten().collect::<Vec<_>>())
    });
    let max_tokens = required(o, "max_tokens", &root, &whole, &mut errs).and_then(|v| {
        let loc = root.field("max_tokens");
        let n = read::int(v, &loc, &mut errs)?;
        if n <= 0 {
            errs.value_error(&loc, "max_tokens must be positive", Some(v));
            return None;
        }
        Some(n)
    });
    opt_dict(o, "metadata", &root, &mut errs);
    let (output_effort, output_schema) = read::opt(o, "output_config")
        .map(|v| output_config(v, &root.field("output_config"), &mut errs))
        .unwrap_or_default();
    let thinking = read::opt(o, "thinking").and_then(|v| thinking(v, &root.field("thinking"), &mut errs));
    let stop_sequences = read::opt(o, "stop_sequences").and_then(|v| stop_list(v, &root, &mut errs));
    let stream = opt_bool(o, "stream", &root, &mut errs).unwrap_or(false);
    let system = read::opt(o, "system").and_then(|v| {
        let loc = root.field("system");
        let c = content(v, &loc, &mut errs)?;
        reject_tool_changes(&c, &loc, v, &mut errs).then_some(c)
    });
    let temperature = read::opt(o, "temperature").and_then(|v| read::float(v, &root.field("temperature"), &mut errs));
    let tool_choice = read::opt(o, "tool_choice").and_then(|v| tool_choice(v, &root.field("tool_choice"), &mut errs));
    let tools = read::opt(o, "tools").and_then(|v| {
        let loc = root.field("tools");
        let items = read::list(v, &loc, &mut errs)?;
        let out: Vec<Option<Tool>> = items.iter().enumerate().map(|(i, t)| tool(t, &loc.index(i), &mut errs)).collect();
        out.into_iter().collect::<Option<Vec<_>>>()
    });
    let top_k = read::opt(o, "top_k").and_then(|v| read::int(v, &root.field("top_k"), &mut errs));
    let top_p = read::opt(o, "top_p").and_then(|v| read::float(v, &root.field("top_p"), &mut errs));
    if let Some(v) = o.get("mm_payload") {
        read::literal_str(v, &["tensors", "none"], &root.field("mm_payload"), &mut errs);
    }
    opt_bool(o, "return_mm_kwargs", &root, &mut errs);
    if let Some(v) = read::opt(o, "cache_salt") {
        cache_salt(v, &root.field("cache_salt"), &mut errs);
    }
    let watermarking = opt_bool(o, "watermarking", &root, &mut errs);
    for key in ["kv_transfer_params", "ec_transfer_params", "vllm_xargs", "chat_template_kwargs"] {
        opt_dict(o, key, &root, &mut errs);
    }
    if let Some(Value::Object(xargs)) = o.get("vllm_xargs") {
        vllm_xargs(xargs, &mut errs);
    }
    if !errs.is_empty() {
        return Err(errs.into_api_error());
    }
    let (Some(model), Some(messages), Some(max_tokens)) = (model, messages, max_tokens) else {
        return Err(errs.into_api_error());
    };
    // `validate_thinking_budget` (skipped for a P/D prefill leg).
    let prefill =
        o.get("kv_transfer_params").and_then(|k| k.get("do_remote_decode")).is_some_and(crate::pycompat::truthy);
    if let Some(Thinking::Enabled(budget)) = thinking {
        if !prefill && budget >= max_tokens {
            errs.value_error(&root, "thinking.budget_tokens must be less than max_tokens", Some(&whole));
            return Err(errs.into_api_error());
        }
    }
    Ok(Request {
        model,
        messages,
        max_tokens,
        output_effort,
        output_schema,
        thinking,
        stop_sequences,
        stream,
        system,
        temperature,
        tool_choice,
        tools,
        top_k,
        top_p,
        watermarking,
    })
}

fn message<'a>(v: &'a Value, loc: &Loc, errs: &mut Errors) -> Option<Message<'a>> {
    let o = model_obj(v, loc, errs)?;
    let role = required(o, "role", loc, v, errs)
        .and_then(|r| read::literal_str(r, &["user", "assistant", "system"], &loc.field("role"), errs));
    let content = required(o, "content", loc, v, errs).and_then(|c| content(c, &loc.field("content"), errs));
    let (role, content) = (role?, content?);
    if role != "system" && !reject_tool_changes(&content, loc, v, errs) {
        return None;
    }
    Some(Message { role, content })
}

/// `_reject_tool_changes`: tool changes only in system messages.
fn reject_tool_changes(c: &Content, loc: &Loc, input: &Value, errs: &mut Errors) -> bool {
    let Content::Blocks(blocks) = c else { return true };
    match blocks.iter().find(|b| b.kind == "tool_addition" || b.kind == "tool_removal") {
        Some(b) => {
            let msg = format!("{} blocks are only allowed in messages with role \"system\"", b.kind);
            errs.value_error(loc, &msg, Some(input));
            false
        }
        None => true,
    }
}

/// `str | list[AnthropicContentBlock]`: a smart union reports both members.
fn content<'a>(v: &'a Value, loc: &Loc, errs: &mut Errors) -> Option<Content<'a>> {
    match v {
        Value::String(s) => return Some(Content::Text(s.clone())),
        Value::Array(items) => {
            let mut scratch = Errors::default();
            let blocks: Vec<Option<Block>> =
                items.iter().enumerate().map(|(i, b)| block(b, &loc.index(i), &mut scratch)).collect();
            if scratch.is_empty() {
                return Some(Content::Blocks(blocks.into_iter().flatten().collect()));
            }
            read::string(v, loc, errs);
            errs.list.extend(scratch.list);
        }
        _ => {
            read::string(v, loc, errs);
            read::list(v, loc, errs);
        }
    }
    None
}

fn block<'a>(v: &'a Value, loc: &Loc, errs: &mut Errors) -> Option<Block<'a>> {
    let o = model_obj(v, loc, errs)?;
    let before = errs.list.len();
    let kind =
        required(o, "type", loc, v, errs).and_then(|t| read::literal_str(t, &BLOCK_TYPES, &loc.field("type"), errs));
    opt_str(o, "text", loc, errs);
    opt_dict(o, "source", loc, errs);
    for key in ["id", "tool_use_id", "name"] {
        opt_str(o, key, loc, errs);
    }
    opt_dict(o, "input", loc, errs);
    if let Some(c) = read::opt(o, "content") {
        block_content(c, &loc.field("content"), errs);
    }
    opt_bool(o, "is_error", loc, errs);
    for key in ["tool_name", "thinking", "signature", "data"] {
        opt_str(o, key, loc, errs);
    }
    let tool = read::opt(o, "tool").and_then(|t| tool_change(t, &loc.field("tool"), errs));
    if errs.list.len() != before {
        return None;
    }
    let kind = kind?;
    // `validate_tool_change`.
    if kind == "tool_addition" || kind == "tool_removal" {
        let message = match &tool {
            None => Some(format!("tool is required for {kind} blocks")),
            Some(ToolChange::Definition(_)) if kind == "tool_removal" => {
                Some("tool_removal only accepts a tool_reference".to_string())
            }
            _ => None,
        };
        if let Some(m) = message {
            errs.value_error(loc, &m, Some(v));
            return None;
        }
    }
    let tool = tool.filter(|_| kind == "tool_addition" || kind == "tool_removal");
    Some(Block { kind, obj: o, tool })
}

/// A block's `content: str | list[dict[str, Any]] | None`.
fn block_content(v: &Value, loc: &Loc, errs: &mut Errors) {
    match v {
        Value::String(_) => {}
        Value::Array(items) => {
            let mut scratch = Errors::default();
            for (i, item) in items.iter().enumerate() {
                read::dict(item, &loc.index(i), &mut scratch);
            }
            if !scratch.is_empty() {
                read::string(v, loc, errs);
                errs.list.extend(scratch.list);
            }
        }
        _ => {
            read::string(v, loc, errs);
            read::list(v, loc, errs);
        }
    }
}

/// `AnthropicToolChange`: a union tagged by `type`.
fn tool_change(v: &Value, loc: &Loc, errs: &mut Errors) -> Option<ToolChange> {
    let tag = tagged(v, &["tool_reference", "tool_definition"], loc, errs)?;
    let o = v.as_object()?;
    match tag.as_str() {
        "tool_reference" => {
            let l = loc.field("tool_reference");
            let name = required(o, "name", &l, v, errs).and_then(|n| read::string(n, &l.field("name"), errs));
            name.map(ToolChange::Reference)
        }
        _ => {
            let l = loc.field("tool_definition");
            let def = required(o, "definition", &l, v, errs).and_then(|d| tool(d, &l.field("definition"), errs));
            def.map(ToolChange::Definition)
        }
    }
}

/// The tag of a discriminated union (`type`), with pydantic's errors.
fn tagged(v: &Value, tags: &[&str], loc: &Loc, errs: &mut Errors) -> Option<String> {
    let o = model_obj(v, loc, errs)?;
    let expected = tags.iter().map(|t| repr_str(t)).collect::<Vec<_>>().join(", ");
    match o.get("type") {
        Some(Value::String(t)) if tags.contains(&t.as_str()) => Some(t.clone()),
        None => {
            errs.push(
                "union_tag_not_found",
                loc,
                "Unable to extract tag using discriminator 'type'",
                Some(v),
                Some("{'discriminator': \"'type'\"}".into()),
            );
            None
        }
        Some(t) => {
            let tag = match t {
                Value::String(s) => s.clone(),
                other => crate::pycompat::pydantic::summarize(Some(other)),
            };
            errs.push(
                "union_tag_invalid",
                loc,
                format!(
                    "Input tag {} found using 'type' does not match any of the expected tags: {expected}",
                    repr_str(&tag)
                ),
                Some(v),
                Some(format!(
                    "{{'discriminator': \"'type'\", 'tag': {}, 'expected_tags': {}}}",
                    repr_str(&tag),
                    repr_str(&expected)
                )),
            );
            None
        }
    }
}

/// `AnthropicTool`; `input_schema` gains `"type": "object"` when it has none.
fn tool(v: &Value, loc: &Loc, errs: &mut Errors) -> Option<Tool> {
    let o = model_obj(v, loc, errs)?;
    let name = required(o, "name", loc, v, errs).and_then(|n| read::string(n, &loc.field("name"), errs));
    let description = opt_str(o, "description", loc, errs);
    let schema =
        required(o, "input_schema", loc, v, errs).and_then(|s| read::dict(s, &loc.field("input_schema"), errs));
    let strict = opt_bool(o, "strict", loc, errs);
    let defer_loading = opt_bool(o, "defer_loading", loc, errs);
    let mut input_schema = schema?.clone();
    if !input_schema.contains_key("type") {
        input_schema.insert("type".into(), Value::String("object".into()));
    }
    Some(Tool { name: name?, description, input_schema, strict, defer_loading })
}

fn tool_choice(v: &Value, loc: &Loc, errs: &mut Errors) -> Option<ToolChoice> {
    let o = model_obj(v, loc, errs)?;
    let kind = required(o, "type", loc, v, errs)
        .and_then(|t| read::literal_str(t, &["auto", "any", "tool", "none"], &loc.field("type"), errs));
    let name = opt_str(o, "name", loc, errs);
    let disable = opt_bool(o, "disable_parallel_tool_use", loc, errs);
    let kind = kind?;
    if kind == "tool" && name.as_deref().is_none_or(str::is_empty) {
        errs.value_error(loc, "tool_choice.name is required when type is 'tool'", Some(v));
        return None;
    }
    Some(ToolChoice { kind, name, disable_parallel_tool_use: disable.unwrap_or(false) })
}

fn thinking(v: &Value, loc: &Loc, errs: &mut Errors) -> Option<Thinking> {
    let tag = tagged(v, &["enabled", "disabled", "adaptive"], loc, errs)?;
    let o = v.as_object()?;
    let display = |l: &Loc, errs: &mut Errors| {
        if let Some(d) = read::opt(o, "display") {
            read::literal_str(d, &["summarized", "omitted", "updates"], &l.field("display"), errs);
        }
    };
    match tag.as_str() {
        "enabled" => {
            let l = loc.field("enabled");
            let budget = required(o, "budget_tokens", &l, v, errs)
                .and_then(|b| read::int_ge(b, 1024, &l.field("budget_tokens"), errs));
            let before = errs.list.len();
            display(&l, errs);
            (errs.list.len() == before).then_some(Thinking::Enabled(budget?))
        }
        "disabled" => Some(Thinking::Disabled),
        _ => {
            let before = errs.list.len();
            display(&loc.field("adaptive"), errs);
            (errs.list.len() == before).then_some(Thinking::Adaptive)
        }
    }
}

/// `AnthropicOutputConfig`: `(effort, format's schema)`.
fn output_config(v: &Value, loc: &Loc, errs: &mut Errors) -> (Option<String>, Option<Value>) {
    let Some(o) = model_obj(v, loc, errs) else { return (None, None) };
    let effort = read::opt(o, "effort")
        .and_then(|e| read::literal_str(e, &["low", "medium", "high", "xhigh", "max"], &loc.field("effort"), errs));
    let schema = read::opt(o, "format").and_then(|f| {
        let l = loc.field("format");
        let fo = model_obj(f, &l, errs)?;
        let schema = read::opt(fo, "schema").and_then(|s| read::dict(s, &l.field("schema"), errs)).cloned();
        if let Some(t) = fo.get("type") {
            read::literal_str(t, &["json_schema"], &l.field("type"), errs)?;
        }
        schema.filter(|s| !s.is_empty()).map(Value::Object)
    });
    (effort, schema)
}

/// `stop_sequences: list[str]` of at most `VLLM_MAX_STOP_STRINGS` items.
fn stop_list(v: &Value, root: &Loc, errs: &mut Errors) -> Option<Vec<String>> {
    let loc = root.field("stop_sequences");
    let items = read::list(v, &loc, errs)?;
    let before = errs.list.len();
    let out: Vec<Option<String>> =
        items.iter().enumerate().map(|(i, s)| read::string(s, &loc.index(i), errs)).collect();
    if errs.list.len() != before {
        return None;
    }
    if items.len() > MAX_STOP_STRINGS {
        errs.push(
            "too_long",
            &loc,
            format!("List should have at most {MAX_STOP_STRINGS} items after validation, not {}", items.len()),
            Some(v),
            Some(format!(
                "{{'field_type': 'List', 'max_length': {MAX_STOP_STRINGS}, 'actual_length': {}}}",
                items.len()
            )),
        );
        return None;
    }
    out.into_iter().collect()
}

fn cache_salt(v: &Value, loc: &Loc, errs: &mut Errors) {
    let Some(s) = read::string(v, loc, errs) else { return };
    let n = s.chars().count();
    if n < 1 {
        errs.push(
            "string_too_short",
            loc,
            "String should have at least 1 character",
            Some(v),
            Some("{'min_length': 1}".into()),
        );
    } else if n > 1024 {
        errs.push(
            "string_too_long",
            loc,
            "String should have at most 1024 characters",
            Some(v),
            Some("{'max_length': 1024}".into()),
        );
    }
}

/// `vllm_xargs: dict[str, str | int | float | list[str | int | float]]`:
/// each member of the union that a value misses is reported.
fn vllm_xargs(xargs: &Obj, errs: &mut Errors) {
    let scalar = |v: &Value| matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_));
    let miss = |errs: &mut Errors, loc: String, v: &Value, with_list: bool| {
        let mut kinds = vec![
            ("string_type", "Input should be a valid string"),
            ("int_type", "Input should be a valid integer"),
            ("float_type", "Input should be a valid number"),
        ];
        if with_list {
            kinds.push(("list_type", "Input should be a valid list"));
        }
        for (kind, msg) in kinds {
            errs.list.push(FieldError {
                kind,
                loc: loc.clone(),
                msg: msg.into(),
                input: summarize(Some(v)),
                ctx: None,
            });
        }
    };
    for (key, v) in xargs {
        let loc = format!("body.vllm_xargs.{key}");
        match v {
            v if scalar(v) => {}
            Value::Array(items) if items.iter().all(scalar) => {}
            Value::Array(items) => {
                let mut tmp = Errors::default();
                miss(&mut tmp, loc.clone(), v, false);
                for (i, item) in items.iter().enumerate().filter(|(_, x)| !scalar(x)) {
                    miss(&mut tmp, format!("{loc}.{i}"), item, false);
                }
                errs.list.extend(tmp.list);
            }
            _ => miss(errs, loc, v, true),
        }
    }
}
