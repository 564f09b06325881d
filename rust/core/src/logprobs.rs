//! Integer-id logprobs from the engine → the OpenAI chat and completions
//! shapes (`_resolve_logprobs`, `decode_token_ids`, `_correct_decoded_token`).

use serde::Serialize;

use crate::model::Model;

/// One `GenerateLogProb` candidate (the engine's input, as the derender
/// request carries it).
#[derive(Debug, Clone)]
pub struct Candidate {
    pub token_id: i64,
    pub logprob: f64,
}

/// One generated position: the sampled token and its candidates.
#[derive(Debug, Clone)]
pub struct LogprobEntry {
    pub token_id: i64,
    pub logprob: f64,
    pub top_logprobs: Vec<Candidate>,
}

/// `GenerateLogProbs`: `content` may be null.
#[derive(Debug, Clone)]
pub struct GenLogprobs {
    pub content: Option<Vec<LogprobEntry>>,
}

/// How many preceding sampled ids the U+FFFD repair may read.
pub const CONTEXT_WINDOW: usize = 4;

#[derive(Debug, Clone, Serialize)]
pub struct TokenLogprob {
    pub token: String,
    pub logprob: f64,
    pub bytes: Option<Vec<u8>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PositionLogprobs {
    pub token: String,
    pub logprob: f64,
    pub bytes: Option<Vec<u8>>,
    pub top_logprobs: Vec<TokenLogprob>,
}

/// `ChatCompletionLogProbs`.
#[derive(Debug, Clone, Serialize)]
pub struct ChatLogprobs {
    pub content: Option<Vec<PositionLogprobs>>,
}

/// `CompletionLogProbs`.
#[derive(Debug, Clone, Serialize, Default)]
pub struct CompletionLogprobs {
    pub text_offset: Vec<i64>,
    pub token_logprobs: Vec<f64>,
    pub tokens: Vec<String>,
    pub top_logprobs: Vec<Option<serde_json::Map<String, serde_json::Value>>>,
}

#[derive(Debug, thiserror::Error)]
pub enum LogprobError {
    #[error("token id {0} cannot be decoded")]
    NegativeId(i64),
    /// An id past a tekken vocabulary: tiktoken's `KeyError`, naming the
    /// id's rank (the id minus the special count).
    #[error("'Invalid token for decoding: {0}'")]
    Undecodable(i64),
    /// Python's `json.dumps(allow_nan=False)` refuses NaN and infinities.
    #[error("Out of range float values are not JSON compliant")]
    NonFinite,
}

/// One id as the engine's per-token detokenization shows it, with bytes
/// (`None` when the id has no vocabulary entry).
fn decode_one(model: &Model, id: i64) -> Result<(String, Option<Vec<u8>>), LogprobError> {
    if id < 0 {
        return Err(LogprobError::NegativeId(id));
    }
    if let Some(tekken) = model.tekken().filter(|_| !model.in_vocab(id)) {
        return Err(LogprobError::Undecodable(id - tekken.num_special() as i64));
    }
    let Some(piece) = model.piece(id) else {
        return Ok((String::new(), None));
    };
    let mut text = model.decode(&[id]);
    if let Some(marker) = model.space_marker {
        // SentencePiece decode strips the leading space a piece stands for.
        let markers = piece.chars().take_while(|&c| c == marker).count();
        let existing = text.chars().take_while(|&c| c == ' ').count();
        if markers > existing {
            text = " ".repeat(markers - existing) + &text;
        }
    }
    let bytes = text.as_bytes().to_vec();
    Ok((text, Some(bytes)))
}

/// `_correct_decoded_token`: decode with up to 4 preceding sampled ids so a
/// byte-fallback piece shows the character it completes.
fn correct(model: &Model, id: i64, context: &[i64]) -> String {
    let max_ctx = context.len().min(CONTEXT_WINDOW);
    for n in 1..=max_ctx {
        let ctx = &context[context.len() - n..];
        let mut ids = ctx.to_vec();
        ids.push(id);
        let full = model.decode(&ids);
        if full.ends_with('\u{FFFD}') {
            continue;
        }
        let mut clean_end = ctx.len();
        for j in (0..ctx.len()).rev() {
            if model.decode(&ctx[j..=j]).ends_with('\u{FFFD}') {
                clean_end = j;
            } else {
                break;
            }
        }
        let prefix = if clean_end > 0 { model.decode(&ctx[..clean_end]) } else { String::new() };
        if let Some(rest) = full.strip_prefix(prefix.as_str()) {
            return rest.to_string();
        }
        let common = prefix.chars().zip(full.chars()).take_while(|(a, b)| a == b).count();
        return full.chars().skip(common).collect();
    }
    String::new()
}

fn resolve_token(model: &Model, id: i64, context: &[i64]) -> Result<(String, Option<Vec<u8>>), LogprobError> {
    let (text, bytes) = decode_one(model, id)?;
    if text.ends_with('\u{FFFD}') {
        let fixed = correct(model, id, context);
        let b = fixed.as_bytes().to_vec();
        return Ok((fixed, Some(b)));
    }
    Ok((text, bytes))
}

/// `_resolve_logprobs`: keep the first `top_limit` candidates per position
/// (all when `None`) and decode them with the carried context.
pub fn resolve(
    model: &Model,
    logprobs: &GenLogprobs,
    initial_context: &[i64],
    top_limit: Option<usize>,
) -> Result<ChatLogprobs, LogprobError> {
    let Some(entries) = &logprobs.content else {
        return Ok(ChatLogprobs { content: None });
    };
    let mut context: Vec<i64> = initial_context.to_vec();
    let mut out = Vec::with_capacity(entries.len());
    for entry in entries {
        let kept = top_limit.map_or(entry.top_logprobs.len(), |k| k.min(entry.top_logprobs.len()));
        if !entry.logprob.is_finite() || entry.top_logprobs[..kept].iter().any(|c| !c.logprob.is_finite()) {
            return Err(LogprobError::NonFinite);
        }
        let (token, bytes) = resolve_token(model, entry.token_id, &context)?;
        let mut top = Vec::with_capacity(kept);
        for cand in &entry.top_logprobs[..kept] {
            let (t, b) = resolve_token(model, cand.token_id, &context)?;
            top.push(TokenLogprob { token: t, logprob: cand.logprob, bytes: b });
        }
        out.push(PositionLogprobs { token, logprob: entry.logprob, bytes, top_logprobs: top });
        context.push(entry.token_id);
    }
    Ok(ChatLogprobs { content: Some(out) })
}

/// `_convert_chat_logprobs_to_completion_logprobs`.
pub fn to_completion(resolved: &ChatLogprobs, source: &[LogprobEntry], initial_offset: i64) -> CompletionLogprobs {
    let Some(content) = &resolved.content else {
        return CompletionLogprobs::default();
    };
    let mut out = CompletionLogprobs::default();
    let mut offset = initial_offset;
    for (entry, src) in content.iter().zip(source) {
        out.text_offset.push(offset);
        out.tokens.push(entry.token.clone());
        out.token_logprobs.push(entry.logprob);
        out.top_logprobs.push((!src.top_logprobs.is_empty()).then(|| {
            let mut m = serde_json::Map::new();
            for t in &entry.top_logprobs {
                m.insert(t.token.clone(), float_value(t.logprob));
            }
            m
        }));
        offset += entry.token.chars().count() as i64;
    }
    out
}

fn float_value(x: f64) -> serde_json::Value {
    serde_json::Number::from_f64(x).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

/// `_logprob_context_tail`: the last 4 sampled ids after this chunk.
pub fn context_tail(context: &[i64], delta: &[i64]) -> Vec<i64> {
    let mut all: Vec<i64> = context.iter().chain(delta).copied().collect();
    let cut = all.len().saturating_sub(CONTEXT_WINDOW);
    all.drain(..cut);
    all
}
