//! Structured outputs, as vLLM 0.33 handles them on the render path: the
//! request's own constraints (`structured_outputs`, `response_format`) with
//! the 400s vLLM's request models raise for them, the xgrammar formats they
//! become, and the tool-call structural tags `adjust_request` puts in their
//! place (`--tool-strict-level`). The families' tag builders are written
//! with `format`'s nodes and registered with the parsers.

pub mod checks;
pub mod format;
pub mod request;
pub mod tag_check;
pub mod tool_tags;
pub mod xgrammar;

pub use format::{json_schema, params, tag_text, Choice, TagModel, TagTool};
pub use request::{request_format, request_params};
pub use tool_tags::{structural_tag, structural_tag_by, RequestFormat, StrictLevel, TagRequest, ToolChoice};
