#!@VENV@/bin/python3
"""`simple_switch_grpc`: bufferlab-switch under BMv2's name, same command line.

Template: `make setup` installs it as .venv/compat/bin/simple_switch_grpc with the venv's
Python filled in (README "Running the p4lang tutorials"). Being a script of that name (not a
wrapper around another process) matters: the tutorials stop a switch with `kill
%simple_switch_grpc` and `pkill simple_switch`, which find it by its name.
"""

import sys

from bufferlab.switch.cli import main

if __name__ == "__main__":
    sys.exit(main())
