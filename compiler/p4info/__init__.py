"""P4Info for a checked v1model program: p4c's ids, names, aliases and table contents."""
