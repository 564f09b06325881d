//! Tencent Hunyuan's reasoning (`hy_v3`, `hy_v4`) and tool calls
//! (`hy3_tools`, `hy4_tools`, typed by `values`): DeepSeek-R1's
//! `<think>` reasoning under checkpoint-suffixed markers (`<think:SUFFIX>`),
//! on or off by the request's `reasoning_effort` template kwarg
//! (`no_think` turns it off). HY3 reads the suffix from
//! `tokenizer_config.json` and defaults to off; HY4 finds it in the
//! vocabulary and defaults to on (its template's `high`).

mod hy3_tools;
mod hy4_tools;
mod values;

use std::sync::Arc;

use serde_json::Value;

use crate::model::Model;
use crate::parse::family::{token_ids, Family, ReasoningFamily, ToolFamily, ToolParserFactory};
use crate::parse::think::{Switch, ThinkFamily};
use crate::parse::{ChatContext, Registry, ToolParser};
use crate::structured::{structural_tag_by, StrictLevel, TagRequest};

const NEEDS: &str = "<think{S}>, </think{S}> as single tokens (S: the checkpoint's token suffix)";

/// `<think{suffix}>`, `</think{suffix}>` with their ids.
fn think(model: &Model, suffix: &str, switch: Switch, reason: &str) -> Result<ThinkFamily, String> {
    let markers = [format!("<think{suffix}>"), format!("</think{suffix}>")];
    let ids = token_ids(model, [markers[0].as_str(), markers[1].as_str()], reason)?;
    Ok(ThinkFamily { markers, ids, switch, turn_start: None, stream_follows_vllm: false })
}

/// HY3: `tokenizer_config.json`'s `token_suffix` (none when unset).
fn hy3_suffix(model: &Model) -> &str {
    model.tokenizer_config.get("token_suffix").and_then(Value::as_str).unwrap_or("")
}

/// HY4 (`detect_token_suffix`): the suffix of the first structural token in
/// the vocabulary, `<think:S>`, `<tool_calls:S>`, ... (none when there is
/// none). Checkpoints that declare them in `tokenizer_config.json` are
/// refused, as vLLM does.
fn hy4_suffix(model: &Model) -> Result<String, String> {
    let declared = model.tokenizer_config.pointer("/model_specific_special_tokens/think_begin_token");
    if declared.is_some_and(crate::pycompat::truthy) {
        return Err("This checkpoint declares HYV4 structural tokens (think_begin_token/toolcalls_begin_token/\
                    argkey_begin_token) in tokenizer_config.json, which transformers 5 no longer supports. Remove \
                    those fields and keep the tokens in the tokenizer's own token definitions so the suffix can be \
                    read from the vocab."
            .into());
    }
    Ok((0..model.vocab_len as i64).find_map(|id| model.piece(id).and_then(structural_suffix)).unwrap_or_default())
}

/// `<(?:think|tool_calls|tool_call|arg_key|arg_value)(:[^\s>]+)?>` as a
/// full match: the suffix (with its colon; empty for none).
fn structural_suffix(piece: &str) -> Option<String> {
    let inner = piece.strip_prefix('<')?.strip_suffix('>')?;
    let (name, suffix) = inner.split_once(':').map_or((inner, None), |(n, s)| (n, Some(s)));
    if !matches!(name, "think" | "tool_calls" | "tool_call" | "arg_key" | "arg_value") {
        return None;
    }
    match suffix {
        None => Some(String::new()),
        Some(s) if !s.is_empty() && !s.contains(|c: char| c.is_whitespace() || c == '>') => Some(format!(":{s}")),
        Some(_) => None,
    }
}

static HY3: ReasoningFamily = Family {
    names: &["hy_v3"],
    needs: NEEDS,
    load: |model| {
        let reason = "HYV3ReasoningParser reasoning parser could not locate think start/end tokens in the tokenizer!";
        Ok(Arc::new(think(model, hy3_suffix(model), Switch::Effort { default_on: false }, reason)?))
    },
};

static HY4: ReasoningFamily = Family {
    names: &["hy_v4"],
    needs: NEEDS,
    load: |model| {
        let reason = "HYV4 reasoning extractor could not locate think start/end tokens in the tokenizer!";
        Ok(Arc::new(think(model, &hy4_suffix(model)?, Switch::Effort { default_on: true }, reason)?))
    },
};

struct Hy3Tools(Arc<hy3_tools::Markers>);

impl ToolParserFactory for Hy3Tools {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(hy3_tools::Hy3Tools::new(self.0.clone()))
    }
}

static HY3_TOOLS: ToolFamily = Family {
    names: &["hy_v3"],
    needs: "<tool_calls{S}>, </tool_calls{S}> as single tokens (S: the checkpoint's token suffix)",
    load: |model| Ok(Arc::new(Hy3Tools(Arc::new(hy3_tools::Markers::load(model, hy3_suffix(model))?)))),
};

struct Hy4Tools(Arc<hy4_tools::Markers>);

impl ToolParserFactory for Hy4Tools {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(hy4_tools::Hy4Tools::new(self.0.clone()))
    }

    /// `supports_required_and_named = False`: forced choices are read in
    /// the model's own markup.
    fn native_forced_choices(&self) -> bool {
        true
    }

    /// The `hy_v4` structural tag under the checkpoint's suffix.
    fn structural_tag(&self, level: Option<StrictLevel>, request: TagRequest) -> Option<String> {
        structural_tag_by(&|tools, choice| self.0.tag(tools, choice), StrictLevel::Auto, level, request)
    }
}

static HY4_TOOLS: ToolFamily = Family {
    names: &["hy_v4"],
    needs: "<tool_calls{S}>, </tool_calls{S}> as single tokens (S: the suffix of the vocabulary's structural tokens)",
    load: |model| Ok(Arc::new(Hy4Tools(Arc::new(hy4_tools::Markers::load(model, &hy4_suffix(model)?)?)))),
};

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&HY3);
    registry.reasoning_family(&HY4);
    registry.tool_family(&HY3_TOOLS);
    registry.tool_family(&HY4_TOOLS);
}

#[cfg(test)]
mod tests {
    use super::structural_suffix;

    #[test]
    fn the_suffix_is_read_from_structural_tokens_only() {
        assert_eq!(structural_suffix("<think:6124c78e>").as_deref(), Some(":6124c78e"));
        assert_eq!(structural_suffix("<tool_calls:ab>").as_deref(), Some(":ab"));
        assert_eq!(structural_suffix("<arg_value>").as_deref(), Some(""));
        for other in ["</think:ab>", "<think:>", "<think:a b>", "<thinking:ab>", "think:ab", "<tool_call:ab"] {
            assert_eq!(structural_suffix(other), None, "{other}");
        }
    }
}
