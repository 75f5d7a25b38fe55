"""Seed 000: ToR switch buffer size and forwarding delay (two sources at ~50 % into one port)."""
