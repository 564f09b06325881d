//! One `<function ...>...</function>` block read as vLLM's
//! `_parse_function_block` does: as XML first, then, when that fails or
//! finds no name, with its regexes over the raw text. vLLM 0.33's install
//! has no lxml, so its XML is `xml.etree.ElementTree` (expat); `roxmltree`
//! here: both strict XML 1.0 with namespaces, entities and CDATA decoded,
//! and `.text` read as ElementTree does (`element_text`).

use std::sync::LazyLock;

use serde_json::Value;

use super::pyjson::loads_py;
use crate::parse::pyast::{literal_eval_any, PyValue};
use crate::parse::ChatContext;
use crate::pycompat::re::Pattern;
use crate::pycompat::str::py_isspace;

pub(super) static FUNC_NAME: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r#"<function\s+name=['"]([^'"]+)['"][^>]*>"#));
pub(super) static PARAM_WITH_NAME: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r#"<param\s+name=['"]([^'"]+)['"]>([\s\S]*?)</param>"#));
pub(super) static PARAM_MISSING_NAME: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"(?s)<param(?![^>]*\bname=)[^>]*>"));
pub(super) static FUNC_BLOCK: LazyLock<Pattern> = LazyLock::new(|| Pattern::new(r"(?s)<function.*?</function>"));

const CDATA_OPEN: &str = "<![CDATA[";
const CDATA_CLOSE: &str = "]]>";

/// Where vLLM's code raises (a schema that is not a dict, a value
/// `json.dumps` cannot write): the caller's `except` decides what follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Raised;

pub(super) fn py_strip(s: &str) -> &str {
    s.trim_matches(py_isspace)
}

/// Python truthiness (`a or b` in the alias table).
fn truthy(v: &PyValue) -> bool {
    match v {
        PyValue::None => false,
        PyValue::Bool(b) => *b,
        PyValue::Int(d) => !d.trim_start_matches('-').trim_start_matches('0').is_empty(),
        PyValue::Float(f) => *f != 0.0,
        PyValue::Str(s) => !s.is_empty(),
        PyValue::List(items) => !items.is_empty(),
        PyValue::Dict(entries) => !entries.is_empty(),
        // Only non-empty sets are literals; `b""` and `0j` are rare enough.
        PyValue::Unwritable => true,
    }
}

/// `_parse_arguments`: JSON, else a Python literal; `None` where both fail.
fn parse_value(text: &str) -> Option<PyValue> {
    loads_py(text).or_else(|| literal_eval_any(text))
}

/// `json.dumps(args, ensure_ascii=False)` of an argument dict.
pub(super) fn dumps_args(args: &Args) -> Result<String, Raised> {
    let dict = PyValue::Dict(args.iter().map(|(k, v)| (PyValue::Str(k.clone()), v.clone())).collect());
    dict.dumps().map_err(|_| Raised)
}

/// An argument dict in insertion order.
pub(super) type Args = Vec<(String, PyValue)>;

fn get<'a>(args: &'a Args, key: &str) -> Option<&'a PyValue> {
    args.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn set(args: &mut Args, key: &str, value: PyValue) {
    match args.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = value,
        None => args.push((key.to_string(), value)),
    }
}

/// The offered tools as `_build_tool_maps` reads them.
pub(super) struct Tools<'a> {
    ctx: &'a ChatContext,
}

impl<'a> Tools<'a> {
    pub(super) fn new(ctx: &'a ChatContext) -> Self {
        Tools { ctx }
    }

    /// The last offered tool of that (non-empty) name: a later one
    /// replaces an earlier one in vLLM's maps.
    fn function(&self, name: &str) -> Option<&'a Value> {
        if name.is_empty() {
            return None;
        }
        self.ctx.tools.iter().rev().filter_map(|t| t.get("function")).find(|f| f.get("name").and_then(Value::as_str) == Some(name))
    }

    pub(super) fn has(&self, name: &str) -> bool {
        self.function(name).is_some()
    }

    fn parameters(&self, name: &str) -> Option<&'a serde_json::Map<String, Value>> {
        self.function(name)?.get("parameters")?.as_object()
    }

    fn properties(&self, name: &str) -> Option<&'a serde_json::Map<String, Value>> {
        self.parameters(name)?.get("properties")?.as_object()
    }

    /// `name_to_allowed_props`: empty for unknown tools, which keeps every
    /// parameter.
    fn allows(&self, name: &str, key: &str) -> Option<bool> {
        self.properties(name).filter(|p| !p.is_empty()).map(|p| p.contains_key(key))
    }

    /// `name_to_required` (`set(required)`: a string's characters, a
    /// dict's keys; anything `set()` refuses counts as none).
    fn required(&self, name: &str) -> Vec<String> {
        let Some(required) = self.parameters(name).and_then(|p| p.get("required")) else { return Vec::new() };
        match required {
            Value::Array(items) => {
                if items.iter().all(|v| !v.is_array() && !v.is_object()) {
                    items.iter().filter_map(Value::as_str).map(str::to_string).collect()
                } else {
                    Vec::new()
                }
            }
            Value::String(s) => s.chars().map(String::from).collect(),
            Value::Object(m) => m.keys().cloned().collect(),
            _ => Vec::new(),
        }
    }

    /// `required` counted as met: non-string members never are.
    fn required_met(&self, name: &str, args: &Args) -> bool {
        let Some(Value::Array(items)) = self.parameters(name).and_then(|p| p.get("required")) else {
            return self.required(name).iter().all(|k| get(args, k).is_some());
        };
        if items.iter().any(|v| v.is_array() || v.is_object()) {
            return true;
        }
        items.iter().all(|v| v.as_str().is_some_and(|k| get(args, k).is_some()))
    }

    /// `_get_argument_type(...) == "string"`; `Err` where a property's
    /// schema is not a dict (`.get` raises).
    fn is_string(&self, name: &str, key: &str) -> Result<bool, Raised> {
        let Some(schema) = self.properties(name).and_then(|p| p.get(key)) else { return Ok(false) };
        let schema = schema.as_object().ok_or(Raised)?;
        Ok(schema.get("type").and_then(Value::as_str) == Some("string"))
    }

    /// `_coerce_argument_value`.
    fn coerce(&self, name: &str, key: &str, value: PyValue) -> Result<PyValue, Raised> {
        if self.is_string(name, key)? {
            return match value {
                PyValue::Str(s) => Ok(PyValue::Str(s)),
                other => other.dumps().map(PyValue::Str).map_err(|_| Raised),
            };
        }
        Ok(match value {
            PyValue::Str(s) => parse_value(&s).unwrap_or(PyValue::Str(s)),
            other => other,
        })
    }

    /// `_add_argument`: `Ok(false)` where the parameter breaks the schema.
    pub(super) fn add(&self, name: &str, key: &str, text: &str, args: &mut Args, seen: &mut Vec<String>) -> Result<bool, Raised> {
        let allowed = self.allows(name, key);
        if matches!(key, "properties" | "arguments") && allowed == Some(false) {
            // An OpenAI-style wrapper: its known fields are the arguments.
            let Some(PyValue::Dict(entries)) = parse_value(text) else { return Ok(false) };
            let mut added = false;
            for (k, v) in entries {
                let PyValue::Str(k) = k else { continue };
                if self.allows(name, &k) != Some(true) {
                    continue;
                }
                if seen.contains(&k) {
                    return Ok(false);
                }
                seen.push(k.clone());
                let v = self.coerce(name, &k, v)?;
                set(args, &k, v);
                added = true;
            }
            return Ok(added);
        }
        if allowed == Some(false) {
            return Ok(true);
        }
        if seen.iter().any(|k| k == key) {
            return Ok(false);
        }
        seen.push(key.to_string());
        let v = self.coerce(name, key, PyValue::Str(text.to_string()))?;
        set(args, key, v);
        Ok(true)
    }
}

/// A regex-read value: a whole CDATA section unwrapped, else stripped.
pub(super) fn raw_value(text: &str) -> &str {
    match text.strip_prefix(CDATA_OPEN).and_then(|t| t.strip_suffix(CDATA_CLOSE)) {
        Some(inner) if text.len() >= CDATA_OPEN.len() + CDATA_CLOSE.len() => inner,
        _ => py_strip(text),
    }
}

/// ElementTree's `.text`: the character data (CDATA included) before the
/// first child element; expat drops comments and processing instructions.
pub(super) fn element_text(node: &roxmltree::Node) -> String {
    node.children().take_while(|c| !c.is_element()).filter_map(|c| c.is_text().then(|| c.text()).flatten()).collect()
}

/// The XML half: `Ok(true)` where it found a name. The name and the
/// arguments it read stay where lxml (or the code after it) raises, as in
/// vLLM, for the regex half to go on from.
fn read_xml(block: &str, tools: &Tools, args: &mut Args, name: &mut Option<String>, invalid: &mut bool) -> Result<bool, Raised> {
    let doc = roxmltree::Document::parse(block).map_err(|_| Raised)?;
    let is = |n: &roxmltree::Node, tag: &str| n.is_element() && n.tag_name().namespace().is_none() && n.tag_name().name() == tag;
    let root = doc.root_element();
    let func = if is(&root, "function") { Some(root) } else { root.children().find(|c| is(c, "function")) };
    let Some(func) = func else { return Ok(false) };
    let fname = py_strip(func.attribute("name").unwrap_or("")).to_string();
    *name = Some(fname.clone());
    let mut params: Vec<_> = func.children().filter(|c| is(c, "param")).collect();
    if params.is_empty() {
        if let Some(wrapper) = func.children().find(|c| is(c, "arguments")) {
            params = wrapper.children().filter(|c| is(c, "param")).collect();
        }
    }
    let mut seen = Vec::new();
    for param in params {
        let key = param.attribute("name").unwrap_or("");
        if key.is_empty() || !tools.add(&fname, key, &element_text(&param), args, &mut seen)? {
            args.clear();
            *invalid = true;
            break;
        }
    }
    Ok(!fname.is_empty())
}

/// The regex half.
fn read_regex(block: &str, tools: &Tools, args: &mut Args, name: &mut Option<String>) -> Result<bool, Raised> {
    if let Some(m) = FUNC_NAME.search(block) {
        *name = Some(py_strip(m.group(1).unwrap_or("")).to_string());
    }
    let fname = name.clone().unwrap_or_default();
    let mut invalid = PARAM_MISSING_NAME.search(block).is_some();
    let mut seen = Vec::new();
    for m in PARAM_WITH_NAME.finditer(block) {
        let key = py_strip(m.group(1).unwrap_or(""));
        if !tools.add(&fname, key, raw_value(m.group(2).unwrap_or("")), args, &mut seen)? {
            invalid = true;
            break;
        }
    }
    if invalid {
        args.clear();
    }
    Ok(invalid)
}

/// `_parse_function_block`: the call's name and arguments, or `None` for a
/// block that stays text.
pub(super) fn parse_block(block: &str, tools: &Tools) -> Option<(String, Args)> {
    let mut args = Args::new();
    let mut name = None;
    let mut invalid = false;
    let mut ok = read_xml(block, tools, &mut args, &mut name, &mut invalid).unwrap_or(false);
    if !ok {
        match read_regex(block, tools, &mut args, &mut name) {
            Ok(bad) => {
                invalid |= bad;
                ok = name.as_deref().is_some_and(|n| !n.is_empty());
            }
            Err(Raised) => ok = false,
        }
    }
    let name = name.filter(|n| !n.is_empty())?;
    if invalid {
        return None;
    }
    let (name, args) = alias(name, args, tools);
    if !tools.has(&name) || !tools.required_met(&name, &args) || !ok {
        return None;
    }
    Some((name, args))
}

/// `a or b or ...`: the first truthy value, else the last.
fn first_of(args: &Args, keys: &[&str]) -> Option<PyValue> {
    let mut last = None;
    for k in keys {
        last = get(args, k).cloned();
        if last.as_ref().is_some_and(truthy) {
            return last;
        }
    }
    last.filter(|v| *v != PyValue::None)
}

/// `_normalize_alias_tool_call`: the tau-bench names MiniCPM5 invents,
/// mapped onto the offered tools.
fn alias(name: String, args: Args, tools: &Tools) -> (String, Args) {
    if tools.has(&name) {
        return (name, args);
    }
    let one = |target: &str, key: &str, value: PyValue| (target.to_string(), vec![(key.to_string(), value)]);
    let line = || first_of(&args, &["line_id", "id"]);
    match name.as_str() {
        "get_details_by_phone" if tools.has("get_customer_by_phone") => {
            if let Some(v) = first_of(&args, &["phone_number", "phone"]) {
                return one("get_customer_by_phone", "phone_number", v);
            }
        }
        "get_details_by_name" if tools.has("get_customer_by_name") => {
            let mut mapped = Args::new();
            if let Some(v) = first_of(&args, &["full_name", "name"]) {
                mapped.push(("full_name".into(), v));
            }
            if let Some(v) = first_of(&args, &["date_of_birth", "dob"]) {
                mapped.push(("date_of_birth".into(), v.clone()));
                mapped.push(("dob".into(), v));
            }
            if !mapped.is_empty() {
                return ("get_customer_by_name".into(), mapped);
            }
        }
        "get_line_details" | "get_line_status" | "get_roaming_status" if tools.has("get_details_by_id") => {
            if let Some(v) = line() {
                return one("get_details_by_id", "id", v);
            }
        }
        "get_plan_details" if tools.has("get_details_by_id") => {
            if let Some(v) = first_of(&args, &["plan_id", "id"]) {
                return one("get_details_by_id", "id", v);
            }
        }
        "enable_roaming" | "disable_roaming" if tools.has("toggle_roaming") => {
            if let Some(v) = line() {
                let on = name == "enable_roaming";
                return ("toggle_roaming".into(), vec![("line_id".into(), v), ("enabled".into(), PyValue::Bool(on))]);
            }
        }
        "add_refueled_data" | "add_data_to_line" if tools.has("refuel_data") => {
            let mut mapped = Args::new();
            if let Some(v) = get(&args, "customer_id") {
                mapped.push(("customer_id".into(), v.clone()));
            }
            if let Some(v) = line() {
                mapped.push(("line_id".into(), v));
            }
            if let Some(v) = first_of(&args, &["amount_gb", "gb", "gb_amount", "amount"]) {
                mapped.push(("amount_gb".into(), v));
            }
            if !mapped.is_empty() {
                return ("refuel_data".into(), mapped);
            }
        }
        _ => {}
    }
    (name, args)
}

/// `_parse_partial_params`: the complete params of an open block.
pub(super) fn partial_params(block: &str, name: &str, tools: &Tools) -> Result<Args, Raised> {
    let mut args = Args::new();
    let mut seen: Vec<String> = Vec::new();
    for m in PARAM_WITH_NAME.finditer(block) {
        let key = py_strip(m.group(1).unwrap_or(""));
        if key.is_empty() || seen.iter().any(|k| k == key) {
            continue;
        }
        tools.add(name, key, raw_value(m.group(2).unwrap_or("")), &mut args, &mut seen)?;
    }
    Ok(args)
}
