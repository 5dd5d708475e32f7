"""GPGPU-Sim 3.x / 4.x and Accel-Sim stdout logs, and GPUWattch/AccelWattch power reports.

The simulator prints one statistics block per finished kernel, opened by::

    kernel_name = _Z9vectorAddPKfS0_Pfi
    kernel_launch_uid = 1
    gpu_sim_cycle = 8521
    gpu_sim_insn = 2800000
    ...
    gpgpu_n_load_insn  = 100000
    L2_total_cache_accesses = 18750

``gpu_sim_cycle``/``gpu_sim_insn`` are the kernel's own; the cache, shader and
DRAM counters are never reset in 3.x, so a kernel's share is the difference
from the previous block; :func:`counter_semantics` tells from the log itself
whether they count since the run, since the stream or per kernel.
Multi-stream logs repeat kernel names and may print blocks with an empty
``kernel_name`` and no instructions: launches stay distinct by their block, and
empty blocks are reported, never named.  Option lines (``-gpgpu_clock_domains
700.0:700.0:700.0:924.0``) give the core clock [MHz] that turns cycles into time.
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import pandas as pd

from cosim.errors import CosimError, CosimWarning
from cosim.readers._files import read_text
from cosim.readers.cutoff import ends_mid_line, left_out

_STAT = re.compile(
    r"^\s*(?P<name>[A-Za-z_][\w\[\]]*(?: [a-z]+)*?),?\s*=\s*(?P<value>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<unit>%|GB/Sec)?\s*$"
)
_OPTION = re.compile(
    r"^-(?P<name>gpgpu_clock_domains|gpgpu_compute_capability_major|gpgpu_compute_capability_minor|"
    r"gpgpu_ptx_force_max_capability|gpgpu_n_clusters|gpgpu_n_cores_per_cluster)\s+(?P<value>\S+)"
)
#: Lines the simulator prints after a kernel's statistics block (3.x and 4.x/Accel-Sim print the simulation
#: time after every kernel; the exit line ends the run).
_BLOCK_END = ("gpgpu_simulation_time", "gpgpu_simulation_rate", "GPGPU-Sim: *** exit detected", "----------------------------END-of-")
#: Counters printed per kernel (everything else in a block is cumulative).
PER_KERNEL = {
    "gpu_sim_cycle",
    "gpu_sim_insn",
    "gpu_ipc",
    "gpu_occupancy",
    "L2_BW",
    "partiton_level_parallism",
    "partiton_level_parallism_util",
    "kernel_stream_id",
    "gpu_stall_dramfull",
    "gpu_stall_icnt2sh",
}
#: The counters cosim reads, with their unit; the block keeps every ``name = number`` line.
COUNTERS = {
    "gpu_sim_cycle": "cycle",
    "gpu_sim_insn": "count",
    "gpu_tot_sim_cycle": "cycle",
    "gpu_tot_sim_insn": "count",
    "gpu_ipc": "count/cycle",
    "gpu_occupancy": "fraction",
    "L2_BW": "B/s",
    "L1D_total_cache_accesses": "count",
    "L1D_total_cache_misses": "count",
    "L2_total_cache_accesses": "count",
    "L2_total_cache_misses": "count",
    "gpgpu_n_tot_thrd_icount": "count",
    "gpgpu_n_tot_w_icount": "count",
    "gpgpu_n_load_insn": "count",
    "gpgpu_n_store_insn": "count",
    "gpgpu_n_shmem_insn": "count",
    "gpgpu_n_sstarr_insn": "count",
    "gpgpu_n_tex_insn": "count",
    "gpgpu_n_const_mem_insn": "count",
    "gpgpu_n_param_mem_insn": "count",
    "gpgpu_n_mem_read_global": "count",
    "gpgpu_n_mem_write_global": "count",
    "gpgpu_n_mem_read_local": "count",
    "gpgpu_n_mem_write_local": "count",
    "gpgpu_n_mem_texture": "count",
    "gpgpu_n_mem_const": "count",
    "total dram reads": "count",
    "total dram writes": "count",
}


def looks_like_gpgpusim(head: str) -> bool:
    """Whether a file's first characters hold GPGPU-Sim kernel statistics blocks (``kernel_name = ...`` then ``gpu_sim_cycle = ...``)."""
    return "kernel_name = " in head and ("gpu_sim_cycle = " in head or "kernel_avg_power = " in head or "gpu_avg_power = " in head)


def looks_like_power_report(head: str) -> bool:
    """Whether a file's first characters are a GPUWattch/AccelWattch report (power blocks, no simulator statistics)."""
    return "Kernel Average Power Data:" in head and "gpu_sim_cycle = " not in head


def read_gpgpusim(path: str | Path) -> pd.DataFrame:
    """One row per statistics block (kernel launch), in print order.

    Columns: ``launch`` (block index), ``kernel`` (as printed; '' for an empty
    block), ``uid`` (``kernel_launch_uid``), ``stream``, ``line``, ``duration_s``
    (``gpu_sim_cycle`` / core clock [s], nan without ``-gpgpu_clock_domains``),
    and every counter of :data:`COUNTERS` present: per-kernel values as
    printed, cumulative ones as this kernel's difference.  ``attrs['gpgpusim']``
    has ``core_mhz``, ``compute_capability`` and ``raw`` (the blocks as printed).
    """
    path = Path(path)
    text = read_text(
        path,
        missing_hint="give the simulator's stdout (GPGPU-Sim or Accel-Sim), saved with > run.log",
        empty_hint="give the stdout of a GPGPU-Sim or Accel-Sim run",
    )
    options: dict[str, str] = {}
    blocks: list[dict] = []
    current: dict | None = None
    lines = text.splitlines()
    for lineno, line in enumerate(lines, start=1):
        if m := _OPTION.match(line):
            options[m["name"]] = m["value"]
            continue
        if line.startswith("kernel_name ="):
            if current is not None:
                current["ended"] = True  # the simulator starts a block once the one before it is printed
            current = {"kernel": line.split("=", 1)[1].strip(), "line": lineno, "stats": {}}
            blocks.append(current)
            continue
        if current is None:
            continue
        if line.startswith(_BLOCK_END):
            current["ended"] = True
            continue
        if line.startswith("kernel_launch_uid ="):
            current["uid"] = line.split("=", 1)[1].strip()
            continue
        if (m := _STAT.match(line)) and m["name"] not in current["stats"]:
            value = float(m["value"])
            if not math.isfinite(value) or value < 0 or value >= 2**63:
                raise CosimError(f"{path}:{lineno}: {m['name']} = {m['value']}; GPGPU-Sim prints counts from 0 to 2^63")
            if m["unit"] == "%":
                value /= 100.0
            elif m["unit"] == "GB/Sec":  # GPGPU-Sim divides bytes/s by 1e9
                value *= 1e9
            current["stats"][m["name"]] = (value, lineno)
    if blocks and (not blocks[-1].get("ended") or ends_mid_line(text)):
        last = blocks.pop()
        why = "the log ends inside its statistics block, before gpgpu_simulation_time"
        left_out(path, last["line"], f"kernel '{last['kernel']}'", why, kept=sum(1 for b in blocks if "gpu_sim_cycle" in b["stats"]))
    blocks = [b for b in blocks if "gpu_sim_cycle" in b["stats"] or "gpu_sim_insn" in b["stats"]]
    cut = [b for b in blocks if not {"gpu_sim_cycle", "gpu_sim_insn"} <= b["stats"].keys()]
    if cut:
        warnings.warn(
            CosimWarning(
                f"{path}:{cut[0]['line']}: {len(cut)} statistics block(s) without both gpu_sim_cycle and "
                "gpu_sim_insn (a cut or damaged log?) left out"
            ),
            stacklevel=2,
        )
        blocks = [b for b in blocks if b not in cut]
    if not blocks:
        raise CosimError(
            f"{path}: no kernel statistics blocks (kernel_name = ... then gpu_sim_cycle = ...); "
            "is this the stdout of a GPGPU-Sim or Accel-Sim run that finished a kernel?"
        )
    _concurrent(path, blocks)
    core_mhz = _core_mhz(path, options)
    out = pd.DataFrame(_rows(path, blocks, core_mhz))
    empty = out[(out["kernel"] == "") & (out.get("gpu_sim_insn", 0) == 0)]
    if len(empty):
        warnings.warn(
            CosimWarning(
                f"{path}:{int(empty['line'].iloc[0])}: {len(empty)} statistics block(s) with an empty kernel_name and no "
                "instructions (a multi-stream log prints them); kept as launches with kernel ''"
            ),
            stacklevel=2,
        )
    out.attrs["gpgpusim"] = {
        "path": str(path),
        "core_mhz": core_mhz,
        "compute_capability": _capability(options),
        "raw": [{"line": b["line"], "kernel": b["kernel"], **{k: v for k, (v, _) in b["stats"].items()}} for b in blocks],
    }
    return out


def _concurrent(path: Path, blocks: list[dict]) -> None:
    """Blocks that cover several launches (``kernel_launch_uid = 1 3``: kernels of several streams ended together and
    the simulator printed one block for them) are kept, one row each, flagged ``concurrent_launches``; their counters
    cannot be split per launch, which a warning says once (0.3.6 read them; the file's other kernels are kept)."""
    shared = [b for b in blocks if len(b.get("uid", "").split()) > 1]
    for b in shared:
        b["concurrent"] = True
    if shared:
        b = shared[0]
        warnings.warn(
            CosimWarning(
                f"{path}:{b['line']}: {len(shared)} statistics block(s) for launches that ran at once (kernel_launch_uid = "
                f"{b['uid']}): one row each, flagged concurrent_launches, uids in 'uid'; their counters cannot be split per "
                "launch (simulate with -gpgpu_max_concurrent_kernel 1 for a block per launch)"
            ),
            stacklevel=3,
        )


def _core_mhz(path: Path, options: dict[str, str]) -> float:
    text = options.get("gpgpu_clock_domains")
    if text is None:
        return math.nan
    try:
        mhz = float(text.split(":")[0])
    except ValueError:
        raise CosimError(f"{path}: -gpgpu_clock_domains {text}: expected core:icnt:l2:dram clocks [MHz]") from None
    if not math.isfinite(mhz) or mhz <= 0:
        raise CosimError(f"{path}: -gpgpu_clock_domains {text}: the core clock must be > 0 MHz")
    return mhz


def _capability(options: dict[str, str]) -> str | None:
    if "gpgpu_compute_capability_major" in options:
        return f"{options['gpgpu_compute_capability_major']}.{options.get('gpgpu_compute_capability_minor', '0')}"
    if "gpgpu_ptx_force_max_capability" in options:  # e.g. 20 -> 2.0
        text = options["gpgpu_ptx_force_max_capability"]
        return f"{text[:-1]}.{text[-1]}" if text.isdigit() and len(text) >= 2 else None
    return None


def counter_semantics(blocks: list[dict]) -> str:
    """How a log's cache/shader/DRAM counters count: ``"run"`` (since the run began, GPGPU-Sim 3.x),
    ``"stream"`` (since the stream began) or ``"kernel"`` (each block its own), told by comparing
    ``gpgpu_n_tot_thrd_icount`` with the instruction counts; ``"unknown"`` without it."""
    running: dict[float, float] = {}
    votes = {"run": True, "stream": True, "kernel": True}
    seen = False
    for b in blocks:
        stats = {k: v for k, (v, _) in b["stats"].items()}
        stream = stats.get("kernel_stream_id", 0.0)
        running[stream] = running.get(stream, 0.0) + stats.get("gpu_sim_insn", 0.0)
        icount = stats.get("gpgpu_n_tot_thrd_icount")
        if icount is None:
            continue
        seen = True
        votes["run"] &= abs(icount - stats.get("gpu_tot_sim_insn", math.nan)) <= 0.5
        votes["stream"] &= abs(icount - running[stream]) <= 0.5
        votes["kernel"] &= abs(icount - stats.get("gpu_sim_insn", math.nan)) <= 0.5
    return next((k for k, ok in votes.items() if ok), "unknown") if seen else "unknown"


def _rows(path: Path, blocks: list[dict], core_mhz: float) -> list[dict]:
    semantics = counter_semantics(blocks)
    previous: dict[float, dict[str, float]] = {}  # what the last block printed, per stream ("stream") or overall
    last_total_insn = 0.0
    rows = []
    for i, b in enumerate(blocks):
        stats = {k: v for k, (v, _) in b["stats"].items()}
        stream = stats.get("kernel_stream_id", 0.0)
        key = stream if semantics == "stream" else 0.0
        before = previous.get(key, {})
        flags = ([] if semantics != "unknown" else ["counter_semantics_unknown"]) + (["concurrent_launches"] if b.get("concurrent") else [])
        row = {"launch": i, "kernel": b["kernel"], "uid": b.get("uid", ""), "stream": int(stream), "line": b["line"]}
        for name in COUNTERS:
            if name not in stats:
                continue
            value = stats[name]
            if semantics != "kernel" and name not in PER_KERNEL and not name.startswith("gpu_tot_"):
                if value < before.get(name, 0.0):
                    raise CosimError(
                        f"{path}:{b['stats'][name][1]}: {name} fell from {before[name]:g} to {value:g}, though this "
                        "log's counters count since the run began; are two logs concatenated?"
                    )
                value -= before.get(name, 0.0)
            row[name] = value
        total, own = stats.get("gpu_tot_sim_insn"), stats.get("gpu_sim_insn")
        if total is not None and own is not None:
            if semantics != "kernel" and abs(total - last_total_insn - own) > 0.5:
                flags.append("overlapping_kernels")  # kernels ran at once: differences of shared counters mix them
            last_total_insn = total
        previous[key] = {**before, **stats}
        row["duration_s"] = stats["gpu_sim_cycle"] / (core_mhz * 1e6) if math.isfinite(core_mhz) else math.nan
        row["flags"] = ";".join(flags)
        rows.append(row)
    return rows


_POWER_STAT = re.compile(
    r"^\s*(?P<name>[A-Za-z_][\w]*)\s*,?\s*=\s*(?P<value>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|-?nan|-?inf)\s*$"
)


def read_power_report(path: str | Path) -> pd.DataFrame:
    """GPUWattch/AccelWattch per-kernel report: one row per kernel block, ``kernel``, ``uid``, ``power_w``
    (``kernel_avg_power``; ``gpu_avg_power`` in GPUWattch 3.x), ``max_power_w``, ``min_power_w``, each
    ``gpu_avg_<component>`` [W] of the average section and, where AccelWattch prints it, ``gpu_tot_TOT_INST``."""
    path = Path(path)
    text = read_text(path, missing_hint="give the power report GPUWattch/AccelWattch wrote (gpgpusim_power_report__*.log)")
    rows: list[dict] = []
    current: dict | None = None
    section = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.startswith("kernel_name ="):
            current = {"kernel": line.split("=", 1)[1].strip(), "uid": "", "line": lineno}
            rows.append(current)
            section = None
            continue
        if current is None:
            continue
        if line.startswith("kernel_launch_uid ="):
            current["uid"] = line.split("=", 1)[1].strip()
        elif line.strip().endswith("Power Data:") or line.strip().startswith("Accumulative"):
            section = line.strip().split()[1].lower()  # average, maximum, minimum; power (accumulative)
            current["_ended"] = section == "power"  # the run's totals end each kernel's block
        elif (m := _POWER_STAT.match(line)) and section:
            name, value = m["name"], float(m["value"])
            if not math.isfinite(value) or value < 0 and name.endswith("power"):
                raise CosimError(f"{path}:{lineno}: {name} = {m['value']}; a power report needs finite powers >= 0")
            if name in ("kernel_avg_power", "gpu_avg_power"):
                current["power_w"] = value
            elif name in ("kernel_max_power", "gpu_max_power"):
                current["max_power_w"] = value
            elif name in ("kernel_min_power", "gpu_min_power"):
                current["min_power_w"] = value
            elif section == "average" and (name.startswith("gpu_avg_") or name == "gpu_tot_TOT_INST"):
                current[name] = value  # AccelWattch also prints the kernel's totals (gpu_tot_*): TOT_INST counts its samples
    # GPUWattch and AccelWattch end every kernel's block with the run's totals ("Accumulative Power Statistics Over
    # Previous Kernels"): a report without them after its last block ends inside it
    if rows and not rows[-1].get("_ended"):
        last = rows.pop()
        why = "the report ends before the block's Accumulative Power Statistics"
        left_out(path, last["line"], f"kernel '{last['kernel']}'", why, kept=sum(1 for r in rows if "power_w" in r))
    rows = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows if "power_w" in r]
    # a block of launches that ran at once (kernel_launch_uid = 1 3) is one row, as in the run's log
    if not rows:
        raise CosimError(f"{path}: no 'Kernel Average Power Data' with kernel_avg_power; is this a GPUWattch/AccelWattch report?")
    out = pd.DataFrame(rows)
    out.attrs["power_report"] = {"path": str(path)}
    return out


#: How far a kernel's power-sample count may be from its cycles over the run's sample period (beyond the one
#: partial sample each kernel ends with), as a fraction of its samples; and, for GPUWattch 3.x reports (no
#: totals), how far apart the implied sample periods gpu_avg_TOT_INST / IPC of one run's kernels may be.
SAMPLE_PERIOD_REL_TOL = 0.05


def check_same_run(path: Path, report: pd.DataFrame, run: pd.DataFrame) -> None:
    """Refuse a report of another run: launch uids that differ, or power samples that do not fit the run's cycles.

    AccelWattch prints a kernel's per-sample mean and its total of each counter, so ``gpu_tot_TOT_INST /
    gpu_avg_TOT_INST`` is the number of power samples it took in that kernel, one every ``P`` cycles for the
    whole run: ``gpu_sim_cycle / P`` must match it within the partial last sample.  (Its TOT_INST is not
    GPGPU-Sim's ``gpu_sim_insn``: on a public H100 run the ratio is 28.1 for one GEMM and 29.8 for another.)
    GPUWattch 3.x prints means only: there ``gpu_avg_TOT_INST / IPC`` is taken as the common period."""
    import numpy as np
    import pandas as pd

    for (_, r), (_, k) in zip(report.iterrows(), run.iterrows()):
        if str(r["uid"]).strip() and str(k.get("uid", "")).strip() and str(r["uid"]).strip() != str(k["uid"]).strip():
            raise CosimError(
                f"{path}:{r['line']}: kernel_launch_uid {r['uid']} in the report where the run's launch {k['launch']} has {k['uid']}; "
                "give the report of this run"
            )
    if "gpu_avg_TOT_INST" not in report or not {"gpu_sim_insn", "gpu_sim_cycle"} <= set(run.columns):
        return
    cycles = run["gpu_sim_cycle"].to_numpy(dtype=float)
    mean = report["gpu_avg_TOT_INST"].to_numpy(dtype=float)
    if "gpu_tot_TOT_INST" in report:
        with np.errstate(divide="ignore", invalid="ignore"):
            samples = np.round(report["gpu_tot_TOT_INST"].to_numpy(dtype=float) / mean)
        ok = np.isfinite(samples) & (samples > 0) & (cycles > 0)
        if ok.sum() < 2:
            return
        period = float(np.median(cycles[ok] / samples[ok]))
        off = np.where(ok, np.abs(cycles / period - samples) - (1 + SAMPLE_PERIOD_REL_TOL * samples), -np.inf)
        if off.max() > 0:
            i = int(off.argmax())
            raise CosimError(
                f"{path}:{report['line'].iloc[i]}: kernel '{report['kernel'].iloc[i][:60]}' has {samples[i]:.0f} power samples "
                f"(gpu_tot_TOT_INST / gpu_avg_TOT_INST), but the run's {cycles[i]:.0f} cycles at its {period:.4g} cycles per sample "
                f"give {cycles[i] / period:.1f}: the report is not this run's; give the report of this run"
            )
        return
    ipc = run["gpu_sim_insn"].to_numpy(dtype=float) / cycles
    implied = mean / ipc
    ok = implied[(ipc > 0) & (implied > 0)]
    if len(ok) >= 2 and (ok.max() - ok.min()) > SAMPLE_PERIOD_REL_TOL * ok.min():
        i = int(abs(implied - float(pd.Series(ok).median())).argmax())
        raise CosimError(
            f"{path}:{report['line'].iloc[i]}: kernel '{report['kernel'].iloc[i][:60]}' has {mean[i]:g} "
            f"instructions per power sample, which at the run's IPC {ipc[i]:.4g} is a {implied[i]:.4g}-cycle sample where the other "
            f"kernels have {pd.Series(ok).median():.4g}: the report's instruction counts are not this run's; give the report of this run"
        )
