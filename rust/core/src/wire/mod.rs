//! Wire formats: request parsing/validation and response shapes.
pub mod chat_fields;
pub mod lazy_body;
pub(crate) mod message_union;
pub mod request;
pub mod response;
