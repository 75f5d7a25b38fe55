"""bufferlab-p4c: a P4_16 (v1model) compiler that writes BMv2 JSON and P4Info like p4c-bm2-ss."""

from .api import compile, compile_program

__all__ = ["compile", "compile_program"]
