"""A board's measured rows as :class:`cosim.fit.static_split.SplitRows`: Powmon (GemStone layout) and ARMPM logs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cosim.fit.static_split import SplitRows
from cosim.models.walker import cluster_power_w


def _dynamic_w(model, measured) -> np.ndarray:
    f = measured.freq_mhz
    eph = {e: r / f for e, r in measured.rates.items()}
    return cluster_power_w(eph, f, measured.voltage_v, model.dynamic, ())["dynamic_w"]


def _terms_w(model, measured) -> np.ndarray:
    """Each dynamic term's power at coefficient 1 [W] (rows x terms): the columns of a joint refit."""
    import dataclasses

    f = measured.freq_mhz
    eph = {e: r / f for e, r in measured.rates.items()}
    unit = tuple(dataclasses.replace(t, coefficient=1.0) for t in model.dynamic)
    out = cluster_power_w(eph, f, measured.voltage_v, unit, ())
    return np.column_stack([out[f"term_{t.name}_w"] for t in unit])


def powmon_rows(model, path: str | Path) -> SplitRows:
    """Powmon's A15 rows: measured rail voltage, 'Average Temperature A15', busy cores = threads of the core mask."""
    from cosim.readers.measured import read_measured

    m = read_measured(Path(path), events=model.events, label="A15")
    t = m.table
    return SplitRows(
        power_w=t["Power A15"].to_numpy(float),
        dynamic_w=_dynamic_w(model, m),
        freq_mhz=m.freq_mhz,
        voltage_v=m.voltage_v,
        temperature_c=t["Average Temperature A15"].to_numpy(float),
        busy_cores=t["Core Mask"].astype(str).str.count(":").to_numpy() + 1,
        group=t["Workload Name"].astype(str).to_numpy(),
        source=str(path),
        terms_w=_terms_w(model, m),
    )


def armpm_rows(model, path: str | Path, *, busy_cores: int) -> SplitRows:
    """An ARMPM log's samples (the run's first sample of each run is dropped by the reader: no counter window)."""
    from cosim.readers.armpm import read_armpm

    m = read_armpm(Path(path))
    t = m.table
    return SplitRows(
        power_w=t["A15 Power(W)"].to_numpy(float),
        dynamic_w=_dynamic_w(model, m),
        freq_mhz=m.freq_mhz,
        voltage_v=m.voltage_v,
        temperature_c=t["CPU(4) Temperature(C)"].to_numpy(float),
        busy_cores=np.full(len(t), busy_cores),
        group=t["Benchmark"].astype(str).to_numpy(),
        source=str(path),
        terms_w=_terms_w(model, m),
    )


def split_programs(path: str | Path) -> tuple[set[str], set[str]]:
    """ARMPM's split file: (training programs, test programs)."""
    train, test = set(), set()
    for line in Path(path).read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        parts = line.split("\t")
        if parts[0].strip():
            train.add(parts[0].strip())
        if len(parts) > 1 and parts[1].strip():
            test.add(parts[1].strip())
    return train, test
