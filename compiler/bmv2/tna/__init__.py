"""Lowering of TNA/T2NA programs to bufferlab's TNA JSON (README "TNA JSON").

`program.lower_tna` is the entry point: it finds the Switch's pipes (`program`), lowers
each gress of each pipe as a BMv2 document (`gress`) with TNA's extern instances
(`stateful`) and calls (`externs`), and merges the control-plane models with bf-p4c's
pipe-prefixed names.
"""
