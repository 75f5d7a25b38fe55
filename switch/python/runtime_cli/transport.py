"""The runtime CLI's wire protocol and the TCP server the switch runs on `--thrift-port`.

Protocol (one TCP connection, any number of requests, strictly in turn):
the client sends one command as one UTF-8 line ending in `\\n`; the server
answers with a header line `ok <n>\\n` or `error <n>\\n`, where `<n>` is the
length in bytes of the answer text that follows (UTF-8, possibly empty, no
trailing newline). The length prefix lets answers span several lines.
"""

from __future__ import annotations

import socket
import socketserver
import threading
from typing import BinaryIO

from bufferlab.switch.runtime_cli.executor import Answer, Executor

#: simple_switch's Thrift port, which bufferlab's switch uses for this server.
DEFAULT_PORT = 9090

#: Longest command line accepted, bytes (a table_add with long keys is far shorter).
MAX_LINE_BYTES = 1 << 16


def write_answer(stream: BinaryIO, answer: Answer) -> None:
    """Sends one answer: header line with status and length, then the text."""
    body = answer.text.encode()
    stream.write(f"{'ok' if answer.ok else 'error'} {len(body)}\n".encode() + body)
    stream.flush()


def read_answer(stream: BinaryIO) -> Answer:
    """Reads one answer; raises ConnectionError if the server closed or spoke nonsense."""
    header = stream.readline(64)
    status, _, size = header.decode(errors="replace").strip().partition(" ")
    if status not in ("ok", "error") or not size.isdigit():
        raise ConnectionError(f"bad answer header {header!r} from the switch")
    body = stream.read(int(size))
    if len(body) != int(size):
        raise ConnectionError("the switch closed the connection in the middle of an answer")
    return Answer(body.decode(errors="replace"), status == "ok")


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        while True:
            line = self.rfile.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            if len(line) > MAX_LINE_BYTES:
                write_answer(self.wfile, Answer(f"Error: command longer than {MAX_LINE_BYTES} bytes", False))
                return
            write_answer(self.wfile, self.server.run_line(line.decode(errors="replace")))


class _Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, address: tuple[str, int], executor: Executor, lock: threading.Lock) -> None:
        super().__init__(address, _Handler)
        self.executor = executor
        self.lock = lock

    def run_line(self, line: str) -> Answer:
        with self.lock:
            try:
                return self.executor.execute(line)
            except Exception as e:
                # A bug in one command must reach the user as an error answer,
                # not kill the connection or leave a traceback in the switch log.
                return Answer(f"Error: internal error while running '{line.strip()}': {type(e).__name__}: {e}", False)


class RuntimeCliServer:
    """Serves the runtime CLI protocol for one executor on a TCP port (127.0.0.1 by default)."""

    def __init__(
        self,
        executor: Executor,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        lock: threading.Lock | None = None,
    ) -> None:
        """Binds at once (port 0 picks a free one); `lock` serialises engine access with the switch."""
        self._server = _Server((host, port), executor, lock or threading.Lock())
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The TCP port actually bound."""
        return self._server.server_address[1]

    def start(self) -> None:
        """Serves in a background thread."""
        self._thread = threading.Thread(target=self._server.serve_forever, name="runtime-cli", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stops serving and releases the port."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()


class RuntimeCliConnection:
    """A client connection: sends command lines, returns answers."""

    def __init__(self, host: str = "127.0.0.1", port: int = DEFAULT_PORT, timeout_s: float | None = None) -> None:
        """Connects; raises OSError if no server listens there."""
        self._sock = socket.create_connection((host, port), timeout=timeout_s)
        self._stream = self._sock.makefile("rwb")

    def run(self, line: str) -> Answer:
        """Sends one command line (no newline inside) and waits for its answer."""
        text = line.replace("\r", " ").replace("\n", " ")
        self._stream.write(text.encode() + b"\n")
        self._stream.flush()
        return read_answer(self._stream)

    def close(self) -> None:
        """Closes the connection."""
        self._stream.close()
        self._sock.close()
