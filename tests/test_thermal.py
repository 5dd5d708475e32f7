"""The cluster thermal model and the leakage-temperature loop: hand solutions of the node's equation, the loop's
fixed point against its algebra, the options on the command line, and the fitted constants on held-out programs."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from helpers import GEM5_RUNS, REPO, needs_shared, run_cosim

from cosim.errors import CosimError
from cosim.models.thermal import Thermal, series_c, steady_c, step_c
from cosim.timeline.temperature import Loop, point_temperature_c, run_temperature_c

NODE = Thermal(r_k_per_w=5.0, tau_s=4.0, ambient_c=40.0)
FAN = Thermal(r_k_per_w=5.0, tau_s=4.0, ambient_c=40.0, fan_on_c=56.0, fan_factor=0.5)


def test_one_step_is_the_exponential_by_hand():
    # 2 W from 40 °C: target 40 + 5 * 2 = 50 °C; after one time constant 50 - 10 / e, mean 50 - 10 (1 - 1/e)
    end, mean = step_c(NODE, 40.0, 2.0, 4.0)
    assert float(end) == pytest.approx(50 - 10 / math.e, rel=1e-12)
    assert float(mean) == pytest.approx(50 - 10 * (1 - 1 / math.e), rel=1e-12)


def test_the_fan_holds_the_die_at_its_threshold_or_lowers_r_above_it():
    # fan idle: 40 + 5 * 2 = 50; fan on: 40 + 2.5 * 8 = 60 (above the threshold); between, held at 56
    assert steady_c(NODE, 8.0) == pytest.approx(80.0)
    assert steady_c(FAN, [2.0, 8.0, 3.5]) == pytest.approx([50.0, 60.0, 56.0])


def test_a_series_is_the_same_however_its_constant_power_is_cut():
    whole = series_c(NODE, [2.0], [8.0], start_c=40.0)
    cut = series_c(NODE, [2.0] * 8, [1.0] * 8, start_c=40.0)
    # the mean over 8 s from the hand solution, and the same as the mean of the eight 1 s means
    assert whole[0] == pytest.approx(50 - 10 * 4 / 8 * (1 - math.exp(-2)), rel=1e-12)
    assert cut.mean() == pytest.approx(whole[0], rel=1e-12)


def test_the_loop_finds_the_steady_state_of_a_leakage_that_grows_with_temperature():
    # P(T) = 2 W + 0.02 W/K (T - 50): T = 40 + 5 P(T) -> T = (40 + 5 (2 - 1)) / (1 - 0.1) = 50 °C
    def price(t):
        return 2.0 + 0.02 * (np.asarray(t) - 50.0) + 0.0 * np.asarray(t)

    loop = Loop(thermal=NODE)
    t = run_temperature_c(loop, price, np.full(100, 1e-3))
    assert t == pytest.approx(np.full(100, (40 + 5 * (2 - 0.02 * 50)) / (1 - 5 * 0.02)), abs=2e-3)
    # from a stated cold start, 0.1 s of 1 ms epochs warm exponentially: d(T - T_ss)/dt = -(1 - R g)(T - T_ss) / tau,
    # the loop gain R g = 0.1 lengthens tau by 1 / 0.9; the last epoch's mean is its middle's, 99.5 ms in
    cold = run_temperature_c(Loop(thermal=NODE, start_c=40.0), price, np.full(100, 1e-3))
    tau_eff = 4.0 / (1 - 5 * 0.02)
    t_ss = 50.0
    assert cold[-1] == pytest.approx(t_ss + (40 - t_ss) * math.exp(-0.0995 / tau_eff), abs=2e-4)
    assert np.all(np.diff(cold) > 0)


def test_a_leakage_runaway_has_no_temperature_and_a_settling_point_beside_it_keeps_its_own():
    # loop gain R g = 5 * 0.25 > 1 at the first point: no steady state; 5 * 0.02 at the second: (40 + 5) / 0.9 = 50 °C
    gain = np.array([0.25, 0.02])
    t = point_temperature_c(Loop(thermal=NODE), lambda t: 2.0 + gain * (np.asarray(t) - 50.0), np.ones(2))
    assert np.isnan(t[0]) and t[1] == pytest.approx(50.0, abs=2e-3)
    assert run_temperature_c(Loop(thermal=NODE), lambda t: 2.0 + 0.25 * (np.asarray(t) - 50.0), np.full(3, 1e-3)) is None


@needs_shared
def test_power_prices_at_the_temperature_its_own_power_makes_and_temperature_overrides(tmp_path):
    """cortex-a15-walker2017 on a one-dump gem5 run: the die settles where T = T_amb + R * P(T) (the constants'
    file, by hand), static power rises with the ambient, and --temperature prices at the stated one, unflagged."""
    run = GEM5_RUNS / "cosim-v24-se-o3-600MHz"
    constants = json.loads((REPO / "models" / "thermal-xu3.json").read_text())["clusters"]["xu3-a15"]
    r = constants["r_k_per_w"]["value"]
    rows = {}
    for name, extra in (("cool", ["--ambient-c", "30"]), ("warm", ["--ambient-c", "60"]), ("stated", ["--temperature", "70"])):
        out = tmp_path / f"{name}.csv"
        result = run_cosim("power", run, "--model", "cortex-a15-walker2017", *extra, "-o", out)
        assert result.returncode == 0, result.stderr
        rows[name] = pd.read_csv(out).iloc[0]
    for name, ambient in (("cool", 30.0), ("warm", 60.0)):
        assert rows[name]["temperature_c"] == pytest.approx(ambient + r * rows[name]["power_w"], abs=2e-3)
        assert "temperature_predicted" in rows[name]["flags"] and "start_steady" in rows[name]["flags"]
    assert rows["warm"]["static_w"] > rows["cool"]["static_w"]
    assert rows["stated"]["temperature_c"] == 70.0 and "temperature_predicted" not in rows["stated"]["flags"]


@needs_shared
def test_die_temperature_on_the_held_out_programs_is_within_the_goal():
    """The constants as stated, each ARMPM session from its first sample through its measured power, its ambient the
    one fitted on its training programs (stated in the file): test programs' samples within 1.5 K mean error."""
    from cosim.fit.thermal import read_sessions, simulate

    block = json.loads((REPO / "models" / "thermal-xu3.json").read_text())["clusters"]["xu3-a15"]
    fan = block["fan"]["armpm"]
    errors = []
    for s in read_sessions(GEM5_RUNS.parent):
        ambient = block["armpm_session_ambient_c"][s.name]
        pred = simulate(
            s, ambient_c=ambient, r=block["r_k_per_w"]["value"], tau=block["tau_s"]["value"], fan_on=fan["on_c"], fan_factor=fan["factor"]
        )
        errors.append((pred - s.temperature_c)[s.test])
    err = np.concatenate(errors)
    assert err.size > 20_000
    assert np.mean(np.abs(err)) < 1.5
    assert abs(np.mean(err)) < 0.5


@needs_shared
def test_the_whatif_at_the_recorded_clock_has_the_timelines_temperature(tmp_path):
    """One run, two ways: cosim power's epoch-by-epoch loop and the what-if's one temperature per point agree at the
    recorded clock (a one-dump run: the same steady state of the same power)."""
    run = GEM5_RUNS / "cosim-v24-se-o3-600MHz"
    power, what = tmp_path / "p.csv", tmp_path / "w.csv"
    assert run_cosim("power", run, "--model", "cortex-a15-walker2017", "-o", power).returncode == 0
    result = run_cosim("whatif", run, "--model", "cortex-a15-walker2017", "--freqs", "cpu_clk_domain=600", "-o", what)
    assert result.returncode == 0, result.stderr
    timeline, row = pd.read_csv(power).iloc[0], pd.read_csv(what).iloc[0]
    assert row["cpu_clk_domain_temperature_c"] == pytest.approx(timeline["temperature_c"], abs=0.01)
    assert "temperature_predicted:cpu_clk_domain" in row["flags"]


@needs_shared
def test_an_ambient_no_die_has_is_refused_in_one_line_and_sweep_states_its_own(tmp_path):
    run = GEM5_RUNS / "cosim-v24-se-o3-600MHz"
    result = run_cosim("power", run, "--model", "cortex-a15-walker2017", "--ambient-c", "500", "-o", tmp_path / "p.csv")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "--ambient-c 500" in result.stderr
    out = tmp_path / "s.csv"
    result = run_cosim("sweep", run, "--model", "cortex-a15-walker2017", "--ambient-c", "30", "-o", out)
    cool = pd.read_csv(out).iloc[0]
    assert result.returncode == 0, result.stderr
    result = run_cosim("sweep", run, "--model", "cortex-a15-walker2017", "--ambient-c", "60", "-o", out)
    assert result.returncode == 0, result.stderr
    assert pd.read_csv(out).iloc[0]["energy_j"] > cool["energy_j"]  # hotter room, more leakage


def test_whatif_points_beyond_the_trained_temperatures_are_flagged():
    """A busy A15 cluster at 200-1800 MHz: its predicted die temperature rises with the clock; the points hotter than
    the temperatures walker2017's term was fitted on (its file's trained_c) carry temperature_outside_training:big."""
    from cosim import load_model
    from cosim.dse.whatif import ClusterActivity, RecordedRun, whatif

    model = load_model("cortex-a15-walker2017")
    n = 50
    duration = np.full(n, 1e-3)
    busy = duration * 0.9
    big = ClusterActivity("big", model, np.full(n, 1800.0), np.full(n, 5e-3), np.full(n, 1e-4), busy, busy * 0.1)
    table = whatif(RecordedRun(duration, [big]), pd.DataFrame({"big_freq_mhz": [200.0, 1000.0, 1800.0]}))
    t = table["big_temperature_c"].to_numpy()
    assert np.all(np.diff(t) > 0)
    hi = model.raw["static_form"]["temperature"]["trained_c"][1]
    flagged = table["flags"].str.contains("temperature_outside_training:big").to_numpy()
    assert (flagged == (t > hi)).all() and flagged.any()
    assert table["flags"].str.contains("temperature_predicted:big").all()


def test_a_stated_die_temperature_and_a_predicted_ones_options_are_refused_together():
    from cosim import load_model
    from cosim.timeline.temperature import loop_for

    with pytest.raises(CosimError, match="give one or the others"):
        loop_for(load_model("cortex-a15-walker2017"), temperature_c=60.0, ambient_c=30.0, start_c=None)


def test_a_study_prices_its_points_at_the_design_files_ambient():
    """explore's [thermal] reaches the loop as cosim power's --ambient-c does: a cooler ambient leaks less (leakage
    rises with temperature: physics, not a recorded number), and the stated ambient is no longer flagged a default."""
    from cosim.explore.price import price_point

    run = REPO / "traces" / "cosim-v24-se-biglittle-1800-1400MHz"
    default, _ = price_point(run, {})
    cool, _ = price_point(run, {}, thermal={"ambient_c": 20.0, "start_temperature_c": 20.0})
    assert "ambient_default" in default["flags"] and "ambient_default" not in cool["flags"]
    assert "start_steady" not in cool["flags"]
    assert 0 < cool["energy_j"] < default["energy_j"]


def test_a_model_with_a_temperature_term_but_no_thermal_constants_says_so(tmp_path):
    """A copy of a shipped A15 model under another name has its temperature term but no thermal constants (they name
    the models they apply to): it is priced at the training board's temperature, and the rows say so (the
    independent campaign found the change silent)."""
    model = json.loads((REPO / "models" / "cortex-a15-walker2017.json").read_text())
    model["name"] = "my-a15"
    (tmp_path / "my-a15.json").write_text(json.dumps(model))
    run = REPO / "traces" / "cosim-v24-se-biglittle-1800-1400MHz"
    out = tmp_path / "p.csv"
    r = run_cosim("power", run, "--model", tmp_path / "my-a15.json", "--cluster", "big=system.bigCluster", "-o", out)
    assert r.returncode == 0, r.stderr
    flags = pd.read_csv(out)["flags"]
    assert flags.str.contains("temperature_not_predicted").all() and not flags.str.contains("temperature_predicted").any()
