"""What-if checked against gem5: predict a big.LITTLE run at other clocks from one recorded run, and compare with
gem5 run at those clocks.  ``python tests/whatif_pairs.py BASE_RUN OTHER_RUN...`` prints the errors;
``--all RUN RUN...`` takes every run in turn as the base for all the others.

A run's per-cluster runtime is when its CPUs last computed (the last epoch with active cycles); its energy is the
cluster's energy over the whole run (a cluster stays powered until the run ends), as `cosim power` prices it.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from cosim import ClusterSpec, load_model, power_timeline, read_config, read_stats
from cosim.dse.whatif import _ACTIVE_SHARE, recorded_run, whatif

CLUSTERS = (("big", "system.bigCluster", "cortex-a15-walker2017"), ("little", "system.littleCluster", "cortex-a7-gemstone2018"))


def load(run: Path):
    stats = read_stats(run / "stats.txt")
    config = read_config(run / "config.ini")
    specs = [ClusterSpec(name, path, load_model(model)) for name, path, model in CLUSTERS]
    return stats, config, specs


def measured(run: Path) -> dict:
    stats, config, specs = load(run)
    timeline = power_timeline(stats, config, specs)
    rec = recorded_run(stats, config, specs)
    ends = np.cumsum(rec.duration_s)
    out = {"runtime_s": float(ends[-1]), "energy_j": float(timeline["energy_j"].sum())}
    for c in rec.clusters:
        active = np.flatnonzero(c.busy_s > _ACTIVE_SHARE * rec.duration_s)
        out[f"{c.name}_runtime_s"] = float(ends[active[-1]])
        out[f"{c.name}_energy_j"] = float(timeline.loc[timeline["cluster"] == c.name, "energy_j"].sum())
    return out


def clocks(run: Path) -> tuple[float, float]:
    """The run's big and LITTLE clocks [MHz], from its config alone (gem5 rounds 1800 MHz to 556 ticks)."""
    config = read_config(run / "config.ini")
    return tuple(float(np.round(config.cluster(n, p).freq_mhz / 200) * 200) for n, p, _ in CLUSTERS)


def compare(base: Path, other: Path) -> dict:
    """Errors [%] of the what-if from ``base`` at ``other``'s clocks, against ``other`` itself."""
    stats, config, specs = load(base)
    big, little = clocks(other)
    predicted = whatif(recorded_run(stats, config, specs), pd.DataFrame({"big_freq_mhz": [big], "little_freq_mhz": [little]})).iloc[0]
    actual = measured(other)
    keys = ("runtime_s", "big_runtime_s", "little_runtime_s", "energy_j", "big_energy_j", "little_energy_j")
    return {"to": f"{big:g}/{little:g} MHz", **{k: 100 * (predicted[k] - actual[k]) / actual[k] for k in keys}}


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
