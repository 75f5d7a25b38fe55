"""The BCN study: seeds 003 (calibration) and 001 (baseline, + 802.3x) in virtual time."""
