"""The ``cosim`` command: one module per command group, sharing :mod:`cosim.cli._args`.

Exit status: 0 done; 2 bad input or request, or a refused result (one-line
message, nothing written); 3 done, outputs written, but some dumps of the input
were unusable or some epochs have no value (reported; ``--allow-partial`` makes
that 0); 4 an internal error (a bug: one line, please report it); 130
interrupted (Ctrl-C, SIGTERM, or standard output closed; no temporary file is left).
"""

from __future__ import annotations

import argparse
import copy
import functools
import os
import signal
import sys
import traceback
import warnings
from pathlib import Path
from typing import NoReturn

from cosim.cli import dse, explore, fit, gpu, kernels, models, power, read, validate
from cosim.cli._args import EXIT_ERROR, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_PARTIAL, _guard_paths
from cosim.errors import CosimError, CosimWarning, CutOffWarning

__all__ = ["EXIT_ERROR", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_PARTIAL", "main"]


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # before the command's own handler is in place (parsing, imports): one line too
        print("cosim: interrupted before it wrote anything", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    for name, value in vars(args).items():  # argparse hands out a default list itself: the cached parser's must stay as built
        if isinstance(value, list | dict | set):
            setattr(args, name, copy.copy(value))
    # cosim's matrices are small, so BLAS threads only spin while they wait (about 0.15 CPU s per
    # process at numpy import on 2 cores); set before numpy loads, and the user's setting wins
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import numpy as np  # after parsing: --help needs no numpy

    from cosim.output import output_set

    cut: list[str] = []  # inputs that ended inside a record: only complete ones were read (exit 3)
    partial_ok = bool(getattr(args, "allow_partial", False))  # exit 0 then: a cut-off input is a note, not an error
    warnings.showwarning = lambda message, category, *rest: _show_warning(message, category, *rest, cut=cut)
    warnings.simplefilter("always", CosimWarning)
    # numpy's and matplotlib's own warnings are about our arithmetic, not the user's input:
    # what matters to the user is reported as a CosimWarning or in the flags column
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    warnings.filterwarnings("ignore", module="matplotlib")
    previous = signal.signal(signal.SIGTERM, _terminate)  # unwinds like Ctrl-C, so temporary files are removed
    try:
        with np.errstate(all="ignore"):
            _guard_paths(args)  # before any work: a typo in -o must never cost an input
            with output_set():  # a command's outputs all appear, or none do
                status = args.run(args)
            if status == 0 and cut and not getattr(args, "allow_partial", False):
                status = EXIT_PARTIAL
            _report_cut(cut, as_error=status == EXIT_PARTIAL, partial_ok=partial_ok)
            sys.stdout.flush()  # a closed pipe shows here, in the handlers below, not at interpreter exit
            return status
    except CosimError as err:
        _report_cut(cut, as_error=False)  # the refusal is the one error line
        print(f"cosim: error: {err}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("cosim: interrupted; no output was left half-written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # stdout's reader went away (`cosim ... | head`): stop like an interrupt, quietly on stdout
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print("cosim: stopped: its standard output was closed (piped into head?); no output was left half-written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ModuleNotFoundError as err:  # an optional package this command needs is not installed
        extra = _extra(err.name or "", _command(argv))
        if extra is None:
            raise
        print(
            f"cosim: error: cosim {_command(argv)} needs the optional package {err.name}, which is not installed: "
            f"pip install 'cosim[{extra}]'",
            file=sys.stderr,
        )
        return EXIT_ERROR
    except OSError as err:  # a path cosim cannot read or write (permissions, a read-only disk, a link loop): one line
        if err.filename is None:
            return _internal(err)
        print(f"cosim: error: {_os_error(err)}", file=sys.stderr)
        return EXIT_ERROR
    except RuntimeError as err:
        if not str(err).startswith("Symlink loop from "):  # pathlib's resolve() says a link loop so (before 3.13)
            return _internal(err)
        path = str(err).removeprefix("Symlink loop from ").strip("'")
        print(f"cosim: error: {path}: a symbolic link that leads back to itself (a loop); give the file it should name", file=sys.stderr)
        return EXIT_ERROR
    except Exception as err:  # a bug in cosim, not bad input: still one line, and a way to report it
        return _internal(err)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _os_error(err: OSError) -> str:
    """One line for an OSError that names a path: the path, what the system said, and what to do."""
    import errno

    todo = {
        errno.EACCES: "cosim may not read or write there: check its permissions, or give another path",
        errno.EPERM: "cosim may not read or write there: check its permissions, or give another path",
        errno.EROFS: "that disk is read-only: give a path on a writable one",
        errno.ELOOP: "a symbolic link on that path leads back to itself (a loop): give the file it should name",
        errno.ENOSPC: "the disk is full: free some space or write elsewhere",
    }.get(err.errno or 0, "check the path")
    return f"{err.filename}: {err.strerror or err}; {todo}"


def _internal(err: BaseException) -> int:
    """A bug in cosim, not bad input: still one line, and a way to report it."""
    where = traceback.extract_tb(err.__traceback__)[-1]
    print(
        f"cosim: internal error: {type(err).__name__}: {err} (at {Path(where.filename).name}:{where.lineno}); "
        "please report it with the command line",
        file=sys.stderr,
    )
    return EXIT_INTERNAL


#: Optional packages -> the extra (pyproject.toml [project.optional-dependencies]) that installs them.
EXTRAS = {
    "sklearn": "kernels",
    "statsmodels": "fit",
    "pyarrow": "parquet",
    "tqdm": "progress",
    "distributed": "distributed",
    "optuna": "explore",
}


def _extra(module: str, command: str) -> str | None:
    """The extra that installs ``module`` for ``command``; scipy comes with scikit-learn, statsmodels and optuna."""
    top = module.split(".")[0]
    if top == "scipy":
        return "kernels" if command.startswith("kernel") else "explore" if command == "explore" else "fit"
    return EXTRAS.get(top)


def _command(argv: list[str] | None) -> str:
    return next((a for a in (sys.argv[1:] if argv is None else argv) if not str(a).startswith("-")), "")


def _report_cut(cut: list[str], *, as_error: bool, partial_ok: bool = False) -> None:
    """Say which inputs ended inside a record, once the command's outcome is known: one ``cosim: error:`` line for
    exit 3 (the others as warnings), warnings where --allow-partial accepted them or another error refused the run."""
    for message in cut[:-1] if as_error else cut:  # a note where --allow-partial accepted the loss (exit 0)
        print(f"cosim: {'note' if partial_ok and not as_error else 'warning'}: {message}", file=sys.stderr)
    if as_error and cut:
        more = f" (and {len(cut) - 1} more cut-off input(s), above)" if len(cut) > 1 else ""
        print(f"cosim: error: {cut[-1]}{more}", file=sys.stderr)
    cut.clear()


def _terminate(signum, frame) -> None:
    raise KeyboardInterrupt


def _show_warning(message, category, filename, lineno, file=None, line=None, *, cut: list[str]) -> None:
    if issubclass(category, CutOffWarning):  # outputs hold the complete records only: exit 3, said at the end
        cut.append(str(message))
    elif issubclass(category, CosimWarning):
        print(f"cosim: warning: {message}", file=sys.stderr)
    else:
        print(warnings.formatwarning(message, category, filename, lineno, line), file=sys.stderr, end="")


class _Parser(argparse.ArgumentParser):
    """A usage error in one line, naming what is wrong and where the help is (subparsers are made of this class too)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"{self.prog}: error: {' '.join(message.splitlines())} (see {self.prog} --help)\n")


class _CommandParser(_Parser):
    """A command's parser: an argument it does not know is its own error, pointing to its own help."""

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


@functools.cache  # built once a process (about 10 ms: every command's options); parsing leaves it unchanged
def _parser() -> argparse.ArgumentParser:
    from cosim import __version__

    parser = _Parser(prog="cosim", description="Hardware-trained power models for gem5 runs.")
    parser.add_argument("--version", action="version", version=f"cosim {__version__}")
    sub = parser.add_subparsers(required=True, metavar="COMMAND", parser_class=_CommandParser)
    for group in (power, models, fit, dse, explore, kernels, gpu, read, validate):
        group.add_parsers(sub)
    return parser
