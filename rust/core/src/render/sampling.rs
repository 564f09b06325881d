//! `SamplingParams` as vLLM 0.33 serialises it inside a `GenerateRequest`.
//!
//! `SamplingParams` is a `msgspec.Struct(omit_defaults=True)`: a field is left
//! out when its value *is* the default object. In CPython that means: `None`
//! and booleans equal to the default are omitted, small ints (-5..=256) equal
//! to the default are omitted, floats taken from the request or the model's
//! generation config are always written (they are new objects), and `[]` is
//! written where the default is `None`.

use serde_json::{Map, Number, Value};

use crate::error::ApiError;
use crate::pycompat::repr::repr_float;

/// The inputs of `to_sampling_params`, already resolved (request value →
/// generation config → OpenAI default).
#[derive(Debug, Clone)]
pub struct Sampling {
    pub n: i64,
    pub presence_penalty: f64,
    pub frequency_penalty: f64,
    pub repetition_penalty: f64,
    pub temperature: f64,
    pub top_p: f64,
    pub top_k: i64,
    pub min_p: f64,
    pub seed: Option<i64>,
    pub stop: Vec<String>,
    pub stop_token_ids: Vec<i64>,
    pub ignore_eos: bool,
    pub max_tokens: i64,
    pub min_tokens: i64,
    pub logprobs: Option<i64>,
    pub prompt_logprobs: Option<i64>,
    pub logprob_token_ids: Option<Vec<i64>>,
    pub skip_special_tokens: bool,
    pub spaces_between_special_tokens: bool,
    pub include_stop_str_in_output: bool,
    pub stream: bool,
    pub stream_interval: Option<i64>,
    pub structured_outputs: Option<Value>,
    pub logit_bias: Option<Map<String, Value>>,
    pub allowed_token_ids: Option<Vec<i64>>,
    pub extra_args: Option<Map<String, Value>>,
    pub bad_words: Vec<String>,
    /// `None` for unlimited (-1 or unset).
    pub thinking_token_budget: Option<i64>,
    /// `RepetitionDetectionParams` with its three fields.
    pub repetition_detection: Option<Value>,
    pub watermarking: Option<bool>,
}

const SAMPLING_EPS: f64 = 1e-5;
const MAX_TEMP: f64 = 1e-2;

fn float(x: f64) -> Value {
    Number::from_f64(x).map_or(Value::Null, Value::Number)
}

fn ints(v: &[i64]) -> Value {
    Value::Array(v.iter().map(|&i| Value::from(i)).collect())
}

fn strings(v: &[String]) -> Value {
    Value::Array(v.iter().map(|s| Value::String(s.clone())).collect())
}

/// A `VLLMValidationError`: its text, then `(parameter=..., value=...)` when set.
fn refused(message: String, param: Option<(&str, String)>) -> ApiError {
    match param {
        Some((p, v)) => ApiError::invalid_param(format!("{message} (parameter={p}, value={v})"), p),
        None => ApiError::bad_request(message),
    }
}

impl Sampling {
    /// `SamplingParams.__post_init__`'s checks (`_verify_args`, then
    /// `_verify_greedy_sampling`), in vLLM's order; `max_n` is
    /// `VLLM_MAX_N_SEQUENCES`.
    pub fn verify(&self, max_n: usize) -> Result<(), ApiError> {
        let f = repr_float;
        if self.n < 1 {
            return Err(refused(format!("n must be at least 1, got {}.", self.n), None));
        }
        if self.n as u64 > max_n as u64 {
            return Err(refused(format!("n must be at most {max_n}, got {}. To increase this limit, set the VLLM_MAX_N_SEQUENCES environment variable.", self.n), None));
        }
        for (name, value) in
            [("presence_penalty", self.presence_penalty), ("frequency_penalty", self.frequency_penalty)]
        {
            if !(-2.0..=2.0).contains(&value) {
                return Err(refused(format!("{name} must be in [-2, 2], got {}.", f(value)), None));
            }
        }
        let rp = self.repetition_penalty;
        if !rp.is_finite() {
            return Err(refused(format!("repetition_penalty must be a finite number, got {}.", f(rp)), None));
        }
        if rp <= 0.0 {
            return Err(refused(format!("repetition_penalty must be greater than zero, got {}.", f(rp)), None));
        }
        let t = self.effective_temperature();
        let t_param = Some(("temperature", f(t)));
        if !t.is_finite() {
            return Err(refused(format!("temperature must be a finite number, got {}.", f(t)), t_param));
        }
        if t < 0.0 {
            return Err(refused(format!("temperature must be non-negative, got {}.", f(t)), t_param));
        }
        if t > 2.0 {
            return Err(refused(format!("temperature must be in [0, 2], got {}.", f(t)), t_param));
        }
        if !(self.top_p > 0.0 && self.top_p <= 1.0) {
            let p = f(self.top_p);
            return Err(refused(format!("top_p must be in (0, 1], got {p}."), Some(("top_p", p))));
        }
        if self.top_k < -1 {
            return Err(refused(format!("top_k must be 0 (disable), or at least 1, got {}.", self.top_k), None));
        }
        if !(0.0..=1.0).contains(&self.min_p) {
            return Err(refused(format!("min_p must be in [0, 1], got {}.", f(self.min_p)), None));
        }
        if self.max_tokens < 1 {
            let m = self.max_tokens;
            return Err(refused(
                format!("max_tokens must be at least 1, got {m}."),
                Some(("max_tokens", m.to_string())),
            ));
        }
        if self.min_tokens < 0 {
            return Err(refused(
                format!("min_tokens must be greater than or equal to 0, got {}.", self.min_tokens),
                None,
            ));
        }
        if self.min_tokens > self.max_tokens {
            return Err(refused(
                format!(
                    "min_tokens must be less than or equal to max_tokens={}, got {}.",
                    self.max_tokens, self.min_tokens
                ),
                None,
            ));
        }
        if let Some(i) = self.stream_interval.filter(|&i| i < 1) {
            return Err(refused(
                format!("stream_interval must be at least 1, got {i}."),
                Some(("stream_interval", i.to_string())),
            ));
        }
        for (name, value) in [("logprobs", self.logprobs), ("prompt_logprobs", self.prompt_logprobs)] {
            if let Some(l) = value.filter(|&l| l < 0 && l != -1) {
                return Err(refused(
                    format!("{name} must be non-negative or -1, got {l}."),
                    Some((name, l.to_string())),
                ));
            }
        }
        if self.stop.iter().any(String::is_empty) {
            return Err(refused("stop cannot contain an empty string.".into(), None));
        }
        if self.bad_words.iter().any(String::is_empty) {
            let shown = crate::pycompat::repr::repr_value(&strings(&self.bad_words));
            return Err(refused(format!("bad_words cannot contain an empty string. Got bad_words={shown}"), None));
        }
        if t < SAMPLING_EPS && self.n > 1 {
            return Err(refused(format!("n must be 1 when using greedy sampling, got {}.", self.n), None));
        }
        Ok(())
    }

    /// The temperature after `__post_init__` lifts tiny ones to `MAX_TEMP`.
    fn effective_temperature(&self) -> f64 {
        if self.temperature > 0.0 && self.temperature < MAX_TEMP {
            MAX_TEMP
        } else {
            self.temperature
        }
    }

    /// The JSON object, fields in struct order, defaults omitted as msgspec does.
    pub fn to_json(&self) -> Map<String, Value> {
        let mut m = Map::new();
        let temperature = self.effective_temperature();
        let (mut top_p, mut top_k, mut min_p) = (Some(self.top_p), self.top_k, Some(self.min_p));
        if temperature < SAMPLING_EPS {
            // Greedy: `__post_init__` resets these to the module's own
            // constants, which are the defaults' objects: omitted.
            (top_p, top_k, min_p) = (None, 0, None);
        }
        let seed = self.seed.filter(|&s| s != -1);
        if self.n != 1 {
            m.insert("n".into(), Value::from(self.n));
        }
        m.insert("presence_penalty".into(), float(self.presence_penalty));
        m.insert("frequency_penalty".into(), float(self.frequency_penalty));
        m.insert("repetition_penalty".into(), float(self.repetition_penalty));
        m.insert("temperature".into(), float(temperature));
        if let Some(w) = self.watermarking {
            m.insert("watermarking".into(), Value::Bool(w));
        }
        if let Some(p) = top_p {
            m.insert("top_p".into(), float(p));
        }
        if top_k != 0 {
            m.insert("top_k".into(), Value::from(top_k));
        }
        if let Some(p) = min_p {
            m.insert("min_p".into(), float(p));
        }
        if let Some(s) = seed {
            m.insert("seed".into(), Value::from(s));
        }
        m.insert("stop".into(), strings(&self.stop));
        let mut stop_ids: Vec<i64> = Vec::new();
        for id in &self.stop_token_ids {
            if !stop_ids.contains(id) {
                stop_ids.push(*id);
            }
        }
        m.insert("stop_token_ids".into(), ints(&stop_ids));
        if self.ignore_eos {
            m.insert("ignore_eos".into(), Value::Bool(true));
        }
        if self.max_tokens != 16 {
            m.insert("max_tokens".into(), Value::from(self.max_tokens));
        }
        if self.min_tokens != 0 {
            m.insert("min_tokens".into(), Value::from(self.min_tokens));
        }
        if let Some(l) = self.logprobs {
            m.insert("logprobs".into(), Value::from(l));
        }
        if let Some(l) = self.prompt_logprobs {
            m.insert("prompt_logprobs".into(), Value::from(l));
        }
        if let Some(ids) = &self.logprob_token_ids {
            m.insert("logprob_token_ids".into(), ints(ids));
        }
        if !self.skip_special_tokens {
            m.insert("skip_special_tokens".into(), Value::Bool(false));
        }
        if !self.spaces_between_special_tokens {
            m.insert("spaces_between_special_tokens".into(), Value::Bool(false));
        }
        if self.include_stop_str_in_output {
            m.insert("include_stop_str_in_output".into(), Value::Bool(true));
        }
        // RequestOutputKind: DELTA = 1 when streaming, FINAL_ONLY = 2.
        m.insert("output_kind".into(), Value::from(if self.stream { 1 } else { 2 }));
        if let Some(i) = self.stream_interval {
            m.insert("stream_interval".into(), Value::from(i));
        }
        m.insert("skip_clone".into(), Value::Bool(true));
        let dedup_stop = self.stop.iter().map(|s| s.chars().count()).max();
        if let Some(longest) = dedup_stop.filter(|_| !self.include_stop_str_in_output) {
            if longest > 1 {
                m.insert("output_text_buffer_length".into(), Value::from(longest - 1));
            }
        }
        if let Some(s) = &self.structured_outputs {
            m.insert("structured_outputs".into(), s.clone());
        }
        if let Some(b) = &self.logit_bias {
            m.insert("logit_bias".into(), Value::Object(b.clone()));
        }
        if let Some(ids) = &self.allowed_token_ids {
            m.insert("allowed_token_ids".into(), ints(ids));
        }
        if let Some(x) = self.extra_args.as_ref().filter(|x| !x.is_empty()) {
            m.insert("extra_args".into(), Value::Object(x.clone()));
        }
        let mut bad: Vec<String> = Vec::new();
        for w in &self.bad_words {
            if !bad.contains(w) {
                bad.push(w.clone());
            }
        }
        m.insert("bad_words".into(), strings(&bad));
        m.insert("skip_reading_prefix_cache".into(), Value::Bool(self.prompt_logprobs.is_some()));
        if let Some(b) = self.thinking_token_budget {
            m.insert("thinking_token_budget".into(), Value::from(b));
        }
        if let Some(r) = &self.repetition_detection {
            m.insert("repetition_detection".into(), r.clone());
        }
        m
    }
}
