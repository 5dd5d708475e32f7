"""cosim's gem5 side, imported from a gem5 (v21+) config script.

    import sys; sys.path.append("/path/to/cosim/gem5_scripts")
    import cosim_gem5

    root = Root(full_system=True, system=system)
    run = cosim_gem5.attach_power(system, models={
        "big": ("system.bigCluster", "cortex-a15-walker2017"),
        "little": ("system.littleCluster", "cortex-a7-gemstone2018"),
    }, epoch="100us", outdir=m5.options.outdir, online=True)
    m5.instantiate()
    run.start()          # periodic stats dumps, one epoch each
    m5.simulate()

Before instantiation it records the clusters in ``cosim-run.json`` (so ``cosim
power`` needs no --cluster flags), sets each cluster's voltage domain to the
model's V-f table for its DVFS clocks (gem5's big.LITTLE configs leave 1.0 V),
and with ``online=True`` attaches the same model as ``MathExprPowerModel``
expressions per CPU.  Only the Python standard library is used: gem5's own
Python may have no numpy or pandas.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python < 3.11 inside older gem5 builds
    tomllib = None

HERE = Path(__file__).resolve().parent
# in the repository: gem5_scripts/ beside cosim/ and models/; installed: cosim/_gem5_scripts
MAPS = next((p for p in (HERE.parent / "cosim" / "counters" / "maps", HERE.parent / "counters" / "maps") if p.is_dir()), HERE)
MODELS = next((p for p in (HERE.parent / "models", HERE.parent / "_models") if p.is_dir()), HERE)
GENERATION_FILES = {"pre-v20.1": "gem5-pre-v20.1.toml", "v20.1+": "gem5-v20.1plus.toml"}
# gem5's MathExpr resolves a stat by its full name; a name with "::" (a vector
# element) or "-" (read as minus) cannot be written in an expression.
_EXPRESSIBLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


class ExpressionError(ValueError):
    """The model needs a stat gem5's MathExprPowerModel cannot read."""


@dataclass
class ClusterLayout:
    """What the expression generator needs to know about one cluster."""

    name: str
    cpus: list[str]
    l1d: dict[str, str] = field(default_factory=dict)
    l1i: dict[str, str] = field(default_factory=dict)
    l2: dict[str, str] = field(default_factory=dict)
    l2_sharers: dict[str, int] = field(default_factory=dict)


def load_model(name_or_path: str) -> dict:
    path = Path(name_or_path)
    if not path.exists():
        path = MODELS / f"{name_or_path}.json"
    return json.loads(path.read_text())


def load_event_map(generation: str, maps_dir: Path = MAPS) -> dict:
    if tomllib is None:
        raise RuntimeError("cosim_gem5 needs Python 3.11+ (tomllib) to read its counter maps")
    return tomllib.loads((maps_dir / GENERATION_FILES[generation]).read_text())


def _first_online_source(event: str, emap: dict, formulas: set[str]):
    """The first source of ``event`` whose stats MathExpr can read; (source, reasons refused)."""
    refused = []
    for source in emap["events"][event]["sources"]:
        terms = [t for t in source["expr"].split() if t not in "+-" and t != "0"]
        bad = [t for t in terms if _online_stat(t.partition(".")[2], formulas) is None]
        if not bad:
            return source, refused
        refused.append(f"{source['expr']!r} needs {', '.join(bad)}")
    return None, refused


def _online_stat(stat: str, formulas: set[str]) -> str | None:
    """``overallMisses::total`` -> ``overallMisses`` where that is a Formula; None where MathExpr cannot read it."""
    if stat.endswith("::total") and stat.removesuffix("::total") in formulas:
        stat = stat.removesuffix("::total")
    return stat if _EXPRESSIBLE.match(stat) else None


def _objects(layout: ClusterLayout, cpu: str, scope: str) -> str:
    if scope == "cpu":
        return cpu
    table = {"l1d": layout.l1d, "l1i": layout.l1i, "l2": layout.l2}[scope]
    default = {"l1d": f"{cpu}.dcache", "l1i": f"{cpu}.icache", "l2": f"{cpu.rsplit('.', 1)[0]}.l2"}[scope]
    return table.get(cpu, default)


def _count_expr(source: dict, layout: ClusterLayout, cpu: str, formulas: set[str]) -> str:
    """One CPU's share of an event count, as a MathExpr expression."""
    parts, sign = [], "+"
    for token in source["expr"].split():
        if token in "+-":
            sign = token
            continue
        if token == "0":
            continue
        scope, _, stat = token.partition(".")
        obj = _objects(layout, cpu, scope)
        name = f"{obj}.{_online_stat(stat, formulas)}"
        if not _EXPRESSIBLE.match(name):
            raise ExpressionError(f"stat {name} cannot be named in a gem5 expression ('-' or '::' in it)")
        share = layout.l2_sharers.get(obj, len(layout.cpus)) if scope == "l2" else 1
        term = name if share == 1 else f"({name} / {share})"
        parts.append(f"{sign} {term}" if parts or sign == "-" else term)
    return " ".join(parts) if parts else "0"


def cpu_expressions(model: dict, layout: ClusterLayout, *, generation: str, ticks_per_s: float = 1e12,
                    maps_dir: Path = MAPS) -> dict[str, tuple[str, str]]:
    """``{cpu path: (dyn, st)}`` MathExprPowerModel expressions for each CPU of ``layout``.

    A CPU's dynamic power is the model's dynamic terms with that CPU's events (its
    share of a shared L2); its static power is the cluster's static power divided by
    the cluster's CPUs, so the CPUs add up to the cluster model.  ``voltage`` and
    ``clock_period`` [ticks] are MathExpr's own variables; rates are per
    ``simSeconds`` (stats are reset at every dump).

    Raises ExpressionError naming each event that has no source MathExpr can read.
    """
    emap = load_event_map(generation, maps_dir)
    formulas = set(emap.get("formulas", []))
    events = sorted({e.lower() for t in model["dynamic_terms"] for e in t["events"]})
    sources, problems = {}, []
    for event in events:
        source, refused = _first_online_source(event, emap, formulas)
        if source is None:
            problems.append(f"{event} ({emap['events'][event]['name']}): " + "; ".join(refused))
        sources[event] = source
    if problems:
        raise ExpressionError(
            f"model {model['name']} cannot run online in gem5: MathExprPowerModel reads only Scalar and Formula "
            f"stats by plain name, and " + " | ".join(problems) + ". Use the offline path (cosim power) for this model."
        )
    cores = model["cores_per_cluster"]
    f_mhz = f"({ticks_per_s / 1e6:.12g} / clock_period)"
    out = {}
    for cpu in layout.cpus:
        dyn = []
        for term in model["dynamic_terms"]:
            counts = " ".join(
                f"{'-' if w < 0 else '+'} {abs(w):g} * ({_count_expr(sources[e.lower()], layout, cpu, formulas)})"
                for e, w in term["events"].items()
            ).removeprefix("+ ")
            # beta * E * V^2 * f with E = count / simSeconds / cores / f, so f cancels
            dyn.append(f"{term['coefficient']!r} * ({counts}) / simSeconds / {cores} * voltage * voltage")
        static = [f"{t['coefficient']!r} * {_power(f_mhz, t['f_exp'])} * {_power('voltage', t['v_exp'])}" for t in model["static_terms"]]
        out[cpu] = (" + ".join(dyn), f"({' + '.join(static)}) / {len(layout.cpus)}")
    return out


def _power(name: str, exp: int) -> str:
    return "1" if exp == 0 else " * ".join([name] * exp)


# --- live gem5 objects ------------------------------------------------------------------


def _cpus_under(obj) -> list:
    from m5.objects import BaseCPU

    return [o for o in obj.descendants() if isinstance(o, BaseCPU) and not getattr(o, "switched_out", False)]


def _layout(name: str, cluster_obj) -> ClusterLayout:
    cpus = _cpus_under(cluster_obj)
    if not cpus:
        raise ValueError(f"cluster {name}: no CPU under {cluster_obj.path()}")
    layout = ClusterLayout(name=name, cpus=[c.path() for c in cpus])
    l2 = getattr(cluster_obj, "l2", None)
    for cpu in cpus:
        for attr, table in (("dcache", layout.l1d), ("icache", layout.l1i)):
            cache = getattr(cpu, attr, None)
            if cache is not None:
                table[cpu.path()] = cache.path()
        if l2 is not None:
            layout.l2[cpu.path()] = l2.path()
    if l2 is not None:
        layout.l2_sharers[l2.path()] = len(cpus)
    return layout


def _lookup(system, path: str):
    obj = system
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


@dataclass
class PowerRun:
    """Returned by attach_power: call start() after m5.instantiate()."""

    epoch_ticks: int
    sidecar: dict

    def start(self) -> None:
        import m5

        m5.stats.periodicStatDump(self.epoch_ticks)


def attach_power(system, *, models: dict[str, tuple[str, str]], epoch: str = "100us", outdir: str = "m5out",
                 online: bool = False, set_voltages: bool = True) -> PowerRun:
    """Record clusters for cosim, set V-f voltages, optionally attach online power models. Call before m5.instantiate()."""
    import m5
    from m5.objects import MathExprPowerModel, PowerModel

    version = _gem5_version(m5)
    generation = "pre-v20.1" if _older_than(version, (20, 1)) else "v20.1+"
    epoch_s = _seconds(epoch)
    sidecar = {"schema": "cosim-run/1", "gem5_version": version, "naming_generation": generation,
               "epoch_s": epoch_s, "epoch_ticks": int(m5.ticks.fromSeconds(epoch_s)), "clusters": {}}
    for name, (path, model_name) in models.items():
        cluster_obj = _lookup(system, path)
        model = load_model(model_name)
        layout = _layout(name, cluster_obj)
        clk = _clock_domain(cluster_obj)
        periods = [int(m5.ticks.fromSeconds(1.0 / _hz(c))) for c in _as_list(clk.clock)]
        volts = _vf_voltages(model, [1e6 / p for p in periods], name) if set_voltages else None
        if volts is not None:
            clk.voltage_domain.voltage = [f"{v}V" for v in volts]
        sidecar["clusters"][name] = {
            "path": path, "cpus": layout.cpus, "clk_domain": clk.path(), "voltage_domain": clk.voltage_domain.path(),
            "dvfs_periods_ticks": periods, "dvfs_voltages_v": volts, "model": model["name"],
            "l1d": layout.l1d, "l1i": layout.l1i, "l2": layout.l2,
        }
        if online:
            exprs = cpu_expressions(model, layout, generation=generation)
            for cpu_obj in _cpus_under(cluster_obj):
                dyn, st = exprs[cpu_obj.path()]
                off = [MathExprPowerModel(dyn="0", st="0") for _ in range(3)]
                cpu_obj.power_state.default_state = "ON"
                cpu_obj.power_model = PowerModel(pm=[MathExprPowerModel(dyn=dyn, st=st), *off])
    Path(outdir).mkdir(parents=True, exist_ok=True)
    (Path(outdir) / "cosim-run.json").write_text(json.dumps(sidecar, indent=1) + "\n")
    return PowerRun(epoch_ticks=sidecar["epoch_ticks"], sidecar=sidecar)


def _vf_voltages(model: dict, freqs_mhz: list[float], cluster: str) -> list[float]:
    table = {f: v for f, v in model["vf_table"]["points_mhz_v"]}
    out = []
    for f in freqs_mhz:
        match = [v for tf, v in table.items() if abs(tf - f) <= 0.003 * tf]
        if not match:
            raise ValueError(f"cluster {cluster}: DVFS clock {f:.1f} MHz is not in the V-f table of {model['name']} "
                             f"({', '.join(f'{x:g}' for x in sorted(table))} MHz); use its frequencies or set_voltages=False")
        out.append(match[0])
    return out


def _gem5_version(m5) -> str:
    for get in (lambda: m5.defines.gem5Version, lambda: m5.core.gem5Version):
        try:
            return str(get())
        except AttributeError:
            continue
    return "unknown"


def _older_than(version: str, ref: tuple[int, int]) -> bool:
    nums = re.findall(r"\d+", version)
    return bool(nums) and tuple(int(n) for n in nums[:2]) < ref


_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12}


def _seconds(text: str) -> float:
    m = re.fullmatch(r"\s*([0-9.]+(?:e-?\d+)?)\s*(s|ms|us|ns|ps)\s*", str(text))
    if not m:
        raise ValueError(f"epoch {text!r}: give a time such as '100us' or '1ms'")
    return float(m.group(1)) * _UNITS[m.group(2)]


def _clock_domain(obj):
    """The clock domain of ``obj``, or of the nearest parent that sets one (stdlib boards set it on the board)."""
    while obj is not None:
        dom = getattr(obj, "clk_domain", None)
        if dom is not None and hasattr(dom, "clock"):
            return dom
        obj = getattr(obj, "_parent", None)
    raise ValueError("no clock domain with a 'clock' found on the cluster or its parents")


def _hz(clock) -> float:
    """A gem5 clock ('2GHz', '500ps', or a Clock param) -> Hz.  Only checked against the m5 stand-in."""
    if isinstance(clock, (int, float)):
        return float(clock)
    text = str(getattr(clock, "value", clock))
    m = re.fullmatch(r"([0-9.]+)\s*([kMG]?Hz|ps|ns)", text)
    if not m:
        raise ValueError(f"clock {text!r}: expected e.g. '1.8GHz' or '556ps'")
    value, unit = float(m.group(1)), m.group(2)
    return {"Hz": value, "kHz": value * 1e3, "MHz": value * 1e6, "GHz": value * 1e9, "ps": 1e12 / value, "ns": 1e9 / value}[unit]


def _as_list(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]
