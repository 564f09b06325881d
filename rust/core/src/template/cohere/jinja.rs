//! melody's Jinja environment: `trim_blocks` and `lstrip_blocks`, lenient
//! undefined values, no auto-escaping, and its own `tojson` (compact JSON
//! with Python's `", "` / `": "` separators, nothing escaped for HTML).

use std::sync::LazyLock;

use minijinja::value::Value as JValue;
use minijinja::{AutoEscape, Environment, Error};
use serde_json::{Map, Value};

use super::prepare::add_spaces;
use super::{Format, RenderError};

/// A request's own template may run this many instructions.
const FUEL: u64 = 50_000_000;

const CMD3: [(&str, &str); 3] = [
    ("cmd3-v1", include_str!("templates/cmd3-v1.jinja")),
    ("cmd3-v2", include_str!("templates/cmd3-v2.jinja")),
    ("cmd3-v3", include_str!("templates/cmd3-v3.jinja")),
];
const CMD4: [(&str, &str); 3] = [
    ("cmd4-v1", include_str!("templates/cmd4-v1.jinja")),
    ("cmd4-v2", include_str!("templates/cmd4-v2.jinja")),
    ("cmd4-hf", include_str!("templates/cmd4-hf.jinja")),
];

fn tojson(value: JValue) -> Result<JValue, Error> {
    let text =
        serde_json::to_string(&value).map_err(|e| Error::new(minijinja::ErrorKind::BadSerialization, e.to_string()))?;
    Ok(JValue::from_safe_string(add_spaces(&text)))
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    let syntax = minijinja::syntax::SyntaxConfig::builder().trim_blocks(true).lstrip_blocks(true).build();
    if let Ok(syntax) = syntax {
        env.set_syntax(syntax);
    }
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.add_filter("tojson", tojson);
    env
}

/// The built-in templates, compiled once.
static BUILTIN: LazyLock<Result<Environment<'static>, String>> = LazyLock::new(|| {
    let mut env = environment();
    for (id, source) in CMD3.into_iter().chain(CMD4) {
        env.add_template(id, source).map_err(|e| e.to_string())?;
    }
    Ok(env)
});

/// The template a `template_id` names within `format`'s family.
fn builtin_name(format: Format, id: &str) -> Option<&'static str> {
    let id = if id == "cmd4_hf" && format == Format::Cmd4 { "cmd4-hf" } else { id };
    let family: &[(&'static str, &str)] = match format {
        Format::Cmd3 => &CMD3,
        Format::Cmd4 => &CMD4,
    };
    family.iter().find(|(name, _)| *name == id).map(|(name, _)| *name)
}

pub(super) fn render_builtin(format: Format, id: &str, vars: &Map<String, Value>) -> Result<String, RenderError> {
    let name = builtin_name(format, id).ok_or_else(|| RenderError::Validation(format!("unknown template id: {id}")))?;
    let env = BUILTIN.as_ref().map_err(|e| RenderError::Template(e.clone()))?;
    let template = env.get_template(name).map_err(|e| RenderError::Template(e.to_string()))?;
    template.render(JValue::from(minijinja::value::Serde(vars))).map_err(|e| RenderError::Template(e.to_string()))
}

/// A trusted request's own template, with the same environment.
pub(super) fn render_source(source: &str, vars: &Map<String, Value>) -> Result<String, RenderError> {
    let mut env = environment();
    env.set_fuel(Some(FUEL));
    env.add_template("chat_template.jinja", source).map_err(|e| RenderError::Template(e.to_string()))?;
    let template = env.get_template("chat_template.jinja").map_err(|e| RenderError::Template(e.to_string()))?;
    template.render(JValue::from(minijinja::value::Serde(vars))).map_err(|e| RenderError::Template(e.to_string()))
}
