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

Each epoch's dump holds only the statistics cosim reads (cosim_stats.py: gem5's own text writer, a
few hundred statistics instead of every one), so a 10 us timeline costs gem5 little;
``full_stats=True`` dumps every statistic instead.

Before instantiation it records the clusters in ``cosim-run.json`` (so ``cosim
power`` needs no --cluster flags), sets each cluster's voltage domain to the
model's V-f table for its DVFS clocks (gem5's big.LITTLE configs leave 1.0 V),
and with ``online=True`` attaches the same model as ``MathExprPowerModel``
expressions per CPU.  Only the Python standard library is used: gem5's own
Python may have no numpy or pandas.
"""

from __future__ import annotations

import json
import math
import re
import warnings
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
    kinds: dict[str, str] = field(default_factory=dict)  # CPU path -> o3, minor, simple, ... (see cpu_kind)


def load_model(name_or_path: str) -> dict:
    path = Path(name_or_path)
    if not path.exists():
        path = MODELS / f"{name_or_path}.json"
    return json.loads(path.read_text())


def load_event_map(generation: str, maps_dir: Path = MAPS) -> dict:
    if tomllib is None:
        raise RuntimeError("cosim_gem5 needs Python 3.11+ (tomllib) to read its counter maps")
    return tomllib.loads((maps_dir / GENERATION_FILES[generation]).read_text())


def cpu_kind(type_name: str) -> str:
    """gem5 CPU type -> the kind the counter maps name (the same rule as cosim.readers.gem5_config.cpu_kind)."""
    for kind, mark in (("o3", "O3"), ("minor", "Minor"), ("simple", "Simple"), ("inorder", "InOrder")):
        if mark in type_name:
            return kind
    return "other"


def _first_online_source(event: str, emap: dict, formulas: set[str], kind: str = "other"):
    """The first source of ``event`` for CPU ``kind`` whose stats MathExpr can read; (source, reasons refused).

    Offline cosim takes the first source for the kind whose stats the run prints; online the first
    MathExpr can read.  Both are the same source wherever this one is printed, which holds for the
    CPU kinds of gem5 v24 (docs/gem5-v24-counter-map.md).
    """
    refused = []
    for source in emap["events"][event]["sources"]:
        if source.get("cpus") and kind not in source["cpus"]:
            continue
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


def _num(value: float) -> str:
    """A number gem5's MathExpr reads back exactly: fixed point, no exponent, no sign.

    MathExpr (src/sim/mathexpr.cc) splits at the last '-' or '+' before it tries strtod, so
    '5.7e-10' would be read as 5.7 - 10; a 17-significant-digit decimal round-trips every double.
    """
    value = abs(float(value))
    if value == 0:
        return "0"
    digits = max(0, 17 - (int(math.floor(math.log10(value))) + 1))
    text = f"{value:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _signed(terms: list[tuple[float, str]]) -> str:
    """``[(coefficient, factor), ...]`` as ``a * x + b * y - c * z`` with explicit subtraction, never a unary minus."""
    out = ""
    for coefficient, factor in terms:
        if coefficient == 0:
            continue
        body = factor if abs(coefficient) == 1 else f"{_num(coefficient)} * {factor}"
        if not out:
            out = body if coefficient > 0 else f"0 - {body}"
        else:
            out += f" {'+' if coefficient > 0 else '-'} {body}"
    return out or "0"


def _count_expr(source: dict, layout: ClusterLayout, cpu: str, formulas: set[str]) -> str:
    """One CPU's share of an event count, as a MathExpr expression."""
    parts, sign = [], 1.0
    for token in source["expr"].split():
        if token in "+-":
            sign = 1.0 if token == "+" else -1.0
            continue
        if token == "0":
            continue
        scope, _, stat = token.partition(".")
        obj = _objects(layout, cpu, scope)
        name = f"{obj}.{_online_stat(stat, formulas)}"
        if not _EXPRESSIBLE.match(name):
            raise ExpressionError(f"stat {name} cannot be named in a gem5 expression ('-' or '::' in it)")
        share = layout.l2_sharers.get(obj, len(layout.cpus)) if scope == "l2" else 1
        parts.append((sign, name if share == 1 else f"({name} / {share})"))
    return _signed(parts)


def cpu_expressions(
    model: dict,
    layout: ClusterLayout,
    *,
    generation: str,
    ticks_per_s: float = 1e12,
    maps_dir: Path = MAPS,
    periods_ticks: list[int] | None = None,  # kept for callers; the static form needs no table clock
) -> dict[str, tuple[str, str]]:
    """``{cpu path: (dyn, st)}`` MathExprPowerModel expressions for each CPU of ``layout``.

    A CPU's dynamic power is the model's dynamic terms with that CPU's events (its
    share of a shared L2); its static power is the cluster's static power divided by
    the cluster's CPUs, so the CPUs add up to the cluster model.  ``voltage`` and
    ``clock_period`` [ticks] are MathExpr's own variables; rates are per
    ``simSeconds`` (stats are reset at every dump).  Static power is the model file's
    ``static_form`` (the one form cosim power prices with, cosim.models.static_form),
    at the domain's own clock and voltage: the same function offline and online.
    MathExpr has no exp(), but its '^' is std::pow, so e^x is written ``2.718281828459045 ^ (x)``:
    the same number to within a unit in the last place.

    Raises ExpressionError naming each event that has no source MathExpr can read.
    """
    emap = load_event_map(generation, maps_dir)
    formulas = set(emap.get("formulas", []))
    events = sorted({e.lower() for t in model["dynamic_terms"] for e in t["events"]})
    kinds = {cpu: layout.kinds.get(cpu, "other") for cpu in layout.cpus}
    sources, problems = {}, []
    for kind in sorted(set(kinds.values())):
        for event in events:
            source, refused = _first_online_source(event, emap, formulas, kind)
            if source is None:
                problems.append(f"{event} ({emap['events'][event]['name']}): " + "; ".join(refused))
            sources[kind, event] = source
    if problems:
        raise ExpressionError(
            f"model {model['name']} cannot run online in gem5: MathExprPowerModel reads only Scalar and Formula "
            f"stats by plain name, and " + " | ".join(problems) + ". Use the offline path (cosim power) for this model."
        )
    cores = model["cores_per_cluster"]
    f_mhz = f"({_num(ticks_per_s / 1e6)} / clock_period)"
    static = static_form_expr(model, f_mhz)
    # the envelope's core-count rule (cosim.models.envelope.cores_factor): per-core static follows the cores present
    phi = float(model.get("cores", {}).get("per_core_static_fraction", 1.0))
    scale = 1.0 - phi + phi * len(layout.cpus) / cores
    out = {}
    for cpu in layout.cpus:
        dyn = []
        for term in model["dynamic_terms"]:
            counts = _signed(
                [(float(w), f"({_count_expr(sources[kinds[cpu], e.lower()], layout, cpu, formulas)})") for e, w in term["events"].items()]
            )
            # beta * E * V^2 * f with E = count / simSeconds / cores / f, so f cancels
            dyn.append((term["coefficient"], f"({counts}) / simSeconds / {cores} * voltage * voltage"))
        guard = _cycles_guard(cpu, ticks_per_s)
        out[cpu] = (f"({_signed(dyn)}) * {guard}", f"({static}) * {_num(scale)} / {len(layout.cpus)} * {guard}")
    return out


def _cycles_guard(cpu: str, ticks_per_s: float) -> str:
    """1 while ``cpu`` counted no more cycles than its clock ticked (f * t + 0.5 % + 1, cosim power's check), else NaN.

    MathExpr has no comparison, but its '^' is std::pow, which is NaN for a negative base and exponent 0.5: the
    power of an epoch whose cycle count is impossible (a wrong clock, counts not reset) is NaN, never a number.
    """
    room = f"((simSeconds * {_num(ticks_per_s)} / clock_period) * 1.005 + 1 - {cpu}.numCycles)"
    return f"(({room} ^ 0.5 + 1) / ({room} ^ 0.5 + 1))"


def _power(name: str, exp: int) -> str:
    return "1" if exp == 0 else " * ".join([name] * exp)


# --- live gem5 objects ------------------------------------------------------------------


def _cpus_under(obj) -> list:
    from m5.objects import BaseCPU

    return [o for o in obj.descendants() if isinstance(o, BaseCPU) and not getattr(o, "switched_out", False)]


def _layout(name: str, cluster_obj) -> ClusterLayout:
    """CPU paths, kinds and caches of a cluster; caches are found by following port connections (any config,
    stdlib boards included), else by the attribute names of gem5's example clusters (dcache, icache, l2)."""
    cpus = _cpus_under(cluster_obj)
    if not cpus:
        raise ValueError(f"cluster {name}: no CPU under {cluster_obj.path()}")
    layout = ClusterLayout(name=name, cpus=[c.path() for c in cpus])
    for cpu in cpus:
        path = cpu.path()
        layout.kinds[path] = cpu_kind(str(getattr(cpu, "type", type(cpu).__name__)))
        l1d = _peer(getattr(cpu, "dcache_port", None)) or getattr(cpu, "dcache", None)
        l1i = _peer(getattr(cpu, "icache_port", None)) or getattr(cpu, "icache", None)
        l2 = _cache_below(l1d) or getattr(cluster_obj, "l2", None)
        for table, cache in ((layout.l1d, l1d), (layout.l1i, l1i), (layout.l2, l2)):
            if cache is not None:
                table[path] = cache.path()
    for l2 in set(layout.l2.values()):
        layout.l2_sharers[l2] = list(layout.l2.values()).count(l2)
    return layout


def _spare_cpus(system, clk_domain) -> list:
    """Switched-out CPUs clocked by ``clk_domain`` (as cosim's config reader pairs them with the cluster's cores)."""
    from m5.objects import BaseCPU

    return [
        o
        for o in system.descendants()
        if isinstance(o, BaseCPU) and getattr(o, "switched_out", False) and getattr(o, "clk_domain", None) is clk_domain
    ]


def _peer(port):
    """The SimObject at the other end of a port, or None (not connected yet, or no port)."""
    peer = getattr(port, "peer", None)
    obj = getattr(peer, "simobj", None)
    return obj if obj is not None and not isinstance(obj, str) else None


def _is_cache(obj) -> bool:
    return "Cache" in str(getattr(obj, "type", type(obj).__name__)) and hasattr(obj, "mem_side")


def _cache_below(l1):
    """The first cache below an L1: its mem_side peer, or a cache behind the crossbar it feeds."""
    if l1 is None or not _is_cache(l1):
        return None
    below = _peer(getattr(l1, "mem_side", None))
    if below is None or _is_cache(below):
        return below
    ports = getattr(below, "mem_side_ports", None)  # a crossbar
    for element in getattr(ports, "elements", None) or ([ports] if ports is not None else []):
        obj = _peer(element)
        if obj is not None and _is_cache(obj):
            return obj
    return None


def _lookup(system, path: str):
    obj = system
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


@dataclass
class PowerRun:
    """Returned by attach_power: call start() after m5.instantiate()."""

    epoch_s: float
    sidecar: dict
    online: dict[str, bool] = field(default_factory=dict)  # cluster -> its model runs inside gem5
    outdir: str = "m5out"
    wanted: tuple[set[str], set[str]] | None = None  # cosim_stats.wanted_stats; None: full dumps
    dumper: object = None  # the cosim_stats.CheapDump that stands in for m5.stats.dump, once started

    @property
    def epoch_ticks(self) -> int:
        """The epoch in ticks; gem5 can convert only once m5.instantiate() has fixed the tick rate."""
        import m5

        return int(m5.ticks.fromSeconds(self.epoch_s))

    def start(self, *, periodic: bool = True) -> None:
        """Periodic stats dumps, one per epoch (call after m5.instantiate()), of the statistics cosim reads.

        ``periodic=False`` schedules no dump: a config that dumps and resets in its own loop
        (``m5.stats.dump(); m5.stats.reset()``) then gets the same cheap dumps.
        """
        import m5

        if self.wanted is not None and self.dumper is None:
            self.dumper = _cosim_stats().install(*self.wanted)
            self.sidecar["stats_dumped"] = "cosim" if self.dumper is not None else "full"
            self.write_sidecar()
        if periodic:
            m5.stats.periodicStatDump(self.epoch_ticks)

    def write_sidecar(self) -> None:
        Path(self.outdir).mkdir(parents=True, exist_ok=True)
        (Path(self.outdir) / "cosim-run.json").write_text(json.dumps(self.sidecar, indent=1) + "\n")


def attach_power(
    system,
    *,
    models: dict[str, tuple[str, str]],
    epoch: str = "100us",
    outdir: str = "m5out",
    online: bool | dict[str, bool] = False,
    set_voltages: bool = True,
    full_stats: bool = False,
) -> PowerRun:
    """Record clusters for cosim, set V-f voltages, optionally attach online power models.

    Call once the system is under a ``Root`` and before ``m5.instantiate()``.  ``online`` is one
    answer for every cluster or one per cluster name; a cluster whose model gem5 cannot evaluate
    (it needs a Vector stat) stays offline, with a warning, and the others go on.  Each epoch's
    dump holds the statistics cosim reads (cosim_stats.py); ``full_stats=True`` dumps every one.
    """
    import m5

    if str(system.path()).startswith("<orphan"):
        raise ValueError(
            "attach_power: the system is not under a Root yet; create Root(system=...) first, then attach, then m5.instantiate()"
        )
    version = _gem5_version(m5)
    generation = "pre-v20.1" if _older_than(version, (20, 1)) else "v20.1+"
    epoch_s = _seconds(epoch)
    tps = _ticks_per_s()
    sidecar = {
        "schema": "cosim-run/1",
        "gem5_version": version,
        "naming_generation": generation,
        "epoch_s": epoch_s,
        "epoch_ticks": int(round(epoch_s * tps)),
        "stats_dumped": "full" if full_stats else "cosim",
        "clusters": {},
    }
    run = PowerRun(epoch_s=epoch_s, sidecar=sidecar, outdir=str(outdir))
    for name, (path, model_name) in models.items():
        cluster_obj = _lookup(system, path)
        model = load_model(model_name)
        layout = _layout(name, cluster_obj)
        clk = _clock_domain(cluster_obj)
        periods = [int(round(tps / _hz(c))) for c in _as_list(clk.clock)]
        volts = _vf_voltages(model, [tps / p / 1e6 for p in periods], name) if set_voltages else None
        if volts is not None:
            clk.voltage_domain.voltage = [f"{v}V" for v in volts]
        sidecar["clusters"][name] = {
            "path": path,
            "cpus": layout.cpus,
            "clk_domain": clk.path(),
            "voltage_domain": clk.voltage_domain.path(),
            "dvfs_periods_ticks": periods,
            "dvfs_voltages_v": volts,
            "model": model["name"],
            "l1d": layout.l1d,
            "l1i": layout.l1i,
            "l2": layout.l2,
            # switched-out CPUs that take over this cluster's cores later (se.py's switch_cpus): their stats are dumped too
            "spare_cpus": [c.path() for c in _spare_cpus(system, clk)],
        }
        wanted = online.get(name, False) if isinstance(online, dict) else online
        lo, top = min(model["training"]["freq_mhz"]), max(model["training"]["freq_mhz"])
        clocks = [tps / p / 1e6 for p in periods]
        outside = [f for f in clocks if f > top * 1.003 or f < lo * 0.997]
        if wanted and outside:
            # online power has no flag or interval: an extrapolated clock is priced offline, flagged and widened
            warnings.warn(
                f"cosim: cluster {name} stays offline: {outside[0]:.0f} MHz is outside {model['name']}'s trained clocks "
                f"{lo:g}-{top:g} MHz; cosim power prices it offline, flagged extrapolated",
                stacklevel=2,
            )
            wanted = False
        run.online[name] = wanted and _attach_online(cluster_obj, model, layout, generation, tps, periods)
        sidecar["clusters"][name]["online"] = run.online[name]
    if not full_stats:
        run.wanted = _wanted_stats(system, sidecar["clusters"], generation)
        if run.wanted is None:
            sidecar["stats_dumped"] = "full"
    run.write_sidecar()
    return run


def _wanted_stats(system, clusters: dict, generation: str):
    """cosim_stats.wanted_stats for these clusters and the system's memories; None (full dumps) without tomllib."""
    try:
        emap = load_event_map(generation)
    except RuntimeError as err:
        warnings.warn(f"cosim: {err}; every epoch is a full stats dump", stacklevel=3)
        return None
    return _cosim_stats().wanted_stats(clusters, emap, [m.path() for m in _memories(system)])


def _cosim_stats():
    """The sibling module, whether this one was imported from gem5_scripts/ on sys.path or as cosim._gem5_scripts."""
    try:
        import cosim_stats
    except ImportError:
        from . import cosim_stats
    return cosim_stats


def _memories(system) -> list:
    """Memory controllers and the memories behind them (MemCtrl, DRAMInterface, SimpleMemory, ...)."""
    import m5.objects

    kinds = tuple(getattr(m5.objects, k) for k in ("AbstractMemory", "MemCtrl", "MemInterface") if hasattr(m5.objects, k))
    return [o for o in system.descendants() if kinds and isinstance(o, kinds)]


def static_form_expr(model: dict, f_mhz: str) -> str:
    """The model file's static form, a*f*V^2 + b*V*e^(k*(V - 1)) [W], as a MathExpr of ``voltage`` and the clock
    ``f_mhz`` [MHz] (positive constants only: MathExpr reads no signs).  Its temperature term, where the file states
    one, is at the board's temperature along its curve, as cosim power prices with no --temperature: with a
    ``reference_c`` (b at a fixed die temperature), the leakage carries e^(kappa*(T_curve(f) - reference_c)),
    T_curve the file's ``curve_mhz_c`` interpolated (held at its ends) written with MathExpr's operators alone
    (ramp(x) = (x + (x*x)^0.5) / 2); without one, the factor is 1.
    MathExpr's ``temp`` (what a gem5 ThermalModel drives) is not read: an undriven ``temp`` would price leakage at its
    initial value; ``cosim power`` on the stats prices it at the temperature the run's own power produces
    (docs/explanation/thermal.md).  Raises ExpressionError where the file has none."""
    form = model.get("static_form")
    keys = ("a_w_per_mhz_v2", "b_w_per_v", "k_per_v")
    if not isinstance(form, dict) or not all(isinstance(form.get(k), (int, float)) and form[k] >= 0 for k in keys):
        raise ExpressionError(
            f"model {model['name']} states no static_form (a, b, k >= 0), the static power cosim prices with; "
            "use the offline path (cosim power) for this model"
        )
    a, b, k = (float(form[key]) for key in keys)
    heat = ""
    term = form.get("temperature") or {}
    if "reference_c" in term and float(term.get("kappa_per_k", 0)) > 0:
        kappa = float(term["kappa_per_k"])
        curve = sorted((float(p[0]), float(p[1])) for p in term["curve_mhz_c"])
        b = b * math.exp(kappa * (curve[0][1] - float(term["reference_c"])))  # e^(kappa (T_0 - ref)), folded into b
        ramps = []
        for (f0, t0), (f1, t1) in zip(curve, curve[1:]):
            if t1 > t0:  # the curve is non-decreasing: each segment adds its rise between its clocks

                def ramp(at: float) -> str:
                    x = f"({f_mhz} - {_num(at)})"
                    return f"({x} + ({x} * {x}) ^ 0.5) / 2"

                ramps.append(f"{_num((t1 - t0) / (f1 - f0))} * ({ramp(f0)} - {ramp(f1)})")
        if ramps:
            heat = f" * {_num(math.e)} ^ ({_num(kappa)} * ({' + '.join(ramps)}))"
    return f"{_num(a)} * {f_mhz} * voltage * voltage + {_num(b)} * voltage * {_num(math.e)} ^ ({_num(k)} * voltage - {_num(k)}){heat}"


def _attach_online(cluster_obj, model: dict, layout: ClusterLayout, generation: str, tps: float, periods: list[int]) -> bool:
    """One MathExprPowerModel per CPU and power state; False (and a warning) where the model cannot run online."""
    from m5.objects import MathExprPowerModel, PowerModel

    try:
        exprs = cpu_expressions(model, layout, generation=generation, ticks_per_s=tps, periods_ticks=periods)
    except ExpressionError as err:
        warnings.warn(f"cosim: cluster {layout.name} stays offline: {err}", stacklevel=3)
        return False
    for cpu_obj in _cpus_under(cluster_obj):
        dyn, st = exprs[cpu_obj.path()]
        cpu_obj.power_state.default_state = "ON"  # never UNDEFINED, which no model prices
        # gem5 weights each power state's model by its residency (ON, CLK_GATED, SRAM_RETENTION, OFF);
        # the Walker model prices the cluster whatever the state (a CPU in WFI still leaks and its
        # counters simply stop), so every state gets the same expressions and the weights sum to 1
        cpu_obj.power_model = PowerModel(pm=[MathExprPowerModel(dyn=dyn, st=st) for _ in range(4)])
    return True


def _ticks_per_s() -> float:
    """The simulation tick rate as it is now (gem5's default 1e12 until a config sets another)."""
    try:
        import _m5.core

        return float(_m5.core.getClockFrequency())
    except (ImportError, AttributeError):
        return 1e12


def _vf_voltages(model: dict, freqs_mhz: list[float], cluster: str) -> list[float]:
    table = {f: v for f, v in model["vf_table"]["points_mhz_v"]}
    out = []
    for f in freqs_mhz:
        match = [v for tf, v in table.items() if abs(tf - f) <= 0.003 * tf]
        if not match:
            raise ValueError(
                f"cluster {cluster}: DVFS clock {f:.1f} MHz is not in the V-f table of {model['name']} "
                f"({', '.join(f'{x:g}' for x in sorted(table))} MHz); use its frequencies, or keep the configured voltages "
                f"(set_voltages=False; the example configs' --keep-voltages)"
            )
        out.append(match[0])
    return out


def _gem5_version(m5) -> str:
    """gem5 keeps its version in the C++ core (_m5.core.gem5Version); older releases also in m5.defines."""
    try:
        import _m5.core

        return str(_m5.core.gem5Version)
    except (ImportError, AttributeError):
        pass
    try:
        return str(m5.defines.gem5Version)
    except AttributeError:
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
    """A gem5 clock -> Hz: a Clock param (``.value``: the period in seconds, or in ticks when ``.ticks``), or text."""
    if isinstance(clock, (int, float)):
        return float(clock)
    value = getattr(clock, "value", None)
    if isinstance(value, (int, float)) and value > 0:
        return _ticks_per_s() / value if getattr(clock, "ticks", False) else 1.0 / value
    text = str(clock)
    m = re.fullmatch(r"([0-9.]+)\s*([kMG]?Hz|ps|ns)", text)
    if not m:
        raise ValueError(f"clock {text!r}: expected e.g. '1.8GHz' or '556ps'")
    number, unit = float(m.group(1)), m.group(2)
    return {"Hz": number, "kHz": number * 1e3, "MHz": number * 1e6, "GHz": number * 1e9, "ps": 1e12 / number, "ns": 1e9 / number}[unit]


def _as_list(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]
