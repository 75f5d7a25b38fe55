#!/bin/sh
# `python3` for the p4lang tutorials' scripts (run_exercise.py, send.py, the PTF tests): the
# venv's Python, which has what a BMv2 install puts into the system's (grpc, p4runtime,
# p4.tmp, scapy, psutil, ptf) and sees Debian's mininet. Template: `make setup` installs it
# as .venv/compat/bin/python3 with the venv's path filled in.
exec "@VENV@/bin/python3" "$@"
