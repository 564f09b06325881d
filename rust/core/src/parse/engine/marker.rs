//! Families whose markers are several tokens (PLaMo 3's `<|plamo:begin_`
//! `think` `:plamo|>`) can end a stream inside one. What the end flushes
//! drops such a cut-short marker (`_strip_unfinished_marker`), judged on
//! token ids: the tail is unfinished when a terminal's ids go on past it.

use super::{EngineConfig, Event, EventType};
use crate::model::Model;

/// `value` without a trailing marker that some terminal would complete;
/// `None` when nothing is left.
pub fn strip_unfinished(value: &str, marker: &str, config: &EngineConfig, model: &Model) -> Option<String> {
    let kept = |s: &str| (!s.is_empty()).then(|| s.to_string());
    let Some(at) = value.rfind(marker) else { return kept(value) };
    let suffix = model.encode_plain(&value[at..]);
    let unfinished = config.terminals.iter().flat_map(|(_, literals)| literals.iter()).any(|literal| {
        let seq = model.encode_plain(literal);
        seq.len() > suffix.len() && seq.starts_with(&suffix)
    });
    kept(if unfinished { &value[..at] } else { value })
}

/// `_coalesce_finished_tool_events`: consecutive name or argument chunks of
/// one call become one event (names cleaned by `strip_name`); names outside
/// any call and empty results are dropped.
pub fn coalesce_finished(events: Vec<Event>, strip_name: impl Fn(&str) -> String) -> Vec<Event> {
    let mut out: Vec<Event> = Vec::new();
    let mut group: Vec<Event> = Vec::new();
    let flush = |group: &mut Vec<Event>, out: &mut Vec<Event>| {
        let Some(first) = group.first().cloned() else { return };
        let kind = first.kind;
        if !matches!(kind, EventType::ToolName | EventType::ArgValueChunk) {
            out.append(group);
            return;
        }
        let joined: String = group.drain(..).map(|e| e.value).collect();
        if kind == EventType::ToolName && first.tool_index < 0 {
            return;
        }
        let value = if kind == EventType::ToolName { strip_name(&joined) } else { joined };
        if !value.is_empty() {
            out.push(Event { value, ..first });
        }
    };
    for e in events {
        if group.first().is_some_and(|g| (g.kind, g.tool_index) != (e.kind, e.tool_index)) {
            flush(&mut group, &mut out);
        }
        group.push(e);
    }
    flush(&mut group, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: EventType, value: &str, tool_index: i64) -> Event {
        Event { kind, value: value.to_string(), tool_index, token_count: 0 }
    }

    #[test]
    fn finished_chunks_of_one_call_become_one_event() {
        let events = vec![
            ev(EventType::ToolName, "we", 0),
            ev(EventType::ToolName, "ather<|x", 0),
            ev(EventType::ArgValueChunk, "{\"a\"", 0),
            ev(EventType::ArgValueChunk, ": 1}", 0),
            ev(EventType::ToolName, "stray", -1),
            ev(EventType::TextChunk, "t", -1),
        ];
        let got = coalesce_finished(events, |n| n.split("<|").next().unwrap_or("").to_string());
        let got: Vec<(EventType, &str)> = got.iter().map(|e| (e.kind, e.value.as_str())).collect();
        assert_eq!(
            got,
            [(EventType::ToolName, "weather"), (EventType::ArgValueChunk, "{\"a\": 1}"), (EventType::TextChunk, "t")]
        );
    }
}
