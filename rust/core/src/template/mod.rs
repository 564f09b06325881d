//! Chat templates as Hugging Face `apply_chat_template` runs them: Jinja with
//! `trim_blocks`/`lstrip_blocks`, loop controls, Python string methods,
//! `tojson` as `json.dumps`, `raise_exception` and `strftime_now`, in a
//! sandbox with a fuel limit.

pub mod cohere;
mod content_format;
pub mod deepseek;
pub mod harmony;
pub mod inkling;
pub mod kimi_k3;

pub use content_format::ContentFormat;

use minijinja::value::{Kwargs, Value as JValue};
use minijinja::{Environment, Error, ErrorKind, UndefinedBehavior};

use crate::pycompat::json::{dumps_with, DumpOptions};

/// Instructions a template may execute before it is stopped (a runaway or
/// hostile template cannot pin a core).
const FUEL: u64 = 50_000_000;

#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    /// The template raised (`raise_exception`) or failed while rendering.
    #[error("{0}")]
    Render(String),
    /// The template does not compile.
    #[error("invalid chat template: {0}")]
    Syntax(String),
    /// A code renderer cannot be built for the vocabulary.
    #[error("tokenizer mode {0}: {1}")]
    Renderer(&'static str, String),
}

/// A compiled chat template.
pub struct ChatTemplate {
    env: Environment<'static>,
    /// The source names the `developer` role (`_detect_developer_role_support`).
    pub supports_developer: bool,
    /// The content format it expects (`_detect_content_format`).
    pub content_format: ContentFormat,
}

fn raise_exception(message: String) -> Result<JValue, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, message))
}

pub(crate) fn strftime_now(format: String) -> String {
    // Only the formats templates use for dates; local time is UTC here.
    let secs =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    let days = secs.div_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    let month = MONTHS[(m - 1) as usize];
    format
        .replace("%Y", &y.to_string())
        .replace("%m", &format!("{m:02}"))
        .replace("%d", &format!("{d:02}"))
        .replace("%B", month)
        .replace("%b", &month[..3])
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `tojson` as transformers defines it: `json.dumps(x, ensure_ascii=False,
/// indent=None, separators=None, sort_keys=False)`.
fn tojson(value: JValue, kwargs: Kwargs) -> Result<JValue, Error> {
    let json: serde_json::Value =
        serde_json::to_value(&value).map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
    let indent: Option<JValue> = kwargs.get("indent")?;
    let separators: Option<Vec<String>> = kwargs.get("separators")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    let ensure_ascii: Option<bool> = kwargs.get("ensure_ascii")?;
    kwargs.assert_all_used()?;
    let indent = match indent {
        None => None,
        Some(v) if v.is_none() => None,
        Some(v) => match v.as_i64() {
            Some(n) => Some(" ".repeat(n.max(0) as usize)),
            None => Some(v.as_str().unwrap_or("").to_string()),
        },
    };
    let separators = separators.and_then(|s| (s.len() == 2).then(|| (s[0].clone(), s[1].clone())));
    let opts = DumpOptions {
        indent,
        separators,
        sort_keys: sort_keys.unwrap_or(false),
        ensure_ascii: ensure_ascii.unwrap_or(false),
    };
    Ok(JValue::from_safe_string(dumps_with(&json, &opts)))
}

impl ChatTemplate {
    pub fn new(source: &str) -> Result<ChatTemplate, TemplateError> {
        Self::build(source, true)
    }

    /// A template in a bare sandbox: no `raise_exception` or `strftime_now`
    /// (as vLLM's inline-system probe renders it), so calling one fails.
    pub fn bare(source: &str) -> Result<ChatTemplate, TemplateError> {
        Self::build(source, false)
    }

    fn build(source: &str, hf_globals: bool) -> Result<ChatTemplate, TemplateError> {
        let mut env = Environment::new();
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(false)
            .build()
            .map_err(|e| TemplateError::Syntax(e.to_string()))?;
        env.set_syntax(syntax);
        env.set_undefined_behavior(UndefinedBehavior::Lenient);
        env.set_fuel(Some(FUEL));
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_filter("tojson", tojson);
        // Jinja's `iterable`: `None` is not (templates test `tools is iterable`).
        env.add_test("iterable", |v: JValue| !v.is_none() && !v.is_undefined() && v.try_iter().is_ok());
        if hf_globals {
            env.add_function("raise_exception", raise_exception);
            env.add_function("strftime_now", strftime_now);
        }
        let jinja = generation_blocks(source);
        let content_format = content_format::detect(&jinja);
        env.add_template_owned("chat", jinja).map_err(|e| TemplateError::Syntax(e.to_string()))?;
        let supports_developer = source.contains("\"developer\"") || source.contains("'developer'");
        Ok(ChatTemplate { env, supports_developer, content_format })
    }

    /// Render with the given variables (a JSON object).
    pub fn render(&self, vars: &serde_json::Value) -> Result<String, TemplateError> {
        let template = self.env.get_template("chat").map_err(|e| TemplateError::Syntax(e.to_string()))?;
        template.render(JValue::from(minijinja::value::Serde(vars))).map_err(|e| {
            // `raise_exception` messages are the template author's words.
            let detail = e.detail().map(str::to_string).unwrap_or_else(|| e.to_string());
            let python = python_add_error(&detail)
                .or_else(|| python_len_error(&detail))
                .or_else(|| python_unsafe_method_error(&detail));
            TemplateError::Render(python.unwrap_or(detail))
        })
    }
}

/// Jinja's `+` is Python's, and vLLM reports Python's `TypeError` text: map
/// minijinja's "tried to use + operator on unsupported types A and B".
/// (minijinja has one number kind; it is reported as `int`.)
fn python_add_error(detail: &str) -> Option<String> {
    let kinds = detail.strip_prefix("tried to use + operator on unsupported types ")?;
    let (lhs, rhs) = kinds.split_once(" and ")?;
    let py = |kind: &str| match kind {
        "none" => Some("NoneType"),
        "bool" => Some("bool"),
        "number" => Some("int"),
        "string" => Some("str"),
        "bytes" => Some("bytes"),
        "sequence" => Some("list"),
        "map" => Some("dict"),
        _ => None,
    };
    let (lhs, rhs) = (py(lhs)?, py(rhs)?);
    Some(match lhs {
        "str" | "list" => format!("can only concatenate {lhs} (not \"{rhs}\") to {lhs}"),
        _ => format!("unsupported operand type(s) for +: '{lhs}' and '{rhs}'"),
    })
}

/// vLLM renders in Jinja's immutable sandbox, which refuses the methods
/// that change a list or dict in place (`modifies_known_mutable`); minijinja
/// has no such methods at all.
fn python_unsafe_method_error(detail: &str) -> Option<String> {
    let (kind, method) = detail.split_once(" has no method named ")?;
    let (py, mutators): (&str, &[&str]) = match kind {
        "map" => ("dict", &["clear", "pop", "popitem", "setdefault", "update"]),
        "sequence" => ("list", &["append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort"]),
        _ => return None,
    };
    mutators.contains(&method).then(|| format!("access to attribute '{method}' of '{py}' object is unsafe."))
}

/// `len()` of a value without one, as Python reports it.
fn python_len_error(detail: &str) -> Option<String> {
    let kind = match detail.strip_prefix("cannot calculate length of value of type ")? {
        "none" => "NoneType",
        "number" => "int",
        "bool" => "bool",
        _ => return None,
    };
    Some(format!("object of type '{kind}' has no len()"))
}

/// What the chat template tells `/v1/messages/render`, probed once per
/// server on first use (`render::anthropic`).
#[derive(Debug, Clone)]
pub struct Probes {
    /// `_should_merge_inline_system`: the template rejects a non-leading
    /// system message.
    pub merge_inline_system: bool,
    /// `DisabledThinkingEffortResolver`: `"none"` when the template honours
    /// it, else `"low"`.
    pub disabled_thinking_effort: &'static str,
}

/// Transformers' `{% generation %}` … `{% endgeneration %}` (its
/// assistant-mask extension) render their body unchanged: rewritten as an
/// always-true `if`, whitespace control kept.
fn generation_blocks(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(open) = rest.find("{%") {
        out.push_str(&rest[..open]);
        let tag = &rest[open + 2..];
        let Some(close) = tag.find("%}") else { break };
        let inner = &tag[..close];
        let (lead, body) = inner.strip_prefix('-').map_or(("", inner), |b| ("-", b));
        let (body, trail) = body.strip_suffix('-').map_or((body, ""), |b| (b, "-"));
        let rewritten = match body.trim() {
            "generation" => Some("if true"),
            "endgeneration" => Some("endif"),
            _ => None,
        };
        match rewritten {
            Some(stmt) => out.push_str(&format!("{{%{lead} {stmt} {trail}%}}")),
            None => out.push_str(&rest[open..open + 2 + close + 2]),
        }
        rest = &tag[close + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn generation_blocks_render_their_body() {
        let t = ChatTemplate::bare("a{%- generation -%}  b  {%- endgeneration %} c{% if x %}y{% endif %}").unwrap();
        assert_eq!(t.render(&serde_json::json!({"x": true})).unwrap(), "ab cy");
        assert_eq!(super::generation_blocks("{% if %}{%generation%}"), "{% if %}{% if true %}");
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn adding_a_mapping_to_a_string_fails_with_pythons_message() {
        let t = ChatTemplate::new("{{ 'a' + d }}").unwrap();
        match t.render(&json!({"d": {"k": 1}})) {
            Err(TemplateError::Render(m)) => assert_eq!(m, "can only concatenate str (not \"dict\") to str"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn python_string_methods_and_tojson() {
        let t = ChatTemplate::new("{{ s.split('</think>')[0].rstrip('\\n') }}|{{ d | tojson }}|{{ '  x '.strip() }}")
            .unwrap();
        let out = t.render(&json!({"s": "a\n</think>b", "d": {"k": [1, "é"]}})).unwrap();
        assert_eq!(out, "a|{\"k\": [1, \"é\"]}|x");
    }

    #[test]
    fn mutating_methods_are_refused_as_the_sandbox_refuses_them() {
        let t = ChatTemplate::new("{% set d = {} %}{{ d.update({'a': 1}) }}").expect("parses");
        match t.render(&serde_json::json!({})) {
            Err(TemplateError::Render(m)) => assert_eq!(m, "access to attribute 'update' of 'dict' object is unsafe."),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn raise_exception_is_an_error_with_the_message() {
        let t = ChatTemplate::new("{{ raise_exception('bad role') }}").unwrap();
        match t.render(&json!({})) {
            Err(TemplateError::Render(m)) => assert_eq!(m, "bad role"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn blocks_are_trimmed_like_hf() {
        let t = ChatTemplate::new("{%- for m in ms %}\n  {{- m }}\n{%- endfor %}\n").unwrap();
        assert_eq!(t.render(&json!({"ms": [1, 2]})).unwrap(), "12");
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_512), (2026, 2, 28));
    }
}
