//! `stream_state` formats. A client echoes the state of each answer back
//! with the next chunk; what it carries decides the cost of a call:
//!
//! - vLLM's formats: the plain path's decode window (small), and the parser
//!   path's history (every output id so far, replayed on every call).
//! - Ours ("compact", the default on the parser path): the decode window,
//!   the parser's snapshot and the role / tool-id bookkeeping, sealed in a
//!   versioned envelope. A call costs what its chunk costs.
//!
//! With `--stream-state-secret` every state we issue is signed (HMAC-SHA256)
//! and only signed states are accepted, so any replica sharing the secret can
//! continue any stream and nobody else can feed one. Extra accepted secrets
//! (`--stream-state-accepted-secrets`) let the secret be rotated without
//! breaking streams in flight.

mod envelope;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::detok::Window;

pub use envelope::{Envelope, FORMAT};

/// `DerenderStreamState`, vLLM's client-carried state (fields in wire order).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct StreamState {
    pub prev_tokens: Vec<String>,
    pub prefix_offset: i64,
    pub read_offset: i64,
    pub role_sent: bool,
    pub logprob_context_token_ids: Vec<i64>,
    pub logprob_text_offset: i64,
    pub output_token_ids: Vec<i64>,
    pub output_chunk_lens: Vec<i64>,
    pub tools_streamed: bool,
    pub last_tool_call_ids: Vec<String>,
    /// derender extension: a stop token that arrived without a finish
    /// reason, held back until the next chunk says whether it ended the
    /// output (vLLM has no such field and ignores it).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub held_token_ids: Vec<i64>,
}

/// `--stream-state-mode`: what the parser path hands back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StateMode {
    /// Our compact state: O(chunk) work per call.
    #[default]
    Compact,
    /// vLLM's history format, for clients that need it.
    Replay,
}

impl std::str::FromStr for StateMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "compact" => Ok(StateMode::Compact),
            "replay" => Ok(StateMode::Replay),
            _ => Err(format!("--stream-state-mode must be 'compact' or 'replay', not {s:?}")),
        }
    }
}

/// A state as it arrived, before it is checked.
#[derive(Debug, Clone)]
pub enum Incoming {
    /// vLLM's `DerenderStreamState` (validated field by field).
    Vllm(StreamState),
    /// Our envelope, not yet verified.
    Sealed(Envelope),
}

/// What a state says, once opened.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Payload {
    /// The plain path's window (sealed only when signing).
    Plain { state: StreamState },
    /// A parser stream in compact form.
    Parser(ParserState),
    /// A parser stream whose parser cannot be serialized (a plugin), or a
    /// signed state in replay mode: vLLM's history, plus the window the
    /// prompt seeded so later calls need not resend the prompt.
    History { state: StreamState, seed: Window, prompt_len: usize },
}

/// The compact state of one streamed choice on the parser path.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ParserState {
    pub window: Window,
    pub role_sent: bool,
    pub logprob_context_token_ids: Vec<i64>,
    /// A stop token held back until the next chunk says whether it ended the output.
    pub held_token_ids: Vec<i64>,
    /// Lengths that bound the stream by `max_model_len` without the ids.
    pub prompt_len: usize,
    pub output_len: usize,
    pub last_tool_call_ids: Vec<String>,
    /// `ChatStreamProcessor::save_state`.
    pub processor: Value,
}

/// A checked state.
#[derive(Debug, Clone)]
pub enum Opened {
    Vllm(StreamState),
    Ours(Payload),
}

impl Opened {
    /// Output ids the stream has produced so far (for `max_model_len`).
    pub fn output_len(&self) -> usize {
        match self {
            Opened::Vllm(state) | Opened::Ours(Payload::Plain { state } | Payload::History { state, .. }) => {
                state.output_token_ids.len()
            }
            Opened::Ours(Payload::Parser(p)) => p.output_len,
        }
    }

    /// The prompt length a state remembers: streams started on our format
    /// need the prompt only on their first call.
    pub fn prompt_len(&self) -> Option<usize> {
        match self {
            Opened::Ours(Payload::Parser(p)) => Some(p.prompt_len),
            Opened::Ours(Payload::History { prompt_len, .. }) => Some(*prompt_len),
            _ => None,
        }
    }
}

/// The state an answer hands back: vLLM's shape, or our envelope.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Outgoing {
    Vllm(StreamState),
    Sealed(Envelope),
}

/// `--stream-state-mode`, `--stream-state-secret` and
/// `--stream-state-accepted-secrets`.
#[derive(Clone, Default)]
pub struct StateCodec {
    pub mode: StateMode,
    /// The signing secret first, then the ones only accepted; empty: unsigned.
    secrets: Vec<Vec<u8>>,
}

impl std::fmt::Debug for StateCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print a secret.
        f.debug_struct("StateCodec").field("mode", &self.mode).field("secrets", &self.secrets.len()).finish()
    }
}

/// Why a state was refused (always a 400 naming `stream_state`).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum StateError {
    #[error("invalid stream_state: this server signs its stream states (--stream-state-secret) and this one carries no valid signature; continue streams only on servers that share the secret")]
    Unsigned,
    #[error(
        "invalid stream_state: the signature does not match (the state was altered, or signed with another secret)"
    )]
    BadSignature,
    #[error("invalid stream_state: it was issued in format {0:?} by another derender version; this server reads {FORMAT:?} (restart the stream)")]
    Version(String),
    #[error("invalid stream_state: {0}")]
    Malformed(String),
}

impl StateCodec {
    pub fn new(mode: StateMode, secret: Option<&[u8]>) -> StateCodec {
        StateCodec { mode, secrets: secret.filter(|s| !s.is_empty()).map(<[u8]>::to_vec).into_iter().collect() }
    }

    /// Also accept states signed with `accepted` (signing stays with the
    /// first secret). Ignored by an unsigned codec: it verifies nothing.
    pub fn accepting<'a>(mut self, accepted: impl IntoIterator<Item = &'a [u8]>) -> StateCodec {
        if self.signs() {
            self.secrets.extend(accepted.into_iter().filter(|s| !s.is_empty()).map(<[u8]>::to_vec));
        }
        self
    }

    pub fn signs(&self) -> bool {
        !self.secrets.is_empty()
    }

    fn signing_secret(&self) -> Option<&[u8]> {
        self.secrets.first().map(Vec::as_slice)
    }

    /// Check a client's state. vLLM's format is accepted only without a secret.
    pub fn open(&self, incoming: &Incoming) -> Result<Opened, StateError> {
        match incoming {
            Incoming::Vllm(_) if self.signs() => Err(StateError::Unsigned),
            Incoming::Vllm(state) => Ok(Opened::Vllm(state.clone())),
            Incoming::Sealed(envelope) => {
                let secrets: Vec<&[u8]> = self.secrets.iter().map(Vec::as_slice).collect();
                envelope.open(&secrets).map(Opened::Ours)
            }
        }
    }

    /// The state to hand back for `payload`; vLLM's own shape where it is
    /// already what vLLM would answer and nothing has to be signed.
    pub fn seal(&self, payload: Payload) -> Outgoing {
        match payload {
            Payload::Plain { state } if !self.signs() => Outgoing::Vllm(state),
            Payload::History { state, .. } if !self.signs() && self.mode == StateMode::Replay => Outgoing::Vllm(state),
            payload => Outgoing::Sealed(Envelope::seal(&payload, self.signing_secret())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed(codec: &StateCodec) -> Incoming {
        let state = StreamState { read_offset: 1, ..Default::default() };
        match codec.seal(Payload::Plain { state }) {
            Outgoing::Sealed(envelope) => Incoming::Sealed(envelope),
            Outgoing::Vllm(_) => panic!("a signing codec seals"),
        }
    }

    fn codec(secret: &str, accepted: &[&str]) -> StateCodec {
        StateCodec::new(StateMode::Compact, Some(secret.as_bytes())).accepting(accepted.iter().map(|s| s.as_bytes()))
    }

    #[test]
    fn a_rotation_keeps_every_stream_open() {
        // Phase 1: every replica accepts "new"; phase 2: signs with it; phase 3: drops "old".
        let (before, phase1, phase2, after) =
            (codec("old", &[]), codec("old", &["new"]), codec("new", &["old"]), codec("new", &[]));
        // Replicas of adjacent phases run side by side during each rollout.
        for (a, b) in [(&before, &phase1), (&phase1, &phase2), (&phase2, &after)] {
            assert!(a.open(&sealed(b)).is_ok() && b.open(&sealed(a)).is_ok());
        }
        // Skipping phase 1 breaks streams that move from a new replica to an old one.
        assert_eq!(before.open(&sealed(&phase2)).err(), Some(StateError::BadSignature));
        assert_eq!(after.open(&sealed(&before)).err(), Some(StateError::BadSignature));
    }

    #[test]
    fn accepted_secrets_do_not_sign_and_need_a_secret() {
        let unsigned = StateCodec::new(StateMode::Compact, None).accepting([b"x".as_slice()]);
        assert!(!unsigned.signs());
        let Incoming::Sealed(envelope) = sealed(&codec("new", &["old"])) else { unreachable!() };
        assert!(envelope.open(&[b"new"]).is_ok());
        assert!(envelope.open(&[b"old"]).is_err());
    }
}
