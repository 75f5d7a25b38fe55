"""The bufferlab switch: the Rust engine (`_engine`) and the Python around it."""

from bufferlab.switch.engine import (
    AlreadyExistsError,
    Engine,
    EngineError,
    FailedPreconditionError,
    InvalidArgumentError,
    LoadError,
    NotFoundError,
    OutOfRangeError,
    PermissionDeniedError,
    ResourceExhaustedError,
)

__all__ = [
    "AlreadyExistsError",
    "Engine",
    "EngineError",
    "FailedPreconditionError",
    "InvalidArgumentError",
    "LoadError",
    "NotFoundError",
    "OutOfRangeError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
]
