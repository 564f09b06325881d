//! What one call did, for the server's metrics: counts only the core knows
//! (output ids decoded, `stream_state` sizes, time inside the parsers),
//! filled along the way so the HTTP layer never re-reads a body.

use std::io::Write;
use std::time::{Duration, Instant};

/// A derender call's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    Batch,
    Stream,
}

impl CallKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CallKind::Batch => "batch",
            CallKind::Stream => "stream",
        }
    }
}

/// The measurements of one [`crate::Derenderer::handle`] call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Batch or stream, once the body has been read as a derender request.
    pub kind: Option<CallKind>,
    /// Output token ids derendered by a successful derender call (a
    /// stream's replayed history is not counted again).
    pub tokens: usize,
    /// JSON size of the request's `stream_state` (compact encoding).
    pub state_bytes_in: Option<usize>,
    /// JSON size of the answer's `stream_state`.
    pub state_bytes_out: Option<usize>,
    /// Time inside the reasoning / tool parsers (building them and feeding
    /// them text, replayed history included); `None` when none ran.
    pub parser_time: Option<Duration>,
    /// The error envelope's `type` when the call failed.
    pub error: Option<&'static str>,
    /// A panic was caught and answered with a 500.
    pub panicked: bool,
}

impl Stats {
    /// Run `f`, adding its wall time to the parser time.
    pub(crate) fn parsing<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = f();
        *self.parser_time.get_or_insert_default() += start.elapsed();
        out
    }
}

/// The byte length of `value` as compact JSON, without building the text.
pub(crate) fn json_len(value: &serde_json::Value) -> usize {
    struct Count(usize);
    impl Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a `Value` to a sink that never fails cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_len_is_the_compact_encoding_length() {
        let v = serde_json::json!({"format": "derender/5", "data": "ab-_", "x": [1, 2.5, null, "é\n"]});
        assert_eq!(json_len(&v), serde_json::to_vec(&v).unwrap().len());
    }

    #[test]
    fn parsing_accumulates() {
        let mut s = Stats::default();
        assert_eq!(s.parsing(|| 7), 7);
        let first = s.parser_time.expect("timed");
        s.parsing(|| ());
        assert!(s.parser_time.expect("timed") >= first);
    }
}
