"""Energy per kernel name from coarse power logs (cosim.timeline.name_energy), energy counters and the documented
averaging window.  Expected values come from the generator's own truth (tests/gpu_energy_made.py: the board's power
is built launch by launch there) or from hand computations written here."""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import pytest
from gpu_energy_made import made_run
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from cosim.timeline.energy_counter import counter_energy
from cosim.timeline.logged_run import documented_window_s
from cosim.timeline.measured_energy import kernel_energy
from cosim.timeline.name_energy import estimate
from cosim.timeline.name_shares import nnls


def _estimate(run, **kw):
    period = float(np.median(np.diff(run.samples["time_s"])))
    opts = dict(offset_s=0.0, period_s=period, lags_s=(-0.5, 1.0), doc_window_s=1.0, power_limit_w=run.limit_w, replicates=100)
    return estimate(run.kernels, run.samples, **{**opts, **kw})


def test_nnls_by_hand():
    # an exact non-negative solution: 1 + 2 = 3, 1 = 1, 1 = 1
    x = np.array([[1.0, 1.0], [1.0, 0.0], [1.0, 0.0]])
    assert nnls(x.T @ x, x.T @ np.array([3.0, 1.0, 1.0])) == pytest.approx([1.0, 2.0])
    # identity design: the least-squares answer clipped at zero, coordinate by coordinate
    assert nnls(np.eye(3), np.array([2.0, -1.0, 0.5])) == pytest.approx([2.0, 0.0, 0.5])


@settings(max_examples=60)
@given(
    # columns as the fit builds them (a column of ones, shares of time in 0-1): 0, or at least 1e-3
    x=arrays(np.float64, st.tuples(st.integers(6, 12), st.integers(1, 4)), elements=st.just(0.0) | st.floats(1e-3, 5.0)),
    y=arrays(np.float64, 12, elements=st.floats(-3.0, 10.0)),
)
def test_nnls_is_the_best_of_every_subsets_least_squares(x, y):
    """Truth by enumeration: the non-negative least-squares optimum is the best, over every subset of columns, of that
    subset's unconstrained least squares where all its coefficients are >= 0 (the others 0).  Both ways out of nnls
    (every coefficient positive at once, or the active set) meet it."""
    import itertools

    y = y[: len(x)]
    assume(np.linalg.matrix_rank(x) == x.shape[1] and np.linalg.cond(x) < 1e6)
    best = math.inf
    for k in range(x.shape[1] + 1):
        for cols in itertools.combinations(range(x.shape[1]), k):
            b = np.zeros(x.shape[1])
            if cols:
                b[list(cols)] = np.linalg.lstsq(x[:, cols], y, rcond=None)[0]
            if (b >= -1e-12).all():
                best = min(best, float(np.sum((y - x @ np.maximum(b, 0)) ** 2)))
    got = nnls(x.T @ x, x.T @ y)
    assert (got >= 0).all()
    assert float(np.sum((y - x @ got) ** 2)) == pytest.approx(best, rel=1e-7, abs=1e-9)


def test_phased_one_second_means_give_each_name_within_10_percent():
    run = made_run(seed=3, mix="phased", duration_s=300.0, period_s=1.0, window_s=1.0)
    est = _estimate(run)
    assert est.search.window_s == pytest.approx(1.0) and abs(est.search.lag_s) <= 0.1  # the sensor's, found from the log
    table = est.table.set_index("kernel")
    total = sum(run.busy_s.values())
    big = [n for n in run.truth_j if run.busy_s[n] >= 0.05 * total]
    numbers = [n for n in big if table.loc[n, "energy_j"] == table.loc[n, "energy_j"]]
    assert len(numbers) >= 0.75 * len(big)
    for n in numbers:
        assert table.loc[n, "energy_j"] == pytest.approx(run.truth_j[n], rel=0.10)
    assert est.kernel_lo_j <= sum(run.truth_j.values()) <= est.kernel_hi_j
    assert (table["power_w"].dropna() <= run.limit_w).all()


def test_names_in_lockstep_are_one_group_and_get_no_number_each():
    run = made_run(seed=2, mix="locked", duration_s=60.0, period_s=1.0, names=3)
    est = _estimate(run)
    table = est.table.set_index("kernel")
    group = [k for k in table.index if " + " in k]
    assert len(group) == 1 and set(group[0].split(" + ")) == set(run.truth_j)
    for name in run.truth_j:  # each member: flagged, no number, the reason names the group
        assert table.loc[name, "flags"] == "not_identifiable" and math.isnan(table.loc[name, "energy_j"])
        assert "moves with" in table.loc[name, "reason"]
    assert est.kernel_lo_j <= sum(run.truth_j.values()) <= est.kernel_hi_j  # the pooled energy holds


def test_a_power_above_the_boards_limit_is_refused():
    run = made_run(seed=3, mix="phased", duration_s=120.0, period_s=1.0)
    est = _estimate(run, power_limit_w=80.0)  # idle alone is 45 W: most names imply more than 80 W
    flagged = est.table[est.table["reason"].fillna("").str.contains("above the board's 80 W limit")]
    assert len(flagged) >= 1 and flagged["energy_j"].isna().all()
    assert (est.table["power_w"].dropna() <= 80.0).all()


def test_fit_and_one_by_one_launches_agree_where_launches_resolve():
    """Instant readings every 50 ms, launches of 0.3-1.2 s: today's rule (each launch's readings) resolves every
    launch; the per-name fit over all readings gives the same energy per name within 3 %."""
    run = made_run(seed=5, mix="phased", duration_s=60.0, period_s=0.05, window_s=0.0, names=3, kernel_s=(0.3, 1.2), noise_w=0.5)
    est = _estimate(run, window_s=0.0).table.set_index("kernel")
    one_by_one = kernel_energy(run.kernels, run.samples, window_s=0.0, min_samples=2)
    compared = 0
    for name, rows in one_by_one.groupby("kernel"):
        if rows["measured_energy_j"].notna().all():
            assert est.loc[name, "energy_j"] == pytest.approx(rows["measured_energy_j"].sum(), rel=0.03)
            compared += 1
    assert compared >= 2


def test_energy_counter_wraps_and_resets_by_hand():
    t = np.arange(6.0)  # 100 W for 5 s: 500 J
    p = np.full(6, 100.0)
    m = 2.0**32 * 1e-3  # a 32-bit mJ counter wraps at 4,294,967.296 J
    counter = np.array([m - 150.0, m - 50.0, 50.0, 150.0, 3.0, 103.0])  # wraps after 1 s; the driver reloads after 3 s
    got = counter_energy(t, counter, p)
    assert (got.wraps, got.resets) == (1, 1)
    assert got.total_j == pytest.approx(500.0)  # the reset's step taken from the integrated power (100 J)
    assert got.between(t, 0.0, 2.0) == pytest.approx(200.0)


def test_documented_window_follows_nvml():
    assert documented_window_s("power.draw", "NVIDIA A100-PCIE-40GB", 1.0)[0] == 0.0  # GA100: instantaneous
    assert documented_window_s("power.draw", "NVIDIA RTX A4500", 0.0)[0] == 1.0  # Ampere except GA100: 1 s mean
    assert documented_window_s("power.draw", "NVIDIA H100 80GB HBM3", 0.0)[0] == 1.0
    assert documented_window_s("power.draw.instant", "NVIDIA H100 80GB HBM3", 1.0)[0] == 0.0
    value, why = documented_window_s("power.draw", None, 1.0)
    assert value == 1.0 and why.startswith("assumed")


def test_cli_takes_run_energy_from_the_counter_and_writes_names(tmp_path):
    from helpers import run_cosim as cosim

    run = made_run(seed=4, mix="phased", duration_s=40.0, period_s=0.5, window_s=1.0, names=2)
    s = run.samples
    base = 1_000_000.0  # J already on the counter when the log starts
    energy_mj = np.round((base + np.r_[0.0, np.cumsum(np.diff(s["time_s"]) * (s["power_w"].to_numpy()[1:] + 3.0))]) * 1e3)
    lines = ["index, name, timestamp, power.draw [W], power.limit [W], total_energy_consumption [mJ]"]
    for t, w, e in zip(s["time_s"], s["power_w"], energy_mj):
        stamp = (pd.Timestamp("2026-01-01 10:00:00") + pd.Timedelta(seconds=float(t))).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        lines.append(f"0, NVIDIA RTX A4500, {stamp}, {w:.2f} W, 200.00 W, {int(e)} mJ")
    log = tmp_path / "power.csv"
    log.write_text("\n".join(lines) + "\n")
    trace = tmp_path / "trace.csv"
    rows = [
        f"{round(a * 1e9)},{round((b - a) * 1e9)},{i},,,,,,,,,,,,,,GPU (0),1,,7,{k}"
        for i, (k, a, b) in enumerate(zip(run.kernels["kernel"], run.kernels["start_s"], run.kernels["end_s"]))
    ]
    trace.write_text(
        "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),"
        "Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n" + "\n".join(rows) + "\n"
    )
    zero = f"2026/01/01 10:00:{0:02d}.000"
    out = cosim("gpu-energy", log, trace, "--trace-zero", zero, "-o", tmp_path / "e.csv", "--no-progress")
    assert out.returncode == 0, out.stderr
    counter_j = (energy_mj[-1] - energy_mj[0]) * 1e-3
    assert f"run energy {counter_j:.6g} J" in out.stdout and "from the energy counter (0 wrap(s), 0 reset(s)" in out.stdout
    names = pd.read_csv(tmp_path / "e-names.csv")
    assert {"kernel", "launches", "busy_s", "energy_j", "energy_j_lo", "energy_j_hi", "flags"} <= set(names.columns)
    assert set(run.truth_j) <= set(names["kernel"])


def test_ten_thousand_launches_and_a_thousand_readings_within_five_seconds():
    run = made_run(seed=7, mix="phased", duration_s=1000.0, period_s=1.0, names=8, kernel_s=(0.01, 0.1))
    kernels = run.kernels.iloc[:10_000]
    assert len(kernels) == 10_000 and len(run.samples) == 1000
    start = time.perf_counter()
    kernel_energy(kernels, run.samples, window_s=1.0)
    estimate(kernels, run.samples, offset_s=0.0, period_s=1.0, lags_s=(-0.5, 1.0), doc_window_s=1.0)
    assert time.perf_counter() - start <= 5.0


def test_dcgm_totec_becomes_the_energy_counter(tmp_path):
    from cosim.readers.gpu_logs import read_power_log

    log = tmp_path / "dmon.log"
    rows = ["# Entity  POWER  TOTEC", "      Id      W     mJ"]
    rows += [f"   GPU 0  {100.0 + i:.1f}  {5_000_000 + 100_500 * i}" for i in range(5)]  # mJ: 100.5 J a second
    log.write_text("\n".join(rows) + "\n")
    samples = read_power_log(log, period_s=1.0)
    assert samples["energy_j"].tolist() == pytest.approx([5000.0 + 100.5 * i for i in range(5)])
    got = counter_energy(samples["time_s"].to_numpy(), samples["energy_j"].to_numpy(), samples["power_w"].to_numpy())
    # the counter: 4 x 100.5 J; the readings' trapezoid: 100.5 + 101.5 + 102.5 + 103.5 J
    assert got.total_j == pytest.approx(402.0) and got.integrated_j == pytest.approx(408.0)
    assert got.difference == pytest.approx(402.0 / 408.0 - 1)


def test_time_beside_another_name_is_split_by_hand():
    from cosim.timeline.name_shares import activity, window_share

    # a runs 0-2 s (two launches, 0-1.5 and 1-2, overlapping: its busy time is their union), b runs 1-3 s
    kernels = pd.DataFrame({"kernel": ["a", "a", "b"], "start_s": [0.0, 1.0, 1.0], "end_s": [1.5, 2.0, 3.0]})
    act = activity(kernels, offset_s=10.0)
    got = dict(zip(act.names, zip(act.launches, act.busy_s, act.shared_s)))
    assert got["a"] == pytest.approx((2, 2.0, 1.5)) and got["b"] == pytest.approx((1, 2.0, 1.5))  # 1 s alone + 1 s / 2
    assert act.union_s == pytest.approx(3.0)
    a = act.names.index("a")
    # a 1 s window ending at 11.5 s (10 s offset) holds 1 s of a; one ending at 13.0 s none; instant at 12.5 s: no
    assert window_share(act.edges[a], act.cumulative[a], np.array([11.5, 13.0]), 1.0, 0.0) == pytest.approx([1.0, 0.0])
    assert window_share(act.edges[a], act.cumulative[a], np.array([11.9, 12.5]), 0.0, 0.0) == pytest.approx([1.0, 0.0])
