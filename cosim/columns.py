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


def concat(parts: Sequence[Mapping[str, np.ndarray]]) -> Columns:
    """Stack tables row-wise, like ``pd.concat``: every column of any part, in order of first appearance.

    A part without a column gets NaN there; a boolean column then holds ``True``/``False``
    and NaN as objects, as pandas does.  A column has one dtype in every part that has it.
    """
    names = list(dict.fromkeys(name for part in parts for name in part))
    out: Columns = {}
    for name in names:
        pieces = [part.get(name) for part in parts]
        if all(p is not None for p in pieces):
            out[name] = np.concatenate(pieces)  # type: ignore[arg-type]  # all present
            continue
        present = next(p for p in pieces if p is not None)
        fill_dtype = object if present.dtype.kind in "bOUS" else float
        out[name] = np.concatenate(
            [
                np.asarray(p, dtype=fill_dtype) if p is not None else np.full(n_rows(part), np.nan, dtype=fill_dtype)
                for p, part in zip(pieces, parts)
            ]
        )
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
