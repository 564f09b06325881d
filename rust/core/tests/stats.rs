//! `Reply::stats`: what a call did, as the metrics see it (token counts,
//! stream-state sizes, parser time, error type, caught panics).

mod support;

use std::path::PathBuf;
use std::sync::Arc;

use derender_core::parse::family::ToolParserFactory;
use derender_core::parse::{ChatContext, Extracted, Ids, Registry, Texts, ToolParser};
use derender_core::served::Flags;
use derender_core::wire::response::Delta;
use derender_core::{CallKind, Derenderer, Model, Reply, Route, Settings};
use serde_json::{json, Value};

const HELLO: [i64; 7] = [9707, 1052, 0, 220, 108386, 1879, 151645];

fn post(d: &Derenderer, route: Route, body: &Value) -> Reply {
    d.handle(route, Some("application/json"), None, &serde_json::to_vec(body).expect("encode"))
}

fn chat_request() -> Value {
    json!({"messages": [{"role": "user", "content": "hi"}]})
}

fn stream_body(ids: &[i64], state: Option<&Value>) -> Value {
    let mut body = json!({
        "stream": true,
        "generate_chunk": {"request_id": "r", "choices": [{"index": 0, "token_ids": ids}]},
        "chat_request": chat_request(),
        "prompt_token_ids": [1, 2, 3],
    });
    if let Some(state) = state {
        body["stream_state"] = state.clone();
    }
    body
}

#[test]
fn a_batch_call_counts_its_output_ids_and_parser_time() {
    let d = support::derenderer("qwen3_hermes");
    let body = json!({
        "generate_response": {"request_id": "r", "choices": [
            {"index": 0, "token_ids": HELLO, "finish_reason": "stop"},
            {"index": 1, "token_ids": &HELLO[..3], "finish_reason": "length"},
        ]},
        "chat_request": chat_request(),
    });
    let reply = post(&d, Route::ChatDerender, &body);
    assert_eq!(reply.status, 200);
    let s = reply.stats;
    assert_eq!((s.kind, s.tokens, s.error, s.panicked), (Some(CallKind::Batch), 10, None, false));
    assert!(s.parser_time.is_some());
    assert_eq!((s.state_bytes_in, s.state_bytes_out), (None, None));

    let plain = support::derenderer("qwen3_plain");
    let completion = json!({"generate_responses": [
        {"request_id": "a", "choices": [{"index": 0, "token_ids": HELLO}]},
        {"request_id": "b", "choices": [{"index": 0, "token_ids": [9707]}]},
    ]});
    let s = post(&plain, Route::CompletionDerender, &completion).stats;
    assert_eq!((s.kind, s.tokens, s.parser_time), (Some(CallKind::Batch), 8, None));
}

#[test]
fn stream_calls_size_the_states_they_take_and_give() {
    for config in ["qwen3_hermes", "qwen3_plain"] {
        let d = support::derenderer(config);
        let mut state: Option<Value> = None;
        let mut sent = None;
        for chunk in HELLO.chunks(3) {
            let reply = post(&d, Route::ChatDerender, &stream_body(chunk, state.as_ref()));
            assert_eq!(reply.status, 200, "{config}");
            let answer: Value = serde_json::from_slice(&reply.body).expect("JSON");
            let s = reply.stats;
            assert_eq!((s.kind, s.tokens), (Some(CallKind::Stream), chunk.len()), "{config}");
            assert_eq!(s.state_bytes_in, sent, "{config}: the state sent is the one answered before");
            let out = serde_json::to_vec(&answer["stream_state"]).expect("encode").len();
            assert_eq!(s.state_bytes_out, Some(out), "{config}");
            assert_eq!(s.parser_time.is_some(), config == "qwen3_hermes");
            sent = Some(out);
            state = Some(answer["stream_state"].clone());
        }
    }
}

#[test]
fn a_stream_with_a_non_plain_prompt_is_measured_the_same() {
    // `prompt_token_ids: null` takes the ordinary path, not the lazy one.
    let d = support::derenderer("qwen3_plain");
    let mut body = stream_body(&HELLO[..2], None);
    body["prompt_token_ids"] = Value::Null;
    let first: Value = serde_json::from_slice(&post(&d, Route::ChatDerender, &body).body).expect("JSON");
    let mut body = stream_body(&HELLO[2..4], Some(&first["stream_state"]));
    body["prompt_token_ids"] = Value::Null;
    let s = post(&d, Route::ChatDerender, &body).stats;
    let sent = serde_json::to_vec(&first["stream_state"]).expect("encode").len();
    assert_eq!((s.kind, s.tokens, s.state_bytes_in), (Some(CallKind::Stream), 2, Some(sent)));
}

#[test]
fn failures_name_their_error_type_and_count_no_tokens() {
    let d = support::derenderer("qwen3_hermes");
    let s = d.handle(Route::ChatDerender, Some("application/json"), None, b"{").stats;
    assert_eq!((s.kind, s.tokens, s.error), (None, 0, Some("Bad Request")));
    let body = json!({
        "model": "nope",
        "generate_response": {"request_id": "r", "choices": [{"index": 0, "token_ids": HELLO}]},
        "chat_request": chat_request(),
    });
    let s = post(&d, Route::ChatDerender, &body).stats;
    assert_eq!((s.kind, s.tokens, s.error, s.panicked), (Some(CallKind::Batch), 0, Some("NotFoundError"), false));
    let s =
        post(&d, Route::ChatDerender, &stream_body(&HELLO[..1], Some(&json!({"format": "derender/9", "data": "x"}))))
            .stats;
    assert_eq!((s.kind, s.tokens, s.error), (Some(CallKind::Stream), 0, Some("BadRequestError")));
    assert_eq!(s.state_bytes_in, Some(r#"{"format":"derender/9","data":"x"}"#.len()));
}

/// A tool parser that panics: a bug the boundary must contain.
struct Boom;

impl ToolParser for Boom {
    fn extract_tool_calls(&self, _text: &str, _ctx: &ChatContext) -> Extracted {
        panic!("boom")
    }
    fn extract_tool_calls_streaming(&mut self, _t: &Texts, _ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        panic!("boom")
    }
}

struct BoomFactory;

impl ToolParserFactory for BoomFactory {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(Boom)
    }
}

#[test]
fn a_caught_panic_is_flagged() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/derender/models/qwen3");
    let model = Model::load_dir(&dir).expect("bundled model loads");
    let mut plugins = Registry::default();
    plugins.add_tool("boom", Arc::new(BoomFactory));
    let flags = Flags {
        served_model_names: vec!["qwen3".into()],
        max_model_len: Some(4096),
        max_n_sequences: 16,
        tool_call_parser: Some("boom".to_string()),
        enable_auto_tool_choice: true,
        ..Flags::default()
    };
    let settings = Settings::resolve(flags, &model, &plugins).expect("plugin resolves");
    let d = Derenderer::new(model, settings).expect("core builds");
    let body = json!({
        "generate_response": {"request_id": "r", "choices": [{"index": 0, "token_ids": HELLO}]},
        "chat_request": {
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
        },
    });
    let reply = post(&d, Route::ChatDerender, &body);
    assert_eq!(reply.status, 500);
    let s = reply.stats;
    assert_eq!((s.tokens, s.error, s.panicked), (0, Some("InternalServerError"), true));
}
