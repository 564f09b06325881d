//! The structural tags derender puts in a rendered request's
//! `structured_outputs` against vLLM 0.33's own (`_apply_structural_tag`,
//! run by `tests/data/gen_strict_tags.py` over tool lists x tool_choice x
//! strict x parallel_tool_calls x `--tool-strict-level` x tag model x the
//! request's structured outputs).

use std::io::{BufRead, BufReader};

use derender_core::parse::Registry;
use derender_core::parse::{ChatContext, ToolChoice};
use derender_core::structured::format::params;
use derender_core::structured::request::{request_format, request_params};
use derender_core::structured::tool_tags::{structural_tag, StrictLevel, TagRequest};
use serde_json::{Map, Value};

fn cases() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/strict_tags.jsonl.gz");
    let file = std::fs::File::open(path).expect("fixture");
    BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .map(|l| serde_json::from_str(&l.expect("line")).expect("json"))
        .collect()
}

/// The chat request a case describes.
fn request(case: &Value) -> Map<String, Value> {
    let mut o = Map::new();
    for key in ["tools", "tool_choice", "parallel_tool_calls", "structured_outputs", "response_format"] {
        if let Some(v) = case.get(key) {
            o.insert(key.into(), v.clone());
        }
    }
    o
}

/// vLLM's derivation of the Lark grammar's EBNF is not reproduced (see
/// docs/divergences.md); no case here uses one.
#[test]
fn tags_match_vllms_apply_structural_tag() {
    let cases = cases();
    assert!(cases.len() > 4000, "{} cases", cases.len());
    let registry = Registry::default();
    let mut failures = Vec::new();
    for case in &cases {
        assert!(case.get("error").is_none(), "vLLM raised: {case}");
        let o = request(case);
        let ctx = ChatContext::from_request(&o, &Default::default());
        let params_in = request_params(&o);
        assert_eq!(params_in.as_ref().unwrap_or(&Value::Null), &case["request_params"], "request params: {case}");
        let format = request_format(params_in.as_ref());
        let model = case["model"].as_str().map(|m| registry.find_tag_model(m).expect("known model"));
        let level = case["level"].as_str().map(|l| StrictLevel::from_name(l).expect("level"));
        let req = TagRequest {
            tools: &ctx.tools,
            tool_choice: &ctx.tool_choice,
            parallel_tool_calls: ctx.parallel_tool_calls,
            format: &format,
        };
        let got = structural_tag(model, level, req).map(|t| params(None, Some(t)));
        if got.as_ref().unwrap_or(&Value::Null) != &case["expected"] {
            failures.push(format!("{case}\n  got {}", got.unwrap_or(Value::Null)));
        }
    }
    assert!(failures.is_empty(), "{} of {} differ; first:\n{}", failures.len(), cases.len(), failures[0]);
}

#[test]
fn choices_that_need_no_call_get_no_tag() {
    let tools = vec![serde_json::json!({"type": "function", "function": {"name": "f", "strict": true}})];
    for choice in [ToolChoice::None, ToolChoice::Null] {
        let req = TagRequest {
            tools: &tools,
            tool_choice: &choice,
            parallel_tool_calls: false,
            format: &derender_core::structured::tool_tags::RequestFormat::Absent,
        };
        assert_eq!(
            structural_tag(Registry::default().find_tag_model("hermes"), Some(StrictLevel::Parameter), req),
            None
        );
    }
}
