"""Property-based tests of every reader: hypothesis mutates real input files (lines deleted, duplicated or swapped;
numbers replaced by nan, inf, -1, 2^64 or text; files cut short) and cosim must answer as documented."""

from __future__ import annotations

import itertools

import pytest
from fuzz import NEEDS_SHARED, OPS, TARGETS, run_mutant
from hostile import CASES as HOSTILE
from hostile import campaign as hostile_campaign
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trust_campaign import CLASSES as TRUST_CLASSES
from trust_campaign import run_case as run_trust_case

plans = st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 10**6), st.integers(0, 10**6)), min_size=1, max_size=3)
_folders = itertools.count()


# Mutants a target a run: 10 for a reader, 5 for the commands that fit or estimate after reading (each mutant of those
# costs 70-160 ms of CPU, a reader's 5-30 ms).  The draws are the same each run (tests/conftest.py's "ci" profile;
# HYPOTHESIS_PROFILE=explore draws new ones): a fixed sample that guards against regressions, not a search.  40 a
# target until 0.4.0, 20 and 10 until #53 cut them for the test command's CPU (20 s of it); the search is
# `python tests/fuzz.py --mutants 10000`, the campaign (docs/reference/outputs.md).
COSTLY = {"measured-fit", "armpm", "gpu-energy-tegrastats", "gpu-energy-trace", "gpu-energy-log", "kernel-table", "activity"}


@pytest.mark.parametrize("target", sorted(set(TARGETS) - COSTLY))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=plans)
def test_mutated_real_input_gets_a_documented_answer(target, plan, tmp_path):
    _answers_as_documented(target, plan, tmp_path)


@pytest.mark.parametrize("target", sorted(COSTLY))
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=plans)
def test_mutated_input_of_a_fitting_command_gets_a_documented_answer(target, plan, tmp_path):
    _answers_as_documented(target, plan, tmp_path)


def _answers_as_documented(target: str, plan, tmp_path) -> None:
    if target in NEEDS_SHARED and not NEEDS_SHARED[target].exists():
        pytest.skip("../shared/data is not here")
    outcome = run_mutant(TARGETS[target], tmp_path / f"m{next(_folders)}", plan)
    assert outcome.problems == [], outcome.stderr


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_unmutated_real_input_prices(target, tmp_path):
    """The fuzz baseline: each real file as it is gives exit 0 and plausible power."""
    if target in NEEDS_SHARED and not NEEDS_SHARED[target].exists():
        pytest.skip("../shared/data is not here")
    outcome = run_mutant(TARGETS[target], tmp_path / "m", [])
    assert outcome.code == 0 and outcome.problems == [], outcome.stderr


@pytest.fixture(scope="session")
def hostile_baselines(tmp_path_factory):
    """tests/hostile.py's baselines (each command's peak memory on its unmutated input, and the modules it imports),
    measured once a test run: the first xdist worker to need them leaves them beside the workers' temporary folders
    for the other (helpers.once_a_run)."""
    from helpers import once_a_run
    from hostile import baselines

    return once_a_run(tmp_path_factory, "hostile-baselines", lambda: baselines(tmp_path_factory.mktemp("hostile-baselines")))


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_files_get_a_bounded_answer(case, tmp_path, hostile_baselines):
    """tests/hostile.py at a hundredth of its sizes (the full sizes are run by hand: docs/reference/outputs.md)."""
    _, results = hostile_campaign(tmp_path, scale=0.01, cases=[case], base=hostile_baselines)
    assert results and all(r.problems == [] for r in results), results


# issue 51's classes (tests/trust_campaign.py; `python tests/trust_campaign.py --cases 500` is the campaign): one
# case of each a run, drawn anew, except the study-running worker kill, which test_explore.py covers
@pytest.mark.parametrize("name", [n for n in TRUST_CLASSES if n != "killed pool worker"])
def test_trust_case_answers_right_or_refuses(name, tmp_path):
    import random

    seed = random.randrange(10**6)
    print(f"python tests/trust_campaign.py reproduces this case with run_case({name!r}, {seed}, folder)")  # shown if it fails or hangs
    result = run_trust_case(name, seed, tmp_path)
    assert result.verdict in ("refused", "right"), result


def test_a_mutant_cosim_never_finishes_fails_at_once_naming_its_plan(monkeypatch, tmp_path):
    """A reader looping forever on a mutant must end the test (fuzz.HANG_S, here 1 s) with the plan that reproduces it,
    not stall the run until CI's limit; the test's own timer (pytest-timeout) is put back, less the time spent."""
    import signal
    import time

    import fuzz

    import cosim.cli

    monkeypatch.setattr(fuzz, "HANG_S", 1)
    monkeypatch.setattr(fuzz, "_DONE", {})  # a mutant met before is not run again
    monkeypatch.setattr(cosim.cli, "main", lambda argv: time.sleep(30))
    outer_s = signal.getitimer(signal.ITIMER_REAL)[0]
    t0 = time.monotonic()
    with pytest.raises(fuzz.MutantHang, match=r"still ran after 1 s on the mutant of plan \[\('swap', 1, 2\)\]"):
        run_mutant(TARGETS["gem5-stats"], tmp_path / "m", [("swap", 1, 2)])
    assert time.monotonic() - t0 < 10
    if outer_s:
        assert 0 < signal.getitimer(signal.ITIMER_REAL)[0] < outer_s
