"""What the benchmarks measure, kept for the docs: ``measured(key, **values)`` in a benchmark, and a run with
``--benchmark-enable`` appends those values to ``tests/bench/measured.json`` (its last three runs per key).

The validation page (docs/_validation.py) and README's "Measured" table show these values and nothing typed by
hand; tests/test_docs_targets.py checks both against this file.  A run under CI's ``--benchmark-disable`` (one
untimed call, smaller sizes) records nothing.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
from pathlib import Path

import pytest

MEASURED = Path(__file__).resolve().parent / "measured.json"
KEEP_RUNS = 3

_session: dict[str, dict[str, float]] = {}


@pytest.fixture
def measured():
    """``measured(key, **values)``: values [their units in the name] this benchmark measured under ``key``."""

    def record(key: str, **values: float) -> None:
        _session.setdefault(key, {}).update(values)

    return record


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    disabled = config.getoption("benchmark_disable", default=True) and not config.getoption("benchmark_enable", default=False)
    if not _session or disabled:  # values of a run that failed a target are still what was measured: kept
        return
    data = json.loads(MEASURED.read_text()) if MEASURED.exists() else {}
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    for key, values in _session.items():
        runs = data.setdefault(key, [])
        runs.append({"when": when, "machine": f"{platform.machine()}, {os.cpu_count()} CPUs", **values})
        data[key] = runs[-KEEP_RUNS:]
    part = MEASURED.with_suffix(".json.part")
    part.write_text(json.dumps(dict(sorted(data.items())), indent=1) + "\n")
    part.replace(MEASURED)  # atomic: a killed run leaves the last complete file
