//! derender-core: vLLM 0.33's render / derender API as a plain Rust
//! library: chat templates, tokenization and sampling parameters (render);
//! incremental detokenization, logprobs, reasoning and tool-call parsing,
//! batch and streaming with a compact stream state (derender); and the
//! request validation that gives vLLM's 400s. [`Derenderer::handle`] takes
//! a route and body bytes and answers status and body bytes.
//!
//! Module layers, each using only those listed before it (a test checks
//! there is no cycle): `error`, `ids`, `pycompat`, `hub`, `tekken`, `model`, `detok`,
//! `logprobs`, `stream`, `structured`, `wire`, `stats`, `parse`,
//! `template`, `served`; then `render` and `derender`, siblings over
//! `served::Core`; `decisions` (two routes answered by validation alone);
//! `service` dispatches between them. The PyO3 module in
//! `rust/python` wraps the service, the parser registry (`derender
//! parsers`) and plugin parsers written in Python.

pub mod decisions;
pub mod derender;
pub mod detok;
pub mod error;
pub mod hub;
pub mod ids;
pub mod logprobs;
pub mod model;
pub mod parse;
pub mod pycompat;
pub mod render;
pub mod served;
pub mod service;
pub mod stats;
pub mod stream;
pub mod structured;
pub mod tekken;
pub mod template;
pub mod wire;

pub use error::ApiError;
pub use model::Model;
pub use served::{Core, Settings};
pub use service::{Derenderer, Reply, Route};
pub use stats::{CallKind, Stats};
