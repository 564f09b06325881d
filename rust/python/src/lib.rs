//! `derender._native`: the PyO3 face of derender-core. Bodies go in as
//! bytes and come out as bytes; the GIL is released while Rust works.

mod detokenizer;
mod errors;
mod plugin;
mod stream_parser;

use std::sync::Arc;

use derender_core::hub::Source;
use derender_core::model::TokenizerMode;
use derender_core::parse::{Kind, Registry};
use derender_core::served::Flags;
use derender_core::{Derenderer as Core, Model, Route, Settings, Stats};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// One loaded model and its derender settings.
#[pyclass(frozen, module = "derender._native")]
pub struct Derenderer {
    pub(crate) inner: Core,
}

#[pymethods]
impl Derenderer {
    #[new]
    #[pyo3(signature = (
        model,
        served_model_names=None,
        max_model_len=None,
        max_logprobs=20,
        max_n_sequences=16384,
        skip_model_name_validation=false,
        reasoning_parser=None,
        tool_call_parser=None,
        enable_auto_tool_choice=false,
        tool_strict_level=None,
        default_chat_template_kwargs=None,
        chat_template=None,
        trust_request_chat_template=false,
        exclude_tools_when_tool_choice_none=false,
        tool_parser_plugins=None,
        reasoning_parser_plugins=None,
        stream_state_mode="compact",
        stream_state_secret=None,
        stream_state_accepted_secrets=None,
        chat_template_content_format="auto",
        generation_config="auto",
        override_generation_config=None,
        reasoning_effort_map=None,
        anthropic_disabled_thinking_effort="auto",
        hf_overrides=None,
        tokenizer=None,
        revision=None,
        tokenizer_revision=None,
        tokenizer_mode=None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        model: &str,
        served_model_names: Option<Vec<String>>,
        max_model_len: Option<usize>,
        max_logprobs: i64,
        max_n_sequences: usize,
        skip_model_name_validation: bool,
        reasoning_parser: Option<&str>,
        tool_call_parser: Option<&str>,
        enable_auto_tool_choice: bool,
        tool_strict_level: Option<&str>,
        default_chat_template_kwargs: Option<&str>,
        chat_template: Option<String>,
        trust_request_chat_template: bool,
        exclude_tools_when_tool_choice_none: bool,
        tool_parser_plugins: Option<Bound<'_, PyDict>>,
        reasoning_parser_plugins: Option<Bound<'_, PyDict>>,
        stream_state_mode: &str,
        stream_state_secret: Option<&str>,
        stream_state_accepted_secrets: Option<Vec<String>>,
        chat_template_content_format: &str,
        generation_config: &str,
        override_generation_config: Option<&str>,
        reasoning_effort_map: Option<&str>,
        anthropic_disabled_thinking_effort: &str,
        hf_overrides: Option<&str>,
        tokenizer: Option<String>,
        revision: Option<String>,
        tokenizer_revision: Option<String>,
        tokenizer_mode: Option<&str>,
    ) -> PyResult<Self> {
        // `{name: class}` from `derender.plugins`; plugin names shadow built-ins.
        let mut registry = Registry::default();
        for (name, class) in tool_parser_plugins.iter().flat_map(|d| d.iter()) {
            let name: String = name.extract()?;
            let factory = plugin::PyToolFactory::new(&name, class)?;
            registry.add_tool(name, Arc::new(factory));
        }
        for (name, class) in reasoning_parser_plugins.iter().flat_map(|d| d.iter()) {
            let name: String = name.extract()?;
            let factory = plugin::PyReasoningFactory::new(&name, class)?;
            registry.add_reasoning(name, Arc::new(factory));
        }
        let overrides = match hf_overrides.map(serde_json::from_str::<serde_json::Value>) {
            None | Some(Ok(serde_json::Value::Null)) => serde_json::Map::new(),
            Some(Ok(serde_json::Value::Object(map))) => map,
            Some(_) => return Err(PyValueError::new_err("--hf-overrides must be a JSON object")),
        };
        let source = Source { model: model.to_string(), revision, tokenizer, tokenizer_revision };
        let mode = match tokenizer_mode {
            None | Some("hf") => TokenizerMode::Hf,
            Some("mistral") => TokenizerMode::Mistral,
            Some("deepseek_v32") => TokenizerMode::DeepseekV32,
            Some("deepseek_v4") => TokenizerMode::DeepseekV4,
            Some("deepseek_v41") => TokenizerMode::DeepseekV41,
            Some("inkling") => TokenizerMode::Inkling,
            Some("kimi_k3") => TokenizerMode::KimiK3,
            Some("cohere") => TokenizerMode::Cohere,
            Some(other) => return Err(PyValueError::new_err(format!("unknown tokenizer mode {other:?}"))),
        };
        let loaded = py
            .detach(|| Model::load_mode(&source, mode, &overrides))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let flags = Flags {
            served_model_names: served_model_names.filter(|n| !n.is_empty()).unwrap_or_else(|| vec![model.to_string()]),
            max_model_len,
            max_logprobs,
            max_n_sequences,
            skip_model_name_validation,
            reasoning_parser: reasoning_parser.map(str::to_string),
            tool_call_parser: tool_call_parser.map(str::to_string),
            enable_auto_tool_choice,
            tool_strict_level: tool_strict_level.map(str::to_string),
            default_chat_template_kwargs: default_chat_template_kwargs.map(str::to_string),
            chat_template,
            trust_request_chat_template,
            exclude_tools_when_tool_choice_none,
            stream_state_mode: stream_state_mode.to_string(),
            stream_state_secret: stream_state_secret.map(str::to_string),
            stream_state_accepted_secrets: stream_state_accepted_secrets.unwrap_or_default(),
            chat_template_content_format: chat_template_content_format.to_string(),
            generation_config: generation_config.to_string(),
            override_generation_config: override_generation_config.map(str::to_string),
            reasoning_effort_map: reasoning_effort_map.map(str::to_string),
            anthropic_disabled_thinking_effort: anthropic_disabled_thinking_effort.to_string(),
        };
        let settings =
            Settings::resolve(flags, &loaded, &registry).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let inner = Core::new(loaded, settings).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Derenderer { inner })
    }

    /// Answer one request: `(status, body)`. `path` is the HTTP route.
    #[pyo3(signature = (path, body, content_type="application/json", request_id=None))]
    fn handle<'py>(
        &self,
        py: Python<'py>,
        path: &str,
        body: &[u8],
        content_type: Option<&str>,
        request_id: Option<&str>,
    ) -> PyResult<(u16, Bound<'py, PyBytes>)> {
        let Some(route) = Route::from_path(path) else {
            return Err(PyValueError::new_err(format!("no native route for {path}")));
        };
        let reply = py.detach(|| self.inner.handle(route, content_type, request_id, body));
        Ok((reply.status, PyBytes::new(py, &reply.body)))
    }

    /// `handle`, plus what the call did: `(status, body, CallStats)`.
    #[pyo3(signature = (path, body, content_type="application/json", request_id=None))]
    fn handle_measured<'py>(
        &self,
        py: Python<'py>,
        path: &str,
        body: &[u8],
        content_type: Option<&str>,
        request_id: Option<&str>,
    ) -> PyResult<(u16, Bound<'py, PyBytes>, CallStats)> {
        let Some(route) = Route::from_path(path) else {
            return Err(PyValueError::new_err(format!("no native route for {path}")));
        };
        let reply = py.detach(|| self.inner.handle(route, content_type, request_id, body));
        Ok((reply.status, PyBytes::new(py, &reply.body), CallStats::from(reply.stats)))
    }

    /// Answer one request given as a dict: the answer as a dict, or the
    /// `derender.errors` exception for the error envelope a server would send.
    #[pyo3(signature = (path, request, request_id=None))]
    fn call<'py>(
        &self,
        py: Python<'py>,
        path: &str,
        request: &Bound<'py, PyAny>,
        request_id: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Some(route) = Route::from_path(path) else {
            return Err(PyValueError::new_err(format!("no native route for {path}")));
        };
        let value: serde_json::Value =
            pythonize::depythonize(request).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let body = serde_json::to_vec(&value).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let reply = py.detach(|| self.inner.handle(route, Some("application/json"), request_id, &body));
        if reply.status != 200 {
            return Err(errors::from_envelope(py, reply.status, &reply.body));
        }
        let answer: serde_json::Value =
            serde_json::from_slice(&reply.body).map_err(|e| PyValueError::new_err(e.to_string()))?;
        pythonize::pythonize(py, &answer).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Token ids of `text` (no special tokens added), as the tokenizer splits it.
    fn encode(&self, py: Python<'_>, text: &str) -> PyResult<Vec<u32>> {
        py.detach(|| self.inner.core().model.encode_text(text)).map_err(PyValueError::new_err)
    }

    /// `tokenizer.decode(ids)` with special tokens kept; unknown ids are skipped.
    fn decode(&self, py: Python<'_>, ids: Vec<i64>) -> String {
        py.detach(|| self.inner.core().model.decode(&ids))
    }

    /// The tokenizer's EOS id, if it has one.
    #[getter]
    fn eos_token_id(&self) -> Option<i64> {
        self.inner.core().model.eos_token_id
    }

    /// The resolved model directory.
    #[getter]
    fn model_path(&self) -> String {
        self.inner.core().model.path.display().to_string()
    }

    /// The tokenizer's directory (`--tokenizer`; the model's by default).
    #[getter]
    fn tokenizer_path(&self) -> String {
        self.inner.core().model.tokenizer_path.display().to_string()
    }

    #[getter]
    fn served_model_names(&self) -> Vec<String> {
        self.inner.core().settings.served_model_names.clone()
    }

    #[getter]
    fn max_model_len(&self) -> usize {
        self.inner.core().settings.max_model_len
    }

    /// Is a reasoning or tool-call parser configured?
    #[getter]
    fn has_parser(&self) -> bool {
        self.inner.core().settings.parser.is_some()
    }

    /// `len(tokenizer)`: vocabulary plus added tokens.
    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.core().model.vocab_len
    }
}

/// What one `handle_measured` call did (`derender_core::Stats`).
#[pyclass(frozen, module = "derender._native")]
struct CallStats {
    /// `"batch"` or `"stream"` for a derender call read as one, else `None`.
    #[pyo3(get)]
    kind: Option<&'static str>,
    /// Output token ids derendered (0 unless the call succeeded).
    #[pyo3(get)]
    tokens: usize,
    /// JSON bytes of the request's / the answer's `stream_state`.
    #[pyo3(get)]
    state_bytes_in: Option<usize>,
    #[pyo3(get)]
    state_bytes_out: Option<usize>,
    /// Seconds inside the reasoning / tool parsers; `None` when none ran.
    #[pyo3(get)]
    parser_seconds: Option<f64>,
    /// The error envelope's `type` when the call failed.
    #[pyo3(get)]
    error: Option<&'static str>,
    /// A panic was caught (and answered with a 500).
    #[pyo3(get)]
    panicked: bool,
}

impl From<Stats> for CallStats {
    fn from(s: Stats) -> Self {
        CallStats {
            kind: s.kind.map(|k| k.as_str()),
            tokens: s.tokens,
            state_bytes_in: s.state_bytes_in,
            state_bytes_out: s.state_bytes_out,
            parser_seconds: s.parser_time.map(|d| d.as_secs_f64()),
            error: s.error,
            panicked: s.panicked,
        }
    }
}

#[pymethods]
impl CallStats {
    fn __repr__(&self) -> String {
        fn py<T: std::fmt::Display>(v: Option<T>) -> String {
            v.map_or_else(|| "None".to_string(), |v| v.to_string())
        }
        let quoted = |v: Option<&str>| py(v.map(|v| format!("'{v}'")));
        format!(
            "CallStats(kind={}, tokens={}, state_bytes_in={}, state_bytes_out={}, parser_seconds={}, error={}, panicked={})",
            quoted(self.kind),
            self.tokens,
            py(self.state_bytes_in),
            py(self.state_bytes_out),
            py(self.parser_seconds),
            quoted(self.error),
            if self.panicked { "True" } else { "False" },
        )
    }
}

/// The native routes, for the HTTP layer to mount.
/// The model and tokenizer directories `derender serve` loads (local
/// paths, or snapshots of the Hugging Face cache), before any file is read.
#[pyfunction]
#[pyo3(signature = (model, revision=None, tokenizer=None, tokenizer_revision=None))]
fn resolve_dirs(
    model: &str,
    revision: Option<String>,
    tokenizer: Option<String>,
    tokenizer_revision: Option<String>,
) -> PyResult<(String, String)> {
    let source = Source { model: model.to_string(), revision, tokenizer, tokenizer_revision };
    let (model, tokenizer) = source.resolve().map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((model.to_string_lossy().into_owned(), tokenizer.to_string_lossy().into_owned()))
}

#[pyfunction]
fn native_routes() -> Vec<&'static str> {
    Route::ALL.iter().map(|r| r.path()).collect()
}

/// A Rust panic (which `Derenderer::handle` catches and answers with a 500)
/// is reported as one JSON line on stderr, like the server's logs: where it
/// happened and its message (clipped). `RUST_BACKTRACE` adds Rust's report.
fn install_panic_hook() {
    let rust_report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        eprintln!("{}", panic_line(info));
        if std::env::var_os("RUST_BACKTRACE").is_some() {
            rust_report(info);
        }
    }));
}

fn panic_line(info: &std::panic::PanicHookInfo<'_>) -> String {
    let payload = info.payload();
    let message =
        payload.downcast_ref::<&str>().copied().or_else(|| payload.downcast_ref::<String>().map(String::as_str));
    let line = serde_json::json!({
        "time": utc_now(),
        "level": "error",
        "logger": "derender.native",
        "event": "rust panic (the call is answered with a 500)",
        "location": info.location().map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column())),
        "message": message.map(|m| m.chars().take(300).collect::<String>()),
    });
    line.to_string()
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` (the Python logs' format), without a date crate.
fn utc_now() -> String {
    utc_at(std::time::SystemTime::now())
}

fn utc_at(t: std::time::SystemTime) -> String {
    let now = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let (days, secs) = ((now.as_secs() / 86400) as i64, now.as_secs() % 86400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{:03}Z", now.subsec_millis())
}

/// Every registered parser family (`derender parsers`): per kind, a list
/// of `{"name", "aliases", "needs"}`, and with a model directory, whether
/// each fits its vocabulary (`"fits": null` or the reason it does not).
#[pyfunction]
#[pyo3(signature = (model=None))]
fn parser_families(py: Python<'_>, model: Option<&str>) -> PyResult<String> {
    let loaded = match model {
        None => None,
        Some(m) => Some(py.detach(|| Model::load(m)).map_err(|e| PyValueError::new_err(e.to_string()))?),
    };
    let registry = Registry::default();
    let mut answer = serde_json::Map::new();
    for (key, kind) in [("tool", Kind::Tool), ("reasoning", Kind::Reasoning)] {
        let mut rows = Vec::new();
        for listing in registry.listing(kind) {
            let mut row = serde_json::json!({"name": listing.name, "aliases": listing.aliases, "needs": listing.needs});
            if let Some(model) = &loaded {
                let fits = registry.fits(kind, listing.name, model);
                row["fits"] = fits.and_then(Result::err).map_or(serde_json::Value::Null, serde_json::Value::String);
            }
            rows.push(row);
        }
        answer.insert(key.to_string(), serde_json::Value::Array(rows));
    }
    Ok(serde_json::Value::Object(answer).to_string())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    install_panic_hook();
    m.add_class::<Derenderer>()?;
    m.add_class::<CallStats>()?;
    m.add_class::<detokenizer::IncrementalDetokenizer>()?;
    m.add_class::<stream_parser::StreamParser>()?;
    m.add_class::<plugin::PluginTokenizer>()?;
    m.add_function(wrap_pyfunction!(native_routes, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_dirs, m)?)?;
    m.add_function(wrap_pyfunction!(parser_families, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    static LINES: Mutex<Vec<String>> = Mutex::new(Vec::new());

    #[test]
    fn a_panic_is_one_json_line_with_its_place_and_message() {
        std::panic::set_hook(Box::new(|info| LINES.lock().expect("lock").push(super::panic_line(info))));
        let what = "x".repeat(400);
        let _ = std::panic::catch_unwind(|| panic!("boom {what}"));
        let _ = std::panic::take_hook();
        let line = LINES.lock().expect("lock").pop().expect("a line");
        let v: serde_json::Value = serde_json::from_str(&line).expect("JSON");
        assert_eq!(v["level"], "error");
        assert!(v["location"].as_str().expect("location").starts_with("rust/python/src/lib.rs:"), "{v}");
        let message = v["message"].as_str().expect("message");
        assert!(message.starts_with("boom xxx") && message.chars().count() == 300);
        let time = v["time"].as_str().expect("time");
        assert!(time.len() == 24 && time.ends_with('Z') && &time[10..11] == "T", "{time}");
    }

    #[test]
    fn utc_dates_are_civil_dates() {
        // 2024-02-29 (a leap day) and 2000-03-01, from their day numbers.
        let day = |days: u64| {
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(days * 86400 + 3661);
            super::utc_at(t)
        };
        assert_eq!(day(19782), "2024-02-29T01:01:01.000Z");
        assert_eq!(day(11017), "2000-03-01T01:01:01.000Z");
        assert_eq!(day(0), "1970-01-01T01:01:01.000Z");
    }
}
