"""A kernel DVFS table from one folder per clock pair, as today's tools leave it (``cosim kernel-fit FOLDER``).

Layout (docs/howto/ncu-dcgm-kernel-models.md)::

    FOLDER/
      core1380_mem877/          one folder per (core, memory) clock pair [MHz], named core<C>_mem<M>
        kernels.csv             measured at this pair: benchmark, kernel, runtime_s [s], power_w [W]
                                (optional idle_power_w [W]: the board idle at this pair)
        <benchmark>.power.csv   or, instead of kernels.csv rows, the raw logs of one run of the benchmark:
        <benchmark>.trace.csv   an nvidia-smi --query-gpu CSV (or dmon -o DT log) and its kernel trace (nsys
                                cuda_gpu_trace CSV or nvprof --print-gpu-trace); each kernel's runtime_s is the
                                mean of its launches, its power_w the measured mean power of the launches the
                                readings resolve (cosim gpu-energy's rule, the offset found by correlation)
        *.ncu.csv               ncu --csv of the kernels (details or --page raw), read by header names
        <benchmark>.dmon.log    dcgmi dmon while the benchmark's kernel repeated (mean over its active samples)
        profile.csv             or the profile as a table: benchmark, kernel, then one column per feature
      core1237_mem877/
        kernels.csv             a profile is needed at the reference pair only

``kernels.csv`` is per-kernel measured time and power (a timed loop and the mean power over its
plateau, or cosim's per-kernel energy of a power log and a trace).  A kernel's features are the
profile's; pairs without a profile have blank features (never used: the models read the profile at
the reference pair).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pandas as pd

from cosim.errors import CosimError, CosimWarning

PAIR_NAME = re.compile(r"^core(?P<core>\d+(?:\.\d+)?)_mem(?P<mem>\d+(?:\.\d+)?)$")
MEASURED = ("benchmark", "kernel", "runtime_s", "power_w")
# the share of a dmon log's peak SM activity above which a sample is the kernel's (not the program's start or end)
DMON_ACTIVE = 0.5
IDLE_COST = (
    "without idle_power_w the physics family's power misses the idle share (GTX 980 logs, leave-one-benchmark-out: "
    "power MAPE 2.7 -> 5.0 %; the roofline family does not read it: 2.6 % either way)"
)
IDLE_HOW = (
    "measure it: nvidia-smi --query-gpu=power.draw --format=csv -lms 100 for 5 s with the GPU idle at each pair, mean as idle_power_w"
)


def is_pair_layout(path: Path) -> bool:
    return path.is_dir() and any(p.is_dir() and PAIR_NAME.match(p.name) for p in path.iterdir())


def _kernel_function(text: str) -> str:
    from cosim.readers.dvfs_logs import kernel_name

    return kernel_name(str(text))


def _ncu_profile(path: Path) -> pd.DataFrame:
    """kernel (function name) -> the mean of each metric [SI] over its launches, ncu's metric names as columns."""
    from cosim.readers.ncu import read_ncu

    long = read_ncu(path)
    long = long[long["metric"].astype(str) != ""].copy()
    long["kernel"] = long["kernel"].map(_kernel_function)
    wide = long.pivot_table(index="kernel", columns="metric", values="value", aggfunc="mean").reset_index()
    wide.columns.name = None
    return wide


def _dmon_profile(path: Path, benchmark: str, kernel: str) -> pd.DataFrame:
    """One row: the mean of each DCGM field over the samples whose SMACT is at least :data:`DMON_ACTIVE` of its peak."""
    from cosim.readers.dcgm import read_dcgm

    long = read_dcgm(path)
    wide = long.pivot_table(index=["entity", "sample"], columns="metric", values="value", aggfunc="mean")
    if wide.index.get_level_values("entity").nunique() > 1:
        raise CosimError(f"{path}: samples of several GPUs; keep the one the benchmark ran on (dcgmi dmon -i N)")
    if "SMACT" not in wide.columns:
        raise CosimError(f"{path}: no SMACT field, so no way to tell the kernel's samples; record it (dcgmi dmon -e 1002,...)")
    active = wide[wide["SMACT"] >= DMON_ACTIVE * wide["SMACT"].max()]
    if len(active) < 3 or not wide["SMACT"].max() > 0:
        raise CosimError(f"{path}: {len(active)} active sample(s); repeat the kernel for seconds while dcgmi dmon samples")
    row = active.drop(columns=[c for c in ("POWER", "TOTEC", "SMCLK", "MMCLK") if c in active.columns]).mean()
    return pd.DataFrame([{"benchmark": benchmark, "kernel": kernel, **row.to_dict()}])


def _profile(folder: Path, measured: pd.DataFrame) -> pd.DataFrame | None:
    """The pair's profile (benchmark, kernel, features) from whichever of the three forms it holds, else None."""
    parts = []
    if (folder / "profile.csv").exists():
        from cosim.readers.measured import read_table

        table = read_table(folder / "profile.csv")
        missing = [c for c in ("benchmark", "kernel") if c not in table.columns]
        if missing:
            raise CosimError(
                f"{folder / 'profile.csv'}: no {' or '.join(missing)} column; a profile table has benchmark, kernel, then features"
            )
        parts.append(table.astype({"benchmark": str, "kernel": str}))
    for path in sorted(folder.glob("*.ncu.csv")):
        wide = _ncu_profile(path)
        names = measured[["benchmark", "kernel"]].assign(function=measured["kernel"].map(_kernel_function))
        hit = names.merge(wide, left_on="function", right_on="kernel", suffixes=("", "_ncu"))
        untimed = sorted(set(wide["kernel"]) - set(names["function"]))
        if untimed:  # ncu profiles every launch: kernels the table does not time are left out, and said so
            warnings.warn(
                CosimWarning(
                    f"{path}: {len(untimed)} profiled kernel(s) not in kernels.csv left out ({', '.join(untimed[:3])}"
                    f"{', ...' if len(untimed) > 3 else ''}); add their runtime_s and power_w to model them"
                ),
                stacklevel=2,
            )
        parts.append(hit.drop(columns=["function", "kernel_ncu"]))
    for path in sorted(folder.glob("*.dmon.log")):
        bench = path.name.removesuffix(".dmon.log")
        kernels = measured.loc[measured["benchmark"] == bench, "kernel"].unique()
        if len(kernels) != 1:
            raise CosimError(
                f"{path}: kernels.csv has {len(kernels)} kernel(s) of benchmark '{bench}'; a dmon log averages the whole GPU, "
                "so it profiles one kernel: name the benchmark's one kernel in kernels.csv, or profile with ncu"
            )
        parts.append(_dmon_profile(path, bench, str(kernels[0])))
    if not parts:
        return None
    profile = pd.concat(parts, ignore_index=True)
    dup = profile.duplicated(subset=["benchmark", "kernel"])
    if dup.any():
        r = profile[dup].iloc[0]
        raise CosimError(f"{folder}: {r['benchmark']}/{r['kernel']} is profiled twice (two profile files name it); keep one")
    return profile


def _from_logs(folder: Path) -> pd.DataFrame | None:
    """benchmark, kernel, runtime_s [s], power_w [W] per kernel of each ``<benchmark>.power.csv`` +
    ``<benchmark>.trace.csv`` in ``folder`` (layout above), else None; a kernel no launch of which the readings
    resolve is refused, naming the folder and the kernel."""
    from cosim.readers.tidy import detect_format
    from cosim.timeline.logged_run import read_logged_run
    from cosim.timeline.measured_energy import kernel_energy, resolvable_s

    rows = []
    for power_path in sorted(folder.glob("*.power.csv")):
        bench = power_path.name.removesuffix(".power.csv")
        trace_path = folder / f"{bench}.trace.csv"
        if not trace_path.exists():
            raise CosimError(
                f"{power_path}: no {trace_path.name} beside it (the kernel trace of the same run); add it, or give kernels.csv rows"
            )
        if detect_format(power_path, way_out="give an nvidia-smi --query-gpu CSV or kernels.csv rows") == "dcgm-dmon":
            raise CosimError(
                f"{power_path}: a dcgmi dmon log has no times to line up with the trace; log power with nvidia-smi "
                "--query-gpu=timestamp,power.draw.instant --format=csv -lms 50, or give kernels.csv rows"
            )
        run = read_logged_run(power_path, trace_path, align_way_out="give this benchmark's kernels.csv rows instead")
        samples, kernels, window, period, offset = run.samples, run.kernels, run.window_s, run.period_s, run.offset_s
        table = kernel_energy(kernels, samples, window_s=window, offset_s=offset)
        for name, launches in table.groupby("kernel", sort=False):
            resolved = launches[launches["measured_power_w"].notna()]
            if resolved.empty:
                raise CosimError(
                    f"{folder.name}/{bench}: kernel {name} ({len(launches)} launch(es), longest {launches['duration_s'].max() * 1e3:.4g} ms) "
                    f"is shorter than the readings resolve ({resolvable_s(window, period) * 1e3:.4g} ms: {samples.attrs['power']['field']} "
                    "every " + f"{period * 1e3:.3g} ms); run it longer (repeat it in a loop), log faster (-lms, power.draw.instant), "
                    "or give its power_w in kernels.csv"
                )
            if len(resolved) < len(launches):
                warnings.warn(
                    CosimWarning(
                        f"{folder.name}/{bench}: kernel {name}: power from {len(resolved)} of {len(launches)} launch(es), "
                        "the others shorter than the readings resolve"
                    ),
                    stacklevel=2,
                )
            rows.append(
                {
                    "benchmark": bench,
                    "kernel": str(name),
                    "runtime_s": float(launches["duration_s"].mean()),
                    "power_w": float(resolved["measured_energy_j"].sum() / resolved["duration_s"].sum()),
                }
            )
    return pd.DataFrame(rows) if rows else None


def read_pair_folders(root: str | Path) -> pd.DataFrame:
    """The kernel DVFS table (:mod:`cosim.kernels.dvfs`) of a folder of ``core<C>_mem<M>`` folders (layout above)."""
    from cosim.readers.measured import read_table

    root = Path(root)
    rows = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and PAIR_NAME.match(p.name)):
        m = PAIR_NAME.match(folder.name)
        assert m is not None
        logged = _from_logs(folder)
        if not (folder / "kernels.csv").exists() and logged is None:
            raise CosimError(
                f"{folder}: no kernels.csv (benchmark, kernel, runtime_s, power_w measured at this pair) and no <benchmark>.power.csv "
                "+ <benchmark>.trace.csv; add one, or move the folder out"
            )
        measured = read_table(folder / "kernels.csv") if (folder / "kernels.csv").exists() else pd.DataFrame(columns=list(MEASURED))
        missing = [c for c in MEASURED if c not in measured.columns]
        if missing:
            raise CosimError(f"{folder / 'kernels.csv'}: missing column(s) {', '.join(missing)}; it holds {', '.join(MEASURED)} per kernel")
        measured = measured.astype({"benchmark": str, "kernel": str})
        if logged is not None:
            both = sorted(set(logged["benchmark"]) & set(measured["benchmark"]))
            if both:
                raise CosimError(f"{folder}: benchmark {both[0]} is in kernels.csv and has a power log + trace; keep one")
            measured = pd.concat([measured, logged], ignore_index=True) if len(measured) else logged
        profile = _profile(folder, measured)
        if profile is not None:
            unmatched = profile.merge(measured[["benchmark", "kernel"]], how="left", indicator=True)
            lost = unmatched[unmatched["_merge"] == "left_only"]
            if not lost.empty:
                r = lost.iloc[0]
                raise CosimError(
                    f"{folder}: the profile has {r['benchmark']}/{r['kernel']}, which kernels.csv does not time; add its runtime_s "
                    "and power_w, or remove it from the profile"
                )
            measured = measured.merge(profile, on=["benchmark", "kernel"], how="left")
        rows.append(measured.assign(core_mhz=float(m["core"]), mem_mhz=float(m["mem"])))
    if not rows:
        raise CosimError(f"{root}: no core<C>_mem<M> folders (one per clock pair, each with kernels.csv)")
    table = pd.concat(rows, ignore_index=True)
    first = ["benchmark", "kernel", "core_mhz", "mem_mhz", "runtime_s", "power_w"]
    table = table[first + [c for c in table.columns if c not in first]]
    if "idle_power_w" in table.columns and table["idle_power_w"].isna().all():
        table = table.drop(columns=["idle_power_w"])  # absent: kernel-fit says what that costs (idle_note)
    elif "idle_power_w" in table.columns and table["idle_power_w"].isna().any():
        n = int(table["idle_power_w"].isna().sum())
        raise CosimError(f"{root}: idle_power_w is blank in {n} of {len(table)} row(s); give it at every pair or at none ({IDLE_HOW})")
    table.attrs["dvfs"] = {"path": str(root), "dropped": [], "layout": "pair folders"}
    return table.reset_index(drop=True)


def idle_note(table: pd.DataFrame, families: tuple[str, ...]) -> str:
    """One line when the table has no idle power and a family that reads it is fitted, else ``""``."""
    if "idle_power_w" in table.columns or "physics" not in families:
        return ""
    return f"cosim: note: the table has no idle_power_w; {IDLE_COST}; {IDLE_HOW}"
