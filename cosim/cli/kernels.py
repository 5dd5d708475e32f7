"""``cosim kernel-synth``, ``kernel-eval`` (synthetic Jetson AGX method) and ``kernel-fit``, ``kernel-predict``,
``kernel-choose`` (runtime and power across core and memory clocks, from measured tables)."""

from __future__ import annotations

import argparse
from pathlib import Path

from cosim.errors import CosimError

FAMILY_NAMES = ("roofline", "physics", "trees")


def add_parsers(sub) -> None:
    ks = sub.add_parser("kernel-synth", help="write the synthetic kernel-launch log (documented ground truth) for trying the kernel models")
    ks.add_argument("-o", "--output", type=Path, default=Path("kernel-log.csv"))
    ks.add_argument("--seed", type=int, default=0)
    ks.set_defaults(run=_cmd_kernel_synth)

    ke = sub.add_parser("kernel-eval", help="train kernel runtime/power models on some boards, report accuracy on the others")
    ke.add_argument("log", type=Path, help="kernel launch log (CSV; schema in cosim/kernels/log.py)")
    ke.add_argument("--board-file", type=Path, help="board DVFS levels (default: the shipped Jetson AGX file)")
    ke.add_argument("--test-boards", required=True, metavar="B1,B2", help="boards held out for testing")
    ke.add_argument("--budget", type=int, default=1, help="hyper-parameter sets tried per model (leave-one-board-out CV)")
    _progress_option(ke)
    ke.set_defaults(run=_cmd_kernel_eval)
    add_dvfs_parsers(sub)


def _progress_option(p) -> None:
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        help="show progress on stderr: a tqdm bar where tqdm is installed ([progress] extra), else a plain line per step (default: on)",
    )


def _stepper(args: argparse.Namespace, label: str):
    import sys

    from cosim.kernels.progress import stepper, tqdm_installed

    if args.progress and not tqdm_installed():  # asked for a bar: say why it is lines
        print("cosim: note: --progress: tqdm is not installed, so plain lines (pip install 'cosim[progress]' for a bar)", file=sys.stderr)
    return stepper(label, enabled=args.progress is not False)  # None: not given, on


def _cmd_kernel_synth(args: argparse.Namespace) -> int:
    from cosim.kernels.synthetic import kernel_log
    from cosim.output import write_table

    log = kernel_log(seed=args.seed)
    write_table(log, args.output)
    print(f"{len(log)} synthetic kernel launches on {log['board'].nunique()} boards -> {args.output}")
    return 0


def _cmd_kernel_eval(args: argparse.Namespace) -> int:
    from cosim.kernels.extra import require_extra

    require_extra("sklearn", command="cosim kernel-eval")
    from cosim.kernels.log import board_levels, read_kernel_log
    from cosim.kernels.metrics import accuracy
    from cosim.kernels.train import fit_kernels
    from cosim.models.modelfile import shipped_models_dir

    log = read_kernel_log(args.log, levels=board_levels(args.board_file or shipped_models_dir() / "jetson-agx-dvfs.json"))
    test_boards = [b.strip() for b in args.test_boards.split(",") if b.strip()]
    unknown = sorted(set(test_boards) - set(log["board"]))
    if unknown:
        raise CosimError(f"--test-boards: {', '.join(unknown)} not in the log; boards: {', '.join(sorted(log['board'].unique()))}")
    held = log["board"].isin(test_boards)
    models = fit_kernels(log[~held], budget=args.budget, each=_stepper(args, "kernel-eval: fitting kernel type"))
    test = log[held]
    pred = models.predict(test)
    print(f"trained on {log.loc[~held, 'board'].nunique()} boards, tested on {', '.join(test_boards)} ({len(test)} launches)")
    print(f"{'kernel':<12} {'target':<8} {'<5%':>6} {'<10%':>6} {'<15%':>6} {'<20%':>6} {'RMSE':>9} {'MAE':>9}")
    for kernel, rows in test.groupby("kernel"):
        for target, col, unit in (("runtime", "runtime_ms", "ms"), ("power", "power_w", "W")):
            a = accuracy(pred.loc[rows.index, col], rows[col])
            print(
                f"{kernel:<12} {target:<8} {a['within_5pct']:6.1f} {a['within_10pct']:6.1f} {a['within_15pct']:6.1f} "
                f"{a['within_20pct']:6.1f} {a['rmse']:7.3f}{unit:>2} {a['mae']:7.3f}{unit:>2}"
            )
    return 0


def add_dvfs_parsers(sub) -> None:
    table_help = "a kernel DVFS table (CSV: benchmark, kernel, core_mhz, mem_mhz, runtime_s, power_w, features) or a folder of logs"
    kf = sub.add_parser("kernel-fit", help="fit kernel runtime and power models across core/memory clocks (physics and trees)")
    kf.add_argument("tables", nargs="+", type=Path, metavar="TABLE", help=table_help)
    kf.add_argument("-o", "--output", type=Path, default=Path("kernel-model.json"))
    kf.add_argument(
        "--reference-pair",
        metavar="C,M",
        help="the profile's clock pair [MHz] (default: the highest pair at which every kernel was profiled: has its features)",
    )
    kf.add_argument(
        "--family",
        choices=FAMILY_NAMES,
        action="append",
        help="fit this family (repeat for more; default: every family the table allows: roofline and physics need DRAM, IPC and "
        "occupancy columns, roofline a grid of clock pairs every benchmark was measured on)",
    )
    kf.add_argument("--validate", action="store_true", help="also report leave-one-benchmark-out errors, coverage and energy saving")
    kf.add_argument(
        "--columns",
        metavar="NAME=COLUMN,...",
        help="the tables' own column names for benchmark, kernel, core_mhz, mem_mhz, runtime_s (or runtime_ms/_us), power_w "
        "(e.g. benchmark=app,kernel=kernelName,core_mhz=coreF,mem_mhz=memF,runtime_ms=time,power_w=avgPower); other columns stay features",
    )
    _progress_option(kf)
    kf.set_defaults(run=_cmd_kernel_fit, output_suffixes=(".json",))

    for name, helptext, run in (
        ("kernel-predict", "predict runtime, power and energy at clock pairs, with intervals", _cmd_kernel_predict),
        ("kernel-choose", "pick, per kernel, the clock pair with the least predicted energy under a constraint", _cmd_kernel_choose),
    ):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("model", type=Path, help="MODEL.json from cosim kernel-fit")
        p.add_argument("table", type=Path, help=table_help + "; holds each kernel's profile at the model's reference pair")
        p.add_argument("-o", "--output", type=Path, default=Path(f"{name}.csv"))
        p.add_argument("--core-mhz", metavar="LIST", help="predict at every pair of these core clocks ... [MHz]")
        p.add_argument("--mem-mhz", metavar="LIST", help="... and these memory clocks [MHz] (default: the pairs in TABLE)")
        p.add_argument("--family", choices=FAMILY_NAMES, help="model family (default: the model's first: roofline, physics, trees)")
        p.add_argument(
            "--any-device", action="store_true", help="predict for a GPU the model was not fitted on (rows flagged device_mismatch)"
        )
        if name == "kernel-choose":
            c = p.add_mutually_exclusive_group(required=True)
            c.add_argument(
                "--deadline-factor",
                type=float,
                metavar="F",
                help="runtime (its interval's upper end) at most F x that predicted at the highest clocks",
            )
            c.add_argument("--power-cap", type=float, metavar="W", help="power (its interval's upper end) at most W watts")
            p.add_argument(
                "--allow-partial", action="store_true", help="exit 0 even if some kernel has no pair under the constraint (its row empty)"
            )
        p.set_defaults(run=run, command_name=name)


def _cmd_kernel_fit(args: argparse.Namespace) -> int:
    import time

    import pandas as pd

    from cosim.kernels.dvfs import check_table, default_reference, device_of, parse_pair, read_dvfs_table
    from cosim.kernels.dvfs_file import fit_model, save_model
    from cosim.kernels.extra import require_extra
    from cosim.readers.column_map import parse_columns

    families = tuple(dict.fromkeys(sorted(args.family or (), key=FAMILY_NAMES.index)))
    # the physics fit needs scipy, the trees scikit-learn: refuse before reading anything
    require_extra(
        *(["scipy.optimize"] if families != ("trees",) else []),
        *(["sklearn"] if families != ("physics",) else []),
        command="cosim kernel-fit",
    )
    source = ", ".join(map(str, args.tables))
    tables = [mapped_kernel_table(p, parse_columns(args.columns)) if args.columns else read_dvfs_table(p) for p in args.tables]
    table = check_table(pd.concat(tables, ignore_index=True), source=source)
    devices = {device_of(t) for t in tables} - {""}
    if len(devices) > 1:
        raise CosimError(f"the tables hold {len(devices)} devices ({', '.join(sorted(devices))}); fit one model per device")
    reference = parse_pair(args.reference_pair) if args.reference_pair else default_reference(table, source=source)
    if not families:
        families = _default_families(table)
    start_wall, start = time.perf_counter(), time.process_time()
    model = fit_model(table, reference=reference, source=source, families=families)
    how = "" if args.reference_pair else " (the highest pair every kernel was profiled at)"
    tool = next((model["families"][f]["params"]["features"] for f in ("roofline", "physics") if f in families), "")
    line = (
        f"fitted {' and '.join(families)} on {table['benchmark'].nunique()} benchmark(s), {len(table)} row(s), "
        f"reference {reference[0]:g},{reference[1]:g} MHz{how}" + (f", features from {tool}" if tool else "")
    )
    if args.validate:
        model["validation"] = _validate(model, table, reference, args)
    save_model(model, args.output)  # atomic; the line names the file only once it is there
    print(f"{line} ({time.perf_counter() - start_wall:.1f} s, {time.process_time() - start:.1f} s CPU) -> {args.output}")
    from cosim.kernels.pair_folders import idle_note

    if note := idle_note(table, families):  # never silent: what the missing column costs, and how to measure it
        import sys

        print(note, file=sys.stderr)
    return 0


def mapped_kernel_table(path: Path, columns: dict[str, str]):
    """A kernel DVFS table (:mod:`cosim.kernels.dvfs`'s schema) from another CSV, its columns named by ``--columns``."""
    from cosim.kernels.dvfs import check_table
    from cosim.readers.column_map import rename
    from cosim.readers.measured import read_table

    if Path(path).is_dir():
        raise CosimError(f"--columns {path}: a folder; --columns maps the columns of one CSV table")
    return check_table(rename(read_table(path), columns, source=str(path)), source=str(path))


def _default_families(table) -> tuple[str, ...]:
    """Every family where the table has the physics quantities (any tool's names; roofline only on a full grid of clock
    pairs), else the trees alone."""
    import sys

    from cosim.kernels.dvfs import feature_columns
    from cosim.kernels.features import missing_text, resolve_tool

    feats = feature_columns(table)
    if resolve_tool(feats):
        pairs = table.groupby("benchmark")[["core_mhz", "mem_mhz"]].apply(lambda g: frozenset(map(tuple, g.to_numpy())))
        grid = set().union(*pairs) if len(pairs) else set()
        full = {(c, m) for c in table["core_mhz"].unique() for m in table["mem_mhz"].unique()} == grid
        return ("roofline", "physics", "trees") if full else ("physics", "trees")
    print(
        f"cosim: note: fitting the trees alone: the physics family needs DRAM traffic, IPC and occupancy columns ({missing_text(feats)})",
        file=sys.stderr,
    )
    return ("trees",)


def _validate(model: dict, table, reference, args: argparse.Namespace) -> dict:
    import time

    from cosim.kernels.dvfs import with_profiles
    from cosim.kernels.dvfs_eval import FAMILIES, choose, errors, lobo, off_reference

    rows = with_profiles(table, reference=reference, source="table")
    out = {}
    for family in [f for f in FAMILIES if f in model["families"]]:
        start = time.process_time()
        pred = lobo(rows, family, each=_stepper(args, f"kernel-fit --validate: {family}, leaving out benchmark"))
        err = errors(pred, off_reference(pred, rows), rows)
        picked = choose(pred, deadline_factor=1.1)
        saving = float(picked["saving_measured_pct"].mean())
        cpu = time.process_time() - start
        print(
            f"\nleave-one-benchmark-out, {family} ({cpu:.1f} s CPU): MAPE [%], worst row [%], 90 % interval coverage [%], "
            "frequency scaling's MAPE from the same reference [%]"
        )
        print(
            f"{'benchmark':<22} {'runtime':>8} {'worst':>7} {'power':>7} {'worst':>7} {'cov t':>6} {'cov P':>6} {'scal t':>7} {'scal P':>7}"
        )
        for bench, r in err.iterrows():
            print(
                f"{bench:<22} {r['runtime_mape']:8.1f} {r['runtime_worst']:7.1f} {r['power_mape']:7.1f} {r['power_worst']:7.1f} "
                f"{r['runtime_coverage']:6.1f} {r['power_coverage']:6.1f} {r['scaling_runtime_mape']:7.1f} {r['scaling_power_mape']:7.1f}"
            )
        print(
            f"clocks chosen for --deadline-factor 1.1 on left-out benchmarks: measured energy {saving:.1f} % below the highest clocks, mean per kernel "
            f"(per kernel {picked['saving_measured_pct'].min():.1f} to {picked['saving_measured_pct'].max():.1f} %; "
            f"measured slowdown up to {picked['slowdown_measured'].max():.2f}x)"
        )
        out[family] = {"errors": err.reset_index().to_dict(orient="list"), "energy_saving_pct": saving, "cpu_s": cpu}
    return out


def _predictions(args: argparse.Namespace):
    from cosim.kernels.dvfs import grid, parse_clocks, read_dvfs_table, with_profiles
    from cosim.kernels.dvfs_file import check_device, family_model, load_model
    from cosim.kernels.dvfs_models import predict_table

    model = load_model(args.model)
    args.family = args.family or next(iter(model["families"]))
    if args.family == "trees":
        from cosim.kernels.extra import require_extra

        require_extra("sklearn", command=f"cosim {args.command_name} --family trees")
    table = read_dvfs_table(args.table)
    flag = check_device(model, table, source=str(args.table), model_path=args.model, any_device=args.any_device)
    reference = tuple(model["reference_pair_mhz"])
    rows = with_profiles(table, reference=reference, source=str(args.table))
    if (args.core_mhz is None) != (args.mem_mhz is None):
        raise CosimError("give both --core-mhz and --mem-mhz (every pair of the two lists), or neither (the pairs in TABLE)")
    if args.core_mhz is not None:
        rows = grid(rows, parse_clocks(args.core_mhz, "--core-mhz"), parse_clocks(args.mem_mhz, "--mem-mhz"))
    _check_range(model, rows)
    fitted, q = family_model(model, args.family)
    pred = predict_table(args.family, fitted, q, rows)
    if flag:
        pred["flags"] = [";".join(f for f in (str(text), flag) if f and f != "nan") for text in pred.get("flags", [""] * len(pred))]
    return pred


def _check_range(model: dict, rows) -> None:
    for col, (lo, hi) in model["clock_range_mhz"].items():
        off = (rows[col] < lo * 0.999) | (rows[col] > hi * 1.001)
        if off.any():
            v = rows.loc[off, col].iloc[0]
            raise CosimError(
                f"{col.replace('_mhz', '')} clock {v:g} MHz is outside the fitted range {lo:g}-{hi:g} MHz; the model is not checked there: "
                "predict inside it, or fit on measurements that cover it"
            )


def _cmd_kernel_predict(args: argparse.Namespace) -> int:
    from cosim.output import write_table

    pred = _predictions(args)
    write_table(pred, args.output)
    print(
        f"{len(pred)} prediction(s) of {pred[['benchmark', 'kernel']].drop_duplicates().shape[0]} kernel(s), {args.family} -> {args.output}"
    )
    return 0


def _cmd_kernel_choose(args: argparse.Namespace) -> int:
    import sys

    from cosim.cli._args import EXIT_PARTIAL
    from cosim.kernels.dvfs_eval import choose
    from cosim.output import write_table

    pred = _predictions(args)
    if pred.empty or pred.groupby(["benchmark", "kernel"]).size().max() < 2:
        given = f"--core-mhz {args.core_mhz} --mem-mhz {args.mem_mhz}" if args.core_mhz else f"{args.table} (its profiles alone)"
        raise CosimError(
            f"{given}: one clock pair per kernel, nothing to choose from; give candidate clocks, e.g. "
            "--core-mhz 400,600,800,1000 --mem-mhz 400,1000, or a table measured at more pairs"
        )
    if args.power_cap is not None and (no_hi := pred["power_w_hi"].isna()).any():  # a cap on the upper end that exists (#46)
        pred["power_w_hi"] = pred["power_w_hi"].fillna(pred["power_w_pred"])
        print(f"  {int(no_hi.sum())} pair(s) have no power interval: --power-cap compares their point estimate")
    picked = choose(pred, deadline_factor=args.deadline_factor, power_cap_w=args.power_cap)
    write_table(picked, args.output)
    for _, r in picked[picked["reason"] == ""].iterrows():
        line = (
            f"{r['benchmark']}/{r['kernel']}: {r['core_mhz']:g}/{r['mem_mhz']:g} MHz (best of {r['candidate_pairs']} pair(s)), predicted "
            f"{r['energy_j_pred'] * 1e3:.3g} mJ vs {r['default_energy_j_pred'] * 1e3:.3g} mJ at {r['default_core_mhz']:g}/{r['default_mem_mhz']:g}"
        )
        if "energy_j" in picked.columns and r["energy_j"] == r["energy_j"]:
            line += (
                f"; measured {r['energy_j'] * 1e3:.3g} vs {r['default_energy_j'] * 1e3:.3g} mJ ({r['saving_measured_pct']:+.1f} % saved)"
            )
        print(line)
    unmet = picked[picked["reason"] != ""]
    print(f"{len(picked) - len(unmet)} of {len(picked)} kernel(s) given clocks -> {args.output}")
    for _, r in unmet.iterrows():
        print(f"cosim: error: {r['benchmark']}/{r['kernel']}: {r['reason']} ({r['candidate_pairs']} pair(s) tried)", file=sys.stderr)
    if len(unmet):
        print(
            f"cosim: error: {len(unmet)} of {len(picked)} kernel(s) have no clock pair under the constraint: their rows in "
            f"{args.output} have empty clocks and the reason; raise --power-cap or give other --core-mhz/--mem-mhz",
            file=sys.stderr,
        )
    return EXIT_PARTIAL if len(unmet) and not args.allow_partial else 0
