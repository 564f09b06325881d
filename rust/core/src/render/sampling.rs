//! `SamplingParams` as vLLM 0.33 serialises it inside a `GenerateRequest`.
//!
//! `SamplingParams` is a `msgspec.Struct(omit_defaults=True)`: a field is left
//! out when its value *is* the default object. In CPython that means: `None`
//! and booleans equal to the default are omitted, small ints (-5..=256) equal
//! to the default are omitted, floats taken from the request or the model's
//! generation config are always written (they are new objects), and `[]` is
//! written where the default is `None`.

use serde_json::{Map, Number, Value};

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

impl Sampling {
    /// The JSON object, fields in struct order, defaults omitted as msgspec does.
    pub fn to_json(&self) -> Map<String, Value> {
        let mut m = Map::new();
        let mut temperature = self.temperature;
        let (mut top_p, mut top_k, mut min_p) = (Some(self.top_p), self.top_k, Some(self.min_p));
        if temperature > 0.0 && temperature < MAX_TEMP {
            temperature = MAX_TEMP;
        }
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
        m
    }
}
