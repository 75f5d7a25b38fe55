"""Digest lists (spec "DigestEntry"): batching per config, list ids, acks and duplicate hold."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from p4.v1 import p4data_pb2, p4runtime_pb2

from . import codec
from .p4info_index import DigestInfo, P4InfoIndex
from .status import P4RuntimeError
from .target import DigestMessage

Sample = tuple[bytes, ...]


@dataclass
class _Digest:
    info: DigestInfo
    config: p4runtime_pb2.DigestEntry.Config
    pending: list[Sample] = field(default_factory=list)
    first_pending_ns: int = 0
    next_list_id: int = 1
    # list_id -> (samples, sent at ns): held back from new lists until acked or expired.
    unacked: dict[int, tuple[list[Sample], int]] = field(default_factory=dict)


class DigestManager:
    """Turns the target's digest messages into DigestLists for the primary client.

    `clock` gives monotonic ns; `send` delivers a StreamMessageResponse (to the primary).
    A list is sent when it reaches max_list_size, or max_timeout_ns after its first message
    (0: at once). A sample equal to one in an unacked list is suppressed until that list is
    acked or ack_timeout_ns has passed.
    """

    def __init__(
        self,
        send: Callable[[p4runtime_pb2.StreamMessageResponse], None],
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self._send = send
        self._clock = clock
        self._lock = threading.Condition()
        self._index: P4InfoIndex | None = None
        self._digests: dict[int, _Digest] = {}
        self._closed = False
        self._timer = threading.Thread(target=self._run_timer, daemon=True, name="digest-timer")
        self._timer.start()

    def reset(self, index: P4InfoIndex | None) -> None:
        """Forget all configs and lists (a new pipeline was committed)."""
        with self._lock:
            self._index = index
            self._digests.clear()

    def close(self) -> None:
        """Stop the timer thread."""
        with self._lock:
            self._closed = True
            self._lock.notify_all()
        self._timer.join()

    def write(self, update_type: int, entry: p4runtime_pb2.DigestEntry) -> None:
        """INSERT enables, MODIFY reconfigures, DELETE disables a digest's lists."""
        if self._index is None:
            raise P4RuntimeError("FAILED_PRECONDITION", "no pipeline")
        info = self._index.digest(entry.digest_id)
        with self._lock:
            current = self._digests.get(entry.digest_id)
            if update_type == p4runtime_pb2.Update.DELETE:
                if current is None:
                    raise P4RuntimeError("NOT_FOUND", f"digest {info.name} is not enabled")
                del self._digests[entry.digest_id]
                return
            if not entry.HasField("config"):
                raise P4RuntimeError("INVALID_ARGUMENT", "DigestEntry needs a config")
            config = entry.config
            if config.max_timeout_ns < 0 or config.ack_timeout_ns < 0 or config.max_list_size < 0:
                raise P4RuntimeError("INVALID_ARGUMENT", "DigestEntry config values must be ≥ 0")
            if update_type == p4runtime_pb2.Update.INSERT:
                if current is not None:
                    raise P4RuntimeError("ALREADY_EXISTS", f"digest {info.name} already enabled")
                self._digests[entry.digest_id] = _Digest(info, _copy_config(config))
            else:
                if current is None:
                    raise P4RuntimeError("NOT_FOUND", f"digest {info.name} is not enabled")
                current.config = _copy_config(config)
            self._lock.notify_all()

    def read(self, digest_id: int) -> list[p4runtime_pb2.DigestEntry]:
        """Enabled digests (all when digest_id is 0) with their configs."""
        if self._index is None:
            raise P4RuntimeError("FAILED_PRECONDITION", "no pipeline")
        if digest_id:
            self._index.digest(digest_id)
        with self._lock:
            return [
                p4runtime_pb2.DigestEntry(digest_id=i, config=d.config)
                for i, d in sorted(self._digests.items())
                if digest_id in (0, i)
            ]

    def ack(self, ack: p4runtime_pb2.DigestListAck) -> None:
        """Release the samples of an acked list (unknown acks are ignored, as PI does)."""
        with self._lock:
            digest = self._digests.get(ack.digest_id)
            if digest is not None:
                digest.unacked.pop(ack.list_id, None)

    def on_message(self, message: DigestMessage) -> None:
        """Queue one digest message from the data plane (called from any thread)."""
        with self._lock:
            digest = next(
                (d for d in self._digests.values() if d.info.json_name == message.name), None
            )
            if digest is None:
                return
            sample = tuple(message.fields)
            now = self._clock()
            ack_timeout = digest.config.ack_timeout_ns
            for list_id, (_, sent_ns) in list(digest.unacked.items()):
                if now - sent_ns >= ack_timeout:
                    del digest.unacked[list_id]
            if sample in digest.pending or any(
                sample in samples for samples, _ in digest.unacked.values()
            ):
                return
            if not digest.pending:
                digest.first_pending_ns = now
            digest.pending.append(sample)
            limit = digest.config.max_list_size
            if digest.config.max_timeout_ns == 0 or (limit > 0 and len(digest.pending) >= limit):
                self._flush(digest, now)
            else:
                self._lock.notify_all()

    def _flush(self, digest: _Digest, now: int) -> None:
        """Send the pending samples of one digest as a DigestList (lock held)."""
        samples, digest.pending = digest.pending, []
        list_id = digest.next_list_id
        digest.next_list_id += 1
        digest.unacked[list_id] = (samples, now)
        response = p4runtime_pb2.StreamMessageResponse()
        digest_list = response.digest
        digest_list.digest_id = digest.info.id
        digest_list.list_id = list_id
        digest_list.timestamp = time.time_ns()
        for sample in samples:
            digest_list.data.append(_p4data(digest.info, sample))
        self._send(response)

    def _run_timer(self) -> None:
        """Flush lists whose max_timeout_ns has passed."""
        with self._lock:
            while not self._closed:
                now = self._clock()
                wait_ns = None
                for digest in self._digests.values():
                    if not digest.pending:
                        continue
                    due = digest.first_pending_ns + digest.config.max_timeout_ns
                    if due <= now:
                        self._flush(digest, now)
                    else:
                        wait_ns = due - now if wait_ns is None else min(wait_ns, due - now)
                self._lock.wait(None if wait_ns is None else wait_ns / 1e9)


def _copy_config(config: p4runtime_pb2.DigestEntry.Config) -> p4runtime_pb2.DigestEntry.Config:
    """A private copy of a config message."""
    copy = p4runtime_pb2.DigestEntry.Config()
    copy.CopyFrom(config)
    return copy


def _p4data(info: DigestInfo, sample: Sample) -> p4data_pb2.P4Data:
    """One digest message as P4Data: a struct of canonical bitstrings, or one bitstring."""
    if not info.is_struct:
        return p4data_pb2.P4Data(bitstring=codec.canonical(sample[0]))
    data = p4data_pb2.P4Data()
    for value in sample:
        data.struct.members.add(bitstring=codec.canonical(value))
    return data
