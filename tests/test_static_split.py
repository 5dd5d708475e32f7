"""The static split identified from the boards' rows (issue 50, items 1, 3, 4): the shipped blocks are what the fit of
the measured data gives, physically plausible, and their intervals are what the pricing uses."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from helpers import GEM5_RUNS, POWMON, REPO, needs_shared, run_cosim

from cosim import load_model
from cosim.models.envelope import curve_voltage_v, interval_half_width_w, off_curve_half_width_w, static_at_w
from cosim.models.static_form import static_form

A15 = ("cortex-a15-walker2017", "cortex-a15-gemstone2018", "cortex-a15-armpm-xu3")


@needs_shared
def test_the_shipped_walker_form_is_the_fit_of_its_powmon_training_workloads():
    """Refit here on Powmon's training workloads (CRC-32 of the name not 0 mod 4): the file's a, b, k, kappa.  kappa is
    physically plausible on its own: subthreshold leakage doubles every 15-30 K in bulk CMOS (e.g. Butts & Sohi 2000;
    Liao, He & Lepak, TCAD 2005), kappa = ln 2 / doubling."""
    pytest.importorskip("scipy")
    from cosim.fit.static_rows import powmon_rows
    from cosim.fit.static_split import fit_split, held_out

    model = load_model("cortex-a15-walker2017")
    rows = powmon_rows(model, POWMON)
    test = held_out(rows.group)
    assert len(set(rows.group[test])) == 18 and len(set(rows.group)) == 60
    fitted = fit_split(rows.take(~test))
    block = model.raw["static_form"]
    assert fitted.a == pytest.approx(block["a_w_per_mhz_v2"], rel=1e-5)
    assert fitted.b == pytest.approx(block["b_w_per_v"], rel=1e-5)
    assert fitted.k == pytest.approx(block["k_per_v"], rel=1e-4)
    assert fitted.kappa == pytest.approx(block["temperature"]["kappa_per_k"], rel=1e-4)
    assert math.log(2) / 30 < fitted.kappa < math.log(2) / 15
    for name, (lo, hi) in block["ci95"].items():  # each interval holds its point estimate
        point = block["temperature"]["kappa_per_k"] if name == "kappa_per_k" else block[name]
        assert lo <= point <= hi, name


@pytest.mark.parametrize("name", A15)
def test_the_off_curve_interval_is_the_spread_of_the_bootstrap_refits(name):
    """At 1000 MHz and 1.15 V: the 95th percentile of |(S_r(V) - S_r(V_c)) - (S(V) - S(V_c))| over the file's refits,
    written out here from the file's numbers."""
    model = load_model(name)
    block = model.raw["static_form"]
    reps = np.array(block["bootstrap"]["replicates"])
    f, v = 1000.0, 1.15
    vc = float(curve_voltage_v(model, np.array([f]))[0])
    t_c = float(np.interp(f, *np.array(block["temperature"]["curve_mhz_c"]).T))

    def static(a, b, k, kappa, volt):
        return a * f * volt**2 + b * volt * math.exp(k * (volt - 1)) * math.exp(kappa * (t_c - 50.0))

    point = (block["a_w_per_mhz_v2"], block["b_w_per_v"], block["k_per_v"], block["temperature"]["kappa_per_k"])
    change = static(*point, v) - static(*point, vc)
    spread = [abs(static(*r, v) - static(*r, vc) - change) for r in reps]
    got = off_curve_half_width_w(model, freq_mhz=np.array([f]), voltage_v=np.array([v]))[0]
    assert got == pytest.approx(np.percentile(spread, 95), rel=1e-9)
    assert 0 < got < 0.05 * static(*point, v)


def test_powered_cores_widen_the_interval_by_the_assumed_shares_range():
    """Two of four cores powered: static scaled by 1 - 0.75 + 0.75 * 2/4 = 0.625; the interval widens by
    S * (1 - 2/4) * 0.25 (phi in [0.5, 1.0] around 0.75), S the four-core static power (hand computation)."""
    model = load_model("cortex-a15-walker2017")
    assert model.raw["cores"]["per_core_static_fraction"] == 0.75 and model.raw["cores"]["interval"] == [0.5, 1.0]
    f, v = np.array([1400.0]), np.array([1.0312])
    args = dict(freq_mhz=f, power_w=np.array([1.0]), dpower_dv_w_per_v=np.zeros(1), voltage_u_v=np.zeros(1), voltage_v=v)
    whole = interval_half_width_w(model, **args)[0]
    two = interval_half_width_w(model, **args, static_scale=0.625)[0]
    assert two - whole == pytest.approx(static_at_w(model, f, v)[0] * 0.5 * 0.25, rel=1e-9)


def test_the_three_a15_models_state_one_powered_core_rule():
    cores = [load_model(name).raw["cores"] for name in A15]
    assert all(c == cores[0] for c in cores) and "assumption" in cores[0]["basis"]


@needs_shared
def test_every_row_of_cosim_power_with_the_default_models_has_an_interval(tmp_path):
    """GemStone's A15 and A7 publish no SER: their files state a relative one from held-out Powmon workloads, so the
    big.LITTLE run priced by the default models has power_lo_w <= power_w <= power_hi_w on every row, flagged
    powered_cores_assumed (2 of 4 cores powered)."""
    run = GEM5_RUNS / "cosim-v24-se-biglittle-o3-1800MHz-minor-1400MHz" / "stats.txt"
    out = tmp_path / "p.csv"
    result = run_cosim("power", run, "-o", out)
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(out)
    assert set(table["model"]) == {"cortex-a15-gemstone2018", "cortex-a7-gemstone2018"}
    assert np.isfinite(table[["power_lo_w", "power_hi_w"]].to_numpy()).all()
    assert (table["power_lo_w"] <= table["power_w"]).all() and (table["power_w"] <= table["power_hi_w"]).all()
    assert table["flags"].str.contains("powered_cores_assumed").all()


def test_the_regenerating_script_keeps_a_files_other_lines():
    """Replacing the blocks the script writes by their own values leaves each shipped CPU model file byte for byte."""
    from cosim.fit.static_models import replace_top_level

    written = {name: ("static_form", "cores") for name in A15} | {"cortex-a7-gemstone2018": ("fit_rel",)}
    written["cortex-a15-gemstone2018"] += ("fit_rel",)
    for name, keys in written.items():
        text = (REPO / "models" / f"{name}.json").read_text(encoding="utf-8")
        for key in keys:
            assert replace_top_level(text, key, json.loads(text)[key]) == text, (name, key)


def test_static_power_is_continuous_and_monotone_in_temperature_and_priced_at_the_curve_by_default():
    model = load_model("cortex-a15-walker2017")
    form = static_form(model)
    t = np.linspace(30, 100, 141)
    s = form.static_w(np.full(t.shape, 1800.0), np.full(t.shape, 1.17), t)
    assert (np.diff(s) > 0).all()
    at_curve = form.static_w(1800.0, 1.17, float(form.curve_temperature(1800.0)))
    assert form.static_w(1800.0, 1.17) == pytest.approx(at_curve, rel=1e-12)


def test_cluster_static_power_at_a_clock_voltage_temperature_and_cores():
    """The thermal loop's function: the file's form at (f, V, T) written out by hand, two of four powered cores
    scaling it by 1 - 0.75 + 0.75 * 2 / 4; the busy cores change nothing (measured: docs/explanation/envelope.md)."""
    from cosim.models.envelope import cluster_static_w

    model = load_model("cortex-a15-walker2017")
    form = model.raw["static_form"]
    f, v, t = 1400.0, 1.03, 70.0
    by_hand = form["a_w_per_mhz_v2"] * f * v**2 + form["b_w_per_v"] * v * math.exp(form["k_per_v"] * (v - 1)) * math.exp(
        form["temperature"]["kappa_per_k"] * (t - form["temperature"]["reference_c"])
    )
    got = cluster_static_w(model, freq_mhz=f, voltage_v=v, temperature_c=t, busy_cores=1, powered_cores=2)
    assert float(got) == pytest.approx(by_hand * 0.625, rel=1e-12)
    assert float(cluster_static_w(model, freq_mhz=f, voltage_v=v, temperature_c=t, busy_cores=4)) == pytest.approx(by_hand, rel=1e-12)
