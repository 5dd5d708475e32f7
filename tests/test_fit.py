"""cosim fit: Walker et al.'s methodology, checked on the published data."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from helpers import GEMSTONE, POWMON, REPO, SHARED, needs_shared, run_cosim, write_biglittle_run
from hypothesis import given, settings
from hypothesis import strategies as st

from cosim import CosimError, apply_model, load_model, mape_pct, read_measured
from cosim.fit.design import FitTable, Term, check_table
from cosim.fit.rail import RailSpec, fit_rail
from cosim.fit.select import correlation_clusters, stage1, stage2
from cosim.fit.validate import folds, reduced_experiment
from cosim.fit.walker_fit import fit_table, fit_walker, model_file
from cosim.models.voltage import load_voltage
from cosim.models.walker import cluster_power_w
from cosim.readers.armpm import read_armpm

# find_spec, not importorskip: collection on every xdist worker would import statsmodels for nothing
pytestmark = pytest.mark.skipif(importlib.util.find_spec("statsmodels") is None, reason="statsmodels is not installed")

TCAD_TERMS = ["0x11", "0x1b-0x73", "0x50", "0x6a", "0x73", "0x14", "0x19"]
ARMPM_CBENCH = SHARED / "data" / "armpm" / "Concatenated_Data" / "cBench" / "xu3_cset_perfcpu_cBench_eMMC_big.data"


def _powmon(label: str, events: list[str]) -> FitTable:
    measured = read_measured(POWMON, events=events, label=label)
    return fit_table(measured, power_col=f"Power {label}", group_cols=["Workload Name"], source=str(POWMON))


@pytest.fixture(scope="module")
def a15():
    if not POWMON.exists():
        pytest.skip("../shared/data is not here")
    return _powmon("A15", ["0x11", "0x1b", "0x50", "0x6a", "0x73", "0x14", "0x19"])


@pytest.fixture(scope="module")
def tcad_fit(a15):
    idle = (a15.groups["Workload Name"] == "idle").to_numpy()
    return fit_walker(a15, [Term.parse(t) for t in TCAD_TERMS], group_by="Workload Name", idle=idle)


def test_tcad_a15_refit_matches_the_published_model(tcad_fit):
    published = pd.read_csv(GEMSTONE / "models" / "asrtpm-A15.params", sep="\t").set_index("Name")
    shipped = load_model("cortex-a15-walker2017").raw
    ours = tcad_fit.ols.table()
    for term in shipped["dynamic_terms"] + shipped["static_terms"]:
        column = f"dyn:{term['name']}" if "events" in term else f"static:{term['name']}"
        lo, hi = published.loc[term["published_name"], ["Confidence Interval 95 Lower", "Confidence Interval 95 Upper"]]
        assert lo <= ours.loc[column, "coefficient"] <= hi, column
        # the published p-values are HC3 ones: ours agree (to 0.01 in log10; they reach 1e-136)
        p_ours, p_pub = ours.loc[column, "p_value"], published.loc[term["published_name"], "p-Value"]
        assert p_ours < 1e-300 if p_pub == 0 else np.log10(p_ours) == pytest.approx(np.log10(p_pub), abs=0.01)
    s = tcad_fit.ols.summary()
    assert s["r2"] > 0.99 and s["ser_w"] == pytest.approx(0.0517, abs=1e-4)
    assert tcad_fit.cv_rows.mape_pct == pytest.approx(2.81, abs=0.05)  # paper Table IV: 2.81 % (random folds vary)


def test_prediction_interval_coverage_in_grouped_cv(tcad_fit):
    assert tcad_fit.cv_grouped.grouped_by == "Workload Name"
    assert tcad_fit.cv_grouped.pi95_coverage >= 0.93
    assert tcad_fit.cv_grouped.mape_pct > tcad_fit.cv_rows.mape_pct  # unseen workloads are harder


def test_grouped_folds_hold_out_whole_workloads():
    groups = np.repeat(np.arange(20), 5)
    parts = folds(len(groups), 10, groups=groups)
    assert sorted(np.concatenate(parts).tolist()) == list(range(100))
    for part in parts:
        held = set(groups[part])
        assert all(g not in held for g in groups[np.setdiff1d(np.arange(100), part)])


def test_reduced_experiment_costs_little(a15):
    idle = (a15.groups["Workload Name"] == "idle").to_numpy()
    result = reduced_experiment(a15, [Term.parse(t) for t in TCAD_TERMS], train_freq_mhz=1000, idle=idle)
    assert result.train_rows == 272 and result.full_rows == 2160  # 240 workload rows at 1 GHz + idle at the other 8 levels
    # paper (Walker et al. TCAD 2017, Section VI): +0.6 %, printed to 0.1, so within 0.1 of it
    assert result.extra_error_pct == pytest.approx(0.6, abs=0.1)


def test_voltage_model_recovers_most_of_the_voltage_error(tcad_fit, a15):
    """Section VIII at 1800 MHz: paper 2.6 % (measured V), 8.5 % (target V), 3.0 % (voltage model), for its
    polynomial (written out here from the file's terms).  cosim's static form (fitted on Powmon's training workloads,
    issue 50) with the rows' die temperature: within the paper's 3.0 % with the measured voltage and with the voltage
    model, and far inside its 8.5 % at the target voltage (3.19 %: the target's few mV still cost a little)."""
    model = load_model("cortex-a15-walker2017")
    assert model.voltage_model is not None
    shipped = np.array(model.voltage_model)
    assert np.allclose(shipped, np.array(tcad_fit.voltage_model), atol=1e-5)  # the shipped one is this fit's
    measured = read_measured(POWMON, events=model.events)
    actual = measured.table["Power A15"].to_numpy()
    at = measured.freq_mhz == 1800
    target = replace(measured, voltage_v=load_voltage(model.voltage_model, measured.freq_mhz, np.zeros(len(actual))))
    eph = {e: measured.rates[e] / measured.freq_mhz for e in model.events}

    def published(v) -> float:
        return mape_pct(cluster_power_w(eph, measured.freq_mhz, v, model.dynamic, model.static)["power_w"][at], actual[at])

    assert published(measured.voltage_v) == pytest.approx(2.59, abs=0.01)
    assert published(target.voltage_v) == pytest.approx(8.11, abs=0.01)
    t = measured.table["Average Temperature A15"].to_numpy()
    errors = {
        "measured": mape_pct(apply_model(model, measured, temperature_c=t)["power_w"][at], actual[at]),
        "target": mape_pct(apply_model(model, target, temperature_c=t)["power_w"][at], actual[at]),
        "voltage-model": mape_pct(apply_model(model, measured, voltage="voltage-model", temperature_c=t)["power_w"][at], actual[at]),
    }
    assert max(errors["measured"], errors["voltage-model"]) < 3.0  # paper: 3.0 % with its voltage model
    assert errors["target"] < 3.5 < 8.5  # paper: 8.5 % at the target voltage


@needs_shared
def test_a7_model_from_the_a7_columns():
    table = _powmon("A7", ["0x11", "0x14", "0x16", "0x13", "0x0f"])
    assert set(np.unique(table.freq_mhz)) == {1000.0}
    fit = fit_walker(table, [Term.parse(e) for e in ["0x11", "0x14", "0x16", "0x13", "0x0f"]], group_by="Workload Name")
    assert [s[0] for s in fit.static] == ["intercept", "V"]  # one frequency: the f terms cannot be told apart
    baseline = np.mean(np.abs(table.power_w - table.power_w.mean()) / table.power_w) * 100
    assert fit.cv_grouped.mape_pct < baseline  # better than predicting the mean A7 power
    # Walker et al. TCAD 2017 report 3.8 % for their A7 model: the refit on the same board's A7 rows is no worse
    assert fit.cv_rows.mape_pct <= 3.8 and fit.cv_grouped.mape_pct <= 3.8


def _vif_by_hand(table, events: list[str]) -> np.ndarray:
    """VIF_j = (R^-1)_jj, R the correlation matrix of the events' Eq. 2 inputs (a textbook identity)."""
    from cosim.fit.select import _design_inputs

    X = _design_inputs(table, [Term({e: 1}) for e in events]).to_numpy(dtype=float)
    return np.diag(np.linalg.inv(np.corrcoef(X, rowvar=False)))


@needs_shared
def test_stage1_and_stage2_on_armpm_raw_counts():
    measured = read_armpm(ARMPM_CBENCH)
    table = fit_table(measured, power_col="A15 Power(W)", group_cols=["Benchmark"], source="armpm")
    # 10,623 samples less the first of each stretch of one program, run and clock: 30 programs x 2 runs x 3 clocks
    assert len(table) == 10623 - 30 * 2 * 3 and set(np.unique(table.freq_mhz)) == {1000.0, 1500.0, 2000.0}
    candidates = [e for e in table.rates if np.ptp(table.rates[e]) > 0]  # SW_INCR is always 0
    assert "0x00" not in candidates and len(candidates) == 12
    selection = stage1(table, candidates, n_events=7)
    assert selection.events == ["0x11", "0x08", "0x05", "0x04", "0x10", "0x01", "0x12"]
    assert all(b >= a for a, b in zip(selection.r2_steps, selection.r2_steps[1:]))
    # VIF by another route than cosim.fit.ols.vif: the diagonal of the inverse correlation matrix of the model inputs
    assert selection.vif.to_numpy() == pytest.approx(_vif_by_hand(table, selection.events), rel=1e-6)
    assert selection.vif["0x08"] > 5 and selection.vif.drop("0x08").max() < 5.5
    selection = stage2(table, selection)
    assert selection.transforms == ["0x08 -> 0x08-0x12"]  # retired instructions minus branches: nested
    assert selection.terms_vif["0x08-0x12"] > 5  # nested and still collinear: stage 2 replaces it (below)
    clusters = correlation_clusters(table, candidates)
    assert set(clusters["event"]) == set(candidates) and clusters["cluster"].nunique() > 1


def _table(n=200, seed=1, **overrides) -> FitTable:
    rng = np.random.default_rng(seed)
    f = rng.choice([600.0, 1000.0, 1400.0], n)
    v = 0.8 + f / 4000 + rng.normal(0, 0.005, n)
    rates = {"0x11": rng.uniform(1e8, 1e9, n), "0x08": rng.uniform(1e7, 5e8, n)}
    power = 0.3 + 5e-10 * rates["0x11"] * v**2 + 3e-10 * rates["0x08"] * v**2 + rng.normal(0, 0.01, n)
    t = FitTable("synthetic.csv", power, f, v, rates, pd.DataFrame({"w": rng.integers(0, 20, n)}))
    for key, value in overrides.items():
        if key.startswith("0x"):
            t.rates[key] = value
        else:
            setattr(t, key, value)
    return t


@pytest.mark.parametrize(
    "make, terms, message",
    [
        (lambda: _table(**{"0x08": np.full(200, 5e7)}), ["0x11", "0x08"], "event 0x08 is constant"),
        (lambda: _table(n=40), ["0x11", "0x08"], r"40 rows for \d+ coefficients; need at least"),
        (lambda: _table(power_w=np.where(np.arange(200) == 7, np.nan, 1.0)), ["0x11"], "power is nan/inf in row 9"),
        (lambda: _table(**{"0x05": np.arange(200.0) * 2e6 + 1e6}), ["0x11", "0x05", "0x05+0x11"], "exactly collinear"),
    ],
)
def test_bad_data_is_refused(make, terms, message):
    table = make()
    with pytest.raises(CosimError, match=message) as err:
        fit_walker(table, [Term.parse(t) for t in terms], k=0)
    assert "\n" not in str(err.value)


def test_check_table_accepts_sound_data():
    check_table(_table(), [Term.parse("0x11"), Term.parse("0x08")])


def test_term_names_round_trip():
    for text in ("0x11", "0x1b-0x73", "0x05+0x11", "0x08-0x12"):
        assert Term.parse(text).name == text


def test_fitted_model_file_works_in_cosim_power(tmp_path):
    """Fit on synthetic rows, write the model file, and price a gem5 run with it unchanged."""
    fit = fit_walker(_table(n=400), [Term.parse("0x11"), Term.parse("0x08")], k=5, group_by="w")
    data = model_file(fit, name="synthetic", component="test cluster", cores_per_cluster=4, source_note="synthetic")
    (tmp_path / "synthetic.json").write_text(json.dumps(data))
    model = load_model(tmp_path / "synthetic.json")
    assert model.events == ("0x08", "0x11") and model.ser_w == pytest.approx(0.01, rel=0.2)
    run = write_biglittle_run(tmp_path / "m5out")
    result = run_cosim(
        "power",
        str(run),
        "--model",
        str(tmp_path / "synthetic.json"),
        "--cluster",
        "little=system.littleCluster",
        "-o",
        str(tmp_path / "p.csv"),
    )
    assert result.returncode == 0, result.stderr
    assert pd.read_csv(tmp_path / "p.csv")["power_w"].notna().all()


TK1 = {  # Stokke et al. Table 1, the ground truth of the synthetic rail data
    "gpu:leak": 0.27,
    "gpu:clock*V^2": 2.10e-9,
    "gpu:l2r*V^2": 10.79e-9,
    "gpu:int*V^2": 41.11e-12,
    "mem:clock*V^2": 258.66e-12,
    "mem:offset@204": -0.03,
    "mem:offset@300": 0.05,
    "mem:cpu*V^2": 2.25e-9,
    "core:leak": 0.79,
    "core:acl*V^2": 166.62e-12,
    "base": 0.78,
}


def _tk1_table() -> pd.DataFrame:
    """1830 rows (as many as the paper's training runs) generated from Table 1 with 10 mW noise."""
    rng = np.random.default_rng(7)
    n = 1830
    gpu_f = rng.choice([72, 180, 396, 540, 648, 756, 852], n) * 1.0
    mem_f = rng.choice([204, 300, 528, 924], n) * 1.0
    t = pd.DataFrame(
        {
            "gpu_v": np.where(gpu_f < 400, 0.8, 0.8 + (gpu_f - 400) / 1500),
            "gpu_clock": gpu_f * 1e6 * rng.uniform(0.2, 1, n),
            "gpu_l2r": rng.uniform(0, 2e7, n),
            "gpu_int": rng.uniform(0, 5e9, n),
            "mem_v": np.full(n, 1.35),
            "mem_f": mem_f,
            "mem_clock": mem_f * 1e6,
            "mem_cpu": rng.uniform(0, 1, n) * mem_f * 1e6,
            "cpu_v": rng.choice([0.8, 0.9, 1.0, 1.1], n),
            "cpu_acl": rng.uniform(1e7, 1e9, n),
        }
    )
    power = TK1["base"] + rng.normal(0, 0.01, n)
    power += (
        TK1["gpu:leak"] * t.gpu_v
        + (TK1["gpu:clock*V^2"] * t.gpu_clock + TK1["gpu:l2r*V^2"] * t.gpu_l2r + TK1["gpu:int*V^2"] * t.gpu_int) * t.gpu_v**2
    )
    power += (
        (TK1["mem:clock*V^2"] * t.mem_clock + TK1["mem:cpu*V^2"] * t.mem_cpu) * t.mem_v**2
        + np.where(mem_f == 204, -0.03, 0)
        + np.where(mem_f == 300, 0.05, 0)
    )
    power += TK1["core:leak"] * t.cpu_v + TK1["core:acl*V^2"] * t.cpu_acl * t.cpu_v**2
    t["power"] = power
    return t


TK1_RAILS = [
    RailSpec("gpu", "gpu_v", ["gpu_clock", "gpu_l2r", "gpu_int"]),
    RailSpec("mem", "mem_v", ["mem_clock", "mem_cpu"], leakage=False, freq_col="mem_f", offsets_mhz=[204, 300]),
    RailSpec("core", "cpu_v", ["cpu_acl"]),
]
TK1_NAMES = {
    "gpu:gpu_clock*V^2": "gpu:clock*V^2",
    "gpu:gpu_l2r*V^2": "gpu:l2r*V^2",
    "gpu:gpu_int*V^2": "gpu:int*V^2",
    "mem:mem_clock*V^2": "mem:clock*V^2",
    "mem:mem_cpu*V^2": "mem:cpu*V^2",
    "core:cpu_acl*V^2": "core:acl*V^2",
}


def test_rail_fit_recovers_tegra_k1_coefficients():
    """Synthetic rows from Table 1's coefficients plus noise: the method must give them back."""
    t = _tk1_table()
    coef = fit_rail(t, TK1_RAILS, power_col="power").fits["total"].params
    for ours, truth in {**{k: k for k in TK1 if k not in TK1_NAMES.values()}, **TK1_NAMES}.items():
        assert coef[ours] == pytest.approx(TK1[truth], rel=0.15, abs=0.02), ours
    with pytest.raises(CosimError, match="voltage never changes"):
        fit_rail(t, [RailSpec("mem", "mem_v", ["mem_clock"])], power_col="power")


@needs_shared
def test_cosim_fit_command_writes_model_card_and_plots(tmp_path):
    out = tmp_path / "a15.json"
    args = [
        "fit",
        str(POWMON),
        "--label",
        "A15",
        "--power-col",
        "Power A15",
        "--events",
        ",".join(TCAD_TERMS),
        "--group-by",
        "Workload Name",
        "--idle",
        "idle",
        "--name",
        "a15",
        "-o",
        str(out),
    ]
    result = run_cosim(*args)
    assert result.returncode == 0, result.stderr
    cv = float(re.search(r"10-fold CV by row: MAPE ([\d.]+) %", result.stdout).group(1))
    assert cv == pytest.approx(2.81, abs=0.05)  # paper Table IV: 2.81 %
    card = (tmp_path / "a15.md").read_text()
    assert "| 0x1b-0x73 |" in card and "a15-residuals.png" in card and "a15-workloads.png" in card
    assert (tmp_path / "a15-residuals.png").stat().st_size > 5000
    applied = run_cosim("apply", str(out), str(POWMON), "--compare-with", "Power A15")
    printed = float(re.search(r"MAPE vs 'Power A15': ([\d.]+) %", applied.stdout).group(1))
    assert printed == pytest.approx(2.8, abs=1.0)  # the refit priced by its static form, near the paper's 2.8 %


def test_cosim_fit_bad_input_is_one_line(tmp_path):
    (tmp_path / "m.csv").write_text("f,v,p,c\n" + "".join(f"1000,1.0,{i},5\n" for i in range(100)))
    args = [
        "fit",
        str(tmp_path / "m.csv"),
        "--power-col",
        "p",
        "--freq-col",
        "f",
        "--voltage-col",
        "v",
        "--event-col",
        "0x11=c",
        "--events",
        "0x11",
        "-o",
        str(tmp_path / "o.json"),
    ]
    result = run_cosim(*args)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("cosim: error: ") and line.endswith(
        "m.csv: event 0x11 is constant (5) in every row; it carries no information, leave it out"
    )


def test_fit_rail_command(tmp_path):
    _tk1_table().to_csv(tmp_path / "tk1.csv", index=False)
    spec = {
        "power_col": "power",
        "rails": [r.__dict__ | {"predictors": list(r.predictors), "offsets_mhz": list(r.offsets_mhz)} for r in TK1_RAILS],
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    result = run_cosim("fit-rail", str(tmp_path / "tk1.csv"), "--spec", str(tmp_path / "spec.json"), "-o", str(tmp_path / "rail.json"))
    assert result.returncode == 0, result.stderr
    out = json.loads((tmp_path / "rail.json").read_text())
    assert out["regressions"]["total"]["coefficients"]["base"]["value"] == pytest.approx(0.78, abs=0.02)
    assert out["regressions"]["total"]["fit"]["r2"] > 0.99


@needs_shared
def test_power_with_the_voltage_model(tmp_path):
    run = write_biglittle_run(tmp_path / "m5out")
    args = [
        "power",
        str(run),
        "--model",
        "cortex-a15-walker2017",
        "--cluster",
        "big=system.bigCluster",
    ]
    plain = run_cosim(*args, "-o", str(tmp_path / "a.csv"))
    loaded = run_cosim(*args, "--voltage-model", "-o", str(tmp_path / "b.csv"))
    assert plain.returncode == 0 and loaded.returncode == 0, loaded.stderr
    a, b = pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv")
    model = load_model("cortex-a15-walker2017")
    points = np.array(model.voltage_model)
    # each epoch: target voltage of its frequency plus slope times the dynamic power at that voltage
    target = load_voltage(points, b["freq_mhz"].to_numpy(), np.zeros(len(b)))
    assert np.all(np.abs(b["voltage_v"] - target) < 0.05) and not np.allclose(b["voltage_v"], a["voltage_v"])
    unfit = run_cosim("power", str(run), "--model", "cortex-a7-gemstone2018", "--cluster", "little=system.littleCluster", "--voltage-model")
    assert unfit.returncode == 2 and "has no voltage_model" in unfit.stderr


ARMPM_SPLIT = SHARED / "data" / "armpm" / "cbench_split.data"


def _armpm_training_rows(programs: set[str]) -> list[dict]:
    """By hand from the raw log: each kept sample of ``programs`` (not the first of its program, run and clock) with
    its power [W], voltage as power / current [V], clock [MHz] and per-core rates over the step less 8.75 ms."""
    import csv

    names = {"0x11": "CPU_CYCLES", "0x08": "INST_RETIRED", "0x10": "BRANCH_MISPRED", "0x03": "L1D_CACHE_REFILL", "0x04": "L1D_CACHE_ACCESS"}
    out, previous, previous_ns = [], None, 0
    with open(ARMPM_CBENCH, newline="") as f:
        for rec in csv.DictReader(f, delimiter="\t"):
            key = (rec["Benchmark"], rec["Run(#)"], rec["CPU(4) Frequency(MHz)"])
            if key == previous and key[0] in programs:
                window = (int(rec["#Timestamp"]) - previous_ns) / 1e9 - 0.00875
                power, current = float(rec["A15 Power(W)"]), float(rec["A15 Current(A)"])
                out.append(
                    {"p": power, "v": power / current, "f": float(key[2])} | {e: float(rec[n]) / window / 4 for e, n in names.items()}
                )
            previous, previous_ns = key, int(rec["#Timestamp"])
    return out


@needs_shared
def test_fit_on_the_splits_training_programs_gives_the_shipped_board_model(tmp_path):
    """``cosim fit --split`` fits on the split's training programs only; the shipped model is that fit, and its
    coefficients are ordinary least squares on the raw log's training samples, computed here by hand."""
    shipped = json.loads((REPO / "models" / "cortex-a15-armpm-xu3.json").read_text())
    args = shlex.split(shipped["source"]["command"])[1:]
    args[args.index("-o") + 1] = str(tmp_path / "m.json")
    result = run_cosim(*args)
    assert result.returncode == 0, result.stderr
    again = json.loads((tmp_path / "m.json").read_text())
    columns = [line.split("\t") for line in ARMPM_SPLIT.read_text().splitlines()[1:]]
    train = {c[0].strip() for c in columns if c[0].strip()}
    test = {c[1].strip() for c in columns if len(c) > 1 and c[1].strip()}
    assert set(again["training"]["programs"]) == set(shipped["training"]["programs"]) == train
    assert set(again["test_split"]["programs"]) == test and not test & set(again["training"]["programs"])
    assert [t["name"] for t in again["dynamic_terms"]] == [t["name"] for t in shipped["dynamic_terms"]]
    for a, b in zip(again["dynamic_terms"] + again["static_terms"], shipped["dynamic_terms"] + shipped["static_terms"]):
        assert a["coefficient"] == pytest.approx(b["coefficient"], rel=1e-9), a["name"]
    # the same coefficients by hand: Eq. 2's columns from the raw samples, numpy's least squares
    rows = _armpm_training_rows(train)
    assert len(rows) == shipped["training"]["n_obs"]
    X = np.array(
        [[sum(w * r[e] / r["f"] for e, w in t["events"].items()) * r["v"] ** 2 * r["f"] for t in shipped["dynamic_terms"]]
         + [r["f"] ** t["f_exp"] * r["v"] ** t["v_exp"] for t in shipped["static_terms"]] for r in rows]
    )  # fmt: skip
    scale = np.abs(X).max(axis=0)  # the static V, f polynomial's columns are nearly collinear: solve on scaled columns
    coef = np.linalg.lstsq(X / scale, np.array([r["p"] for r in rows]), rcond=None)[0] / scale
    # the fitted powers agree; so do the coefficients the data pin down (the events'), the static ones' sum along the V-f curve
    published = np.array([t["coefficient"] for t in shipped["dynamic_terms"] + shipped["static_terms"]])
    assert X @ coef == pytest.approx(X @ published, rel=1e-6)
    n_dyn = len(shipped["dynamic_terms"])
    assert coef[:n_dyn] == pytest.approx(published[:n_dyn], rel=1e-4)
    # its V-f table: the board's mean power / current per clock over the training samples
    for clock, volts in shipped["vf_table"]["points_mhz_v"]:
        assert volts == pytest.approx(np.mean([r["v"] for r in rows if r["f"] == clock]), abs=5e-5)
    assert "test split (15 programs" in result.stdout and "fit time" in result.stdout
    assert "gem5 cannot count 0x0b" in result.stdout  # the best set over every board event holds CID_WRITE_RETIRED


def test_fit_refuses_a_split_without_an_armpm_log(tmp_path):
    result = run_cosim("fit", tmp_path / "x.csv", "--power-col", "P", "--events", "0x11", "--split", tmp_path / "s.data")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "give it with --format armpm" in result.stderr


# Powmon layout, A7 columns: line 3 is blank, and the third row's quoted workload name runs over lines 5 and 6
A7_TABLE = """\
Workload,Frequency A7,Voltage A7,Average A7 CycleCount,Average A7 Event 0x03,Average A7 Event 0x04,Average A7 Event 0x08,Average A7 Event 0x60,Power A7
busy,1000,1.089,9.9e8,1.0e7,3.0e8,7.0e8,5.0e6,0.35

idle,600,0.944,1.0e7,1.0e5,3.0e6,5.0e6,5.0e4,0.05
"mixed
run",1400,1.253,1.3e9,2.0e7,4.0e8,9.0e8,9.0e6,0.6
"""


def test_apply_output_rows_name_their_line_in_the_input(tmp_path):
    (tmp_path / "m.csv").write_text(A7_TABLE)
    result = run_cosim("apply", "cortex-a7-gemstone2018", tmp_path / "m.csv", "--compare-with", "Power A7", "-o", tmp_path / "out.csv")
    assert result.returncode == 0, result.stderr
    out = pd.read_csv(tmp_path / "out.csv")
    assert out.columns[0] == "input_row"
    assert out["input_row"].tolist() == [2, 4, 5]  # header = line 1; each row's first line
    assert out["voltage_v"].tolist() == [1.089, 0.944, 1.253] and out["measured_w"].tolist() == [0.35, 0.05, 0.6]
    # a refusal's "row N" is the same line: 3e9 L1D accesses/s with 1e7 cycles/s is 300 per cycle, the A7 counts 1
    (tmp_path / "bad.csv").write_text(A7_TABLE.replace("idle,600,0.944,1.0e7,1.0e5,3.0e6", "idle,600,0.944,1.0e7,1.0e5,3.0e9"))
    refused = run_cosim("apply", "cortex-a7-gemstone2018", tmp_path / "bad.csv")
    assert refused.returncode == 2 and "bad.csv: row 4 (cortex-a7-gemstone2018): 0x04 (L1D_CACHE)" in refused.stderr


def test_armpm_rows_keep_their_line_in_the_log(tmp_path):
    """A run's first sample has no interval to make rates from and is dropped: the kept rows still name their lines."""
    header = "#Timestamp\tBenchmark\tRun(#)\tCPU(4) Frequency(MHz)\tA15 Voltage(V)\tA15 Power(W)\tCPU_CYCLES\tINST_RETIRED\n"
    samples = [(0, 1), (500_000_000, 1), (1_000_000_000, 1), (0, 2), (500_000_000, 2)]
    body = "".join(f"{t}\tbt\t{run}\t1000\t1.0\t1.5\t2000000000\t1000000000\n" for t, run in samples)
    (tmp_path / "bt.data").write_text(header + body)
    measured = read_armpm(tmp_path / "bt.data")
    assert measured.input_row.tolist() == [3, 4, 6]  # lines 2 and 5 open runs 1 and 2
    # 2e9 cycles over 4 cores in the 0.5 s step less the sampler's 8.75 ms dead time
    assert measured.rates["0x11"] == pytest.approx([2e9 / (0.5 - 0.00875) / 4] * 3, rel=1e-12)


def test_apply_compare_with_a_column_not_in_the_input_lists_its_columns(tmp_path):
    (tmp_path / "m.csv").write_text(A7_TABLE)
    out = tmp_path / "out.csv"
    result = run_cosim("apply", "cortex-a7-gemstone2018", tmp_path / "m.csv", "--compare-with", "Power A15", "-o", out)
    assert result.returncode == 2 and result.stdout == "" and not out.exists()  # refused before any work
    assert result.stderr == (
        f"cosim: error: {tmp_path / 'm.csv'}: no column 'Power A15' to compare with; its columns: 'Workload', 'Frequency A7', "
        "'Voltage A7', 'Average A7 CycleCount', 'Average A7 Event 0x03', 'Average A7 Event 0x04', 'Average A7 Event 0x08', "
        "'Average A7 Event 0x60', 'Power A7'\n"
    )
    # 20 more columns: the first 12 are listed, then how many more
    lines = A7_TABLE.splitlines()
    wide = [lines[0] + "".join(f",extra {i}" for i in range(20))] + [
        line + ",0" * 20 if line[-1:].isdigit() else line for line in lines[1:]
    ]
    (tmp_path / "wide.csv").write_text("\n".join(wide) + "\n")
    result = run_cosim("apply", "cortex-a7-gemstone2018", tmp_path / "wide.csv", "--compare-with", "Power A15")
    (line,) = result.stderr.splitlines()
    assert line.endswith("'Average A7 Event 0x60', 'Power A7', 'extra 0', 'extra 1', 'extra 2', ... (17 more)")


@given(clock=st.floats(1000, 2000), dv=st.floats(-0.05, 0.05), share=st.floats(0, 1))
@settings(max_examples=50, deadline=None)
def test_shipped_board_model_power_rises_with_voltage_and_along_its_vf_curve(clock, dv, share):
    """Trust: the ARMPM board model's power, at any activity, grows with voltage at a clock and with the clock along its
    V-f table (what cosim power prices with no flags)."""
    from cosim.models.envelope import operating_point_power_w
    from cosim.models.modelfile import operating_point

    def envelope_power_w(model, eph, f, v):
        return operating_point_power_w(model, eph=eph, freq_mhz=f, voltage_v=v)

    model = load_model("cortex-a15-armpm-xu3")
    # a busy core's inputs per MHz over 4 cores: 1 cycle, IPC 1.5 x share, a few refills and mispredictions
    eph = {
        "0x11": np.array([0.25]),
        "0x08": np.array([0.375 * share]),
        "0x03": np.array([1e-4]),
        "0x04": np.array([0.1 * share]),
        "0x10": np.array([2e-3 * share]),
    }
    f = np.array([clock])
    v = operating_point(model, f).voltage_v
    low, high = (envelope_power_w(model, eph, f, v + d)["power_w"][0] for d in sorted((0.0, dv)))
    assert high >= low
    up = np.array([min(clock + 50, 2000.0)])
    assert (
        envelope_power_w(model, eph, up, operating_point(model, up).voltage_v)["power_w"][0]
        >= envelope_power_w(model, eph, f, v)["power_w"][0]
    )
