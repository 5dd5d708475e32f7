import gc
import os
import sys
from pathlib import Path

# tests import their helpers as a plain module
sys.path.insert(0, str(Path(__file__).parent))

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run (CI and by default): a failure is reproduced by rerunning, and a
# pass does not depend on the draw.  HYPOTHESIS_PROFILE=explore draws new examples (and keeps the failures it finds).
settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


BENCH = Path(__file__).resolve().parent / "bench"


def pytest_configure(config):
    # scikit-learn's OpenMP threads spin against each other on a loaded 2-core machine: the kernel models' fits took
    # 12x longer with two threads than with one (measured: 91 s against 7.6 s for one kernel type); the CLI's children
    # inherit it.  Not for the benchmarks (this and the collector's settings below): they measure what a user's default gets.
    if config.getoption("benchmark_enable", default=False):
        return
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # The garbage collector's young generation is collected every 20,000 allocations, not 700: the tests build and drop
    # many small objects (data frames, hypothesis draws), and the collections that followed them cost 8.3 CPU s a run in
    # the two workers (gc.callbacks); 2.6 s with this and the freeze below.  cosim's commands run in children keep
    # Python's defaults.
    gc.set_threshold(20_000, 20, 20)


def pytest_collection_finish(session):
    """Everything imported and collected so far (pandas, matplotlib, scikit-learn, the tests) lives for the whole run:
    frozen (gc.freeze), so that a full collection scans only what the tests made since."""
    if session.config.getoption("benchmark_enable", default=False):
        return
    gc.collect()
    gc.freeze()


def pytest_ignore_collect(collection_path, config):
    """The timing benchmarks are measurements, not tests: they run only with ``pytest tests/bench --benchmark-enable -n 0``
    (README's "Measured" table); what they guard is tested in the default run by cheap tests of behaviour."""
    if Path(collection_path).resolve() == BENCH and not config.getoption("benchmark_enable", default=False):
        return True
    return None


@pytest.fixture(scope="session")
def gem5_root(tmp_path_factory):
    """A folder for the real gem5 runs of this test session (see helpers.gem5_run)."""
    return tmp_path_factory.mktemp("gem5")


@pytest.fixture(scope="session")
def whatif_suite_rows(tmp_path_factory):
    """The what-if suite's pairs (tests/whatif_pairs.py ``suite_rows``; about 14 s of CPU), computed once a test run:
    the docs build (tests/test_house.py) and tests/test_whatif_suite.py both read them, often on different xdist
    workers, so the first to need them leaves them beside the workers' temporary folders for the other."""
    from helpers import once_a_run
    from whatif_pairs import suite_rows
    from whatif_suite import RUNS

    return once_a_run(tmp_path_factory, "whatif-suite-rows", lambda: suite_rows(RUNS))


@pytest.fixture(scope="session")
def silicon_validation(tmp_path_factory):
    """The docs' ``cosim validate`` (docs/_silicon_figures.py ``COMMAND``: the three A15 models on ../shared's XU3
    training runs; about 5 s of CPU) run once a test run, as once_a_run shares it between xdist workers: the CSV it
    wrote and every figure the docs quote from it.  tests/test_docs_targets.py holds the recorded table to it and
    tests/test_default_models.py reads methodology.md's figures from it."""
    from helpers import once_a_run, run_folder

    def compute():
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))
        from _silicon_figures import recompute

        out = run_folder(tmp_path_factory) / "silicon-validate.csv"
        return out, recompute(out)

    return once_a_run(tmp_path_factory, "silicon-validate", compute)
