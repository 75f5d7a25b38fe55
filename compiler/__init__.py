"""bufferlab-p4c: a P4_16 compiler that writes BMv2 JSON and P4Info like p4c-bm2-ss (v1model),
and BMv2-style TNA JSON and P4Info with bf-p4c's names (TNA, T2NA)."""

from .api import compile, compile_program

__all__ = ["compile", "compile_program"]
