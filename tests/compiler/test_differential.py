"""fuzz/python/differential.py: the compiler against itself. A mutant that changes the
meaning is caught (so the check can fail), meaning-preserving ones pass, and a few
seeded mutants of the STF cases behave as their originals."""

import random
import sys
from functools import partial
from pathlib import Path

import pytest

from bufferlab.compiler.mutate import MUTATIONS, Site
from bufferlab.compiler.mutate.cosmetic import swap_operands

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "fuzz" / "python"))
import differential  # noqa: E402
from stf_observe import Observation, difference  # noqa: E402

# Not a mutation of the check: `a - b` is not `b - a`. Used here only, to see it caught.
swap_subtraction = partial(swap_operands, operators=frozenset({"-"}), name="swap_subtraction")


@pytest.fixture(scope="module")
def arithmetic():
    """The bit_arithmetic_ops case and its baseline run."""
    [case] = [c for c in differential.find_cases() if c.name == "bit_arithmetic_ops"]
    return case, differential.baseline(case)


def test_a_swapped_subtraction_is_caught(arithmetic, tmp_path):
    case, base = arithmetic
    sites = differential.load(case.program, case.include_dirs).program
    count = len(swap_subtraction(sites, str(case.program)))
    assert count >= 1
    outcomes = [differential.check_mutant(case, base, "swap_subtraction", swap_subtraction, k, tmp_path)
                for k in range(count)]
    caught = [o for o in outcomes if o.status == "differ"]
    assert caught, [o.status for o in outcomes]
    report = caught[0].report()
    # The report names the mutation, the site in the original source and the differing frame.
    assert "DIFFER tests/stf/bit_arithmetic_ops.stf: swap_subtraction site" in report
    assert f"{case.program}:" in report and "operands swapped" in report
    assert "original port" in report and "mutant port" in report
    assert "-" in caught[0].changed and "+" in caught[0].changed


def test_commutative_swaps_of_the_same_program_are_the_same(arithmetic, tmp_path):
    case, base = arithmetic
    mutation = MUTATIONS["swap_commutative_operands"]
    count = len(mutation(differential.load(case.program, case.include_dirs).program, str(case.program)))
    assert count >= 1
    for k in range(min(count, 4)):
        outcome = differential.check_mutant(case, base, "swap_commutative_operands", mutation, k, tmp_path)
        assert outcome.status == "same", outcome.report()


def test_the_program_printed_unchanged_behaves_the_same(arithmetic, tmp_path):
    case, base = arithmetic
    outcome = differential.check_mutant(case, base, differential.PRINT_ONLY, None, 0, tmp_path)
    assert outcome.status == "same", outcome.report()
    assert outcome.changed == ""


def test_a_mutant_the_compiler_refuses_is_reported(arithmetic, tmp_path):
    case, base = arithmetic

    def declare_twice(program, file):
        first = next(d for d in program.declarations if d.pos.file == file)
        return [Site("declare_twice", first.pos, "declared twice", lambda: program.declarations.append(first))]

    outcome = differential.check_mutant(case, base, "declare_twice", declare_twice, 0, tmp_path)
    assert outcome.status == "refused"
    assert f"{outcome.mutant}:" in outcome.detail and ": error: " in outcome.detail


def test_difference_names_the_first_visible_change():
    a = Observation(frames=[(1, "aabb"), (2, "cc")], reads=[("register_read('r', 0)", 5)],
                    state={"register_arrays:r": [5, 0]})
    assert difference(a, a) is None
    b = Observation(frames=[(1, "aacb"), (2, "cc")], reads=a.reads, state=a.state)
    assert difference(a, b) == ("frame 1 out: original port 1 aabb, mutant port 1 aacb "
                                "(first difference at byte 1)")
    c = Observation(frames=a.frames[:1], reads=a.reads, state=a.state)
    assert difference(a, c).startswith("2 frames out of the original, 1 of the mutant; first extra (original): port 2")
    d = Observation(frames=a.frames, reads=[("register_read('r', 0)", 6)], state=a.state)
    assert "read back: original 5, mutant 6" in difference(a, d)
    e = Observation(frames=a.frames, reads=a.reads, state={"register_arrays:r": [5, 1]})
    assert difference(a, e) == "register_arrays:r[1] at the end: original 0, mutant 1"


def test_plan_spreads_over_mutations_and_repeats_with_its_seed():
    counts = {"x": {"m1": 50, "m2": 2}, "y": {"m1": 50, "m2": 0}}
    chosen = differential.plan(counts, seed=3, count=6)
    assert chosen == differential.plan(counts, seed=3, count=6)
    assert sum(1 for _, m, _ in chosen if m == "m2") == 2
    assert len(chosen) == 6 and len(set(chosen)) == 6
    assert len(differential.plan(counts, seed=3, count=0)) == 102


def test_seeded_mutants_of_the_stf_cases_behave_as_their_originals(tmp_path):
    # A few cases with functions, compound assignments, stacks and parser selects.
    names = {"side_effect_order", "function_calls_in_expressions", "header_stack_mpls",
             "parser_select_masks_ranges", "value_switch_loops_functions"}
    cases = [c for c in differential.find_cases() if c.name in names]
    assert len(cases) == len(names)
    outcomes = differential.run(cases, MUTATIONS, seed=1, count=24, out_dir=tmp_path, echo=lambda _: None)
    assert len(outcomes) == 24
    assert [o.report() for o in outcomes if o.status != "same"] == []


def test_a_walk_stops_at_its_first_finding_and_lists_the_steps_before(arithmetic, tmp_path):
    case, base = arithmetic
    mutations = {"wrap_in_blocks": MUTATIONS["wrap_in_blocks"], "swap_subtraction": swap_subtraction}
    outcomes = differential.walk(case, base, ("wrap_in_blocks", 0), mutations, 8, random.Random(2),
                                 tmp_path, "walk")
    assert outcomes[0].status == "same"
    *before, last = outcomes
    assert last.status == "differ" and all(o.status == "same" for o in before)
    # Each step rewrote the program the step before printed.
    assert last.site.pos.file == str(before[-1].mutant)
    report = last.report()
    assert f"after {len(before)} earlier steps that behaved as the original:" in report
    assert "wrap_in_blocks site 0" in report and "swap_subtraction site" in report
