//! Kimi K2 through the whole parser layer (reasoning + tools, as served),
//! on the bundled Qwen3 tokenizer: the Kimi markers are plain text there,
//! `<think>`/`</think>` single tokens.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use serde_json::{json, Value};

use super::*;
use crate::model::Model;
use crate::pycompat::json::loads;
use crate::parse::{ChatContext, DelegatingParser, ParserSpec};

const PROMPT: [i64; 9] = [151644, 872, 198, 6023, 151645, 198, 151644, 77091, 198];

fn model() -> Arc<Model> {
    static MODEL: OnceLock<Arc<Model>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/derender/models/qwen3");
            Arc::new(Model::load_dir(&dir).expect("bundled model loads"))
        })
        .clone()
}

fn tool(name: &str, props: Value) -> Value {
    json!({"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}})
}

/// A chat request with the usual tools, plus `extra` fields.
fn ctx_with(extra: Value) -> ChatContext {
    let mut req = json!({
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            tool("get_weather", json!({"city": {"type": "string"}, "days": {"type": "integer"}})),
            tool("get_news", json!({"topic": {"type": "string"}})),
        ],
    });
    if let (Some(r), Some(e)) = (req.as_object_mut(), extra.as_object()) {
        r.extend(e.clone());
    }
    ChatContext::from_request(req.as_object().expect("object"), &Default::default())
}

fn ctx() -> ChatContext {
    ctx_with(json!({}))
}

fn parser(ctx: &ChatContext, reasoning: bool) -> DelegatingParser {
    let m = model();
    let spec = ParserSpec::resolve(reasoning.then_some("kimi_k2"), Some("kimi_k2"), true, &m, &Default::default())
        .expect("kimi_k2 resolves")
        .expect("a parser");
    spec.build(ctx, &m)
}

fn call(id: &str, args: &str) -> String {
    format!("{CALL_BEGIN}{id}{ARG_BEGIN}{args}{CALL_END}")
}

fn section(calls: &[String]) -> String {
    format!("{SECTION_BEGIN}{}{SECTION_END}", calls.concat())
}

/// reasoning, content, and the calls as (id, name, arguments).
#[derive(Debug, PartialEq)]
struct Answer {
    reasoning: Option<String>,
    content: Option<String>,
    calls: Vec<(String, String, String)>,
}

fn batch_in(ctx: &ChatContext, reasoning: bool, text: &str) -> Answer {
    let m = parser(ctx, reasoning).parse_message(text, &[], ctx, Some(&PROMPT));
    Answer {
        reasoning: m.reasoning,
        content: m.content,
        calls: m.tool_calls.into_iter().map(|c| (c.id, c.function.name, c.function.arguments)).collect(),
    }
}

fn batch(text: &str) -> Answer {
    batch_in(&ctx(), true, text)
}

/// Stream `chunks` (text, ids) and assemble the answer.
fn stream_chunks(ctx: &ChatContext, reasoning: bool, chunks: &[(String, Vec<i64>)]) -> Answer {
    let mut p = parser(ctx, reasoning);
    let (mut r, mut c) = (String::new(), String::new());
    let mut calls: BTreeMap<i64, (String, String, String)> = BTreeMap::new();
    for (k, (text, ids)) in chunks.iter().enumerate() {
        let prompt = (k == 0).then_some(&PROMPT[..]);
        let Some(d) = p.parse_delta(text, ids, ctx, prompt, k + 1 == chunks.len()) else { continue };
        r.push_str(d.reasoning.as_deref().unwrap_or(""));
        c.push_str(d.content.as_deref().unwrap_or(""));
        for tc in d.tool_calls {
            let e = calls.entry(tc.index).or_default();
            if let Some(id) = tc.id {
                e.0 = id;
            }
            if let Some(f) = tc.function {
                e.1.push_str(f.name.as_deref().unwrap_or(""));
                e.2.push_str(f.arguments.as_deref().unwrap_or(""));
            }
        }
    }
    let some = |s: String| (!s.is_empty()).then_some(s);
    Answer { reasoning: some(r), content: some(c), calls: calls.into_values().collect() }
}

/// `text` cut at the given char positions.
fn cut(text: &str, cuts: &[usize]) -> Vec<(String, Vec<i64>)> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut start = 0;
    for &end in cuts.iter().chain([c.len()].iter()) {
        out.push((c[start..end].iter().collect(), Vec::new()));
        start = end;
    }
    out
}

/// Arguments as parsed JSON (a raw text where it is not JSON; none
/// streamed reads as `{}`), as clients compare them.
type Parsed = (Option<String>, Option<String>, Vec<(String, String, Value)>);

fn parsed(a: Answer) -> Parsed {
    let args = |s: &str| {
        let s = if s.trim().is_empty() { "{}" } else { s };
        loads(s).unwrap_or_else(|| Value::String(s.trim().to_string()))
    };
    (a.reasoning, a.content, a.calls.iter().map(|(i, n, s)| (i.clone(), n.clone(), args(s))).collect())
}

fn weather(city: &str) -> String {
    format!("{{\"city\": \"{city}\"}}")
}

#[test]
fn header_gives_the_id_and_the_name_before_the_first_colon() {
    let h = parse_header;
    let pair = |i: &str, n: &str| Some((i.to_string(), n.to_string()));
    assert_eq!(h("functions.get_weather:0"), pair("functions.get_weather:0", "get_weather"));
    assert_eq!(h("  get_weather:12 \n"), pair("get_weather:12", "get_weather"));
    // Greedy `.+`: the id runs to the last `:N`; the name stops at the first `:`.
    assert_eq!(h("functions.a:1:2"), pair("functions.a:1:2", "a"));
    assert_eq!(h("functions.f:0 trailing"), pair("functions.f:0", "f"));
    assert_eq!(h("functions.ns.tool:3"), pair("functions.ns.tool:3", "ns.tool"));
    // `.` does not cross a newline; no `:N`, or nothing before `:`, is no call.
    assert_eq!(h("foo\nfunctions.f:0"), None);
    assert_eq!(h("functions.invalid.0"), None);
    assert_eq!(h("0"), None);
    assert_eq!(h(":0"), None);
    assert_eq!(h(":a:0"), None);
}

#[test]
fn batch_reads_calls_with_their_own_ids_and_raw_arguments() {
    let text = format!(
        "</think>Compare weather. {}",
        section(&[
            call("functions.get_weather:0", &weather("Tokyo")),
            call("functions.get_news:1 ", "{\n  \"topic\": \"tech\"\n}")
        ])
    );
    let a = batch(&text);
    // Content keeps its whitespace (the format does not strip it).
    assert_eq!(a.content.as_deref(), Some("Compare weather. "));
    assert_eq!(a.reasoning, None);
    assert_eq!(
        a.calls,
        [
            ("functions.get_weather:0".into(), "get_weather".into(), weather("Tokyo")),
            ("functions.get_news:1".into(), "get_news".into(), "{\n  \"topic\": \"tech\"\n}".into()),
        ]
    );
}

#[test]
fn batch_keeps_invalid_json_skips_bad_headers_and_fills_empty_arguments() {
    let text = section(&[
        call("functions.bad:0", "{\"city\": \"Oslo\""),
        call("functions.invalid.0", &weather("x")),
        call("get_news:2", "  "),
    ]);
    let a = batch(&text);
    assert_eq!(a.content, None);
    assert_eq!(
        a.calls,
        [
            ("functions.bad:0".into(), "bad".into(), "{\"city\": \"Oslo\"".into()),
            ("get_news:2".into(), "get_news".into(), "{}".into()),
        ]
    );
}

#[test]
fn batch_coerces_arguments_to_the_schema_and_drops_text_after_the_section() {
    let text = format!("{} trailing words", section(&[call("functions.get_weather:0", "{\"days\": \"3\"}")]));
    let a = batch(&text);
    assert_eq!(a.calls, [("functions.get_weather:0".into(), "get_weather".into(), "{\"days\": 3}".into())]);
    assert_eq!(a.content, None);
}

#[test]
fn reasoning_ends_at_think_end_or_at_the_tool_section() {
    let a = batch("<think>let me see  \n</think>Sure.");
    assert_eq!((a.reasoning.as_deref(), a.content.as_deref()), (Some("let me see"), Some("Sure.")));
    let text = format!("weighing{}", section(&[call("functions.get_news:0", "{\"topic\": \"a\"}")]));
    let a = batch(&text);
    assert_eq!(a.reasoning.as_deref(), Some("weighing"));
    assert_eq!(a.content, None);
    assert_eq!(a.calls.len(), 1);
    // No end at all: everything is reasoning.
    let a = batch("still thinking");
    assert_eq!((a.reasoning.as_deref(), a.content), (Some("still thinking"), None));
}

#[test]
fn thinking_off_makes_everything_content() {
    let ctx = ctx_with(json!({"chat_template_kwargs": {"thinking": false}}));
    let text = format!("<think>x</think>Hi {}", section(&[call("functions.get_news:0", "{}")]));
    let a = batch_in(&ctx, true, &text);
    assert_eq!(a.reasoning, None);
    // `<think>` is text; `</think>` is not a marker either without thinking.
    assert_eq!(a.content.as_deref(), Some("<think>x</think>Hi "));
    assert_eq!(a.calls, [("functions.get_news:0".into(), "get_news".into(), "{}".into())]);
    assert_eq!(stream_chunks(&ctx, true, &cut(&text, &[3, 20, 40])), a);
}

#[test]
fn tool_choice_none_strips_the_markup() {
    let ctx = ctx_with(json!({"tool_choice": "none"}));
    let text = format!("</think>Answer. {}", section(&[call("functions.get_news:0", "{}")]));
    let a = batch_in(&ctx, true, &text);
    assert_eq!(a.calls, []);
    assert_eq!(a.content.as_deref(), Some("Answer. "));
}

#[test]
fn truncated_calls_keep_what_was_written() {
    let text = format!("</think>{SECTION_BEGIN}{CALL_BEGIN}functions.get_weather:0{ARG_BEGIN}{{\"city\": \"Os");
    let a = batch(&text);
    assert_eq!(a.calls, [("functions.get_weather:0".into(), "get_weather".into(), "{\"city\": \"Os".into())]);
    // Cut inside the header: the call is named, with no arguments.
    let a = batch(&format!("</think>{SECTION_BEGIN}{CALL_BEGIN}functions.get_news:0"));
    assert_eq!(a.calls, [("functions.get_news:0".into(), "get_news".into(), "{}".into())]);
    // Cut inside a marker: nothing is a call and the partial marker is dropped.
    let a = batch(&format!("</think>Hi{SECTION_BEGIN}{}", &CALL_BEGIN[..8]));
    assert_eq!((a.content.as_deref(), a.calls.len()), (Some("Hi"), 0));
}

#[test]
fn streamed_arguments_are_the_raw_text_and_ids_come_from_headers() {
    let text = format!("</think>{}", section(&[call("functions.get_weather:7 ", " {\"city\": \"北京 🌧\"} ")]));
    let a = stream_chunks(&ctx(), true, &cut(&text, &(1..text.chars().count()).collect::<Vec<_>>()));
    assert_eq!(a.calls, [("functions.get_weather:7".into(), "get_weather".into(), " {\"city\": \"北京 🌧\"} ".into())]);
    assert_eq!(batch(&text).calls[0].2, "{\"city\": \"北京 🌧\"}");
}

fn samples() -> Vec<String> {
    vec![
        "<think>plan it</think>Plain answer, no tools.".into(),
        format!("<think>plan</think>I'll check. {}", section(&[call("functions.get_weather:0", &weather("Tokyo"))])),
        format!(
            "<think>two</think>\n\n{}",
            section(&[
                call("functions.get_weather:0", &weather("北京")),
                call("functions.get_news:1", "{\"topic\": \"emoji 🎉 \\\"q\\\" {x}\"}"),
            ])
        ),
        format!("think then{}", section(&[call("functions.get_news:0", "{\"topic\": \"<div>a</div>\"}")])),
        format!("</think>{}", section(&[call("get_weather:3", "{\n  \"city\": \"x\",\n  \"days\": 2\n}")])),
        format!(
            "</think>{}",
            section(&[call("functions.bad:0", "{\"city\": \"Oslo\""), call("functions.get_news:1", "{}")])
        ),
        format!(
            "</think>{} after",
            section(&[call("functions.invalid.0", &weather("a")), call("functions.get_news:1", "{}")])
        ),
        format!("</think>ok{SECTION_BEGIN}{CALL_BEGIN}functions.get_weather:0{ARG_BEGIN}{{\"city\": \"Os"),
        format!("</think>{SECTION_BEGIN}{CALL_BEGIN}functions.get_weather:0"),
    ]
}

#[test]
fn streams_assemble_to_the_batch_answer_for_any_chunking() {
    for text in samples() {
        let expected = parsed(batch(&text));
        let n = text.chars().count();
        let one_each: Vec<usize> = (1..n).collect();
        assert_eq!(parsed(stream_chunks(&ctx(), true, &cut(&text, &one_each))), expected, "one char each: {text:?}");
        assert_eq!(parsed(stream_chunks(&ctx(), true, &cut(&text, &[]))), expected, "all at once: {text:?}");
        for k in 1..n {
            assert_eq!(parsed(stream_chunks(&ctx(), true, &cut(&text, &[k]))), expected, "split at {k}: {text:?}");
        }
    }
}

#[test]
fn streams_by_token_id_match_the_batch_answer() {
    let m = model();
    let text = format!(
        "<think>plan</think>Checking. {}",
        section(&[call("functions.get_weather:0", &weather("Oslo")), call("functions.get_news:1", "{}")])
    );
    let enc = m.tokenizer.encode(text.as_str(), false).expect("encodes");
    let chunks: Vec<(String, Vec<i64>)> =
        enc.get_ids().iter().map(|&id| (m.decode(&[i64::from(id)]), vec![i64::from(id)])).collect();
    assert_eq!(chunks.iter().map(|(t, _)| t.as_str()).collect::<String>(), text);
    assert!(chunks.iter().any(|(t, _)| t == "</think>"), "`</think>` is one token");
    assert_eq!(parsed(stream_chunks(&ctx(), true, &chunks)), parsed(batch(&text)));
}

#[test]
fn without_a_reasoning_parser_think_markers_are_content() {
    let text = format!("<think>a</think>Hi {}", section(&[call("functions.get_news:0", "{}")]));
    let a = batch_in(&ctx(), false, &text);
    assert_eq!(a.content.as_deref(), Some("<think>a</think>Hi "));
    assert_eq!(a.calls.len(), 1);
    assert_eq!(parsed(stream_chunks(&ctx(), false, &cut(&text, &[5, 9]))), parsed(a));
}

#[test]
fn forced_choices_get_the_kimi_structural_tag() {
    use crate::structured::tool_tags::{structural_tag, RequestFormat, TagRequest};
    use crate::parse::ToolChoice;
    let tools = [tool("get_weather", json!({"city": {"type": "string"}}))];
    let tag = |choice: &ToolChoice| {
        let req = TagRequest {
            tools: &tools,
            tool_choice: choice,
            parallel_tool_calls: true,
            format: &RequestFormat::Absent,
        };
        structural_tag(Some(&super::TAG), None, req)
    };
    let named = tag(&ToolChoice::Named("get_weather".into())).expect("a tag");
    let v: Value = serde_json::from_str(&named).expect("json");
    assert_eq!(v["format"]["elements"][0]["value"], SECTION_BEGIN);
    assert_eq!(v["format"]["elements"][1]["begin"], "<|tool_call_begin|>functions.get_weather:");
    assert_eq!(v["format"]["elements"][1]["content"]["elements"][0], json!({"type": "regex", "pattern": "\\d+"}));
    assert_eq!(v["format"]["elements"][1]["content"]["elements"][2]["json_schema"], json!(true));
    let required = tag(&ToolChoice::Required).expect("a tag");
    assert!(required.contains(r#""type": "tags_with_separator""#) && required.contains(r#""stop_after_first": false"#));
    assert!(tag(&ToolChoice::Named("other".into())).is_none());
    // `auto` with no strict tool is left alone.
    assert!(tag(&ToolChoice::Auto).is_none());
}
