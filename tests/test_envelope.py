"""The trust envelope (cosim/models/envelope.py): physical extrapolation validated on measured data, core counts,
and gem5's own default configurations run in the bundled gem5, each priced flagged or refused in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import GEM5, POWMON, REPO, needs_gem5, needs_shared
from test_cli import assert_one_line_error, cosim

from cosim.models.envelope import band, cores_factor, extrapolated_voltage, static_at_w
from cosim.models.modelfile import load_model
from cosim.models.static_form import static_form
from cosim.models.walker import static_power_w

CPU_MODELS = ("cortex-a15-walker2017", "cortex-a15-gemstone2018", "cortex-a7-gemstone2018")


@pytest.mark.parametrize("name", CPU_MODELS)
def test_static_above_the_top_clock_rises_with_voltage_and_clock(name):
    """The raw polynomial turns down above the A15's top clock (0.2455 W at 2 GHz, below 0.802 W at 1.8 GHz: the
    issue's refusal); the envelope's form never does, and meets the polynomial at the top of the table."""
    model = load_model(name)
    top_f, top_v = model.vf_points[-1]
    f = np.linspace(top_f * 1.001, top_f * band(model), 20)
    v, _ = extrapolated_voltage(model, f)
    s = static_at_w(model, f, v)
    assert (np.diff(s) > 0).all() and (np.diff(v) > 0).all()
    at_top = float(static_power_w(np.array([top_f]), np.array([top_v]), model.static)[0])
    assert s[0] == pytest.approx(at_top, rel=0.05)
    form = static_form(model)
    assert min(form.a, form.b, form.k) >= 0


def test_static_at_a_table_clock_is_the_published_polynomial_within_its_fit_error():
    """GemStone's gs-A15.params static terms at its 1400 MHz, 1.042 V point and Walker et al.'s asrtpm-A15.params at
    1800 MHz, 1.1741 V, written out by hand: the form is within 2 % of the first (the model publishes no SER) and
    within the second's SER (paper Table III: 0.0517 W)."""
    c = (-681.604059986, 0.117551170367, 2277.16890778, -0.491846201277, -2528.1574686, 0.645456768269, 932.937276293, -0.271180478671)
    f, v = 1400.0, 1.042
    by_hand = c[0] + c[1] * f + c[2] * v + c[3] * f * v + c[4] * v**2 + c[5] * f * v**2 + c[6] * v**3 + c[7] * f * v**3
    assert float(static_at_w(load_model("cortex-a15-gemstone2018"), np.array([f]), np.array([v]))[0]) == pytest.approx(by_hand, rel=0.02)
    w = (-752.5773198197522, 0.15156115764402214, 2506.4031159976585, -0.6025387920783244, -2774.438446189505, 0.7649683490065091)
    w += (1020.9510614494442, -0.31399318221257083)
    f, v = 1800.0, 1.1741
    by_hand = w[0] + w[1] * f + w[2] * v + w[3] * f * v + w[4] * v**2 + w[5] * f * v**2 + w[6] * v**3 + w[7] * f * v**3
    assert float(static_at_w(load_model("cortex-a15-walker2017"), np.array([f]), np.array([v]))[0]) == pytest.approx(by_hand, abs=0.0517)


@needs_shared
def test_static_between_sparse_table_points_follows_the_boards_idle_power():
    """GemStone's A15 table has points 400 MHz apart; at 1600 MHz its polynomial, off the V-f curve it was fitted
    along, overshoots.  The board's measured idle cluster (Powmon 'idle', one thread) is the check: the priced idle
    power's error at 1600 MHz must lie between its errors at the table's 1400 and 1800 MHz (+13 %, +27 %); the raw
    polynomial at the interpolated voltage is +41 %."""
    model = load_model("cortex-a15-gemstone2018")
    table = pd.read_csv(POWMON, sep="\t")
    idle = table[(table["Workload Name"] == "idle") & (table["Core Mask"] == "4,5,6,7")].set_index("Frequency A15")
    beta_cycles = next(t.coefficient for t in model.dynamic if t.name == "0x11")

    def error(f_mhz: float, static_w: float) -> float:
        v = float(np.interp(f_mhz, [p[0] for p in model.vf_points], [p[1] for p in model.vf_points]))
        # the idle cores' few cycles: EPH = per-core cycles/s / MHz, priced by the model's 0x11 term
        dynamic_w = beta_cycles * idle.loc[f_mhz, "Average A15 CycleCount"] / f_mhz * v**2 * f_mhz
        return (static_w + dynamic_w) / idle.loc[f_mhz, "Power A15"] - 1

    def priced(f_mhz: float) -> float:
        v = float(np.interp(f_mhz, [p[0] for p in model.vf_points], [p[1] for p in model.vf_points]))
        return float(static_at_w(model, np.array([f_mhz]), np.array([v]))[0])

    lo, hi = error(1400.0, priced(1400.0)), error(1800.0, priced(1800.0))
    assert 0.10 < lo < hi < 0.30
    assert lo < error(1600.0, priced(1600.0)) < hi
    v1600 = float(np.interp(1600.0, [1400.0, 1800.0], [1.042, 1.183]))
    raw = float(static_power_w(np.array([1600.0]), np.array([v1600]), model.static)[0])
    assert error(1600.0, raw) > 0.35


def test_walker_polynomial_is_never_used_above_its_range():
    model = load_model("cortex-a15-walker2017")
    raw = float(static_power_w(np.array([2000.0]), np.array([1.2521]), model.static)[0])
    # asrtpm-A15.params' static terms written out by hand (as above): the figure the old refusal named, 0.2455 W
    w = (-752.5773198197522, 0.15156115764402214, 2506.4031159976585, -0.6025387920783244, -2774.438446189505, 0.7649683490065091)
    w += (1020.9510614494442, -0.31399318221257083)
    f, v = 2000.0, 1.2521
    by_hand = w[0] + w[1] * f + w[2] * v + w[3] * f * v + w[4] * v**2 + w[5] * f * v**2 + w[6] * v**3 + w[7] * f * v**3
    assert raw == pytest.approx(by_hand, rel=1e-9)
    assert static_at_w(model, np.array([2000.0]), np.array([1.2521]))[0] > 0.802


def test_band_is_stated_in_every_cpu_model_file():
    for name in CPU_MODELS:
        model = load_model(name)
        assert band(model) == 1.125 and "basis" in model.raw["envelope"] and "basis" in model.raw["cores"]


def test_core_count_rule():
    """Per-core static (three quarters, the stated assumption) follows the cores present; the shared quarter stays."""
    model = load_model("cortex-a15-walker2017")
    assert [cores_factor(model, n) for n in (1, 2, 4, 8)] == [0.4375, 0.625, 1.0, 1.75]


def _refit(tmp_path, name: str, rows: pd.DataFrame) -> Path:
    """The A15 refitted by ``cosim fit`` on some Powmon rows, with the published event set."""
    train, model = tmp_path / f"{name}.tsv", tmp_path / f"{name}.json"
    rows.to_csv(train, sep="\t", index=False)
    events = "0x11,0x1b-0x73,0x50,0x6a,0x73,0x14,0x19"
    fitted = cosim("fit", train, "--label", "A15", "--power-col", "Power A15", "--events", events, "--folds", "2", "-o", model)
    assert fitted.returncode == 0, fitted.stderr
    return model


def _table_voltage(data: pd.DataFrame) -> pd.DataFrame:
    """Each row's voltage replaced by its clock's mean: the V-f table, all a gem5 user has."""
    return data.assign(**{"Voltage A15": data.groupby("Frequency A15")["Voltage A15"].transform("mean")})


_REFITS: dict[tuple[str, int], Path] = {}

# validation.toml's target for pricing the next clock up: MAPE <= 6 % with measured and with table voltage; not met
# by the measured-voltage refits given table voltage, where the docs quote what they give instead (envelope.md's table
# and limits.md: 6.74 % at 1800 MHz; envelope.md's choice of form: 6.46 % at 1600 MHz); held to those figures, so a
# change that moves one fails here, either way
_MAPE_NOT_MET = {("measured", 1600, "table"): 6.74, ("measured", 1400, "table"): 6.46}


@needs_shared
@pytest.mark.parametrize("voltage", ["measured", "table"])
@pytest.mark.parametrize(
    ("fitted_on", "up_to", "priced_at"),
    [
        ("measured", 1600, 1800),  # the check: fit <= 1600 MHz, price 1800 MHz (1.125x)
        ("table", 1600, 1800),
        ("measured", 1400, 1600),  # one step down, 1.143x (beyond the band, so with --extrapolate)
    ],
)
def test_a15_refit_prices_the_clock_above_its_data(tmp_path_factory, fitted_on, up_to, priced_at, voltage):
    """Validation on the A15's own measured Powmon data: refit on the rows up to one clock, price the next clock's.

    The printed MAPE is the one computed here from the measured and predicted power, and meets validation.toml's
    target (<= 6 %) where the docs say it does.  The interval's rel_error_per_x (0.8) was chosen on the 1800 MHz rows
    (envelope.md), so its coverage (>= 90 %) is asserted only on the step it was not chosen on: 1400 -> 1600 MHz."""
    tmp_path = tmp_path_factory.mktemp("refit")
    data = pd.read_csv(POWMON, sep="\t")
    if (fitted_on, up_to) not in _REFITS:  # one refit for both voltages
        train = _table_voltage(data) if fitted_on == "table" else data
        _REFITS[fitted_on, up_to] = _refit(tmp_path, f"le{up_to}", train[train["Frequency A15"] <= up_to])
    model = _REFITS[fitted_on, up_to]
    top = tmp_path / f"f{priced_at}.tsv"
    data[data["Frequency A15"] == priced_at].to_csv(top, sep="\t", index=False)
    beyond = () if priced_at / up_to <= 1.125 else ("--extrapolate",)
    out = tmp_path / f"{voltage}.csv"
    result = cosim("apply", model, top, "--compare-with", "Power A15", "--voltage", voltage, *beyond, "-o", out)
    assert result.returncode == 0, result.stderr
    pred = pd.read_csv(out)
    assert pred["extrapolated"].all() and not pred["implausible"].any()
    mape = 100 * float(np.mean(np.abs(pred["power_w"] - pred["measured_w"]) / pred["measured_w"]))
    assert f"MAPE vs 'Power A15': {mape:.2f} %" in result.stdout
    if (up_to, priced_at) == (1400, 1600):
        inside = (pred["measured_w"] >= pred["power_lo_w"]) & (pred["measured_w"] <= pred["power_hi_w"])
        assert inside.mean() >= 0.90
    documented = _MAPE_NOT_MET.get((fitted_on, up_to, voltage))
    if documented is not None:  # the target not met, by what the docs say
        assert round(mape, 2) == documented and mape > 6.0
    else:
        assert mape <= 6.0


@needs_shared
def test_a15_fitted_with_its_1800_mhz_rows_on_table_voltage(tmp_path):
    """In sample, for comparison: fitted on every row (1800 MHz included) with table voltage (measured: 4.10 % at
    1800 MHz); the printed MAPE is the one computed here, below the out-of-sample target (6 %)."""
    data = pd.read_csv(POWMON, sep="\t")
    model = _refit(tmp_path, "all", _table_voltage(data))
    top = tmp_path / "f1800.tsv"
    data[data["Frequency A15"] == 1800].to_csv(top, sep="\t", index=False)
    result = cosim("apply", model, top, "--compare-with", "Power A15", "--voltage", "table", "-o", tmp_path / "t.csv")
    assert result.returncode == 0, result.stderr
    pred = pd.read_csv(tmp_path / "t.csv")
    mape = 100 * float(np.mean(np.abs(pred["power_w"] - pred["measured_w"]) / pred["measured_w"]))
    assert f"MAPE vs 'Power A15': {mape:.2f} %" in result.stdout and mape < 6.0


# --- gem5's own defaults, run in the bundled gem5 -----------------------------------------------------------

SE_PY = GEM5 / "configs" / "deprecated" / "example" / "se.py"
PHASES = str(GEM5 / "workloads" / "phases.aarch64")
_RUNS: dict[tuple, object] = {}


def _gem5(root, name: str, config, *args: str):
    """One small run of the bundled gem5 (niced, cached for the session) with gem5's own command line; its folder."""
    import subprocess

    key = (name, str(config), args)
    if key not in _RUNS:
        out = root / f"envelope-{name}"
        cmd = ["nice", "-n", "10", str(GEM5 / "gem5"), f"--outdir={out}", str(config), *args]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stdout[-1500:] + result.stderr[-1500:]
        _RUNS[key] = out
    return _RUNS[key]


@needs_gem5
@pytest.mark.parametrize(
    ("cpu", "says"),
    [
        ("O3CPU", None),  # A15 default model: 2 GHz is 1.11x its top clock, inside the band
        ("MinorCPU", "2000 MHz is 1.43x cortex-a7-gemstone2018's top trained clock 1400 MHz"),
        ("TimingSimpleCPU", "2000 MHz is 1.43x cortex-a7-gemstone2018's top trained clock 1400 MHz"),
    ],
)
def test_se_py_at_its_2ghz_default(gem5_root, tmp_path, cpu, says):
    run = _gem5(gem5_root, f"se-{cpu}", SE_PY, f"--cpu-type={cpu}", "--caches", "--l2cache", "-c", PHASES, "-o", "1")
    out = tmp_path / "p.csv"
    # the A15 model with its published +-2 SER interval (the default O3 model has none to widen)
    result = cosim("power", run / "stats.txt", *(() if says else ("--model", "cortex-a15-walker2017")), "-o", out)
    if says:
        assert_one_line_error(result, says, "--extrapolate")
        return
    assert result.returncode == 0, result.stderr
    assert "[extrapolated, 1.11x top clock, interval +-" in result.stdout and "[1 of 4 cores: static scaled by 0.438]" in result.stdout
    t = pd.read_csv(out)
    assert (t["freq_mhz"] == 2000).all() and t["extrapolated"].all() and t["flags"].str.contains("extrapolated").all()
    # one core of the cluster: its static share of the A15's 0.802 W at 1800 MHz, raised by the extrapolation
    assert (t["static_w"] > 0.802 * 0.4375).all() and (t["power_hi_w"] - t["power_lo_w"] > 4 * 0.05165).all()


@needs_gem5
def test_se_py_o3_at_2ghz_with_the_default_model_carries_an_interval(gem5_root, tmp_path):
    """cortex-a15-gemstone2018 publishes no SER (its training data is not public); its file states a relative one from
    held-out Powmon workloads (issue 50: 4.754 %), so at 2 GHz its rows carry 2 x that of the power plus the
    extrapolation's part, 0.8 x (2000/1800 - 1) of the power (the model file's rel_error_per_x), the voltage's
    uncertainty and the static form's refit spread, and the assumed per-core share's spread (1 of 4 cores)."""
    run = _gem5(gem5_root, "se-O3CPU", SE_PY, "--cpu-type=O3CPU", "--caches", "--l2cache", "-c", PHASES, "-o", "1")
    out = tmp_path / "p.csv"
    result = cosim("power", run / "stats.txt", "-o", out)
    assert result.returncode == 0, result.stderr
    assert "interval +-" in result.stdout and "the extrapolation's part only" not in result.stdout
    t = pd.read_csv(out)
    assert (t["model"] == "cortex-a15-gemstone2018").all() and not t["flags"].str.contains("interval_extrapolation_only").any()
    half = (t["power_hi_w"] - t["power_lo_w"]) / 2
    assert (half >= (2 * 0.04754 + 0.8 * (2000 / 1800 - 1)) * t["power_w"]).all() and (half < 0.4 * t["power_w"]).all()


@needs_gem5
def test_stdlib_arm_board_at_its_3ghz_default(gem5_root, tmp_path):
    run = _gem5(gem5_root, "stdlib", REPO / "tests" / "gem5_configs" / "stdlib_arm_3ghz.py", PHASES, "1")
    result = cosim("power", run / "stats.txt", "-o", tmp_path / "p.csv")
    assert_one_line_error(result, "3003 MHz is 2.15x cortex-a7-gemstone2018's top trained clock", "beyond its extrapolation band")


@needs_gem5
def test_starter_se_at_its_4ghz_default_is_refused_for_both_models(gem5_root, tmp_path):
    run = _gem5(gem5_root, "starter", GEM5 / "configs" / "example" / "arm" / "starter_se.py", "--cpu", "o3", f"{PHASES} 1")
    for model, says in (("cortex-a15-walker2017", "2.22x"), ("cortex-a7-gemstone2018", "2.86x")):
        result = cosim("power", run / "stats.txt", "--model", model, "-o", tmp_path / "p.csv")
        assert_one_line_error(result, f"4000 MHz is {says} {model}'s top trained clock", "--extrapolate", "whatif --freqs", "--model")


@needs_shared
def test_the_big_clusters_static_power_is_the_published_polynomial_scaled_to_its_cores(tmp_path):
    """gem5's big.LITTLE run with 2 of the A15's 4 cores (recorded, gem5 v24): the big cluster's static power is the
    published polynomial (GemStone's asrtpm-A15.params, its terms without an event: sum c * f^a * V^b) at the V-f
    table's 1800 MHz (gem5's 556-tick period, 1798.56 MHz, takes that point's voltage) and the A15's mean
    measured voltage at 1800 MHz (Powmon data), times the model file's stated core rule 1 - 0.75 + 0.75 * 2 / 4
    (three quarters of the static power in the cores)."""
    from helpers import GEM5_RUNS, GEMSTONE

    params = pd.read_csv(GEMSTONE / "models" / "asrtpm-A15.params", sep="\t").set_index("Name")["Value"]
    f_mhz = 1800.0
    # to the 0.1 mV the V-f table keeps (the polynomial is very sensitive to voltage)
    v = round(float(pd.read_csv(POWMON, sep="\t").query("`Frequency A15` == 1800")["Voltage A15"].mean()), 4)
    powers = {"Frequency_A15": f_mhz, "Voltage_A15": v, "Voltage_A15_Squared": v * v}
    published_w = params["Intercept"]
    for name, coefficient in params.items():
        if name != "Intercept" and not name.startswith("EPH"):
            published_w += coefficient * np.prod([powers[factor] for factor in name.split(":")])
    assert published_w == pytest.approx(0.802, abs=0.001)  # at gem5's 1798.56 MHz the polynomial gives 0.816 W
    run = GEM5_RUNS / "cosim-v24-se-biglittle-o3-1800MHz-minor-1400MHz" / "stats.txt"
    out = tmp_path / "p.csv"
    models = ("--model", "cortex-a15-walker2017", "--cluster", "bigCluster=system.bigCluster")
    models += ("--model", "cortex-a7-gemstone2018", "--cluster", "littleCluster=system.littleCluster")
    # the polynomial holds the board's die temperature at 1800 MHz (Powmon's rows there), not the run's own
    board_c = float(pd.read_csv(POWMON, sep="\t").query("`Frequency A15` == 1800")["Average Temperature A15"].mean())
    result = cosim("power", run, *models, "--temperature", f"{board_c:.4f}", "-o", out)
    assert result.returncode == 0, result.stderr
    big = pd.read_csv(out).query("cluster == 'bigCluster'")
    assert (big["n_cpus"] == 2).all()
    # the form is fitted on the Powmon rows (measured voltage and die temperature), not on the polynomial: on the curve
    # at the clock's training temperature it stays within 0.5 x the model's 2 SER (0.10 W over 4 cores) of it
    expected = published_w * (1 - 0.75 + 0.75 * 2 / 4)
    assert np.abs(big["static_w"].to_numpy() - expected).max() < 0.05 * (1 - 0.75 + 0.75 * 2 / 4)


@needs_shared
def test_whatif_follows_the_band(tmp_path):
    """cosim whatif (the way out a refusal names) prices 2 GHz on the A15 flagged, and refuses 4 GHz in one line."""
    from helpers import GEM5_RUNS

    run = GEM5_RUNS / "cosim-v24-se-biglittle-o3-1800MHz-minor-1400MHz" / "stats.txt"
    out = tmp_path / "w.csv"
    refused = cosim("whatif", run, "--freqs", "bigCluster=4000", "--freqs", "littleCluster=1400", "-o", out)
    assert_one_line_error(refused, "--freqs bigCluster=4000: 4000 MHz is 2.22x", "--extrapolate")
    result = cosim("whatif", run, "--freqs", "bigCluster=1800,2000", "--freqs", "littleCluster=1400", "-o", out)
    assert result.returncode == 0, result.stderr
    t = pd.read_csv(out).set_index("bigCluster_freq_mhz")
    assert t["extrapolated"].tolist() == [False, True]
    # same work, same runtime model: 2 GHz costs more energy on the big cluster (higher V, static above the top)
    assert t.loc[2000, "bigCluster_energy_j"] > t.loc[1800, "bigCluster_energy_j"]


def test_gpu_models_follow_the_same_rule():
    """Ocelot's access-rate model was measured at one clock (1645 MHz): 1.125x it is priced, beyond is refused; the
    Tegra K1 rail model lists every clock step it was measured at and refuses any other (a band of 1x)."""
    from cosim import CosimError
    from cosim.models.ocelot import check_clock, load_access_rate_model
    from cosim.models.tegrak1 import clock_voltage_v, load_rail_model

    ocelot = load_access_rate_model()
    check_clock(ocelot, 1645 * 1.125)
    check_clock(ocelot, 800.0)
    with pytest.raises(CosimError, match=r"1.22x the clock .* beyond its extrapolation band \(1.125x, up to 1850.62 MHz\)"):
        check_clock(ocelot, 2000.0)
    tk1 = load_rail_model("tegra-k1-stokke2016")
    with pytest.raises(CosimError, match="not in the V-f table"):
        clock_voltage_v(tk1, "gpu", 852.0 * 1.05)


@needs_shared
def test_summary_says_where_each_cluster_stands(tmp_path):
    from helpers import GEM5_RUNS

    fs = cosim(
        "power", GEM5_RUNS / "public-old2016-arm64-fs-o3-dual" / "stats.txt", "--model", "cortex-a15-walker2017", "-o", tmp_path / "a.csv"
    )
    assert fs.returncode == 0, fs.stderr
    assert "[extrapolated, 1.11x top clock, interval +-" in fs.stdout and "[2 of 4 cores: static scaled by 0.625]" in fs.stdout
    t = pd.read_csv(tmp_path / "a.csv")
    assert (t["cores_scaled"] == 0.625).all() and (t["model_cores"] == 4).all() and (t["freq_x_top_clock"].round(3) == 1.111).all()
    se = cosim("power", GEM5_RUNS / "cosim-v24-se-biglittle-o3-1800MHz-minor-1400MHz" / "stats.txt", "-o", tmp_path / "b.csv")
    assert se.returncode == 0, se.stderr
    assert se.stdout.count("[inside training range] [2 of 4 cores: static scaled by 0.625]") == 2


def test_plausibility_refuses_a_voltage_outside_the_forms_physical_range():
    """The static form holds from 0.6 V (above threshold) to 1.5 V (below any rated 28 nm supply): 0.55 and 1.55 V are
    refused naming the range, 0.6 and 1.5 V are not; a negative static power (no form gives one) is refused."""
    from cosim.models.plausibility import static_reasons

    model = load_model("cortex-a15-walker2017")
    v = np.array([0.55, 0.6, 1.5, 1.55, 1.0])
    static = np.array([0.1, 0.1, 1.0, 1.0, -0.01])
    reasons = static_reasons(model, static_w=static, freq_mhz=np.full(5, 1000.0), voltage_v=v)
    assert "0.55 V at 1000 MHz is outside 0.6-1.5 V" in reasons[0] and "1.55 V at 1000 MHz is outside 0.6-1.5 V" in reasons[3]
    assert reasons[1] == reasons[2] == ""
    assert "the static term is negative" in reasons[4]


@needs_shared
def test_an_interval_never_reaches_below_zero_watts(tmp_path):
    """The A15's idle rows at 200 MHz draw about 0.1 W, less than its +-2 SER (0.103 W): the lower bound stops at 0."""
    out = tmp_path / "p.csv"
    result = cosim("apply", "cortex-a15-walker2017", POWMON, "--compare-with", "Power A15", "-o", out)
    assert result.returncode == 0, result.stderr
    pred = pd.read_csv(out)
    assert (pred["power_lo_w"] >= 0).all() and (pred["power_lo_w"] == 0).any()


@needs_shared
@pytest.mark.parametrize("fitted_on", ["measured", "table"])
def test_a15_refit_with_the_die_temperature_meets_the_5_percent_goal(tmp_path_factory, fitted_on):
    """Issue 42's goal, <= 5 % at 1800 MHz from a refit <= 1600 MHz at both the measured and the table's voltage:
    not met without temperature (5.56 / 6.74 % and 4.78 / 5.98 %), met with each row's die temperature, the term
    (cosim.fit.temperature) fitted on the refit's own <= 1600 MHz rows, the 1800 MHz rows held out."""
    import dataclasses
    import json

    from cosim.fit.apply import apply_model
    from cosim.fit.temperature import fit_temperature_term
    from cosim.models.modelfile import _parse
    from cosim.models.static_form import static_form
    from cosim.readers.measured import read_measured

    data = pd.read_csv(POWMON, sep="\t")
    if (fitted_on, 1600) not in _REFITS:
        train = _table_voltage(data) if fitted_on == "table" else data
        _REFITS[fitted_on, 1600] = _refit(tmp_path_factory.mktemp("refit"), "le1600", train[train["Frequency A15"] <= 1600])
    model = load_model(_REFITS[fitted_on, 1600])
    measured = read_measured(POWMON, events=model.events)
    if fitted_on == "table":  # the term is fitted on the rows as the refit saw them
        seen = _table_voltage(data)["Voltage A15"].to_numpy()
        fit_rows = dataclasses.replace(measured, voltage_v=seen)
    else:
        fit_rows = measured
    y, t = data["Power A15"].to_numpy(), data["Average Temperature A15"].to_numpy()
    low, top = measured.freq_mhz <= 1600, measured.freq_mhz == 1800
    form = static_form(model)
    v = fit_rows.voltage_v
    term = fit_temperature_term(
        residual_w=(y - apply_model(model, fit_rows)["power_w"].to_numpy())[low],
        leakage_w=(form.b * v * np.exp(form.k * (v - 1.0)))[low],
        freq_mhz=measured.freq_mhz[low],
        temperature_c=t[low],
    )
    raw = json.loads(json.dumps(model.raw))
    raw["static_form"] = {"a_w_per_mhz_v2": form.a, "b_w_per_v": form.b, "k_per_v": form.k}
    raw["static_form"]["temperature"] = {"kappa_per_k": term.kappa_per_k, "curve_mhz_c": term.curve_mhz_c, "trained_c": term.trained_c}
    hot = _parse(model.path, raw)
    rows = dataclasses.replace(
        measured,
        table=measured.table[top].reset_index(drop=True),
        freq_mhz=measured.freq_mhz[top],
        voltage_v=measured.voltage_v[top],
        rates={e: r[top] for e, r in measured.rates.items()},
        input_row=None,
    )
    got, without = [], []
    for voltage in ("measured", "table"):
        pred = apply_model(hot, rows, voltage=voltage, extrapolate=True, temperature_c=t[top])["power_w"].to_numpy()
        got.append(100 * float(np.mean(np.abs(pred - y[top]) / y[top])))
        pred = apply_model(model, rows, voltage=voltage, extrapolate=True)["power_w"].to_numpy()
        without.append(100 * float(np.mean(np.abs(pred - y[top]) / y[top])))
    # the goal (issue 42: <= 5 %), and the term is what meets it: the held-out rows are better priced with it
    assert max(got) <= 5.0 and all(a < b for a, b in zip(got, without)), (got, without)
