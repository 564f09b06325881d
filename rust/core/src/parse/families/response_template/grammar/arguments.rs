//! A call's arguments in the tool field's content format
//! (`_arguments_format`): JSON, or `xml-inline` parameters whose values
//! hold their schemas where the format can say so.

use serde_json::{Map, Value};

use super::literals::{literals, split_group, AHEAD};
use super::partial::{endings, literal_piece, spells_closer, Piece};
use super::xgrammar::{json_compiles, regex_compiles};
use super::{any_text, const_string, const_strings, one_of, optional, seq, tag, EncodeError};
use crate::parse::families::response_template::content::{parse, schema_types};
use crate::parse::families::response_template::template::Field;
use crate::pycompat::sre::{self, Op, SetItem};

/// `_SEPARATOR`: at most a newline between parameters.
const SEPARATOR: &str = r"\n?";
/// `_ANNOTATIONS`: keywords that describe a schema without constraining it.
const ANNOTATIONS: [&str; 8] =
    ["title", "description", "default", "examples", "deprecated", "$comment", "$schema", "$id"];
const OBJECT_KEYWORDS: [&str; 6] = ["type", "properties", "required", "additionalProperties", "$defs", "definitions"];
/// `_JSON_SYNTAX`: what JSON writes outside strings.
const JSON_SYNTAX: &str = " \t\n\r{}[],:\"-+.0123456789eEtrufalsn";

fn separator() -> Value {
    serde_json::json!({"type": "regex", "pattern": SEPARATOR})
}

/// The keys of `schema` beyond `allowed` and the annotations.
fn has_other_keys(schema: &Map<String, Value>, allowed: &[&str]) -> bool {
    schema.keys().any(|k| !ANNOTATIONS.contains(&k.as_str()) && !allowed.contains(&k.as_str()))
}

/// `_string_choices`: the `const` or `enum` strings of a schema.
pub fn string_choices(schema: &Value) -> Option<Vec<String>> {
    let schema = schema.as_object()?;
    let choices = match schema.get("const") {
        Some(c) => vec![c.clone()],
        None => schema.get("enum")?.as_array()?.clone(),
    };
    if choices.is_empty() {
        return None;
    }
    choices.into_iter().map(|c| c.as_str().map(str::to_string)).collect()
}

/// `_typed_by_parser`: the parser reads the value with its JSON type.
fn typed_by_parser(schema: &Value) -> bool {
    if *schema == Value::Bool(true) || !schema_types(schema).is_empty() {
        return true;
    }
    schema.as_object().is_some_and(|s| !has_other_keys(s, &[]) || string_choices(schema).is_some())
}

/// `_json_value_schema`: the value's schema with the definitions it may refer to.
fn json_value_schema(schema: &Value, parameters: &Map<String, Value>) -> Value {
    let Some(object) = schema.as_object() else { return Value::Object(Map::new()) };
    let mut schema = object.clone();
    if object.get("nullable").is_some_and(crate::pycompat::truthy) {
        // XGrammar ignores `nullable`.
        let mut wrapped = Map::new();
        wrapped.insert("anyOf".into(), serde_json::json!([Value::Object(schema), {"type": "null"}]));
        schema = wrapped;
    }
    let mut out = Map::new();
    for key in ["$defs", "definitions"] {
        if let Some(d) = parameters.get(key) {
            out.insert(key.into(), d.clone());
        }
    }
    for (k, v) in schema {
        out.insert(k, v);
    }
    Value::Object(out)
}

/// What `_text_format` returns: the very `_ANY_TEXT` (vLLM compares by
/// identity), or another format.
enum Text {
    Any,
    Format(Value),
}

/// `_text_format`: raw text, which the `excludes` end, constrained without
/// changing its parsed value.
fn text_format(schema: &Value, excludes: &[String]) -> Option<Text> {
    if *schema == Value::Bool(true) {
        return Some(Text::Any);
    }
    let object = schema.as_object()?;
    if object.contains_key("format") || object.contains_key("pattern") {
        return string_regex(object, excludes).map(Text::Format);
    }
    if has_other_keys(object, &["type", "nullable", "enum", "const", "anyOf", "oneOf"]) {
        return None;
    }
    let mut branches = Vec::new();
    for key in ["anyOf", "oneOf"] {
        match object.get(key) {
            Some(Value::Array(items)) => branches.extend(items.iter()),
            // A truthy non-list iterates as what no text format takes.
            Some(v) if crate::pycompat::truthy(v) => return None,
            _ => {}
        }
    }
    if object.contains_key("enum") || object.contains_key("const") {
        let choices = string_choices(schema)?;
        if !branches.is_empty() || schema_types(schema).iter().any(|t| t != "string") {
            return None;
        }
        return Some(Text::Format(const_strings(&choices)));
    }
    if branches.iter().any(|b| !matches!(text_format(b, excludes), Some(Text::Any))) {
        return None;
    }
    Some(Text::Any)
}

/// Raw-string forms of the formats XGrammar holds in JSON strings.
fn string_format(name: &str) -> Option<String> {
    const HOST_LABEL: &str = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?";
    const DATE: &str = r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])";
    const TIME: &str =
        r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\.[0-9]+)?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])";
    const OCTET: &str = r"(?:25[0-5]|2[0-4][0-9]|[01]?[0-9]?[0-9])";
    const ATOM: &str = r"[A-Za-z0-9_!#$%&'*+/=?^`{|}~-]+";
    const URI_CHARS: &str = r"A-Za-z0-9_.~!$&'()*+,;=";
    const ESCAPED: &str = r"%[0-9A-Fa-f]{2}";
    let path = format!("(?:[{URI_CHARS}:@-]|{ESCAPED})");
    let query = format!("(?:[{URI_CHARS}:@/?-]|{ESCAPED})*");
    Some(match name {
        "date" => DATE.to_string(),
        "time" => TIME.to_string(),
        "date-time" => format!("{DATE}T{TIME}"),
        "email" => format!(
            r"{ATOM}(?:\.{ATOM})*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])*"
        ),
        "hostname" => format!(r"{HOST_LABEL}(?:\.{HOST_LABEL})*"),
        "ipv4" => format!(r"(?:{OCTET}\.){{3}}{OCTET}"),
        "uuid" => r"[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}".to_string(),
        "uri" => format!(
            r"[A-Za-z][A-Za-z+.-]*:(?://(?:(?:[{URI_CHARS}:-]|{ESCAPED})*@)?(?:[{URI_CHARS}-]|{ESCAPED})*(?::[0-9]*)?(?:/{path}*)*|/?(?:{path}+(?:/{path}*)*)?)(?:\?{query})?(?:#{query})?"
        ),
        _ => return None,
    })
}

/// `_string_regex`: a raw string's `format` or `pattern` as a regex.
fn string_regex(schema: &Map<String, Value>, excludes: &[String]) -> Option<Value> {
    let value = Value::Object(schema.clone());
    if has_other_keys(schema, &["type", "format", "pattern", "minLength", "maxLength"])
        || schema_types(&value) != ["string"]
    {
        return None;
    }
    let pattern = match schema.get("format") {
        Some(f) => string_format(f.as_str()?)?,
        None => schema.get("pattern")?.as_str()?.to_string(),
    };
    let firsts: Vec<char> = excludes.iter().filter_map(|e| e.chars().next()).collect();
    if may_write(&pattern, &firsts) || !regex_compiles(&pattern) {
        return None;
    }
    Some(serde_json::json!({"type": "regex", "pattern": pattern}))
}

/// `_may_write`: whether a match of `pattern` may hold one of `chars`, as
/// any pattern may that Python cannot parse.
fn may_write(pattern: &str, chars: &[char]) -> bool {
    let Ok(parsed) = sre::parse(pattern) else { return true };
    if parsed.flags & sre::IGNORECASE != 0 {
        return true;
    }
    fn may(ops: &[Op], chars: &[char]) -> bool {
        for op in ops {
            let writes = match op {
                Op::Literal(c) => char::from_u32(*c).is_some_and(|c| chars.contains(&c)),
                Op::In(items) => chars.iter().any(|&c| in_class(items, c)),
                Op::Repeat { max, item, .. } => *max > 0 && may(item, chars) && !chars.is_empty(),
                Op::Subpattern { add_flags, p, .. } => {
                    if add_flags & sre::IGNORECASE != 0 {
                        return true;
                    }
                    may(p, chars) && !chars.is_empty()
                }
                Op::Branch(items) => items.iter().any(|i| may(i, chars)) && !chars.is_empty(),
                Op::At(_) => continue,
                // Such as `.`, which XGrammar lets match line breaks.
                _ => return true,
            };
            if writes {
                return true;
            }
        }
        false
    }
    may(&parsed.ops, chars)
}

/// `_in_class`.
fn in_class(items: &[SetItem], c: char) -> bool {
    let negated = items.first() == Some(&SetItem::Negate);
    let mut matched = false;
    for item in &items[usize::from(negated)..] {
        matched |= match item {
            SetItem::Literal(v) => u32::from(c) == *v,
            SetItem::Range(lo, hi) => (*lo..=*hi).contains(&u32::from(c)),
            SetItem::Category(cat) => cat.contains(c),
            SetItem::Negate => return true,
        };
    }
    matched != negated
}

/// `_value_format`: JSON for decoded values, raw text for strings.
fn value_format(
    schema: &Value,
    parameters: &Map<String, Value>,
    json_values: bool,
    closers: &[String],
) -> Option<Value> {
    if *schema == Value::Bool(false) {
        return None;
    }
    let types = schema_types(schema);
    if json_values || (!types.is_empty() && !types.iter().any(|t| t == "string")) {
        return json_format(json_value_schema(schema, parameters), closers);
    }
    match text_format(schema, closers)? {
        Text::Any => Some(any_text()),
        Text::Format(f) => Some(f),
    }
}

/// `_json_format`: JSON, unless a closer reads as JSON syntax or XGrammar
/// refuses the schema.
fn json_format(schema: Value, closers: &[String]) -> Option<Value> {
    if !closers.is_empty()
        && (closers.iter().any(|c| c.chars().all(|ch| JSON_SYNTAX.contains(ch))) || !json_compiles(&schema))
    {
        return None;
    }
    Some(serde_json::json!({"type": "json_schema", "json_schema": schema, "excludes": closers}))
}

/// `_arguments_format`.
pub fn arguments_format(
    field: &Field,
    parameters: &Map<String, Value>,
    strict: bool,
    sorted_arguments: bool,
) -> Result<Option<Value>, EncodeError> {
    let closers = super::closers(field).unwrap_or_default();
    if field.content == "json" && field.content_args.is_empty() {
        let piece = Piece {
            text: r"[\s\S]*".into(),
            endings: r#"[\s\S]*[\t\n\r "+,\-.0-9:E\[\]aeflnrstu{}]"#.into(),
            holds: false,
        };
        if spells_closer(&closers, &[piece], false) {
            return Ok(None);
        }
        let schema = if strict { Value::Object(parameters.clone()) } else { serde_json::json!({"type": "object"}) };
        return Ok(json_format(schema, &closers));
    }
    if field.content == "xml-inline" {
        return Xml::new(&field.content_args, parameters, &closers)
            .map_or(Ok(None), |x| x.format(strict, sorted_arguments));
    }
    Ok(None)
}

/// An `xml-inline` format's framing.
struct Xml<'a> {
    args: &'a Map<String, Value>,
    parameters: &'a Map<String, Value>,
    closers: Vec<String>,
    key_pattern: String,
    begins: Vec<String>,
    middles: Vec<String>,
    ends: Vec<String>,
    /// Where a value may also end: before the next parameter's opener.
    follows: Vec<String>,
    json_values: bool,
}

impl<'a> Xml<'a> {
    fn new(args: &'a Map<String, Value>, parameters: &'a Map<String, Value>, closers: &[String]) -> Option<Xml<'a>> {
        if args.keys().any(|k| !["tag_pattern", "value_parser", "merge_duplicates"].contains(&k.as_str())) {
            return None;
        }
        let text_parser = serde_json::json!({"name": "text"});
        let value_parser = args.get("value_parser").filter(|v| crate::pycompat::truthy(v)).unwrap_or(&text_parser);
        let name = value_parser.get("name").and_then(Value::as_str);
        let json_args = value_parser.get("args").is_some_and(crate::pycompat::truthy);
        if !matches!(name, Some("text" | "json")) || (name == Some("json") && json_args) {
            return None;
        }
        let (before_key, key_pattern, after_key) = split_group(args.get("tag_pattern")?.as_str()?, "key")?;
        let (before_value, _, after_value) = split_group(&after_key, "value")?;
        let begins = literals(&before_key, false, false).filter(|l| !l.is_empty())?;
        let middles = literals(&before_value, false, false).filter(|l| !l.is_empty())?;
        let all_ends = literals(&after_value, false, true).filter(|l| !l.is_empty())?;
        let aheads: Vec<(String, String)> =
            all_ends.iter().filter_map(|e| e.split_once(AHEAD).map(|(b, a)| (b.to_string(), a.to_string()))).collect();
        let ends: Vec<String> = all_ends.into_iter().filter(|e| !e.contains(AHEAD)).collect();
        // A value may also end where the next parameter opens, if the
        // template looks ahead for its only opener.
        let mut ahead_set: Vec<&String> = aheads.iter().map(|(_, a)| a).collect();
        ahead_set.sort();
        ahead_set.dedup();
        let mut begin_set: Vec<&String> = begins.iter().collect();
        begin_set.sort();
        begin_set.dedup();
        if ends.is_empty() || (!aheads.is_empty() && (begins.len() > 1 || ahead_set != begin_set)) {
            return None;
        }
        let follows = aheads.iter().map(|(b, a)| format!("{b}{a}")).collect();
        Some(Xml {
            args,
            parameters,
            closers: closers.to_vec(),
            key_pattern,
            begins,
            middles,
            ends,
            follows,
            json_values: name == Some("json"),
        })
    }

    fn excludes(&self) -> Vec<String> {
        let mut all = self.closers.clone();
        if !self.follows.is_empty() {
            all.extend(self.follows.iter().cloned());
            all.extend(self.ends.iter().cloned());
        }
        all
    }

    /// The raw text of a value.
    fn text(&self) -> Value {
        let excludes = self.excludes();
        if excludes.is_empty() {
            any_text()
        } else {
            serde_json::json!({"type": "any_text", "excludes": excludes})
        }
    }

    fn starts(&self) -> Vec<String> {
        if self.follows.is_empty() {
            self.begins.clone()
        } else {
            vec![String::new()]
        }
    }

    fn tag(&self, begin: &str, value: Value, fits: &[String], last: bool) -> Value {
        let mut fits = fits.to_vec();
        if !self.follows.is_empty() && !last {
            fits = fits.iter().flat_map(|e| ["", "\n"].map(|sep| format!("{e}{sep}{}", self.begins[0]))).collect();
            fits.extend(self.follows.iter().cloned());
        }
        tag(begin, value, Value::from(fits))
    }

    fn separated(&self, tags: Vec<Value>) -> Value {
        if self.follows.is_empty() {
            seq(vec![separator(), one_of(tags)])
        } else {
            one_of(tags)
        }
    }

    /// `body` after the opener of its first parameter.
    fn arguments(&self, body: Value, optional_body: bool) -> Value {
        if self.follows.is_empty() {
            return body;
        }
        let body = seq(vec![separator(), const_strings(&self.begins), body]);
        if optional_body {
            optional(body)
        } else {
            body
        }
    }

    fn any_parameter(&self, last: bool) -> Value {
        let name = serde_json::json!({"type": "regex", "pattern": self.key_pattern});
        let content = seq(vec![name, const_strings(&self.middles), self.text()]);
        self.separated(self.starts().iter().map(|s| self.tag(s, content.clone(), &self.ends, last)).collect())
    }

    fn any_parameters(&self) -> Value {
        let more = serde_json::json!({"type": "star", "content": self.any_parameter(false)});
        if self.follows.is_empty() {
            more
        } else {
            self.arguments(seq(vec![more, self.any_parameter(true)]), true)
        }
    }

    /// The arguments the parser reads from `written`, unless a closer ends
    /// the call in it.
    fn read_back(&self, written: &str) -> Option<Map<String, Value>> {
        if self.closers.iter().any(|c| written.contains(c.as_str())) {
            return None;
        }
        match parse(written, "xml-inline", self.args) {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        }
    }

    /// `parameter(key, ..., last=False)` and `(..., last=True)`: the key's
    /// tag before another parameter and as the last one (both read back the
    /// same texts, so once).
    fn parameter(
        &self,
        key: &str,
        value: &Value,
        choices: Option<&[String]>,
    ) -> Result<Option<(Value, Value)>, EncodeError> {
        let encodable = crate::pycompat::re::fullmatch(&self.key_pattern, key) == Some(true)
            && self.begins.iter().all(|b| {
                self.middles.iter().all(|m| {
                    self.ends.iter().all(|e| {
                        let keys: Vec<String> = self
                            .read_back(&format!("{b}{key}{m}0{e}"))
                            .map(|r| r.keys().cloned().collect())
                            .unwrap_or_default();
                        keys == [key]
                    })
                })
            });
        if !encodable {
            return Err(EncodeError(format!(
                "parameter name {} cannot be encoded in tool calls",
                crate::pycompat::repr::repr_str(key)
            )));
        }
        let starts = self.starts();
        let both = |tags: &dyn Fn(bool) -> Vec<Value>| Some((self.separated(tags(false)), self.separated(tags(true))));
        let Some(choices) = choices else {
            let begins: Vec<String> =
                starts.iter().flat_map(|s| self.middles.iter().map(move |m| format!("{s}{key}{m}"))).collect();
            return Ok(both(&|last| begins.iter().map(|b| self.tag(b, value.clone(), &self.ends, last)).collect()));
        };
        // Optional framing whitespace must not change a text choice.
        let (mut groups, mut framed) = (Vec::new(), Vec::<&String>::new());
        for (b, s) in self.begins.iter().zip(&starts) {
            for m in &self.middles {
                let mut by_ends: Vec<(Vec<String>, Vec<String>)> = Vec::new();
                for choice in choices {
                    let fits: Vec<String> = self
                        .ends
                        .iter()
                        .filter(|e| {
                            self.read_back(&format!("{b}{key}{m}{choice}{e}"))
                                .is_some_and(|r| r.len() == 1 && r.get(key) == Some(&Value::String(choice.clone())))
                        })
                        .cloned()
                        .collect();
                    match by_ends.iter_mut().find(|(f, _)| *f == fits) {
                        Some((_, group)) => group.push(choice.clone()),
                        None => by_ends.push((fits, vec![choice.clone()])),
                    }
                }
                for (fits, group) in by_ends {
                    if !fits.is_empty() {
                        framed.extend(choices.iter().filter(|c| group.contains(c)));
                        groups.push((format!("{s}{key}{m}"), group, fits));
                    }
                }
            }
        }
        if choices.iter().any(|c| !framed.contains(&c)) {
            return Ok(None);
        }
        Ok(both(&|last| groups.iter().map(|(b, group, fits)| self.tag(b, const_strings(group), fits, last)).collect()))
    }

    fn format(&self, strict: bool, sorted_arguments: bool) -> Result<Option<Value>, EncodeError> {
        let properties = self.parameters.get("properties").filter(|p| !p.is_null());
        let typed = match properties {
            None => true,
            Some(Value::Object(props)) => self.json_values || props.values().all(typed_by_parser),
            Some(_) => false,
        };
        // Other schema shapes cannot be typed by the XML parser.
        let other_keys = self
            .parameters
            .keys()
            .any(|k| !ANNOTATIONS.contains(&k.as_str()) && !OBJECT_KEYWORDS.contains(&k.as_str()));
        if strict && (other_keys || !typed) {
            return Ok(None);
        }
        let required_value = self.parameters.get("required").filter(|r| crate::pycompat::truthy(r));
        let mut names: Vec<String> = Vec::new();
        let mut required: Vec<String> = Vec::new();
        if let (true, Some(Value::Object(props))) = (strict, properties) {
            // Required entries that are no names leave the tool to the JSON schema.
            match required_value {
                None => {}
                Some(Value::Array(items)) => match items.iter().map(|k| k.as_str().map(str::to_string)).collect() {
                    Some(r) => required = r,
                    None => return Ok(None),
                },
                Some(_) => return Ok(None),
            }
            names = props.keys().cloned().collect();
            names.extend(required.iter().filter(|k| !props.contains_key(k.as_str())).cloned());
        }
        let piece = Piece { text: format!("(?:{})", self.key_pattern), endings: endings(&names), holds: false };
        let pieces = [
            literal_piece(&self.begins, SEPARATOR),
            piece,
            literal_piece(&self.middles, ""),
            Piece { text: r"[\s\S]*".into(), endings: r"[\s\S]+".into(), holds: false },
            literal_piece(&self.ends, ""),
        ];
        if spells_closer(&self.closers, &pieces, true) {
            return Ok(None);
        }
        if !strict {
            return Ok(Some(self.any_parameters()));
        }
        let Some(Value::Object(props)) = properties else {
            return Ok(match self.parameters.get("additionalProperties").unwrap_or(&Value::Bool(true)) {
                Value::Bool(false) => Some(const_string("")),
                Value::Bool(true) => Some(self.any_parameters()),
                Value::Object(o) if o.is_empty() => Some(self.any_parameters()),
                _ => None,
            });
        };
        // A declared key repeated as an extra one would bypass its schema.
        if self.parameters.get("additionalProperties").is_some_and(|a| *a != Value::Bool(false)) {
            return Ok(None);
        }
        if names.is_empty() {
            return Ok(Some(const_string("")));
        }
        let mut more: Vec<(String, Value)> = Vec::new();
        let mut last: Vec<(String, Value)> = Vec::new();
        // Every value ends at a closer or its own end, whatever its format.
        let mut value_ends = self.closers.clone();
        value_ends.extend(self.follows.iter().cloned());
        value_ends.extend(self.ends.iter().cloned());
        for key in &names {
            // A required name without a schema takes any value.
            let schema = props.get(key).unwrap_or(&Value::Bool(true));
            let Some(mut value) = value_format(schema, self.parameters, self.json_values, &value_ends) else {
                return Ok(None);
            };
            let choices = match value.get("type").and_then(Value::as_str) {
                Some("const_string" | "or") => string_choices(schema),
                _ => None,
            };
            if value == any_text() {
                value = self.text();
            }
            let Some((joined, ending)) = self.parameter(key, &value, choices.as_deref())? else { return Ok(None) };
            set(&mut more, key, joined);
            set(&mut last, key, ending);
        }
        let mut orders = vec![names.clone()];
        let mut sorted = names.clone();
        sorted.sort();
        if sorted_arguments && sorted != names {
            orders.push(sorted);
        }
        let get = |table: &[(String, Value)], key: &str| {
            table.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()).unwrap_or(Value::Null)
        };
        let ordered = |keys: &[String]| -> Value {
            let before: Vec<Value> = keys
                .iter()
                .map(|k| if required.contains(k) { get(&more, k) } else { optional(get(&more, k)) })
                .collect();
            if self.follows.is_empty() {
                return seq(before);
            }
            fn ends_at(
                keys: &[String],
                before: &[Value],
                last: &dyn Fn(&str) -> Value,
                start: usize,
                stop: usize,
            ) -> Value {
                if stop - start == 1 {
                    return last(&keys[start]);
                }
                // Halving keeps the tag O(n log n) in size and O(log n) deep.
                let middle = (start + stop) / 2;
                let mut second = before[start..middle].to_vec();
                second.push(ends_at(keys, before, last, middle, stop));
                one_of(vec![ends_at(keys, before, last, start, middle), seq(second)])
            }
            // The last parameter follows every required one.
            let first = keys.iter().rposition(|k| required.contains(k)).unwrap_or(0);
            let mut out = before[..first].to_vec();
            out.push(ends_at(keys, &before, &|k| get(&last, k), first, keys.len()));
            seq(out)
        };
        let body = one_of(orders.iter().map(|keys| ordered(keys)).collect());
        Ok(Some(self.arguments(body, required.is_empty())))
    }
}

/// `table[key] = value`, keeping the first insertion's place.
fn set(table: &mut Vec<(String, Value)>, key: &str, value: Value) {
    match table.iter_mut().find(|(k, _)| k == key) {
        Some((_, v)) => *v = value,
        None => table.push((key.to_string(), value)),
    }
}
