//! NVIDIA Nemotron 3 (`nemotron_v3`, `vllm/parser/nemotron_v3.py`) and IBM
//! Granite 4.2 (`granite_thinking_parser`, `vllm/parser/granite_thinking.py`,
//! built on it): Qwen3's `<think>` reasoning on the engine, trailing
//! reasoning whitespace stripped. When the request turns thinking off or
//! asks for `force_nonempty_content`, an answer without content gets its
//! reasoning as content (batch swaps them; a stream whose reasoning never
//! ends gets what it streamed as reasoning once more, as content, at the
//! end). Granite also drops the newlines its template writes after
//! `</think>` from the front of the content, and reports the end of
//! reasoning only once content has started.

use std::sync::Arc;

use serde_json::Value;

use super::qwen3::qwen3_grammar;
use crate::model::Model;
use crate::parse::engine::{ByThinking, EngineConfig, EngineReasoning};
use crate::parse::family::{Family, ReasoningFamily, ReasoningParserFactory};
use crate::parse::{ChatContext, Ids, ReasoningParser, Registry, Snapshot, Texts};
use crate::wire::response::Delta;

fn config(thinking: bool) -> &'static EngineConfig {
    static CONFIGS: ByThinking = ByThinking::new();
    CONFIGS.get(thinking, |thinking| EngineConfig {
        name: "nemotron_v3",
        strip_trailing_reasoning_whitespace: true,
        ..qwen3_grammar(thinking)
    })
}

/// `_should_force_content`: the request's own kwargs (not the server's
/// defaults) set `enable_thinking` to `false` or `force_nonempty_content`
/// to `true`.
fn forces_content(ctx: &ChatContext) -> bool {
    let kwargs = &ctx.request_kwargs;
    kwargs.get("enable_thinking") == Some(&Value::Bool(false))
        || kwargs.get("force_nonempty_content") == Some(&Value::Bool(true))
}

struct Nemotron {
    inner: EngineReasoning,
    granite: bool,
    force: bool,
    /// The reasoning streamed so far, before trailing whitespace is held
    /// back (kept only when the request forces content).
    streamed: String,
    /// Granite: content other than newlines went out.
    content_started: bool,
}

crate::impl_snapshot!(Nemotron { streamed, content_started } nested { inner });

impl Nemotron {
    /// The family's `_events_to_delta` over the engine's.
    fn on_delta(&mut self, delta: Option<Delta>) -> Option<Delta> {
        let mut delta = delta?;
        if self.force {
            self.streamed.push_str(delta.reasoning.as_deref().unwrap_or(""));
        }
        if self.granite && !self.content_started {
            if let Some(content) = delta.content.take() {
                let stripped = content.trim_start_matches('\n');
                if stripped.is_empty() {
                    if delta.reasoning.is_none() && delta.tool_calls.is_empty() {
                        return None;
                    }
                } else {
                    self.content_started = true;
                    delta.content = Some(stripped.to_string());
                }
            }
        }
        Some(delta)
    }
}

impl ReasoningParser for Nemotron {
    fn snapshot(&mut self) -> Option<&mut dyn Snapshot> {
        Some(self)
    }

    fn extract_reasoning(&self, text: &str, ctx: &ChatContext) -> (Option<String>, Option<String>) {
        let (reasoning, content) = self.inner.extract_reasoning(text, ctx);
        let force = forces_content(ctx);
        if self.granite {
            // Only an absent content swaps, not one that was all newlines.
            let absent = content.is_none();
            let content = content.map(|c| c.trim_start_matches('\n').to_string()).filter(|c| !c.is_empty());
            return if force && absent { (content, reasoning) } else { (reasoning, content) };
        }
        if force && content.as_deref().is_none_or(|c| c.trim().is_empty()) {
            return (content, reasoning);
        }
        (reasoning, content)
    }

    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        self.inner.is_reasoning_end(ids)
    }

    fn is_reasoning_end_streaming(&self, current: &[i64], delta: &[i64]) -> bool {
        self.inner.is_reasoning_end_streaming(current, delta)
    }

    fn extract_content_ids(&self, ids: &[i64]) -> Vec<i64> {
        self.inner.extract_content_ids(ids)
    }

    fn extract_reasoning_streaming(&mut self, t: &Texts, ids: &Ids) -> Option<Delta> {
        let delta = self.inner.raw_delta(t, ids);
        let delta = self.on_delta(delta);
        self.inner.strip_trailing_reasoning(delta)
    }

    fn adjust_initial_state_from_prompt(&mut self, prompt: &[i64]) {
        self.inner.adjust_initial_state_from_prompt(prompt);
    }

    fn set_prompt_token_ids(&mut self, prompt: &[i64]) {
        self.inner.set_prompt_token_ids(prompt);
    }

    fn engine_based(&self) -> bool {
        self.inner.engine_based()
    }

    /// Granite reports the end once content has started, so the newlines
    /// after `</think>` still pass through its strip.
    fn engine_confirmed_end(&self) -> bool {
        self.inner.engine_confirmed_end() && (!self.granite || self.content_started)
    }

    fn end_marker_dropped_after_end(&self) -> Option<(i64, &str)> {
        self.inner.end_marker_dropped_after_end()
    }

    fn passthrough(&self) -> bool {
        self.inner.passthrough()
    }

    fn finish_streaming(&mut self) -> Option<Delta> {
        let delta = self.inner.finish_streaming();
        self.on_delta(delta)
    }

    fn streaming_fallback_content(&self, _previous_text: &str, _ctx: &ChatContext) -> Option<String> {
        (self.force && !self.streamed.is_empty()).then(|| self.streamed.clone())
    }

    fn reads_history(&self) -> bool {
        self.inner.reads_history()
    }
}

struct Factory {
    granite: bool,
}

impl ReasoningParserFactory for Factory {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        let mut inner = EngineReasoning::switched(config, ctx.enable_thinking(), model);
        // Granite's stream is vLLM's (see `stream_follows_vllm`), with
        // vLLM's cut of the content after the last `</think>`.
        inner.content_ids_after_last_end = self.granite;
        let force = forces_content(ctx);
        Box::new(Nemotron { inner, granite: self.granite, force, streamed: String::new(), content_started: false })
    }

    fn keep_special_tokens(&self) -> bool {
        true
    }

    /// Granite's template has no ChatML turn markers, so vLLM's stream reads
    /// `is_reasoning_end` back through the whole prompt, where the tools'
    /// instructions hold `<tool_call>`: its stream then starts in content
    /// where batch answers reasoning, and keeps the text after calls.
    fn stream_follows_vllm(&self) -> bool {
        self.granite
    }
}

static NEMOTRON_V3: ReasoningFamily =
    Family { names: &["nemotron_v3"], needs: "", load: |_| Ok(Arc::new(Factory { granite: false })) };

static GRANITE_THINKING: ReasoningFamily =
    Family { names: &["granite_thinking_parser"], needs: "", load: |_| Ok(Arc::new(Factory { granite: true })) };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&NEMOTRON_V3);
    registry.reasoning_family(&GRANITE_THINKING);
}
