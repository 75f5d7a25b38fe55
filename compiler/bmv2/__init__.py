"""Lowering of a checked P4_16 (v1model) program to BMv2 JSON, one module per JSON section.

`program.lower_to_bmv2(checked, path)` is the entry point; it returns the JSON document,
the control-plane model (`model.ControlPlane`, which `compiler.p4info` turns into P4Info)
and the warnings. Modules:

- `context`: id counters, unique names, header layout (`header_types`, `headers`, stacks,
  unions, `scalars`), source_info;
- `storage`: where values live (fields, header instances, bindings of inlined arguments);
- `expressions`: operands with p4c's masking, `d2b`/`b2d` and wrapping conventions;
- `statements`: statements to primitives (jumps for `if`/`switch`/`for`/`return`/`exit`,
  inlined actions and functions) and to parser ops;
- `externs`: v1model extern functions and methods;
- `parsers`: `parsers`/`parse_vsets`, sub-parsers inlined, ranges as masks;
- `pipelines`: `pipelines` (tables, conditionals, hidden tables), sub-controls inlined;
- `actions`, `stateful`, `calculations`, `checksums`, `lists`, `deparser`: their sections;
- `hexstr`: p4c's hexstr padding rules; `model`: the control-plane view.
"""
