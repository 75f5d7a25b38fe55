"""Helpers shared by the experiments: buffer_switch.p4 on the in-process engine, the tester's
wire timing."""
