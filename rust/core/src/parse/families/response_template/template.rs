//! Loading a `response_template` (transformers' schema, version 1): its
//! fields, their delimiters and the start anchor, with the loader's
//! validation messages.

use onig::{Regex, RegexOptions, Syntax};
use regex_automata::hybrid::dfa::DFA;
use regex_automata::util::syntax;
use serde_json::{Map, Value};

use super::content::validate_transform;

/// A delimiter: literals or a regex, both matched with Python's semantics
/// (DOTALL); the lazy DFA answers whether held text could still become one.
pub struct Delim {
    pub re: Regex,
    /// For partial matches; `None` when the pattern is beyond Rust's syntax.
    pub dfa: Option<DFA>,
    pub literals: Option<Vec<String>>,
    /// The regex's source (for literals, their escaped alternation).
    pub pattern: String,
    /// One literal is a strict prefix of another.
    pub can_extend: bool,
    /// The pattern's named groups.
    pub names: Vec<String>,
}

pub struct Field {
    pub name: String,
    pub open: Option<Delim>,
    pub close: Option<Delim>,
    pub content: String,
    pub content_args: Map<String, Value>,
    pub repeats: bool,
    pub join: Option<String>,
    pub transform: Option<Value>,
    pub transform_each: bool,
    /// The value at close is wanted (set by the serving layer): otherwise
    /// the body is not kept.
    pub valued: bool,
}

pub struct Template {
    pub defaults: Map<String, Value>,
    pub fields: Vec<Field>,
    /// The field without an opener, collecting text outside the others.
    pub implicit: Option<usize>,
    pub anchor: Delim,
}

impl Template {
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    pub fn index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// The text after the last start-anchor match (all of it when none).
    pub fn after_last_anchor<'t>(&self, text: &'t str) -> &'t str {
        self.last_anchor_end(text).map_or(text, |e| &text[e..])
    }

    /// Where the last start-anchor match in `text` ends (`finditer`).
    pub fn last_anchor_end(&self, text: &str) -> Option<usize> {
        let mut end = None;
        let mut at = 0;
        let mut region = onig::Region::new();
        while at <= text.len() {
            let Some(s) = self.anchor.re.search_with_options(
                text,
                at,
                text.len(),
                onig::SearchOptions::SEARCH_OPTION_NONE,
                Some(&mut region),
            ) else {
                break;
            };
            let e = region.pos(0).map_or(s, |(_, e)| e);
            end = Some(e);
            at = if e > s { e } else { next_char(text, e) };
        }
        end
    }
}

fn next_char(text: &str, at: usize) -> usize {
    text[at..].chars().next().map_or(text.len() + 1, |c| at + c.len_utf8())
}

/// `sorted(names)` as Python prints a list of strings.
pub fn sorted_repr<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut names: Vec<&str> = names.into_iter().collect();
    names.sort_unstable();
    names.dedup();
    let items: Vec<String> = names.iter().map(|n| crate::pycompat::repr::repr_str(n)).collect();
    format!("[{}]", items.join(", "))
}

fn compile(pattern: &str, scope: &str, key: &str) -> Result<Delim, String> {
    let re = Regex::with_options(pattern, RegexOptions::REGEX_OPTION_MULTILINE, Syntax::python())
        .map_err(|e| format!("{scope}: invalid {key} regex: {e}"))?;
    let mut names = Vec::new();
    re.foreach_name(|name, _| {
        names.push(name.to_string());
        true
    });
    Ok(Delim { re, dfa: partial_dfa(pattern), literals: None, pattern: pattern.to_string(), can_extend: false, names })
}

fn partial_dfa(pattern: &str) -> Option<DFA> {
    DFA::builder().syntax(syntax::Config::new().dot_matches_new_line(true)).build(pattern).ok()
}

fn literal_delim(literals: Vec<String>) -> Result<Delim, String> {
    let mut ordered = literals.clone();
    ordered.sort_by_key(|s| std::cmp::Reverse(s.chars().count()));
    let py: Vec<String> = ordered.iter().map(|s| crate::pycompat::re::escape(s)).collect();
    let rs: Vec<String> = ordered.iter().map(|s| regex_escape(s)).collect();
    let pattern = py.join("|");
    let re = Regex::with_options(&pattern, RegexOptions::REGEX_OPTION_MULTILINE, Syntax::python())
        .map_err(|e| e.to_string())?;
    let can_extend = literals.iter().any(|a| literals.iter().any(|b| a != b && a.starts_with(b.as_str())));
    let dfa = partial_dfa(&rs.join("|"));
    Ok(Delim { re, dfa, literals: Some(literals), pattern, can_extend, names: Vec::new() })
}

fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `_compile_anchor`: `None` when the field names neither key.
fn anchor(
    scope: &str,
    spec: &Map<String, Value>,
    literal_key: &str,
    pattern_key: &str,
) -> Result<Option<Delim>, String> {
    if spec.contains_key(literal_key) && spec.contains_key(pattern_key) {
        return Err(format!("{scope}: cannot specify both '{literal_key}' and '{pattern_key}'"));
    }
    if let Some(raw) = spec.get(literal_key) {
        let literals = match raw {
            Value::String(s) => vec![s.clone()],
            Value::Array(items) => {
                if items.is_empty() {
                    return Err(format!("{scope}: '{literal_key}' list must contain at least one literal"));
                }
                let mut out: Vec<String> = Vec::new();
                for item in items {
                    let Value::String(s) = item else {
                        return Err(format!("{scope}: '{literal_key}' list must contain only strings"));
                    };
                    if !out.contains(s) {
                        out.push(s.clone());
                    }
                }
                out
            }
            other => {
                return Err(format!(
                    "{scope}: '{literal_key}' must be a string or list of strings, got {}",
                    crate::pycompat::type_name(other)
                ))
            }
        };
        if literals.iter().any(String::is_empty) {
            return Err(format!("{scope}: '{literal_key}' literals cannot be empty strings"));
        }
        return literal_delim(literals).map(Some);
    }
    match spec.get(pattern_key) {
        None => Ok(None),
        Some(Value::String(p)) => compile(p, scope, pattern_key).map(Some),
        Some(other) => Err(format!(
            "{scope}: invalid {pattern_key} regex: first argument must be string or compiled pattern, not {}",
            crate::pycompat::type_name(other)
        )),
    }
}

const FIELD_KEYS: [&str; 11] = [
    "open",
    "open_pattern",
    "close",
    "close_pattern",
    "content",
    "content_args",
    "repeats",
    "join",
    "optional",
    "transform",
    "transform_each",
];

pub const CONTENT_PARSERS: [&str; 7] = ["text", "int", "float", "bool", "json", "xml-inline", "kv-lines"];

fn build_field(name: &str, spec: &Value) -> Result<Field, String> {
    let scope = format!("Field '{name}'");
    let Value::Object(spec) = spec else { return Err(format!("{scope} must be a dict")) };
    let unknown: Vec<&str> = spec.keys().map(String::as_str).filter(|k| !FIELD_KEYS.contains(k)).collect();
    if !unknown.is_empty() {
        return Err(format!("{scope}: unknown keys {}", sorted_repr(unknown)));
    }
    let content = match spec.get("content") {
        None => "text".to_string(),
        Some(Value::String(c)) if CONTENT_PARSERS.contains(&c.as_str()) => c.clone(),
        Some(other) => {
            let shown = match other {
                Value::String(s) => s.clone(),
                v => crate::pycompat::repr::repr_value(v),
            };
            return Err(format!(
                "{scope}: unknown content parser '{shown}'. Available: {}",
                sorted_repr(CONTENT_PARSERS)
            ));
        }
    };
    let open = anchor(&scope, spec, "open", "open_pattern")?;
    let close = anchor(&scope, spec, "close", "close_pattern")?;
    let truthy = |key: &str| spec.get(key).is_some_and(crate::pycompat::truthy);
    let join = match spec.get("join") {
        None | Some(Value::Null) => None,
        Some(Value::String(j)) => Some(j.clone()),
        Some(other) => {
            return Err(format!("{scope}: 'join' must be a string, got {}", crate::pycompat::type_name(other)))
        }
    };
    if join.is_some() && !truthy("repeats") {
        return Err(format!("{scope}: 'join' requires 'repeats': true"));
    }
    let transform = spec.get("transform").filter(|t| !t.is_null()).cloned();
    let transform_each = match spec.get("transform_each") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(format!("{scope}: transform_each must be a bool, got {}", crate::pycompat::type_name(other)))
        }
    };
    if transform_each && transform.is_none() {
        return Err(format!("{scope}: transform_each is set but no transform was provided"));
    }
    match &transform {
        Some(t) => validate_transform(&scope, t)?,
        None => {
            let names: Vec<&str> =
                open.iter().chain(close.iter()).flat_map(|d| d.names.iter().map(String::as_str)).collect();
            if !names.is_empty() {
                return Err(format!(
                    "{scope}: open_pattern/close_pattern declares named group(s) {}, but the field has no 'transform'. Named captures are only surfaced through a 'transform' template (where they appear alongside 'content'). Either add a 'transform' that uses the captures, or remove the named groups from the pattern.",
                    sorted_repr(names)
                ));
            }
        }
    }
    let content_args = match spec.get("content_args") {
        Some(Value::Object(a)) => a.clone(),
        _ => Map::new(),
    };
    Ok(Field {
        name: name.to_string(),
        open,
        close,
        content,
        content_args,
        repeats: truthy("repeats"),
        join,
        transform,
        transform_each,
        valued: false,
    })
}

/// `load_response_template`.
pub fn load(spec: &Value) -> Result<Template, String> {
    let Value::Object(spec) = spec else {
        return Err(format!("response_template must be a dict, got {}", crate::pycompat::type_name(spec)));
    };
    let version_ok = match spec.get("version") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64() == Some(1.0),
        Some(_) => false,
    };
    if !version_ok {
        let shown = spec.get("version").map(crate::pycompat::repr::repr_value).unwrap_or_default();
        return Err(format!("Unsupported response_template version: {shown}"));
    }
    let known = ["version", "defaults", "fields", "start_anchor", "start_anchor_pattern"];
    let unknown: Vec<&str> = spec.keys().map(String::as_str).filter(|k| !known.contains(k)).collect();
    if !unknown.is_empty() {
        return Err(format!("Unknown keys in response_template: {}", sorted_repr(unknown)));
    }
    let defaults = match spec.get("defaults") {
        None => Map::new(),
        Some(Value::Object(d)) => d.clone(),
        Some(_) => return Err("response_template.defaults must be a dict".into()),
    };
    let raw_fields = match spec.get("fields") {
        Some(Value::Object(f)) if !f.is_empty() => f,
        _ => return Err("response_template.fields must be a non-empty dict".into()),
    };
    let fields = raw_fields.iter().map(|(n, f)| build_field(n, f)).collect::<Result<Vec<_>, _>>()?;
    let implicit: Vec<&str> = fields.iter().filter(|f| f.open.is_none()).map(|f| f.name.as_str()).collect();
    if implicit.len() > 1 {
        return Err(format!(
            "At most one field may omit 'open'/'open_pattern' (that field becomes the implicit-open / leftover sink). Found: {}",
            implicit.join(", ")
        ));
    }
    let implicit = fields.iter().position(|f| f.open.is_none());
    let anchor = anchor("response_template", spec, "start_anchor", "start_anchor_pattern")?
        .ok_or_else(|| "response_template must define 'start_anchor' or 'start_anchor_pattern'.".to_string())?;
    Ok(Template { defaults, fields, implicit, anchor })
}
