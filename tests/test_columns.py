"""The pandas-free power path (numpy columns) gives the same tables and CSV bytes as pandas."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from helpers import REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from cosim import columns as cols
from cosim.models.modelfile import load_model
from cosim.output import write_table
from cosim.readers.gem5_config import read_config
from cosim.readers.gem5_stats import read_stats, read_stats_table
from cosim.timeline.clusters import ClusterSpec, stats_needed
from cosim.timeline.cpu import power_timeline, timeline_columns

RUNS = sorted(p for p in (REPO / "traces").glob("cosim-v24-*") if (p / "stats.txt.gz").exists())
PANDAS_CSV = {"index": False, "lineterminator": "\n"}


def _specs() -> list[ClusterSpec]:
    return [
        ClusterSpec(name="big", path="system.bigCluster", model=load_model("cortex-a15-walker2017")),
        ClusterSpec(name="little", path="system.littleCluster", model=load_model("cortex-a7-gemstone2018")),
    ]


@pytest.mark.parametrize("run", RUNS, ids=[r.name for r in RUNS])
def test_real_run_same_table_and_csv_bytes_both_routes(run, tmp_path):
    config = read_config(run / "config.ini")
    specs = _specs()
    stats = read_stats(run / "stats.txt.gz")  # the full parse, as a DataFrame
    frame = power_timeline(stats, config, specs)
    table = timeline_columns(read_stats_table(run / "stats.txt.gz", stats=stats_needed(config, specs)), config, specs)

    assert len(frame) == 2 * len(stats) > 40
    pd.testing.assert_frame_equal(frame, frame.sort_values(["epoch", "cluster"], kind="stable", ignore_index=True))
    pd.testing.assert_frame_equal(frame, cols.to_frame(table), check_exact=True)
    frame.to_csv(tmp_path / "pandas.csv", **PANDAS_CSV)
    write_table(table, tmp_path / "columns.csv")
    assert (tmp_path / "columns.csv").read_bytes() == (tmp_path / "pandas.csv").read_bytes()


_floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
_text = st.text(alphabet=st.sampled_from(list('ab ,;"\n\r_-0.')), max_size=6)


@st.composite
def _tables(draw, n: int) -> cols.Columns:
    """A table of ``n`` rows; a column name always has the same kind, as in a timeline."""
    kinds = draw(st.lists(st.sampled_from(["float", "int", "bool", "str"]), min_size=1, max_size=5))
    out: cols.Columns = {}
    for i, kind in enumerate(kinds):
        if kind == "float":
            out[f"f{i}_w"] = np.array(draw(st.lists(_floats, min_size=n, max_size=n)), dtype=float)
        elif kind == "int":
            out[f"i{i}"] = np.array(draw(st.lists(st.integers(-(2**40), 2**40), min_size=n, max_size=n)), dtype=np.int64)
        elif kind == "bool":
            out[f"b{i}"] = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
        else:
            out[f"s{i}, x"] = np.array(draw(st.lists(_text.filter(lambda t: t != ""), min_size=n, max_size=n)), dtype=object)
    return out


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 6), data=st.data())
def test_interleave_and_csv_follow_pandas(n, data, tmp_path_factory):
    """Taking tables' rows in turn, then writing CSV, matches pd.concat + a stable sort, and DataFrame.to_csv."""
    parts = data.draw(st.lists(_tables(n), min_size=1, max_size=3))
    table = cols.interleave(parts)
    stacked = pd.concat([pd.DataFrame(p) for p in parts], ignore_index=True)
    turn = np.concatenate([np.arange(n)] * len(parts))  # each row's number within its part
    expected = stacked.iloc[np.argsort(turn, kind="stable")].reset_index(drop=True)
    pd.testing.assert_frame_equal(cols.to_frame(table), expected)

    folder = tmp_path_factory.mktemp("csv")
    # write_table gives every table a flags column (empty: nothing flagged), as DataFrame.assign would
    expected.assign(**({} if "flags" in expected else {"flags": ""})).to_csv(folder / "pandas.csv", **PANDAS_CSV)
    write_table(table, folder / "columns.csv")
    assert (folder / "columns.csv").read_bytes() == (folder / "pandas.csv").read_bytes()


def test_groups_keep_first_appearance_order():
    table = {"cluster": np.array(["little", "big", "little"], dtype=object), "power_w": np.array([1.0, 2.0, math.nan])}
    got = [(name, rows["power_w"].tolist()) for name, rows in cols.groups(table, "cluster")]
    assert got[0][0] == "little" and got[1] == ("big", [2.0])
    assert got[0][1][0] == 1.0 and math.isnan(got[0][1][1])
