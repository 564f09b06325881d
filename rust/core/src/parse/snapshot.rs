//! A parser's streaming state as a plain value, so a stream can carry it in
//! `stream_state` and continue on any replica without replaying its output
//! (the compact stream state; `crate::stream`).
//!
//! A parser lists the fields that change while it streams; its settings
//! (markers, tools, the model) are rebuilt from the request on every call.
//! Fields are written as a JSON array in the listed order: the layout is
//! versioned by `crate::stream::FORMAT`, so reordering a list means bumping it.

use serde_json::Value;

/// The most tool calls one choice may stream; larger indices in a state
/// are refused before any code can allocate for them.
pub const MAX_CALLS: i64 = 1 << 16;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SnapshotError {
    #[error("the parser state does not match this parser ({0})")]
    Shape(String),
    #[error("the parser state has an out-of-range value: {0}")]
    Range(&'static str),
    #[error("this parser cannot be serialized")]
    Unsupported,
}

impl From<serde_json::Error> for SnapshotError {
    fn from(e: serde_json::Error) -> Self {
        SnapshotError::Shape(e.to_string())
    }
}

/// Save and restore the streaming state of a parser (or a part of one).
pub trait Snapshot {
    fn save_state(&self) -> Result<Value, SnapshotError>;
    /// Restore onto a parser freshly built for the same request.
    fn load_state(&mut self, state: Value) -> Result<(), SnapshotError>;
}

/// The items of a saved field list, checked for the expected count.
pub fn fields(state: Value, expected: usize, what: &str) -> Result<std::vec::IntoIter<Value>, SnapshotError> {
    match state {
        Value::Array(items) if items.len() == expected => Ok(items.into_iter()),
        _ => Err(SnapshotError::Shape(format!("{what}: expected {expected} fields"))),
    }
}

/// A call index (or count) within `-1..=MAX_CALLS`.
pub fn check_index<T: TryInto<i64> + Copy>(value: T, what: &'static str) -> Result<(), SnapshotError> {
    match value.try_into() {
        Ok(v) if (-1..=MAX_CALLS).contains(&v) => Ok(()),
        _ => Err(SnapshotError::Range(what)),
    }
}

/// `impl Snapshot` over a list of fields. Plain fields go through serde;
/// `nested` ones implement `Snapshot` themselves. An optional `check`
/// validates the restored value (indices that drive allocation).
#[macro_export]
macro_rules! impl_snapshot {
    ($ty:ty { $($field:ident),* $(,)? } $(nested { $($nested:ident),* $(,)? })? $(check $check:expr)?) => {
        impl $crate::parse::snapshot::Snapshot for $ty {
            fn save_state(&self) -> Result<serde_json::Value, $crate::parse::snapshot::SnapshotError> {
                Ok(serde_json::Value::Array(vec![
                    $(serde_json::to_value(&self.$field)?,)*
                    $($(self.$nested.save_state()?,)*)?
                ]))
            }

            fn load_state(&mut self, state: serde_json::Value) -> Result<(), $crate::parse::snapshot::SnapshotError> {
                let names: &[&str] = &[$(stringify!($field),)* $($(stringify!($nested),)*)?];
                let mut items = $crate::parse::snapshot::fields(state, names.len(), stringify!($ty))?;
                #[allow(unused_mut, unused_variables)]
                let mut next = || items.next().unwrap_or(serde_json::Value::Null);
                $(self.$field = serde_json::from_value(next())?;)*
                $($(self.$nested.load_state(next())?;)*)?
                $(
                    let check: fn(&Self) -> Result<(), $crate::parse::snapshot::SnapshotError> = $check;
                    check(self)?;
                )?
                Ok(())
            }
        }
    };
}
