//! A short deterministic fuzz of `Derenderer::handle` for CI: byte-level
//! mutations of real request bodies (the qwen3 goldens, stream states
//! included) must never answer 5xx, and every non-200 answer is the error
//! envelope. The long, coverage-guided run is `fuzz/` (cargo-fuzz).

mod support;

use derender_core::{Derenderer, Route};
use serde_json::Value;

/// Mutated bodies per core (`DERENDER_FUZZ_ITERATIONS` raises it by hand):
/// the qwen3 cores, and each other parser family's.
const ITERATIONS: usize = 5000;
const OTHER_ITERATIONS: usize = 700;

/// The configs two tests below fuzz at length; every other golden
/// config (tests/reference/families.json) gets `OTHER_ITERATIONS`.
const FUZZED_AT_LENGTH: [&str; 2] = ["qwen3_plain", "qwen3_hermes"];

const ROUTES: [Route; 6] = [
    Route::ChatDerender,
    Route::CompletionDerender,
    Route::ChatRender,
    Route::CompletionRender,
    Route::Tokenize,
    Route::Detokenize,
];

/// Text spliced in over a number, a string or anywhere.
const INTERESTING: [&str; 22] = [
    "-1",
    "0",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551616",
    "-9223372036854775809",
    "1e999",
    "-1e999",
    "NaN",
    "Infinity",
    "1.5",
    "null",
    "true",
    "[]",
    "{}",
    "\"\"",
    "\"\\ud800\"",
    "\"<tool_call>\"",
    "\"</think>\"",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    "\"\u{0}\"",
];

/// xorshift64*: a fixed sequence, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Every request a config's goldens send, with each `$PREV_STATE` filled in
/// from this core's previous answer on the lane (as `replay.py` does).
fn seeds(d: &Derenderer, config: &str) -> Vec<(Route, Vec<u8>)> {
    let mut out = Vec::new();
    for case in support::goldens(config) {
        let endpoint = case["endpoint"].as_str().unwrap_or_default().to_string();
        let mut lanes: std::collections::HashMap<i64, Value> = Default::default();
        for call in case["calls"].as_array().into_iter().flatten() {
            let path = call.get("endpoint").and_then(Value::as_str).unwrap_or(&endpoint);
            let Some(route) = Route::from_path(path) else { continue };
            let lane = call.get("state_lane").and_then(Value::as_i64);
            let body = match &call["request"] {
                Value::String(raw) => raw.as_bytes().to_vec(),
                request => {
                    let mut request = request.clone();
                    if request.get("stream_state").and_then(Value::as_str) == Some("$PREV_STATE") {
                        request["stream_state"] = lanes.get(&lane.unwrap_or(0)).cloned().unwrap_or(Value::Null);
                    }
                    serde_json::to_vec(&request).expect("encode")
                }
            };
            let reply = d.handle(route, Some("application/json"), None, &body);
            if let (Some(lane), 200) = (lane, reply.status) {
                if let Ok(answer) = serde_json::from_slice::<Value>(&reply.body) {
                    if let Some(state) = answer.get("stream_state").filter(|s| s.is_object()) {
                        lanes.insert(lane, state.clone());
                    }
                }
            }
            out.push((route, body));
        }
    }
    out
}

fn mutate(rng: &mut Rng, body: &[u8], other: &[u8]) -> Vec<u8> {
    let mut buf = body.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(buf.len() + 1);
        match rng.below(8) {
            0 => buf.truncate(at),
            1 if at < buf.len() => buf[at] ^= 1 << rng.below(8),
            2 => {
                let junk: [&[u8]; 6] = [b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\x00", b"\""];
                let j = junk[rng.below(junk.len())];
                buf.splice(at..at, j.iter().copied());
            }
            3 => {
                let end = (at + 1 + rng.below(64)).min(buf.len());
                buf.drain(at.min(end)..end);
            }
            4 => {
                let end = (at + 1 + rng.below(256)).min(buf.len());
                let copy = buf[at.min(end)..end].to_vec();
                buf.splice(at..at, copy);
            }
            5 => {
                // Splice the tail of another seed in.
                let from = rng.below(other.len() + 1);
                buf.truncate(at);
                buf.extend_from_slice(&other[from..]);
            }
            _ => {
                // Replace a token (a number or a string) by an interesting one.
                let start = at.min(buf.len());
                let end = token_end(&buf, start);
                let with = INTERESTING[rng.below(INTERESTING.len())].as_bytes();
                buf.splice(start..end, with.iter().copied());
            }
        }
    }
    buf
}

/// The end of the number or string starting at `start` (or `start`).
fn token_end(buf: &[u8], start: usize) -> usize {
    let Some(&first) = buf.get(start) else { return start };
    if first == b'"' {
        let mut i = start + 1;
        while i < buf.len() && buf[i] != b'"' {
            i += if buf[i] == b'\\' { 2 } else { 1 };
        }
        return (i + 1).min(buf.len());
    }
    let mut i = start;
    while i < buf.len() && (buf[i].is_ascii_digit() || b"-+.eE".contains(&buf[i])) {
        i += 1;
    }
    i
}

fn check(route: Route, body: &[u8], status: u16, answer: &[u8]) {
    let shown = || String::from_utf8_lossy(&body[..body.len().min(2000)]).into_owned();
    assert!(status < 500, "{route:?} answered {status}: {}\nbody: {}", String::from_utf8_lossy(answer), shown());
    if status == 200 {
        return;
    }
    let v: Value = serde_json::from_slice(answer).unwrap_or_else(|e| panic!("{status} answer is not JSON: {e}"));
    let err = &v["error"];
    assert!(
        v.as_object().map(|o| o.len()) == Some(1)
            && err["message"].is_string()
            && err["type"].is_string()
            && (err["param"].is_null() || err["param"].is_string())
            && err["code"] == status,
        "{route:?}: not an error envelope: {v}\nbody: {}",
        shown()
    );
}

fn fuzz(config: &str, seed: u64, iterations: usize) {
    let d = support::derenderer(config);
    let seeds = seeds(&d, config);
    assert!(seeds.len() > 200, "{config}: {} seeds", seeds.len());
    let iterations = std::env::var("DERENDER_FUZZ_ITERATIONS").ok().and_then(|n| n.parse().ok()).unwrap_or(iterations);
    let mut rng = Rng(seed);
    for _ in 0..iterations {
        let (mut route, body) = &seeds[rng.below(seeds.len())];
        let other = &seeds[rng.below(seeds.len())].1;
        if rng.below(10) == 0 {
            route = ROUTES[rng.below(ROUTES.len())];
        }
        let mutated = mutate(&mut rng, body, other);
        let reply = d.handle(route, Some("application/json"), None, &mutated);
        check(route, &mutated, reply.status, &reply.body);
    }
}

#[test]
fn mutated_plain_requests_never_answer_5xx() {
    fuzz("qwen3_plain", 0x5eed_0001, ITERATIONS);
}

#[test]
fn mutated_parser_requests_never_answer_5xx() {
    fuzz("qwen3_hermes", 0x5eed_0002, ITERATIONS);
}

#[test]
fn mutated_requests_of_every_other_family_never_answer_5xx() {
    let facts = support::facts();
    let others = facts.configs().into_iter().filter(|c| !FUZZED_AT_LENGTH.contains(c));
    for (i, config) in others.enumerate() {
        if support::exists(&support::model_dir(support::config(config)["model"].as_str().unwrap_or_default())) {
            fuzz(config, 0x5eed_0100 + i as u64, OTHER_ITERATIONS);
        }
    }
}
