//! A stream chunk's body mostly repeats `prompt_token_ids` (a 2000-token
//! prompt is ~11 KB of the ~12 KB), resent on every call though a compact
//! stream reads it only on its first. Parsing it into a JSON tree cost twice
//! the rest of the call; here the top-level fields are read as raw text in
//! one pass, a plain list of non-negative integers straight into a vector.
//! Anything else takes the ordinary path, so errors stay exactly vLLM's.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A body's top-level fields: values left as raw JSON text, except a
/// plain `prompt_token_ids` list (a later duplicate key wins, as in
/// Python's `json`).
struct Fields<'a> {
    raw: Vec<(String, &'a RawValue)>,
    prompt_token_ids: Option<Vec<u64>>,
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Fields<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct FieldsVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for FieldsVisitor<'a> {
            type Value = Fields<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut fields = Fields { raw: Vec::new(), prompt_token_ids: None };
                while let Some(key) = map.next_key::<String>()? {
                    if key == "prompt_token_ids" {
                        // Not a list of non-negative integers: an error, and the ordinary path.
                        fields.prompt_token_ids = Some(map.next_value()?);
                    } else {
                        fields.raw.push((key, map.next_value()?));
                    }
                }
                Ok(fields)
            }
        }
        d.deserialize_map(FieldsVisitor(std::marker::PhantomData))
    }
}

/// A streaming body (`"stream": true`) with a plain `prompt_token_ids`:
/// the body without that field, and the ids. `None` = use the ordinary path.
pub fn split_prompt_ids(body: &[u8]) -> Option<(Value, Vec<i64>)> {
    let fields: Fields = serde_json::from_slice(body).ok()?;
    if !fields.raw.iter().any(|(k, v)| k == "stream" && v.get() == "true") {
        return None;
    }
    let ids = fields.prompt_token_ids?.into_iter().map(i64::try_from).collect::<Result<Vec<_>, _>>().ok()?;
    let mut obj = Map::with_capacity(fields.raw.len());
    for (key, raw) in fields.raw {
        obj.insert(key, serde_json::from_str(raw.get()).ok()?);
    }
    Some((Value::Object(obj), ids))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_id_lists_are_read_and_everything_else_is_left_alone() {
        let (body, ids) =
            split_prompt_ids(br#"{"stream": true, "prompt_token_ids": [7, 8], "x": {"a": [1]}}"#).unwrap();
        assert_eq!(ids, vec![7, 8]);
        assert_eq!(body, serde_json::json!({"stream": true, "x": {"a": [1]}}));
        let (_, ids) =
            split_prompt_ids(br#"{"prompt_token_ids": [1], "stream": true, "prompt_token_ids": []}"#).unwrap();
        assert_eq!(ids, Vec::<i64>::new());
        for odd in ["[-1]", "[1.0]", "[1e3]", "[\"1\"]", "[9223372036854775808]", "null", "{}"] {
            let body = format!(r#"{{"stream": true, "prompt_token_ids": {odd}}}"#);
            assert!(split_prompt_ids(body.as_bytes()).is_none(), "{odd}");
        }
        assert!(split_prompt_ids(br#"{"stream": false, "prompt_token_ids": [7]}"#).is_none());
        assert!(split_prompt_ids(br#"{"stream": true}"#).is_none());
        assert!(split_prompt_ids(b"[1]").is_none());
    }
}
