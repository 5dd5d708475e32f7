"""Nothing a user gives cosim is lost: an output naming an input is refused before any work, inputs byte-identical.

Every command that writes, against every kind of input it reads: the file itself, a gem5 run file beside
or under it, a symlink and a hard link to it.  The refusals come before any reading, so the inputs here
are small real-format files (the hand-built big.LITTLE run, the bundled nvprof log).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import shutil
from pathlib import Path

import pytest
from helpers import REPO, write_biglittle_run

from cosim.cli import main

TRACES = REPO / "traces"
FIT = "--power-col=Power_A15 --events 0x11"

#: (case, argv with {names} of files in the work folder, the input that must be named)
CASES = [
    ("power stats.txt", "power m5out/stats.txt -o m5out/stats.txt", "m5out/stats.txt"),
    ("power stats.txt.gz -> config.ini", "power gz/stats.txt.gz -o gz/config.ini", "gz/config.ini"),
    ("power --config", "power m5out/stats.txt --config m5out/config.ini --plot m5out/config.ini", "m5out/config.ini"),
    ("power cosim-run.json", "power m5out/stats.txt -o m5out/cosim-run.json", "m5out/cosim-run.json"),
    ("power symlink", "power m5out/stats.txt -o link.csv", "m5out/stats.txt"),
    ("power hard link", "power m5out/stats.txt -o hard.csv", "m5out/config.ini"),
    ("power model file", "power m5out/stats.txt --model a15.json -o a15.json", "a15.json"),
    ("whatif stats.txt", "whatif m5out/stats.txt -o m5out/stats.txt", "m5out/stats.txt"),
    ("whatif --plot config", "whatif m5out/stats.txt --plot m5out/config.ini", "m5out/config.ini"),
    ("sweep run folder", "sweep runs -o runs/r1/stats.txt", "runs/r1/stats.txt"),
    ("sweep --plot", "sweep runs --plot runs/r1/config.ini", "runs/r1/config.ini"),
    ("read stats.txt", "read m5out/stats.txt -o m5out/stats.txt", "m5out/stats.txt"),
    ("read log", "read log.txt -o log.txt", "log.txt"),
    ("gpu log", "gpu log.txt -o log.txt", "log.txt"),
    ("gpu --plot", "gpu log.txt --plot log.txt", "log.txt"),
    ("gpu --breakdown", "gpu log.txt --activity act.csv --breakdown act.csv", "act.csv"),
    ("soc gpu log", "soc m5out/stats.txt --gpu log.txt -o log.txt", "log.txt"),
    ("apply measured", "apply cortex-a15-walker2017 measured.csv -o measured.csv", "measured.csv"),
    ("apply model file", "apply a15.json measured.csv -o a15.json", "a15.json"),
    ("fit measured", "fit measured.csv {FIT} -o measured.csv", "measured.csv"),
    ("fit model card", "fit card.md {FIT} -o card.json", "card.md"),
    ("fit-rail spec", "fit-rail measured.csv --spec spec.json -o spec.json", "spec.json"),
    ("roofline --stats", "roofline --platform jetson-tk1-cpu --freqs 1000 --stats m5out/stats.txt -o m5out/stats.txt", "m5out/stats.txt"),
    ("power a gem5 folder", "power m5out -o m5out/config.ini", "m5out/config.ini"),
    ("whatif the input folder itself", "whatif m5out -o m5out", "that is the input folder m5out"),
    ("explore study on its design", "explore design.toml -o design.toml", "design.toml"),
    ("kernel-fit table", "kernel-fit kernels.csv -o kernels.csv", "kernels.csv"),
    ("kernel-predict model", "kernel-predict model.json kernels.csv -o model.json", "model.json"),
]


@pytest.fixture
def work(tmp_path):
    stats = write_biglittle_run(tmp_path / "m5out")
    (tmp_path / "gz").mkdir()
    shutil.copy(stats.parent / "config.ini", tmp_path / "gz" / "config.ini")
    (tmp_path / "gz" / "stats.txt.gz").write_bytes(gzip.compress(stats.read_bytes()))
    (tmp_path / "m5out" / "cosim-run.json").write_text('{"clusters": {}}\n')
    (tmp_path / "runs").mkdir()
    shutil.copytree(tmp_path / "m5out", tmp_path / "runs" / "r1")
    os.symlink(stats, tmp_path / "link.csv")
    os.link(stats.parent / "config.ini", tmp_path / "hard.csv")
    shutil.copy(TRACES / "cosim-nvprof-dct.txt", tmp_path / "log.txt")
    shutil.copy(TRACES / "cosim-dct-activity.csv", tmp_path / "act.csv")
    shutil.copy(REPO / "models" / "cortex-a15-walker2017.json", tmp_path / "a15.json")
    (tmp_path / "measured.csv").write_text("Power A15,A15 Freq (MHz),A15 Voltage (V),0x11\n1.2,1000,1.0,8.1e8\n")
    (tmp_path / "card.md").write_text("# a model card the user wrote\n")
    (tmp_path / "spec.json").write_text('{"power_col": "Power A15", "rails": []}\n')
    (tmp_path / "design.toml").write_text('[gem5]\nconfig = "cfg.py"\n[parameters]\n"--x" = [1]\n')
    (tmp_path / "kernels.csv").write_text("benchmark,kernel,core_mhz,mem_mhz,runtime_s,power_w\nb,k,1000,1000,0.001,100\n")
    (tmp_path / "model.json").write_text("{}\n")
    return tmp_path


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def cosim_in(folder: Path, argv: str) -> tuple[int, str]:
    """``cosim ARGV`` run in ``folder``, in-process (the refusal comes before any work): exit status and stderr."""
    err = io.StringIO()
    here = Path.cwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(argv.replace("{FIT}", FIT).split())
    finally:
        os.chdir(here)
    return code, err.getvalue()


@pytest.mark.parametrize(("case", "argv", "named"), CASES, ids=[c[0] for c in CASES])
def test_an_output_naming_an_input_is_refused_and_the_input_kept(work, case, argv, named):
    before = _digests(work)
    code, stderr = cosim_in(work, argv)
    assert code == 2, stderr
    assert stderr.count("\n") == 1 and stderr.startswith("cosim: error: ")
    output = argv.split()[argv.split().index(next(o for o in ("-o", "--plot", "--breakdown") if o in argv.split())) + 1]
    assert output in stderr and named in stderr and "never writes over its inputs" in stderr, stderr
    assert _digests(work) == before


def test_an_existing_output_that_is_no_input_is_replaced(work):
    (work / "p.csv").write_text("an old table\n")
    code, stderr = cosim_in(work, "power m5out/stats.txt --model cortex-a15-walker2017 --cluster big=system.bigCluster -o p.csv")
    assert code == 0, stderr
    assert (work / "p.csv").read_text().startswith("epoch,")


# --- honest file errors: one line naming what was given and what is expected ----------------------

#: (command, argv with {bad} for the path under test)
READERS = [
    ("power", "power {bad} -o p.csv"),
    ("whatif", "whatif {bad} -o w.csv"),
    ("read", "read {bad} -o r.csv"),
    ("gpu", "gpu {bad} -o g.csv"),
    ("gpu --activity", "gpu log.txt --activity {bad} -o g.csv"),
    ("soc --gpu", "soc m5out/stats.txt --gpu {bad} -o s.csv"),
    ("apply", "apply cortex-a15-walker2017 {bad} -o a.csv"),
    ("apply model", "apply {bad} measured.csv -o a.csv"),
    ("fit", "fit {bad} --power-col=P --events 0x11 -o m.json"),
    ("kernel-eval", "kernel-eval {bad} --test-boards tx2"),
    ("power --config", "power m5out/stats.txt --config {bad} -o p.csv"),
]


def _bad_inputs(work: Path) -> dict[str, tuple[str, str]]:
    """Kind of bad path -> (the path, what the message must say)."""
    import socket

    (work / "empty.txt").write_text("")
    (work / "folder").mkdir()
    os.mkfifo(work / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(work / "sock"))
    return {
        "missing": ("nothere.txt", "no such file"),
        "folder": ("folder", "a folder, not a file"),
        "fifo": ("fifo", "named pipe (FIFO), not a regular file"),
        "device": ("/dev/zero", "character device, not a regular file"),
        "socket": ("sock", "a socket, not a regular file"),
        "empty": ("empty.txt", "empty file (0 bytes)"),
    }


#: commands whose input may be a gem5 output folder (cosim.open_run)
GEM5_RUN_COMMANDS = ("power", "whatif")


@pytest.mark.parametrize(("command", "argv"), READERS, ids=[r[0] for r in READERS])
def test_a_bad_input_path_is_named_with_its_cause(work, command, argv):
    for kind, (path, says) in _bad_inputs(work).items():
        if kind == "folder" and command in GEM5_RUN_COMMANDS:
            says = "a folder with no stats.txt, stats.txt.gz or m5stats.txt in it"  # a gem5 output folder is accepted there
        code, stderr = cosim_in(work, argv.format(bad=path))
        errors = [line for line in stderr.splitlines() if line.startswith("cosim: error:")]
        assert code == 2 and len(errors) == 1, (kind, stderr)
        assert errors[0].startswith(f"cosim: error: {path}: ") and says in errors[0], (kind, stderr)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_input_says_permission_denied(work):
    (work / "log.txt").chmod(0)
    code, stderr = cosim_in(work, "gpu log.txt -o g.csv")
    assert code == 2 and "log.txt: permission denied" in stderr, stderr


OUTPUT_ERRORS = [
    ("existing folder", "power m5out/stats.txt -o m5out", "-o m5out: an existing folder; give a file name in it"),
    ("missing folder", "power m5out/stats.txt -o nodir/p.csv", "-o nodir/p.csv: folder nodir does not exist"),
    ("device", "power m5out/stats.txt -o /dev/null", "-o /dev/null: not a regular file (a device or pipe)"),
    ("table suffix", "read log.txt -o r.txt", "-o r.txt: cosim cannot write a '.txt' file here; give a name ending in .csv, .parquet"),
    (
        "plot suffix",
        "power m5out/stats.txt --plot p.txt",
        "--plot p.txt: cosim cannot write a '.txt' file here; give a name ending in .png, .svg, .pdf",
    ),
    (
        "model suffix",
        "fit measured.csv --power-col=P --events 0x11 -o m.csv",
        "-o m.csv: cosim cannot write a '.csv' file here; give a name ending in .json",
    ),
]


@pytest.mark.parametrize(("case", "argv", "says"), OUTPUT_ERRORS, ids=[c[0] for c in OUTPUT_ERRORS])
def test_an_output_cosim_cannot_write_is_refused_before_any_work(work, case, argv, says):
    before = _digests(work)
    code, stderr = cosim_in(work, argv)
    assert code == 2 and stderr.count("\n") == 1 and says in stderr, stderr
    assert _digests(work) == before


def test_permission_denied_is_named_as_such(work, monkeypatch):
    """As root every file is readable, so the kernel's answer for a user without read permission is given here."""
    import cosim.readers.files

    monkeypatch.setattr(cosim.readers.files.os, "access", lambda path, mode: not str(path).endswith("log.txt"))
    code, stderr = cosim_in(work, "gpu log.txt -o g.csv")
    assert code == 2 and "log.txt: permission denied (not readable by you)" in stderr, stderr
