"""Seed 004: ESnet's switch-buffer tests (buffer size vs TCP throughput, pacing), live."""
