//! Chunk invariance of the parser streams, per recorded family.
//!
//! For every batch golden of a family (chat endpoint, status 200, not in a
//! documented divergence class: the `goldens` and `chunk_invariance` classes
//! of `tests/reference/families.json`, see `docs/divergences.md`), the model
//! output is streamed through the core's bytes-in/bytes-out entry
//! ([`Derenderer::handle`], as `rust/python` calls it), echoing
//! `stream_state` between calls as a client does, under many chunkings. Each
//! stream, once assembled (content, reasoning, tool calls by index: name +
//! arguments, finish_reason), must equal the recorded batch answer. The
//! default (compact) stream states and vLLM's history format
//! (`--stream-state-mode replay`) must give the same chunks, call by call.
//!
//! Chunkings per choice: all tokens at once; one token per chunk; all at
//! once then a token-less finishing chunk (only where the stop is visible
//! before the finish, see [`finish_is_predictable`]); every two-way split
//! (outputs up to 64 tokens; longer ones get 64 split points spread over the
//! output plus up to 64 cuts inside a marker or a multi-byte character); 40
//! seeded random partitions (100 with `DERENDER_EXHAUSTIVE=1`). Odd-numbered
//! random partitions add cuts inside markers (tag-like text such as
//! `<tool_call>` spelled as text tokens, `[TOOL_CALLS]`, `<｜tool▁sep｜>`,
//! JSON keys) and inside multi-byte
//! characters (CJK, emoji); every tenth ends with a token-less finishing
//! chunk; every fifth, for outputs up to 64 tokens, cuts each boundary with
//! probability 1/2.
//!
//! Runtime sampling (in replay mode every call replays the output so far):
//! random partitions otherwise have
//! 1 to 8 cuts at random positions over the whole output, and a choice whose
//! ids, finish and parse-relevant request options repeat an earlier one
//! (golden variants that differ in logprobs, `n`, ...) is streamed once.

mod support;

use std::collections::BTreeMap;
use std::ops::Range;

use derender_core::stream::{StateCodec, StateMode};
use derender_core::{Derenderer, Route};
use serde_json::{json, Value};

/// Seeded random partitions per choice: a sample in the normal test run,
/// all of them with `DERENDER_EXHAUSTIVE=1` (the slow run, docs/testing.md).
fn random_partitions() -> usize {
    if std::env::var_os("DERENDER_EXHAUSTIVE").is_some() {
        100
    } else {
        40
    }
}
const FULL_SPLIT_LIMIT: usize = 64;
const MAX_RANDOM_CUTS: usize = 8;

/// A small deterministic PRNG (splitmix64): no new crate for the tests.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// One assembled choice, in the shape `replay.py` compares.
#[derive(Debug, Clone, PartialEq)]
struct Assembled {
    content: String,
    reasoning: String,
    /// `(name, arguments as JSON, arguments as sent)` by tool-call index.
    tools: Vec<(Option<String>, Value, String)>,
    finish_reason: Option<String>,
}

impl Assembled {
    /// Equal as the referee sees it: arguments compared as JSON values.
    fn same_answer(&self, other: &Assembled) -> bool {
        self.content == other.content
            && self.reasoning == other.reasoning
            && self.finish_reason == other.finish_reason
            && self.tools.len() == other.tools.len()
            && self.tools.iter().zip(&other.tools).all(|(a, b)| a.0 == b.0 && a.1 == b.1)
    }

    /// `other` with `token` at the end of its content or its reasoning.
    fn shows_stop_token(&self, other: &Assembled, token: &str) -> bool {
        let in_content = Assembled { content: format!("{}{token}", other.content), ..other.clone() };
        let in_reasoning = Assembled { reasoning: format!("{}{token}", other.reasoning), ..other.clone() };
        !token.is_empty() && (self.same_answer(&in_content) || self.same_answer(&in_reasoning))
    }
}

fn args_value(text: Option<&str>) -> Value {
    match text {
        None | Some("") => json!({}),
        Some(s) => serde_json::from_str(s).unwrap_or_else(|_| json!({ "$unparsed": s })),
    }
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or("").to_string()
}

fn assemble_batch(choice: &Value) -> Assembled {
    let msg = &choice["message"];
    let tools = msg["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .map(|tc| {
                    let f = &tc["function"];
                    let raw = f["arguments"].as_str();
                    (f["name"].as_str().map(str::to_string), args_value(raw), raw.unwrap_or("").to_string())
                })
                .collect()
        })
        .unwrap_or_default();
    Assembled {
        content: text(&msg["content"]),
        reasoning: text(&msg["reasoning"]),
        tools,
        finish_reason: choice["finish_reason"].as_str().map(str::to_string),
    }
}

#[derive(Default)]
struct StreamAcc {
    content: String,
    reasoning: String,
    tools: BTreeMap<i64, (Option<String>, String)>,
    finish_reason: Option<String>,
}

impl StreamAcc {
    fn add(&mut self, choice: &Value) {
        let d = &choice["delta"];
        self.content += &text(&d["content"]);
        self.reasoning += &text(&d["reasoning"]);
        for tc in d["tool_calls"].as_array().into_iter().flatten() {
            let slot = self.tools.entry(tc["index"].as_i64().unwrap_or(-1)).or_default();
            let f = &tc["function"];
            if let Some(name) = f["name"].as_str().filter(|n| !n.is_empty()) {
                slot.0 = Some(name.to_string());
            }
            slot.1 += f["arguments"].as_str().unwrap_or("");
        }
        if let Some(fr) = choice["finish_reason"].as_str() {
            self.finish_reason = Some(fr.to_string());
        }
    }

    fn finish(self) -> Assembled {
        Assembled {
            content: self.content,
            reasoning: self.reasoning,
            tools: self.tools.into_values().map(|(name, args)| (name, args_value(Some(&args)), args)).collect(),
            finish_reason: self.finish_reason,
        }
    }
}

/// One output choice of a batch golden, ready to stream.
struct Lane {
    index: i64,
    ids: Vec<i64>,
    finish_reason: Value,
    stop_reason: Value,
    expected: Assembled,
    /// Token boundaries (1..len) that cut a marker or a multi-byte character.
    interesting: Vec<usize>,
    /// Can the stream tell, before the finish arrives, that the last token
    /// stopped the output? (See [`finish_is_predictable`].)
    finish_only: bool,
    /// The last token's text. Where a stop token ends the chunk before a
    /// token-less finish, vLLM's stream shows it: a stream that stays
    /// vLLM's gives batch's answer with that text at the end of its content
    /// or reasoning (docs/divergences.md, "Streams follow the batch answer").
    stop_token: String,
    /// What the stream's answer depends on: ids, finish, and the request
    /// options parsing reads. Lanes repeating a key are streamed once.
    key: String,
}

/// One streamable batch golden.
struct Case {
    id: String,
    model: Value,
    request_id: Value,
    prompt_tokens: Value,
    prompt_token_ids: Value,
    chat_request: Value,
    lanes: Vec<Lane>,
}

impl Case {
    /// Stream `lane` cut into `parts`; an empty last part is a token-less
    /// finishing chunk. Returns the assembled answer and the chunks (tool
    /// ids and `created` blanked), or the failing call.
    fn stream(&self, d: &Derenderer, lane: &Lane, parts: &[Range<usize>]) -> Result<(Assembled, Vec<Value>), String> {
        let mut state = Value::Null;
        let mut acc = StreamAcc::default();
        let mut chunks = Vec::with_capacity(parts.len());
        for (k, part) in parts.iter().enumerate() {
            let last = k + 1 == parts.len();
            let body = json!({
                "stream": true,
                "model": self.model,
                "generate_chunk": {
                    "request_id": self.request_id,
                    "choices": [{
                        "index": lane.index,
                        "finish_reason": if last { lane.finish_reason.clone() } else { Value::Null },
                        "stop_reason": if last { lane.stop_reason.clone() } else { Value::Null },
                        "token_ids": &lane.ids[part.clone()],
                        "logprobs": null,
                    }],
                },
                "stream_state": state,
                "prompt_tokens": self.prompt_tokens,
                "prompt_token_ids": self.prompt_token_ids,
                "chat_request": self.chat_request,
            });
            let (status, answer) = support::call(d, Route::ChatDerender, &body);
            if status != 200 {
                return Err(format!("call {k} ({part:?}): status {status}: {answer}"));
            }
            for choice in answer["chunk"]["choices"].as_array().into_iter().flatten() {
                acc.add(choice);
            }
            state = answer["stream_state"].clone();
            chunks.push(blank_volatile(answer["chunk"].clone()));
        }
        Ok((acc.finish(), chunks))
    }
}

/// A chunk with its volatile fields (random tool-call ids, `created`) blanked.
fn blank_volatile(mut chunk: Value) -> Value {
    chunk["created"] = Value::Null;
    for choice in chunk["choices"].as_array_mut().into_iter().flatten() {
        for tc in choice["delta"]["tool_calls"].as_array_mut().into_iter().flatten() {
            if tc["id"].is_string() {
                tc["id"] = json!("<id>");
            }
        }
    }
    chunk
}

/// Where the recorded request lacks `prompt_token_ids` (batch needs none),
/// render its chat request, as a client renders before generating.
fn prompt_ids(d: &Derenderer, request: &Value) -> Option<Value> {
    if request["prompt_token_ids"].is_array() {
        return Some(request["prompt_token_ids"].clone());
    }
    let (status, rendered) = support::call(d, Route::ChatRender, &request["chat_request"]);
    (status == 200).then(|| rendered["token_ids"].clone()).filter(Value::is_array)
}

/// Tag-like markers and JSON keys whose cuts the random partitions target.
fn marker_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let b = text.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'<' || c == b'[' {
            let close = if c == b'<' { b'>' } else { b']' };
            let end = b[i..].iter().take(64).position(|&x| x == close || x == b'\n');
            if let Some(e) = end.filter(|&e| b[i + e] == close && e > 1) {
                spans.push(i..i + e + 1);
            }
        }
    }
    for lit in ["```json", "\"name\"", "\"arguments\"", "\"parameters\""] {
        spans.extend(text.match_indices(lit).map(|(s, m)| s..s + m.len()));
    }
    spans
}

/// Boundaries that cut a marker or a multi-byte character, judged on a
/// window of tokens around each boundary (decoding every prefix would make
/// this quadratic in the output length).
fn interesting_cuts(d: &Derenderer, ids: &[i64]) -> Vec<usize> {
    const W: usize = 12;
    (1..ids.len())
        .filter(|&i| {
            let (lo, hi) = (i.saturating_sub(W), (i + W).min(ids.len()));
            let left = d.core().model.decode(&ids[lo..i]);
            let window = d.core().model.decode(&ids[lo..hi]);
            if left.ends_with('\u{FFFD}') && !window.starts_with(&left[..]) {
                return true; // cuts a multi-byte character
            }
            let off = left.len();
            window.starts_with(&left[..]) && marker_spans(&window).iter().any(|s| s.start < off && off < s.end)
        })
        .collect()
}

fn lane_key(chat_request: &Value, choice: &Value) -> String {
    let mut options = chat_request.clone();
    if let Some(o) = options.as_object_mut() {
        for k in ["messages", "model", "n", "max_tokens", "return_token_ids", "stream"] {
            o.remove(k);
        }
    }
    let c = json!([choice["token_ids"], choice["finish_reason"], choice["stop_reason"], options]);
    c.to_string()
}

/// A token-less finishing chunk is only answerable like batch when the
/// stop is visible before it: no engine stop reason, or a stop token the
/// request or model names (derender holds those back). A stop string, or a
/// stop token only the engine's final report names (`stop_reason: 0` with no
/// `stop_token_ids`; an EOS under `ignore_eos`), arrives after its text was
/// sent and cannot be taken back (docs/divergences.md, "Not reachable").
fn finish_is_predictable(d: &Derenderer, chat_request: &Value, ids: &[i64], stop_reason: &Value) -> bool {
    let Some(reason) = stop_reason.as_i64() else { return stop_reason.is_null() };
    if ids.last() != Some(&reason) {
        return true; // not a token of the output: nothing to drop
    }
    let named = chat_request["stop_token_ids"].as_array().is_some_and(|l| l.iter().any(|x| x.as_i64() == Some(reason)));
    let honor_eos = chat_request["ignore_eos"].as_bool() != Some(true);
    named
        || (honor_eos
            && (d.core().model.eos_token_id == Some(reason) || d.core().model.model_eos_ids.contains(&reason)))
}

fn load_cases(config: &str, d: &Derenderer, skipped: &mut Vec<String>) -> Vec<Case> {
    // The documented divergence classes, and the batch goldens in one that
    // the golden classes miss.
    let facts = support::facts();
    let excuses = facts.excuses(config, &["goldens", "chunk_invariance"]);
    let mut out = Vec::new();
    for g in support::goldens(config) {
        let id = g["id"].as_str().unwrap_or("").to_string();
        if g["kind"] != "batch" || g["endpoint"] != "/v1/chat/completions/derender" {
            continue;
        }
        let call = &g["calls"][0];
        if call["status"] != 200 {
            continue;
        }
        if let Some(excuse) = excuses.iter().find(|e| e.covers(&id)) {
            skipped.push(format!("{id}: documented divergence class: {}", excuse.why));
            continue;
        }
        let request = &call["request"];
        if request["chat_request"]["stop"].as_array().is_some_and(|s| !s.is_empty())
            || request["chat_request"]["stop"].is_string()
        {
            // vLLM refuses stop strings on streaming derender (400).
            skipped.push(format!("{id}: stop strings are refused on streams"));
            continue;
        }
        let Some(prompt_token_ids) = prompt_ids(d, request) else {
            skipped.push(format!("{id}: chat request does not render"));
            continue;
        };
        // The core's batch answer for the recorded request is vLLM's (the
        // golden); the stream sends prompt ids, which seed decoding (a
        // SentencePiece output's first space shows only after a prompt, in
        // vLLM's batch answers too), so the target is the batch answer for
        // the same request with those ids.
        let (status, own) = support::call(d, Route::ChatDerender, request);
        assert_eq!(status, 200, "{id}: batch answer: {own}");
        let recorded = call["response"]["choices"].as_array().cloned().unwrap_or_default();
        let own_choices = own["choices"].as_array().cloned().unwrap_or_default();
        assert_eq!(recorded.len(), own_choices.len(), "{id}: batch choices");
        for (a, b) in recorded.iter().zip(&own_choices) {
            assert!(assemble_batch(a).same_answer(&assemble_batch(b)), "{id}: batch answer differs from the golden");
        }
        let mut with_ids = request.clone();
        with_ids["prompt_token_ids"] = prompt_token_ids.clone();
        let (status, target) = support::call(d, Route::ChatDerender, &with_ids);
        assert_eq!(status, 200, "{id}: batch answer with prompt ids: {target}");
        let mut chat_request = request["chat_request"].clone();
        if let Some(o) = chat_request.as_object_mut() {
            // Logprobs do not touch parsing; the stream would need them split.
            o.remove("logprobs");
            o.remove("top_logprobs");
            o.insert("stream".into(), Value::Bool(true));
        }
        let gen = &request["generate_response"];
        let answers = target["choices"].as_array().cloned().unwrap_or_default();
        let lanes = gen["choices"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let index = c["index"].as_i64().unwrap_or(0);
                let ids: Vec<i64> = c["token_ids"].as_array().into_iter().flatten().filter_map(Value::as_i64).collect();
                let answer = answers.iter().find(|a| a["index"].as_i64() == Some(index)).expect("batch choice");
                let expected = assemble_batch(answer);
                let stop_token = ids.last().map(|&t| d.core().model.decode(&[t])).unwrap_or_default();
                Lane {
                    index,
                    interesting: interesting_cuts(d, &ids),
                    finish_only: finish_is_predictable(d, &request["chat_request"], &ids, &c["stop_reason"]),
                    key: lane_key(&chat_request, c),
                    ids,
                    finish_reason: c["finish_reason"].clone(),
                    stop_reason: c["stop_reason"].clone(),
                    expected,
                    stop_token,
                }
            })
            .collect();
        out.push(Case {
            id,
            model: request["model"].clone(),
            request_id: gen["request_id"].clone(),
            prompt_tokens: request["prompt_tokens"].clone(),
            prompt_token_ids,
            chat_request,
            lanes,
        });
    }
    out
}

fn parts_from_cuts(n: usize, cuts: &[usize]) -> Vec<Range<usize>> {
    let mut cuts: Vec<usize> = cuts.iter().copied().filter(|&c| c > 0 && c < n).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut parts = Vec::new();
    let mut start = 0;
    for c in cuts {
        parts.push(start..c);
        start = c;
    }
    parts.push(start..n);
    parts
}

/// Every chunking of one lane, labelled for failure reports.
fn chunkings(lane: &Lane, seed: u64) -> Vec<(String, Vec<Range<usize>>)> {
    let n = lane.ids.len();
    let mut out = vec![("all".to_string(), parts_from_cuts(n, &[]))];
    if n == 0 {
        return out;
    }
    let every: Vec<usize> = (1..n).collect();
    out.push(("tok1".into(), parts_from_cuts(n, &every)));
    if lane.finish_only {
        out.push(("all+finish_only".into(), vec![0..n, n..n]));
    }
    let splits: Vec<usize> = if n <= FULL_SPLIT_LIMIT {
        every
    } else {
        let mut s: Vec<usize> = (1..=FULL_SPLIT_LIMIT).map(|k| k * n / (FULL_SPLIT_LIMIT + 1)).collect();
        // Every marker / multi-byte cut, up to 64 of them spread evenly.
        let step = lane.interesting.len().div_ceil(FULL_SPLIT_LIMIT).max(1);
        s.extend(lane.interesting.iter().step_by(step));
        s.sort_unstable();
        s.dedup();
        s
    };
    for c in splits {
        out.push((format!("split@{c}"), parts_from_cuts(n, &[c])));
    }
    let mut rng = Rng(seed);
    for r in 0..random_partitions() {
        let mut cuts: Vec<usize> = if r % 5 == 4 && n <= FULL_SPLIT_LIMIT {
            (1..n).filter(|_| rng.chance(50)).collect()
        } else {
            let k = 1 + rng.below(MAX_RANDOM_CUTS);
            (0..k).map(|_| 1 + rng.below(n - 1)).collect()
        };
        let targeted = r % 2 == 1 && !lane.interesting.is_empty();
        if targeted {
            let m = lane.interesting.len();
            cuts.extend((0..MAX_RANDOM_CUTS.min(m)).map(|_| lane.interesting[rng.below(m)]));
        }
        let mut parts = parts_from_cuts(n, &cuts);
        let finish_only = lane.finish_only && r % 10 == 0;
        if finish_only {
            parts.push(n..n);
        }
        let label = format!(
            "rand#{r}{}{}",
            if targeted { "(targeted)" } else { "" },
            if finish_only { "+finish_only" } else { "" }
        );
        out.push((label, parts));
    }
    out
}

fn describe(parts: &[Range<usize>]) -> String {
    let lens: Vec<usize> = parts.iter().map(|p| p.len()).collect();
    format!("chunk lengths {lens:?}")
}

fn check_family(config: &str) {
    let started = std::time::Instant::now();
    assert!(support::facts().family_of(config).is_some(), "{config}: not a family of tests/reference/families.json");
    let d = support::derenderer(config);
    // vLLM's history format, replayed on every call: the same chunks.
    let replay = support::derenderer_with_states(config, StateCodec::new(StateMode::Replay, None));
    let mut skipped = Vec::new();
    let cases = load_cases(config, &d, &mut skipped);
    let mut failures: Vec<String> = Vec::new();
    let mut by_case: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let (mut streams, mut lanes, mut interesting, mut repeats) = (0usize, 0usize, 0usize, 0usize);
    let mut seen = std::collections::HashSet::new();
    for (ci, case) in cases.iter().enumerate() {
        for lane in &case.lanes {
            if !seen.insert(lane.key.clone()) {
                repeats += 1;
                continue;
            }
            lanes += 1;
            interesting += lane.interesting.len();
            for (label, parts) in chunkings(lane, 0x5EED ^ ((ci as u64) << 8) ^ lane.index as u64) {
                streams += 1;
                let compact = case.stream(&d, lane, &parts);
                let replayed = case.stream(&replay, lane, &parts);
                if let (Ok((_, a)), Ok((_, b))) = (&compact, &replayed) {
                    if let Some(k) = (0..a.len().max(b.len())).find(|&k| a.get(k) != b.get(k)) {
                        failures.push(format!(
                            "{} [choice {}] {label}: compact and replay states differ at call {k}:\n  {:?}\n  {:?}",
                            case.id,
                            lane.index,
                            a.get(k),
                            b.get(k)
                        ));
                    }
                }
                let finish_alone = parts.last().is_some_and(|p| p.is_empty());
                match compact.map(|(assembled, _)| assembled) {
                    Ok(got) if got.same_answer(&lane.expected) => {}
                    Ok(got) if finish_alone && got.shows_stop_token(&lane.expected, &lane.stop_token) => {}
                    Ok(got) => failures.push(format!(
                        "{} [choice {}] {label} ({}):\n  expected {:?}\n  {}got      {:?}",
                        case.id,
                        lane.index,
                        describe(&parts),
                        lane.expected,
                        if finish_alone {
                            format!("or that with {:?} at its end\n  ", lane.stop_token)
                        } else {
                            String::new()
                        },
                        got
                    )),
                    Err(e) => failures.push(format!("{} [choice {}] {label}: {e}", case.id, lane.index)),
                }
            }
        }
    }
    eprintln!(
        "{config}: {} cases, {lanes} choices ({repeats} repeats not streamed), {streams} streams, {interesting} marker/multi-byte cuts, \
         {} skipped, {} failures, {:.1}s",
        cases.len(),
        skipped.len(),
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    for s in &skipped {
        eprintln!("  skipped {s}");
    }
    for f in &failures {
        let key = f.split(' ').next().unwrap_or("").to_string();
        let e = by_case.entry(key).or_insert((0, f.clone()));
        e.0 += 1;
    }
    for (id, (n, first)) in &by_case {
        eprintln!("FAIL {id}: {n} chunkings; first: {first}");
    }
    assert!(cases.len() >= 20, "{config}: only {} streamable batch goldens", cases.len());
    let shown: Vec<&String> = failures.iter().take(12).collect();
    assert!(failures.is_empty(), "{config}: {} chunkings disagree with batch:\n{shown:#?}", failures.len());
}

/// One test per family, named after its config; the families and their
/// configs are `tests/reference/families.json`'s (checked by
/// [`every_family_of_the_data_file_has_a_test`]).
macro_rules! families {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check_family(stringify!($name));
            }
        )*

        /// The configs the tests above stream.
        const TESTED_CONFIGS: &[&str] = &[$(stringify!($name)),*];
    };
}

families!(
    qwen3_hermes,
    deepseek_r1,
    qwen3_coder,
    seed_oss,
    llama3_json,
    llama3_pythonic,
    deepseek_v3,
    deepseek_v31,
    mistral,
    hy_v3,
    hf,
    beam,
);

#[test]
fn every_family_of_the_data_file_has_a_test() {
    let facts = support::facts();
    let mut listed: Vec<&str> =
        facts.families.values().filter(|f| f.chunk_invariant()).map(|f| f.config.as_str()).collect();
    let mut tested = TESTED_CONFIGS.to_vec();
    listed.sort_unstable();
    tested.sort_unstable();
    assert_eq!(tested, listed, "the families! tests and tests/reference/families.json name different configs");
    for (name, family) in &facts.families {
        // The fixture the data file names is the one the config's model loads from.
        let config = support::config(&family.config);
        let loaded = support::model_dir(config["model"].as_str().expect("model"));
        let named = support::repo_root().join(&family.model_dir);
        let same = loaded.canonicalize().ok().zip(named.canonicalize().ok()).is_some_and(|(a, b)| a == b);
        assert!(same, "{name}: model_dir {} is not the config's model {}", named.display(), loaded.display());
    }
}
