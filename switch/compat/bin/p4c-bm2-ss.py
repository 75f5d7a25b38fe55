#!@VENV@/bin/python3
"""`p4c-bm2-ss`: bufferlab-p4c under the name the p4lang tutorials' Makefile calls.

Template: `make setup` installs it as .venv/compat/bin/p4c-bm2-ss with the venv's Python
filled in (README "Running the p4lang tutorials").
"""

from bufferlab.compiler.cli import main

if __name__ == "__main__":
    main()
