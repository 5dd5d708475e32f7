"""Writing results: atomic CSV/Parquet files, a command's outputs as one set (plots are in :mod:`cosim.plots`)."""

from __future__ import annotations

import contextlib
import csv
import glob
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from cosim import columns as cols
from cosim.errors import CosimError

if TYPE_CHECKING:
    import pandas as pd


class _OutputSet:
    """The files written inside :func:`output_set`: (temporary, final) pairs, renamed into place together."""

    def __init__(self) -> None:
        self.pid = os.getpid()  # a forked worker inherits the set but is no part of it: it writes at once
        self.files: dict[Path, Path] = {}  # final -> temporary


_open_set: _OutputSet | None = None


@contextlib.contextmanager
def output_set() -> Iterator[None]:
    """A command's outputs as a set: every :func:`write_atomic` inside is renamed into place only when the block
    ends without an error or interrupt, all at once with SIGINT and SIGTERM held off; otherwise none is, and any
    file an earlier run left under those names stays as it was (never a new table beside an old plot)."""
    global _open_set
    if _open_set is not None and _open_set.pid == os.getpid():
        yield  # nested: the outer set commits
        return
    outputs = _open_set = _OutputSet()
    done = False
    try:
        yield
        done = True
    finally:
        _open_set = None
        if done:
            try:
                _commit(outputs)
            except BaseException:
                for tmp in outputs.files.values():
                    tmp.unlink(missing_ok=True)  # those not renamed yet
                raise
        else:
            for tmp in outputs.files.values():
                tmp.unlink(missing_ok=True)


def _commit(outputs: _OutputSet) -> None:
    import signal
    import threading

    held = threading.current_thread() is threading.main_thread()
    if held:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        renamed = 0
        for final, tmp in outputs.files.items():
            os.replace(tmp, final)
            renamed += 1
    except OSError as err:
        raise CosimError(
            f"{err.filename}: cannot write it ({err.strerror}); {renamed} of {len(outputs.files)} outputs were written"
        ) from None
    finally:
        if held:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def write_atomic(path: str | Path, write: Callable[[Path], None]) -> Path:
    """Run ``write(tmp)`` on a temporary file beside ``path``, then rename it onto ``path``.

    Readers never see a half-written file, and a failed write leaves any old file intact.  Inside
    :func:`output_set` the rename waits for the set's end.  The temporary file's name carries the
    writer's process id, so one left by a killed process is removed by the next write of the same path.
    """
    path = Path(path)
    folder = path.parent
    if not folder.is_dir():
        raise CosimError(f"{path}: folder {folder} does not exist; create it or write elsewhere")
    if path.is_dir():
        raise CosimError(f"{path}: an existing folder; give a file name")
    _remove_stale_temporaries(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=folder)
    except OSError as err:  # a read-only folder or disk, or one that holds no files (/proc)
        raise CosimError(f"{path}: cannot write a file in {folder} ({err.strerror}); give a folder cosim may write in") from None
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual mode
        outputs = _open_set
        if outputs is not None and outputs.pid == os.getpid():
            earlier = outputs.files.pop(path, None)  # written twice: the later one stands
            if earlier is not None:
                earlier.unlink(missing_ok=True)
            outputs.files[path] = Path(tmp)
        else:
            os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _remove_stale_temporaries(path: Path) -> None:
    """Temporary files of ``path`` left by writers that no longer run (killed mid-write)."""
    for tmp in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        pid = tmp.name[len(path.name) + 2 :].split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            tmp.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_table(df: pd.DataFrame | Mapping[str, np.ndarray], path: str | Path) -> Path:
    """Write ``df`` as CSV, or as Parquet when ``path`` ends in ``.parquet`` (needs pyarrow).

    ``df`` may be plain numpy columns (:mod:`cosim.columns`): a small table is then
    written without pandas, with the same bytes as pandas would write.  A table without a
    ``flags`` column gets an empty one (nothing flagged), so that every table cosim writes has it.
    """
    path = Path(path)
    if "flags" not in df:  # every table has one; empty: nothing about the row was worked around
        df = {**df, "flags": np.full(cols.n_rows(df), "", dtype=object)} if isinstance(df, Mapping) else df.assign(flags="")
    if isinstance(df, Mapping):
        if path.suffix != ".parquet" and cols.n_rows(df) < ARROW_CSV_ROWS:
            table = df
            return write_atomic(path, lambda tmp: _write_csv_columns(table, tmp))
        df = cols.to_frame(df)
    df = df.copy(deep=False)
    df.attrs = {}  # run metadata stays in memory; Parquet would try to serialise it
    if path.suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise CosimError(f"{path}: Parquet needs pyarrow; pip install 'cosim[parquet]' or write .csv") from None
        return write_atomic(path, lambda tmp: df.to_parquet(tmp, index=False))
    if len(df) >= ARROW_CSV_ROWS and _arrow_csv() is not None:
        return write_atomic(path, lambda tmp: _write_csv_arrow(df, tmp))
    return write_atomic(path, lambda tmp: df.to_csv(tmp, index=False))


#: From this many rows on, CSV is written by pyarrow (about 10x faster than pandas' to_csv on
#: large tables).  Every writer prints a float as its shortest round-trip form (Python's ``repr``):
#: what is read back is the same float, bit for bit (a 9-digit format made 163 nvidia-smi times
#: 100 ms apart, Unix seconds, into 3 values).
ARROW_CSV_ROWS = 100_000


def _write_csv_columns(table: Mapping[str, np.ndarray], tmp: Path) -> None:
    """CSV as ``DataFrame.to_csv(index=False)`` writes it: NaN empty, floats in their round-trip form, minimal quoting."""
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(list(table))
        for start in range(0, cols.n_rows(table), _CSV_BLOCK_ROWS):  # blocks: the cells' text never all in memory
            block = [_csv_cells(values[start : start + _CSV_BLOCK_ROWS]) for values in table.values()]
            writer.writerows(zip(*block))


_CSV_BLOCK_ROWS = 1000


def _csv_cells(values: np.ndarray) -> list[str]:
    return [_csv_cell(v) for v in values.tolist()]


def _csv_cell(value) -> str:
    if isinstance(value, float):
        return "" if value != value else repr(value)  # NaN is written empty; repr reads back as the same float
    return "" if value is None else str(value)


def _arrow_csv():
    try:
        import pyarrow.csv as arrow_csv
    except ImportError:
        return None
    return arrow_csv


def _write_csv_arrow(df: pd.DataFrame, tmp: Path) -> None:
    import pyarrow as pa

    arrow_csv = _arrow_csv()
    assert arrow_csv is not None
    try:
        table = pa.Table.from_pandas(df, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):  # mixed-type object columns: pandas writes those
        df.to_csv(tmp, index=False)
        return
    arrow_csv.write_csv(table, tmp)


#: Files of a gem5 output folder that cosim reads: no output may land on one of them.
GEM5_RUN_FILES = ("stats.txt", "stats.txt.gz", "config.ini", "config.json", "cosim-run.json")
TABLE_SUFFIXES = (".csv", ".parquet")
#: What matplotlib's file-only backend writes without extra packages (no suffix: PNG)
FIGURE_SUFFIXES = (".png", ".svg", ".pdf", ".eps", ".ps", ".jpg", ".jpeg", ".tif", ".tiff")


def check_output(path: str | Path, *, option: str, suffixes: tuple[str, ...]) -> Path:
    """Before any work: ``path`` can be written (its folder exists, it is no folder, its suffix is one of ``suffixes``)."""
    path = Path(path)
    if path.is_dir():
        raise CosimError(f"{option} {path}: an existing folder; give a file name in it, e.g. {path / ('cosim' + suffixes[0])}")
    if not path.parent.is_dir():
        raise CosimError(f"{option} {path}: folder {path.parent} does not exist; create it (mkdir -p {path.parent}) or write elsewhere")
    if path.exists() and not path.is_file():  # /dev/null, a FIFO: an atomic write would rename a new file over it
        raise CosimError(
            f"{option} {path}: not a regular file (a device or pipe); cosim writes a new file and renames it into place, "
            f"so give a file name, e.g. {Path(tempfile.gettempdir()) / ('cosim' + suffixes[0])}"
        )
    # tables and models by their exact suffix (write_table tells Parquet by ".parquet"); figures in any case
    suffix = path.suffix.lower() if suffixes is FIGURE_SUFFIXES else path.suffix
    if suffix not in suffixes and not (suffix == "" and suffixes is FIGURE_SUFFIXES):
        raise CosimError(
            f"{option} {path}: cosim cannot write a '{path.suffix or 'suffix-less'}' file here; give a name ending in {', '.join(suffixes)}"
        )
    return path


def refuse_overwriting_inputs(outputs: Mapping[str, Path], inputs: Iterable[Path]) -> None:
    """Before any work: no output (``{option: path}``) is one of ``inputs`` or a gem5 run file beside or under one.

    Paths are compared resolved (symlinks followed) and by :func:`os.path.samefile` (hard links).
    """
    protected = [(p, why) for inp in inputs for p, why in _protected(Path(inp))]
    for option, out in outputs.items():
        out = Path(out)
        target = out.resolve()
        for path, why in protected:
            if target == path.resolve() or _same_file(out, path) or (why == "folder" and _run_file_under(target, path)):
                if why == "folder":
                    what = f"the input folder {path}" if target == path.resolve() else f"a gem5 run file under the input folder {path}"
                else:
                    what = f"{why} {path}"
                raise CosimError(f"{option} {out}: that is {what}; cosim never writes over its inputs, give another output path")


def _protected(inp: Path) -> list[tuple[Path, str]]:
    if inp.is_dir():
        return [(inp, "folder"), *((p, "the gem5 run file") for p in _run_files_in(inp, depth=2))]
    # the gem5 run files beside an input; beside a gem5 file even those not there yet (one written
    # there would change how the run reads next time)
    beside = [inp.parent / n for n in GEM5_RUN_FILES if n != inp.name and (inp.name in GEM5_RUN_FILES or (inp.parent / n).exists())]
    return [(inp, "the input"), *((p, "the gem5 run file") for p in beside)]


def _run_files_in(folder: Path, *, depth: int) -> list[Path]:
    found = [folder / n for n in GEM5_RUN_FILES if (folder / n).is_file()]
    if depth > 1:
        try:
            subfolders = [p for p in folder.iterdir() if p.is_dir()]
        except OSError:
            subfolders = []
        for sub in subfolders[:10_000]:
            found += _run_files_in(sub, depth=depth - 1)
    return found


def _run_file_under(target: Path, folder: Path) -> bool:
    return target.name in GEM5_RUN_FILES and target.is_relative_to(folder.resolve())


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False
