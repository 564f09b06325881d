//! A request's structural tag as xgrammar's pydantic models read it
//! (`StructuralTag.model_validate(...).format`) and dump it again: every
//! format with all its fields in declaration order, defaults filled in,
//! unknown keys dropped. `None` where the models (or xgrammar) refuse it.

use serde_json::{json, Map, Value};

/// The format of a `{"type": "structural_tag", "format": ...}` object, or
/// the `triggered_tags` a legacy `{"structures", "triggers"}` tag becomes.
pub fn format_of(tag: &Value) -> Option<Value> {
    let o = tag.as_object()?;
    if o.contains_key("structures") {
        let triggers = str_list(o.get("triggers")?)?;
        let tags = o
            .get("structures")?
            .as_array()?
            .iter()
            .map(|s| {
                let begin = s.get("begin")?.as_str()?;
                let schema = schema(s.get("schema")?)?;
                let end = s.get("end")?.as_str()?;
                Some(json!({"type": "tag", "begin": begin, "content": crate::structured::format::content(schema, "json"), "end": end}))
            })
            .collect::<Option<Vec<Value>>>()?;
        return Some(json!({"type": "triggered_tags", "triggers": triggers, "tags": tags, "at_least_one": false,
            "stop_after_first": false, "excludes": []}));
    }
    if o.get("type").is_some_and(|t| t != "structural_tag") {
        return None;
    }
    format(o.get("format")?)
}

const STYLES: [&str; 10] = [
    "json",
    "qwen_xml",
    "minimax_xml",
    "minimax_m3_xml",
    "deepseek_xml",
    "glm_xml",
    "cohere_xml",
    "kimi_k3_xml",
    "deepseek_v4_1_xml",
    "gemma",
];

/// One field's reader: the value as dumped, or `None` when invalid.
type Reader = fn(&Value) -> Option<Value>;

/// Writes a model's fields in order from the input object.
struct Model<'a> {
    src: &'a Map<String, Value>,
    out: Map<String, Value>,
}

impl<'a> Model<'a> {
    fn new(src: &'a Map<String, Value>, kind: &str) -> Model<'a> {
        let mut out = Map::new();
        out.insert("type".into(), Value::String(kind.into()));
        Model { src, out }
    }

    fn required(mut self, key: &str, read: Reader) -> Option<Model<'a>> {
        let value = read(self.src.get(key)?)?;
        self.out.insert(key.into(), value);
        Some(self)
    }

    fn default(mut self, key: &str, default: Value, read: Reader) -> Option<Model<'a>> {
        let value = match self.src.get(key) {
            None => default,
            Some(v) => read(v)?,
        };
        self.out.insert(key.into(), value);
        Some(self)
    }

    fn done(self) -> Option<Value> {
        Some(Value::Object(self.out))
    }
}

fn string(v: &Value) -> Option<Value> {
    v.is_string().then(|| v.clone())
}

fn boolean(v: &Value) -> Option<Value> {
    v.is_boolean().then(|| v.clone())
}

fn int(v: &Value) -> Option<Value> {
    v.is_i64().then(|| v.clone())
}

/// `Optional[int]` in `0..=i32::MAX`.
fn opt_count(v: &Value) -> Option<Value> {
    match v {
        Value::Null => Some(Value::Null),
        _ => v.as_i64().filter(|n| (0..=i64::from(i32::MAX)).contains(n)).map(Value::from),
    }
}

fn opt_int(v: &Value) -> Option<Value> {
    (v.is_null() || v.is_i64()).then(|| v.clone())
}

fn str_list(v: &Value) -> Option<Value> {
    v.as_array()?.iter().all(Value::is_string).then(|| v.clone())
}

fn token(v: &Value) -> Option<Value> {
    (v.is_string() || v.is_i64()).then(|| v.clone())
}

fn token_list(v: &Value) -> Option<Value> {
    v.as_array()?.iter().all(|t| token(t).is_some()).then(|| v.clone())
}

fn schema(v: &Value) -> Option<Value> {
    (v.is_boolean() || v.is_object()).then(|| v.clone())
}

fn style(v: &Value) -> Option<Value> {
    v.as_str().filter(|s| STYLES.contains(s)).map(|_| v.clone())
}

fn syntax(v: &Value) -> Option<Value> {
    v.as_str().filter(|s| ["ebnf", "lark"].contains(s)).map(|_| v.clone())
}

fn formats(v: &Value) -> Option<Value> {
    v.as_array()?.iter().map(format).collect::<Option<Vec<Value>>>().map(Value::Array)
}

/// A model in a typed position: its `type` may be left out.
fn typed(v: &Value, kind: &str, body: fn(Model) -> Option<Model>) -> Option<Value> {
    let o = v.as_object()?;
    if o.get("type").is_some_and(|t| t != kind) {
        return None;
    }
    body(Model::new(o, kind))?.done()
}

fn token_format(v: &Value) -> Option<Value> {
    typed(v, "token", |m| m.required("token", token))
}

fn begin(v: &Value) -> Option<Value> {
    string(v).or_else(|| token_format(v))
}

fn end(v: &Value) -> Option<Value> {
    string(v).or_else(|| str_list(v)).or_else(|| token_format(v))
}

fn tag_body(m: Model) -> Option<Model> {
    m.required("begin", begin)?.required("content", format)?.required("end", end)
}

fn tags(v: &Value) -> Option<Value> {
    v.as_array()?.iter().map(|t| typed(t, "tag", tag_body)).collect::<Option<Vec<Value>>>().map(Value::Array)
}

/// `rules: List[Tuple[key, Format]]`, dumped as two-item lists.
fn rules(v: &Value, key: Reader) -> Option<Value> {
    v.as_array()?
        .iter()
        .map(|r| match r.as_array()?.as_slice() {
            [k, f] => Some(json!([key(k)?, format(f)?])),
            _ => None,
        })
        .collect::<Option<Vec<Value>>>()
        .map(Value::Array)
}

/// A `Format` (discriminated by `type`).
pub fn format(v: &Value) -> Option<Value> {
    let o = v.as_object()?;
    let kind = o.get("type")?.as_str()?;
    let m = Model::new(o, kind);
    let empty = || Value::Array(Vec::new());
    let m = match kind {
        "const_string" => m.required("value", string)?,
        "json_schema" => m
            .required("json_schema", schema)?
            .default("style", json!("json"), style)?
            .default("any_order", json!(false), boolean)?
            .default("max_whitespace_cnt", Value::Null, opt_int)?
            .default("excludes", empty(), str_list)?,
        "any_text" => m
            .default("excludes", empty(), str_list)?
            .default("max_tokens", Value::Null, opt_count)?
            .default("max_chars", Value::Null, opt_count)?,
        "token" => m.required("token", token)?,
        "exclude_token" => m.default("exclude_tokens", empty(), token_list)?,
        "any_tokens" => {
            m.default("exclude_tokens", empty(), token_list)?.default("max_tokens", Value::Null, opt_count)?
        }
        "grammar" => m.required("grammar", string)?.default("syntax", json!("ebnf"), syntax)?,
        "regex" => m.required("pattern", string)?,
        "sequence" | "or" => m.required("elements", formats)?,
        "tag" => tag_body(m)?,
        "triggered_tags" => m
            .required("triggers", str_list)?
            .required("tags", tags)?
            .default("at_least_one", json!(false), boolean)?
            .default("stop_after_first", json!(false), boolean)?
            .default("excludes", empty(), str_list)?,
        "token_triggered_tags" => m
            .required("trigger_tokens", token_list)?
            .required("tags", tags)?
            .default("exclude_tokens", empty(), token_list)?
            .default("at_least_one", json!(false), boolean)?
            .default("stop_after_first", json!(false), boolean)?,
        "tags_with_separator" => m
            .required("tags", tags)?
            .required("separator", string)?
            .default("at_least_one", json!(false), boolean)?
            .default("stop_after_first", json!(false), boolean)?,
        "optional" | "plus" | "star" => m.required("content", format)?,
        "repeat" => m.required("min", int)?.required("max", int)?.required("content", format)?,
        "dispatch" => m.required("rules", |r| rules(r, string))?.default("loop", json!(true), boolean)?.default(
            "excludes",
            empty(),
            str_list,
        )?,
        "token_dispatch" => m.required("rules", |r| rules(r, token))?.default("loop", json!(true), boolean)?.default(
            "exclude_tokens",
            empty(),
            token_list,
        )?,
        "qwen_xml_parameter" => m.required("json_schema", schema)?,
        _ => return None,
    };
    m.done()
}
