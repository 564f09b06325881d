//! A function's JSON schema as the TypeScript type Harmony's developer
//! message shows the model (`json_schema_to_typescript` of the Harmony
//! encoding): objects become `{ key?: type, }` blocks with their
//! descriptions, titles, examples and defaults as `//` comments; `oneOf`
//! becomes a `|` list; anything else it does not know is `any`.

use serde_json::{Map, Value};

fn text<'a>(schema: &'a Value, key: &str) -> Option<&'a str> {
    schema.get(key).and_then(Value::as_str)
}

fn is_enum(schema: &Value) -> bool {
    schema.get("enum").and_then(Value::as_array).is_some_and(|a| !a.is_empty())
}

fn nullable(schema: &Value) -> bool {
    schema.get("nullable").and_then(Value::as_bool).unwrap_or(false)
}

/// `default: …` as a comment: a string quoted unless the schema is an enum.
fn default_comment(schema: &Value) -> Option<String> {
    let default = schema.get("default")?;
    Some(match default.as_str() {
        Some(s) if !is_enum(schema) => format!("default: \"{s}\""),
        Some(s) => format!("default: {s}"),
        None => format!("default: {default}"),
    })
}

/// A variant's type, `| null` added when it is nullable.
fn variant_type(variant: &Value, indent: &str) -> String {
    let ty = typescript(variant, &format!("{indent}   "));
    if nullable(variant) && !ty.contains("null") {
        format!("{ty} | null")
    } else {
        ty
    }
}

/// The TypeScript type of `schema`, its nested lines at `indent`.
pub fn typescript(schema: &Value, indent: &str) -> String {
    if let Some(variants) = schema.get("oneOf").and_then(Value::as_array) {
        let mut out = String::new();
        for variant in variants {
            out.push_str(&format!("\n{indent} | "));
            out.push_str(&variant_type(variant, indent));
            let comments: Vec<String> =
                text(variant, "description").map(str::to_string).into_iter().chain(default_comment(variant)).collect();
            if !comments.is_empty() {
                out.push_str(&format!(" // {}", comments.join(" ")));
            }
        }
        return out;
    }
    if let Some(types) = schema.get("type").and_then(Value::as_array) {
        let names: Vec<&str> =
            types.iter().filter_map(Value::as_str).map(|t| if t == "integer" { "number" } else { t }).collect();
        if !names.is_empty() {
            return names.join(" | ");
        }
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => object(schema, indent),
        Some("string") => {
            let values: Vec<String> = schema
                .get("enum")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(|s| format!("\"{s}\"")).collect())
                .unwrap_or_default();
            if values.is_empty() {
                "string".into()
            } else {
                values.join(" | ")
            }
        }
        Some("number" | "integer") => "number".into(),
        Some("boolean") => "boolean".into(),
        Some("array") => match schema.get("items") {
            Some(items) => format!("{}[]", typescript(items, indent)),
            None => "Array<any>".into(),
        },
        _ => "any".into(),
    }
}

fn object(schema: &Value, indent: &str) -> String {
    let mut out = String::new();
    if let Some(desc) = text(schema, "description") {
        out.push_str(&format!("{indent}// {desc}\n"));
    }
    out.push_str("{\n");
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map_or(Vec::new(), |r| r.iter().filter_map(Value::as_str).collect());
    let empty = Map::new();
    let props = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    for (key, prop) in props {
        let optional = if required.contains(&key.as_str()) { "" } else { "?" };
        if let Some(title) = text(prop, "title") {
            out.push_str(&format!("{indent}// {title}\n{indent}//\n"));
        }
        let variants = prop.get("oneOf").and_then(Value::as_array);
        if prop.get("oneOf").is_none() {
            if let Some(desc) = text(prop, "description") {
                out.push_str(&format!("{indent}// {desc}\n"));
            }
        }
        if let Some(examples) = prop.get("examples").and_then(Value::as_array).filter(|a| !a.is_empty()) {
            out.push_str(&format!("{indent}// Examples:\n"));
            for example in examples.iter().filter_map(Value::as_str) {
                out.push_str(&format!("{indent}// - \"{example}\"\n"));
            }
        }
        if let Some(variants) = variants {
            one_of_property(&mut out, key, optional, prop, variants, indent);
            continue;
        }
        let mut ty = typescript(prop, &format!("{indent}    "));
        if nullable(prop) && !ty.contains("null") {
            ty = format!("{ty} | null");
        }
        out.push_str(&format!("{indent}{key}{optional}: {ty},"));
        if let Some(default) = default_comment(prop) {
            out.push_str(&format!(" // {default}"));
        }
        out.push('\n');
    }
    out.push_str(&format!("{indent}}}"));
    out
}

/// A property whose value is one of several schemas: its comments above,
/// then one `| type` line per variant.
fn one_of_property(out: &mut String, key: &str, optional: &str, prop: &Value, variants: &[Value], indent: &str) {
    let desc = text(prop, "description");
    // The property's description is not repeated when the first variant says it.
    let first_says_it = desc.is_some() && variants.first().and_then(|v| text(v, "description")) == desc;
    let desc_above = desc.filter(|_| !first_says_it);
    if let Some(d) = desc_above {
        out.push_str(&format!("{indent}// {d}\n"));
    }
    if let Some(default) = default_comment(prop) {
        out.push_str(&format!("{indent}// {default}\n"));
    }
    out.push_str(&format!("{indent}{key}{optional}:\n"));
    for (i, variant) in variants.iter().enumerate() {
        out.push_str(&format!("{indent} | "));
        out.push_str(&variant_type(variant, indent));
        let mut comments = Vec::new();
        if !(i == 0 && desc_above.is_some()) {
            if let Some(d) = text(variant, "description").filter(|d| Some(*d) != desc) {
                comments.push(d.to_string());
            }
        }
        comments.extend(default_comment(variant));
        if !comments.is_empty() {
            out.push_str(&format!(" // {}", comments.join(" ")));
        }
        out.push('\n');
    }
    out.push_str(&format!("{indent},\n"));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::typescript;

    #[test]
    fn objects_enums_and_defaults() {
        let schema = json!({"type": "object", "properties": {
            "city": {"type": "string", "description": "The city"},
            "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
            "days": {"type": "integer", "default": 3},
            "tags": {"type": "array", "items": {"type": "string"}}
        }, "required": ["city"]});
        assert_eq!(
            typescript(&schema, ""),
            "{\n// The city\ncity: string,\nunit?: \"c\" | \"f\", // default: c\ndays?: number, // default: 3\ntags?: string[],\n}"
        );
        assert_eq!(typescript(&json!({"type": ["integer", "null"]}), ""), "number | null");
        assert_eq!(typescript(&json!({"anyOf": [{"type": "string"}]}), ""), "any");
    }
}
