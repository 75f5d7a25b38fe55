"""A background thread that reads frames from a host interface with kernel RX timestamps."""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Callable

from bufferlab.traffic.probe import (
    ETH_P_ALL,
    RECEIVE_BUFFER_BYTES,
    SCM_TIMESTAMPNS,
    open_packet_socket,
    socket_drops,
    timespec_ns,
)

_POLL_S = 0.05  # how often the thread checks for stop()


class FrameListener:
    """Calls ``handler(frame, rx_ns)`` for each frame received on ``dev`` until stopped.

    Frames the host itself sends are skipped: agents react to what arrives. Binding
    to one ``ethertype`` keeps data traffic from crowding control frames out of the
    socket's buffer.
    """

    def __init__(
        self,
        dev: str,
        handler: Callable[[bytes, int], None],
        netns: str | None = None,
        ethertype: int = ETH_P_ALL,
    ) -> None:
        """Open the socket now (frames arriving from here on are seen)."""
        self._sock = open_packet_socket(dev, netns, rx_timestamps=True, ethertype=ethertype,
                                        rcvbuf_bytes=RECEIVE_BUFFER_BYTES)
        self.kernel_drops = 0
        self._handler = handler
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"listener-{dev}", daemon=True)
        self.error: BaseException | None = None

    def start(self) -> FrameListener:
        """Start the reading thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread, count kernel drops, close; re-raise an error the handler raised."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self.kernel_drops += socket_drops(self._sock)
        self._sock.close()
        if self.error is not None:
            raise self.error

    def __enter__(self) -> FrameListener:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                ready, _, _ = select.select([self._sock], [], [], _POLL_S)
                if not ready:
                    continue
                frame, ancdata, _, addr = self._sock.recvmsg(65536, 1024)
                if addr[2] == socket.PACKET_OUTGOING:
                    continue
                rx_ns = time.time_ns()
                for level, kind, data in ancdata:
                    if level == socket.SOL_SOCKET and kind == SCM_TIMESTAMPNS:
                        rx_ns = timespec_ns(data)
                self._handler(frame, rx_ns)
        except BaseException as err:  # surfaced by stop() in the owning thread
            self.error = err
