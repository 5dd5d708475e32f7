"""Board rows against gem5 rows: one row per program and clock, with the error decomposed.

Energy per instruction [nJ] is power / (IPC * f): its error is the product of the power error and the IPC error,
``EPI_gem5 / EPI_board = (P_gem5 / P_board) * (IPC_board / IPC_gem5)``, so the part that is gem5's IPC is read
off directly.  The power error is split by pricing the model twice at gem5's operating point: with the board's
event rates (``power_model_board_w``) and with gem5's (``power_gem5_w``).  Their difference is what gem5's events
cost; the rest, ``power_model_board_w - power_board_w``, is the model's own error on this board.  An event the board
did not count (flag ``board_lacks:EVENT``) takes gem5's count per instruction times the board's instructions (per
cycle times the board's cycles where the board did not count instructions): the board's activity, gem5's mix, so
that event's part of the events' cost is only what gem5's IPC adds.  The events' cost is taken apart into three
parts that add up to it: gem5's cycles clocked per second against the board's (``events_cost_cycles_w``: the board's
core also sleeps in WFI while it waits on its I/O), the other events the board counted (``events_cost_counted_w``),
and the events it did not count (``events_cost_uncounted_w``: gem5's IPC against the board's).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from cosim.validate.board import BoardRow
from cosim.validate.rates import CYCLES as _CYCLES
from cosim.validate.rates import INSTS as _INSTS
from cosim.validate.sim import SimRow

_CLOCK_REL_TOL = 0.01  # gem5's ticks round a clock: 1500 MHz is a 667 ps period, 1499.25 MHz


def excluded_programs() -> dict[str, str]:
    """Program -> why it is left out of every error figure (``excluded.toml``)."""
    data = tomllib.loads(resources.files("cosim.validate").joinpath("excluded.toml").read_text())
    return {name: spec["reason"] for name, spec in data.get("programs", {}).items()}


@dataclass(frozen=True)
class Validation:
    """The compared rows, and everything that could not be compared, each with its reason."""

    rows: list[dict]
    one_side: list[str] = field(default_factory=list)  # one line each: what is on one side only
    excluded: list[str] = field(default_factory=list)  # one line each: left out, and why
    events: tuple[str, ...] = ()  # the events compared per cycle

    def summary(self) -> dict[str, float]:
        """MAPEs [%] over the priced rows, and the share of the energy error that is gem5's IPC [%]."""
        priced = [r for r in self.rows if math.isfinite(r["power_gem5_w"])]
        out: dict[str, float] = {"rows": len(self.rows), "priced_rows": len(priced)}
        for key in ("power", "epi", "ipc"):
            errs = [abs(r[f"{key}_err_pct"]) for r in (priced if key != "ipc" else self.rows) if math.isfinite(r[f"{key}_err_pct"])]
            out[f"{key}_mape_pct"] = float(np.mean(errs)) if errs else float("nan")
        log_ipc = [abs(math.log1p(r["epi_err_from_ipc_pct"] / 100)) for r in priced if math.isfinite(r["epi_err_from_ipc_pct"])]
        log_pow = [abs(math.log1p(r["power_err_pct"] / 100)) for r in priced if math.isfinite(r["epi_err_from_ipc_pct"])]
        total = sum(log_ipc) + sum(log_pow)
        out["epi_ipc_share_pct"] = 100 * sum(log_ipc) / total if total > 0 else float("nan")
        for key in ("events_cost_w", "model_err_w", "events_cost_cycles_w", "events_cost_counted_w", "events_cost_uncounted_w"):
            vals = [abs(r[key]) / r["power_board_w"] * 100 for r in priced if math.isfinite(r[key])]
            out[f"{key[:-2]}_mean_abs_pct"] = float(np.mean(vals)) if vals else float("nan")
        for event in self.events:
            errs = [abs(r[f"rate_{event}_err_pct"]) for r in self.rows if math.isfinite(r[f"rate_{event}_err_pct"])]
            out[f"rate_{event}_mape_pct"] = float(np.mean(errs)) if errs else float("nan")
            # a rare event's relative error says little (0.00002 against 0.004 per cycle): the difference per cycle too
            diffs = [abs(r[f"rate_{event}_gem5"] - r[f"rate_{event}_board"]) for r in self.rows]
            diffs = [d for d in diffs if math.isfinite(d)]
            out[f"rate_{event}_mean_abs_diff"] = float(np.mean(diffs)) if diffs else float("nan")
        return out


def compare(
    board: dict[tuple[str, float], BoardRow],
    sims: list[SimRow],
    *,
    excluded: dict[str, str] | None = None,
    split: dict[str, str] | None = None,
    board_cluster: str = "A15",
) -> Validation:
    """Pair board and gem5 rows by program and clock (within 1 %), price the board's rates, decompose the errors.

    ``excluded``: program -> reason (default: :func:`excluded_programs`); ``split``: program -> ``train``/``test``;
    ``board_cluster``: the cluster the board measured (``A15``): a run priced by a model of another cluster is flagged
    ``model_not_board_cluster`` and warned about.
    """
    from cosim.models.modelfile import load_model

    excluded = excluded_programs() if excluded is None else excluded
    split = split or {}
    rows, one_side, left_out = [], [], []
    matched: set[tuple[str, float]] = set()
    mismatched: list[str] = []
    # the models' events, and any other event both the board and gem5 counted (0x03 for the A15: the A7 model's)
    both = {e for s in sims for e in s.counts} & {e for b in board.values() for e in b.counts}
    models = {name: load_model(name) for name in {s.model for s in sims}}  # each model file read and checked once
    events = sorted(({e for s in sims for e in models[s.model].events} | {_INSTS} | both) - {_CYCLES})
    for sim in sorted(sims, key=lambda s: (s.program, s.clock_mhz)):
        key = next(
            (k for k in board if k[0] == sim.program and abs(k[1] - sim.clock_mhz) <= _CLOCK_REL_TOL * k[1]),
            None,
        )
        if key is None:
            clocks = sorted(k[1] for k in board if k[0] == sim.program)
            on_board = f"the board ran it at {', '.join(f'{c:g}' for c in clocks)} MHz" if clocks else "the board has no such program"
            one_side.append(f"{sim.program} at {sim.clock_mhz:g} MHz: gem5 only ({sim.folder}); {on_board}")
            continue
        matched.add(key)
        if sim.program in excluded:
            left_out.append(f"{sim.program} at {key[1]:g} MHz ({board[key].samples} board samples): excluded, {excluded[sim.program]}")
            continue
        rows.append(_row(board[key], sim, models[sim.model], events, split.get(sim.program, "")))
        if board_cluster.lower() not in sim.model.lower():
            rows[-1]["flags"] = ";".join(filter(None, [rows[-1]["flags"], "model_not_board_cluster"]))
            mismatched.append(sim.model)
    by_program: dict[str, list[BoardRow]] = {}
    for key in sorted(set(board) - matched):
        by_program.setdefault(key[0], []).append(board[key])
    for program, left in by_program.items():
        at = ", ".join(f"{r.clock_mhz:g}" for r in left)
        samples = ", ".join(str(r.samples) for r in left)
        if program in excluded:
            left_out.append(f"{program} at {at} MHz ({samples} board samples): excluded, {excluded[program]}")
        else:
            others = sorted(s.clock_mhz for s in sims if s.program == program)
            gem5 = f"gem5 ran it at {', '.join(f'{c:g}' for c in others)} MHz" if others else "no gem5 run of it"
            one_side.append(f"{program} at {at} MHz: board only ({samples} samples); {gem5}")
    if mismatched:
        import warnings

        from cosim.errors import CosimWarning

        warnings.warn(
            CosimWarning(
                f"{len(mismatched)} gem5 run(s) priced with {', '.join(sorted(set(mismatched)))}, not a model of the board's "
                f"{board_cluster} cluster (an in-order CPU gets the A7 model): their rows compare two clusters (flag "
                "model_not_board_cluster); simulate the board's core"
            ),
            stacklevel=2,
        )
    return Validation(rows=rows, one_side=one_side, excluded=left_out, events=tuple(events))


def _pct(sim: float, board: float) -> float:
    return (sim / board - 1) * 100 if board and math.isfinite(board) and math.isfinite(sim) else float("nan")


def _row(board: BoardRow, sim: SimRow, model, events: list[str], split: str) -> dict:
    from cosim.models.envelope import operating_point_power_w
    from cosim.models.modelfile import operating_point

    f = np.array([sim.clock_mhz])
    voltage = sim.voltage_v if math.isfinite(sim.voltage_v) else float(operating_point(model, f).voltage_v[0])
    flags = []
    # the board's model inputs: its rates per second averaged over the model's cores, per MHz
    per = _INSTS if _INSTS in board.counts and _INSTS in sim.counts else _CYCLES
    board_eph_per = board.per_s(per) / (model.cores_per_cluster * board.clock_mhz)
    eph = {}
    for event in model.events:
        if event in board.counts:
            eph[event] = np.array([board.per_s(event) / (model.cores_per_cluster * board.clock_mhz)])
        else:
            flags.append(f"board_lacks:{event}")
            eph[event] = np.array([sim.counts.get(event, np.nan) / sim.counts[per] * board_eph_per])

    def price(rates) -> float:
        return float(
            operating_point_power_w(model, eph=rates, freq_mhz=f, voltage_v=np.array([voltage]), static_scale=sim.static_scale)["power_w"][
                0
            ]
        )

    p_model_board = price(eph)
    # what gem5's events cost, taken apart by swapping in gem5's inputs one group at a time (the parts add up):
    # cycles clocked (the board's core also waits on its I/O in WFI), the other events the board counted, and
    # the events it did not count (gem5's own mix; only gem5's IPC moves them)
    gem5_eph = {e: np.array([sim.eph[e]]) for e in model.events if e in sim.eph}
    if len(gem5_eph) == len(model.events):
        with_cycles = price({**eph, **{e: v for e, v in gem5_eph.items() if e == _CYCLES}})
        counted = price({**eph, **{e: gem5_eph[e] for e in model.events if e in board.counts}})
        parts = (with_cycles - p_model_board, counted - with_cycles, sim.power_w - counted)
    else:
        parts = (float("nan"),) * 3
    if sim.not_priced:
        flags.append("not_priced")
    ipc_b, ipc_g = board.ipc, sim.ipc
    epi_b = board.power_w * 1e3 / (ipc_b * board.clock_mhz)  # W / (inst/cycle * Mcycle/s) = uJ/inst -> x1e3 nJ
    epi_g = sim.power_w * 1e3 / (ipc_g * sim.clock_mhz)
    row = {
        "program": board.program,
        "split": split,
        "clock_mhz": board.clock_mhz,
        "gem5_clock_mhz": sim.clock_mhz,
        "board_samples": board.samples,
        "board_runs": board.runs,
        "model": model.name,
        "voltage_board_v": board.voltage_v,
        "voltage_gem5_v": voltage,
        "ipc_board": ipc_b,
        "ipc_gem5": ipc_g,
        "ipc_err_pct": _pct(ipc_g, ipc_b),
        "power_board_w": board.power_w,
        "power_gem5_w": sim.power_w,
        "power_err_pct": _pct(sim.power_w, board.power_w),
        "epi_board_nj": epi_b,
        "epi_gem5_nj": epi_g,
        "epi_err_pct": _pct(epi_g, epi_b),
        "epi_err_from_ipc_pct": _pct(ipc_b, ipc_g),  # EPI's error with the board's power: gem5's IPC alone
        "power_model_board_w": p_model_board,
        "events_cost_w": sim.power_w - p_model_board,  # gem5's events against the board's, at one operating point
        "model_err_w": p_model_board - board.power_w,  # the model on the board's own rates
        "events_cost_cycles_w": parts[0],  # of events_cost_w: gem5's cycles clocked per second against the board's
        "events_cost_counted_w": parts[1],  # the other events the board counted (0x04 for the A15)
        "events_cost_uncounted_w": parts[2],  # events the board did not count: gem5's IPC against the board's
    }
    for event in events:
        row[f"rate_{event}_board"] = board.per_cycle(event)
        row[f"rate_{event}_gem5"] = sim.per_cycle(event)
        row[f"rate_{event}_err_pct"] = _pct(sim.per_cycle(event), board.per_cycle(event))
    row["gem5_run"] = str(sim.folder)
    row["flags"] = ";".join(flags)
    row["not_priced"] = sim.not_priced
    return row
