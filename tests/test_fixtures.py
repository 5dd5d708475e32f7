"""The shared hand-built run obeys physics, and any input cosim accepts does too.

The invariants are worked out here from the stats text and the models' published limits, never with cosim's own
checks: epochs tile time; no CPU counts more cycles than its clock ticks (f * t, + 0.5 % for gem5's whole-tick clock
periods, + 1 cycle at the edge); no core counts more events per active cycle than it can issue.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import BIG_PERIODS, LITTLE_PERIODS, biglittle_config, biglittle_dumps, write_stats
from hypothesis import given, settings
from hypothesis import strategies as st

from cosim import ClusterSpec, CosimError, CosimWarning, load_model, power_timeline, read_config, read_stats

SPECS = [("big", "system.bigCluster", "cortex-a15-walker2017"), ("little", "system.littleCluster", "cortex-a7-gemstone2018")]
PERIOD = {"bigCluster": "system.bigCluster.clk_domain.clock", "littleCluster": "system.littleCluster.clk_domain.clock"}
# events per active cycle a core can count (Cortex-A15 / A7 MPCore TRMs, chapter 1): instructions 3 / 2, L1D 2 / 1
ISSUE = {"bigCluster": 3, "littleCluster": 2}
L1D = {"bigCluster": 2, "littleCluster": 1}


def _cpus(d, cluster):
    return [f"system.{cluster}.cpus{i}" for i in range(2)]


def physics_violations(dumps: list[dict[str, float]]) -> list[str]:
    """Every broken invariant in the dumps, worked out from the numbers alone (1e12 ticks/s)."""
    out = []
    for n, d in enumerate(dumps):
        if n and d["finalTick"] - d["simTicks"] != dumps[n - 1]["finalTick"]:
            out.append(f"dump {n} does not start where dump {n - 1} ends")
        for cluster, period in PERIOD.items():
            ticked = d["simTicks"] / d[period]
            for cpu in _cpus(d, cluster):
                if d[f"{cpu}.numCycles"] > ticked * 1.005 + 1:
                    out.append(f"dump {n}: {cpu} counts {d[f'{cpu}.numCycles']} cycles, its clock ticks {ticked:.0f}")
                active = d[f"{cpu}.numCycles"] - d[f"{cpu}.idleCycles"]
                insts = max(v for k, v in d.items() if k.startswith(cpu) and "Insts" in k)
                if insts > ISSUE[cluster] * active or d[f"{cpu}.dcache.overallAccesses::total"] > L1D[cluster] * active:
                    out.append(f"dump {n}: {cpu} issues more per active cycle than the core can")
    return out


def test_the_shared_fixture_obeys_physics():
    assert physics_violations(biglittle_dumps()) == []
    for period in (*BIG_PERIODS, 714, 1667):  # the clocks tests/test_dse.py runs it at
        assert physics_violations(biglittle_dumps(big_periods=(period,) * 3)) == []
    assert LITTLE_PERIODS[0] == biglittle_dumps()[0]["system.littleCluster.clk_domain.clock"]


def test_the_check_sees_what_the_old_fixture_got_wrong():
    """The fixture before issue #28 gave each CPU 1-4 M cycles per 1 ms epoch at 1.0-1.8 GHz."""
    old = biglittle_dumps()
    for n, d in enumerate(old):
        for i in range(2):
            d[f"system.bigCluster.cpus{i}.numCycles"] = 1_000_000 * (n + 1 + i)
            d[f"system.littleCluster.cpus{i}.numCycles"] = 700_000 * (n + 1 + i)
    assert len(physics_violations(old)) >= 5


def _timeline(folder, dumps):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.ini").write_text(biglittle_config())
    write_stats(folder / "stats.txt", dumps)
    specs = [ClusterSpec(n, p, load_model(m)) for n, p, m in SPECS]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CosimWarning)
        return power_timeline(read_stats(folder / "stats.txt"), read_config(folder / "config.ini"), specs)


def test_the_shared_fixture_is_priced_without_a_flag_of_doubt(tmp_path):
    timeline = _timeline(tmp_path, biglittle_dumps())
    assert not timeline["implausible"].any() and not timeline["flags"].str.contains("cumulative").any()
    assert np.allclose(timeline["start_s"].to_numpy()[2:], timeline["end_s"].to_numpy()[:-2])


@settings(max_examples=25, deadline=None)
@given(
    scale=st.lists(st.floats(0.0, 3.0), min_size=4, max_size=4),
    idle=st.floats(0.0, 0.9),
)
def test_any_run_cosim_accepts_obeys_physics(tmp_path_factory, scale, idle):
    """Property: cosim refuses the run, or its cycles are within clock x time (and the rest holds)."""
    dumps = biglittle_dumps()
    for d in dumps:
        for j, cpu in enumerate(_cpus(d, "bigCluster") + _cpus(d, "littleCluster")):
            cycles = round(d[f"{cpu}.numCycles"] * scale[j])
            d[f"{cpu}.numCycles"] = cycles
            d[f"{cpu}.idleCycles"] = round(cycles * idle)
            for key in [k for k in d if k.startswith(cpu + ".") and k[len(cpu) + 1 :] not in ("numCycles", "idleCycles")]:
                d[key] = 0  # no events: only the cycle bound can fail
        for key in [k for k in d if ".l2." in k]:
            d[key] = 0
    try:
        _timeline(tmp_path_factory.mktemp("run"), dumps)
    except CosimError as err:
        assert "cycles" in str(err)
        if "the clock changed" in str(err):  # not a violation: a change whose time at each clock is unknown
            assert unplaceable_clock_changes(dumps) != []
            return
        assert physics_violations(dumps) != []
        return
    assert physics_violations(dumps) == []


def unplaceable_clock_changes(dumps: list[dict[str, float]]) -> list[str]:
    """Epochs whose clock changed since the dump before and whose busiest core ticked neither the cycles of one clock
    over the whole epoch nor a count between the two clocks' (f * t each, 0.5 % + 2 cycles of slack): its share of
    time at each clock cannot be found from the cycles."""
    out = []
    for n in range(1, len(dumps)):
        d, before = dumps[n], dumps[n - 1]
        for cluster, period in PERIOD.items():
            if d[period] == before[period]:
                continue
            new, old = d["simTicks"] / d[period], d["simTicks"] / before[period]
            counted = max(d[f"{cpu}.numCycles"] for cpu in _cpus(d, cluster))
            slack = new * 0.005 + 2
            if counted > 0 and not min(old, new) - slack <= counted <= max(old, new) + slack:
                out.append(f"dump {n}: {cluster} changed clock and its busiest core counted {counted} cycles")
    return out


@pytest.mark.parametrize("cycles_over", [1.004, 1.02])
def test_the_cycle_bound_is_half_a_percent(tmp_path, cycles_over):
    dumps = biglittle_dumps()
    ticked = dumps[0]["simTicks"] / dumps[0][PERIOD["bigCluster"]]
    dumps[0]["system.bigCluster.cpus0.numCycles"] = round(ticked * cycles_over)
    if cycles_over < 1.005:
        assert not _timeline(tmp_path, dumps)["implausible"].any()
    else:
        with pytest.raises(CosimError, match=r"epoch 0, cluster 'big': system.bigCluster.cpus0.numCycles is 183\d+ cycles"):
            _timeline(tmp_path, dumps)


def test_the_whatif_refuses_impossible_cycles_too(tmp_path):
    """The what-if's busy time is cycles / f: more cycles than the clock ticks would be clamped silently, so it refuses."""
    from cosim.dse.whatif import recorded_run

    dumps = biglittle_dumps()
    dumps[1]["system.littleCluster.cpus1.numCycles"] = 2_100_000  # 1.5x what 1 ms at 1.4 GHz holds
    (tmp_path / "config.ini").write_text(biglittle_config())
    write_stats(tmp_path / "stats.txt", dumps)
    specs = [ClusterSpec(n, p, load_model(m)) for n, p, m in SPECS]
    with pytest.raises(CosimError, match=r"epoch 1, cluster 'little': system.littleCluster.cpus1.numCycles is 2100000 cycles"):
        recorded_run(read_stats(tmp_path / "stats.txt"), read_config(tmp_path / "config.ini"), specs)


def test_active_cycles_are_bounded_too(tmp_path):
    """Ticked cycles (numCycles - idleCycles, the what-if's busy time) exceed the clock only with a negative idle count."""
    dumps = biglittle_dumps()
    dumps[2]["system.bigCluster.cpus1.idleCycles"] = -50_000  # 5 % above what 1 ms at 1 GHz holds
    with pytest.raises(CosimError, match=r"epoch 2, cluster 'big': system.bigCluster.cpus1.numCycles - idleCycles is 1050000"):
        _timeline(tmp_path, dumps)


def test_the_cli_checks_cycles_on_its_filtered_parse(tmp_path):
    """cosim power parses only the stats it needs (stats_needed); the cycle counters are among them, whatever the model."""
    from helpers import BIGLITTLE_ARGS, run_cosim

    dumps = biglittle_dumps()
    dumps[0]["system.bigCluster.cpus0.numCycles"] *= 2
    (tmp_path / "config.ini").write_text(biglittle_config())
    write_stats(tmp_path / "stats.txt", dumps)
    result = run_cosim("power", tmp_path / "stats.txt", *BIGLITTLE_ARGS, "-o", tmp_path / "p.csv")
    assert result.returncode == 2 and "numCycles is 3597122 cycles" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "p.csv").exists()


def test_cycles_a_cpu_slept_across_a_dump_are_accepted(tmp_path):
    """A real bundled-gem5 run (tests/data/gem5-minor-sleep-1000MHz/README.md): the Minor CPU's last epoch counts 261
    cycles more than its clock ticked in it, the ones it slept in the epoch before; priced, not refused."""
    from helpers import REPO, run_cosim

    run = REPO / "tests" / "data" / "gem5-minor-sleep-1000MHz"
    result = run_cosim("power", run, "-o", tmp_path / "p.csv")
    assert result.returncode == 0, result.stderr
    import pandas as pd

    little = pd.read_csv(tmp_path / "p.csv").query("cluster == 'littleCluster'")
    assert len(little) == 39 and not little["implausible"].any()


CYCLE_STATS = ("numCycles", "idleCycles", "tickCycles", "power_state.pwrStateResidencyTicks::ON")


def cycle_shape(stats, epochs_ticks, periods: dict[str, np.ndarray]) -> dict[str, tuple]:
    """Per cluster of a gem5 SE run: which cycle statistics its CPUs print, and whether, in every epoch a CPU ran in
    whole, it was ON the whole epoch, counted every clock cycle (f * t to 0.5 % + 1), its stalled cycles (idleCycles)
    sat inside numCycles and, where it prints tickCycles (Minor), tickCycles + idleCycles = numCycles."""
    shape = {}
    for cluster, period in periods.items():
        cpus = [f"system.{cluster}.cpus{i}" for i in range(2)]
        printed = tuple(s for s in CYCLE_STATS if all(f"{c}.{s}" in stats for c in cpus))
        facts = []
        for c in cpus:
            num = np.asarray(stats[f"{c}.numCycles"], dtype=float)
            ticked = epochs_ticks / period
            whole = num > 0.99 * ticked  # ran through the epoch (not its first/last partial one)
            idle = np.asarray(stats[f"{c}.idleCycles"], dtype=float) if f"{c}.idleCycles" in stats else np.zeros_like(num)
            on = np.asarray(stats[f"{c}.power_state.pwrStateResidencyTicks::ON"], dtype=float)
            facts.append(
                (
                    bool(whole.any()),
                    bool((on[whole] == epochs_ticks[whole]).all()),
                    bool((num[whole] <= ticked[whole] * 1.005 + 1).all()),
                    bool(((idle >= 0) & (idle <= num)).all()),
                    bool((idle[whole] > 0).any()),  # some whole epochs have stalled cycles
                    "tickCycles" not in printed or bool((stats[f"{c}.tickCycles"] + idle == num).all()),
                )
            )
        shape[cluster] = (printed, all(all(f) for f in facts))
    return shape


def test_the_fixture_has_the_cycle_shape_of_a_recorded_gem5_run(tmp_path):
    """#37 item 5: the hand-built run's cycle statistics look as the recorded gem5 v24 SE run beside it does (O3 big,
    Minor LITTLE, traces/cosim-v24-se-biglittle-1800-1400MHz): no CPU is ever clock-gated in SE mode, every
    running CPU counts every cycle of its clock, and its idle cycles are stalls inside those cycles, not WFI."""
    from pathlib import Path

    real = read_stats(Path(__file__).parents[1] / "traces" / "cosim-v24-se-biglittle-1800-1400MHz" / "stats.txt.gz")
    periods = {c: np.asarray(real[PERIOD[c]], dtype=float) for c in PERIOD}
    real_shape = cycle_shape(real, np.asarray(real["simTicks"], dtype=float), periods)
    assert real_shape == {
        "bigCluster": (("numCycles", "idleCycles", "power_state.pwrStateResidencyTicks::ON"), True),
        "littleCluster": (CYCLE_STATS, True),
    }
    folder = tmp_path / "fixture"
    folder.mkdir()
    write_stats(folder / "stats.txt", biglittle_dumps())
    ours = read_stats(folder / "stats.txt")
    periods = {c: np.asarray(ours[PERIOD[c]], dtype=float) for c in PERIOD}
    assert cycle_shape(ours, np.asarray(ours["simTicks"], dtype=float), periods) == real_shape
