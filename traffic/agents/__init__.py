"""Host agents: the BCN reaction point and PAUSE/PFC honouring.

Decision logic is pure and clock-injected (``now_ns`` passed in): ``bcn.ReactionPoint``,
``ratelimit.RateLimiterQueue``, ``pause.PauseTimer`` and ``pause.PfcTimers``. The live
pieces are thin: ``listener.FrameListener`` sniffs a host interface,
``bcn.BcnAgent`` / ``pause.PauseAgent`` feed it to the logic and apply the result to an
HTB class (``bcn.HtbClassTarget``) or to ``sender.RegulatedSender``.
"""
