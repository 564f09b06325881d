//! granite-20b-functioncalling (`granite-20b-fc`, vLLM's
//! `Granite20bFCToolParser`): each call is `<function_call>` and a JSON
//! object `{"name": ..., "arguments": {...}}`; text before the first is
//! content. Streams re-read every call with `partial_json_parser` at each
//! chunk and diff the re-serialised arguments, as vLLM does.

use std::sync::Arc;

use serde_json::Value;

use crate::model::Model;
use crate::parse::call_stream::{common_prefix, json_call, py_get, skip_chars, CallStream};
use crate::parse::family::{Family, ToolFamily, ToolParserFactory};
use crate::parse::partial_json::{loads as strict_loads, partial_loads, py_isspace, raw_decode, Allow};
use crate::parse::{random_tool_call_id, ChatContext, Extracted, Ids, Registry, Texts, ToolParser};
use crate::pycompat::json::dumps;
use crate::pycompat::truthy;
use crate::wire::response::{Delta, DeltaToolCall};

const BOT: &str = "<function_call>";

#[derive(Default)]
struct Granite20bFcParser {
    calls: CallStream,
}

crate::impl_snapshot!(Granite20bFcParser {} nested { calls });

fn consume_space(text: &[char], mut i: usize) -> usize {
    while i < text.len() && py_isspace(text[i]) {
        i += 1;
    }
    i
}


/// Every call in the text after the first marker, each with whether its
/// JSON is complete; `None` when one cannot be read yet. vLLM skips the
/// marker's length between calls without reading it.
fn parse_calls(text: &[char], allow: Allow) -> Option<(Vec<Value>, Vec<bool>)> {
    let (mut calls, mut complete) = (Vec::new(), Vec::new());
    let mut at = consume_space(text, BOT.chars().count());
    while at < text.len() {
        let rest = &text[at..];
        let (obj, end) = partial_loads(rest, allow)?;
        complete.push(strict_loads(&rest[..end]).is_ok());
        at = consume_space(text, at + end) + BOT.chars().count();
        at = consume_space(text, at);
        calls.push(obj);
    }
    Some((calls, complete))
}

impl Granite20bFcParser {
    /// The `try` block of vLLM's streaming method.
    fn step(&mut self, current: &str) -> Option<Delta> {
        let allow = if self.calls.name_sent { Allow::ALL } else { Allow::NO_STRINGS };
        let text: Vec<char> = current.chars().collect();
        let (calls, complete) = parse_calls(&text, allow)?;
        if calls.is_empty() {
            return None;
        }
        let n = calls.len() as i64;
        let cursor = self.calls.current;
        let call = calls.get(usize::try_from(if cursor < 0 { n + cursor } else { cursor }).ok()?)?;
        if n > cursor + 1 {
            // A new call starts: first what the completed JSON of the last
            // one added and was not streamed.
            let mut delta = None;
            if let Ok(slot) = usize::try_from(cursor) {
                if let Some(args) = py_get(call, "arguments")?.filter(|a| truthy(a)) {
                    let sent = self.calls.streamed.get(slot)?.chars().count();
                    delta = self.calls.send_args(slot, skip_chars(&dumps(args), sent).to_string()).map(Delta::from);
                }
            }
            self.calls.begin(n - 1);
            return delta;
        }
        let slot = usize::try_from(cursor).ok()?;
        let mut delta = None;
        if !self.calls.name_sent {
            if let Some(name) = py_get(call, "name")?.filter(|v| truthy(v)) {
                let name = name.as_str()?.to_string(); // pydantic refuses another type
                delta = Some(Delta::tool_calls(vec![DeltaToolCall::opening(cursor, random_tool_call_id(), name, None)]));
                self.calls.name_sent = true;
            }
        } else if let Some(args) = py_get(call, "arguments")?.filter(|a| truthy(a)) {
            let sent = self.calls.streamed.get(slot)?.chars().count();
            let now = dumps(args);
            let before = py_get(self.calls.prev.get(slot)?, "arguments")?.filter(|a| truthy(a)).map(dumps);
            let diff = if *complete.get(slot)? {
                Some(skip_chars(&now, sent).to_string())
            } else {
                before.filter(|b| *b != now).map(|b| skip_chars(common_prefix(&b, &now), sent).to_string())
            };
            if let Some(diff) = diff {
                delta = self.calls.send_args(slot, diff).map(Delta::from);
            }
        }
        self.calls.prev = calls;
        delta
    }
}

impl ToolParser for Granite20bFcParser {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        let not_called = || Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
        let Some(first) = text.find(BOT) else { return not_called() };
        // `<function_call>\s*`: each call's JSON runs to the next marker.
        let starts: Vec<usize> = text.match_indices(BOT).map(|(i, _)| i).collect();
        let mut calls = Vec::new();
        for (k, &start) in starts.iter().enumerate() {
            let end = starts.get(k + 1).copied().unwrap_or(text.len());
            let body: Vec<char> = text[start + BOT.len()..end].chars().collect();
            let Some((call, _)) = raw_decode(&body[consume_space(&body, 0)..]) else { return not_called() };
            let Some(call) = json_call(&call) else { return not_called() };
            calls.push(call);
        }
        let content = &text[..first];
        Extracted { tools_called: true, calls, content: (!content.is_empty()).then(|| content.to_string()) }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        if t.current.chars().count() < BOT.chars().count() && BOT.starts_with(t.current) {
            return None;
        }
        if !t.current.starts_with(BOT) {
            return Some(Delta::content(t.delta));
        }
        self.step(t.current)
    }

    fn remaining_unstreamed_args(&mut self) -> String {
        self.calls.remaining()
    }
}

struct Granite20bFc;

impl ToolParserFactory for Granite20bFc {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(Granite20bFcParser::default())
    }
}

static TOOLS: ToolFamily = Family { names: &["granite-20b-fc"], needs: "", load: |_| Ok(Arc::new(Granite20bFc)) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
}
