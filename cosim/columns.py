"""Tables as plain numpy columns, for the gem5 power path.

Importing pandas costs about 0.6 CPU s, as much as reading 300 MB of ``stats.txt``,
so ``cosim power`` and sweeps pass ``{name: array}`` tables from reader to writer
and only the Python API turns them into DataFrames (:func:`to_frame`).  The rules
here follow pandas, so both routes give the same table and the same CSV bytes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

#: Column name -> one value per row; every column has the same length.
Columns = dict[str, np.ndarray]


def n_rows(columns: Mapping[str, np.ndarray]) -> int:
    """Rows of ``columns`` (0 for a table without columns)."""
    return len(next(iter(columns.values()))) if columns else 0


def interleave(parts: Sequence[Mapping[str, np.ndarray]]) -> Columns:
    """Rows of equal-length tables in turn: row 0 of each part, then row 1 of each, and so on.

    The same table as ``pd.concat(parts)`` sorted (stably) by row number, built without
    either copy: every column of any part, in order of first appearance; a part without
    a column gets NaN there, and a boolean column then holds ``True``/``False`` and NaN
    as objects, as pandas does.  A column has one dtype in every part that has it.
    """
    names = list(dict.fromkeys(name for part in parts for name in part))
    k, n = len(parts), n_rows(parts[0])
    out: Columns = {}
    for name in names:
        pieces = [part.get(name) for part in parts]
        present = [p for p in pieces if p is not None]
        if len(present) == k:
            dtype = np.result_type(*present)
        else:
            dtype = np.dtype(object) if present[0].dtype.kind in "bOUS" else np.dtype(float)
        column = np.empty(n * k, dtype=dtype)
        for j, piece in enumerate(pieces):
            column[j::k] = piece if piece is not None else np.nan
        out[name] = column
    return out


def take(columns: Mapping[str, np.ndarray], rows: np.ndarray) -> Columns:
    """The table with only ``rows`` (indices or a boolean mask), in that order."""
    return {name: values[rows] for name, values in columns.items()}


def groups(columns: Mapping[str, np.ndarray], key: str) -> Iterator[tuple[Any, Columns]]:
    """``(value, rows)`` for each distinct value of column ``key``, in order of first appearance."""
    keys = columns[key]
    for value in dict.fromkeys(keys.tolist()):
        yield value, take(columns, keys == value)


def to_frame(columns: Mapping[str, np.ndarray], attrs: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """The table as a DataFrame (with ``attrs``)."""
    import pandas as pd

    df = pd.DataFrame(dict(columns))
    df.attrs.update(attrs or {})
    return df
