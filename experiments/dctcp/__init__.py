"""DCTCP at 10 Gbit/s: queue at K with full throughput, incast beside long flows."""
