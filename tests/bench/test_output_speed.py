"""Writing a large timeline: pyarrow's CSV writer against pandas' to_csv (issue: to_csv took 31 % of a 1 GB run)."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from cosim.output import ARROW_CSV_ROWS, write_table


def test_large_csv_is_written_by_arrow(tmp_path, measured):
    pytest.importorskip("pyarrow")
    rows = max(ARROW_CSV_ROWS, 300_000)
    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.random((rows, 20)), columns=[f"term_{i}_w" for i in range(20)])
    table["flags"] = "subst:0x11;subst:0x19"
    start = time.perf_counter()
    write_table(table, tmp_path / "arrow.csv")
    arrow_s = time.perf_counter() - start
    start = time.perf_counter()
    table.to_csv(tmp_path / "pandas.csv", index=False)
    pandas_s = time.perf_counter() - start
    back = pd.read_csv(tmp_path / "arrow.csv")
    assert np.allclose(back["term_0_w"], table["term_0_w"], rtol=0, atol=0) and len(back) == rows  # every digit kept
    measured("csv_300000_rows", arrow_s=round(arrow_s, 2), pandas_s=round(pandas_s, 1), ratio=round(pandas_s / arrow_s, 1))
    print(f"\n{rows} rows x 21 columns: pyarrow {arrow_s:.2f} s, pandas to_csv {pandas_s:.2f} s ({pandas_s / arrow_s:.1f}x)")
    assert pandas_s / arrow_s > 3
