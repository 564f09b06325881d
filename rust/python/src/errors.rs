//! Errors raised to Python as `derender.errors` types: the same envelope a
//! server would answer, as an exception carrying its status and fields.

use derender_core::ApiError;
use pyo3::prelude::*;

/// `derender.errors.from_envelope(status, body)`: the typed exception.
pub fn from_envelope(py: Python<'_>, status: u16, body: &[u8]) -> PyErr {
    let made = py
        .import("derender.errors")
        .and_then(|m| m.getattr("from_envelope"))
        .and_then(|f| f.call1((status, pyo3::types::PyBytes::new(py, body))));
    match made {
        Ok(exception) => PyErr::from_value(exception),
        Err(e) => e,
    }
}

pub fn api_error(py: Python<'_>, e: &ApiError) -> PyErr {
    from_envelope(py, e.status, &e.to_json())
}
