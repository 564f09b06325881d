use super::*;

fn ctx() -> ChatContext {
    let tools = serde_json::json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}},
        {"type": "function", "function": {"name": "get_customer_by_phone", "parameters": {"type": "object",
            "properties": {"phone_number": {"type": "string"}}, "required": ["phone_number"]}}}
    ]);
    let req = serde_json::json!({"tools": tools});
    ChatContext::from_request(req.as_object().expect("object"), &Default::default())
}

fn batch(text: &str) -> Extracted {
    extract(text, &ctx())
}

#[test]
fn xml_values_are_typed_by_the_schema() {
    let got = batch("Sure <function name=\"get_weather\"><param name=\"city\"> Paris &amp; co</param><param name=\"days\"><![CDATA[3]]></param></function>");
    assert!(got.tools_called);
    assert_eq!(got.calls[0].arguments, r#"{"city": " Paris & co", "days": 3}"#);
    assert_eq!(got.content, None);
}

#[test]
fn malformed_xml_falls_back_to_the_regexes() {
    let got = batch("<function name=\"get_weather\"><param name=\"city\"> a < b </param></function>");
    assert_eq!(got.calls[0].arguments, r#"{"city": "a < b"}"#);
}

#[test]
fn invalid_blocks_stay_text_after_the_last_think() {
    let text = "x</think>\n <function name=\"get_weather\"><param name=\"days\">2</param></function>";
    let got = batch(text);
    assert!(!got.tools_called);
    assert_eq!(got.content.as_deref(), Some("<function name=\"get_weather\"><param name=\"days\">2</param></function>"));
}

#[test]
fn aliases_map_to_offered_tools() {
    let got = batch("<function name=\"get_details_by_phone\"><param name=\"phone\">555</param></function>");
    assert_eq!(got.calls[0].name, "get_customer_by_phone");
    assert_eq!(got.calls[0].arguments, r#"{"phone_number": 555}"#);
}

#[test]
fn stream_sends_the_name_then_the_whole_block() {
    let ctx = ctx();
    let mut p = Minicpm5Tools::default();
    let mut out = Vec::new();
    for chunk in ["Hi ", "<function name=\"get_weather\">", "<param name=\"city\">Oslo</param>", "</function>"] {
        let texts = Texts { previous: "", current: "", delta: chunk };
        let ids = Ids { previous: &[], current: &[], delta: &[] };
        out.push(p.extract_tool_calls_streaming(&texts, &ids, &ctx));
    }
    assert_eq!(out[0].as_ref().and_then(|d| d.content.as_deref()), Some("Hi "));
    let name = out[1].as_ref().and_then(|d| d.tool_calls[0].function.as_ref()).and_then(|f| f.name.clone());
    assert_eq!(name.as_deref(), Some("get_weather"));
    let args: String = out[2..]
        .iter()
        .flatten()
        .flat_map(|d| d.tool_calls.iter())
        .filter_map(|t| t.function.as_ref().and_then(|f| f.arguments.clone()))
        .collect();
    assert_eq!(args, r#"{"city": "Oslo"}"#);
}

/// `xml.etree.ElementTree.fromstring(s).text`, as vLLM's install reads it.
#[test]
fn xml_reads_as_element_tree_does() {
    let cases: &[(&str, Option<&str>)] = &[
        ("<a>x<!-- c -->y</a>", Some("xy")),
        ("<a>x<?pi z?>y</a>", Some("xy")),
        ("<a>x<![CDATA[q]]>y<b/>z</a>", Some("xqy")),
        ("<a>x<b>bold</b>y</a>", Some("x")),
        ("<a>&#65;&amp;</a>", Some("A&")),
        ("<a>x]]>y</a>", None),
        ("<a>\r\nx</a>", Some("\nx")),
        ("<a>x<!-- a--b -->y</a>", None),
        ("<a>&#0;</a>", None),
        ("<a>\u{1}</a>", None),
        ("<a><x:b/></a>", None),
        ("<a><?xml version=\"1.0\"?></a>", None),
        ("<a b=\"<\"/>", None),
        ("<a b=\"&#60;\">&#x1F600;</a>", Some("😀")),
        ("<a>\u{85}\u{2028}</a>", Some("\u{85}\u{2028}")),
        ("<a>\u{fffe}</a>", None),
        ("<a>&nbsp;</a>", None),
    ];
    for (xml, want) in cases {
        let got = roxmltree::Document::parse(xml).ok().map(|d| block::element_text(&d.root_element()));
        assert_eq!(got.as_deref(), *want, "{xml:?}");
    }
}

/// vLLM streams a `<function` split across deltas as content until its
/// block closes, then reads the whole block as a call: the state keeps the
/// text from that prefix on, across a snapshot.
#[test]
fn a_split_start_marker_streams_as_content_then_the_block_as_a_call() {
    use crate::parse::Snapshot;
    let ctx = ctx();
    let mut p = Minicpm5Tools::default();
    let mut got = Vec::new();
    for chunk in ["Hi <func", "tion name=\"get_weather\">", "<param name=\"city\">Oslo</param>", "</function>"] {
        let texts = Texts { previous: "", current: "", delta: chunk };
        let ids = Ids { previous: &[], current: &[], delta: &[] };
        let delta = p.extract_tool_calls_streaming(&texts, &ids, &ctx).expect("a delta");
        got.push(match delta.tool_calls.first().and_then(|t| t.function.as_ref()) {
            Some(f) => format!("call {} {}", f.name.as_deref().unwrap_or(""), f.arguments.as_deref().unwrap_or("")),
            None => delta.content.unwrap_or_default(),
        });
        let state = p.save_state().expect("saved");
        p = Minicpm5Tools::default();
        p.load_state(state).expect("loaded");
    }
    assert_eq!(
        got,
        ["Hi <func", "tion name=\"get_weather\">", "<param name=\"city\">Oslo</param>", "call get_weather {\"city\": \"Oslo\"}"]
    );
    assert!(p.stream.held_len() < 80, "the state keeps only the open block");
}
