"""Meaning-preserving source-to-source mutations of P4 programs, for checking the
compiler against itself (`fuzz/python/differential.py`).

Each mutation is a function `(program, file) -> list[Site]` over a checked tree (the
front end's `load`): it lists every place in the code written in `file` where it can
rewrite the program without changing what the program does, and a site's `rewrite()`
edits the tree in place; `printer.print_program` then gives the mutant's source. A
mutation that cannot show a rewrite keeps the meaning at a place skips the place.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import ast
from .branches import expand_conditional_assignments, negate_conditions
from .compound import split_compound_assignments
from .constants import name_constants
from .cosmetic import rename_locals, split_declarations, swap_commutative_operands, wrap_in_blocks
from .inline import inline_functions
from .reorder import reorder_independent_statements
from .site import Site
from .temporaries import introduce_temporaries

Mutation = Callable[[ast.Program, str], list[Site]]

#: Every mutation by name, in the order the differential check reports them.
MUTATIONS: dict[str, Mutation] = {
    m.__name__: m
    for m in (
        introduce_temporaries,
        split_compound_assignments,
        reorder_independent_statements,
        inline_functions,
        negate_conditions,
        expand_conditional_assignments,
        name_constants,
        split_declarations,
        rename_locals,
        wrap_in_blocks,
        swap_commutative_operands,
    )
}

__all__ = ["MUTATIONS", "Mutation", "Site"]
