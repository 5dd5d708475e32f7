"""What every command group shares: argument helpers, the trust overrides, and the run named on the command line."""

from __future__ import annotations

import argparse
import errno
import sys
from pathlib import Path

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
            help="write physically implausible rows with the values cosim computed, flagged 'implausible' with the reason, instead of refusing",
        )
    p.add_argument(
        "--extrapolate",
        action="store_true",
        help="price clocks beyond the model's extrapolation band by its physical extrapolation (flagged extrapolated)",
    )


def add_temperature_options(p: argparse.ArgumentParser, *, stated: bool = True) -> None:
    """--temperature, --ambient-c and --start-temperature-c: the die temperature static power is priced at."""
    if stated:
        p.add_argument(
            "--temperature",
            type=float,
            metavar="C",
            help="die temperature [°C] for static power, instead of the one the run's own power produces (flagged outside "
            "the model's trained temperatures)",
        )
    p.add_argument(
        "--ambient-c",
        type=float,
        metavar="C",
        help="ambient of the thermal loop [°C] (default: the Powmon session's, models/thermal-xu3.json; rows flagged ambient_default)",
    )
    p.add_argument(
        "--start-temperature-c",
        type=float,
        metavar="C",
        help="die temperature at the run's start [°C] (default: steady state at the run's mean power; rows flagged start_steady)",
    )


def add_config_options(p: argparse.ArgumentParser) -> None:
    """--config, and --cpu-type for a run whose output has no config file."""
    p.add_argument("--config", type=Path, help="config.ini or config.json (default: beside stats.txt)")
    p.add_argument(
        "--cpu-type",
        action="append",
        default=[],
        metavar="PATH=TYPE",
        help="a run with no config.ini: CPU PATH is of gem5 type TYPE, e.g. system.cpu=TimingSimpleCPU (repeat per CPU; "
        "default: CPUs, kinds, clocks and caches read from the stats' names, rows flagged config_from_stats)",
    )


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise CosimError(f"{flag} '{item}': expected NAME=VALUE")
        if name in out:  # the later one would silently win
            raise CosimError(f"{flag} {name}={out[name]} and {flag} {item}: two values for '{name}'; give it once")
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
        temperature_c=getattr(args, "temperature", None),
        ambient_c=getattr(args, "ambient_c", None),
        start_temperature_c=getattr(args, "start_temperature_c", None),
        powered_cores={k: _cores(k, v) for k, v in _pairs(getattr(args, "powered_cores", []), "--powered-cores").items()},
        cpu_types=_pairs(getattr(args, "cpu_type", []), "--cpu-type"),
    )
    for note in run.notes:
        print(f"cosim: {note}", file=sys.stderr)
    return run


def _cores(name: str, text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise CosimError(f"--powered-cores {name}={text}: expected a whole number of cores, e.g. 4")
    return int(text)


def _volts(name: str, text: str) -> float:
    import numpy as np

    try:
        value = float(text)
    except ValueError:
        raise CosimError(f"--voltage {name}={text}: not a number of volts") from None
    if not np.isfinite(value) or not 0.3 < value < 2.0:
        raise CosimError(f"--voltage {name}={text}: expected a CPU voltage in volts, e.g. 1.05")
    return value


#: Options naming a file cosim writes, as the user typed them
_OUTPUTS = {"output": "-o", "plot": "--plot", "breakdown": "--breakdown", "plot_balance": "--plot-balance", "ptrace": "--ptrace"}
#: What each output option writes, where it is not a figure (the table's suffixes may be a command's own)
_SUFFIXES = {"ptrace": (".ptrace",)}


def _guard_paths(args: argparse.Namespace) -> None:
    """Before any work, for every command: each output can be written and is none of the inputs.

    Outputs are the options in :data:`_OUTPUTS` plus ``args.extra_outputs(args)`` (``{what: path}``: a
    command's files beside its output); inputs are every other path argument and model files.
    """
    from cosim.output import FIGURE_SUFFIXES, TABLE_SUFFIXES, check_output, refuse_overwriting_inputs

    outputs = {option: getattr(args, dest) for dest, option in _OUTPUTS.items() if getattr(args, dest, None) is not None}
    outputs.update(getattr(args, "extra_outputs", lambda a: {})(args))
    inputs: list[Path] = []
    for dest, value in vars(args).items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, Path) and dest not in _OUTPUTS and dest != "out":
                inputs.append(item)
            elif dest == "model" and isinstance(item, str) and Path(item).exists():
                inputs.append(Path(item))
    _refuse_symlink_loops([*inputs, *outputs.values()])  # resolving one would be an internal error further on
    refuse_overwriting_inputs(outputs, inputs)  # first: naming the input matters more than a wrong suffix
    for dest, option in _OUTPUTS.items():
        if dest == "output" and option in outputs and getattr(args, "output_is_folder", False):
            _check_output_folder(outputs[option], option=option)
        elif option in outputs:
            suffixes = getattr(args, "output_suffixes", TABLE_SUFFIXES) if dest == "output" else _SUFFIXES.get(dest, FIGURE_SUFFIXES)
            check_output(outputs[option], option=option, suffixes=suffixes)


def _refuse_symlink_loops(paths: list[Path]) -> None:
    """A path whose symbolic links lead back to themselves (a link to itself, a <-> b) is refused in one line."""
    for path in paths:
        try:
            Path(path).resolve()
        except (RuntimeError, OSError) as err:  # RuntimeError before Python 3.13, OSError (ELOOP) from 3.13
            if isinstance(err, OSError) and err.errno != errno.ELOOP:
                continue
            raise CosimError(
                f"{path}: a loop of symbolic links (it leads back to itself); give the real file, or fix the link (ls -l {path})"
            ) from None


def _check_output_folder(path: Path, *, option: str) -> None:
    """An output that is a folder cosim fills (a study): made if absent, never an existing file."""
    if path.exists() and not path.is_dir():
        raise CosimError(f"{option} {path}: an existing file, not a folder; give a folder for cosim to fill (made if absent)")
    if not path.parent.is_dir():
        raise CosimError(f"{option} {path}: folder {path.parent} does not exist; create it (mkdir -p {path.parent}) or write elsewhere")
