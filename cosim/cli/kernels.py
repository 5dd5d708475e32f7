"""``cosim kernel-synth`` and ``kernel-eval``: kernel-level runtime and power models."""

from __future__ import annotations

import argparse
from pathlib import Path

from cosim.errors import CosimError


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
    ke.set_defaults(run=_cmd_kernel_eval)


def _cmd_kernel_synth(args: argparse.Namespace) -> int:
    from cosim.kernels.synthetic import kernel_log
    from cosim.output import write_table

    log = kernel_log(seed=args.seed)
    write_table(log, args.output)
    print(f"{len(log)} synthetic kernel launches on {log['board'].nunique()} boards -> {args.output}")
    return 0


def _cmd_kernel_eval(args: argparse.Namespace) -> int:
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
    models = fit_kernels(log[~held], budget=args.budget)
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
