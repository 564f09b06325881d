//! Random identifiers in vLLM's formats.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A 64-bit value that differs per call (splitmix64 over time and a counter):
/// ids need to be unique, not secret.
pub fn random_u64() -> u64 {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
    let mut z = nanos ^ COUNTER.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed).rotate_left(17);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `random_uuid()`: 16 lowercase hex digits.
pub fn random_hex_id() -> String {
    format!("{:016x}", random_u64())
}

/// `MistralToolCall.generate_random_id()`: `len` ASCII letters and digits.
pub fn random_alnum_id(len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut bits = random_u64();
    (0..len)
        .map(|i| {
            if i % 10 == 9 {
                bits = random_u64();
            }
            let c = ALPHABET[(bits % ALPHABET.len() as u64) as usize];
            bits /= ALPHABET.len() as u64;
            c as char
        })
        .collect()
}

/// Seconds since the Unix epoch (a response's `created`).
pub fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}
