"""Writing results: atomic CSV/Parquet files (plots are in :mod:`cosim.plots`)."""

from __future__ import annotations

import csv
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from cosim import columns as cols
from cosim.errors import CosimError

if TYPE_CHECKING:
    import pandas as pd


def write_atomic(path: str | Path, write: Callable[[Path], None]) -> Path:
    """Run ``write(tmp)`` on a temporary file beside ``path``, then rename it onto ``path``.

    Readers never see a half-written file, and a failed write leaves any old file intact.
    """
    path = Path(path)
    if path.parent and not path.parent.exists():
        raise CosimError(f"{path}: folder {path.parent} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual mode
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_table(df: pd.DataFrame | Mapping[str, np.ndarray], path: str | Path) -> Path:
    """Write ``df`` as CSV, or as Parquet when ``path`` ends in ``.parquet`` (needs pyarrow).

    ``df`` may be plain numpy columns (:mod:`cosim.columns`): a small table is then
    written without pandas, with the same bytes as pandas would write.
    """
    path = Path(path)
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
    return write_atomic(path, lambda tmp: df.to_csv(tmp, index=False, float_format="%.9g"))


#: From this many rows on, CSV is written by pyarrow (about 10x faster than pandas' to_csv on
#: large tables); smaller tables keep pandas' 9-digit number format, which the examples show.
ARROW_CSV_ROWS = 100_000


def _write_csv_columns(table: Mapping[str, np.ndarray], tmp: Path) -> None:
    """CSV as ``DataFrame.to_csv(index=False, float_format="%.9g")`` writes it: NaN empty, minimal quoting."""
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
        return "" if value != value else f"{value:.9g}"  # NaN is written empty
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
        df.to_csv(tmp, index=False, float_format="%.9g")
        return
    arrow_csv.write_csv(table, tmp)
