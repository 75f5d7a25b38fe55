//! Errors: loading errors name the JSON object and the reason; run-time API
//! errors are typed so a P4Runtime server can map them to gRPC codes.

use std::fmt;

/// A BMv2 JSON that cannot be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError(pub String);

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LoadError {}

/// A refused run-time (control-plane) request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeError {
    /// The named object or entry does not exist (gRPC NOT_FOUND).
    NotFound(String),
    /// The entry already exists (gRPC ALREADY_EXISTS).
    AlreadyExists(String),
    /// Malformed request (gRPC INVALID_ARGUMENT).
    InvalidArgument(String),
    /// Index outside an array (gRPC OUT_OF_RANGE).
    OutOfRange(String),
    /// Table or group full (gRPC RESOURCE_EXHAUSTED).
    ResourceExhausted(String),
    /// Object is const (gRPC PERMISSION_DENIED as BMv2's PI reports it).
    PermissionDenied(String),
    /// State forbids the request, e.g. time moved backwards (gRPC FAILED_PRECONDITION).
    FailedPrecondition(String),
}

impl RuntimeError {
    /// Short kind name, stable for Python exception mapping.
    pub fn kind(&self) -> &'static str {
        match self {
            RuntimeError::NotFound(_) => "not_found",
            RuntimeError::AlreadyExists(_) => "already_exists",
            RuntimeError::InvalidArgument(_) => "invalid_argument",
            RuntimeError::OutOfRange(_) => "out_of_range",
            RuntimeError::ResourceExhausted(_) => "resource_exhausted",
            RuntimeError::PermissionDenied(_) => "permission_denied",
            RuntimeError::FailedPrecondition(_) => "failed_precondition",
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        match self {
            RuntimeError::NotFound(m)
            | RuntimeError::AlreadyExists(m)
            | RuntimeError::InvalidArgument(m)
            | RuntimeError::OutOfRange(m)
            | RuntimeError::ResourceExhausted(m)
            | RuntimeError::PermissionDenied(m)
            | RuntimeError::FailedPrecondition(m) => m,
        }
    }
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind(), self.message())
    }
}

impl std::error::Error for RuntimeError {}
