"""Reaction models written in Python: a new congestion signal's host side.

A model is any object with

- ``ethertypes``: the EtherTypes of the feedback frames it wants (default: BCN, 0x88B5);
- ``on_feedback(ctx, frame: bytes)``: a feedback frame reached the host (called the
  source's ``response_ns`` after it arrived);
- ``on_timer(ctx, token: int)``: a timer it set with ``ctx.set_timer`` fired.

It is called per feedback frame and per timer, never per data frame, so the data path
stays in Rust. ``ctx`` (a `ReactionContext`, valid during the call only) tells
``now_ns``, ``rate_bps`` (None: unlimited), ``line_rate_bps``, ``queue_bytes``, ``tag``
and ``source``, and takes commands: ``set_rate_bps(r | None)``, ``set_tag(cpid | None)``
(the RLT frames carry), ``hold_until(ns)``, ``set_timer(at_ns, token)``. A model that
raises stops the run with its exception. See `sim/README.md` for a worked example.
"""

from __future__ import annotations

from typing import Protocol

from bufferlab.sim import _sim

ReactionContext = _sim.ReactionContext


class ReactionModel(Protocol):
    """What the simulator calls on a Python reaction model."""

    ethertypes: tuple[int, ...]

    def on_feedback(self, ctx: ReactionContext, frame: bytes) -> None:
        """A feedback frame arrived."""

    def on_timer(self, ctx: ReactionContext, token: int) -> None:
        """A timer set with ``ctx.set_timer`` fired."""
