//! Completing a stream to the batch answer, for legacy tool parsers whose
//! vLLM stream can fall short of vLLM's own batch answer (a call whose
//! arguments a chunking lost, text after a block never sent, arguments
//! owed again at the end). The stream goes out as vLLM's does; at its end,
//! where what went out is a prefix of the batch answer, the final chunk
//! carries the rest, and vLLM's end-of-stream argument append is left out
//! where it would break that prefix. A stream already equal to the batch
//! answer is left exactly as vLLM sends it.

use super::{random_tool_call_id, FunctionCall};
use crate::pycompat::json::loads;
use crate::wire::response::{Delta, DeltaToolCall};

/// One call as streamed so far.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SentCall {
    pub name: Option<String>,
    pub arguments: String,
}

/// What the tool phase sent: its content and its calls.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sent {
    pub content: String,
    pub calls: Vec<SentCall>,
}

/// The batch answer of the tool phase: its content and calls.
pub struct Target<'a> {
    pub content: &'a str,
    pub calls: &'a [FunctionCall],
}

impl Sent {
    pub fn record(&mut self, delta: &Delta) {
        self.content.push_str(delta.content.as_deref().unwrap_or(""));
        for tc in &delta.tool_calls {
            let Ok(index) = usize::try_from(tc.index) else { continue };
            if self.calls.len() <= index {
                self.calls.resize(index + 1, SentCall::default());
            }
            let Some(f) = &tc.function else { continue };
            if let Some(name) = &f.name {
                self.calls[index].name.get_or_insert_with(|| name.clone());
            }
            self.calls[index].arguments.push_str(f.arguments.as_deref().unwrap_or(""));
        }
    }

    /// Is everything sent the start of the batch answer?
    pub fn leads_to(&self, target: &Target) -> bool {
        target.content.starts_with(&self.content)
            && self.calls.len() <= target.calls.len()
            && self.calls.iter().zip(target.calls).all(|(sent, call)| {
                sent.name.as_ref().is_none_or(|n| *n == call.name) && call.arguments.starts_with(&sent.arguments)
            })
    }

    /// The rest of the batch answer as one delta (`None`: nothing is missing).
    fn rest(&self, target: &Target) -> Option<Delta> {
        let content = &target.content[self.content.len()..];
        let mut calls = Vec::new();
        for (index, call) in target.calls.iter().enumerate() {
            let sent = self.calls.get(index).cloned().unwrap_or_default();
            let arguments = &call.arguments[sent.arguments.len()..];
            if sent.name.is_none() {
                let id = call.id.clone().unwrap_or_else(random_tool_call_id);
                calls.push(DeltaToolCall::opening(index as i64, id, call.name.clone(), Some(arguments.to_string())));
            } else {
                // A named call sent without arguments already reads as `{}`
                // (vLLM's own stream leaves it so).
                let reads_as_sent = sent.arguments.is_empty() && reads_as_empty(&call.arguments);
                if !arguments.is_empty() && !reads_as_sent {
                    calls.push(DeltaToolCall::arguments(index as i64, arguments.to_string()));
                }
            }
        }
        let content = (!content.is_empty()).then(|| content.to_string());
        (content.is_some() || !calls.is_empty()).then(|| Delta { content, tool_calls: calls, ..Default::default() })
    }
}

/// Arguments that parse to the empty object.
fn reads_as_empty(arguments: &str) -> bool {
    loads(arguments).is_some_and(|v| v.as_object().is_some_and(serde_json::Map::is_empty))
}

/// The final message of a stream: vLLM's (`with_append`, its unstreamed
/// arguments appended) where that leads to the batch answer, else the one
/// without the append where that does, each completed to the answer;
/// vLLM's as it is where neither can be. And whether the answer was reached.
pub fn finish(
    sent: &Sent,
    with_append: Option<Delta>,
    without: Option<Delta>,
    target: &Target,
) -> (Option<Delta>, bool) {
    for candidate in [&with_append, &without] {
        let mut so_far = sent.clone();
        if let Some(d) = candidate {
            so_far.record(d);
        }
        if !so_far.leads_to(target) {
            continue;
        }
        let mut message = candidate.clone();
        if let Some(rest) = so_far.rest(target) {
            let m = message.get_or_insert_with(Delta::default);
            if let Some(c) = rest.content {
                m.content = Some(m.content.take().unwrap_or_default() + &c);
            }
            m.tool_calls.extend(rest.tool_calls);
        }
        return (message, true);
    }
    (with_append, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, arguments: &str) -> FunctionCall {
        FunctionCall { id: None, name: name.into(), arguments: arguments.into() }
    }

    #[test]
    fn a_stream_short_of_the_answer_gets_the_rest_and_a_complete_one_nothing() {
        let calls = [call("f", r#"{"a": 1}"#), call("g", "{}")];
        let target = Target { content: "Hi", calls: &calls };
        let mut sent = Sent::default();
        sent.record(&Delta::content("Hi"));
        sent.record(&Delta::tool_calls(vec![DeltaToolCall::opening(0, "x".into(), "f".into(), Some("{\"a\"".into()))]));
        let (done, reached) = finish(&sent, None, None, &target);
        let done = done.expect("the rest");
        assert!(reached);
        let parts: Vec<(i64, Option<String>)> =
            done.tool_calls.iter().map(|t| (t.index, t.function.as_ref().and_then(|f| f.arguments.clone()))).collect();
        assert_eq!(parts, [(0, Some(": 1}".into())), (1, Some("{}".into()))]);
        // An end-of-stream append that overshoots the answer is left out.
        let mut all = sent.clone();
        all.record(&done);
        let overshoot = Delta::tool_calls(vec![DeltaToolCall::arguments(1, "{}{}".into())]);
        assert!(matches!(finish(&all, Some(overshoot.clone()), None, &target), (None, true)));
        // Text the answer does not have cannot be taken back: vLLM's message stays.
        let mut wrong = Sent::default();
        wrong.record(&Delta::content("Hi "));
        let (kept, reached) = finish(&wrong, Some(overshoot), None, &target);
        assert!(!reached);
        let kept = kept.expect("vLLM's message");
        assert_eq!(kept.tool_calls[0].function.as_ref().and_then(|f| f.arguments.as_deref()), Some("{}{}"));
    }

    #[test]
    fn a_named_call_without_arguments_is_left_as_it_reads_as_the_empty_object() {
        let calls = [call("a", "{}"), call("b", r#"{"x": 42}"#)];
        let target = Target { content: "", calls: &calls };
        let mut sent = Sent::default();
        sent.record(&Delta::tool_calls(vec![DeltaToolCall::opening(0, "x".into(), "a".into(), None)]));
        let last =
            Delta::tool_calls(vec![DeltaToolCall::opening(1, "y".into(), "b".into(), Some(r#"{"x": 42}"#.into()))]);
        let (done, reached) = finish(&sent, Some(last.clone()), None, &target);
        assert!(reached);
        assert_eq!(serde_json::to_value(done).ok(), serde_json::to_value(Some(last)).ok());
        // Arguments that are not empty still go out.
        let calls = [call("a", r#"{"k": 1}"#), call("b", r#"{"x": 42}"#)];
        let target = Target { content: "", calls: &calls };
        let (done, _) = finish(&sent, Some(Delta::default()), None, &target);
        let parts: Vec<i64> = done.expect("the rest").tool_calls.iter().map(|t| t.index).collect();
        assert_eq!(parts, [0, 1]);
    }
}
