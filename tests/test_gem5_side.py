"""gem5_scripts/cosim_gem5.py against the stand-in m5 package (tests/gem5_stub)."""

from __future__ import annotations

import json
import math
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import REPO, write_biglittle_run
from helpers import run_cosim as _cosim

from cosim import ClusterSpec, load_model, power_timeline, read_config, read_stats

sys.path.insert(0, str(Path(__file__).parent / "gem5_stub"))
sys.path.insert(0, str(REPO / "gem5_scripts"))
import cosim_gem5  # noqa: E402
import m5  # noqa: E402
from m5.objects import BaseCPU, Cache, MathExprPowerModel, Root, SimObject, SrcClockDomain, VoltageDomain  # noqa: E402

MODELS = {"big": ("system.bigCluster", "cortex-a15-walker2017"), "little": ("system.littleCluster", "cortex-a7-gemstone2018")}


def build_system():
    """The hand-built big.LITTLE run of tests/helpers.py, as gem5 objects."""
    m5.reset()
    root = Root()
    root.system = system = SimObject()
    for name, clocks in (("bigCluster", ["1.8GHz", "1GHz"]), ("littleCluster", ["1.4GHz", "1GHz"])):
        cluster = SimObject()
        setattr(system, name, cluster)
        cluster.voltage_domain = VoltageDomain(voltage=["1.0V"])
        cluster.clk_domain = SrcClockDomain(clock=clocks, voltage_domain=cluster.voltage_domain)
        kind = "BaseO3CPU" if name == "bigCluster" else "BaseMinorCPU"  # config.ini type= of gem5 v24
        cluster.cpus = [BaseCPU(clk_domain=cluster.clk_domain, type=kind) for _ in range(2)]
        for cpu in cluster.cpus:
            cpu.dcache, cpu.icache = Cache(), Cache()
        cluster.l2 = Cache()
    return system


def register_dump(stats: pd.DataFrame, epoch: int, formulas: set[str]) -> None:
    """Load one dump into the stand-in's stats registry, each stat with its gem5 kind."""
    row = stats.iloc[epoch]
    for name, value in row.items():
        if name in ("epoch", "start_tick", "end_tick", "duration_s"):
            continue
        if "::" in name:
            base, _, sub = name.partition("::")
            kind = "Formula" if sub == "total" and any(base.endswith("." + f) for f in formulas) else "Vector"
            m5.stats.register(base, kind, value)
        else:
            m5.stats.register(name, "Formula" if name == "simSeconds" else "Scalar", value)


def test_sidecar_records_clusters_and_sets_vf_voltages(tmp_path):
    system = build_system()
    run = cosim_gem5.attach_power(system, models=MODELS, epoch="100us", outdir=str(tmp_path))
    side = json.loads((tmp_path / "cosim-run.json").read_text())
    assert side["gem5_version"] == "24.0.0.1" and side["naming_generation"] == "v20.1+"
    assert side["epoch_s"] == pytest.approx(100e-6) and side["epoch_ticks"] == 100_000_000
    big = side["clusters"]["big"]
    assert big["cpus"] == ["system.bigCluster.cpus0", "system.bigCluster.cpus1"]
    assert big["clk_domain"] == "system.bigCluster.clk_domain" and big["voltage_domain"] == "system.bigCluster.voltage_domain"
    assert big["dvfs_periods_ticks"] == [556, 1000] and big["dvfs_voltages_v"] == [1.1741, 0.9437]
    assert big["model"] == "cortex-a15-walker2017" and big["l2"]["system.bigCluster.cpus1"] == "system.bigCluster.l2"
    assert side["clusters"]["little"]["dvfs_voltages_v"] == [1.253, 1.089]
    assert system.bigCluster.voltage_domain.voltage == ["1.1741V", "0.9437V"]  # no longer gem5's 1.0 V default
    assert side["stats_dumped"] == "cosim"
    m5.instantiate()
    # the stand-in has no stats tree to choose from: every dump stays a full one, and the sidecar says so
    with pytest.warns(UserWarning, match="cannot dump chosen statistics .* every epoch is a full stats dump"):
        run.start()
    assert m5.stats.dumps == [100_000_000]
    assert json.loads((tmp_path / "cosim-run.json").read_text())["stats_dumped"] == "full"


def test_full_stats_dumps_every_stat(tmp_path):
    run = cosim_gem5.attach_power(build_system(), models=MODELS, outdir=str(tmp_path), full_stats=True)
    assert run.wanted is None and json.loads((tmp_path / "cosim-run.json").read_text())["stats_dumped"] == "full"
    m5.instantiate()
    run.start()  # no warning: nothing to choose
    assert m5.stats.dumps == [100_000_000] and run.dumper is None


def _covered(name: str, bases: set[str], trees: set[str]) -> bool:
    base = name.partition("::")[0]
    return base in bases or any(base.startswith(t + ".") for t in trees if t)


def test_cheap_dumps_hold_every_stat_cosim_reads(tmp_path):
    """What the gem5 side dumps covers what cosim's offline commands ask the reader for, for every shipped CPU model
    (the names are cosim's own: the counters' stats_for in the run's naming generation, whatif's extras, roofline's
    op-class families)."""
    from cosim.counters.pmc import stats_for
    from cosim.dse.roofline import _OP_CLASS_FAMILIES
    from cosim.dse.whatif import whatif_stats
    from cosim.timeline.clusters import resolve_cluster, stats_needed

    write_biglittle_run(tmp_path)
    run = cosim_gem5.attach_power(build_system(), models=MODELS, outdir=str(tmp_path))
    bases, trees = run.wanted
    config = read_config(tmp_path / "config.ini")
    needed: set[str] = set()
    for model in ("cortex-a15-walker2017", "cortex-a15-gemstone2018", "cortex-a7-gemstone2018"):
        specs = [ClusterSpec(c, MODELS[c][0], load_model(model)) for c in MODELS]
        clusters = [resolve_cluster(config, spec, config.ticks_per_s) for spec in specs]
        needed |= {n for c, spec in zip(clusters, specs) for n in stats_for(c, spec.model.events, ("v20.1+",))}
        needed |= whatif_stats(config, specs) - stats_needed(config, specs)  # whatif's own: cycles, miss latencies, DRAM
    needed |= {
        f"system.{c}.cpus{i}.{family}::FloatAdd" for c in ("bigCluster", "littleCluster") for i in (0, 1) for family in _OP_CLASS_FAMILIES
    }
    missing = sorted(n for n in needed if not _covered(n, bases, trees))
    assert not missing, missing[:10]
    assert len(needed) > 150  # the check is not vacuous: every source of every event, for 4 CPUs and their caches
    for name in ("system.bigCluster.clk_domain.clock", "system.littleCluster.voltage_domain.voltage"):
        assert _covered(name, bases, trees)
    assert "" in trees and "system.littleCluster.cpus1.power_model" in trees  # Root's own stats (simTicks, ...); the online power
    assert not _covered("system.bigCluster.cpus0.fetch.nisnDist", bases, trees)  # what cosim never reads stays out


def test_online_and_offline_power_agree(tmp_path):
    folder = tmp_path / "m5out"
    stats = read_stats(write_biglittle_run(folder))
    system = build_system()
    cosim_gem5.attach_power(system, models={"little": MODELS["little"]}, outdir=str(tmp_path), online=True)
    models = [cpu.power_model[0].pm[0] for cpu in system.littleCluster.cpus]
    assert all(cpu.power_state.default_state == "ON" for cpu in system.littleCluster.cpus)
    for cpu in system.littleCluster.cpus:  # every power state prices the same: residency weights sum to 1
        states = cpu.power_model[0].pm
        assert len(states) == 4 and len({(m.dyn, m.st) for m in states}) == 1
    for pm in models:
        assert "::" not in pm.dyn and "::" not in pm.st
        assert not re.search(r"\d[eE][-+]?\d", pm.dyn + pm.st)  # no exponent notation: MathExpr would misread it
    formulas = set(cosim_gem5.load_event_map("v20.1+")["formulas"])
    register_dump(stats, 0, formulas)
    m5.instantiate()  # startup: every variable resolves
    offline = power_timeline(
        stats, read_config(folder / "config.ini"), [ClusterSpec("little", "system.littleCluster", load_model("cortex-a7-gemstone2018"))]
    )
    for epoch in range(len(stats)):
        register_dump(stats, epoch, formulas)
        online = sum(
            pm.evaluate(pm.dyn, voltage=1.253, clock_period=714) + pm.evaluate(pm.st, voltage=1.253, clock_period=714) for pm in models
        )
        assert online == pytest.approx(offline["power_w"][epoch], rel=1e-9)


def test_online_power_is_nan_where_cycles_exceed_clock_times_time(tmp_path):
    """The online model applies cosim power's cycle check: a CPU counting more than f * t + 0.5 % prices to NaN."""
    folder = tmp_path / "m5out"
    stats = read_stats(write_biglittle_run(folder))
    m5.reset()
    system = build_system()
    cosim_gem5.attach_power(system, models={"little": MODELS["little"]}, outdir=str(tmp_path), online=True)
    pm = system.littleCluster.cpus[0].power_model[0].pm[0]
    formulas = set(cosim_gem5.load_event_map("v20.1+")["formulas"])
    register_dump(stats, 0, formulas)
    m5.instantiate()
    ticked = 1e-3 * 1e12 / 714  # 1 ms at the LITTLE clock's 714-tick period
    for cycles, finite in (
        (round(ticked), True),
        (round(ticked * 1.004), True),
        (round(ticked * 1.006), False),
        (4 * round(ticked), False),
    ):
        m5.stats.register("system.littleCluster.cpus0.numCycles", "Scalar", cycles)
        power = pm.evaluate(pm.dyn, voltage=1.253, clock_period=714) + pm.evaluate(pm.st, voltage=1.253, clock_period=714)
        assert np.isfinite(power) == finite, (cycles, power)


def _form_by_hand(name: str, f_mhz: float, v: float) -> float:
    """The model file's static form a*f*V^2 + b*V*e^(k*(V - 1)) [W], written out from its stated coefficients, its
    leakage at the file's curve temperature at that clock where b is stated at a reference temperature (issue 50)."""
    form = json.loads((REPO / "models" / f"{name}.json").read_text())["static_form"]
    a, b, k = form["a_w_per_mhz_v2"], form["b_w_per_v"], form["k_per_v"]
    heat = 1.0
    term = form.get("temperature", {})
    if "reference_c" in term:
        clocks, temps = zip(*term["curve_mhz_c"])
        heat = math.exp(term["kappa_per_k"] * (float(np.interp(f_mhz, clocks, temps)) - term["reference_c"]))
    return a * f_mhz * v * v + b * v * math.exp(k * (v - 1.0)) * heat


def test_online_goes_online_between_the_models_table_points(tmp_path):
    """Online and offline static power are one function of clock and voltage, so a LITTLE cluster at 1200 MHz (between
    the A7 table's 1000 and 1400 MHz; its configured voltage kept) goes online, and each CPU's static expression is
    the file's form at gem5's clock (833 ticks: 1200.48 MHz) and voltage, its share of the two cores present
    (1 - 0.75 + 0.75 * 2 / 4 = 0.625, over 2 CPUs), written out here."""
    system = build_system()
    system.littleCluster.clk_domain = SrcClockDomain(clock=["1.2GHz"], voltage_domain=system.littleCluster.voltage_domain)
    for cpu in system.littleCluster.cpus:
        cpu.clk_domain = system.littleCluster.clk_domain
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = cosim_gem5.attach_power(system, models={"little": MODELS["little"]}, outdir=str(tmp_path), online=True, set_voltages=False)
    assert run.online == {"little": True}
    pm = system.littleCluster.cpus[0].power_model[0].pm[0]
    for period, v in ((833, 1.0), (833, 1.17), (714, 1.253), (715, 1.253)):
        m5.stats.register("system.littleCluster.cpus0.numCycles", "Scalar", 0.0)
        m5.stats.register("simSeconds", "Scalar", 1e-4)
        by_hand = _form_by_hand("cortex-a7-gemstone2018", 1e6 / period, v) * 0.625 / 2
        assert pm.evaluate(pm.st, voltage=v, clock_period=period) == pytest.approx(by_hand, rel=1e-12)


def test_online_refused_where_a_stat_is_a_vector_stays_offline(tmp_path):
    system = build_system()
    with pytest.warns(UserWarning, match=r"cluster big stays offline: .*0x73 \(DP_SPEC\).*statIssuedInstType_0::IntAlu"):
        run = cosim_gem5.attach_power(system, models=MODELS, outdir=str(tmp_path), online=True)
    assert run.online == {"big": False, "little": True}  # the A7 model still goes online
    assert not hasattr(system.bigCluster.cpus[0], "power_model") and system.littleCluster.cpus[0].power_model
    side = json.loads((tmp_path / "cosim-run.json").read_text())
    assert side["clusters"]["big"]["online"] is False and side["clusters"]["little"]["online"] is True


def test_attach_needs_the_system_under_root(tmp_path):
    m5.reset()
    system = SimObject()
    with pytest.raises(ValueError, match="not under a Root yet"):
        cosim_gem5.attach_power(system, models={}, outdir=str(tmp_path))


def test_expressions_in_gem5_grammar():
    """The stand-in reads expressions as gem5's MathExpr does, exponent pitfall included."""
    from m5 import mathexpr

    def value(expr, **v):
        return mathexpr.evaluate(mathexpr.parse(expr), v.__getitem__)

    assert value("5.7e-10*x", x=1.0) == pytest.approx(5.7 - 10.0)  # gem5 splits at the '-' before strtod sees it
    assert value(cosim_gem5._num(5.7e-10) + "*x", x=1.0) == 5.7e-10
    assert value("2*voltage+clock_period/1000", voltage=1.5, clock_period=500.0) == 3.5
    assert value("a - b - c", a=10.0, b=3.0, c=2.0) == 5.0 and value("a / b * c", a=8.0, b=2.0, c=3.0) == 12.0
    assert mathexpr.parse("system.l2.writebacks::total") is None  # '::' is no variable
    for x in (5.721403172781597e-10, -752.5773198197522, 1.253, 12345678.901234567, 3e-300):
        text = cosim_gem5._signed([(x, "v")])
        assert value(text, v=1.0) == x  # fixed point, explicit subtraction: the exact double comes back
    with pytest.raises(AttributeError, match="global frequency must be fixed"):
        m5.reset()
        m5.ticks.fromSeconds(1e-4)


def test_vf_table_must_cover_the_dvfs_clocks(tmp_path):
    system = build_system()
    with pytest.raises(ValueError, match=r"DVFS clock 1798.6 MHz is not in the V-f table of cortex-a7-gemstone2018"):
        cosim_gem5.attach_power(system, models={"big": ("system.bigCluster", "cortex-a7-gemstone2018")}, outdir=str(tmp_path))


def test_the_stand_in_refuses_what_gem5_refuses(tmp_path):
    system = build_system()
    with pytest.raises(RuntimeError, match="before m5.instantiate"):
        m5.stats.periodicStatDump(1000)
    with pytest.raises(RuntimeError, match="Invalid expression"):
        MathExprPowerModel(dyn="system.bigCluster.l2.writebacks::total * 2", st="0")
    bad = MathExprPowerModel(dyn="system.bigCluster.l2.writebacks * 2", st="0")
    system.bigCluster.cpus[0].power_model = bad
    with pytest.raises(RuntimeError, match="fatal: Failed to evaluate system.bigCluster.l2.writebacks"):
        m5.instantiate()
    m5.reset()
    system = build_system()
    bad = MathExprPowerModel(dyn="system.bigCluster.l2.writebacks * 2", st="0")
    system.bigCluster.cpus[0].power_model = bad
    m5.stats.register("system.bigCluster.l2.writebacks", "Vector", 5)
    m5.instantiate()
    with pytest.raises(RuntimeError, match="after m5.instantiate"):
        system.bigCluster.voltage_domain.voltage = ["1.2V"]
    with pytest.raises(RuntimeError, match="Unknown stat type"):
        bad.evaluate("system.bigCluster.l2.writebacks * 2", voltage=1.0, clock_period=500)
    assert bad.evaluate("2 * voltage + clock_period / 1e3", voltage=1.5, clock_period=500) == 3.5


def test_cosim_power_reads_the_sidecar(tmp_path):
    folder = tmp_path / "m5out"
    run = write_biglittle_run(folder)
    cosim_gem5.attach_power(build_system(), models=MODELS, outdir=str(folder))
    result = _cosim("power", run, "-o", tmp_path / "p.csv")  # no --cluster, no --model
    assert result.returncode == 0, result.stderr
    timeline = pd.read_csv(tmp_path / "p.csv")
    assert dict(zip(timeline["cluster"], timeline["model"])) == {"big": "cortex-a15-walker2017", "little": "cortex-a7-gemstone2018"}


def test_gem5_expr_command(tmp_path):
    write_biglittle_run(tmp_path)
    ok = _cosim("gem5-expr", "cortex-a7-gemstone2018", "--cluster", "little=system.littleCluster", "--config", tmp_path / "config.ini")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.count("dyn = ") == 2 and "system.littleCluster.cpus1.dcache.overallAccesses" in ok.stdout and "::" not in ok.stdout
    refused = _cosim("gem5-expr", "cortex-a15-walker2017", "--cluster", "big=system.bigCluster", "--config", tmp_path / "config.ini")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.count("\n") == 1 and "cannot run online in gem5" in refused.stderr


def test_example_configs_compile():
    """gem5 cannot run here: the examples are only compiled (their gem5 calls are not exercised)."""
    import py_compile

    for path in sorted((REPO / "gem5_scripts" / "examples").glob("*.py")):
        py_compile.compile(str(path), doraise=True)


def test_online_static_power_is_the_form_at_every_clock_gem5_rounds_to():
    """gem5's whole-tick periods 556, 714 and 1000 ticks are 1798.56, 1400.56 and 1000 MHz: the expression prices the
    form at those clocks themselves (no table clock substituted: the form is one continuous function), so 555-557
    ticks give three values within the clock's own 0.18 % steps.  MathExpr has no exp(): e^x is written as std::pow(e, x)."""
    model = json.loads((REPO / "models" / "cortex-a15-walker2017.json").read_text())
    expr = cosim_gem5.static_form_expr(model, "(1000000 / clock_period)")
    assert "exp" not in expr and "^" in expr
    from m5 import mathexpr

    values = []
    for period in (555, 556, 557, 714, 1000, 1250):
        v = 1.1741 if period < 600 else 1.0
        got = mathexpr.evaluate(mathexpr.parse(expr), {"clock_period": float(period), "voltage": v}.__getitem__)
        assert got == pytest.approx(_form_by_hand("cortex-a15-walker2017", 1e6 / period, v), rel=1e-12)
        values.append(got)
    # one tick (0.18 % of the clock) moves static power by less than the clock moved: at most f * V^2 scales with f
    assert abs(values[0] / values[1] - 1) < 1 / 556 and abs(values[2] / values[1] - 1) < 1 / 556
    with pytest.raises(cosim_gem5.ExpressionError, match="states no static_form"):
        cosim_gem5.static_form_expr({k: v for k, v in model.items() if k != "static_form"}, "f")
