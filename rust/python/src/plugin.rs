//! Python parser plugins behind the core's parser traits. The core calls
//! parsers with the GIL released; each call here re-acquires it. A Python
//! exception is recorded in the parser's failure slot (the core answers it
//! as an error envelope) and the parser goes quiet from then on.

use std::sync::{Arc, OnceLock};

use derender_core::error::sanitize;
use derender_core::parse::family::{KeepSpecial, ReasoningParserFactory, ToolParserFactory};
use derender_core::parse::plugin::FailureSlot;
use derender_core::parse::{ChatContext, Extracted, FunctionCall, Ids, ReasoningParser, Texts, ToolChoice, ToolParser};
use derender_core::wire::response::{Delta, DeltaFunctionCall, DeltaToolCall};
use derender_core::{ApiError, Model};
use pyo3::exceptions::{PyNotImplementedError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

/// The tokenizer a plugin is constructed with (a small slice of the
/// Hugging Face tokenizer API).
#[pyclass(frozen, module = "derender._native")]
pub struct PluginTokenizer {
    model: Arc<Model>,
    vocab: OnceLock<Py<PyDict>>,
}

#[pymethods]
impl PluginTokenizer {
    /// Token ids of `text`, no special tokens added.
    fn encode(&self, py: Python<'_>, text: &str) -> PyResult<Vec<u32>> {
        py.detach(|| self.model.encode_text(text)).map_err(PyValueError::new_err)
    }

    /// The text of `ids`, special tokens kept.
    fn decode(&self, ids: Vec<i64>) -> String {
        self.model.decode(&ids)
    }

    /// The id of one token (`None` when it is not in the vocabulary).
    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.model.tokenizer.token_to_id(token)
    }

    /// `{token: id}` with added tokens, built on first use.
    fn get_vocab(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        if let Some(v) = self.vocab.get() {
            return Ok(v.clone_ref(py));
        }
        let dict = PyDict::new(py);
        for (token, id) in self.model.tokenizer.get_vocab(true) {
            dict.set_item(token, id)?;
        }
        let dict = dict.unbind();
        Ok(self.vocab.get_or_init(|| dict).clone_ref(py))
    }

    #[getter(vocab)]
    fn vocab_attr(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        self.get_vocab(py)
    }
}

/// vLLM's exception handlers: value errors are the client's 400, a
/// `NotImplementedError` is 501, anything else a 500.
fn api_error(py: Python<'_>, plugin: &str, err: PyErr) -> ApiError {
    err.display(py);
    let message = sanitize(&err.value(py).to_string());
    if err.is_instance_of::<PyValueError>(py)
        || err.is_instance_of::<PyTypeError>(py)
        || err.is_instance_of::<PyOverflowError>(py)
    {
        return ApiError::bad_request(message);
    }
    if err.is_instance_of::<PyNotImplementedError>(py) {
        return ApiError { status: 501, kind: "NotImplementedError", message, param: None };
    }
    let kind = err.get_type(py).name().map(|n| n.to_string()).unwrap_or_else(|_| "Exception".into());
    ApiError::internal(format!("parser plugin '{plugin}' raised {kind}: {message}"))
}

/// What a plugin sees of the request (`request` argument): a plain dict.
fn request_view(ctx: &ChatContext) -> String {
    let tool_choice = match &ctx.tool_choice {
        ToolChoice::None => serde_json::json!("none"),
        ToolChoice::Null => serde_json::Value::Null,
        ToolChoice::Auto => serde_json::json!("auto"),
        ToolChoice::Required => serde_json::json!("required"),
        ToolChoice::Named(n) => serde_json::json!({"type": "function", "function": {"name": n}}),
    };
    serde_json::json!({
        "tools": ctx.tools,
        "tool_choice": tool_choice,
        "parallel_tool_calls": ctx.parallel_tool_calls,
        "include_reasoning": ctx.include_reasoning,
        "chat_template_kwargs": ctx.template_kwargs,
    })
    .to_string()
}

/// One parser instance (class called with the tokenizer) and its request view.
struct Instance {
    name: String,
    object: Option<Py<PyAny>>,
    request: Option<Py<PyAny>>,
    failure: FailureSlot,
}

impl Instance {
    fn new(
        name: &str,
        class: &Py<PyAny>,
        tokenizer: &OnceLock<Py<PluginTokenizer>>,
        ctx: &ChatContext,
        model: &Arc<Model>,
    ) -> Self {
        let failure = FailureSlot::default();
        let made = Python::attach(|py| -> PyResult<(Py<PyAny>, Py<PyAny>)> {
            let tok = match tokenizer.get() {
                Some(t) => t.clone_ref(py),
                None => {
                    let t = Py::new(py, PluginTokenizer { model: model.clone(), vocab: OnceLock::new() })?;
                    tokenizer.get_or_init(|| t).clone_ref(py)
                }
            };
            let object = class.call1(py, (tok,))?;
            let request = py.import("json")?.call_method1("loads", (request_view(ctx),))?.unbind();
            Ok((object, request))
        });
        let (object, request) = match made {
            Ok((o, r)) => (Some(o), Some(r)),
            Err(e) => {
                failure.record(Python::attach(|py| api_error(py, name, e)));
                (None, None)
            }
        };
        Instance { name: name.to_string(), object, request, failure }
    }

    /// Call `method` unless an earlier call failed; `None` after a failure.
    /// `args` gets the request view.
    fn call<T>(
        &self,
        method: &str,
        args: impl FnOnce(Python<'_>, &Py<PyAny>) -> PyResult<Py<PyTuple>>,
        convert: for<'py> fn(&Bound<'py, PyAny>) -> PyResult<T>,
    ) -> Option<T> {
        if self.failure.get().is_some() {
            return None;
        }
        let object = self.object.as_ref()?;
        Python::attach(|py| {
            let request = self.request.as_ref().map_or_else(|| py.None(), |r| r.clone_ref(py));
            let result = args(py, &request)
                .and_then(|a| object.bind(py).call_method1(method, a.bind(py).clone()))
                .and_then(|r| convert(&r));
            result.map_err(|e| self.failure.record(api_error(py, &self.name, e))).ok()
        })
    }

    fn has(&self, method: &str) -> bool {
        let Some(object) = &self.object else { return false };
        Python::attach(|py| object.bind(py).hasattr(method).unwrap_or(false))
    }
}

fn opt_str(v: Option<Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    match v {
        Some(v) if !v.is_none() => Ok(Some(v.extract()?)),
        _ => Ok(None),
    }
}

/// A returned delta: `None`, a dict, or an object with `model_dump()`.
fn to_delta(value: &Bound<'_, PyAny>) -> PyResult<Option<Delta>> {
    if value.is_none() {
        return Ok(None);
    }
    let dict = match value.downcast::<PyDict>() {
        Ok(d) => d.clone(),
        Err(_) => value.call_method0("model_dump")?.downcast_into::<PyDict>()?,
    };
    let mut delta = Delta {
        content: opt_str(dict.get_item("content")?)?,
        reasoning: opt_str(dict.get_item("reasoning")?)?,
        ..Default::default()
    };
    if let Some(calls) = dict.get_item("tool_calls")?.filter(|c| !c.is_none()) {
        for call in calls.try_iter()? {
            let call = call?;
            let call = match call.downcast::<PyDict>() {
                Ok(d) => d.clone(),
                Err(_) => call.call_method0("model_dump")?.downcast_into::<PyDict>()?,
            };
            let index: i64 = call
                .get_item("index")?
                .ok_or_else(|| PyTypeError::new_err("tool call delta without index"))?
                .extract()?;
            let kind = match opt_str(call.get_item("type")?)?.as_deref() {
                None => None,
                Some("function") => Some("function"),
                Some(other) => {
                    return Err(PyValueError::new_err(format!("tool call type must be 'function', got {other:?}")))
                }
            };
            let function = match call.get_item("function")?.filter(|f| !f.is_none()) {
                None => None,
                Some(f) => {
                    let f = match f.downcast::<PyDict>() {
                        Ok(d) => d.clone(),
                        Err(_) => f.call_method0("model_dump")?.downcast_into::<PyDict>()?,
                    };
                    Some(DeltaFunctionCall {
                        name: opt_str(f.get_item("name")?)?,
                        arguments: opt_str(f.get_item("arguments")?)?,
                    })
                }
            };
            delta.tool_calls.push(DeltaToolCall { id: opt_str(call.get_item("id")?)?, kind, index, function });
        }
    }
    Ok(Some(delta))
}

fn id_lists<'py>(py: Python<'py>, ids: &Ids) -> PyResult<[Bound<'py, PyList>; 3]> {
    Ok([PyList::new(py, ids.previous)?, PyList::new(py, ids.current)?, PyList::new(py, ids.delta)?])
}

/// `(ids,)` as a Python list argument.
fn one_list(py: Python<'_>, ids: &[i64]) -> PyResult<Py<PyTuple>> {
    Ok(PyTuple::new(py, [PyList::new(py, ids)?])?.unbind())
}

/// A registered `--tool-parser-plugin` class.
pub struct PyToolFactory {
    pub name: String,
    pub class: Py<PyAny>,
    pub keep_special_tokens: bool,
    pub supports_required_and_named: bool,
    tokenizer: OnceLock<Py<PluginTokenizer>>,
}

impl PyToolFactory {
    pub fn new(name: &str, class: Bound<'_, PyAny>) -> PyResult<Self> {
        let flag = |attr: &str, default: bool| -> PyResult<bool> {
            match class.getattr_opt(attr)? {
                Some(v) => v.is_truthy(),
                None => Ok(default),
            }
        };
        Ok(PyToolFactory {
            name: name.to_string(),
            keep_special_tokens: flag("keep_special_tokens", false)?,
            supports_required_and_named: flag("supports_required_and_named", true)?,
            class: class.unbind(),
            tokenizer: OnceLock::new(),
        })
    }
}

impl ToolParserFactory for PyToolFactory {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        let instance = Instance::new(&self.name, &self.class, &self.tokenizer, ctx, model);
        Box::new(PyToolParser { instance, supports_required_and_named: self.supports_required_and_named })
    }
    fn keep_special_tokens(&self) -> KeepSpecial {
        if self.keep_special_tokens {
            KeepSpecial::WithTools
        } else {
            KeepSpecial::Never
        }
    }
    fn supports_required_and_named(&self) -> bool {
        self.supports_required_and_named
    }
}

struct PyToolParser {
    instance: Instance,
    supports_required_and_named: bool,
}

/// `(tools_called, calls, content)`, calls as dicts `{name, arguments[, id]}`.
fn to_extracted(value: &Bound<'_, PyAny>) -> PyResult<Extracted> {
    let (tools_called, calls, content): (bool, Bound<'_, PyAny>, Option<String>) = value.extract()?;
    let mut out = Vec::new();
    for call in calls.try_iter()? {
        let call = call?;
        let field = |key: &str| -> PyResult<Option<String>> {
            match call.get_item(key) {
                Ok(v) => opt_str(Some(v)),
                Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyError>(call.py()) => Ok(None),
                Err(e) => Err(e),
            }
        };
        let name = field("name")?.ok_or_else(|| PyTypeError::new_err("tool call without a name"))?;
        let arguments =
            field("arguments")?.ok_or_else(|| PyTypeError::new_err("tool call without arguments (a JSON string)"))?;
        out.push(FunctionCall { id: field("id")?, name, arguments });
    }
    Ok(Extracted { tools_called, calls: out, content })
}

impl ToolParser for PyToolParser {
    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        let args = |py: Python<'_>, req: &Py<PyAny>| Ok((text, req.clone_ref(py)).into_pyobject(py)?.unbind());
        let got = self.instance.call("extract_tool_calls", args, to_extracted);
        got.unwrap_or_else(|| Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) })
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        let args = |py: Python<'_>, req: &Py<PyAny>| {
            let [prev, cur, delta] = id_lists(py, ids)?;
            Ok((t.previous, t.current, t.delta, prev, cur, delta, req.clone_ref(py)).into_pyobject(py)?.unbind())
        };
        self.instance.call("extract_tool_calls_streaming", args, to_delta).flatten()
    }

    fn remaining_unstreamed_args(&mut self) -> String {
        if !self.instance.has("remaining_unstreamed_args") {
            return String::new();
        }
        let args = |py: Python<'_>, _: &Py<PyAny>| Ok(PyTuple::empty(py).unbind());
        let got = self.instance.call("remaining_unstreamed_args", args, |v| opt_str(Some(v.clone())));
        got.flatten().unwrap_or_default()
    }

    fn supports_required_and_named(&self) -> bool {
        self.supports_required_and_named
    }

    fn failure(&self) -> Option<ApiError> {
        self.instance.failure.get()
    }
}

/// A registered `--reasoning-parser-plugin` class.
pub struct PyReasoningFactory {
    pub name: String,
    pub class: Py<PyAny>,
    pub keep_special_tokens: bool,
    tokenizer: OnceLock<Py<PluginTokenizer>>,
}

impl PyReasoningFactory {
    pub fn new(name: &str, class: Bound<'_, PyAny>) -> PyResult<Self> {
        let keep = match class.getattr_opt("keep_special_tokens")? {
            Some(v) => v.is_truthy()?,
            None => false,
        };
        Ok(PyReasoningFactory {
            name: name.to_string(),
            class: class.unbind(),
            keep_special_tokens: keep,
            tokenizer: OnceLock::new(),
        })
    }
}

impl ReasoningParserFactory for PyReasoningFactory {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        Box::new(PyReasoningParser { instance: Instance::new(&self.name, &self.class, &self.tokenizer, ctx, model) })
    }
    fn keep_special_tokens(&self) -> bool {
        self.keep_special_tokens
    }
}

struct PyReasoningParser {
    instance: Instance,
}

impl ReasoningParser for PyReasoningParser {
    fn extract_reasoning(&self, text: &str, _ctx: &ChatContext) -> (Option<String>, Option<String>) {
        let args = |py: Python<'_>, req: &Py<PyAny>| Ok((text, req.clone_ref(py)).into_pyobject(py)?.unbind());
        let got = self.instance.call("extract_reasoning", args, |v| v.extract::<(Option<String>, Option<String>)>());
        got.unwrap_or_else(|| (None, Some(text.to_string())))
    }

    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        let got = self.instance.call("is_reasoning_end", |py, _| one_list(py, ids), |v| v.is_truthy());
        got.unwrap_or(false)
    }

    fn extract_content_ids(&self, ids: &[i64]) -> Vec<i64> {
        let got = self.instance.call("extract_content_ids", |py, _| one_list(py, ids), |v| v.extract::<Vec<i64>>());
        got.unwrap_or_default()
    }

    fn extract_reasoning_streaming(&mut self, t: &Texts, ids: &Ids) -> Option<Delta> {
        let args = |py: Python<'_>, _: &Py<PyAny>| {
            let [prev, cur, delta] = id_lists(py, ids)?;
            Ok((t.previous, t.current, t.delta, prev, cur, delta).into_pyobject(py)?.unbind())
        };
        self.instance.call("extract_reasoning_streaming", args, to_delta).flatten()
    }

    fn failure(&self) -> Option<ApiError> {
        self.instance.failure.get()
    }
}
