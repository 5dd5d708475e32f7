"""The kernel models' validation on real GPUs: measured by hand with this script, rendered at docs build.

Measure (minutes of CPU; the tables are not in the repository, see docs/howto/ncu-dcgm-kernel-models.md for where
each comes from; a table is a kernel DVFS table or folder, NV-DVFS-Benchmark's ``*-dvfs-real-profile.csv`` or
GPU-DVFS-Job-Schedule's ``*-Performance-Power.csv`` as published, read by :func:`load`)::

    python docs/_kernel_validation.py --table "GeForce GTX 980=../shared/data/gpu-dvfs/gtx980-wang2018/logs" \\
        --table "GeForce GTX 1080 Ti=gtx1080ti-dvfs-real-Performance-Power.csv" \\
        --table "Tesla V100=v100-dvfs-real-profile.csv" --table "Quadro RTX 8000=rtx8000-dvfs-real-profile.csv" \\
        -o docs/howto/kernel-validation.json

The docs build renders ``docs/howto/kernel-validation.json`` (:func:`kernel_validation_table`): no figure is typed.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "howto" / "kernel-validation.json"


FAMILIES = ("roofline", "physics", "trees")
# decide before you score: the tables that chose the roofline family's form or constant (the how-to's "What chose what");
# every other table's rows are unseen for every choice
CHOSEN_ON = {"Tesla V100": "roofline form and ridge penalty chosen here", "Quadro RTX 8000": "roofline ridge penalty chosen with it"}
# the published tables' columns: ours -> (theirs, factor to SI); the first four name the format
DCGM_COLUMNS = ("DRAMA", "FP16A", "FP32A", "FP64A", "SMACT", "SMOCC", "TENSO")
FORMATS = {
    "NV-DVFS-Benchmark": {
        "core_mhz": ("core_frequency", 1.0),
        "mem_mhz": ("memory_frequency", 1.0),
        "runtime_s": ("time", 1e-3),  # [ms]
        "power_w": ("average_power", 1.0),
        "benchmark": ("benchmark", None),
        "kernel": ("kernel", None),
        **{c: (c, 1.0) for c in DCGM_COLUMNS},  # fractions
    },
    "GPU-DVFS-Job-Schedule": {
        "core_mhz": ("coreF", 1.0),
        "mem_mhz": ("memF", 1.0),
        "runtime_s": ("time/ms", 1e-3),
        "power_w": ("power/W", 1.0),
        "benchmark": ("appName", None),
        "kernel": ("kernel", None),
        "achieved_occupancy": ("achieved_occupancy", 1.0),
        "dram_read_throughput": ("dram_read_throughput", 1e9),  # [GB/s]
        "dram_write_throughput": ("dram_write_throughput", 1e9),
        "ipc": ("executed_ipc", 1.0),
    },
}


def load(name: str, path: Path):
    """A GPU's kernel DVFS table: a published table (:data:`FORMATS`) converted to SI, or a table/folder cosim reads."""
    import pandas as pd

    from cosim.kernels.dvfs import check_table, read_dvfs_table

    if path.is_dir() or path.suffix != ".csv":
        return read_dvfs_table(path)
    raw = pd.read_csv(path)
    for spec in FORMATS.values():
        if {theirs for theirs, _ in list(spec.values())[:4]} <= set(raw.columns):
            table = pd.DataFrame({ours: raw[theirs] * k if k else raw[theirs] for ours, (theirs, k) in spec.items()})
            return check_table(table.assign(device=name), source=str(path))
    return read_dvfs_table(path)


def _errors(pred, rows) -> dict:
    from cosim.kernels.dvfs_eval import errors, off_reference

    e = errors(pred, off_reference(pred, rows), rows).loc["all"]
    return {k: round(float(v), 1) for k, v in e.items()}


def measure(name: str, path: Path) -> dict:
    """Leave-one-benchmark-out on one GPU's table, each family, with frequency scaling from the same reference
    measurement beside it, and each family's fit + validate time (one fit on every row, then the LOBO run)."""
    from cosim.kernels.dvfs import default_reference, with_profiles
    from cosim.kernels.dvfs_eval import lobo
    from cosim.kernels.dvfs_file import fit_model

    table = load(name, path)
    reference = default_reference(table, source=str(path))
    out: dict = {
        "gpu": name,
        "benchmarks": int(table["benchmark"].nunique()),
        "rows": len(table),
        "reference_pair_mhz": list(reference),
        "core_mhz": sorted(map(float, table["core_mhz"].unique())),
        "mem_mhz": sorted(map(float, table["mem_mhz"].unique())),
        "families": {},
    }
    rows = with_profiles(table, reference=reference, source=str(path))
    for family in FAMILIES:
        wall, cpu = time.perf_counter(), time.process_time()
        fit_model(table, reference=reference, source=str(path), families=(family,))
        e = _errors(lobo(rows, family), rows)
        e["fit_validate_wall_s"] = round(time.perf_counter() - wall, 1)
        e["fit_validate_cpu_s"] = round(time.process_time() - cpu, 1)
        out["families"][family] = e
    return out


def unseen(train_name: str, train: Path, test_name: str, test: Path) -> dict:
    """Fitted on every row of one GPU, applied to another GPU's kernels from their profiles at its reference pair."""
    from cosim.kernels.dvfs import default_reference, with_profiles
    from cosim.kernels.dvfs_models import calibrate, fit_family, predict_table
    from cosim.kernels.features import resolve_tool

    a, b = load(train_name, train), load(test_name, test)
    common = [c for c in a.columns if c in b.columns]  # the features both GPUs were profiled for
    a, b = a[common], b[common]
    ra = with_profiles(a, reference=default_reference(a, source=str(train)), source=str(train))
    rb = with_profiles(b, reference=default_reference(b, source=str(test)), source=str(test))
    # the models predict ratios to the reference pair; the unseen GPU's clocks are put at the same ratios to the training
    # GPU's reference pair (the physics family's clock offsets are in the training GPU's MHz), its DRAM throughput with
    # its memory clock so that its traffic per memory cycle is unchanged
    for col, feats in (("core_mhz", []), ("mem_mhz", ["f_dram_read_throughput", "f_dram_write_throughput"])):
        k = ra[f"{col}_ref"].iloc[0] / rb[f"{col}_ref"].iloc[0]
        for c in [col, f"{col}_ref", *[f for f in feats if f in rb]]:
            rb[c] = rb[c] * k
    out = {"train": train_name, "test": test_name, "families": {}}
    tool = resolve_tool(ra.columns, prefix="f_")
    if tool is None or tool != resolve_tool(rb.columns, prefix="f_"):
        return {}  # a model of one tool's features cannot read the other's
    for family in FAMILIES:
        pred = predict_table(family, fit_family(family, ra), calibrate(family, ra), rb)
        out["families"][family] = _errors(pred, rb)
    return out


def _beats(model: float, scaling: float) -> str:
    """The model's MAPE with how many times frequency scaling's it is below, and whether the targets are met
    (<= 5 % and at least 2x below scaling)."""
    times = scaling / model if model > 0 else float("inf")
    mark = "" if model <= 5 and times >= 2 else " ✗"
    return f"{model}{mark} ({times:.1f}×)"


def _covers(pct: float) -> str:
    return f"{pct}" if pct >= 90 else f"{pct} ✗"  # a 90 % interval should cover at least 90 % of held-out rows


def kernel_validation_table(path: Path = RESULTS) -> str:
    """Markdown tables of the committed results."""
    data = json.loads(path.read_text())
    lines = [
        "| GPU | benchmarks × pairs | reference pair [MHz] | family | runtime MAPE [%] (× below scaling) | power MAPE [%] (× below scaling) "
        "| worst row, runtime / power [%] | 90 % interval coverage, runtime / power [%] | mean half-width, runtime / power [%] "
        "| fit + validate [s] (CPU) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for g in data["gpus"]:
        size = f"{g['benchmarks']} × {g['rows'] // g['benchmarks']}"
        pair = "{:g},{:g}".format(*g["reference_pair_mhz"])
        fams = list(g["families"].items())
        for i, (family, e) in enumerate(fams):
            name = f"{g['gpu']} ({CHOSEN_ON[g['gpu']]})" if g["gpu"] in CHOSEN_ON else f"{g['gpu']} (unseen for the roofline choices)"
            head = (name, size, pair) if i == 0 else ("", "", "")
            lines.append(
                f"| {head[0]} | {head[1]} | {head[2]} | {family} "
                f"| {_beats(e['runtime_mape'], e['scaling_runtime_mape'])} | {_beats(e['power_mape'], e['scaling_power_mape'])} "
                f"| {e['runtime_worst']} / {e['power_worst']} | {_covers(e['runtime_coverage'])} / {_covers(e['power_coverage'])} "
                f"| {e['runtime_half_width']} / {e['power_half_width']} | {e['fit_validate_wall_s']} ({e['fit_validate_cpu_s']}) |"
            )
        e = fams[0][1]
        lines.append(f"| | | | frequency scaling | {e['scaling_runtime_mape']} | {e['scaling_power_mape']} | | | | |")
    lines += ["", "| fitted on | applied to (never seen) | family | runtime MAPE [%] (worst) | power MAPE [%] (worst) | coverage [%] |"]
    lines.append("|---|---|---|---|---|---|")
    for u in data["unseen"]:
        for family, e in u["families"].items():
            lines.append(
                f"| {u['train']} | {u['test']} | {family} | {e['runtime_mape']} ({e['runtime_worst']}) "
                f"| {e['power_mape']} ({e['power_worst']}) | {e['runtime_coverage']} / {e['power_coverage']} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", action="append", required=True, metavar="NAME=PATH", help="a GPU's kernel DVFS table")
    parser.add_argument("-o", "--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    tables = [(n, Path(p)) for n, p in (t.split("=", 1) for t in args.table)]
    data = {"gpus": [measure(n, p) for n, p in tables], "unseen": []}
    for n, p in tables:
        for m, q in tables:
            if n != m and (u := unseen(n, p, m, q)):
                data["unseen"].append(u)
    args.output.write_text(json.dumps(data, indent=1) + "\n")
    print(kernel_validation_table(args.output))


if __name__ == "__main__":
    main()
