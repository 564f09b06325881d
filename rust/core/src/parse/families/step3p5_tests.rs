//! Step-3.5 through the registry and `DelegatingParser`, on the bundled
//! Qwen3 tokenizer (same `<think>` / `<tool_call>` / ChatML tokens): batch
//! answers from vLLM's behaviour, and streams that assemble to them however
//! the output is chunked.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use serde_json::{json, Map, Value};

use super::config;
use crate::detok::Window;
use crate::model::Model;
use crate::parse::engine::State;
use crate::parse::{ChatContext, ChatStreamProcessor, ParserSpec};

fn model() -> Arc<Model> {
    static MODEL: OnceLock<Arc<Model>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/derender/models/qwen3");
            Arc::new(Model::load_dir(&dir).expect("bundled qwen3 model loads"))
        })
        .clone()
}

fn encode(text: &str) -> Vec<i64> {
    let enc = model().tokenizer.encode(text, false).expect("encodes");
    enc.get_ids().iter().map(|&i| i64::from(i)).collect()
}

/// The rendered prompt: the template prefills `<think>\n`.
fn prompt() -> Vec<i64> {
    encode("<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n<think>\n")
}

fn tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}}}},
        {"type": "function", "function": {"name": "calc", "parameters": {"type": "object", "properties": {
            "n": {"type": "integer"}, "opts": {"type": "object"}}}}}
    ])
}

fn ctx_with(extra: Value) -> ChatContext {
    let mut req = Map::new();
    req.insert("tools".into(), tools());
    if let Value::Object(o) = extra {
        req.extend(o);
    }
    ChatContext::from_request(&req, &Default::default())
}

fn ctx() -> ChatContext {
    ctx_with(json!({}))
}

fn spec() -> ParserSpec {
    ParserSpec::resolve(Some("step3p5"), Some("step3p5"), true, &model(), &Default::default())
        .expect("names resolve")
        .expect("a parser is configured")
}

/// One streamed chunk: its text and token ids.
type Chunk = (String, Vec<i64>);

/// (reasoning, content, [(name, arguments)]), absent fields as "".
type Outcome = (String, String, Vec<(String, String)>);

fn batch_in(text: &str, ctx: &ChatContext) -> Outcome {
    batch_with(&spec(), text, ctx)
}

fn batch_with(spec: &ParserSpec, text: &str, ctx: &ChatContext) -> Outcome {
    let m = spec.build(ctx, &model()).parse_message(text, &[], ctx, Some(&prompt()));
    let calls = m.tool_calls.into_iter().map(|c| (c.function.name, c.function.arguments)).collect();
    (m.reasoning.unwrap_or_default(), m.content.unwrap_or_default(), calls)
}

fn batch(text: &str) -> Outcome {
    batch_in(text, &ctx())
}

/// Stream `(text, ids)` chunks through one choice's processor, the last
/// with the finish reason, and assemble the deltas.
fn stream_chunks(chunks: &[Chunk], ctx: &ChatContext) -> Outcome {
    stream_with(&spec(), chunks, ctx)
}

fn stream_with(spec: &ParserSpec, chunks: &[Chunk], ctx: &ChatContext) -> Outcome {
    let mut p = ChatStreamProcessor::new(spec.build(ctx, &model()), ctx);
    let prompt = prompt();
    let (mut reasoning, mut content) = (String::new(), String::new());
    let mut calls: BTreeMap<i64, (String, String)> = BTreeMap::new();
    for (k, (text, ids)) in chunks.iter().enumerate() {
        let finish = (k + 1 == chunks.len()).then_some("stop");
        let (delta, _) = p.step(text, ids, finish, Some(&prompt), ctx);
        let Some(d) = delta else { continue };
        reasoning.push_str(d.reasoning.as_deref().unwrap_or(""));
        content.push_str(d.content.as_deref().unwrap_or(""));
        for tc in d.tool_calls {
            let entry = calls.entry(tc.index).or_default();
            if let Some(f) = tc.function {
                entry.0.push_str(f.name.as_deref().unwrap_or(""));
                entry.1.push_str(f.arguments.as_deref().unwrap_or(""));
            }
        }
    }
    (reasoning, content, calls.into_values().collect())
}

/// Token chunks ending at `cuts`, decoded like the server's detokenizer.
fn token_chunks(text: &str, cuts: &[usize]) -> Vec<Chunk> {
    let ids = encode(text);
    let m = model();
    let mut window = Window::seed(&m, Some(&prompt()), false);
    let mut start = 0;
    let mut out = Vec::new();
    for &end in cuts.iter().chain([ids.len()].iter()) {
        let end = end.clamp(start, ids.len());
        let chunk = ids[start..end].to_vec();
        out.push((window.decode(&m, &chunk, false), chunk));
        start = end;
    }
    out
}

/// Character chunks ending at `cuts`, without ids: the engine then reads
/// the markers from the text (with ids, vLLM only takes a marker that has
/// a token of its own from that token), so they may be split anywhere.
fn text_chunks(text: &str, cuts: &[usize]) -> Vec<Chunk> {
    let chars: Vec<char> = text.chars().collect();
    let mut start = 0;
    let mut out = Vec::new();
    for &end in cuts.iter().chain([chars.len()].iter()) {
        let end = end.clamp(start, chars.len());
        out.push((chars[start..end].iter().collect::<String>(), Vec::new()));
        start = end;
    }
    out
}

/// Every chunking the tests try: all at once, one unit at a time, and
/// every two-way split, by tokens and by characters.
fn chunkings(text: &str) -> Vec<(String, Vec<Chunk>)> {
    let n_ids = encode(text).len();
    let n_chars = text.chars().count();
    let mut runs: Vec<(String, Vec<Chunk>)> = vec![
        ("tokens: one at a time".into(), token_chunks(text, &(1..n_ids).collect::<Vec<_>>())),
        ("tokens: all at once".into(), token_chunks(text, &[])),
        ("chars: all at once".into(), text_chunks(text, &[])),
        ("chars: one at a time".into(), text_chunks(text, &(1..n_chars).collect::<Vec<_>>())),
    ];
    runs.extend((1..n_ids).map(|c| (format!("tokens: split at {c}"), token_chunks(text, &[c]))));
    runs.extend((1..n_chars).map(|c| (format!("chars: split at {c}"), text_chunks(text, &[c]))));
    runs
}

fn assert_chunk_invariant(text: &str, ctx: &ChatContext, want: &Outcome) {
    for (label, chunks) in chunkings(text) {
        assert_eq!(&stream_chunks(&chunks, ctx), want, "{label} of {text:?}");
    }
}

/// The batch answer is `want`, and so is every stream of the same text.
fn check(text: &str, want: Outcome) {
    check_in(text, &ctx(), want);
}

fn check_in(text: &str, ctx: &ChatContext, want: Outcome) {
    assert_eq!(batch_in(text, ctx), want, "batch of {text:?}");
    assert_chunk_invariant(text, ctx, &want);
}

fn out(reasoning: &str, content: &str, calls: &[(&str, &str)]) -> Outcome {
    (reasoning.into(), content.into(), calls.iter().map(|(n, a)| (n.to_string(), a.to_string())).collect())
}

const WEATHER_CALL: &str =
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nTokyo\n</parameter>\n</function>\n</tool_call>";

#[test]
fn config_is_qwen3_thinking_with_reasoning_whitespace_stripped() {
    let c = config();
    assert_eq!(c.name, "step3p5");
    assert_eq!(c.initial_state, State::Reasoning);
    assert_eq!(c.wait_for_reasoning, Some(true));
    assert!(c.strip_trailing_reasoning_whitespace);
    assert_eq!(c.turn_boundary_tokens, ["<|im_start|>", "<|im_end|>"]);
    assert!(c.transition(State::Reasoning, "TOOL_START").is_some());
}

#[test]
fn names_resolve_and_render_keeps_special_tokens_with_the_qwen_coder_tag() {
    use crate::structured::tool_tags::RequestFormat::Absent;
    let m = model();
    assert!(ParserSpec::resolve(Some("step3p5"), None, false, &m, &Default::default())
        .unwrap()
        .is_some_and(|s| s.has_reasoning()));
    let s = spec();
    assert!(s.has_tool());
    // Engine reasoning parsers keep special tokens even without tools.
    let plain = ChatContext::from_request(&Map::new(), &Default::default());
    assert_eq!(s.render_adjustments(&plain, &Absent), (true, None));
    let (keep, structured) = s.render_adjustments(&ctx_with(json!({"tool_choice": "required"})), &Absent);
    assert!(keep);
    let qwen3 = ParserSpec::resolve(None, Some("qwen3_coder"), true, &m, &Default::default()).unwrap().unwrap();
    let forced = ctx_with(json!({"tool_choice": "required"}));
    assert_eq!(structured, qwen3.render_adjustments(&forced, &Absent).1);
    assert!(structured.is_some());
    // `auto` is not constrained.
    assert_eq!(s.render_adjustments(&ctx(), &Absent), (true, None));
}

#[test]
fn newline_before_think_end_is_dropped() {
    check("Line one.\nLine two.\n</think>\nThe answer.", out("Line one.\nLine two.", "\nThe answer.", &[]));
}

#[test]
fn enable_thinking_false_is_ignored() {
    let off = ctx_with(json!({"chat_template_kwargs": {"enable_thinking": false}}));
    check_in("plan</think>answer", &off, out("plan", "answer", &[]));
    let p = spec().build(&off, &model());
    assert!(!p.is_reasoning_end(&prompt()));
}

#[test]
fn reasoning_end_counts_only_in_the_current_turn() {
    let p = spec().build(&ctx(), &model());
    let history = encode("<|im_start|>assistant\n<think>\nold\n</think>\nhi<|im_end|>\n");
    let mut next_turn = history.clone();
    next_turn.extend(encode("<|im_start|>assistant\n<think>\n"));
    assert!(!p.is_reasoning_end(&next_turn));
    let mut closed = next_turn.clone();
    closed.extend(encode("x</think>"));
    assert!(p.is_reasoning_end(&closed));
}

#[test]
fn reasoning_then_a_tool_call() {
    let text = format!("Need the weather.\n</think>\n{WEATHER_CALL}");
    check(&text, out("Need the weather.", "", &[("get_weather", r#"{"city": "Tokyo"}"#)]));
}

#[test]
fn truncated_reasoning_is_all_reasoning() {
    check("Still thinking about it\n\n", out("Still thinking about it", "", &[]));
    check("a\n\nb", out("a\n\nb", "", &[]));
}

/// A text whose stream differs from batch as vLLM's does (the qwen3_coder
/// classes of docs/divergences.md): batch is `batch_want`; a stream one
/// token at a time is `stream_want`, and every chunking agrees with it on
/// reasoning and calls, and with batch on the trimmed content (vLLM holds
/// leading whitespace back, and releases it after the text when that text
/// comes in one chunk with a call).
fn check_divergent(text: &str, batch_want: Outcome, stream_want: Outcome) {
    assert_eq!(batch(text), batch_want, "batch of {text:?}");
    for (k, (label, chunks)) in chunkings(text).into_iter().enumerate() {
        let got = stream_chunks(&chunks, &ctx());
        if k == 0 {
            assert_eq!(got, stream_want, "{label} of {text:?}");
        }
        assert_eq!((&got.0, &got.2), (&stream_want.0, &stream_want.2), "{label} of {text:?}");
        assert_eq!(got.1.trim(), batch_want.1.trim(), "{label} of {text:?}");
    }
}

#[test]
fn content_before_calls_and_two_calls_with_cjk_and_emoji() {
    let text = "计划一下 🤔\n</think>\n好的 🚀 查一下。\n<tool_call>\n<function=get_weather>\n<parameter=city>\n東京 🌸\n</parameter>\n<parameter=unit>\ncelsius\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=calc>\n<parameter=n>\n42\n</parameter>\n<parameter=opts>\n{\"exact\": true, \"note\": \"ü\"}\n</parameter>\n</function>\n</tool_call>";
    let calls = [
        ("get_weather", r#"{"city": "東京 🌸", "unit": "celsius"}"#),
        ("calc", r#"{"n": 42, "opts": {"exact": true, "note": "ü"}}"#),
    ];
    // Batch strips the content before the calls; the stream has sent its
    // newlines as content already, and sends the newline between the calls
    // too, as vLLM's does (batch drops it: docs/divergences.md, text after
    // a streamed call).
    check_divergent(
        text,
        out("计划一下 🤔", "好的 🚀 查一下。", &calls),
        out("计划一下 🤔", "\n好的 🚀 查一下。\n\n", &calls),
    );
}

#[test]
fn calls_without_text_around_them_stream_as_batch() {
    let text = format!("Two calls.\n</think>\n{WEATHER_CALL}{}", WEATHER_CALL.replace("Tokyo", "Zürich 🏔"));
    check(
        &text,
        out("Two calls.", "", &[("get_weather", r#"{"city": "Tokyo"}"#), ("get_weather", r#"{"city": "Zürich 🏔"}"#)]),
    );
}

#[test]
fn a_tool_call_ends_reasoning_without_think_end() {
    let text =
        "Thinking about it\n<tool_call>\n<function=calc>\n<parameter=n>\n7\n</parameter>\n</function>\n</tool_call>";
    check(text, out("Thinking about it", "", &[("calc", r#"{"n": 7}"#)]));
}

#[test]
fn a_function_without_tool_call_tags_is_still_a_call() {
    let text = "ok\n</think>\n<function=get_weather>\n<parameter=city>\nDallas\n</parameter>\n</function>";
    check(text, out("ok", "", &[("get_weather", r#"{"city": "Dallas"}"#)]));
}

#[test]
fn multiline_values_keep_inner_newlines() {
    let text =
        "r\n</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nline 1\nline 2\n\n</parameter>\n</function>\n</tool_call>";
    check(text, out("r", "", &[("get_weather", r#"{"city": "line 1\nline 2\n"}"#)]));
}

#[test]
fn a_truncated_call_streams_its_open_value_which_batch_drops() {
    // Batch reads only complete parameters; the stream has sent the open
    // value as it was generated (vLLM's `tool_truncated` class).
    let text = "r\n</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nTok";
    check_divergent(text, out("r", "", &[("get_weather", "{}")]), out("r", "", &[("get_weather", r#"{"city": "Tok"#)]));
    // Cut after a complete parameter, both agree on it.
    let text = "r\n</think>\n<tool_call>\n<function=calc>\n<parameter=n>\n5\n</parameter>\n";
    check(text, out("r", "", &[("calc", r#"{"n": 5}"#)]));
}

#[test]
fn an_unclosed_name_before_the_next_call_ends_the_first() {
    let text = format!("r\n</think>\n<tool_call>\n<function=calc{WEATHER_CALL}");
    let want = batch(&text);
    assert_eq!(want.2.last().map(|c| c.0.as_str()), Some("get_weather"), "{want:?}");
    assert_chunk_invariant(&text, &ctx(), &want);
}

#[test]
fn tool_choice_none_strips_markup_and_returns_no_calls() {
    let none = ctx_with(json!({"tool_choice": "none"}));
    let text = format!("Hmm.\n</think>\nHere.{WEATHER_CALL}");
    let want = batch_in(&text, &none);
    assert_eq!((want.0.as_str(), want.2.len()), ("Hmm.", 0));
    assert_chunk_invariant(&text, &none, &want);
}

/// Step-5: `deepseek_r1` reasoning (its `step5` alias) and the Qwen3 tool
/// grammar keeping the content whitespace next to calls.
fn step5_spec() -> ParserSpec {
    ParserSpec::resolve(Some("step5"), Some("step5"), true, &model(), &Default::default()).unwrap().unwrap()
}

#[test]
fn step5_config_keeps_content_whitespace_and_has_no_thinking() {
    let c = super::step5_tool_config();
    assert_eq!((c.name, c.initial_state), ("step5", State::Content));
    assert!(!c.drop_whitespace_only_content_before_tools && !c.strip_content_whitespace_with_tools);
    assert!(config().strip_content_whitespace_with_tools);
}

#[test]
fn step5_keeps_the_text_before_a_call_unstripped_batch_and_streamed() {
    let s = step5_spec();
    let text = format!("plan</think>Sure.\n{WEATHER_CALL}");
    let want = out("plan", "Sure.\n", &[("get_weather", r#"{"city": "Tokyo"}"#)]);
    assert_eq!(batch_with(&s, &text, &ctx()), want);
    let n = encode(&text).len();
    for cuts in [(1..n).collect::<Vec<_>>(), vec![]] {
        assert_eq!(stream_with(&s, &token_chunks(&text, &cuts), &ctx()), want, "{cuts:?}");
    }
    // step3p5 strips it.
    let text = format!("plan</think>Sure.\n{WEATHER_CALL}");
    assert_eq!(batch(&text).1, "Sure.");
    // Whitespace-only content next to calls is still no content in batch.
    let text = format!("plan</think>\n\n{WEATHER_CALL}");
    assert_eq!(batch_with(&s, &text, &ctx()).1, "");
}

#[test]
fn step5_text_between_and_after_calls_streams_as_vllms_does() {
    // Batch keeps only the text before the first call; vLLM's stream, having
    // sent the whitespace before a call that batch strips, also sends the
    // text between and after the calls as content, and so does derender's.
    let s = step5_spec();
    let call = ("get_weather", r#"{"city": "Tokyo"}"#);
    for (text, streamed) in [
        (format!("plan</think>Sure.\n{WEATHER_CALL}\n{WEATHER_CALL}"), "Sure.\n\n"),
        (
            format!("plan</think>Sure.\n{WEATHER_CALL} between {WEATHER_CALL}\nDone, thanks."),
            "Sure.\n between \nDone, thanks.",
        ),
    ] {
        assert_eq!(batch_with(&s, &text, &ctx()), out("plan", "Sure.\n", &[call, call]));
        let want = out("plan", streamed, &[call, call]);
        let n = encode(&text).len();
        for cuts in [(1..n).collect::<Vec<_>>(), (3..n).step_by(3).collect(), vec![]] {
            assert_eq!(stream_with(&s, &token_chunks(&text, &cuts), &ctx()), want, "{cuts:?} of {text:?}");
        }
    }
}
