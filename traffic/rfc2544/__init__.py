"""RFC 2544 tester: throughput, latency, back-to-back and frame loss rate through any device
between the tester's source ports and its sink port, with N sources into one sink.

Units as everywhere in bufferlab's traffic tools: frame sizes include the 4-byte FCS,
rates are line bit/s (frame + 20 bytes of preamble and gap), loads are fractions of a
source port's nominal line rate, frame rates are frames/s, latencies ns.
"""
