"""Board rows against gem5 rows: one row per program and clock, with the error taken apart exactly.

Every figure is computed from what it names:

- energy per instruction [nJ]: power over the instruction rate each side measured (the board: INST_RETIRED over
  the time its counters counted; gem5: committed instructions over simulated time), never a nominal clock;
- "the model on the board's rates" (``power_model_board_w``): the model given the board's own counted events and
  the board's own voltage, clock and powered cores; an input the board did not count is gem5's count per
  instruction times the board's instructions, and each such input is named in ``model_board_inputs_not_board``;
- the exact log decomposition, in every row:
  ``ln(P_gem5 / P_board) = ln(P_model(board) / P_board)`` [the model, ``ln_model``]
  ``+ ln(P_gem5 / P_model(board))`` [gem5's activity, ``ln_activity``], the second taken apart by swapping one of
  the model's inputs at a time from the board's value to gem5's (``ln_event_<E>``; the clock and voltage together,
  ``ln_clock_voltage``) with what no single swap explains on its own line (``ln_interaction``), so the parts sum
  to the total;
- flag ``powered_cores_differ`` when the cores the gem5 run powers are not the board's.
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
    intervals: dict = field(default_factory=dict)  # model -> BoardInterval calibrated on all its training programs
    # the thermal model on every board row (program, clock, split, temp_board_c, temp_pred_c) and how it was run
    temperatures: list[dict] = field(default_factory=list)
    temperature_note: str = ""
    dvfs: list[dict] = field(default_factory=list)  # DVFS energy ratios, what-if against board (cosim.validate.dvfs)

    def summary(self, model: str | None = None, split: str | None = None) -> dict[str, float]:
        """Over the priced rows (of ``model`` when given; of the ``split``, ``train`` or ``test``, when given): MAPE
        and bias [%] of power, energy per instruction and IPC; power MAPE and bias per clock; the decomposition's mean
        terms [% of ln, i.e. 100 * mean ln ratio]."""
        rows = [r for r in self.rows if (model is None or r["model"] == model) and (split is None or r["split"] == split)]
        priced = [r for r in rows if math.isfinite(r["power_gem5_w"])]
        out: dict[str, float] = {"rows": len(rows), "priced_rows": len(priced)}
        for key in ("power", "epi", "ipc"):
            errs = [r[f"{key}_err_pct"] for r in (priced if key != "ipc" else rows) if math.isfinite(r[f"{key}_err_pct"])]
            out[f"{key}_mape_pct"] = float(np.mean(np.abs(errs))) if errs else float("nan")
            out[f"{key}_bias_pct"] = float(np.mean(errs)) if errs else float("nan")
        for clock in sorted({r["clock_mhz"] for r in priced}):
            errs = [r["power_err_pct"] for r in priced if r["clock_mhz"] == clock]
            out[f"power_mape_pct@{clock:g}"] = float(np.mean(np.abs(errs)))
            out[f"power_bias_pct@{clock:g}"] = float(np.mean(errs))
        model_errs = [(r["power_model_board_w"] / r["power_board_w"] - 1) * 100 for r in priced if math.isfinite(r["power_model_board_w"])]
        out["model_board_mape_pct"] = float(np.mean(np.abs(model_errs))) if model_errs else float("nan")
        for key in log_terms(rows):
            vals = [r[key] for r in priced if math.isfinite(r[key])]
            out[f"{key}_mean_pct"] = 100 * float(np.mean(vals)) if vals else float("nan")
            out[f"{key}_mean_abs_pct"] = 100 * float(np.mean(np.abs(vals))) if vals else float("nan")
        for event in self.events:
            chosen = [r for r in rows if math.isfinite(r[f"rate_{event}_err_pct"])]
            out[f"rate_{event}_mape_pct"] = float(np.mean([abs(r[f"rate_{event}_err_pct"]) for r in chosen])) if chosen else float("nan")
            # a rare event's relative error says little (0.00002 against 0.004 per cycle): the difference per cycle too
            diffs = [abs(r[f"rate_{event}_gem5"] - r[f"rate_{event}_board"]) for r in rows]
            diffs = [d for d in diffs if math.isfinite(d)]
            out[f"rate_{event}_mean_abs_diff"] = float(np.mean(diffs)) if diffs else float("nan")
        return out

    @property
    def models(self) -> list[str]:
        """The models the rows were priced with, in order of first appearance."""
        return list(dict.fromkeys(r["model"] for r in self.rows))


def log_terms(rows: list[dict]) -> list[str]:
    """The decomposition's columns, total first, in the order they sum: model, then each swap, then interaction."""
    swaps = list(dict.fromkeys(k for r in rows for k in r if k.startswith("ln_event_") or k == "ln_clock_voltage"))
    return ["ln_total", "ln_model", "ln_activity", *swaps, "ln_interaction"] if rows else []


def compare(
    board: dict[tuple[str, float], BoardRow],
    sims: list[SimRow],
    *,
    excluded: dict[str, str] | None = None,
    split: dict[str, str] | None = None,
    board_cluster: str = "A15",
    board_file: str = "",
) -> Validation:
    """Pair board and gem5 rows by program and clock (within 1 %), price the board's rates, decompose the errors.

    ``excluded``: program -> reason (default: :func:`excluded_programs`); ``split``: program -> ``train``/``test``;
    ``board_cluster``: the cluster the board measured (``A15``): a run priced by a model of another cluster is flagged
    ``model_not_board_cluster`` and warned about; ``board_file``: the measured file, whose name a model fitted on
    this board records as its training data (its rows say ``this board``, every other model's ``another board``).
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
    order = {name: i for i, name in enumerate(dict.fromkeys(s.model for s in sims))}
    for sim in sorted(sims, key=lambda s: (order[s.model], s.program, s.clock_mhz)):
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
        rows.append(_row(board[key], sim, models[sim.model], events, split.get(sim.program, ""), board_file))
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
    from cosim.validate.interval import add_intervals

    intervals = add_intervals(rows, [models[name] for name in order])
    return Validation(rows=rows, one_side=one_side, excluded=left_out, events=tuple(events), intervals=intervals)


def _pct(sim: float, board: float) -> float:
    return (sim / board - 1) * 100 if board and math.isfinite(board) and math.isfinite(sim) else float("nan")


BOARD_POWERED_CORES = 4  # the XU3's A15 cluster: four cores powered, the program's busy, three in WFI


def model_board(model, board_file: str) -> str:
    """``this board`` when the model was fitted on the measured file (its training data names it), else ``another board``."""
    from pathlib import Path

    data = str(model.raw.get("training", {}).get("data", ""))
    return "this board" if board_file and data and Path(data).name == Path(board_file).name else "another board"


def _row(board: BoardRow, sim: SimRow, model, events: list[str], split: str, board_file: str = "") -> dict:
    from cosim.models.envelope import cores_factor, operating_point_power_w

    flags = []
    # the board's model inputs: its rates per second over its counters' time, averaged over the model's cores, per MHz
    per = _INSTS if _INSTS in board.counts and _INSTS in sim.counts else _CYCLES
    not_board = [e for e in model.events if e not in board.counts]
    eph = {}
    for event in model.events:
        if event in board.counts:
            eph[event] = board.per_s(event) / (model.cores_per_cluster * board.clock_mhz)
        else:  # gem5's count per instruction (per cycle without 0x08) times the board's instructions
            flags.append(f"board_lacks:{event}")
            eph[event] = sim.counts.get(event, np.nan) / sim.counts[per] * board.per_s(per) / (model.cores_per_cluster * board.clock_mhz)
    if sim.powered_cores != BOARD_POWERED_CORES:
        flags.append("powered_cores_differ")

    def price(rates: dict[str, float], clock_mhz: float, voltage_v: float, cores: int) -> float:
        p = operating_point_power_w(
            model,
            eph={e: np.array([v]) for e, v in rates.items()},
            freq_mhz=np.array([clock_mhz]),
            voltage_v=np.array([voltage_v]),
            static_scale=cores_factor(model, cores),
            interval=False,
        )
        return float(p["power_w"][0])

    p_model_board = price(eph, board.clock_mhz, board.voltage_v, BOARD_POWERED_CORES)
    ln_total = math.log(sim.power_w / board.power_w) if sim.power_w > 0 else float("nan")
    ln_model = math.log(p_model_board / board.power_w) if p_model_board > 0 else float("nan")
    ln_activity = ln_total - ln_model  # = ln(P_gem5 / P_model(board)), so the two sum to the total exactly
    # gem5's activity taken apart: each of the model's inputs swapped alone from the board's value to gem5's
    swaps: dict[str, float] = {}
    if len(sim.eph) >= len(model.events) and p_model_board > 0:
        for event in model.events:
            swaps[f"ln_event_{event}"] = math.log(
                price({**eph, event: sim.eph[event]}, board.clock_mhz, board.voltage_v, BOARD_POWERED_CORES) / p_model_board
            )
        swaps["ln_clock_voltage"] = math.log(price(eph, sim.clock_mhz, sim.voltage_v, BOARD_POWERED_CORES) / p_model_board)
        if sim.powered_cores != BOARD_POWERED_CORES:
            swaps["ln_powered_cores"] = math.log(price(eph, board.clock_mhz, board.voltage_v, sim.powered_cores) / p_model_board)
    else:
        swaps = {f"ln_event_{e}": float("nan") for e in model.events} | {"ln_clock_voltage": float("nan")}
    if sim.not_priced:
        flags.append("not_priced")
    inst_b = board.per_s(_INSTS)  # instructions over the time the board's counters counted [1/s]
    inst_g = sim.counts.get(_INSTS, np.nan) / sim.duration_s if sim.duration_s > 0 else float("nan")
    epi_b = board.power_w / inst_b * 1e9 if inst_b > 0 else float("nan")  # W / (inst/s) = J/inst -> x1e9 nJ
    epi_g = sim.power_w / inst_g * 1e9 if inst_g > 0 else float("nan")
    row = {
        "program": board.program,
        "split": split,
        "clock_mhz": board.clock_mhz,
        "gem5_clock_mhz": sim.clock_mhz,
        "board_samples": board.samples,
        "board_runs": board.runs,
        "model": model.name,
        "model_board": model_board(model, board_file),
        "powered_cores_board": BOARD_POWERED_CORES,
        "powered_cores_gem5": sim.powered_cores,
        "voltage_board_v": board.voltage_v,
        "voltage_gem5_v": sim.voltage_v,
        "ipc_board": board.ipc,
        "ipc_gem5": sim.ipc,
        "ipc_err_pct": _pct(sim.ipc, board.ipc),
        "inst_per_s_board": inst_b,
        "inst_per_s_gem5": inst_g,
        "power_board_w": board.power_w,
        "power_gem5_w": sim.power_w,
        "power_err_pct": _pct(sim.power_w, board.power_w),
        "epi_board_nj": epi_b,
        "epi_gem5_nj": epi_g,
        "epi_err_pct": _pct(epi_g, epi_b),
        "power_model_board_w": p_model_board,
        "model_board_inputs_not_board": ";".join(not_board),
        "ln_total": ln_total,
        "ln_model": ln_model,
        "ln_activity": ln_activity,
        **swaps,
        "ln_interaction": ln_activity - sum(swaps.values()),
    }
    for event in events:
        row[f"rate_{event}_board"] = board.per_cycle(event)
        row[f"rate_{event}_gem5"] = sim.per_cycle(event)
        row[f"rate_{event}_err_pct"] = _pct(sim.per_cycle(event), board.per_cycle(event))
    row["gem5_run"] = str(sim.folder)
    row["flags"] = ";".join(flags)
    row["not_priced"] = sim.not_priced
    return row
