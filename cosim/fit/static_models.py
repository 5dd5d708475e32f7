"""Regenerate the shipped A15/A7 models' ``static_form``, ``cores`` and interval blocks from the boards' data.

    python -m cosim.fit.static_models [--data ../shared/data] [--models models] [--boot 200]

Decided on training workloads only (Powmon: the three quarters of its 60 workloads whose name's CRC-32 is not
0 mod 4, :func:`cosim.fit.static_split.held_out`; ARMPM: the training column of ``cbench_split.data``); the held-out
ones only score.  What each model gets, and why:

- ``cortex-a15-walker2017``: a, b, k, kappa fitted on Powmon (its own data) with its published dynamic terms;
- ``cortex-a15-armpm-xu3``: a, b, kappa fitted on ARMPM's cBench training programs with its dynamic terms; ARMPM's
  rail voltage moves only with its three clocks (±3 mV at one), so k is not identified there and is Powmon's (each
  bootstrap refit draws Powmon's k of the same replicate);
- ``cortex-a15-gemstone2018``: Powmon does not count three of its events (0x04, 0x16, 0x43), so its dynamic terms
  cannot be refitted there; its leakage (b, k, kappa) is Powmon's (same cluster, same board) and its background
  switching a is fitted to its own static polynomial at its V-f points less that leakage;
- ``cortex-a7-gemstone2018``: no shared data separates anything (Powmon holds the A7 at 1000 MHz, 1.08 V, idle,
  without its events): its table-point fit stays, said so.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from cosim.fit.static_rows import armpm_rows, powmon_rows, split_programs
from cosim.fit.static_split import T_REF_C, Split, bootstrap, curve_temperature, fit_split, held_out, predict_w
from cosim.models.walker import static_power_w

POWMON = "gemstone/sample-input-data/asrtpm-A15-powmon-data.csv"
CBENCH = "armpm/Concatenated_Data/cBench/xu3_cset_perfcpu_cBench_eMMC_big.data"
CBENCH_SPLIT = "armpm/cbench_split.data"
FORM = "S(f, V, T) = a * f[MHz] * V^2 + b * V * exp(k * (V - 1)) * exp(kappa * (T - reference_c)) [W]; a, b, k, kappa >= 0"
#: the powered-core rule of the three A15 models: an assumption (no log varies powered cores), its interval the
#: physical range: at least half the cluster's static power is in its four cores (each core with its L1s is about
#: the size of the 2 MB L2 and SCU together on the Exynos 5422 die), at most all of it
CORES_RULE: dict[str, Any] = {
    "per_core_static_fraction": 0.75,
    "interval": [0.5, 1.0],
    "basis": "assumption, not measured (no log varies powered cores: the boards' idle cores stay powered, in WFI): "
    "the four cores with their L1s hold 0.75 of the cluster's static power, the shared L2 and SCU the rest; interval "
    "0.5-1.0, the physical range (all of it in the cores at most; the L2 and SCU, about one core's area each, at most "
    "half); one rule for the three A15 models. A cluster of n of the 4 cores has its static power scaled by "
    "1 - phi + phi n / 4, its interval widened by the spread over phi in 0.5-1.0, its rows flagged "
    "powered_cores_assumed. Busy cores are measured instead: static.busy_cores says what they do",
}


def _ci(values: np.ndarray) -> list[float]:
    lo, hi = np.percentile(values, [2.5, 97.5])
    return [float(f"{lo:.6g}"), float(f"{hi:.6g}")]


def _block(point: Split, reps: np.ndarray, *, curve: list[list[float]], trained: tuple[float, float], fitted_on: str, **extra) -> dict:
    names = ("a_w_per_mhz_v2", "b_w_per_v", "k_per_v", "kappa_per_k")
    return {
        "form": FORM,
        "a_w_per_mhz_v2": float(f"{point.a:.8g}"),
        "b_w_per_v": float(f"{point.b:.8g}"),
        "k_per_v": float(f"{point.k:.6g}"),
        "ci95": {n: _ci(reps[:, i]) for i, n in enumerate(names)},
        "temperature": {
            "kappa_per_k": float(f"{point.kappa:.6g}"),
            "reference_c": T_REF_C,
            "curve_mhz_c": curve,
            "trained_c": [math.floor(trained[0] * 10) / 10, math.ceil(trained[1] * 10) / 10],
            "basis": "b is the leakage at 1 V and reference_c; with no die temperature given, static power is priced at "
            "curve_mhz_c, the training rows' mean die temperature at each clock (made non-decreasing in the clock)",
        },
        "fitted_on": fitted_on,
        **extra,
        "bootstrap": {
            "by": "workload (program): the rows of one workload share its activity mix and thermal history",
            "n": len(reps),
            "seed": 0,
            "replicates": [[float(f"{x:.6g}") for x in r] for r in reps],
        },
        "regenerate": "python -m cosim.fit.static_models (cosim/fit/static_models.py)",
    }


def _held_out_rel_ser(rows, split: Split, test: np.ndarray, curve) -> float:
    c = np.asarray(curve)
    t = np.interp(rows.freq_mhz, c[:, 0], c[:, 1])
    pred = predict_w(rows, split, t)
    rel = (pred - rows.power_w) / rows.power_w
    return float(np.sqrt(np.mean(rel[test] ** 2)))


def build(data: Path, models: Path, n_boot: int = 200) -> dict[str, dict]:
    """The new blocks of each model file (name -> {key: block}), fitted from ``data``."""
    from cosim.models.modelfile import load_model

    walker = load_model(str(models / "cortex-a15-walker2017.json"))
    rows = powmon_rows(walker, data / POWMON)
    test = held_out(rows.group)
    train = rows.take(~test)
    point = fit_split(train)
    reps = bootstrap(train, point, n=n_boot)
    curve = curve_temperature(train)
    trained = (float(train.temperature_c.min()), float(train.temperature_c.max()))
    ser_rel = _held_out_rel_ser(rows, point, test, curve)
    out: dict[str, dict] = {}
    out["cortex-a15-walker2017"] = {
        "static_form": _block(
            point,
            reps,
            curve=curve,
            trained=trained,
            fitted_on=f"Powmon ({POWMON}): measured A15 power less the published dynamic terms on the "
            f"{len(np.unique(train.group))} training workloads ({int((~test).sum())} rows, measured rail voltage and die "
            "temperature, 1-4 busy cores); nonnegative least squares for a, b at each k, kappa (cosim.fit.static_split)",
        )
    }
    # GemStone A15: Powmon's leakage, its own background switching along its curve
    gem = load_model(str(models / "cortex-a15-gemstone2018.json"))
    gf = np.array([p[0] for p in gem.vf_points])
    gv = np.array([p[1] for p in gem.vf_points])
    gt = np.interp(gf, np.array(curve)[:, 0], np.array(curve)[:, 1])
    poly = static_power_w(gf, gv, gem.static)

    def background(s: Split) -> float:
        x = gf * gv**2
        return max(0.0, float(x @ (poly - s.leakage_w(gv, gt)) / (x @ x)))

    gpoint = Split(background(point), point.b, point.k, point.kappa)
    greps = np.array([(background(Split(*r)), r[1], r[2], r[3]) for r in reps])
    out["cortex-a15-gemstone2018"] = {
        "static_form": _block(
            gpoint,
            greps,
            curve=curve,
            trained=trained,
            fitted_on="leakage (b, k, kappa) from Powmon as for cortex-a15-walker2017 (same cluster, same board; Powmon "
            "counts no 0x04, 0x16, 0x43, so this model's dynamic terms cannot be refitted there); background switching a "
            "least squares to its static polynomial at its V-f points less that leakage",
        ),
        "fit_rel": {"ser_rel": round(ser_rel, 5), "source": _SER_SOURCE},
    }
    out["cortex-a7-gemstone2018"] = {"fit_rel": {"ser_rel": round(ser_rel, 5), "source": _SER_SOURCE + _A7}}
    # ARMPM board model: its cBench training programs, k from Powmon
    board = load_model(str(models / "cortex-a15-armpm-xu3.json"))
    arows = armpm_rows(board, data / CBENCH, busy_cores=1)
    trn, _ = split_programs(data / CBENCH_SPLIT)
    atrain = arows.take(np.isin(arows.group, sorted(trn)))
    apoint = fit_split(atrain, fixed_k=point.k)
    areps = bootstrap(atrain, apoint, n=n_boot, ks=reps[:, 2])
    out["cortex-a15-armpm-xu3"] = {
        "static_form": _block(
            apoint,
            areps,
            curve=curve_temperature(atrain),
            trained=(float(atrain.temperature_c.min()), float(atrain.temperature_c.max())),
            fitted_on=f"ARMPM cBench ({CBENCH}): measured power less this model's dynamic terms on the training programs "
            f"of {CBENCH_SPLIT} ({len(atrain.power_w)} samples, die temperature {atrain.temperature_c.min():g}-"
            f"{atrain.temperature_c.max():g} °C); a, b, kappa fitted here; k is Powmon's (ARMPM's voltage moves only with "
            "its three clocks, so its rows do not identify k; each bootstrap refit takes Powmon's k of the same replicate)",
        )
    }
    for name in ("cortex-a15-walker2017", "cortex-a15-gemstone2018", "cortex-a15-armpm-xu3"):
        out[name]["cores"] = CORES_RULE
    out["cortex-a7-gemstone2018"]["cores"] = {
        **CORES_RULE,
        "basis": "the A15 models' rule, an assumption for the A7 too (no A7 measurement varies its cores): " + CORES_RULE["basis"],
    }
    return out


_SER_SOURCE = (
    "held-out Powmon workloads (the quarter by CRC-32 of the name, never fitted on): root mean square of the relative "
    "residual of the A15's published dynamic terms with the static form fitted on the training workloads, priced at the "
    "clock's training temperature (what a simulation has); this model's own training data is not published and Powmon "
    "does not count its events 0x04, 0x16, 0x43, so the same cluster's held-out error stands for it; +-2 ser_rel x power"
)
_A7 = "; for the A7 an assumption (no shared data prices it: Powmon holds it idle at 1000 MHz), so its rows carry the A15's relative error"


def write(models: Path, blocks: dict[str, dict]) -> None:
    """Replace the blocks in each model file (atomically), keeping the rest and its key order."""
    from cosim.output import write_atomic

    for name, new in blocks.items():
        path = models / f"{name}.json"
        text = path.read_text(encoding="utf-8")
        for key, value in new.items():
            text = replace_top_level(text, key, value)
        json.loads(text)  # still one JSON document

        def put(tmp: Path, text: str = text) -> None:
            tmp.write_text(text, encoding="utf-8")

        write_atomic(path, put)


def dumps(value, indent: int = 0) -> str:
    """JSON as the shipped model files write it: one key a line, containers of plain values on one line."""
    pad = " " * (indent + 1)
    if isinstance(value, dict) and any(isinstance(v, (dict, list)) for v in value.values()):
        items = [f"{pad}{json.dumps(k, ensure_ascii=False)}: {dumps(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(value, list) and any(isinstance(v, dict) or (isinstance(v, list) and len(v) > 4) for v in value):
        return "[\n" + ",\n".join(pad + dumps(v, indent + 1) for v in value) + "\n" + " " * indent + "]"
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def replace_top_level(text: str, key: str, value) -> str:
    """``text`` (a model file, one top-level key a line at one space's indent) with ``key`` set to ``value``, the
    other lines as they were (hand-formatted files keep their layout; only the block changes)."""
    import re

    lines = text.rstrip("\n").split("\n")
    starts = [i for i, line in enumerate(lines) if re.match(r'^ "[^"]+": ', line)]
    new = f" {json.dumps(key)}: {dumps(value, 1)}".split("\n")
    mine = [i for i in starts if lines[i].startswith(f" {json.dumps(key)}: ")]
    if mine:
        i = mine[0]
        end = next((j for j in starts if j > i), len(lines) - 1)  # the next key, or the closing brace
        comma = "," if end < len(lines) - 1 else ""
        lines[i:end] = new[:-1] + [new[-1] + comma]
    else:
        lines[-2] = lines[-2] + ","
        lines[-1:-1] = new
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m cosim.fit.static_models", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=Path("../shared/data"), help="the shared data folder")
    p.add_argument("--models", type=Path, default=Path("models"), help="the model files to rewrite")
    p.add_argument("--boot", type=int, default=200, help="bootstrap refits (default 200)")
    args = p.parse_args(argv)
    write(args.models, build(args.data, args.models, args.boot))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
