//! xgrammar 0.2.8's JSON schema -> EBNF conversion, reproduced byte for byte:
//! the text of `str(xgr.Grammar.from_json_schema(json.dumps(schema)))` with
//! the default options (any whitespace, strict mode, properties in order),
//! which vLLM's Cohere parser embeds in its tool-call structural tag.
//!
//! The stages follow xgrammar's: read the schema (`schema`), build rules
//! (`convert`, `object`, `pattern`; bounded numbers and formats via a regex,
//! `numeric`, `range_regex`, `regex_ebnf`, `ebnf`), bring them to xgrammar's
//! normal form (`normalize`) and print them (`print`). Schemas that use
//! something this port does not reproduce get [`XgrammarError::Unsupported`]
//! rather than a guess.

mod convert;
mod ebnf;
mod error;
mod grammar;
mod json_text;
mod normalize;
mod numeric;
mod object;
mod pattern;
mod print;
mod range_regex;
mod regex_ebnf;
mod schema;

#[cfg(test)]
pub(crate) mod tests;

pub use error::{RaisedAt, XgrammarError};

use serde_json::Value;

/// How deep the port follows nested schemas and `$ref` chains. vLLM refuses
/// tool parameters nested more than 64 JSON levels before this runs.
const MAX_DEPTH: usize = 256;
/// JSON nesting accepted at all; everything below recurses within it.
const MAX_JSON_NESTING: usize = 512;

/// The EBNF text xgrammar 0.2.8 prints for `schema` (one rule per line, each
/// ending in `\n`).
pub fn json_schema_to_ebnf(schema: &Value) -> Result<String, XgrammarError> {
    if nested_deeper_than(schema, MAX_JSON_NESTING) {
        return Err(XgrammarError::TooDeep(MAX_JSON_NESTING));
    }
    let mut parser = schema::SchemaParser::default();
    let root = parser.parse(schema, None, 0)?;
    let mut grammar = convert::Converter::new(schema, parser).convert(&root)?;
    normalize::normalize(&mut grammar);
    Ok(print::print(&grammar))
}

/// Whether objects/arrays nest more than `limit` levels (checked without
/// recursion, so any value can be asked).
fn nested_deeper_than(value: &Value, limit: usize) -> bool {
    let mut pending = vec![(value, 1_usize)];
    while let Some((node, depth)) = pending.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match node {
            Value::Object(map) => Box::new(map.values()),
            Value::Array(items) => Box::new(items.iter()),
            _ => continue,
        };
        if depth > limit {
            return true;
        }
        pending.extend(children.map(|child| (child, depth + 1)));
    }
    false
}
