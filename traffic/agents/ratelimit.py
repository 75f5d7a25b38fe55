"""The rate-limiter queue (RLQ): a bounded host queue paced at the regulated rate.

The queue is bufferlab-hosts' ``rlq::RateLimiterQueue`` (through
``bufferlab.traffic._hosts``), the one the simulator's hosts run. It is a pacer: a frame
that finds the queue idle may leave at once, each following one a wire time at the rate
after the one before. A full RLQ refuses a frame (``offer`` returns False) instead of
dropping it: the source holds the frame and offers it again once a frame has left
(back-pressure, congestion.md §1.4 and the seeds' "traffic source stops after memory is
full (no drops)").
"""

from bufferlab.traffic._hosts import RateLimiterQueue, serialisation_ns

__all__ = ["RateLimiterQueue", "serialisation_ns"]
