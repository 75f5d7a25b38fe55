"""P4Runtime server of bufferlab-switch: `serve(target, device_id, address)` and the
`Target` protocol the switch engine implements (see `target.py`)."""

from .server import API_VERSION, RunningServer, ServerTls, serve
from .target import Target

__all__ = ["API_VERSION", "RunningServer", "ServerTls", "Target", "serve"]
