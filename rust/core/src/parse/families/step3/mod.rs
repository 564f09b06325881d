//! StepFun Step3. Its reasoning (`step3`, vLLM's `Step3ReasoningParser`): the
//! output starts in reasoning and only `</think>` matters; there is no
//! start marker to strip. `</think>` anywhere in the ids (the prompt
//! included) ends reasoning. Its tool calls are in `tools`.

use std::sync::Arc;

use crate::model::Model;
use crate::parse::family::{token_ids, Family, ReasoningFamily, ReasoningParserFactory, ToolFamily};
use crate::parse::{ChatContext, Ids, ReasoningParser, Registry, Texts};
use crate::wire::response::Delta;

mod tools;

const END: &str = "</think>";

struct Step3Reasoning {
    end_id: i64,
    /// `</think>` was in an earlier chunk.
    ended: bool,
}

crate::impl_snapshot!(Step3Reasoning { ended });

/// `text` split at its first `</think>`: reasoning before, content after
/// (`None` when empty).
fn split_at_end(text: &str) -> Option<(String, Option<String>)> {
    let i = text.find(END)?;
    let content = &text[i + END.len()..];
    Some((text[..i].to_string(), (!content.is_empty()).then(|| content.to_string())))
}

/// vLLM slices at `delta_text.find("</think>")`, which is -1 when the
/// marker's id is in the delta but its text is not (skipped as special):
/// reasoning `delta[:-1]`, content `delta[7:]` (in characters).
fn marker_not_in_text(delta: &str) -> (String, Option<String>) {
    let chars: Vec<char> = delta.chars().collect();
    let reasoning = chars[..chars.len().saturating_sub(1)].iter().collect();
    let content: String = chars.get(END.len() - 1..).unwrap_or_default().iter().collect();
    (reasoning, (!content.is_empty()).then_some(content))
}

impl ReasoningParser for Step3Reasoning {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_reasoning(&self, text: &str, _ctx: &ChatContext) -> (Option<String>, Option<String>) {
        match split_at_end(text) {
            Some((reasoning, content)) => (Some(reasoning), content),
            None => (Some(text.to_string()), None),
        }
    }

    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        ids.contains(&self.end_id)
    }

    fn is_reasoning_end_streaming(&self, _current: &[i64], delta: &[i64]) -> bool {
        delta.contains(&self.end_id)
    }

    fn extract_content_ids(&self, ids: &[i64]) -> Vec<i64> {
        let head = &ids[..ids.len().saturating_sub(1)];
        match head.iter().position(|&id| id == self.end_id) {
            Some(p) => ids[p + 1..].to_vec(),
            None => Vec::new(),
        }
    }

    fn extract_reasoning_streaming(&mut self, t: &Texts, ids: &Ids) -> Option<Delta> {
        let ended_before = self.ended;
        self.ended |= ids.delta.contains(&self.end_id);
        if ids.delta == [self.end_id] {
            return None;
        }
        if ids.delta.contains(&self.end_id) {
            let (reasoning, content) = split_at_end(t.delta).unwrap_or_else(|| marker_not_in_text(t.delta));
            return Some(Delta { reasoning: Some(reasoning), content, ..Default::default() });
        }
        if ended_before {
            return Some(Delta::content(t.delta));
        }
        Some(Delta { reasoning: Some(t.delta.to_string()), ..Default::default() })
    }

    fn reads_history(&self) -> bool {
        false
    }
}

struct Step3 {
    end_id: i64,
}

impl ReasoningParserFactory for Step3 {
    /// vLLM's stream takes reasoning as ended by any `</think>` in the
    /// prompt (an earlier turn's included).
    fn stream_follows_vllm(&self) -> bool {
        true
    }

    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        Box::new(Step3Reasoning { end_id: self.end_id, ended: false })
    }
}

static REASONING: ReasoningFamily = Family {
    names: &["step3"],
    needs: "</think> as a single token",
    load: |model| {
        let [end_id] = token_ids(model, [END], "Step3 reasoning parser could not locate think end token in the tokenizer!")?;
        Ok(Arc::new(Step3 { end_id }))
    },
};

static TOOLS: ToolFamily = Family { names: &["step3"], needs: "", load: |_| Ok(Arc::new(tools::Step3Tools)) };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
}

#[cfg(test)]
mod tests {
    use super::*;

    type Fields = Option<(Option<String>, Option<String>)>;

    fn stream(parser: &mut Step3Reasoning, chunks: &[(&str, &[i64])]) -> Vec<Fields> {
        chunks
            .iter()
            .map(|(text, ids)| {
                let texts = Texts { previous: "", current: "", delta: text };
                let ids = Ids { previous: &[], current: &[], delta: ids };
                parser.extract_reasoning_streaming(&texts, &ids).map(|d| (d.reasoning, d.content))
            })
            .collect()
    }

    fn delta(reasoning: Option<&str>, content: Option<&str>) -> Fields {
        Some((reasoning.map(Into::into), content.map(Into::into)))
    }

    #[test]
    fn everything_before_the_first_end_marker_is_reasoning() {
        let parser = Step3Reasoning { end_id: 9, ended: false };
        let ctx = ChatContext::from_request(&serde_json::Map::new(), &Default::default());
        let split = |text| parser.extract_reasoning(text, &ctx);
        assert_eq!(split("<think>a</think>b</think>c"), (Some("<think>a".into()), Some("b</think>c".into())));
        assert_eq!(split("a</think>"), (Some("a".into()), None));
        assert_eq!(split("no marker"), (Some("no marker".into()), None));
    }

    #[test]
    fn streams_drop_a_lone_end_marker_and_split_a_delta_holding_it() {
        let mut parser = Step3Reasoning { end_id: 9, ended: false };
        let got = stream(&mut parser, &[("think", &[1]), ("</think>", &[9]), ("answer", &[2])]);
        assert_eq!(got, vec![delta(Some("think"), None), None, delta(None, Some("answer"))]);
        let mut parser = Step3Reasoning { end_id: 9, ended: false };
        let got = stream(&mut parser, &[("a</think>b", &[1, 9, 2])]);
        assert_eq!(got, vec![delta(Some("a"), Some("b"))]);
    }

    #[test]
    fn an_end_marker_whose_text_was_skipped_splits_as_pythons_minus_one_slice() {
        // `delta[:-1]` and `delta[-1 + len("</think>"):]`.
        assert_eq!(marker_not_in_text("abcdefghij"), ("abcdefghi".into(), Some("hij".into())));
        assert_eq!(marker_not_in_text("short"), ("shor".into(), None));
    }
}
