//! A stream chunk's body mostly repeats `prompt_token_ids` (a 2000-token
//! prompt is ~11 KB of the ~12 KB), resent on every call though a compact
//! stream reads it only on its first. Parsing it into a JSON tree cost twice
//! the rest of the call; here a plain list of non-negative integers is
//! skipped over as raw text and read by a digit scanner instead. Anything
//! else takes the ordinary path, so errors stay exactly vLLM's.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A body's top-level fields, values left as raw JSON text.
struct RawFields<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for RawFields<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Fields<'a> {
            type Value = RawFields<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry::<String, &'de RawValue>()? {
                    out.push(entry);
                }
                Ok(RawFields(out))
            }
        }
        d.deserialize_map(Fields(std::marker::PhantomData))
    }
}

/// `[1, 2, 3]`: non-negative integers that fit in `i64`, nothing else.
/// (The text is valid JSON already: only its shape is checked here.)
fn plain_id_list(raw: &str) -> Option<Vec<i64>> {
    let b = raw.trim().as_bytes().strip_prefix(b"[")?.strip_suffix(b"]")?;
    let ws = |i: &mut usize| {
        while *i < b.len() && matches!(b[*i], b' ' | b'\t' | b'\n' | b'\r') {
            *i += 1;
        }
    };
    let mut out = Vec::with_capacity(b.len() / 4);
    let mut i = 0;
    ws(&mut i);
    while i < b.len() {
        let start = i;
        let mut n: i64 = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            n = n.checked_mul(10)?.checked_add(i64::from(b[i] - b'0'))?;
            i += 1;
        }
        if i == start {
            return None;
        }
        out.push(n);
        ws(&mut i);
        if i < b.len() {
            if b[i] != b',' {
                return None;
            }
            i += 1;
            ws(&mut i);
            if i == b.len() {
                return None;
            }
        }
    }
    Some(out)
}

/// A streaming body (`"stream": true`) with a plain `prompt_token_ids`:
/// the body without that field, and the ids. `None` = use the ordinary path.
pub fn split_prompt_ids(body: &[u8]) -> Option<(Value, Vec<i64>)> {
    let fields: RawFields = serde_json::from_slice(body).ok()?;
    if !fields.0.iter().any(|(k, v)| k == "stream" && v.get() == "true") {
        return None;
    }
    let mut ids = None;
    let mut obj = Map::with_capacity(fields.0.len());
    for (key, raw) in fields.0 {
        if key == "prompt_token_ids" {
            // A later duplicate key wins, as in Python's `json`.
            ids = Some(plain_id_list(raw.get())?);
            obj.shift_remove(&key);
            continue;
        }
        obj.insert(key, serde_json::from_str(raw.get()).ok()?);
    }
    Some((Value::Object(obj), ids?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lists_are_read_and_everything_else_is_left_alone() {
        assert_eq!(plain_id_list("[1, 2,3 ]"), Some(vec![1, 2, 3]));
        assert_eq!(plain_id_list("[]"), Some(vec![]));
        for odd in ["[-1]", "[1.0]", "[1e3]", "[\"1\"]", "[9223372036854775808]", "[1,]", "{}"] {
            assert_eq!(plain_id_list(odd), None, "{odd}");
        }
        let (body, ids) =
            split_prompt_ids(br#"{"stream": true, "prompt_token_ids": [7, 8], "x": {"a": [1]}}"#).unwrap();
        assert_eq!(ids, vec![7, 8]);
        assert_eq!(body, serde_json::json!({"stream": true, "x": {"a": [1]}}));
        assert!(split_prompt_ids(br#"{"stream": false, "prompt_token_ids": [7]}"#).is_none());
        assert!(split_prompt_ids(br#"{"stream": true, "prompt_token_ids": [-7]}"#).is_none());
        assert!(split_prompt_ids(br#"{"stream": true}"#).is_none());
        assert!(split_prompt_ids(b"[1]").is_none());
    }
}
