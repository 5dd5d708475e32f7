"""gem5 stats.txt reader: every real run in ../shared, and each way a file can be bad."""

from __future__ import annotations

import math
import shutil
import warnings

import numpy as np
import pytest
from helpers import BEGIN, END, GEM5_RUNS, REPO, gem5_dump, needs_shared, run_cosim, write_stats
from hypothesis import given, settings
from hypothesis import strategies as st

from cosim import CosimError, CosimWarning, read_stats, stats_meta
from cosim.readers import gem5_stats

REAL_RUNS = sorted(p.name for p in GEM5_RUNS.glob("*") if (p / "stats.txt").exists() and p.stat().st_size) if GEM5_RUNS.is_dir() else []


def _begin_markers(path) -> int:
    return sum(line.startswith(BEGIN[:38]) for line in path.read_text().splitlines())


@needs_shared
@pytest.mark.parametrize("run", [r for r in REAL_RUNS if (GEM5_RUNS / r / "stats.txt").stat().st_size > 0])
def test_every_real_run_parses_one_row_per_dump(run):
    path = GEM5_RUNS / run / "stats.txt"
    with warnings.catch_warnings():
        warnings.simplefilter("error", CosimWarning)  # a real run must parse cleanly
        df = read_stats(path)
    assert len(df) == _begin_markers(path)
    assert stats_meta(df).dumps_in_file == len(df)
    assert (df["duration_s"] > 0).all()
    assert list(df["epoch"]) == list(range(len(df)))


@needs_shared
def test_known_values_old_names_28_dumps_with_nan():
    df = read_stats(GEM5_RUNS / "public-old2016-null-dram-lowp-28dumps" / "stats.txt")
    assert stats_meta(df).generation == "pre-v20.1"
    assert len(df) == 28
    stats = df.drop(columns=["epoch", "start_tick", "end_tick", "duration_s"])
    assert int(stats.isna().to_numpy().sum()) == 772  # README: 772 nan
    # periodic dumps of 250 us, then the 50 us left when the simulation ended
    assert np.allclose(df["duration_s"].iloc[:-1], 250e-6)
    assert df["duration_s"].iloc[-1] == pytest.approx(50e-6)
    assert (df["start_tick"].iloc[1:].to_numpy() == df["end_tick"].iloc[:-1].to_numpy()).all()


@needs_shared
def test_known_values_new_names_and_inf():
    df = read_stats(GEM5_RUNS / "public-new-2022-arm-se-minor-starterse-cpucluster" / "stats.txt")
    assert stats_meta(df).generation == "v20.1+"
    assert df["system.cpu_cluster.clk_domain.clock"].iloc[0] == 250  # 4 GHz at 1e12 ticks/s
    assert np.isinf(df.to_numpy(dtype=float)).sum() == 2
    assert df["simTicks"].iloc[0] == 24321000
    assert df["duration_s"].iloc[0] == pytest.approx(24321000 / 1e12)


@needs_shared
def test_known_values_v24_first_dump_rounds_to_zero_seconds():
    df = read_stats(GEM5_RUNS / "public-new-v24-x86-simpoint-2dumps" / "stats.txt")
    assert df["simSeconds"].iloc[0] == 0.0  # printed as 0.000000
    assert df["duration_s"].iloc[0] == pytest.approx(72927 / 1e12)  # from ticks, not simSeconds
    assert df["finalTick"].iloc[1] != df["simTicks"].iloc[1]
    assert df["start_tick"].iloc[1] == 72927 and df["end_tick"].iloc[1] == 323523486
    assert "board.cache_hierarchy.l1d-cache-0.overallAccesses::total" in df.columns  # hyphens in names


@needs_shared
def test_known_values_2012_no_value_and_inf():
    df = read_stats(GEM5_RUNS / "public-old2012-arm32-fs-o3-dual" / "stats.txt")
    values = df.drop(columns=["epoch", "start_tick", "end_tick", "duration_s"]).to_numpy(dtype=float)
    assert np.isnan(values).sum() == 43  # no_value
    assert np.isinf(values).sum() == 99
    assert df["sim_ticks"].iloc[0] == 2582494395500


@needs_shared
def test_empty_real_stats_file_is_a_one_line_error():
    with pytest.raises(CosimError, match="empty file") as err:
        read_stats(GEM5_RUNS / "public-ext2019-empty-stats" / "stats.txt")
    assert "\n" not in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(CosimError, match="no such file"):
        read_stats(tmp_path / "nope.txt")


def test_text_without_dumps(tmp_path):
    (tmp_path / "s.txt").write_text("hello\nworld\n")
    with pytest.raises(CosimError, match="Begin Simulation Statistics"):
        read_stats(tmp_path / "s.txt")


def _dump(i: int, **extra) -> dict:
    return {
        "simSeconds": 0.001,
        "simTicks": 10**9,
        "finalTick": 10**9 * (i + 1),
        "simFreq": 1e12,
        "system.cpu.numCycles": 1000 * (i + 1),
        **extra,
    }


def test_stat_missing_from_one_dump_is_zero_there(tmp_path):
    path = write_stats(tmp_path / "s.txt", [_dump(0, **{"system.cpu.x": 5}), _dump(1), _dump(2, **{"system.cpu.x": 7})])
    df = read_stats(path)
    assert df["system.cpu.x"].tolist() == [5, 0, 7]


def test_marker_with_message_suffix(tmp_path):
    path = write_stats(tmp_path / "s.txt", [_dump(0), _dump(1)], begin_suffix=": periodic dump")
    assert len(read_stats(path)) == 2


def test_truncated_last_dump_keeps_complete_dumps(tmp_path):
    text = "".join(gem5_dump(_dump(i)) for i in range(3))
    cut = text[: text.rindex("system.cpu.numCycles") + 10]  # killed while writing dump 2
    (tmp_path / "s.txt").write_text(cut)
    with pytest.warns(CosimWarning, match=r"s.txt:\d+: dump 2: last dump is truncated"):
        df = read_stats(tmp_path / "s.txt")
    assert df["epoch"].tolist() == [0, 1]
    meta = stats_meta(df)
    assert meta.dumps_in_file == 3 and [d.dump for d in meta.dropped] == [2]
    assert meta.dropped[0].line == cut.count("\n", 0, cut.rindex(BEGIN)) + 1


def test_garbage_line_drops_only_its_dump(tmp_path):
    text = (
        gem5_dump(_dump(0))
        + gem5_dump(_dump(1)).replace("system.cpu.numCycles", "this is not a stat\nsystem.cpu.numCycles")
        + gem5_dump(_dump(2))
    )
    (tmp_path / "s.txt").write_text(text)
    bad_line = text.splitlines().index("this is not a stat") + 1
    with pytest.warns(CosimWarning, match=rf"s.txt:{bad_line}: dump 1: unreadable line 'this is not a stat'"):
        df = read_stats(tmp_path / "s.txt")
    assert df["epoch"].tolist() == [0, 2]
    assert df["system.cpu.numCycles"].tolist() == [1000, 3000]


def test_dump_without_end_marker_followed_by_another(tmp_path):
    text = gem5_dump(_dump(0)).replace(END, "") + gem5_dump(_dump(1))
    (tmp_path / "s.txt").write_text(text)
    with pytest.warns(CosimWarning, match="dump 0: dump has no End marker"):
        df = read_stats(tmp_path / "s.txt")
    assert df["epoch"].tolist() == [1]


def test_no_complete_dump_is_an_error(tmp_path):
    (tmp_path / "s.txt").write_text("\n" + BEGIN + "\nsimTicks 5\n")
    with pytest.raises(CosimError, match="no complete stats dump"), pytest.warns(CosimWarning):
        read_stats(tmp_path / "s.txt")


def test_filtered_parse_equals_full_parse(tmp_path):
    dumps = [_dump(i, **{f"system.cpu.s{j}": i * 100 + j for j in range(50)}) for i in range(4)]
    path = write_stats(tmp_path / "s.txt", dumps)
    full = read_stats(path)
    part = read_stats(path, stats=["system.cpu.s7", "system.cpu.s33"])
    assert set(part.columns) >= {"system.cpu.s7", "system.cpu.s33", "simTicks", "duration_s"}
    assert "system.cpu.s8" not in part.columns
    assert part["system.cpu.s33"].tolist() == full["system.cpu.s33"].tolist() == [33, 133, 233, 333]


def test_chunk_boundaries_do_not_matter(tmp_path, monkeypatch):
    dumps = [_dump(i, **{f"system.cpu.s{j}": j for j in range(30)}) for i in range(20)]
    path = write_stats(tmp_path / "s.txt", dumps)
    expected = read_stats(path)
    for chunk in (7, 64, 333):  # markers and lines split across reads
        monkeypatch.setattr(gem5_stats, "_CHUNK_BYTES", chunk)
        got = read_stats(path)
        assert got.drop(columns=[]).equals(expected)


def test_real_dumps_longer_than_a_read_give_the_same_table(monkeypatch):
    """The bundled run's 450 KB dumps read in 100 KB pieces: every dump is rescanned and the buffer grows."""
    path = REPO / "traces" / "cosim-v24-se-biglittle-1800-1400MHz" / "stats.txt.gz"
    expected = read_stats(path)
    monkeypatch.setattr(gem5_stats, "_CHUNK_BYTES", 100_000)
    got = read_stats(path)
    assert len(got) == 47 and got.equals(expected)


def test_input_file_is_not_modified(tmp_path):
    path = write_stats(tmp_path / "s.txt", [_dump(0)])
    before = path.read_bytes(), path.stat().st_mtime_ns
    read_stats(path)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


# --- the C scanner and the pure-Python fallback must agree ---------------------------------

_names = st.text(alphabet=st.sampled_from("abcxyz.:_-0123456789"), min_size=1, max_size=30)
_values = st.one_of(
    st.integers(-(10**18), 10**18).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda v: f"{v:.6f}"),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(
        [
            "nan",
            "-nan",
            "inf",
            "-inf",
            "no_value",
            "<err:",
            "<err",
            "NaN",
            "1e5",
            "1.",
            ".5",
            "+3",
            "1e",
            "--1",
            "0x10",
            "1_0",
            "abc",
            "1.2.3",
            "∞",
        ]
    ),
)
_lines = st.lists(
    st.one_of(
        st.tuples(_names, _values).map(lambda t: f"{t[0]:<40} {t[1]:>12}     # desc (Count)"),
        st.tuples(_names, _values).map(lambda t: f"{t[0]} {t[1]} 12.5% 50.0%"),
        st.sampled_from(
            [
                "",
                "   ",
                "\t",
                "lonely_name",
                "  indented 5",
                "name\tnan\r",
                "system.ruby.latency_hist |   4 100.00% 100.00% |   0 0.00% 100.00%",
                "system.ruby.load_waiting [binsize: 1 max: 3 count: 5 average: 1.2 | 0 4 1 ]",
                "system.cpu.commit.COM:committed_per_cycle.start_dist   # Number of insts",
                "system.cpu.commit.COM:committed_per_cycle.end_dist",
                "            0      123   12.30%",
                "---------- End Simulation Statistics   ----------",
                "---------- Begin Simulation Statistics ----------",
                "---------- Other ----------",
                "---------- End Simul",
            ]
        ),
    ),
    max_size=40,
)


@pytest.mark.skipif(gem5_stats._scan_block_c is None, reason="C scanner not built")
@settings(max_examples=300, deadline=None)
@given(lines=_lines, want_some=st.booleans(), skip=st.integers(0, 3), stale=st.sampled_from([b"", b"x 1\n", b"\n" + BEGIN.encode()]))
def test_c_and_python_scanners_agree(lines, want_some, skip, stale):
    block = "\n".join(lines).encode()  # the last line has no newline: both leave it for the next read
    start = len("\n".join(lines[:skip]).encode()) + (0 < skip < len(lines))  # a line start
    wanted = {ln.split()[0] for ln in lines[::2] if ln.split()} if want_some else None
    buf, end = bytearray(block + stale), len(block)  # bytes after `end` are stale: neither may read them
    c_names, c_values, c_bad, c_stop = gem5_stats._scan_block_c(buf, wanted, None, start, end)
    p_names, p_values, p_bad, p_stop = gem5_stats._scan_block_py(buf, wanted, None, start, end)
    assert (c_names, c_values, c_bad, c_stop) == gem5_stats._scan_block_c(block, wanted, None, start)  # stale bytes unread
    assert (c_bad, c_stop) == (p_bad, p_stop)
    assert c_names == p_names
    c = np.frombuffer(c_values)
    p = np.frombuffer(p_values)
    assert np.array_equal(c, p, equal_nan=True)


@pytest.mark.skipif(gem5_stats._scan_block_c is None, reason="C scanner not built")
def test_c_scanner_reuses_previous_names():
    block = b"a 1\nb 2\n"
    names, _, _, _ = gem5_stats._scan_block_c(block, None, None)
    again, values, _, _ = gem5_stats._scan_block_c(b"a 3\nb 4\n", None, names)
    assert again is names and np.frombuffer(values).tolist() == [3.0, 4.0]


def test_python_scanner_reads_real_formats():
    block = (
        b"system.cpu.ipc                               0.051684                       # IPC ((Count/Cycle))\n"
        b"system.l2c.avg_blocked_cycles::no_mshrs      no_value                       # average\n"
        b"system.cpu.committedInstType_0::IntAlu         3789     64.95%     64.95% # Class\n"
        b"sim_seconds                                  0.000250                      \n"
        b"system.cpu.dcache.avg_blocked_cycles_no_mshrs <err: div-0>                  # average number of cycles each access was blocked\n"
    )
    names, values, bad, stop = gem5_stats._scan_block_py(block, None)
    assert bad == -1 and stop == -1 and len(names) == 5
    got = np.frombuffer(values)
    assert got[0] == 0.051684 and math.isnan(got[1]) and got[2] == 3789 and got[3] == 0.00025 and math.isnan(got[4])


def test_installed_package_has_the_c_scanner():
    """CI installs cosim from source on a machine with a compiler: the fast scanner must be there."""
    import os

    if os.environ.get("CI") and gem5_stats._scan_block_c is None:
        pytest.fail("cosim was installed without its C stats scanner (no compiler at install time?)")
    if gem5_stats._scan_block_c is None:
        pytest.skip("C scanner not built; the pure-Python scanner is in use")


# --- lines that hold no scalar, and broken dump structure, as real files have them --------------------------

_ODD = """
---------- Begin Simulation Statistics ----------
sim_seconds                                  0.000100                       # Number of seconds simulated
sim_ticks                                   100000000                       # Number of ticks simulated
system.cpu.commit.COM:committed_per_cycle.start_dist                     # Number of insts commited each cycle
system.cpu.commit.COM:committed_per_cycle.samples       1000
                               0          123   12.30%
                               1          456   45.60%
system.cpu.commit.COM:committed_per_cycle.end_dist

system.ruby.miss_latency_hist::bucket_size           64
system.ruby.miss_latency_hist           |        4 100.00% 100.00% |           0   0.00% 100.00%
system.cpu.numCycles 5
system.cpu.numCycles 7
---------- End Simulation Statistics   ----------
---------- End Simulation Statistics   ----------

---------- Begin Simulation Statistics ----------
sim_seconds                                  0.000000
sim_ticks                                   0
---------- End Simulation Statistics   ----------

---------- Begin Simulation Statistics ----------
sim_seconds                                  0.000100
sim_ticks                                   -100
---------- End Simulation Statistics   ----------
"""


@pytest.mark.parametrize("scanner", ["c", "python"])
def test_odd_lines_are_skipped_and_odd_structure_reported(tmp_path, monkeypatch, scanner):
    if scanner == "python":
        monkeypatch.setattr(gem5_stats, "_scan_block_c", None)
    elif gem5_stats._scan_block_c is None:
        pytest.skip("C scanner not built")
    path = tmp_path / "stats.txt"
    path.write_text(_ODD)
    with pytest.warns(CosimWarning) as seen:
        df = read_stats(path)
    messages = [str(w.message) for w in seen]
    # M5 distributions and Ruby histograms hold no scalar: skipped, and the rest of the dump is kept
    assert len(df) == 1 and df["system.cpu.commit.COM:committed_per_cycle.samples"][0] == 1000
    assert not any(c.strip().isdigit() for c in df.columns)
    assert any(":14: dump 0: stat system.cpu.numCycles appears again (first at line 13)" in m for m in messages)
    assert df["system.cpu.numCycles"][0] == 7
    assert any(":16: End marker without a Begin marker" in m for m in messages)
    assert any(":20: dump 1: sim_ticks is 0" in m for m in messages)  # covers no time: skipped, not an error
    assert any(":25: dump 2: sim_ticks is -100" in m for m in messages)
    meta = df.attrs["gem5"]
    assert [d.dump for d in meta.dropped] == [2] and meta.dumps_in_file == 3


def test_missing_c_scanner_is_said_once(tmp_path, monkeypatch):
    monkeypatch.setattr(gem5_stats, "_scan_block_c", None)
    monkeypatch.setattr(gem5_stats, "_warned_slow", False)
    path = tmp_path / "stats.txt"
    path.write_text(gem5_dump({"sim_ticks": 1000, "simFreq": 1e12, "system.cpu.numCycles": 5}))
    with pytest.warns(CosimWarning, match="C line scanner was not built .* reinstall cosim"):
        read_stats(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_stats(path)  # the second file is read without saying it again


@needs_shared
def test_m5_err_values_are_missing_so_the_isa_check_is_reached(tmp_path):
    """M5 (2008) printed a failed formula as '<err: div-0>'; such a dump used to be dropped as unreadable, so an Alpha
    run was refused for the wrong reason.  A real 2012 run with M5's value and Alpha objects: read, then refused by ISA."""
    from test_cli import assert_one_line_error, cosim

    src = GEM5_RUNS / "public-old2012-arm32-fs-o3-dual"
    run = tmp_path / "m5"
    run.mkdir()
    (run / "config.ini").write_text(
        (src / "config.ini").read_text().replace("=LinuxArmSystem", "=LinuxAlphaSystem").replace("=ArmTLB", "=AlphaTLB")
    )
    text = (src / "stats.txt").read_text()
    line = "system.l2c.avg_blocked_cycles::no_mshrs      no_value"
    assert line in text
    (run / "stats.txt").write_text(text.replace(line, "system.l2c.avg_blocked_cycles::no_mshrs      <err: div-0>"))
    stats = read_stats(run / "stats.txt")
    assert len(stats) == 1 and np.isnan(stats["system.l2c.avg_blocked_cycles::no_mshrs"][0])
    result = cosim("power", run / "stats.txt", "--model", "cortex-a15-walker2017", "-o", tmp_path / "p.csv")
    assert_one_line_error(result, "the run is ALPHA but cortex-a15-walker2017 was trained on ARM cores")


DEMO_GZ = REPO / "traces" / "cosim-v24-se-biglittle-1800-1400MHz" / "stats.txt.gz"  # real gem5 v24, 47 dumps


def _cut_both_ways(folder, n_bytes: int):
    """The real stats.txt.gz cut after ``n_bytes``, and the plain text it still inflates to, cut the same way."""
    import zlib

    folder.mkdir(exist_ok=True)
    data = DEMO_GZ.read_bytes()[:n_bytes]
    (folder / "stats.txt.gz").write_bytes(data)
    (folder / "stats.txt").write_bytes(zlib.decompressobj(wbits=31).decompress(data))
    return folder / "stats.txt.gz", folder / "stats.txt"


def _read(path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            df = read_stats(path)
        except CosimError as err:
            return None, str(err).replace(str(path), "PATH"), [str(w.message).replace(str(path), "PATH") for w in caught]
    return df, stats_meta(df).dropped, [str(w.message).replace(str(path), "PATH") for w in caught]


@settings(max_examples=12, deadline=None)
@given(cut=st.integers(1_000, 420_000))  # from where the cut file inflates to some text
def test_a_cut_gzip_keeps_its_complete_dumps_as_a_cut_plain_file_does(tmp_path_factory, cut):
    gz, plain = _cut_both_ways(tmp_path_factory.mktemp("cut"), cut)
    (a, a_why, a_warn), (b, b_why, b_warn) = _read(gz), _read(plain)
    assert a_why == b_why and a_warn == b_warn
    if a is not None:
        assert a.equals(b) and 0 < len(a) < 47


@pytest.mark.parametrize("cut", [60_000, 100_000, 700_000, 1_500_000])
def test_a_cut_gzip_on_the_command_line(tmp_path, cut):
    gz, plain = _cut_both_ways(tmp_path / "run", cut)
    shutil.copy(DEMO_GZ.parent / "config.ini", tmp_path / "run")
    outcome = [run_cosim("power", path, "-o", tmp_path / f"{path.name}.csv") for path in (gz, plain)]
    assert outcome[0].returncode == outcome[1].returncode == 3  # the complete dumps written, the cut one said
    said = [r.stderr.replace(p.name, "FILE") for r, p in zip(outcome, (gz, plain), strict=True)]
    assert said[0] == said[1] and "last dump is truncated (gem5 killed mid-dump?); every complete dump was kept" in said[0]
    assert (tmp_path / "stats.txt.gz.csv").read_bytes() == (tmp_path / "stats.txt.csv").read_bytes()


@pytest.mark.parametrize("where", [0.3, 0.6, 0.9])
def test_a_gzip_damaged_in_the_middle_is_still_refused(tmp_path, where):
    data = bytearray(DEMO_GZ.read_bytes())
    i = int(len(data) * where)
    data[i : i + 16] = bytes(b ^ 0x5A for b in data[i : i + 16])  # bad deflate data or a bad CRC, never a clean cut
    (tmp_path / "stats.txt.gz").write_bytes(data)
    with pytest.raises(CosimError, match="the gzip stream is damaged .*re-copy the file"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read_stats(tmp_path / "stats.txt.gz")


def test_no_complete_dump_does_not_claim_complete_dumps_were_kept(tmp_path):
    gz, plain = _cut_both_ways(tmp_path / "run", 20_000)  # inside dump 0
    for path in (gz, plain):
        with pytest.raises(CosimError) as err, pytest.warns(CosimWarning, match="dump 0: last dump is truncated"):
            read_stats(path)
        assert "no complete stats dump could be read" in str(err.value) and "kept" not in str(err.value)


# --- a stats file is used only as far as it is understood (issue 51) --------------------------------------

M5_RUN = REPO / "tests" / "data" / "m5-2008-o3"  # hand-written in M5's 2008 format (m5stats.txt, clock= per CPU)


@pytest.mark.parametrize("scanner", ["c", "python"])
def test_m5_distribution_rows_are_read_as_the_distribution(monkeypatch, scanner):
    """M5 printed issued-by-FU-type counts as a distribution: its buckets are <dist>::<bucket>, no top-level stat."""
    if scanner == "python":
        monkeypatch.setattr(gem5_stats, "_scan_block_c", None)
        monkeypatch.setattr(gem5_stats, "_warned_slow", True)  # its once-a-process note is another test's (an error here)
    elif gem5_stats._scan_block_c is None:
        pytest.skip("C scanner not built")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CosimWarning)  # no "appears again": the two distributions' buckets differ
        df = read_stats(M5_RUN / "m5stats.txt")
    fu = "system.cpu.iq.ISSUE:FU_type_0"
    assert df[f"{fu}::IntAlu"][0] == 16051 and df[f"{fu}::MemRead"][0] == 5870  # the file's own numbers
    assert df["system.cpu.iq.ISSUE:fu_full::IntAlu"][0] == 0
    assert df["system.cpu.commit.COM:committed_per_cycle::0"][0] == 38100
    assert df["system.cpu.commit.COM:committed_per_cycle.samples"][0] == 50040
    assert "IntAlu" not in df.columns and not any(c.split("::")[0].strip().isdigit() for c in df.columns)


def test_m5_run_is_priced_from_its_fu_distribution(tmp_path):
    result = run_cosim("power", M5_RUN, "-o", tmp_path / "p.csv")
    assert result.returncode == 0, result.stderr
    assert "subst:0x73" in result.stdout and "are the stats from a gem5" not in result.stderr
    assert "absent_zero" not in result.stdout  # M5's caches print overall_accesses with no ::total: counted, not 0


def _one_cpu_dump(cycles: float) -> dict[str, float]:
    return {"simSeconds": 0.000001, "simTicks": 1_000_000, "system.cpu.numCycles": cycles}


def _cut_after_dump(tmp_path, tail: bytes):
    path = write_stats(tmp_path / "stats.txt", [_one_cpu_dump(1000) for _ in range(3)])
    path.write_bytes(path.read_bytes() + tail)
    return path


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("tail", [b"\0" * 5000, b"some text\nsystem.cpu.numCycles 5\n", b"----------  not a marker\n"])
def test_bytes_after_the_last_dump_are_a_reported_loss(tmp_path, tail, gz):
    import gzip

    from cosim.errors import CutOffWarning

    path = _cut_after_dump(tmp_path, tail)
    if gz:  # gem5's --stats-file=stats.txt.gz: the same loss, found as the stream inflates
        path = path.rename(path.with_suffix(".txt.gz"))
        path.write_bytes(gzip.compress(path.read_bytes()))
    with pytest.warns(CutOffWarning, match=rf"{len(tail)} byte\(s\) after the last complete dump \(dump 2\).*--allow-partial"):
        df = read_stats(path)
    assert len(df) == 3


def test_blank_lines_after_the_last_dump_are_no_loss(tmp_path):
    path = _cut_after_dump(tmp_path, b"\n\n  \n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CosimWarning)
        assert len(read_stats(path)) == 3


@pytest.mark.parametrize("which", [[1], [0, 1, 2]])
def test_a_negative_counter_in_any_dump_is_refused_naming_stat_and_dump(tmp_path, which):
    dumps = [_one_cpu_dump(-1000 if i in which else 1000) for i in range(3)]
    path = write_stats(tmp_path / "stats.txt", dumps)
    with pytest.raises(CosimError, match=rf"dump {which[0]}: counter system.cpu.numCycles is -1000"):
        gem5_stats.read_stats_table(path, stats={"system.cpu.numCycles"})


def test_zero_bytes_inside_a_dump_drop_that_dump_never_read_as_zeros(tmp_path):
    """A hole of zero bytes inside a dump (a crash with delayed allocation) joins two lines and loses the ones between:
    read, those stats would be 0 in that dump (the independent campaign found 8 % less energy at exit 0 with
    --allow-partial).  The dump is dropped and said, naming its line; the others are read as before."""
    import gzip

    src = REPO / "tests" / "data" / "gem5-minor-sleep-1000MHz" / "stats.txt.gz"
    data = bytearray(gzip.decompress(src.read_bytes()))
    at = 0
    for _ in range(5):  # the fifth dump's Begin line
        at = data.index(BEGIN.encode(), at) + 1
    hole = data.index(b"\n", at + 2000) + 10  # inside a line of dump 4
    data[hole : hole + 4096] = bytes(4096)
    (tmp_path / "stats.txt").write_bytes(bytes(data))
    whole = read_stats(src)
    with pytest.warns(CosimWarning, match=r"stats.txt:\d+: dump 4: zero bytes inside the dump"):
        holed = read_stats(tmp_path / "stats.txt")
    assert list(holed["epoch"]) == [e for e in whole["epoch"] if e != 4]
    assert [d.dump for d in stats_meta(holed).dropped] == [4]
