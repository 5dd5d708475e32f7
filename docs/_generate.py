"""Reference pages and figures made from the code and the bundled data while the docs build."""

from __future__ import annotations

import argparse
import tomllib
from importlib import resources
from pathlib import Path

from _gpu_energy import gpu_energy_table, made_table, public_names_table, public_pairs_table
from _kernel_validation import kernel_validation_table
from _ruby import ruby_runs_table
from _silicon import board_model_table, silicon_table
from _silicon_figures import recorded_table
from _validation import validation_table


def generate_all(out: Path) -> None:
    out.mkdir(exist_ok=True)
    (out / "cli.md").write_text(cli_reference())
    (out / "api.rst").write_text(api_reference())
    (out / "counter-maps.md").write_text(counter_maps())
    (out / "validation-table.md").write_text(validation_table())
    (out / "kernel-physics-maps.md").write_text(kernel_physics_maps())
    (out / "kernel-validation-table.md").write_text(kernel_validation_table())
    (out / "silicon-table.md").write_text(silicon_table(plot=out / "silicon.png"))
    (out / "gpu-energy-table.md").write_text(gpu_energy_table(plot=out / "gpu-energy.png"))
    (out / "gpu-energy-public-table.md").write_text(public_pairs_table())
    (out / "gpu-energy-public-names.md").write_text(public_names_table())
    (out / "gpu-energy-made-table.md").write_text(made_table())
    (out / "ruby-runs.md").write_text(ruby_runs_table())
    (out / "silicon-model.md").write_text(board_model_table())
    (out / "silicon-figures.md").write_text(recorded_table())
    (out / "whatif-score-table.md").write_text(whatif_score_table())
    figures(out)  # the pages' command outputs are in the pages themselves (python docs/_runnable.py writes them)


def whatif_score_table() -> str:
    """The what-if interval's scores per set-up, from ``explanation/whatif-score.json`` (written by
    ``python tests/whatif_suite.py score --write``, minutes of CPU: every pair by constants it did not set)."""
    import json

    path = Path(__file__).resolve().parent / "explanation" / "whatif-score.json"
    data = json.loads(path.read_text())
    lines = [
        "| set-up | pairs | runtime / energy within 5 % | runtime coverage | runtime mean half-width | energy coverage | energy mean half-width | goal |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in data["setups"]:
        lines.append(
            f"| {r['setup']} | {r['pairs']:.0f} | {r['runtime_s_within_5_pct']:.0f} / {r['energy_j_within_5_pct']:.0f} "
            f"| {r['runtime_s_coverage_pct']:.1f} % | {r['runtime_s_mean_half_width_pct']:.1f} % | {r['energy_j_coverage_pct']:.1f} % "
            f"| {r['energy_j_mean_half_width_pct']:.1f} % | {'met' if r['goal_met'] else 'not met'} |"
        )
    runtime, energy, one = data["bands"]["runtime_band"], data["bands"]["energy_band"], data["bands"]["single_dump_base"]
    lines += [
        "",
        f"Constants scored: runtime {100 * runtime[0]:g} % + {100 * runtime[1]:g} %·|ln(f'/f)|·({runtime[2]:g} + share), energy "
        f"{100 * energy[0]:g} % + {100 * energy[1]:g} %·|ln(f'/f)|·({energy[2]:g} + share), one dump +{100 * one:g} % "
        f"(`{data['command']}`).",
    ]
    return "\n".join(lines) + "\n"


def cli_reference() -> str:
    """Every command's ``--help``, from the argparse parser the command line uses."""
    from cosim.cli import _parser

    parser = _parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    text = [
        "# Command line\n",
        "Generated from cosim's argparse parser when these pages are built.\n",
        "```text",
        parser.format_help().rstrip(),
        "```\n",
    ]
    for name, command in sub.choices.items():
        command.prog = f"cosim {name}"
        text += [f"## cosim {name}\n", "```text", command.format_help().rstrip(), "```\n"]
    return "\n".join(text)


def api_reference() -> str:
    """The public API: every name ``cosim/__init__.py`` exports, from its docstring."""
    import cosim

    lines = ["Python API", "==========", "", "Everything ``import cosim`` offers (``cosim.__all__``); each entry is its docstring.", ""]
    for name in sorted(cosim.__all__, key=str.lower):
        obj = getattr(cosim, name)
        kind = "autoclass" if isinstance(obj, type) else "autofunction"
        target = f"{obj.__module__}.{obj.__qualname__}"
        lines += [f".. {kind}:: {target}", ""]
    return "\n".join(lines)


def counter_maps() -> str:
    """One table per gem5 naming generation, from ``cosim/counters/maps/gem5-*.toml``."""
    text = [
        "# gem5 counter maps\n",
        "Which gem5 statistics stand for each ARM PMU event, per gem5 naming generation, in order of "
        "preference; generated from `cosim/counters/maps/gem5-*.toml` when these pages are built. "
        "`cpu.` is each CPU, `l1d.`/`l1i.` its L1 caches, `l2.` the cache below its L1D; for CPUs on Ruby sequencers "
        "(memory `ruby`) `l1d.`/`l1i.` are the sequencer's RubyCaches, `l2.` every L2 bank, `ruby.` the RubySystem's "
        "protocol counts ({doc}`../explanation/ruby`). "
        "A source with a substitution note flags every epoch priced with it.\n",
    ]
    maps = resources.files("cosim.counters") / "maps"
    for name in ("gem5-v20.1plus.toml", "gem5-pre-v20.1.toml"):
        data = tomllib.loads((maps / name).read_text())
        text += [f"## {data['generation']} (`{name}`)\n", "| event | source | CPU kinds | memory | substitution |", "|---|---|---|---|---|"]
        for code, event in data["events"].items():
            for i, source in enumerate(event["sources"]):
                label = f"{code} {event['name']}" if i == 0 else ""
                kinds = ", ".join(source.get("cpus", [])) or "any"
                note = source.get("substitute", "").replace("|", "/")
                bound = f" at most the cycles of `{source['clocked']}`" if "clocked" in source else ""
                text.append(f"| {label} | `{source['expr']}`{bound} | {kinds} | {source.get('memory', 'classic')} | {note} |")
        text.append("")
    return "\n".join(text)


def kernel_physics_maps() -> str:
    """The kernel physics family's inputs under each profiler's names, from ``cosim/counters/maps/kernel-physics-*.toml``."""
    from cosim.kernels.features import TOOLS, feature_map

    lines = [
        "| tool | quantity | column(s), first found is used | unit | × to cosim's unit | means | source |",
        "|---|---|---|---|---|---|---|",
    ]
    for tool in TOOLS:
        data = feature_map(tool)
        for name, q in data["quantities"].items():
            cols = " / ".join(f"`{c}`" for c in q["columns"])
            cols += "".join(f" + `{g[0]}`" for g in q.get("also", []))
            means = q["means"] + (f" ({q['substitute']})" if "substitute" in q else "")
            lines.append(
                f"| {data['title']} | {name} | {cols} | {q['unit']} | {q['scale']:g} | {means} | {q['source'].replace('|', '/')} |"
            )
    return "\n".join(lines) + "\n"


def figures(out: Path) -> None:
    """The tutorial's plots, computed from the bundled gem5 run."""
    import warnings

    from cosim.cli.demo import find_demo_run, open_demo
    from cosim.dse.choose import choose, pareto_front, plot_pareto
    from cosim.dse.whatif import dvfs_grid, recorded_run, whatif, whatif_stats
    from cosim.plots.cpu import plot_timeline
    from cosim.readers.gem5_stats import read_stats
    from cosim.timeline.cpu import power_timeline

    demo = find_demo_run()
    if demo is None:
        raise RuntimeError("the bundled gem5 run in traces/ is missing; the tutorial's plots are made from it")
    run = open_demo(demo)  # as cosim demo and cosim power price it: the default model of each cluster's kind
    config, specs = run.config, list(run.clusters)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = read_stats(run.stats_path)
        plot_timeline(power_timeline(stats, config, specs), out / "tutorial-power.png", title="bundled gem5 v24 big.LITTLE run")
        table = whatif(
            recorded_run(read_stats(run.stats_path, stats=whatif_stats(config, specs)), config, specs),
            dvfs_grid(recorded_run(stats, config, specs), {}),
        )
    table["pareto"] = pareto_front(table)
    plot_pareto(table, out / "tutorial-pareto.png", choice=choose(table, power_cap_w=1.0), title="DVFS what-if of the bundled run")
