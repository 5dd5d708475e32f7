"""The what-if checked on a workload suite: every program of tests/workloads run in the bundled gem5 at several
big/LITTLE clock pairs, and every run predicting every other run of its program.

    python tests/whatif_suite.py record [--jobs 2] [--cores 1 2] [--dumps epoch one] [PROGRAM...]
        runs gem5 (nice 10) and keeps each run's stats.txt.gz (the stats cosim reads) and config.ini under
        tests/data/whatif_suite/PROGRAM/CORES-DUMPS/BIG_LITTLE/
    python tests/whatif_suite.py record --se [--jobs 2] [PROGRAM...]
        the se-one set-up: gem5's own se.py (one O3 CPU, --caches --l2cache, one dump at exit) at 1000, 1400,
        1800 and 2000 MHz (its default), under tests/data/whatif_suite/PROGRAM/se-one/MHZ/; phases is gem5's
    python tests/whatif_suite.py record --se-minor [--jobs 2] [PROGRAM...]
        the se-minor set-up: the same with one Minor CPU at 600, 1000 and 1400 MHz (the A7 model's top trained
        clock), under tests/data/whatif_suite/PROGRAM/se-minor/MHZ/
    python tests/whatif_suite.py record --apart [--jobs 2] [PROGRAM...]
        the 1c-apart set-up: 1+1 cores, 100 us dumps, the clusters' clocks moved apart (1800/600 and 1000/1400 MHz),
        under tests/data/whatif_suite/PROGRAM/1c-apart/BIG_LITTLE/; its pairs run from and to the 1c-epoch runs
    python tests/whatif_suite.py table [--setup 1c-epoch] [--set calibration|test] [--csv OUT]
        predicts every ordered pair of the recorded runs and prints the errors [%] per cluster and in total,
        with the interval each prediction carries and whether it covers gem5; then, per set-up, the interval's
        coverage and mean half-width [%] (--set: on those programs only)
    python tests/whatif_suite.py calibrate [--write]
        sets the interval's constants on the calibration pool alone (the suite's calibration programs, and from
        ../shared the xu3-mibench-train and cosim-v24 runs; tests/whatif_calibrate.py) and prints them; --write puts
        them in cosim/dse/interval_bands.json
    python tests/whatif_suite.py score [--write]
        per set-up, pairs within 5 % and the interval's coverage and mean half-width [%], each pair scored by
        constants it did not set: the suite's test programs by the shipped ones, the pool's programs and the
        explore grid leaving their program out; --write: into docs/explanation/whatif-score.json, which whatif.md
        shows (rendered at docs build)

The recorded runs are test data: tests/test_whatif_suite.py checks the table without gem5.
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
GEM5 = HERE.parent.parent / "shared" / "tools" / "gem5"
WORKLOADS = HERE / "workloads"
RUNS = HERE / "data" / "whatif_suite"
# program -> size argument: each runs a few to ~20 CPU seconds of gem5 at the slowest pair on 1+1 cores
PROGRAMS = {
    "int_compute": 5,
    "fp_compute": 5,
    "branchy": 10,
    "stream": 5,
    "random_mlp": 20,
    "ptrchase": 20,
    "l2_fit": 25,
    "mixed": 5,
    "phases": 2,  # the bundled gem5's own program: its big cluster crosses gem5's store-miss switch at 1800 MHz
}
# the interval's bands are set on the calibration programs' pairs and scored on the test programs' (no program in both):
# each kind of program on both sides (compute: int_compute, branchy | fp_compute; bandwidth: stream | l2_fit; latency:
# ptrchase | random_mlp; phases of both: gem5's phases, whose store-miss switch the whole-line reading was read from)
CALIBRATION = ("int_compute", "branchy", "stream", "ptrchase", "phases")
TEST = ("fp_compute", "l2_fit", "random_mlp")
# in neither set: a mechanism of the what-if was worked out on it (a Minor CPU's store floor, from mixed's next_idx loop:
# tests/test_whatif_suite.py, whatif.md), so no figure is scored on it; its pairs are still predicted and listed
DESIGN = ("mixed",)
SETUPS = ("1c-epoch", "1c-one", "2c-epoch", "2c-one", "1c-apart", "se-one", "se-minor")
PAIRS = ((1800, 1400), (1400, 1000), (1000, 600))  # big/LITTLE [MHz]
# the 1c-apart set-up: the clusters' clocks moved apart (one up, the other down), as a DVFS grid or a study's --dvfs
# rows price them; predicted from and to the 1c-epoch runs
APART_PAIRS = ((1800, 600), (1000, 1400))  # big/LITTLE [MHz]
DUMPS = {"epoch": "100us", "one": None}
# the se-one set-up: gem5's deprecated example se.py as a user runs it first, its 2 GHz default among the clocks
SE_CLOCKS = (1000, 1400, 1800, 2000)  # [MHz]
SE_PROGRAMS = {**PROGRAMS, "phases": 1}  # phases at size 1 on se.py's one CPU (2 on big.LITTLE)
SE_CLUSTERS = (("cpu", "system.cpu", "cortex-a15-gemstone2018"),)  # what cosim picks for an O3 CPU with no --model
# the se-minor set-up: se.py with its in-order CPU, what a Minor user runs first
SE_MINOR_CLOCKS = (600, 1000, 1400)  # [MHz]
SE_MINOR_CLUSTERS = (("cpu", "system.cpu", "cortex-a7-gemstone2018"),)  # what cosim picks for a Minor CPU


def binary(program: str) -> Path:
    """The program's AArch64 binary: the suite's, or the bundled gem5's own phases."""
    return GEM5 / "workloads" / "phases.aarch64" if program == "phases" else WORKLOADS / f"{program}.aarch64"


def run_dir(program: str, cores: int, dumps: str, big: int, little: int) -> Path:
    setup = "1c-apart" if (big, little) in APART_PAIRS else f"{cores}c-{dumps}"
    return RUNS / program / setup / f"{big}_{little}"


def record_one(program: str, cores: int, dumps: str, big: int, little: int) -> str:
    out = run_dir(program, cores, dumps, big, little)
    if (out / "stats.txt.gz").exists():
        return f"{out.relative_to(RUNS)}: kept"
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["nice", "-n", "10", str(GEM5 / "gem5"), "-q", f"--outdir={tmp}", str(GEM5 / "workloads" / "se_biglittle.py")]
        cmd += [f"--big-freq={big}MHz", f"--little-freq={little}MHz", f"--big-cores={cores}", f"--little-cores={cores}"]
        # one dump: gem5's default, a single dump at exit (an epoch longer than any run, so nothing periodic fires)
        cmd += [f"--epoch={DUMPS[dumps] or '1s'}", "--", str(binary(program)), str(PROGRAMS[program])]
        before = os.times()
        subprocess.run(cmd, check=True, capture_output=True)
        after = os.times()
        out.mkdir(parents=True, exist_ok=True)
        (out / "config.ini").write_text((Path(tmp) / "config.ini").read_text())
        slim(Path(tmp) / "stats.txt", out)
    cpu_s = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return f"{out.relative_to(RUNS)}: {cpu_s:.1f} CPU s"


def record_se(program: str, mhz: int, cpu: str = "O3CPU") -> str:
    setup, clusters = ("se-one", SE_CLUSTERS) if cpu == "O3CPU" else ("se-minor", SE_MINOR_CLUSTERS)
    out = RUNS / program / setup / str(mhz)
    if (out / "stats.txt.gz").exists():
        return f"{out.relative_to(RUNS)}: kept"
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["nice", "-n", "10", str(GEM5 / "gem5"), "-q", f"--outdir={tmp}"]
        cmd += [str(GEM5 / "configs" / "deprecated" / "example" / "se.py"), f"--cpu-type={cpu}", "--caches", "--l2cache"]
        cmd += [f"--cpu-clock={mhz}MHz", "-c", str(binary(program)), "-o", str(SE_PROGRAMS[program])]
        subprocess.run(cmd, check=True, capture_output=True)
        out.mkdir(parents=True, exist_ok=True)
        (out / "config.ini").write_text((Path(tmp) / "config.ini").read_text())
        slim(Path(tmp) / "stats.txt", out, clusters=clusters)
    return f"{out.relative_to(RUNS)}: recorded"


def slim(stats: Path, out: Path, clusters=None) -> None:
    """Write ``out/stats.txt.gz`` with the lines cosim reads from this run: the dump markers, the simulation totals,
    and every stat the power timeline and the what-if read for the two clusters (about 1/30 of gem5's file)."""
    from whatif_pairs import CLUSTERS  # noqa: PLC0415  (needs cosim)

    from cosim import ClusterSpec, load_model, read_config  # noqa: PLC0415
    from cosim.dse.whatif import whatif_stats  # noqa: PLC0415
    from cosim.timeline.clusters import stats_needed  # noqa: PLC0415

    config = read_config(out / "config.ini")
    specs = [ClusterSpec(n, p, load_model(m)) for n, p, m in clusters or CLUSTERS]
    wanted = whatif_stats(config, specs) | stats_needed(config, specs)
    opener = gzip.open if stats.suffix == ".gz" else open
    with opener(stats, "rt") as src:
        lines = [
            line
            for line in src
            if not line.strip()
            or line.startswith("-")
            or (name := line.split(None, 1)[0]) in wanted
            or not name.startswith("system.")
            or "clk_domain" in name
        ]
    with gzip.open(out / "stats.txt.gz.part", "wt", compresslevel=9) as dst:
        dst.writelines(lines)
    (out / "stats.txt.gz.part").replace(out / "stats.txt.gz")


def record(args: argparse.Namespace) -> None:
    if args.se or args.se_minor:
        cpu, clocks = ("O3CPU", SE_CLOCKS) if args.se else ("MinorCPU", SE_MINOR_CLOCKS)
        with ThreadPoolExecutor(args.jobs) as pool:
            se_jobs = [(p, mhz, cpu) for p in args.programs or SE_PROGRAMS for mhz in clocks]
            for line in pool.map(lambda j: record_se(*j), se_jobs):
                print(line, flush=True)
        return
    if args.apart:  # 1+1 cores, 100 us dumps
        jobs = [(p, 1, "epoch", big, little) for p in args.programs or PROGRAMS for big, little in APART_PAIRS]
    else:
        jobs = [
            (p, c, d, big, little) for c in args.cores for d in args.dumps for p in args.programs or PROGRAMS for big, little in PAIRS[::-1]
        ]
    with ThreadPoolExecutor(args.jobs) as pool:
        for line in pool.map(lambda j: record_one(*j), jobs):
            print(line, flush=True)


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("record")
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--cores", type=int, nargs="+", default=[1])
    r.add_argument("--dumps", nargs="+", default=["epoch"], choices=list(DUMPS))
    r.add_argument("--se", action="store_true", help="the se-one set-up (gem5's se.py, one O3 CPU) instead")
    r.add_argument("--se-minor", action="store_true", help="the se-minor set-up (gem5's se.py, one Minor CPU) instead")
    r.add_argument("--apart", action="store_true", help="the 1c-apart set-up (clocks moved apart: 1800/600, 1000/1400 MHz)")
    r.add_argument("programs", nargs="*")
    t = sub.add_parser("table")
    t.add_argument("--csv", type=Path)
    t.add_argument("--setup", default="*", help="1c-epoch, 1c-one, 2c-epoch, ... (default: every one recorded)")
    t.add_argument("--set", choices=["calibration", "test"], help="the calibration or the test programs only")
    sc = sub.add_parser("score", help="coverage and mean half-width per set-up, each pair by constants it did not set")
    sc.add_argument("--write", action="store_true", help="also into docs/explanation/whatif-score.json (whatif.md renders it)")
    c = sub.add_parser("calibrate")
    c.add_argument("--write", action="store_true", help="write the constants into cosim/dse/interval_bands.json")
    args = p.parse_args(argv)
    if args.command == "record":
        record(args)
    elif args.command == "calibrate":
        calibrate(write=args.write)
    elif args.command == "score":
        score(write=args.write)
    else:
        from whatif_calibrate import set_table  # noqa: PLC0415  (needs cosim; record does not)
        from whatif_pairs import suite_table  # noqa: PLC0415

        programs = {"calibration": CALIBRATION, "test": TEST}.get(args.set)
        rows = suite_table(RUNS, setup=args.setup, csv=args.csv, programs=programs)
        print(f"\nthe interval per set-up ({args.set or 'every'} program{'s' if args.set else ''}): coverage and mean half-width [%]")
        print(set_table(rows).round(1).to_string())


def pool_rows(suite=None):
    """The interval's calibration pool: the suite's calibration programs in every set-up (from ``suite``, the suite's
    pairs, where given), the xu3-mibench-train runs (ex5_big, se.py -n 4, one busy CPU) and the two cosim-v24
    big.LITTLE runs; the last two from ../shared (left out where it is absent: the constants then differ)."""
    import warnings  # noqa: PLC0415

    import pandas as pd  # noqa: PLC0415
    from whatif_pairs import suite_rows, v24_rows, xu3_rows  # noqa: PLC0415

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = suite_rows(RUNS) if suite is None else suite
        parts = [ours[ours["program"].isin(CALIBRATION)], xu3_rows(), v24_rows()]
    return pd.concat([p for p in parts if len(p)], ignore_index=True)


def calibrate(*, write: bool) -> dict:
    """The interval's constants from the calibration pool's pairs; printed, and written if asked."""
    import json  # noqa: PLC0415

    from whatif_calibrate import COVERAGE  # noqa: PLC0415
    from whatif_calibrate import calibrate as fit  # noqa: PLC0415

    from cosim.dse import interval  # noqa: PLC0415

    rows = pool_rows()
    constants = fit(rows)
    programs = sorted(set(rows["program"]))
    print(f"calibrated on {len(programs)} programs ({', '.join(programs)}): {len(rows)} pairs, >= {COVERAGE:.0%} held in every set-up")
    for key, value in constants.items():
        print(f"{key}: {value}")
    if write:
        data = {
            **constants,
            "calibration_programs": programs,
            "suite_calibration_programs": list(CALIBRATION),
            "calibration_setups": sorted(set(rows["setup"])),
            "calibration_pairs": len(rows),
            "coverage": COVERAGE,
            "command": "python tests/whatif_suite.py calibrate --write",
        }
        part = interval.BANDS_FILE.with_suffix(".json.part")
        part.write_text(json.dumps(data, indent=1) + "\n")
        part.replace(interval.BANDS_FILE)
        print(f"written: {interval.BANDS_FILE}")
    return constants


def scored_rows():
    """Every set-up the interval is scored on, each pair by constants it did not set: the suite's test programs by the
    shipped constants; the pool's programs (the suite's calibration programs, xu3-mibench-train, cosim-v24) and the
    explore grid (phases, held out with the suite's phases) leave one program out."""
    import warnings  # noqa: PLC0415

    import pandas as pd  # noqa: PLC0415
    from whatif_calibrate import leave_one_program_out, rescore  # noqa: PLC0415
    from whatif_pairs import grid_rows, suite_rows  # noqa: PLC0415

    from cosim.dse import interval  # noqa: PLC0415

    shipped = interval.bands()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        suite = suite_rows(RUNS)
        grid = grid_rows()
    pool, test = pool_rows(suite), suite[suite["program"].isin(TEST)].copy()
    from whatif_calibrate import calibrate as fit  # noqa: PLC0415

    held_out = rescore(grid, fit(pool[pool["program"] != "phases"]), shipped)
    loo = leave_one_program_out(pool, shipped)
    suite = loo["setup"].isin(SETUPS)
    loo.loc[suite, "setup"] = loo.loc[suite, "setup"] + " (calibration programs)"
    test["setup"] = test["setup"] + " (test programs)"
    return pd.concat([test, loo, held_out], ignore_index=True)


SCORE_FILE = HERE.parent / "docs" / "explanation" / "whatif-score.json"  # rendered into whatif.md at docs build


def score(*, write: bool = False) -> None:
    """Per set-up: pairs within 5 %, the interval's coverage and mean half-width [%], each pair scored by constants it
    did not set (:func:`scored_rows`), and whether the goal (every pair within 5 %, coverage >= 90 %, mean half-width
    <= 10 %) is met; ``write``: also into docs/explanation/whatif-score.json."""
    import json  # noqa: PLC0415

    from whatif_calibrate import set_table  # noqa: PLC0415

    table = set_table(scored_rows())
    goal = (table["runtime_s_within_5_pct"] == table["pairs"]) & (table["energy_j_within_5_pct"] == table["pairs"])
    for key in ("runtime_s", "energy_j"):
        goal &= (table[f"{key}_coverage_pct"] >= 90) & (table[f"{key}_mean_half_width_pct"] <= 10)
    table["goal_met"] = goal
    print("the interval per set-up, each pair scored by constants it did not set: coverage and mean half-width [%]")
    print(table.round(1).to_string())
    if write:
        records = [
            {"setup": setup, **{k: (round(float(v), 1) if k != "goal_met" else bool(v)) for k, v in row.items()}}
            for setup, row in table.iterrows()
        ]
        data = {"command": "python tests/whatif_suite.py score --write", "bands": json.loads(_bands_text()), "setups": records}
        part = SCORE_FILE.with_suffix(".json.part")
        part.write_text(json.dumps(data, indent=1) + "\n")
        part.replace(SCORE_FILE)
        print(f"written: {SCORE_FILE}")


def _bands_text() -> str:
    from cosim.dse import interval  # noqa: PLC0415

    return interval.BANDS_FILE.read_text()


if __name__ == "__main__":
    main(sys.argv[1:])
