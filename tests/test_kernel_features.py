"""Kernel models from any profiler's names (nvprof, Nsight Compute, DCGM), the families kernel-fit fits, its default
reference pair, and the one-line refusal where the [kernels] extra is missing.  Small hand-made tables: fast."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from helpers import run_cosim as subprocess_cosim

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
    assert "reference 1000,1000 MHz" in out and "features from ncu" in out
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


# --- one folder per clock pair: kernels.csv + an ncu, DCGM or table profile (cosim kernel-fit FOLDER) -----------------

NCU_HEADER = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC",'
    '"Section Name","Metric Name","Metric Unit","Metric Value"'
)
NCU_METRICS = (  # (ncu name, ncu's unit, the table column, the factor from the column's SI value to the unit printed)
    ("dram__bytes_read.sum.per_second", "Gbyte/second", "dram_read_throughput", 1e-9),
    ("dram__bytes_write.sum.per_second", "Gbyte/second", "dram_write_throughput", 1e-9),
    ("sm__inst_executed.avg.per_cycle_active", "inst/cycle", "ipc", 1.0),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "%", "achieved_occupancy", 100.0),
)


def _ncu_text(t: pd.DataFrame) -> str:
    """ncu --csv (details page) of each kernel's two launches, with the program's lines before the table."""
    lines = ["==PROF== Connected to process 4242 (/home/user/app)", NCU_HEADER]
    launch = 0
    for _, r in t.iterrows():
        for _ in range(2):
            for name, unit, col, k in NCU_METRICS:
                value = f"{r[col] * k:,.4f}" if unit != "Gbyte/second" else f"{r[col] * k:.4f}"
                lines.append(
                    f'"{launch}","4242","app","127.0.0.1","{r["kernel"]}(float *, int)","1","7","(256, 1, 1)","(96, 1, 1)","0","7.0",'
                    f'"Section","{name}","{unit}","{value}"'
                )
            launch += 1
    return "\n".join(lines) + "\n"


def _dmon_text(r: pd.Series) -> str:
    """dcgmi dmon of one benchmark: 3 idle samples, 6 while its kernel repeats, 2 idle."""
    head = "# Entity  SMACT  SMOCC  DRAMA  FP32A  POWER\n      ID                               W\n"
    idle = "   GPU 0  0.000  0.000  0.000  0.000   40.0\n"
    busy = f"   GPU 0  0.950  {r['SMOCC']:.4f}  {r['DRAMA']:.4f}  {r['FP32A']:.4f}  {r['power_w']:.1f}\n"
    return head + idle * 3 + busy * 6 + idle * 2


def _pair_folders(root, t: pd.DataFrame, form: str, *, idle: bool = False) -> None:
    for (core, mem), rows in t.groupby(["core_mhz", "mem_mhz"]):
        folder = root / f"core{core:g}_mem{mem:g}"
        folder.mkdir(parents=True)
        measured = rows[["benchmark", "kernel", "runtime_s", "power_w"]]
        if idle:
            measured = measured.assign(idle_power_w=10 + 10 * core / 1000)  # the hand-made model's static part
        measured.to_csv(folder / "kernels.csv", index=False)
        if (core, mem) != (1000.0, 1000.0):
            continue  # profiled at the reference pair only
        if form == "table":
            rows.drop(columns=["core_mhz", "mem_mhz", "runtime_s", "power_w"]).to_csv(folder / "profile.csv", index=False)
        elif form == "ncu":
            (folder / "app.ncu.csv").write_text(_ncu_text(rows))
        else:
            for _, r in rows.iterrows():
                (folder / f"{r['benchmark']}.dmon.log").write_text(_dmon_text(r))


@pytest.mark.parametrize("form", ["table", "ncu", "dmon"])
def test_a_folder_per_clock_pair_is_a_kernel_table(tmp_path, form):
    """kernels.csv at every pair + a profile at the reference pair read as the hand-made table they were written from:
    ncu's units converted (GB/s -> B/s, % -> fraction), a dmon log averaged over its active samples (idle ones left out)."""
    from cosim.kernels.dvfs import read_dvfs_table

    t = _roofline()
    source = _as_dcgm(t) if form == "dmon" else t
    _pair_folders(tmp_path, source, form)
    got = read_dvfs_table(tmp_path)
    assert len(got) == len(t) == 54 and set(got["core_mhz"]) == {400.0, 700.0, 1000.0}
    at_ref = got[(got["core_mhz"] == 1000) & (got["mem_mhz"] == 1000)].set_index("benchmark").sort_index()
    want = source[(source["core_mhz"] == 1000) & (source["mem_mhz"] == 1000)].set_index("benchmark").sort_index()
    cols = ["DRAMA", "FP32A", "SMOCC"] if form == "dmon" else ["dram_read_throughput", "ipc", "achieved_occupancy"]
    names = dict(zip([c for _, _, c, _ in NCU_METRICS], [n for n, _, _, _ in NCU_METRICS]))
    for col in cols:
        mine = names[col] if form == "ncu" else col
        assert np.allclose(at_ref[mine].to_numpy(float), want[col].to_numpy(float), rtol=1e-3, atol=1e-4), col  # 4 decimals written
    other = got[(got["core_mhz"] == 400)]
    assert other[names["ipc"] if form == "ncu" else cols[1]].isna().all()  # not profiled there: blank, never invented
    assert resolve_tool(got.columns) == {"table": "nvprof", "ncu": "ncu", "dmon": "dcgm"}[form]


def test_an_ncu_kernel_the_table_does_not_time_is_left_out_with_a_warning(tmp_path):
    from cosim.errors import CosimWarning
    from cosim.kernels.dvfs import read_dvfs_table

    t = _roofline()
    _pair_folders(tmp_path, t, "ncu")
    ref = tmp_path / "core1000_mem1000"
    helper = t[(t["core_mhz"] == 1000) & (t["mem_mhz"] == 1000)].head(1).assign(kernel="memsetHelper")
    text = _ncu_text(helper).replace('"0","4242"', '"99","4242"').split("\n", 2)[2]  # its rows only, launch 99
    (ref / "app.ncu.csv").write_text((ref / "app.ncu.csv").read_text() + text)
    with pytest.warns(CosimWarning, match=r"1 profiled kernel\(s\) not in kernels.csv left out \(memsetHelper\)"):
        got = read_dvfs_table(tmp_path)
    assert len(got) == 54


def test_kernel_fit_reads_the_pair_folders_and_says_what_a_missing_idle_power_costs(tmp_path):
    _pair_folders(tmp_path / "no-idle", _as_ncu(_roofline()).rename(columns=lambda c: c), "table")
    r = subprocess_cosim("kernel-fit", tmp_path / "no-idle", "-o", tmp_path / "m.json", "--family", "physics")
    assert r.returncode == 0, r.stderr
    assert "features from ncu" in r.stdout
    note = [line for line in r.stderr.splitlines() if "idle_power_w" in line]
    assert len(note) == 1 and "2.7 -> 5.0 %" in note[0] and "nvidia-smi --query-gpu=power.draw" in note[0]
    _pair_folders(tmp_path / "idle", _roofline(), "table", idle=True)
    r = subprocess_cosim("kernel-fit", tmp_path / "idle", "-o", tmp_path / "m2.json", "--family", "physics")
    assert r.returncode == 0 and "idle_power_w" not in r.stderr, r.stderr
    # a profile naming a kernel that kernels.csv does not time is refused, naming it (nothing dropped silently)
    prof = tmp_path / "idle" / "core1000_mem1000" / "profile.csv"
    pd.concat([pd.read_csv(prof), pd.read_csv(prof).head(1).assign(benchmark="ghost")]).to_csv(prof, index=False)
    r = subprocess_cosim("kernel-fit", tmp_path / "idle", "-o", tmp_path / "m3.json")
    assert r.returncode == 2 and "ghost/k0" in r.stderr and "kernels.csv does not time" in r.stderr and "Traceback" not in r.stderr
