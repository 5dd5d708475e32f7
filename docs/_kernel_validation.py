"""The kernel models' validation on real GPUs: measured by hand with this script, rendered at docs build.

Measure (minutes of CPU; the tables are not in the repository, see docs/howto/ncu-dcgm-kernel-models.md)::

    python docs/_kernel_validation.py --table "GeForce GTX 980=gtx980.csv" --table "GeForce GTX 1080 Ti=gtx1080ti.csv" \\
        -o docs/howto/kernel-validation.json

The docs build renders ``docs/howto/kernel-validation.json`` (:func:`kernel_validation_table`): no figure is typed.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "howto" / "kernel-validation.json"


def _errors(pred, rows) -> dict:
    from cosim.kernels.dvfs_eval import errors, off_reference

    e = errors(pred, off_reference(pred, rows)).loc["all"]
    return {k: round(float(v), 1) for k, v in e.items()}


def measure(name: str, path: Path) -> dict:
    """Leave-one-benchmark-out on one GPU's table, both families, with the fit's and the validation's times."""
    from cosim.kernels.dvfs import default_reference, read_dvfs_table, with_profiles
    from cosim.kernels.dvfs_eval import lobo
    from cosim.kernels.dvfs_file import fit_model

    table = read_dvfs_table(path)
    reference = default_reference(table, source=str(path))
    wall, cpu = time.perf_counter(), time.process_time()
    fit_model(table, reference=reference, source=str(path))
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
    for family in ("physics", "trees"):
        out["families"][family] = _errors(lobo(rows, family), rows)
    out["fit_validate_wall_s"] = round(time.perf_counter() - wall, 1)
    out["fit_validate_cpu_s"] = round(time.process_time() - cpu, 1)
    return out


def unseen(train_name: str, train: Path, test_name: str, test: Path) -> dict:
    """Fitted on every row of one GPU, applied to another GPU's kernels from their profiles at its reference pair."""
    from cosim.kernels.dvfs import default_reference, read_dvfs_table, with_profiles
    from cosim.kernels.dvfs_models import calibrate, fit_family, predict_table

    a, b = read_dvfs_table(train), read_dvfs_table(test)
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
    for family in ("physics", "trees"):
        pred = predict_table(family, fit_family(family, ra), calibrate(family, ra), rb)
        out["families"][family] = _errors(pred, rb)
    return out


def kernel_validation_table(path: Path = RESULTS) -> str:
    """Markdown tables of the committed results."""
    data = json.loads(path.read_text())
    lines = [
        "| GPU | benchmarks × pairs | reference pair [MHz] | family | runtime MAPE [%] (worst) | power MAPE [%] (worst) "
        "| 90 % interval coverage, runtime / power [%] | fit + validate |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for g in data["gpus"]:
        size = f"{g['benchmarks']} × {g['rows'] // g['benchmarks']}"
        pair = "{:g},{:g}".format(*g["reference_pair_mhz"])
        took = f"{g['fit_validate_wall_s']} s ({g['fit_validate_cpu_s']} s CPU)"
        for i, (family, e) in enumerate(g["families"].items()):
            head = (g["gpu"], size, pair) if i == 0 else ("", "", "")
            lines.append(
                f"| {head[0]} | {head[1]} | {head[2]} | {family} "
                f"| {e['runtime_mape']} ({e['runtime_worst']}) | {e['power_mape']} ({e['power_worst']}) "
                f"| {e['runtime_coverage']} / {e['power_coverage']} | {took if i == 0 else ''} |"
            )
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
            if n != m:
                data["unseen"].append(unseen(n, p, m, q))
    args.output.write_text(json.dumps(data, indent=1) + "\n")
    print(kernel_validation_table(args.output))


if __name__ == "__main__":
    main()
