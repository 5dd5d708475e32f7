"""What-if checked against gem5: predict a big.LITTLE run at other clocks from one recorded run, and compare with
gem5 run at those clocks.  ``python tests/whatif_pairs.py BASE_RUN OTHER_RUN...`` prints the errors;
``--all RUN RUN...`` takes every run in turn as the base for all the others.

A run's per-cluster runtime is when its CPUs last computed (the last epoch with active cycles); its energy is the
cluster's energy over the whole run (a cluster stays powered until the run ends), as `cosim power` prices it.
"""

from __future__ import annotations

import functools
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from cosim import ClusterSpec, load_model, power_timeline, read_config
from cosim.dse import interval
from cosim.dse.whatif import cluster_done_s, recorded_run, whatif
from cosim.readers.gem5_stats import read_stats_table, stats_file

CLUSTERS = (("big", "system.bigCluster", "cortex-a15-walker2017"), ("little", "system.littleCluster", "cortex-a7-gemstone2018"))
SE_CLUSTERS = (("cpu", "system.cpu", "cortex-a15-gemstone2018"),)  # the se-one set-up: gem5's se.py, one O3 CPU
SE_MINOR_CLUSTERS = (("cpu", "system.cpu", "cortex-a7-gemstone2018"),)  # se-minor: se.py, one Minor CPU


def clusters_of(setup: str) -> tuple:
    """The clusters a suite set-up's runs are priced with: big.LITTLE, or se.py's one CPU."""
    if setup == "se-minor":
        return SE_MINOR_CLUSTERS
    return SE_CLUSTERS if setup.startswith("se-") else CLUSTERS


@functools.cache
def _stats_table(run: Path):
    """The run's stats as ``cosim power`` reads them (numpy columns; :func:`cosim.read_stats` is its DataFrame)."""
    return read_stats_table(stats_file(run))


@functools.cache
def load(run: Path, clusters=CLUSTERS):
    stats = _stats_table(run).to_frame()  # read_stats(stats_file(run)), from the one reading
    config = read_config(run / "config.ini")
    specs = [ClusterSpec(name, path, load_model(model)) for name, path, model in clusters]
    return stats, config, specs


@functools.cache
def measured(run: Path, clusters=CLUSTERS) -> dict:
    _, config, specs = load(run, clusters)
    timeline = power_timeline(_stats_table(run), config, specs)  # as cosim power prices it: from the numpy columns
    rec = recorded(run, clusters)
    ends = np.cumsum(rec.duration_s)
    out = {"runtime_s": float(ends[-1]), "energy_j": float(timeline["energy_j"].sum())}
    # the highest dump's power, all clusters [W]
    out["peak_power_w"] = float((timeline.groupby("epoch")["energy_j"].sum() / timeline.groupby("epoch")["duration_s"].first()).max())
    for c in rec.clusters:
        # its last busy cycle and load wait (the end of that epoch for a run's only cluster)
        out[f"{c.name}_runtime_s"] = cluster_done_s(c, rec.duration_s, alone=len(rec.clusters) == 1)
        out[f"{c.name}_energy_j"] = float(timeline.loc[timeline["cluster"] == c.name, "energy_j"].sum())
    return out


@functools.cache
def clocks(run: Path, clusters=CLUSTERS) -> tuple[float, ...]:
    """The run's clusters' clocks [MHz], from its config alone (gem5 rounds 1800 MHz to 556 ticks: to 100 MHz)."""
    config = load(run, clusters)[1]
    return tuple(float(np.round(config.cluster(n, p).freq_mhz / 100) * 100) for n, p, _ in clusters)


@functools.cache
def recorded(run: Path, clusters=CLUSTERS):
    """The run as the what-if reads it (read once a session: a suite run is the base of up to 14 pairs)."""
    return recorded_run(*load(run, clusters))


def compare(base: Path, other: Path, clusters=CLUSTERS) -> dict:
    """Errors [%] of the what-if from ``base`` at ``other``'s clocks, against ``other`` itself."""
    return compare_many(base, [other], clusters)[0]


def compare_many(base: Path, others: list[Path], clusters=CLUSTERS) -> list[dict]:
    """:func:`compare` from one base to each of ``others``, in one what-if call (its rows are independent)."""
    names = [n for n, *_ in clusters]
    targets = [clocks(o, clusters) for o in others]
    grid = pd.DataFrame({f"{n}_freq_mhz": [t[i] for t in targets] for i, n in enumerate(names)})
    run = recorded(base, clusters)
    table = whatif(run, grid)
    rows = [_errors(table.iloc[i], target, measured(other, clusters), names) for i, (other, target) in enumerate(zip(others, targets))]
    return [{**row, **need} for row, need in zip(rows, _band_inputs(run, grid, table, [measured(o, clusters) for o in others]))]


def _band_inputs(run, grid: pd.DataFrame, table: pd.DataFrame, actual: list[dict]) -> list[dict]:
    """What calibrating the interval's bands reads from each pair (tests/whatif_calibrate.py): the half-width
    relative to the prediction that the band must add to the shifts' part to hold gem5's value (``*_need``: the
    interval less its band, cosim.dse.interval.relative_half_width), and the clock's move and memory share per cluster."""
    character = interval.run_character(run)
    out = [{"one_dump": character.n_dumps == 1} for _ in range(len(grid))]
    for key, part, band in (("runtime_s", "runtime_s", interval.RUNTIME_BAND), ("energy_j", "energy_j_whatif", interval.ENERGY_BAND)):
        w = interval.relative_half_width(character, grid, band)
        point = table[key].to_numpy()
        lo, hi = table[f"{part}_lo"].to_numpy() + point * w, table[f"{part}_hi"].to_numpy() - point * w
        for i, row in enumerate(out):
            row[f"{key}_need"] = max(lo[i] - actual[i][key], actual[i][key] - hi[i]) / point[i]
    for name, share in character.memory_share.items():
        move = np.abs(np.log(grid[f"{name}_freq_mhz"].to_numpy(dtype=float) / character.recorded_mhz[name]))
        for i, row in enumerate(out):
            row[f"{name}_move"], row[f"{name}_share"] = float(move[i]), share
    return out


def _errors(predicted: pd.Series, target: tuple[float, ...], actual: dict, names: list[str]) -> dict:
    keys = ("runtime_s", *(f"{n}_runtime_s" for n in names), "energy_j", *(f"{n}_energy_j" for n in names), "peak_power_w")
    out = {"to": "/".join(f"{f:g}" for f in target) + " MHz", **{k: 100 * (predicted[k] - actual[k]) / actual[k] for k in keys}}
    # the interval's what-if part (gem5 under the same model): its half-width [%] and whether it holds gem5's value
    for k, part in (("runtime_s", "runtime_s"), ("energy_j", "energy_j_whatif")):
        out[f"{k}_width"] = 100 * (predicted[f"{part}_hi"] - predicted[f"{part}_lo"]) / 2 / predicted[k]
        out[f"{k}_covered"] = bool(predicted[f"{part}_lo"] <= actual[k] <= predicted[f"{part}_hi"])
    last = [max(names, key=lambda n: row[f"{n}_runtime_s"]) for row in (predicted, actual)]
    out["ends_with"] = last[0] if last[0] == last[1] else f"{last[0]} (gem5: {last[1]})"
    out["flags"] = predicted["flags"]
    return out


def _table(base: Path, others: list[Path]) -> None:
    rows = [compare(base, o) for o in others]
    print(f"from {base.name} ({'/'.join(f'{f:g}' for f in clocks(base))} MHz): error of the what-if [%]")
    print(pd.DataFrame(rows).round(1).to_string(index=False))


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    every = sys.argv[1] == "--all"
    runs = [Path(p) for p in sys.argv[1 + every :]]
    for base in runs if every else runs[:1]:
        _table(base, [r for r in runs if r != base])


def suite_rows(root: Path, setup: str = "*", programs: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Every ordered pair of every program (or of ``programs``) and set-up (``1c-epoch``, ...) recorded under ``root``
    (PROGRAM/SETUP/BIG_LITTLE/)."""
    return pd.concat(
        [_setup_rows(root, s, programs) for s in sorted({p.name for p in root.glob(f"*/{setup}") if p.is_dir()})] or [pd.DataFrame()],
        ignore_index=True,
    )


@functools.cache
def _setup_rows(root: Path, setup: str, programs: tuple[str, ...] | None) -> pd.DataFrame:
    """One set-up's pairs, computed once a session (the tests and the docs read the same set-ups)."""
    rows = []
    for setup_dir in sorted(p for p in root.glob(f"*/{setup}") if p.is_dir() and (programs is None or p.parent.name in programs)):
        setup = setup_dir
        runs = sorted(p for p in setup.iterdir() if p.is_dir())
        clusters = clusters_of(setup.name)
        pairs = [(base, [other for other in runs if other != base]) for base in runs]
        if setup.name == "1c-apart":  # the clocks moved apart: predicted from and to the 1c-epoch runs too
            together = sorted(p for p in (setup.parent / "1c-epoch").iterdir() if p.is_dir())
            pairs = [(base, others + together) for base, others in pairs]
            pairs += [(base, runs) for base in together]
        for base, others in pairs:
            fr = "/".join(f"{f:g}" for f in clocks(base, clusters))
            for row in compare_many(base, others, clusters):
                rows.append({"program": setup.parent.name, "setup": setup.name, "from": fr, **row})
    return pd.DataFrame(rows)


def summary(rows: pd.DataFrame) -> dict:
    """The suite's headline numbers: worst errors [%], pairs within 5 %, the interval's coverage and mean half-width [%]."""
    out = {"pairs": len(rows)}
    for k in ("runtime_s", "energy_j"):
        worst = rows.loc[rows[k].abs().idxmax()]
        out[f"worst_{k}"] = f"{worst[k]:+.1f} % ({worst['program']} {worst['setup']} {worst['from']} -> {worst['to']})"
        out[f"{k}_within_5"] = int((rows[k].abs() <= 5).sum())
        out[f"{k}_coverage"] = float(rows[f"{k}_covered"].mean())
        out[f"{k}_mean_width"] = float(rows[f"{k}_width"].mean())
    worst = rows.loc[rows["peak_power_w"].abs().idxmax()]
    out["worst_peak_power_w"] = f"{worst['peak_power_w']:+.1f} % ({worst['program']} {worst['setup']} {worst['from']} -> {worst['to']})"
    out["peak_power_w_within_5"] = int((rows["peak_power_w"].abs() <= 5).sum())
    return out


def suite_table(root: Path, *, setup: str = "*", csv: Path | None = None, programs: tuple[str, ...] | None = None) -> pd.DataFrame:
    rows = suite_rows(root, setup, programs)
    if csv is not None:
        rows.to_csv(csv, index=False)
    cols = [
        "program",
        "setup",
        "from",
        "to",
        "runtime_s",
        "big_runtime_s",
        "little_runtime_s",
        "energy_j",
        "big_energy_j",
        "little_energy_j",
        "peak_power_w",
    ]
    print("error of the what-if [%]")
    print(rows.reindex(columns=cols + (["cpu_runtime_s"] if "cpu_runtime_s" in rows else [])).round(1).to_string(index=False))
    for k, v in summary(rows).items():
        print(f"{k}: {v:.3f}" if isinstance(v, float) else f"{k}: {v}")
    return rows


# --- more real runs than the suite: the interval's calibration pool (tests/whatif_calibrate.py) ------------------

SHARED_GEM5 = Path(__file__).resolve().parents[2] / "shared" / "data" / "gem5"
# MiBench programs of ARMPM's training split on gem5's A15-like ex5_big, se.py -n 4 with one busy CPU, one dump, at
# 1000/1500/2000 MHz (its README); priced as the se-one set-up is, with what cosim picks for an O3 CPU
XU3 = SHARED_GEM5 / "xu3-mibench-train"
# the explore grid's 24 recorded runs (docs/explore/search-grid.toml: phases size 1, 1 ms dumps, 1 or 2 big CPUs,
# 256 kB or 1 MB big L2, big 1000/1400/1800 x LITTLE 600/1400 MHz), priced as its replay prices them
GRID = Path(__file__).resolve().parent / "data" / "explore-grid.tar.xz"
# the two big.LITTLE runs made for cosim (2 O3 + 2 Minor CPUs, phases size 30, 100 us dumps)
V24 = tuple(SHARED_GEM5 / f"cosim-v24-se-biglittle-o3-{b}MHz-minor-{m}MHz" for b, m in ((1800, 1400), (1000, 600)))


def pair_rows(groups: dict[tuple[str, str], list[Path]], clusters) -> pd.DataFrame:
    """Every ordered pair within each group of runs (``(program, set-up)``: runs of one program and system at other
    clocks), as :func:`suite_rows` gives them."""
    rows = []
    for (program, setup), runs in groups.items():
        for base in runs:
            fr = "/".join(f"{f:g}" for f in clocks(base, clusters))
            for row in compare_many(base, [o for o in runs if o != base], clusters):
                rows.append({"program": program, "setup": setup, "from": fr, **row})
    return pd.DataFrame(rows)


@functools.cache
def xu3_rows() -> pd.DataFrame:
    """xu3-mibench-train: 11 programs x 3 clocks, 66 ordered pairs (set-up ``xu3-mibench``); empty without ../shared."""
    if not XU3.is_dir():
        return pd.DataFrame()
    groups = {
        (p.name, "xu3-mibench"): sorted(r for r in p.iterdir() if (r / "config.ini").is_file()) for p in sorted(XU3.iterdir()) if p.is_dir()
    }
    return pair_rows(groups, SE_CLUSTERS)


@functools.cache
def grid_rows() -> pd.DataFrame:
    """The explore grid: every ordered pair among the 6 clock pairs of each of its 4 systems, 120 (set-up
    ``explore-grid``, program ``phases``)."""
    import atexit
    import shutil
    import tarfile
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="cosim-grid-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    with tarfile.open(GRID) as tar:
        tar.extractall(folder, filter="data")
    groups: dict[tuple[str, str], list[Path]] = {}
    for run in sorted(p for p in folder.iterdir() if p.is_dir()):
        big = read_config(run / "config.ini").cluster("big", "system.bigCluster")
        system = f"explore-grid {big.n_cpus} big, L2 {sorted(big.cache_bytes.get(l2, 0) for l2 in set(big.l2.values()))}"
        groups.setdefault(("phases", system), []).append(run)
    rows = pair_rows(groups, CLUSTERS)
    rows["setup"] = "explore-grid"
    return rows


@functools.cache
def v24_rows() -> pd.DataFrame:
    """The two big.LITTLE runs made for cosim, from each to the other (set-up ``v24-2c``, program ``phases``)."""
    if not all(run.is_dir() for run in V24):
        return pd.DataFrame()
    return pair_rows({("phases", "v24-2c"): list(V24)}, CLUSTERS)
