"""`make cli`: the Mininet demo network (three hosts, one switch running forward.p4)."""
