//! Replays tests/reference/cohere/filter_oracle.jsonl.gz (answers of
//! cohere-melody 0.15.3's `PyFilter`, recorded by
//! tests/reference/record_cohere_filter.py) and checks a few examples of
//! FILTER.md by name.

use std::io::Read;

use serde_json::{json, Value};

use super::{Filter, FilterOutput, Preset};

/// FILTER.md's notation: `c` content, `r` reasoning, `tc` [index, id, name,
/// arguments], `cit` [start, end, text, [[call, [results]]], is_thinking];
/// empty parts left out.
fn notation(output: &FilterOutput) -> Value {
    let mut map = serde_json::Map::new();
    if let Some(content) = &output.content {
        map.insert("c".into(), json!(content));
    }
    if let Some(reasoning) = &output.reasoning {
        map.insert("r".into(), json!(reasoning));
    }
    if !output.tool_calls.is_empty() {
        let calls: Vec<Value> =
            output.tool_calls.iter().map(|call| json!([call.index, call.id, call.name, call.arguments])).collect();
        map.insert("tc".into(), json!(calls));
    }
    if !output.citations.is_empty() {
        let citations: Vec<Value> = output
            .citations
            .iter()
            .map(|citation| {
                let sources: Vec<Value> = citation
                    .sources
                    .iter()
                    .map(|source| json!([source.tool_call_index, source.tool_result_indices]))
                    .collect();
                json!([citation.start_index, citation.end_index, citation.text, sources, citation.is_thinking])
            })
            .collect();
        map.insert("cit".into(), json!(citations));
    }
    Value::Object(map)
}

fn preset(name: &str) -> Preset {
    match name {
        "cmd3" => Preset::Cmd3,
        _ => Preset::Cmd4,
    }
}

/// write_decoded per chunk, then flush_partials; optionally carrying the
/// filter through its serialized form after every call.
fn run_stream(preset: Preset, chunks: &[&str], reload: bool) -> Vec<Value> {
    let mut filter = Filter::new(preset);
    let mut outputs = Vec::new();
    for chunk in chunks {
        outputs.push(notation(&filter.write_decoded(chunk)));
        if reload {
            let state = serde_json::to_string(&filter).unwrap_or_default();
            let restored: Filter = serde_json::from_str(&state).unwrap_or_else(|error| panic!("{error}: {state}"));
            assert_eq!(restored, filter, "state round trip: {state}");
            filter = restored;
        }
    }
    outputs.push(notation(&filter.flush_partials()));
    outputs
}

fn run_batch(preset: Preset, text: &str) -> Vec<Value> {
    vec![notation(&Filter::new(preset).process_full_text(text))]
}

struct OracleCase {
    preset: Preset,
    batch: bool,
    chunks: Vec<String>,
    outputs: Vec<Value>,
}

fn oracle_cases() -> Vec<OracleCase> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/reference/cohere/filter_oracle.jsonl.gz");
    let file = std::fs::File::open(path).unwrap_or_else(|error| panic!("{path}: {error}"));
    let mut text = String::new();
    flate2::read::GzDecoder::new(file).read_to_string(&mut text).unwrap_or_else(|error| panic!("{path}: {error}"));
    text.lines()
        .map(|line| {
            let row: Value = serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}: {line}"));
            let chunks = row["chunks"]
                .as_array()
                .map(|chunks| chunks.iter().map(|chunk| chunk.as_str().unwrap_or_default().to_owned()).collect());
            OracleCase {
                preset: preset(row["preset"].as_str().unwrap_or_default()),
                batch: row["mode"] == "batch",
                chunks: chunks.unwrap_or_default(),
                outputs: row["outputs"].as_array().cloned().unwrap_or_default(),
            }
        })
        .collect()
}

fn replay(case: &OracleCase, reload: bool) -> Vec<Value> {
    let chunks: Vec<&str> = case.chunks.iter().map(String::as_str).collect();
    if case.batch {
        run_batch(case.preset, &chunks.concat())
    } else {
        run_stream(case.preset, &chunks, reload)
    }
}

fn check_oracle(reload: bool) {
    let cases = oracle_cases();
    assert!(cases.len() > 1000, "only {} oracle cases", cases.len());
    let mut failures = Vec::new();
    for (number, case) in cases.iter().enumerate() {
        let got = replay(case, reload);
        if got != case.outputs {
            failures.push(format!(
                "case {number} ({:?}, batch {}): chunks {:?}\n  want {}\n  got  {}",
                case.preset,
                case.batch,
                case.chunks,
                json!(case.outputs),
                json!(got)
            ));
        }
    }
    let shown: Vec<&String> = failures.iter().take(5).collect();
    assert!(failures.is_empty(), "{} of {} oracle cases differ:\n{shown:#?}", failures.len(), cases.len());
}

#[test]
fn oracle_cases_match() {
    check_oracle(false);
}

#[test]
fn oracle_streams_match_through_saved_state() {
    check_oracle(true);
}

fn expect(outputs: &[Value], want: &[&str]) {
    let want: Vec<Value> = want.iter().map(|text| serde_json::from_str(text).unwrap_or(Value::Null)).collect();
    assert_eq!(outputs, want.as_slice());
}

#[test]
fn thinking_then_text_with_a_citation() {
    let text = "<|START_THINKING|>Let me check.<|END_THINKING|><|START_TEXT|>The capital is <co>Paris</co: 0:[1]>.<|END_TEXT|>";
    let citation = r#"[[15, 20, "Paris", [[0, [1]]], false]]"#;
    expect(
        &run_batch(Preset::Cmd4, text),
        &[&format!(r#"{{"c": "The capital is Paris.", "r": "Let me check.", "cit": {citation}}}"#)],
    );
    let chunks = [
        "<|START_THINKING|>Let",
        " me",
        " check.",
        "<|END_THINKING|>",
        "<|START_TEXT|>The",
        " capital is",
        " <",
        "co",
        ">",
        "Paris",
        "</",
        "co",
        ": 0:[1]",
        ">.",
        "<|END_TEXT|>",
    ];
    let dot = format!(r#"{{"c": ".", "cit": {citation}}}"#);
    let want = [
        r#"{"r": "Let"}"#,
        r#"{"r": " me"}"#,
        r#"{"r": " check."}"#,
        "{}",
        r#"{"c": "The"}"#,
        r#"{"c": " capital is"}"#,
        "{}",
        "{}",
        r#"{"c": " "}"#,
        r#"{"c": "Paris"}"#,
        "{}",
        "{}",
        "{}",
        &dot,
        "{}",
        "{}",
    ];
    expect(&run_stream(Preset::Cmd4, &chunks, false), &want);
}

#[test]
fn bare_text_is_reasoning_for_cmd4_and_content_for_cmd3() {
    let chunks = ["  Just", " plain ", "words.  "];
    expect(
        &run_stream(Preset::Cmd4, &chunks, false),
        &[r#"{"r": "  Just"}"#, r#"{"r": " plain"}"#, r#"{"r": " words."}"#, "{}"],
    );
    expect(&run_batch(Preset::Cmd3, &chunks.concat()), &[r#"{"c": "  Just plain words."}"#]);
}

#[test]
fn thinking_is_trimmed_on_both_sides_and_the_answer_on_the_right() {
    let text = "<|START_THINKING|>\n  padded thought \n<|END_THINKING|><|START_TEXT|>\n  padded answer  \n<|END_TEXT|>";
    expect(&run_batch(Preset::Cmd4, text), &[r#"{"c": "\n  padded answer", "r": "padded thought"}"#]);
}

#[test]
fn a_partial_token_holds_back_the_whole_buffer() {
    expect(&run_stream(Preset::Cmd4, &["<|START_TEXT|>abc <|EN", "D_TEXT|>"], false), &["{}", r#"{"c": "abc"}"#, "{}"]);
}

#[test]
fn a_malformed_closer_keeps_its_text_in_batch_but_loses_a_held_prefix_in_a_stream() {
    let chunks = ["<|START_TEXT|>Broken <co>cite</", "co 0:[1]> end"];
    expect(&run_batch(Preset::Cmd4, &chunks.concat()), &[r#"{"c": "Broken cite</co 0:[1]> end"}"#]);
    expect(&run_stream(Preset::Cmd4, &chunks, false), &[r#"{"c": "Broken cite"}"#, r#"{"c": "co 0:[1]> end"}"#, "{}"]);
}

#[test]
fn a_tool_call_streams_id_then_name_then_arguments() {
    let chunks = [
        "<|START_ACTION|>[",
        "\n    {\"tool",
        "_call_",
        "id\": \"",
        "0\", \"",
        "tool_name",
        "\": \"get",
        "_weather\",",
        " \"parameters\":",
        " {\"city\":",
        " \"Paris\"}}",
        "\n]<|END_ACTION|>",
    ];
    let want = [
        "{}",
        "{}",
        "{}",
        "{}",
        r#"{"tc": [[0, "0", "", ""]]}"#,
        "{}",
        "{}",
        r#"{"tc": [[0, "", "get_weather", ""]]}"#,
        "{}",
        r#"{"tc": [[0, "", "", "{\"city\":"]]}"#,
        r#"{"tc": [[0, "", "", " \"Paris\"}"]]}"#,
        "{}",
        "{}",
    ];
    expect(&run_stream(Preset::Cmd4, &chunks, false), &want);
    expect(
        &run_batch(Preset::Cmd4, &chunks.concat()),
        &[r#"{"tc": [[0, "0", "get_weather", "{\"city\": \"Paris\"}"]]}"#],
    );
}

#[test]
fn empty_parameters_before_a_later_call_give_braces_in_batch_only() {
    let first = "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"get_time\",";
    let second = " \"parameters\": {}},";
    let third = " {\"tool_call_id\": \"1\", \"tool_name\": \"f\", \"parameters\": {\"a\": 1}}]";
    let text = format!("{first}{second}{third}<|END_ACTION|>");
    expect(&run_batch(Preset::Cmd4, &text), &[r#"{"tc": [[0, "0", "get_time", "{}"], [1, "1", "f", "{\"a\": 1}"]]}"#]);
    expect(
        &run_stream(Preset::Cmd4, &[first, second, third, "<|END_ACTION|>"], false),
        &[r#"{"tc": [[0, "0", "get_time", ""]]}"#, "{}", r#"{"tc": [[1, "1", "f", "{\"a\": 1}"]]}"#, "{}", "{}"],
    );
}

#[test]
fn nothing_comes_out_after_the_end() {
    let mut filter = Filter::new(Preset::Cmd3);
    assert_eq!(notation(&filter.process_full_text("hi")), json!({"c": "hi"}));
    assert_eq!(filter.write_decoded("more"), FilterOutput::default());
    assert_eq!(filter.flush_partials(), FilterOutput::default());
}
