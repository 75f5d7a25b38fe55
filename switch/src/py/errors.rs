//! The engine's errors as Python exceptions.

use pyo3::import_exception;
use pyo3::prelude::*;

use crate::error::RuntimeError;

// The exception classes live in Python (`bufferlab.switch.errors`) so that every native
// module that carries the engine's class raises the same ones.
import_exception!(bufferlab.switch.errors, EngineError);
import_exception!(bufferlab.switch.errors, LoadError);
import_exception!(bufferlab.switch.errors, NotFoundError);
import_exception!(bufferlab.switch.errors, AlreadyExistsError);
import_exception!(bufferlab.switch.errors, InvalidArgumentError);
import_exception!(bufferlab.switch.errors, OutOfRangeError);
import_exception!(bufferlab.switch.errors, ResourceExhaustedError);
import_exception!(bufferlab.switch.errors, PermissionDeniedError);
import_exception!(bufferlab.switch.errors, FailedPreconditionError);

/// The engine's error as the matching Python exception.
pub(crate) fn rt(e: RuntimeError) -> PyErr {
    let m = e.message().to_string();
    match e {
        RuntimeError::NotFound(_) => NotFoundError::new_err(m),
        RuntimeError::AlreadyExists(_) => AlreadyExistsError::new_err(m),
        RuntimeError::InvalidArgument(_) => InvalidArgumentError::new_err(m),
        RuntimeError::OutOfRange(_) => OutOfRangeError::new_err(m),
        RuntimeError::ResourceExhausted(_) => ResourceExhaustedError::new_err(m),
        RuntimeError::PermissionDenied(_) => PermissionDeniedError::new_err(m),
        RuntimeError::FailedPrecondition(_) => FailedPreconditionError::new_err(m),
    }
}

/// An invalid argument found while converting Python values.
pub(super) fn invalid(m: impl Into<String>) -> PyErr {
    InvalidArgumentError::new_err(m.into())
}
