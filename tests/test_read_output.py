"""``cosim read`` without -o prints the table instead of overwriting a fixed file; exit 0 says note, never error (#53)."""

from __future__ import annotations

import io

import pandas as pd
from helpers import REPO, run_cosim

TRACE = REPO / "traces" / "cosim-nvprof-dct-gputrace.txt"
GPGPUSIM = REPO / "tests" / "data" / "gpu" / "gpgpusim-3.2-gtx480-backprop.log"  # kernel blocks at lines 26 and 88


def test_without_o_the_table_is_printed_and_no_file_is_written(tmp_path):
    printed = run_cosim("read", TRACE, cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    assert list(tmp_path.iterdir()) == []  # no ./cosim-read.csv, overwritten at every call as before
    written = run_cosim("read", TRACE, "-o", tmp_path / "t.csv")
    assert written.returncode == 0, written.stderr
    table = pd.read_csv(io.StringIO(printed.stdout))
    pd.testing.assert_frame_equal(table, pd.read_csv(tmp_path / "t.csv"))
    # the summary: on stderr when the table is the output, on stdout beside a file
    assert printed.stderr.strip().endswith("-> standard output") and written.stdout.strip().endswith(f"-> {tmp_path / 't.csv'}")
    assert len(table) == int(written.stdout.split(", ")[1].split(" ")[0])  # "N value(s)": every row printed


def test_a_cut_off_input_is_an_error_at_exit_3_and_a_note_with_allow_partial(tmp_path):
    cut = tmp_path / "run.log"
    cut.write_text("".join(GPGPUSIM.read_text().splitlines(keepends=True)[:120]))  # cut inside its second kernel block
    strict = run_cosim("read", cut, "-o", tmp_path / "a.csv")
    assert strict.returncode == 3 and strict.stderr.startswith("cosim: error: ") and "cut off" in strict.stderr
    allowed = run_cosim("read", cut, "-o", tmp_path / "b.csv", "--allow-partial")
    assert allowed.returncode == 0 and allowed.stderr.startswith("cosim: note: ") and "error" not in allowed.stderr
    assert allowed.stderr.split(": ", 2)[2] == strict.stderr.split(": ", 2)[2]  # the same message, as a note
