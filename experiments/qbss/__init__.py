"""Seed 002: SLAC's QBSS scavenger class against best effort and priority, live in Mininet
(README.md in this folder)."""
