"""GPU path speed: parse a 10,000-launch GPU Ocelot trace and price it with the Tegra K1 rail model
(including the idle stretches between launches), and with the access-rate model.

Run with ``pytest tests/bench --benchmark-enable -n 0 -s`` to see the numbers.
"""

from __future__ import annotations

import pytest
from helpers import REPO

from cosim.counters.gpu import tegra_k1_counts_from_ocelot
from cosim.models.ocelot import load_access_rate_model
from cosim.models.tegrak1 import load_rail_model
from cosim.readers.ocelot import read_ocelot_trace
from cosim.timeline.gpu import ocelot_timeline, tegra_k1_timeline

LAUNCHES = 10_000


@pytest.fixture(scope="module")
def big_trace(tmp_path_factory):
    block = (REPO / "traces" / "cosim-ocelot-video.trace").read_text() + "\n"  # 5 launches
    path = tmp_path_factory.mktemp("gpu") / "big.trace"
    path.write_text(block * (LAUNCHES // 5))
    return path


def _best_s(benchmark) -> float | None:
    return None if benchmark.stats is None else round(benchmark.stats.stats.min, 3)


def test_parse_10000_launches(benchmark, big_trace, measured):
    trace = benchmark.pedantic(read_ocelot_trace, args=(big_trace,), rounds=3, iterations=1)
    assert len(trace) == LAUNCHES
    measured("gpu_10000_launches", parse_s=_best_s(benchmark))


def test_price_10000_launches_tk1(benchmark, big_trace, measured):
    trace = read_ocelot_trace(big_trace)
    model = load_rail_model()

    def price():
        return tegra_k1_timeline(tegra_k1_counts_from_ocelot(trace), model, gpu_mhz=852, emc_mhz=924, gap_s=1e-4)

    timeline = benchmark.pedantic(price, rounds=3, iterations=1)
    assert (timeline["kind"] == "kernel").sum() == LAUNCHES and (timeline["kind"] == "idle").sum() == LAUNCHES - 1
    measured("gpu_10000_launches", tegra_k1_s=_best_s(benchmark))


def test_price_10000_launches_access_rate(benchmark, big_trace, measured):
    trace = read_ocelot_trace(big_trace)
    model = load_access_rate_model()
    timeline = benchmark.pedantic(ocelot_timeline, args=(trace, model), kwargs={"gap_s": 1e-4}, rounds=3, iterations=1)
    assert (timeline["kind"] == "kernel").sum() == LAUNCHES
    measured("gpu_10000_launches", access_rate_s=_best_s(benchmark))
