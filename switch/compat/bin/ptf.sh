#!/bin/sh
# `ptf` (the P4 testing framework) from the venv, where the tutorials' `which ptf` finds it.
# Template: `make setup` installs it as .venv/compat/bin/ptf with the venv's path filled in.
exec "@VENV@/bin/ptf" "$@"
