"""Host agents: the BCN reaction point and PAUSE/PFC honouring.

The decision logic lives once, in the Rust crate bufferlab-hosts (``traffic/hosts``),
and reaches Python as ``bufferlab.traffic._hosts``; the simulator (``sim/``) links the
same crate, so a live host and a simulated one regulate, pace and pause alike. It is
clock-injected (``now_ns`` passed in): ``bcn.ReactionPoint`` (the Rust RP plus a
history of its rate changes), ``ratelimit.RateLimiterQueue``, ``pause.PauseTimer``,
``pause.PfcTimers`` and the frame parsers ``bcn.parse_bcn`` and
``pause.parse_mac_control`` are those bindings. The live pieces here are thin:
``listener.FrameListener`` sniffs a host interface, ``bcn.BcnAgent`` /
``pause.PauseAgent`` feed it to the logic and apply the result to an HTB class
(``bcn.HtbClassTarget``) or to ``sender.RegulatedSender``, which sends through the
Rust rate-limiter queue.
"""
