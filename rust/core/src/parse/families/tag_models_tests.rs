//! The structural-tag models the families register, checked together:
//! every model vLLM names is there, and each builds tags as vLLM does.

use serde_json::{json, Value};

use crate::parse::Registry;
use crate::structured::{tag_text, Choice, TagModel, TagTool};

fn tools() -> Vec<Value> {
    vec![
        json!({"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}),
        json!({"type": "function", "function": {"name": "b", "strict": true, "parameters": {"type": "object"}}}),
    ]
}

fn tag_tools(tools: &[Value]) -> Vec<TagTool<'_>> {
    tools.iter().filter_map(TagTool::from_request).collect()
}

fn models() -> Vec<&'static TagModel> {
    Registry::default().tag_models().collect()
}

fn model(name: &str) -> &'static TagModel {
    Registry::default().find_tag_model(name).expect("a registered tag model")
}

fn build(model: &TagModel, tools: &[TagTool], choice: Choice) -> Value {
    (model.build)(tools, choice)
}

#[test]
fn every_tag_model_vllm_names_is_registered() {
    let names: Vec<&str> = models().iter().map(|m| m.name).collect();
    let known = [
        "deepseek_r1",
        "deepseek_v3_1",
        "deepseek_v3_2",
        "deepseek_v4",
        "deepseek_v4_1",
        "glm_4_7",
        "harmony",
        "hermes",
        "kimi",
        "llama",
        "longcat",
        "mimo",
        "minimax",
        "plamo3",
        "qwen_3_coder",
    ];
    assert_eq!(names, known);
}

#[test]
fn mimo_tags_are_qwen_xml_without_the_wrapping_newlines() {
    let tools = tools();
    let forced = build(model("mimo"), &tag_tools(&tools)[..1], Choice::Forced);
    assert_eq!(
        (forced["begin"].as_str(), forced["end"].as_str()),
        (Some("<tool_call><function=a>"), Some("</function></tool_call>"))
    );
    assert_eq!(forced["content"]["style"], "qwen_xml");
    let auto = build(model("mimo"), &tag_tools(&tools), Choice::Required);
    assert_eq!(auto["triggers"], json!(["<tool_call>"]));
    assert_eq!(auto["excludes"], json!(["<think>", "</think>", "</tool_call>", "<function="]));
    assert_eq!(auto["at_least_one"], true);
}

#[test]
fn longcat_tags_are_hermes_tags_under_longcats_markers() {
    let tools = tools();
    for choice in [Choice::Auto, Choice::Required, Choice::Forced] {
        let hermes = tag_text(build(model("hermes"), &tag_tools(&tools), choice));
        let longcat = tag_text(build(model("longcat"), &tag_tools(&tools), choice));
        assert_eq!(longcat, hermes.replace("tool_call>", "longcat_tool_call>"), "{choice:?}");
        assert!(longcat.contains("<longcat_tool_call>") && longcat.contains("</longcat_tool_call>"));
    }
}

#[test]
fn every_tag_escapes_non_ascii_like_json_dumps() {
    let tools = vec![json!({"type": "function", "function": {"name": "天気", "parameters": {"type": "object"}}})];
    for model in models() {
        for choice in [Choice::Auto, Choice::Required, Choice::Forced] {
            let tag = tag_text(build(model, &tag_tools(&tools), choice));
            assert!(tag.is_ascii() && tag.contains(r"\u5929\u6c17"), "{model:?} {tag}");
        }
    }
}

#[test]
fn only_strict_tools_pin_their_schema() {
    let tools = tools();
    let tag = build(model("minimax"), &tag_tools(&tools), Choice::Required);
    let tags = tag["elements"][1]["tags"].as_array().unwrap();
    assert_eq!(tags[0]["content"]["json_schema"], true);
    assert_eq!(tags[1]["content"]["json_schema"], json!({"type": "object"}));
}

#[test]
fn auto_tags_allow_text_around_triggered_calls() {
    let tools = tools();
    // Harmony allows text as a final-channel message instead (below).
    for model in models().into_iter().filter(|m| m.name != "harmony") {
        let tag = build(model, &tag_tools(&tools), Choice::Auto);
        assert_eq!(tag["type"], "triggered_tags", "{model:?}");
        assert_eq!(tag["at_least_one"], false, "{model:?}");
    }
}

#[test]
fn harmony_tags_call_on_any_channel_after_optional_messages() {
    let tools = tools();
    let forced = build(model("harmony"), &tag_tools(&tools)[..1], Choice::Forced);
    let [analysis, commentary, calls] = [0, 1, 2].map(|i| forced["elements"][i].clone());
    assert_eq!(analysis["type"], "optional");
    assert_eq!(analysis["content"]["elements"][0]["begin"], "<|channel|>analysis<|message|>");
    assert_eq!(commentary["content"]["elements"][0]["begin"], "<|channel|>commentary<|message|>");
    // One tool: 2 header orders x 2 content types x 3 channels.
    let begins: Vec<&str> = calls["elements"].as_array().unwrap().iter().filter_map(|t| t["begin"].as_str()).collect();
    assert_eq!(begins.len(), 12);
    assert_eq!(begins[0], " to=functions.a<|channel|>commentary json<|message|>");
    assert_eq!(begins[11], "<|channel|>final to=functions.a <|constrain|>json<|message|>");
    assert_eq!(calls["elements"][0]["end"], json!(["<|end|>", ""]));
    let auto = build(model("harmony"), &tag_tools(&tools)[..1], Choice::Auto);
    let last = auto["elements"][2]["elements"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["begin"], "<|channel|>final<|message|>");
    assert_eq!(last["content"]["type"], "any_text");
}

#[test]
fn deepseek_v3_fences_calls_and_separates_them_by_newlines() {
    let tools = tools();
    let required = build(model("deepseek_r1"), &tag_tools(&tools), Choice::Required);
    assert_eq!(required["begin"], "<｜tool▁calls▁begin｜>");
    assert_eq!(required["content"]["separator"], "\n");
    assert_eq!(required["content"]["tags"][0]["end"], "\n```<｜tool▁call▁end｜>");
    let forced = build(model("deepseek_v3_1"), &tag_tools(&tools[1..]), Choice::Forced);
    assert_eq!(forced["begin"], "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>b<｜tool▁sep｜>");
    assert_eq!(forced["end"], "<｜tool▁call▁end｜><｜tool▁calls▁end｜>");
}

#[test]
fn glm47_pins_keys_and_value_types_for_plain_schemas() {
    let tools = vec![json!({"type": "function", "function": {"name": "f", "parameters": {
        "type": "object",
        "properties": {"q": {"type": "string"}, "n": {"type": ["integer", "string"]}, "u": {"enum": ["c", 1]}}
    }}})];
    let tag = build(model("glm_4_7"), &tag_tools(&tools), Choice::Auto);
    let pairs = &tag["tags"][0]["content"]["content"]["elements"];
    assert_eq!(pairs[0]["elements"][0]["value"], "<arg_key>q</arg_key><arg_value>");
    assert_eq!(pairs[0]["elements"][1]["type"], "any_text");
    let n = &pairs[1]["elements"][1]["elements"];
    assert_eq!(n[0]["json_schema"], json!({"type": "integer"}));
    assert_eq!(n[1]["type"], "any_text");
    let u = &pairs[2]["elements"][1]["elements"];
    assert_eq!((u[0]["value"].as_str(), u[1]["value"].as_str()), (Some("c"), Some("1")));
}

#[test]
fn glm47_falls_back_to_a_free_object_for_combinators() {
    let tools = vec![
        json!({"type": "function", "function": {"name": "f", "parameters": {"anyOf": [], "properties": {"a": {}}}}}),
    ];
    let tag = build(model("glm_4_7"), &tag_tools(&tools), Choice::Forced);
    assert_eq!(tag["stop_after_first"], true);
    assert_eq!(tag["tags"][0]["content"]["style"], "glm_xml");
    assert_eq!(tag["tags"][0]["content"]["json_schema"], true);
}

#[test]
fn glm47_with_every_tool_strict_is_xgrammars_builtin() {
    let tools = tools();
    let strict: Vec<TagTool> = tag_tools(&tools).into_iter().map(|t| TagTool { strict: true, ..t }).collect();
    // The builtin's forced choice is a bare tag, required a triggered list.
    assert_eq!(build(model("glm_4_7"), &strict[..1], Choice::Forced)["type"], "tag");
    let required = build(model("glm_4_7"), &strict, Choice::Required);
    assert_eq!((required["type"].as_str(), required["at_least_one"].as_bool()), (Some("triggered_tags"), Some(true)));
}
