"""The engine's errors, one per gRPC status a P4Runtime server returns.

They are defined here, in Python, rather than in the native module: the engine's
class is compiled into two native modules (`bufferlab.switch._engine` and the
simulator's `bufferlab.sim._sim`), and both raise these same classes, so one
`except NotFoundError` catches an error from either.
"""


class EngineError(Exception):
    """Base of the engine's errors."""


class LoadError(EngineError):
    """The BMv2 JSON could not be loaded."""


class NotFoundError(EngineError):
    """The object or entry does not exist (NOT_FOUND)."""


class AlreadyExistsError(EngineError):
    """The entry already exists (ALREADY_EXISTS)."""


class InvalidArgumentError(EngineError):
    """Malformed request (INVALID_ARGUMENT)."""


class OutOfRangeError(EngineError):
    """Index outside an array (OUT_OF_RANGE)."""


class ResourceExhaustedError(EngineError):
    """Table or group full (RESOURCE_EXHAUSTED)."""


class PermissionDeniedError(EngineError):
    """Object is const (PERMISSION_DENIED)."""


class FailedPreconditionError(EngineError):
    """State forbids the request (FAILED_PRECONDITION)."""
