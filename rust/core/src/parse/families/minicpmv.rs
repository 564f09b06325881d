//! MiniCPM-V (`vllm/parser/minicpmv.py`, reasoning only: its tool calls
//! are Qwen3-Coder's, for `qwen3_coder`). The Qwen3 grammar with
//! `<|im_end|>` and the reserved markers dropped, thinking on unless
//! `enable_thinking` is false, and vLLM's `MiniCPMVUnifiedParser`: the
//! model writes newlines as the two characters `\n`, which the message's
//! reasoning and content get back as newlines (not inside code or LaTeX,
//! never in tool arguments).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::qwen3::qwen3_grammar;
use crate::model::Model;
use crate::parse::engine::{tr, ByThinking, EngineConfig, EngineReasoning, State as S};
use crate::parse::family::{Family, ReasoningFamily, ReasoningParserFactory};
use crate::parse::{ChatContext, Ids, ReasoningParser, Registry, Snapshot, Texts};
use crate::wire::response::Delta;

/// `_RESERVED_MARKER_IDS`: each as text (`<reserved_N>`) and as a token.
const RESERVED: [(&str, &str, &str, &str); 4] = [
    ("RESERVED_TEXT_12", "<reserved_12>", "RESERVED_TOKEN_12", "<|reserved_12|>"),
    ("RESERVED_TEXT_13", "<reserved_13>", "RESERVED_TOKEN_13", "<|reserved_13|>"),
    ("RESERVED_TEXT_14", "<reserved_14>", "RESERVED_TOKEN_14", "<|reserved_14|>"),
    ("RESERVED_TEXT_15", "<reserved_15>", "RESERVED_TOKEN_15", "<|reserved_15|>"),
];

/// `minicpmv_config`: Qwen3's grammar (without its turn boundaries) plus
/// the markers above as terminals that change nothing.
fn config(thinking: bool) -> &'static EngineConfig {
    static CONFIGS: ByThinking = ByThinking::new();
    CONFIGS.get(thinking, |thinking| {
        let mut c = qwen3_grammar(thinking);
        c.name = if thinking { "minicpmv" } else { "minicpmv_no_thinking" };
        c.turn_boundary_tokens = Vec::new();
        if !thinking {
            // A stray `<think>...</think>` is dropped, not shown.
            c.transitions.retain(|((s, t), _)| !(*s == S::Content && *t == "THINK_START"));
            c.transitions.push(((S::Content, "THINK_START"), tr(S::Reasoning, &[])));
            c.strip_trailing_reasoning_whitespace = false;
        }
        let mut passthrough = vec![("IM_END", "<|im_end|>")];
        c.token_id_terminals.push(("IM_END", "<|im_end|>"));
        for (text_name, text, token_name, token) in RESERVED {
            passthrough.push((text_name, text));
            passthrough.push((token_name, token));
            c.token_id_terminals.push((token_name, token));
        }
        for (name, literal) in passthrough {
            c.terminals.push((name, vec![literal]));
            for state in [S::Content, S::Reasoning] {
                c.transitions.push(((state, name), tr(state, &[])));
            }
        }
        c
    })
}

/// `MiniCPMVParser` as a reasoning parser, with the unified parser's
/// newline recovery.
struct MiniCpmv {
    engine: EngineReasoning,
    thinking: bool,
    reasoning_text: EscapedNewlines,
    content_text: EscapedNewlines,
}

impl ReasoningParser for MiniCpmv {
    fn extract_reasoning(&self, text: &str, ctx: &ChatContext) -> (Option<String>, Option<String>) {
        let (reasoning, content) = self.engine.extract_reasoning(text, ctx);
        (reasoning.filter(|_| self.thinking), content)
    }

    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        self.engine.is_reasoning_end(ids)
    }

    fn extract_content_ids(&self, ids: &[i64]) -> Vec<i64> {
        self.engine.extract_content_ids(ids)
    }

    fn extract_reasoning_streaming(&mut self, texts: &Texts, ids: &Ids) -> Option<Delta> {
        let delta = self.engine.extract_reasoning_streaming(texts, ids);
        if self.thinking {
            return delta;
        }
        let mut delta = delta?;
        delta.reasoning = None;
        (delta.content.is_some() || !delta.tool_calls.is_empty()).then_some(delta)
    }

    fn set_prompt_token_ids(&mut self, prompt: &[i64]) {
        self.engine.set_prompt_token_ids(prompt);
    }

    fn engine_based(&self) -> bool {
        true
    }

    /// There is no reasoning span to end without thinking.
    fn engine_confirmed_end(&self) -> bool {
        !self.thinking || self.engine.engine_confirmed_end()
    }

    fn end_marker_dropped_after_end(&self) -> Option<(i64, &str)> {
        self.engine.end_marker_dropped_after_end()
    }

    fn finish_streaming(&mut self) -> Option<Delta> {
        self.engine.finish_streaming()
    }

    fn filters_content(&self) -> bool {
        !self.thinking
    }

    fn may_hold(&self, tail: &str) -> bool {
        let literals = config(self.thinking).terminals.iter().flat_map(|(_, l)| l.iter());
        literals.into_iter().any(|l| l.len() > tail.len() && l.starts_with(tail))
    }

    fn rewrite_text(&self, text: Option<String>) -> Option<String> {
        // `recover_newlines`
        text.map(|t| if t.contains('\\') { EscapedNewlines::default().feed(&t, true) } else { t })
    }

    /// `MiniCPMVOutputNormalizer.normalize_delta`: reasoning and content
    /// each hold back a half-written escape; reasoning is flushed once
    /// content or a call arrives.
    fn rewrite_delta(&mut self, delta: Option<Delta>, finished: bool) -> Option<Delta> {
        let moved_on = delta.as_ref().is_some_and(|d| d.content.is_some() || !d.tool_calls.is_empty());
        let part = |d: &Option<Delta>, f: fn(&Delta) -> &Option<String>| {
            d.as_ref().and_then(|d| f(d).clone()).unwrap_or_default()
        };
        let reasoning = self.reasoning_text.feed(&part(&delta, |d| &d.reasoning), finished || moved_on);
        let content = self.content_text.feed(&part(&delta, |d| &d.content), finished);
        let non_empty = |s: String| (!s.is_empty()).then_some(s);
        let mut d = delta.unwrap_or_default();
        d.reasoning = non_empty(reasoning);
        d.content = non_empty(content);
        (d.reasoning.is_some() || d.content.is_some() || !d.tool_calls.is_empty()).then_some(d)
    }

    fn snapshot(&mut self) -> Option<&mut dyn Snapshot> {
        Some(self)
    }
}

crate::impl_snapshot!(MiniCpmv { reasoning_text, content_text } nested { engine });

/// `EscapedNewlineNormalizer`: `\n`, `\r` and `\r\n` written as escapes
/// become a newline, except inside code spans and blocks, `$` / `$$` /
/// `\(` / `\[` math, and runs of backslashes. A tail that could still grow
/// into one of those waits for the next chunk.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct EscapedNewlines {
    /// The marker that closes the span being copied verbatim.
    closing: Option<String>,
    pending: String,
}

impl EscapedNewlines {
    fn feed(&mut self, text: &str, last: bool) -> String {
        let text = std::mem::take(&mut self.pending) + text;
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        while let Some(ch) = text[i..].chars().next() {
            let rest = &text[i..];
            if let Some(marker) = self.closing.take() {
                if rest.starts_with(&marker) {
                    out.push_str(&marker);
                    i += marker.len();
                    continue;
                }
                let holds = !last && marker.starts_with(rest);
                self.closing = Some(marker);
                if holds {
                    self.pending = rest.to_string();
                    break;
                }
                out.push(ch);
                i += ch.len_utf8();
                continue;
            }
            let opening = match ch {
                '`' if !last && (rest == "`" || rest == "``") => None,
                '`' if rest.starts_with("```") => Some("```"),
                '`' => Some("`"),
                '$' if !last && rest == "$" => None,
                '$' if rest.starts_with("$$") => Some("$$"),
                '$' => Some("$"),
                _ => Some(""),
            };
            match opening {
                None => {
                    self.pending = rest.to_string();
                    break;
                }
                Some(marker) if !marker.is_empty() => {
                    out.push_str(marker);
                    i += marker.len();
                    self.closing = Some(marker.to_string());
                    continue;
                }
                Some(_) => {}
            }
            if ch != '\\' {
                out.push(ch);
                i += ch.len_utf8();
                continue;
            }
            let run = rest.len() - rest.trim_start_matches('\\').len();
            if run > 1 {
                // The run's parity decides what a following `n` means.
                if !last && run == rest.len() {
                    self.pending = rest.to_string();
                    break;
                }
                out.push_str(&rest[..run]);
                i += run;
                continue;
            }
            if !last && matches!(rest, "\\" | "\\r" | "\\r\\") {
                self.pending = rest.to_string();
                break;
            }
            let (written, used, closing) = if rest.starts_with("\\r\\n") {
                ("\n", 4, None)
            } else if rest.starts_with("\\n") || rest.starts_with("\\r") {
                ("\n", 2, None)
            } else if rest.starts_with("\\(") {
                ("\\(", 2, Some("\\)"))
            } else if rest.starts_with("\\[") {
                ("\\[", 2, Some("\\]"))
            } else {
                ("\\", 1, None)
            };
            out.push_str(written);
            i += used;
            self.closing = closing.map(str::to_string);
        }
        if last {
            out.push_str(&std::mem::take(&mut self.pending));
        }
        out
    }
}

struct Factory;

impl ReasoningParserFactory for Factory {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        let thinking = ctx.enable_thinking();
        Box::new(MiniCpmv {
            engine: EngineReasoning::new(config(thinking), model.clone()),
            thinking,
            reasoning_text: EscapedNewlines::default(),
            content_text: EscapedNewlines::default(),
        })
    }

    fn keep_special_tokens(&self) -> bool {
        true
    }

    /// Its stream reads reasoning as batch does where vLLM's reads the
    /// prompt: text after calls is dropped as batch drops it.
    fn tool_text_after_calls(&self) -> Option<bool> {
        Some(false)
    }
}

static REASONING: ReasoningFamily = Family { names: &["minicpmv"], needs: "", load: |_| Ok(Arc::new(Factory)) };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
}

#[cfg(test)]
mod tests {
    use super::EscapedNewlines;

    fn whole(text: &str) -> String {
        EscapedNewlines::default().feed(text, true)
    }

    #[test]
    fn escapes_become_newlines_outside_code_and_math() {
        assert_eq!(whole("a\\nb\\r\\nc\\rd"), "a\nb\nc\nd");
        assert_eq!(whole("`x\\ny` and ```\\n``` then \\n"), "`x\\ny` and ```\\n``` then \n");
        assert_eq!(whole("$a\\nb$ $$\\n$$ \\(x\\ny\\) \\[\\n\\] z\\n"), "$a\\nb$ $$\\n$$ \\(x\\ny\\) \\[\\n\\] z\n");
        // A run of backslashes is kept as written, `n` and all.
        assert_eq!(whole("a\\\\nb \\t"), "a\\\\nb \\t");
    }

    #[test]
    fn every_chunking_gives_the_whole_answer() {
        let text = "one\\ntwo `c\\n` $$m\\n$$ \\\\n three\\r\\nfour\\( x \\) five\\";
        let expected = whole(text);
        let chars: Vec<char> = text.chars().collect();
        for size in 1..6 {
            let mut n = EscapedNewlines::default();
            let mut out = String::new();
            let pieces: Vec<String> = chars.chunks(size).map(|c| c.iter().collect()).collect();
            for (i, piece) in pieces.iter().enumerate() {
                out += &n.feed(piece, i + 1 == pieces.len());
            }
            assert_eq!(out, expected, "chunks of {size}");
        }
    }

    #[test]
    fn a_half_escape_waits_for_the_next_chunk() {
        let mut n = EscapedNewlines::default();
        assert_eq!(n.feed("a\\", false), "a");
        assert_eq!(n.feed("nb", false), "\nb");
        assert_eq!(n.feed("`", false), "");
        assert_eq!(n.feed("", true), "`");
    }
}
