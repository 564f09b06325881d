//! Phi-4-mini (`phi4_mini_json`, vLLM's `Phi4MiniJsonToolParser`): calls
//! are a JSON list after `functools`, `functools[{"name": ..., "arguments":
//! ...}, ...]`. vLLM's parser reads them in batch only: its streaming method
//! returns nothing, so a stream with tools sends no deltas at all.

use std::sync::Arc;

use serde_json::Value;

use crate::model::Model;
use crate::parse::family::{Family, ToolFamily, ToolParserFactory};
use crate::parse::{ChatContext, Extracted, FunctionCall, Ids, Registry, Texts, ToolParser};
use crate::pycompat::json::{dumps, loads};
use crate::wire::response::Delta;

const BOT: &str = "functools[";

struct Phi4MiniJson;

/// One list element as a call: `None` where Python would raise (not a dict,
/// no `name` string, neither `arguments` nor `parameters`).
fn call(element: &Value) -> Option<FunctionCall> {
    let obj = element.as_object()?;
    let name = obj.get("name")?.as_str()?.to_string();
    let arguments = obj.get("arguments").or_else(|| obj.get("parameters"))?;
    Some(FunctionCall { id: None, name, arguments: dumps(arguments) })
}

impl ToolParser for Phi4MiniJson {
    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        let not_called = || Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
        // `functools\[(.*?)\]`: up to the first `]`, nested lists included.
        let Some(start) = text.find(BOT).map(|i| i + BOT.len()) else { return not_called() };
        let Some(len) = text[start..].find(']') else { return not_called() };
        let list = format!("[{}]", &text[start..start + len]);
        // A list that does not parse still counts as called, with no calls.
        let elements = match loads(&list) {
            Some(Value::Array(elements)) => elements,
            _ => Vec::new(),
        };
        match elements.iter().map(call).collect::<Option<Vec<_>>>() {
            Some(calls) => Extracted { tools_called: true, calls, content: None },
            None => not_called(),
        }
    }

    fn extract_tool_calls_streaming(&mut self, _t: &Texts, _ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        None
    }

    /// vLLM's stream sends nothing of the text, which batch answers.
    fn left_batch(&self) -> bool {
        true
    }

    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn reads_history(&self) -> bool {
        false
    }
}

crate::impl_snapshot!(Phi4MiniJson {});

impl ToolParserFactory for Phi4MiniJson {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(Phi4MiniJson)
    }
}

static TOOLS: ToolFamily = Family { names: &["phi4_mini_json"], needs: "", load: |_| Ok(Arc::new(Phi4MiniJson)) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(text: &str) -> (bool, Vec<(String, String)>, Option<String>) {
        let ctx = ChatContext::from_request(&serde_json::Map::new(), &Default::default());
        let e = Phi4MiniJson.extract_tool_calls(text, &ctx);
        (e.tools_called, e.calls.into_iter().map(|c| (c.name, c.arguments)).collect(), e.content)
    }

    #[test]
    fn calls_are_the_list_after_functools_and_content_is_dropped() {
        let (called, calls, content) =
            batch(r#"Sure. functools[{"name": "f", "arguments": {"a": 1}}, {"name": "g", "parameters": {}}] after"#);
        assert!(called && content.is_none());
        assert_eq!(calls, vec![("f".into(), r#"{"a": 1}"#.into()), ("g".into(), "{}".into())]);
    }

    #[test]
    fn a_list_that_does_not_parse_is_a_call_with_no_calls_and_a_bad_element_is_text() {
        assert_eq!(batch("functools[{oops}]"), (true, vec![], None));
        let text = r#"functools[{"name": "f"}]"#;
        assert_eq!(batch(text), (false, vec![], Some(text.into())));
        assert_eq!(batch("no calls"), (false, vec![], Some("no calls".into())));
    }
}
