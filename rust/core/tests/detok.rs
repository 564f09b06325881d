//! Detokenization against the bundled Qwen3 tokenizer, with the worked
//! example of vLLM 0.33.0's plain path (spec appendix A).

use std::path::PathBuf;

use derender_core::detok::Window;
use derender_core::parse::Registry;
use derender_core::served::Flags;
use derender_core::{Derenderer, Model, Route, Settings};

fn model() -> Model {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/derender/models/qwen3");
    Model::load_dir(&dir).expect("bundled model loads")
}

const PROMPT: [i64; 9] = [151644, 872, 198, 6023, 151645, 198, 151644, 77091, 198];

#[test]
fn chunks_decode_like_vllm() {
    let m = model();
    let mut w = Window::seed(&m, Some(&PROMPT), true);
    let chunks: [&[i64]; 3] = [&[9707, 1052], &[0, 220, 108386], &[1879]];
    let texts: Vec<String> = chunks.iter().map(|c| w.decode(&m, c, true)).collect();
    assert_eq!(texts, ["Hello there", "! 你好", " world"]);
    assert_eq!(w.prev_tokens, vec!["Ġworld".to_string()]);
    assert_eq!((w.prefix_offset, w.read_offset), (0, 1));
}

#[test]
fn partial_utf8_is_held_until_complete() {
    let m = model();
    let ids: Vec<i64> = m.tokenizer.encode("🚀", false).unwrap().get_ids().iter().map(|&i| i as i64).collect();
    let mut w = Window::default();
    let mut out = String::new();
    for id in &ids {
        let t = w.decode(&m, &[*id], true);
        if out.is_empty() && t.is_empty() {
            assert!(w.read_offset <= w.prev_tokens.len());
        }
        out.push_str(&t);
    }
    assert_eq!(out, "🚀");
}

#[test]
fn special_tokens_skip_and_added_tokens_stay() {
    let m = model();
    let mut w = Window::default();
    // <|im_end|> is special (skipped); <think> is added but not special.
    assert_eq!(w.decode(&m, &[151645, 151667], true), "<think>");
    let mut w = Window::default();
    assert_eq!(w.decode(&m, &[151645], false), "<|im_end|>");
    // Past len(tokenizer) decodes to nothing.
    assert_eq!(Window::default().decode(&m, &[151700, 10_000_000], true), "");
}

fn settings() -> Settings {
    let flags = Flags { served_model_names: vec!["qwen3".into()], max_model_len: Some(40960), ..Flags::default() };
    Settings::resolve(flags, &model(), &Registry::default()).expect("settings")
}

#[test]
fn batch_drops_eos_but_counts_it() {
    let d = Derenderer::new(model(), settings()).unwrap();
    let body = br#"{"generate_response":{"request_id":"r","choices":[{"index":0,"token_ids":[9707,1052,0,220,108386,1879,151645]}]},"prompt_tokens":9}"#;
    let reply = d.handle(Route::ChatDerender, Some("application/json"), None, body);
    assert_eq!(reply.status, 200);
    let v: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], "Hello there! 你好 world");
    assert_eq!(v["usage"]["completion_tokens"], 7);
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
}

#[test]
fn bad_bodies_are_400_never_panics() {
    let d = Derenderer::new(model(), settings()).unwrap();
    for body in [
        &b""[..],
        b"[",
        b"[1,2]",
        b"{\"stream\":true}",
        b"{\"generate_response\":{\"choices\":[{\"index\":0,\"token_ids\":[-1]}]}}",
    ] {
        for route in [Route::ChatDerender, Route::CompletionDerender] {
            let reply = d.handle(route, Some("application/json"), None, body);
            assert_eq!(reply.status, 400, "{}", String::from_utf8_lossy(body));
            let v: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
            assert!(v["error"]["message"].is_string());
        }
    }
}

#[test]
fn byte_level_fast_path_matches_the_decoder() {
    use tokenizers::Decoder;
    let m = model();
    let decoder = m.tokenizer.get_decoder().unwrap();
    // Every piece alone, and pairs that split multi-byte characters.
    let ids: Vec<u32> = (0..m.vocab_len as u32).step_by(7).collect();
    for pair in ids.windows(2) {
        let pieces: Vec<String> = pair.iter().map(|&i| m.tokenizer.id_to_token(i).unwrap()).collect();
        assert_eq!(m.pieces_to_string(&pieces, true), decoder.decode(pieces.clone()).unwrap(), "{pieces:?}");
    }
}
