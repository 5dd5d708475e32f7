"""``cosim models``: every shipped model file, with its core, board, clocks, trained range, error and source."""

from __future__ import annotations

import argparse
from pathlib import Path

#: gem5's CPU kinds as DEFAULT_MODELS names them, as a user knows them
_KINDS = {"o3": "O3", "minor": "Minor", "inorder": "InOrder", "simple": "AtomicSimple/TimingSimple"}


def add_parsers(sub) -> None:
    m = sub.add_parser(
        "models",
        help="list the shipped models: core, board, clocks, training range, error, source, and which is a default",
        description="List every model file cosim ships (the models/ folder), read from the files themselves. "
        "`cosim power` prices a gem5 cluster with no --model by its CPUs' kind: the model marked default for it.",
    )
    m.add_argument("-o", "--output", type=Path, help="also write the list as a table (.csv or .parquet)")
    m.set_defaults(run=_cmd_models)


#: the width ``cosim models`` wraps its lines to (a terminal's)
_WIDTH = 110


def _cmd_models(args: argparse.Namespace) -> int:
    import textwrap
    from dataclasses import asdict

    from cosim.models.catalog import shipped_models
    from cosim.timeline.core_kind import DEFAULT_MODELS

    entries = shipped_models()
    defaults: dict[str, list[str]] = {}
    for kind, name in DEFAULT_MODELS.items():
        defaults.setdefault(name, []).append(_KINDS.get(kind, kind))
    rows = []
    for e in entries:
        default = f"default for gem5 {', '.join(defaults[e.name])} CPUs" if e.name in defaults else ""
        rows.append({**asdict(e), "default_for": default})
        print(f"{e.name}  ({e.kind}{'; ' + default if default else ''})")
        for label, value in (
            ("core", e.core),
            ("board", e.board),
            ("clocks [MHz]", e.clocks_mhz),
            ("trained", e.training),
            ("error", e.error),
            ("source", e.source),
        ):
            if value:  # wrapped, never cut: a long source is read to its end
                print(
                    textwrap.fill(
                        str(value), width=_WIDTH, initial_indent=f"  {label + ':':14s}", subsequent_indent=" " * 16, break_on_hyphens=False
                    )
                )
    if args.output:
        import pandas as pd

        from cosim.output import write_table

        write_table(pd.DataFrame(rows), args.output)
        print(f"{len(rows)} model file(s) -> {args.output}")
    return 0
