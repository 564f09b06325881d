//! Our state on the wire: `{"format": "derender/5", "data": <base64url of
//! the JSON payload>, "mac": <base64url HMAC-SHA256>}`. The payload is opaque
//! to clients; `mac` is present only when the server signs. A server signs
//! with one secret and may accept several (while a secret is being rotated).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use super::{Payload, StateError};

/// The layout version of every state we issue. Bump it whenever a payload
/// or a parser snapshot changes shape: older states are then refused with a
/// clear error instead of being misread.
pub const FORMAT: &str = "derender/8";

/// The most bytes a decoded payload may have (a guard against giant states).
const MAX_PAYLOAD_BYTES: usize = 64 << 20;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Envelope {
    pub format: String,
    pub data: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
}

fn mac_of(secret: &[u8], format: &str, data: &str) -> Hmac<Sha256> {
    // HMAC accepts keys of any length; `new_from_slice` cannot fail for it.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret).unwrap_or_else(|_| unreachable!());
    mac.update(format.as_bytes());
    mac.update(b".");
    mac.update(data.as_bytes());
    mac
}

impl Envelope {
    pub fn seal(payload: &Payload, secret: Option<&[u8]>) -> Envelope {
        // A payload is plain data (strings, numbers, lists): encoding cannot fail.
        let json = serde_json::to_vec(payload).unwrap_or_default();
        let data = URL_SAFE_NO_PAD.encode(json);
        let mac = secret.map(|s| URL_SAFE_NO_PAD.encode(mac_of(s, FORMAT, &data).finalize().into_bytes()));
        Envelope { format: FORMAT.to_string(), data, mac }
    }

    /// Verify against any of `secrets` (none: not checked) and decode.
    pub fn open(&self, secrets: &[&[u8]]) -> Result<Payload, StateError> {
        let signed = !secrets.is_empty();
        if self.format != FORMAT {
            // Only a signed state may say anything about where it came from.
            return Err(if signed && self.mac.is_none() {
                StateError::Unsigned
            } else {
                StateError::Version(self.format.clone())
            });
        }
        if signed {
            let given = self.mac.as_deref().ok_or(StateError::Unsigned)?;
            let given = URL_SAFE_NO_PAD.decode(given).map_err(|_| StateError::BadSignature)?;
            // Each comparison is constant-time; which secret matched is no secret.
            if !secrets.iter().any(|s| mac_of(s, &self.format, &self.data).verify_slice(&given).is_ok()) {
                return Err(StateError::BadSignature);
            }
        }
        if self.data.len() / 4 * 3 > MAX_PAYLOAD_BYTES {
            return Err(StateError::Malformed("data is too large".into()));
        }
        let json =
            URL_SAFE_NO_PAD.decode(&self.data).map_err(|_| StateError::Malformed("data is not base64url".into()))?;
        serde_json::from_slice(&json).map_err(|e| StateError::Malformed(format!("data does not decode ({e})")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::StreamState;

    fn payload() -> Payload {
        Payload::Plain { state: StreamState { prev_tokens: vec!["a".into()], read_offset: 1, ..Default::default() } }
    }

    #[test]
    fn round_trips_unsigned_and_signed() {
        let e = Envelope::seal(&payload(), None);
        assert!(e.mac.is_none());
        assert!(matches!(e.open(&[]), Ok(Payload::Plain { state }) if state.read_offset == 1));
        let e = Envelope::seal(&payload(), Some(b"k1"));
        assert!(e.open(&[b"k1"]).is_ok());
        // Without a secret the signature is not checked.
        assert!(e.open(&[]).is_ok());
    }

    #[test]
    fn any_accepted_secret_verifies() {
        let e = Envelope::seal(&payload(), Some(b"old"));
        assert!(e.open(&[b"new", b"old"]).is_ok());
        assert!(e.open(&[b"old", b"new"]).is_ok());
        assert!(matches!(e.open(&[b"new", b"other"]), Err(StateError::BadSignature)));
    }

    #[test]
    fn refuses_tampered_foreign_and_unsigned_states() {
        let signed = Envelope::seal(&payload(), Some(b"k1"));
        assert!(matches!(signed.open(&[b"k2"]), Err(StateError::BadSignature)));
        let mut tampered = signed.clone();
        tampered.data =
            Envelope::seal(&Payload::Plain { state: StreamState { read_offset: 0, ..Default::default() } }, None).data;
        assert!(matches!(tampered.open(&[b"k1"]), Err(StateError::BadSignature)));
        let unsigned = Envelope::seal(&payload(), None);
        assert!(matches!(unsigned.open(&[b"k1"]), Err(StateError::Unsigned)));
        let mut other = Envelope::seal(&payload(), None);
        other.format = "derender/0".into();
        assert!(matches!(other.open(&[]), Err(StateError::Version(v)) if v == "derender/0"));
        let mut garbage = Envelope::seal(&payload(), None);
        garbage.data = "!!".into();
        assert!(matches!(garbage.open(&[]), Err(StateError::Malformed(_))));
    }
}
