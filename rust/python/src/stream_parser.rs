//! `derender.StreamParser`: a chat stream's reasoning and tool-call deltas
//! in process, through the server's own stream code, with the parsers kept
//! live between chunks; `snapshot()` is the server's `stream_state`.

use derender_core::derender::LiveChatStream;
use derender_core::wire::request::{GenChoice, StopReason};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde_json::{json, Value};

use crate::errors::api_error;
use crate::Derenderer;

#[pyclass(module = "derender._native", unsendable)]
pub struct StreamParser {
    core: Py<Derenderer>,
    live: LiveChatStream,
}

#[pymethods]
impl StreamParser {
    #[new]
    #[pyo3(signature = (core, chat_request, prompt_token_ids=None, stream_state=None))]
    fn new(
        py: Python<'_>,
        core: Py<Derenderer>,
        chat_request: &Bound<'_, PyAny>,
        prompt_token_ids: Option<Vec<i64>>,
        stream_state: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let value = |o: &Bound<'_, PyAny>| -> PyResult<Value> {
            pythonize::depythonize(o).map_err(|e| PyValueError::new_err(e.to_string()))
        };
        let mut body = json!({
            "chat_request": value(chat_request)?,
            "stream": true,
            "generate_chunk": {"request_id": "in-process", "choices": []},
        });
        if let Some(ids) = prompt_token_ids {
            body["prompt_token_ids"] = json!(ids);
        }
        if let Some(state) = stream_state.filter(|s| !s.is_none()) {
            body["stream_state"] = value(state)?;
        }
        let opened = py.detach(|| core.get().inner.core().open_live_chat(&body));
        let live = opened.map_err(|e| api_error(py, &e))?;
        Ok(StreamParser { core, live })
    }

    /// Parse the next chunk of output ids: the chunk's choice as the server
    /// answers it (`delta` with `role`, `content`, `reasoning`,
    /// `tool_calls`; `finish_reason`; `stop_reason`).
    #[pyo3(signature = (token_ids, finish_reason=None, stop_reason=None))]
    fn push<'py>(
        &mut self,
        py: Python<'py>,
        token_ids: Vec<i64>,
        finish_reason: Option<String>,
        stop_reason: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let stop_reason = match stop_reason.filter(|s| !s.is_none()) {
            None => None,
            Some(s) => match s.extract::<i64>() {
                Ok(id) => Some(StopReason::Int(id)),
                Err(_) => Some(StopReason::Str(s.extract::<String>()?)),
            },
        };
        let choice = GenChoice { index: 0, finish_reason, stop_reason, token_ids: Some(token_ids), logprobs: None };
        let core = self.core.get().inner.core();
        let chunk = core.push_live_chat(&mut self.live, choice).map_err(|e| api_error(py, &e))?;
        match chunk.choices.first() {
            Some(choice) => pythonize::pythonize(py, choice).map_err(|e| PyValueError::new_err(e.to_string())),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The `stream_state` the server would have answered after the last
    /// chunk: send it with the next call to a server (or `StreamParser(...,
    /// stream_state=...)`) to continue the stream there.
    fn snapshot<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let state = self.core.get().inner.core().live_chat_state(&mut self.live);
        pythonize::pythonize(py, &state).map_err(|e| PyValueError::new_err(e.to_string()))
    }
}
