//! Python exceptions for [`stategraph_checkpoint::Error`].

use pyo3::exceptions::{PyException, PyNotImplementedError, PyValueError};
use pyo3::PyErr;
use stategraph_checkpoint::Error;

pyo3::create_exception!(
    stategraph,
    StategraphError,
    PyException,
    "An error of a stategraph saver (decode, storage, backend); the message is the Rust error's."
);

pyo3::create_exception!(
    stategraph,
    ConflictError,
    StategraphError,
    "The one-writer fence refused a write: another run moved the thread on. Nothing of the refused call was stored."
);

/// The Python exception for a saver error, with the same message.
pub fn to_py_err(error: Error) -> PyErr {
    let message = error.to_string();
    match error {
        Error::Conflict(_) => ConflictError::new_err(message),
        Error::InvalidConfig(_) => PyValueError::new_err(message),
        Error::Unsupported(_) => PyNotImplementedError::new_err(message),
        _ => StategraphError::new_err(message),
    }
}
