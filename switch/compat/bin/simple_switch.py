#!@VENV@/bin/python3
"""`simple_switch`: BMv2's switch without P4Runtime, as bufferlab-switch.

Template: `make setup` installs it as .venv/compat/bin/simple_switch with the venv's Python
filled in (README "Running the p4lang tutorials"). The switch is driven through its Thrift
port (`simple_switch_CLI`). bufferlab-switch always serves P4Runtime as well; here that
server gets a free loopback port, so the switches of one Mininet network do not all claim
the default 9559.
"""

import sys

from bufferlab.switch.cli import main

PRIVATE_GRPC = ["--grpc-server-addr", "127.0.0.1:0"]


def with_private_grpc(argv: list[str]) -> list[str]:
    """The command line with a free loopback P4Runtime address among the target options."""
    return [*argv, *PRIVATE_GRPC] if "--" in argv else [*argv, "--", *PRIVATE_GRPC]


if __name__ == "__main__":
    sys.exit(main(with_private_grpc(sys.argv[1:])))
