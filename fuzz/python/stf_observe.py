"""What an STF run shows of a program, for comparing two compilations of one meaning.

`observe(json_text, stf)` runs an STF file on the engine and records everything the
program made visible: every frame out of every port (also ports the file never names),
in order; each value the file read back (`check_counter`, `register_read` and other
runtime-CLI answers); the STF verdicts; and at the end every register cell, every
indirect counter cell and every digest. `difference(a, b)` names the first thing that
differs, or None.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bufferlab.switch import Engine
from bufferlab.switch.engine import EngineError
from bufferlab.switch.stf import Runner, StfError

# Cells read back per register or counter array at the end (arrays are sized by the
# program; the first cells are the ones STF cases index).
MAX_CELLS = 1024


@dataclass
class Observation:
    """Everything one STF run made visible."""

    frames: list[tuple[int, str]] = field(default_factory=list)
    reads: list[tuple[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    error: str | None = None
    state: dict[str, Any] = field(default_factory=dict)


class _Recording:
    """The engine as the STF runner sees it, noting each value it reads back."""

    _READS = frozenset({"counter_read", "table_counter", "register_read", "meter_get", "digests"})

    def __init__(self, engine: Engine, observation: Observation) -> None:
        self._engine = engine
        self._observation = observation

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._engine, name)
        if name not in self._READS:
            return attr

        def recorded(*args: Any) -> Any:
            value = attr(*args)
            self._observation.reads.append((f"{name}{args}", _plain(value)))
            return value

        return recorded


class _ObservingRunner(Runner):
    """The STF runner, keeping every frame it collects (not only those of named ports)."""

    def __init__(self, engine: Any, json_text: str, source: str, observation: Observation) -> None:
        super().__init__(engine, json_text, source)
        self.observation = observation
        answer = self.cli.execute

        def execute(line: str) -> Any:
            result = answer(line)
            observation.reads.append((line, (result.ok, result.text.strip())))
            return result

        self.cli.execute = execute

    def drain(self) -> None:
        """Collect as the runner does, noting every frame first."""
        self.t = max(self.t, self.e.drain())
        for port, frame, _ in self.e.received():
            self.observation.frames.append((port, frame.hex()))
            if port not in self.ports:
                self.result.packets_unheard += 1
                continue
            self.got.setdefault(port, []).append(frame)
            self.result.packets_out += 1


def observe(json_text: str, stf: Path) -> Observation:
    """Run `stf` on a fresh engine loaded with `json_text` and record what it shows."""
    obs = Observation()
    engine = Engine(json_text)
    runner = _ObservingRunner(_Recording(engine, obs), json_text, stf.name, obs)
    try:
        result = runner.run(stf.read_text())
        obs.failures = list(result.failures)
    except (StfError, EngineError) as exc:
        obs.error = str(exc)
    obs.state = _final_state(engine, json.loads(json_text))
    return obs


def _final_state(engine: Engine, document: dict) -> dict[str, Any]:
    """Every register cell, indirect counter cell and digest at the end of the run."""
    state: dict[str, Any] = {}
    for kind, array in _arrays(document):
        name, size = array.get("name"), int(array.get("size", 0) or 0)
        if not name or array.get("is_direct"):
            continue
        read = engine.register_read if kind == "register_arrays" else engine.counter_read
        cells = []
        for i in range(min(size, MAX_CELLS)):
            try:
                cells.append(_plain(read(name, i)))
            except EngineError as exc:
                cells.append(f"error: {exc}")
                break
        state[f"{kind}:{name}"] = cells
    try:
        state["digests"] = _plain(engine.digests())
    except EngineError as exc:
        state["digests"] = f"error: {exc}"
    return state


def _arrays(node: Any) -> list[tuple[str, dict]]:
    """Register and counter arrays anywhere in a document (a TNA document nests gresses)."""
    out: list[tuple[str, dict]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("register_arrays", "counter_arrays") and isinstance(value, list):
                out += [(key, a) for a in value if isinstance(a, dict)]
            else:
                out += _arrays(value)
    elif isinstance(node, list):
        for value in node:
            out += _arrays(value)
    return out


def _plain(value: Any) -> Any:
    """A comparable, printable form of an engine result (bytes as hex)."""
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def difference(want: Observation, got: Observation) -> str | None:
    """The first visible difference between two runs (`want` the original's), or None."""
    if want.error != got.error:
        return f"STF error: original {want.error!r}, mutant {got.error!r}"
    for i, (a, b) in enumerate(zip(want.frames, got.frames, strict=False)):
        if a != b:
            return (f"frame {i + 1} out: original port {a[0]} {a[1]}, mutant port {b[0]} {b[1]}"
                    f"{_first_byte(a[1], b[1]) if a[0] == b[0] else ''}")
    if len(want.frames) != len(got.frames):
        extra = want.frames[len(got.frames):] or got.frames[len(want.frames):]
        who = "original" if len(want.frames) > len(got.frames) else "mutant"
        return (f"{len(want.frames)} frames out of the original, {len(got.frames)} of the mutant; "
                f"first extra ({who}): port {extra[0][0]} {extra[0][1]}")
    for (line_a, a), (_, b) in zip(want.reads, got.reads, strict=False):
        if a != b:
            return f"`{line_a}` read back: original {a}, mutant {b}"
    if len(want.reads) != len(got.reads):
        return f"{len(want.reads)} values read back from the original, {len(got.reads)} from the mutant"
    for key in sorted(set(want.state) | set(got.state)):
        a, b = want.state.get(key), got.state.get(key)
        if a != b:
            if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
                i = next(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
                return f"{key}[{i}] at the end: original {a[i]}, mutant {b[i]}"
            return f"{key} at the end: original {a}, mutant {b}"
    if want.failures != got.failures:
        return f"STF verdicts: original {want.failures}, mutant {got.failures}"
    return None


def _first_byte(a: str, b: str) -> str:
    """Where two frames' hex first differ, as a byte offset."""
    i = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return f" (first difference at byte {i // 2})"
