//! `derender.IncrementalDetokenizer`: ids in, text out, as vLLM's
//! incremental detokenizer emits it (the server's plain stream text).

use std::sync::Arc;

use derender_core::detok::Window;
use derender_core::Model;
use pyo3::prelude::*;

use crate::Derenderer;

/// One output's incremental detokenization, in process.
#[pyclass(module = "derender._native")]
pub struct IncrementalDetokenizer {
    model: Arc<Model>,
    window: Window,
    skip_special_tokens: bool,
    /// One id's slot, reused so a step allocates nothing for it.
    one: [i64; 1],
}

#[pymethods]
impl IncrementalDetokenizer {
    #[new]
    #[pyo3(signature = (core, prompt_token_ids=None, skip_special_tokens=true))]
    fn new(core: &Derenderer, prompt_token_ids: Option<Vec<i64>>, skip_special_tokens: bool) -> Self {
        let model = Arc::clone(&core.inner.core().model);
        // The prompt's tail seeds the window, so the first token decodes in context.
        let window = Window::seed(&model, prompt_token_ids.as_deref(), skip_special_tokens);
        IncrementalDetokenizer { model, window, skip_special_tokens, one: [0] }
    }

    /// The text one more token id completes ("" while a character is still partial).
    fn step(&mut self, token_id: i64) -> String {
        self.one[0] = token_id;
        self.window.decode(&self.model, &self.one, self.skip_special_tokens)
    }

    /// The text a chunk of token ids completes.
    fn decode(&mut self, token_ids: Vec<i64>) -> String {
        self.window.decode(&self.model, &token_ids, self.skip_special_tokens)
    }
}
