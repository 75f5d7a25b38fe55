#!@VENV@/bin/python3
"""`simple_switch_CLI`: bufferlab-switch-cli under BMv2's name (`--thrift-port N`, commands
on standard input).

Template: `make setup` installs it as .venv/compat/bin/simple_switch_CLI with the venv's
Python filled in (README "Running the p4lang tutorials").
"""

import sys

from bufferlab.switch.runtime_cli.client import main

if __name__ == "__main__":
    sys.exit(main())
