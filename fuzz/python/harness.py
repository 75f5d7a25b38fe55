"""What the Python fuzz targets share: the atheris entry point and the run statistics.

Each target is `python fuzz/python/<target>.py [libFuzzer options] OUT_DIR SEED_DIR`:
libFuzzer writes what it finds to OUT_DIR (the first directory) and only reads the
committed seeds. A target fails by raising: an input that gets anything but the error
bad input must get is a finding, saved by libFuzzer as crash-<sha1> in the working folder.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import atheris


class Finding(AssertionError):
    """An input that broke a rule the target checks (not merely a bad input)."""


def main(test_one_input: Callable[[bytes], None]) -> None:
    """Run libFuzzer on `test_one_input` with the command line's options and folders."""
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
