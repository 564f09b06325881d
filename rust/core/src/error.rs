//! API errors and the OpenAI error envelope vLLM answers with.

use serde::Serialize;

/// An error answered to the client: HTTP status plus the envelope fields.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{status} {kind}: {message}")]
pub struct ApiError {
    pub status: u16,
    /// The envelope's `type`, e.g. `BadRequestError` or `Bad Request`.
    pub kind: &'static str,
    pub message: String,
    pub param: Option<String>,
}

#[derive(Serialize)]
struct Envelope<'a> {
    error: Body<'a>,
}

#[derive(Serialize)]
struct Body<'a> {
    message: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    param: Option<&'a str>,
    code: u16,
}

impl ApiError {
    /// A handler-level 400 (`BadRequestError`, no param), as vLLM's
    /// `create_error_response` makes.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self { status: 400, kind: "BadRequestError", message: message.into(), param: None }
    }

    /// A `VLLMValidationError`: 400 with the offending parameter named.
    /// A request model validator's 400: the message names the parameter
    /// when there is one (`... (parameter=p)`).
    pub fn validator(message: &str, param: Option<&str>) -> Self {
        match param {
            Some(p) => ApiError::invalid_param(format!("{message} (parameter={p})"), p),
            None => ApiError::bad_request(message),
        }
    }

    pub fn invalid_param(message: impl Into<String>, param: &str) -> Self {
        Self { status: 400, kind: "BadRequestError", message: message.into(), param: Some(param.to_string()) }
    }

    /// A request-validation failure (FastAPI's handler: type is the HTTP phrase).
    pub fn validation(message: impl Into<String>, param: Option<String>) -> Self {
        Self { status: 400, kind: "Bad Request", message: message.into(), param }
    }

    pub fn model_not_found(model: &str, aliases: &[String]) -> Self {
        Self {
            status: 404,
            kind: "NotFoundError",
            message: sanitize(&format!("The model `{model}` does not exist. Valid aliases: {}.", aliases.join(", "))),
            param: Some("model".into()),
        }
    }

    pub fn payload_too_large(limit: usize) -> Self {
        Self {
            status: 413,
            kind: "Request Entity Too Large",
            message: format!("request body exceeds the server limit of {limit} bytes (--max-request-bytes)"),
            param: Some("body".into()),
        }
    }

    /// A route vLLM mounts without a handler (`NotImplementedError`, 501).
    pub fn not_implemented(message: &str) -> Self {
        Self { status: 501, kind: "NotImplementedError", message: message.to_string(), param: None }
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self { status: 500, kind: "InternalServerError", message: message.into(), param: None }
    }

    /// The JSON body: `{"error":{"message","type","param","code"}}`.
    pub fn to_json(&self) -> Vec<u8> {
        let env = Envelope {
            error: Body { message: &self.message, kind: self.kind, param: self.param.as_deref(), code: self.status },
        };
        serde_json::to_vec(&env).unwrap_or_else(|_| b"{\"error\":{}}".to_vec())
    }
}

/// vLLM's `sanitize_message`: hide filesystem paths (under the usual roots,
/// then any `/a/b.ext`-shaped one: `http://x/y.png` shows as `http:/<path>`).
pub fn sanitize(message: &str) -> String {
    file_paths(&rooted_paths(message)).trim().to_string()
}

/// `/(?:home|usr|...)(?:/[\w.\-]+)+` -> `<path>`.
fn rooted_paths(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let chars: Vec<char> = message.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '/' && looks_like_path(&chars[i..]) {
            let end = path_end(&chars, i);
            out.push_str("<path>");
            i = end;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// `(?:/[\w\-]+)+/[\w\-]+\.\w+` -> `<path>`: two or more `/word` segments,
/// the last followed by `.` and a word (the extension).
fn file_paths(message: &str) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let chars: Vec<char> = message.chars().collect();
    let mut out = String::with_capacity(message.len());
    let mut i = 0;
    while i < chars.len() {
        let mut end = i;
        let mut segments = 0;
        while chars.get(end) == Some(&'/') && chars.get(end + 1).is_some_and(|&c| word(c) || c == '-') {
            end += 1;
            while chars.get(end).is_some_and(|&c| word(c) || c == '-') {
                end += 1;
            }
            segments += 1;
        }
        let extension = chars.get(end) == Some(&'.') && chars.get(end + 1).is_some_and(|&c| word(c));
        if segments >= 2 && extension {
            end += 1;
            while chars.get(end).is_some_and(|&c| word(c)) {
                end += 1;
            }
            out.push_str("<path>");
            i = end;
            continue;
        }
        // No match here; a later start inside this run ends the same way, so skip it.
        let skip = if segments > 0 { end } else { i + 1 };
        out.extend(&chars[i..skip]);
        i = skip;
    }
    out
}

const ROOTS: [&str; 9] = ["home", "usr", "opt", "var", "tmp", "root", "lib", "mnt", "srv"];

fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '.' || c == '-'
}

fn looks_like_path(s: &[char]) -> bool {
    let rest: String = s[1..].iter().take_while(|c| is_path_char(**c)).collect();
    let after = 1 + rest.chars().count();
    ROOTS.contains(&rest.as_str()) && s.get(after) == Some(&'/') && s.get(after + 1).is_some_and(|c| is_path_char(*c))
}

fn path_end(chars: &[char], start: usize) -> usize {
    let mut i = start;
    while i < chars.len() && chars[i] == '/' && chars.get(i + 1).is_some_and(|c| is_path_char(*c)) {
        i += 1;
        while i < chars.len() && is_path_char(chars[i]) {
            i += 1;
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_has_vllm_key_order() {
        let e = ApiError::bad_request("boom");
        assert_eq!(
            String::from_utf8(e.to_json()).unwrap(),
            r#"{"error":{"message":"boom","type":"BadRequestError","param":null,"code":400}}"#
        );
    }

    #[test]
    fn paths_are_hidden() {
        assert_eq!(sanitize("The model `/srv/models/x` does not exist."), "The model `<path>` does not exist.");
        assert_eq!(sanitize("The model `nope` does not exist."), "The model `nope` does not exist.");
        assert_eq!(sanitize("'input': 'http://x/y.png'"), "'input': 'http:/<path>'");
        assert_eq!(sanitize("a /x/y.tar.gz b"), "a <path>.gz b");
        assert_eq!(sanitize("/a.b/c.d and /one.txt"), "/a.b/c.d and /one.txt");
    }
}
