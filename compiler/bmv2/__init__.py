"""Lowering of a checked P4_16 (v1model) program to BMv2 JSON, one module per JSON section."""
