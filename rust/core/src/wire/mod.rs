//! Wire formats: request parsing/validation and response shapes.
pub mod request;
pub mod response;
