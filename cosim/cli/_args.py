"""What every command group shares: argument helpers, the trust overrides, and the run named on the command line."""

from __future__ import annotations

import argparse
import sys

from cosim.errors import CosimError

EXIT_ERROR = 2
EXIT_PARTIAL = 3
EXIT_INTERNAL = 4
EXIT_INTERRUPTED = 130


def _add_trust_flags(p: argparse.ArgumentParser, *, isa: bool = True, implausible: bool = True) -> None:
    """The overrides of cosim's refusals (README: "What cosim refuses, and why")."""
    if isa:
        p.add_argument(
            "--any-isa", action="store_true", help="price a run of another ISA than the model was trained on (rows flagged isa_mismatch)"
        )
    if implausible:
        p.add_argument(
            "--keep-implausible",
            action="store_true",
            help="write physically implausible rows, flagged 'implausible' with the reason, instead of refusing",
        )


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise CosimError(f"{flag} '{item}': expected NAME=VALUE")
        out[name] = value
    return out


def _open_run(args: argparse.Namespace):
    """The run named on the command line, resolved by :func:`cosim.run.open_run` (its notes go to stderr)."""
    from cosim.run import open_run

    voltages = {k: _volts(k, v) for k, v in _pairs(getattr(args, "voltage", []), "--voltage").items()}
    run = open_run(
        args.stats,
        config=getattr(args, "config", None),
        models=args.model,
        clusters=_pairs(args.cluster, "--cluster"),
        voltages=voltages,
        voltage_model=getattr(args, "voltage_model", False),
    )
    for note in run.notes:
        print(f"cosim: {note}", file=sys.stderr)
    return run


def _volts(name: str, text: str) -> float:
    import numpy as np

    try:
        value = float(text)
    except ValueError:
        raise CosimError(f"--voltage {name}={text}: not a number of volts") from None
    if not np.isfinite(value) or not 0.3 < value < 2.0:
        raise CosimError(f"--voltage {name}={text}: expected a CPU voltage in volts, e.g. 1.05")
    return value
