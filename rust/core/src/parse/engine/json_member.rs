//! vLLM's `parser/utils.py` JSON scanners for argument converters that
//! stream a member of a call's JSON wrapper verbatim (Granite's
//! `arguments`, Inkling's `args`).

/// The member is there but its value is not a JSON object (vLLM's
/// converter raises `ValueError`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotAnObject;

const WS: &[char] = &[' ', '\t', '\r', '\n'];

/// `scan_json_object_end`: the end (exclusive) of the object at
/// `raw[start..]` (a `{`), string- and escape-aware; `None` while open.
fn object_end(raw: &str, start: usize) -> Option<usize> {
    let (mut depth, mut in_string, mut escape) = (0i64, false, false);
    for (i, ch) in raw[start..].char_indices() {
        if escape {
            escape = false;
        } else if in_string {
            match ch {
                '\\' => escape = true,
                '"' => in_string = false,
                _ => {}
            }
        } else {
            match ch {
                '"' => in_string = true,
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(start + i + 1);
                    }
                }
                _ => {}
            }
        }
    }
    None
}

/// `extract_json_member_object(raw, key)`: the verbatim text of the
/// top-level member `key`'s object (unterminated while it is open);
/// `Ok(None)` before the value starts, `Err` when it is not an object.
pub fn member_object<'a>(raw: &'a str, key: &str) -> Result<Option<&'a str>, NotAnObject> {
    let (mut depth, mut in_string, mut escape) = (0i64, false, false);
    let (mut string_start, mut last_string): (usize, Option<&str>) = (0, None);
    for (i, ch) in raw.char_indices() {
        if escape {
            escape = false;
            continue;
        }
        if in_string {
            match ch {
                '\\' => escape = true,
                '"' => {
                    in_string = false;
                    if depth == 1 {
                        last_string = Some(&raw[string_start + 1..i]);
                    }
                }
                _ => {}
            }
            continue;
        }
        match ch {
            '"' => {
                in_string = true;
                string_start = i;
            }
            ':' if depth == 1 && last_string == Some(key) => {
                let value = raw[i + 1..].trim_start_matches(WS);
                let start = raw.len() - value.len();
                if value.is_empty() {
                    return Ok(None);
                }
                if !value.starts_with('{') {
                    return Err(NotAnObject);
                }
                return Ok(Some(object_end(raw, start).map_or(&raw[start..], |end| &raw[start..end])));
            }
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            _ => {}
        }
    }
    Ok(None)
}
