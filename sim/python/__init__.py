"""bufferlab-sim: the whole network in virtual time.

Switches are engines running BMv2 JSON (`SwitchEngine`, programmed over P4Runtime
like any switch), hosts run the host models of `bufferlab_hosts` (sources, the BCN
reaction point, PAUSE/PFC honouring), links have a rate, a propagation delay and a
wire overhead. Time is integer ns, one thread, seeded: the same network and seed give
the same results, byte for byte. See `sim/README.md`.
"""

from bufferlab.sim.network import (
    BcnReaction,
    Simulator,
    Source,
    SwitchEngine,
    build_from_topology,
)
from bufferlab.sim.reaction import ReactionContext, ReactionModel
from bufferlab.sim.results import Results
from bufferlab.sim.tcp import TcpFlow

__all__ = [
    "BcnReaction",
    "ReactionContext",
    "ReactionModel",
    "Results",
    "Simulator",
    "Source",
    "SwitchEngine",
    "TcpFlow",
    "build_from_topology",
]
