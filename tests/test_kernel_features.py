"""Kernel models from any profiler's names (nvprof, Nsight Compute, DCGM), the families kernel-fit fits, its default
reference pair, and the one-line refusal where the [kernels] extra is missing.  Small hand-made tables: fast."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from cosim.cli import main
from cosim.kernels.dvfs import check_table, default_reference, with_profiles
from cosim.kernels.dvfs_models import fit_family, predict_ratios
from cosim.kernels.features import TOOLS, feature_map, resolve_tool


def _roofline(n: int = 6, *, skip_top_for: str | None = None) -> pd.DataFrame:
    """Kernels whose runtime is max(compute / f_core, memory / f_mem) exactly (memory share s at 1000/1000), and
    power 10 W + 10 W x f_core / 1 GHz + 30 W x the work rate; nvprof-named features: DRAM traffic s x 60 GB/s."""
    rows = []
    for i in range(n):
        s = (i + 0.5) / n
        for core in (400.0, 700.0, 1000.0):
            for mem in (400.0, 700.0, 1000.0):
                if skip_top_for == f"b{i}" and (core, mem) == (1000.0, 1000.0):
                    continue
                t = 1e-3 * max((1 - s) * 1000 / core, s * 1000 / mem)
                rows.append(
                    {
                        "benchmark": f"b{i}",
                        "kernel": f"k{i}",
                        "core_mhz": core,
                        "mem_mhz": mem,
                        "runtime_s": t,
                        "power_w": 10 + 10 * core / 1000 + 30 * 1e-3 / t,
                        "dram_read_throughput": s * 60e9,
                        "dram_write_throughput": 0.0,
                        "ipc": 1.0 + 0.1 * i,
                        "achieved_occupancy": 0.5 + 0.05 * i,
                    }
                )
    return pd.DataFrame(rows)


def _as_ncu(t: pd.DataFrame) -> pd.DataFrame:
    # the nvprof transition guide's names; ncu prints the occupancy in percent, cosim read writes the fraction
    out = t.rename(
        columns={
            "dram_read_throughput": "dram__bytes_read.sum.per_second",
            "dram_write_throughput": "dram__bytes_write.sum.per_second",
            "ipc": "sm__inst_executed.avg.per_cycle_active",
        }
    )
    out["sm__warps_active.avg.pct_of_peak_sustained_active"] = out.pop("achieved_occupancy")
    return out


def _as_dcgm(t: pd.DataFrame) -> pd.DataFrame:
    # DRAMA: the share of cycles the memory interface is busy = traffic / a peak of 240 GB/s at 1000 MHz (a hand choice)
    out = t.drop(columns=["dram_read_throughput", "dram_write_throughput", "ipc", "achieved_occupancy"])
    out["DRAMA"] = t["dram_read_throughput"] / 240e9
    out["FP32A"] = t["ipc"] / 4.0
    out["SMOCC"] = t["achieved_occupancy"]
    return out


def _rows(t: pd.DataFrame) -> pd.DataFrame:
    return with_profiles(check_table(t, source="t"), reference=(1000.0, 1000.0), source="t")


def test_every_map_has_units_and_a_source_for_each_quantity():
    for tool in TOOLS:
        for name, q in feature_map(tool)["quantities"].items():
            assert q["columns"] and q["unit"] and q["source"] and float(q["scale"]) > 0, (tool, name)


def test_the_tool_is_told_by_the_column_names():
    t = _roofline()
    assert resolve_tool(t.columns) == "nvprof"
    assert resolve_tool(_as_ncu(t).columns) == "ncu"
    assert resolve_tool(_as_dcgm(t).columns) == "dcgm"
    assert resolve_tool(t.drop(columns=["ipc"]).columns) is None


def test_ncu_names_give_the_same_model_as_nvprofs():
    # same quantities by the transition guide's definitions: the same predictions
    nv, ncu = _rows(_roofline()), _rows(_as_ncu(_roofline()))
    a = predict_ratios("physics", fit_family("physics", nv), nv)
    b = predict_ratios("physics", fit_family("physics", ncu), ncu)
    np.testing.assert_allclose(a[0], b[0], rtol=1e-6)
    np.testing.assert_allclose(a[1], b[1], rtol=1e-6)


def test_dcgm_fields_recover_the_roofline():
    rows = _rows(_as_dcgm(_roofline()))
    model = fit_family("physics", rows)
    assert model["features"] == "dcgm"
    rt, pw = predict_ratios("physics", model, rows)
    assert np.mean(np.abs(rt * rows["runtime_s_ref"] / rows["runtime_s"] - 1)) < 0.03
    assert np.mean(np.abs(pw * rows["power_w_ref"] / rows["power_w"] - 1)) < 0.03


def test_the_default_reference_is_the_highest_pair_every_kernel_has():
    t = check_table(_roofline(skip_top_for="b2"), source="t")
    assert default_reference(t, source="t") == (1000.0, 700.0)  # b2 lacks 1000/1000; every kernel has 1000/700


def test_no_common_pair_is_refused_in_one_line(tmp_path, capsys):
    t = _roofline(n=4)
    t = t[~((t["benchmark"] == "b0") & (t["core_mhz"] == 400)) & ~((t["benchmark"] == "b1") & (t["core_mhz"] > 400))]
    t.to_csv(tmp_path / "t.csv", index=False)
    assert main(["kernel-fit", str(tmp_path / "t.csv"), "-o", str(tmp_path / "m.json"), "--family", "physics"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no clock pair at which every kernel was profiled" in err[0] and "--reference-pair" in err[0]


def test_kernel_fit_fits_the_family_asked_and_predict_uses_it(tmp_path, capsys):
    _as_ncu(_roofline()).to_csv(tmp_path / "t.csv", index=False)
    m = tmp_path / "m.json"
    assert main(["kernel-fit", str(tmp_path / "t.csv"), "-o", str(m), "--family", "physics"]) == 0
    out = capsys.readouterr().out
    assert "reference 1000,1000 MHz" in out and "physics features from ncu" in out
    assert main(["kernel-predict", str(m), str(tmp_path / "t.csv"), "-o", str(tmp_path / "p.csv")]) == 0
    assert main(["kernel-predict", str(m), str(tmp_path / "t.csv"), "--family", "trees", "-o", str(tmp_path / "q.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds the physics family only" in err[0]


def test_a_table_without_physics_features_fits_the_trees_or_refuses_physics(tmp_path, capsys):
    _roofline().drop(columns=["ipc"]).to_csv(tmp_path / "t.csv", index=False)
    args = ["kernel-fit", str(tmp_path / "t.csv"), "-o", str(tmp_path / "m.json")]
    assert main([*args, "--family", "physics"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nvprof: ipc" in err[0] and "ncu: dram__bytes_read.sum.per_second" in err[0] and "--family trees" in err[0]
    assert main(args) == 0
    r = capsys.readouterr()
    assert "fitted trees on" in r.out and "fitting the trees alone" in r.err


@pytest.mark.parametrize(
    ("argv", "missing"),
    [
        (["kernel-fit", "T", "-o", "M.json"], "scipy"),
        (["kernel-fit", "T", "-o", "M.json", "--family", "trees"], "sklearn"),
        (["kernel-eval", "T", "--test-boards", "a"], "sklearn"),
    ],
)
def test_a_missing_extra_is_one_line_naming_it(tmp_path, capsys, monkeypatch, argv, missing):
    _roofline().to_csv(tmp_path / "T", index=False)
    monkeypatch.chdir(tmp_path)
    for name in [m for m in sys.modules if m == missing or m.startswith(missing + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, missing, None)  # import of a None entry raises ImportError: as if not installed
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs the [kernels] extra" in err[0] and "pip install 'cosim[kernels]'" in err[0], err
    assert "internal error" not in err[0]


def test_physics_predictions_need_neither_scipy_nor_sklearn(tmp_path, capsys, monkeypatch):
    _roofline().to_csv(tmp_path / "t.csv", index=False)
    m = tmp_path / "m.json"
    assert main(["kernel-fit", str(tmp_path / "t.csv"), "-o", str(m), "--family", "physics"]) == 0
    for missing in ("scipy", "sklearn"):
        for name in [k for k in sys.modules if k == missing or k.startswith(missing + ".")]:
            monkeypatch.delitem(sys.modules, name)
        monkeypatch.setitem(sys.modules, missing, None)
    assert main(["kernel-predict", str(m), str(tmp_path / "t.csv"), "-o", str(tmp_path / "p.csv")]) == 0


def test_trees_applied_to_a_table_lacking_their_features_refuse_in_one_line(tmp_path, capsys):
    t = _roofline()
    t.to_csv(tmp_path / "t.csv", index=False)
    t.drop(columns=["ipc"]).to_csv(tmp_path / "less.csv", index=False)
    m = tmp_path / "m.json"
    assert main(["kernel-fit", str(tmp_path / "t.csv"), "-o", str(m), "--family", "trees"]) == 0
    capsys.readouterr()
    assert main(["kernel-predict", str(m), str(tmp_path / "less.csv"), "-o", str(tmp_path / "p.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "lacks 1 of them (ipc)" in err[0] and not (tmp_path / "p.csv").exists()


def test_a_table_profiled_at_one_pair_takes_that_pair_as_reference():
    # profiled (ncu/DCGM once) at 700/1000 only, timed and metered at every pair: its features are blank elsewhere
    t = _roofline()
    once = (t["core_mhz"] == 700.0) & (t["mem_mhz"] == 1000.0)
    feats = ["dram_read_throughput", "dram_write_throughput", "ipc", "achieved_occupancy"]
    t.loc[~once, feats] = np.nan
    table = check_table(t, source="t")
    assert default_reference(table, source="t") == (700.0, 1000.0)
    rows = with_profiles(table, reference=(700.0, 1000.0), source="t")
    assert rows["f_ipc"].notna().all() and len(rows) == len(t)


def test_an_occupancy_left_in_percent_is_refused_in_one_line(tmp_path, capsys):
    t = _as_ncu(_roofline())
    t["sm__warps_active.avg.pct_of_peak_sustained_active"] *= 100.0  # as ncu prints it, unconverted
    t.to_csv(tmp_path / "t.csv", index=False)
    assert main(["kernel-fit", str(tmp_path / "t.csv"), "-o", str(tmp_path / "m.json"), "--family", "physics"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sm__warps_active.avg.pct_of_peak_sustained_active is 50" in err[0] and "divide by 100" in err[0]
