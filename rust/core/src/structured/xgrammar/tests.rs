//! The port against xgrammar 0.2.8 itself: every schema case recorded by
//! tests/reference/record_cohere_xgrammar.py, and a few worked examples from
//! tests/models/cohere_command/XGRAMMAR_EBNF.md.

use std::io::{BufRead, BufReader};

use serde_json::{json, Value};

use super::{json_schema_to_ebnf, XgrammarError};

const RECORDED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/reference/cohere/xgrammar_ebnf.jsonl.gz");

/// The recorded lines (schema cases and tool-list cases alike).
pub(crate) fn recorded_lines() -> Vec<Value> {
    let file = std::fs::File::open(RECORDED).unwrap_or_else(|e| panic!("{RECORDED}: {e}"));
    BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .map(|line| serde_json::from_str(&line.expect("readable line")).expect("JSON line"))
        .collect()
}

#[test]
fn recorded_schemas_convert_exactly() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for case in recorded_lines() {
        let Some(schema) = case.get("schema") else { continue };
        checked += 1;
        let got = match json_schema_to_ebnf(schema) {
            Ok(text) => json!({"ebnf": text}),
            Err(error) => json!({"error": error.raised_text("00:00:00").unwrap_or_else(|| error.to_string())}),
        };
        let expected = match (case.get("ebnf"), case.get("error")) {
            (Some(text), _) => json!({"ebnf": text}),
            (_, Some(error)) => json!({"error": error}),
            _ => panic!("case without an answer: {case}"),
        };
        if got != expected {
            failures.push(format!("schema {schema}\n  expected {expected}\n  got      {got}"));
        }
    }
    assert!(checked > 400, "only {checked} schema cases recorded");
    assert!(
        failures.is_empty(),
        "{} of {checked} differ; first:\n{}",
        failures.len(),
        failures[..failures.len().min(3)].join("\n")
    );
}

/// The text without the 13 fixed basic rules and the 6 fixed lifted ones.
fn schema_rules(schema: Value) -> String {
    let text = json_schema_to_ebnf(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
    let fixed_tail = [
        "basic_integer_1 ",
        "basic_number_1 ",
        "basic_number_2 ",
        "basic_number_3 ",
        "basic_number_4 ",
        "basic_number_5 ",
    ];
    text.lines()
        .skip(13)
        .filter(|line| !fixed_tail.iter().any(|prefix| line.starts_with(prefix)))
        .map(|line| format!("{line}\n"))
        .collect()
}

#[test]
fn basic_rules_come_first_and_the_cached_type_is_referenced() {
    let text = json_schema_to_ebnf(&json!({"type": "integer", "description": "ignored"})).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 20);
    assert_eq!(
        lines[0],
        r#"basic_escape ::= (([\"\\/bfnrt]) | ("u" [A-Fa-f0-9] [A-Fa-f0-9] [A-Fa-f0-9] [A-Fa-f0-9]))"#
    );
    assert_eq!(lines[13], "root ::= ((basic_integer))");
    assert_eq!(lines[14], r#"basic_integer_1 ::= ("" | ("-"))"#);
    assert!(text.ends_with("basic_number_5 ::= (\"\" | ([eE] basic_number_4 basic_number_digits{1, -1}))\n"));
}

#[test]
fn optional_properties_chain_through_part_rules_built_backwards() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "boolean"}}});
    let expected = concat!(
        r#"root ::= (("{" [ \n\r\t]* root_1 [ \n\r\t]* "}") | ("{" [ \n\r\t]* "}"))"#,
        "\n",
        r#"root_part_1 ::= ("" | ([ \n\r\t]* "," [ \n\r\t]* "\"c\"" [ \n\r\t]* ":" [ \n\r\t]* basic_boolean))"#,
        "\n",
        r#"root_part_0 ::= ((root_part_1) | ([ \n\r\t]* "," [ \n\r\t]* "\"b\"" [ \n\r\t]* ":" [ \n\r\t]* basic_integer root_part_1))"#,
        "\n",
        r#"root_1 ::= (("\"a\"" [ \n\r\t]* ":" [ \n\r\t]* basic_string root_part_0) | ("\"b\"" [ \n\r\t]* ":" [ \n\r\t]* basic_integer root_part_1) | ("\"c\"" [ \n\r\t]* ":" [ \n\r\t]* basic_boolean))"#,
        "\n",
    );
    assert_eq!(schema_rules(schema), expected);
}

#[test]
fn a_pattern_is_kept_whole_in_a_lifted_rule() {
    let expected =
        concat!(r#"root ::= (("\"" root_1 "\""))"#, "\n", r#"root_1 ::= Regex("^[0-9]+$", json_string=true)"#, "\n");
    assert_eq!(schema_rules(json!({"type": "string", "pattern": "^[0-9]+$"})), expected);
}

#[test]
fn a_ref_gets_one_rule_named_from_its_path() {
    let schema = json!({
        "type": "object",
        "properties": {"item": {"$ref": "#/$defs/Item"}},
        "$defs": {"Item": {"type": "object", "properties": {"n": {"type": "integer"}}}}
    });
    let expected = concat!(
        r#"root ::= (("{" [ \n\r\t]* "\"item\"" [ \n\r\t]* ":" [ \n\r\t]* root_prop_0 [ \n\r\t]* "}") | ("{" [ \n\r\t]* "}"))"#,
        "\n",
        "root_prop_0 ::= ((defs_Item))\n",
        r#"defs_Item ::= (("{" [ \n\r\t]* "\"n\"" [ \n\r\t]* ":" [ \n\r\t]* basic_integer [ \n\r\t]* "}") | ("{" [ \n\r\t]* "}"))"#,
        "\n",
    );
    assert_eq!(schema_rules(schema), expected);
}

#[test]
fn const_text_is_json_then_c_escaped() {
    let schema = json!({"const": "a/b\\c\"d\u{e9}\u{65e5}\u{1f600}'?\n\u{1}"});
    let expected = "root ::= ((\"\\\"a/b\\\\\\\\c\\\\\\\"d\\xe9\\u65e5\\U0001f600\\'\\?\\\\n\\\\u0001\\\"\"))\n";
    assert_eq!(schema_rules(schema), expected);
}

#[test]
fn a_bounded_integer_becomes_rules_from_a_range_regex() {
    let expected = concat!(
        "root ::= ((root_1))\n",
        r#"root_1 ::= (("-" [1-5]) | ("0") | ([1-9]) | ([1-9] [0-9]) | ("1" "0" "0"))"#,
        "\n"
    );
    assert_eq!(schema_rules(json!({"type": "integer", "minimum": -5, "maximum": 100})), expected);
}

#[test]
fn refusals_carry_xgrammar_text() {
    let error = json_schema_to_ebnf(&json!({"type": "foo"})).err();
    assert_eq!(error.as_ref().map(ToString::to_string).as_deref(), Some("Unsupported type \"foo\""));
    assert_eq!(
        error.and_then(|e| e.raised_text("12:34:56")).as_deref(),
        Some("[12:34:56] /project/cpp/json_schema_converter.cc:4944: Unsupported type \"foo\"\n")
    );
    let missing = json_schema_to_ebnf(&json!({"$ref": "#/$defs/X"})).err();
    assert!(matches!(missing, Some(XgrammarError::Rejected { at: super::RaisedAt::Conversion, .. })));
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    // Built by hand: `json!` would re-serialise the inner value recursively.
    let mut schema = json!({"type": "string"});
    for _ in 0..5000 {
        let mut array = serde_json::Map::new();
        array.insert("type".into(), json!("array"));
        array.insert("items".into(), schema);
        schema = Value::Object(array);
    }
    assert!(matches!(json_schema_to_ebnf(&schema), Err(XgrammarError::TooDeep(_))));
    drop_deep(schema);
}

/// serde_json drops values recursively; unwind a deep one by hand.
fn drop_deep(mut value: Value) {
    while let Some(inner) = value.get_mut("items").map(Value::take) {
        value = inner;
    }
}
