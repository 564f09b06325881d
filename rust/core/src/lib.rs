//! derender-core: vLLM 0.33-compatible derendering (detokenization,
//! logprobs, wire formats) as a plain Rust library. The PyO3 module in
//! `rust/python` only wraps [`Derenderer::handle`].

pub mod derender;
pub mod detok;
pub mod error;
pub mod ids;
pub mod logprobs;
pub mod model;
pub mod parse;
pub mod pycompat;
pub mod render;
pub mod service;
pub mod stats;
pub mod stream;
pub mod structured;
pub mod wire;

pub use derender::{Derenderer, Settings};
pub use error::ApiError;
pub use model::Model;
pub use service::{Reply, Route};
pub use stats::{CallKind, Stats};
