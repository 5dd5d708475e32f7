"""Right at every edge (issue 39): off the V-f table, across the top clock, below training, and the refusals' texts.

Each expectation is physics or a hand computation written here (static power rises with V and f, the A15's table
point), never cosim's own output.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from helpers import GEM5_RUNS, REPO, needs_shared
from helpers import run_cosim as cosim
from test_cli import assert_one_line_error

from cosim.models.envelope import static_at_w
from cosim.models.modelfile import load_model, operating_point
from cosim.models.walker import static_power_w

DEMO = REPO / "traces" / "cosim-v24-se-biglittle-1800-1400MHz" / "stats.txt.gz"
BIG = ("--model", "cortex-a15-walker2017", "--cluster", "big=system.bigCluster")
A15 = load_model("cortex-a15-walker2017")
# the A15's table point at its top clock: 1800 MHz, 1.1741 V (models/cortex-a15-walker2017.json)
TOP_F, TOP_V = 1800.0, 1.1741
STATIC_TOP_W = float(static_power_w(np.array([TOP_F]), np.array([TOP_V]), A15.static)[0])  # 0.802 W


# steepest leakage growth in V a CMOS process shows [1/V]: subthreshold current grows at most ~e-fold per 0.1 V
# through DIBL (Butts & Sohi, MICRO 2000); switching alone grows as V^2
K_MAX_PER_V = 10.0


def _voltage_bounds_w(v: float) -> tuple[float, float]:
    """Static power [W] at 1800 MHz and ``v`` above the curve's 1.1741 V, from the published polynomial there (by
    hand): at least switching's V^2 growth, at most that times the steepest leakage, exp(10/V x dV)."""
    low = STATIC_TOP_W * (v / TOP_V) ** 2
    return low, low * math.exp(K_MAX_PER_V * (v - TOP_V))


def test_a_voltage_off_the_curve_at_a_table_clock_follows_physics():
    """1.30 V at 1800 MHz: static power between switching alone from the table point (x 1.226) and the steepest
    leakage (x 1.226 x 3.52), where the raw polynomial gives 8.16 W (outside); on the curve it is the published
    polynomial within the model's SER; and it rises with V through the curve's voltage (no step where training ends)."""
    low, high = _voltage_bounds_w(1.30)
    s = float(static_at_w(A15, np.array([1800.0]), np.array([1.30]))[0])
    assert low < s < high
    assert static_power_w(np.array([1800.0]), np.array([1.30]), A15.static)[0] > high
    assert static_at_w(A15, np.array([TOP_F]), np.array([TOP_V]))[0] == pytest.approx(STATIC_TOP_W, abs=A15.ser_w)
    v = np.arange(1.15, 1.25, 0.0005)
    assert (np.diff(static_at_w(A15, np.full(v.shape, 1800.0), v)) > 0).all()


def test_cosim_power_at_a_voltage_above_training(tmp_path):
    """The demo's big cluster (2 of the A15's 4 cores: static x (1 - 0.75 + 0.75 x 2 / 4) = 0.625) at --voltage
    big=1.30: every epoch's static inside the physical bounds above, flagged off the curve, and an interval wider
    than +-2 SER."""
    out = tmp_path / "p.csv"
    result = cosim("power", DEMO, *BIG, "--voltage", "big=1.30", "-o", out)
    assert result.returncode == 0, result.stderr
    t = pd.read_csv(out)
    low, high = (0.625 * b for b in _voltage_bounds_w(1.30))
    assert ((t["static_w"] > low) & (t["static_w"] < high)).all()
    assert ((t["power_hi_w"] - t["power_w"]) > 2 * A15.ser_w * 1.5).all()
    assert t["flags"].str.contains("voltage_outside_training").all() and t["flags"].str.contains("voltage_off_curve").all()


def test_static_power_never_falls_as_the_clock_rises_across_the_top_clock():
    """Along the A15's V-f curve (its table voltage, continued above 1800 MHz) static power rises with f and V,
    through gem5's tick rounding and across the top clock; gem5's 1798.56 MHz (a 556 ps period) at the table's
    voltage is the published polynomial at 1800 MHz within the model's SER."""
    f = np.arange(1780.0, 1840.0, 0.25)
    s = static_at_w(A15, f, operating_point(A15, f).voltage_v)
    assert (np.diff(s) > 0).all()
    assert static_at_w(A15, np.array([1e6 / 556]), np.array([TOP_V]))[0] == pytest.approx(STATIC_TOP_W, abs=A15.ser_w)


def test_whatif_at_the_runs_own_clock_matches_cosim_power(tmp_path):
    """The what-if at the run's own clock and at the table's 1800 MHz price the same operating point: their energies
    differ only by the on-clock time's 1800 / 1798.56 (0.08 %), not by the polynomial's 1.7 % slope between them."""
    out = tmp_path / "w.csv"
    result = cosim("whatif", DEMO, *BIG, "--freqs", "big=1798.56,1800,1803,1805,1806", "-o", out)
    assert result.returncode == 0, result.stderr
    w = pd.read_csv(out).set_index("big_freq_mhz")
    assert w.loc[1800.0, "energy_j"] == pytest.approx(w.loc[1798.56, "energy_j"], rel=1800 / 1798.56 - 1)
    # within the tick rounding the same table point; past it, more voltage: never less energy
    assert (np.diff(w["energy_j"].to_numpy()) >= 0).all()


@needs_shared
def test_a_clock_below_the_lowest_trained_one_is_priced_flagged(tmp_path):
    """gem5's O3 run at 200 MHz, a third of the default A15 model's lowest trained clock (600 MHz): its polynomial
    there (0.2361 W) rose above the 600 MHz point's 0.1571 W, so it was refused; the form falls with f and V, so
    cosim power prices it below 0.1571 W (by hand from gs-A15.params), flagged and with an interval, and the what-if
    of the 600 MHz run asked for 200 MHz prices it flagged too."""
    c = (-681.604059986, 0.117551170367, 2277.16890778, -0.491846201277, -2528.1574686, 0.645456768269, 932.937276293, -0.271180478671)
    f, v = 600.0, 0.912
    at_600 = c[0] + c[1] * f + c[2] * v + c[3] * f * v + c[4] * v**2 + c[5] * f * v**2 + c[6] * v**3 + c[7] * f * v**3
    out = tmp_path / "p.csv"
    power = cosim("power", GEM5_RUNS / "cosim-v24-se-o3-200MHz", "-o", out)
    assert power.returncode == 0, power.stderr
    t = pd.read_csv(out)
    assert ((t["static_w"] > 0) & (t["static_w"] < at_600)).all()
    assert t["flags"].str.contains("freq_outside_training").all() and (t["power_hi_w"] > t["power_w"]).all()
    whatif = cosim("whatif", GEM5_RUNS / "cosim-v24-se-o3-600MHz", "--freqs", "cpu_clk_domain=200,600", "-o", tmp_path / "w.csv")
    assert whatif.returncode == 0, whatif.stderr
    w = pd.read_csv(tmp_path / "w.csv").set_index("cpu_clk_domain_freq_mhz")
    assert bool(w.loc[200.0, "extrapolated"]) and not bool(w.loc[600.0, "extrapolated"])


@needs_shared
def test_the_4ghz_refusal_names_the_voltage_outside_the_physical_range(tmp_path):
    """starter_se's 4 GHz default on the A15 with --extrapolate: the A15's V-f curve continued to 4000 MHz (lines
    through its top points rise ~0.39 mV/MHz) asks for well above 1.5 V, beyond any rated 28 nm supply: refused in one
    sentence naming the clock, the voltage and the range, with the ways out."""
    run = GEM5_RUNS / "public-new-2022-arm-se-minor-starterse-cpucluster"
    result = cosim("power", run, "--model", "cortex-a15-walker2017", "--extrapolate", "-o", tmp_path / "p.csv")
    assert_one_line_error(result, "at 4000 MHz is outside 0.6-1.5 V", "--keep-implausible", "cosim whatif --freqs")
    m = re.search(r"([0-9.]+) V at 4000 MHz", result.stderr)
    assert m and float(m[1]) > 1.5


CLOCK_CHANGE = REPO / "tests" / "data" / "clock-change-1000-1800MHz"  # tests/clock_change_fixture.py
TWO = (*BIG, "--model", "cortex-a7-gemstone2018", "--cluster", "little=system.littleCluster")


def test_a_clock_change_inside_an_epoch_is_split_from_the_cycles_gem5_counted(tmp_path):
    """Epoch 1 is gem5's 100 us at 1000 MHz then 100 us at 1798.56 MHz (a 556 ps period): its big cores counted
    100,000 + 179,856 cycles, not the 359,712 of 200 us at its end clock.  Half its time was at each clock (gem5's
    simTicks: 1e8 + 1e8), so its static power is the mean of the A15's at (1000 MHz, 0.9437 V) and (1798.56 MHz,
    1.1741 V: the 1800 MHz table point's), times 0.625 for 2 of 4 cores; epochs 0 and 2 stay at their one clock."""
    out = tmp_path / "p.csv"
    # at one stated die temperature (the thermal loop would give each epoch its own): the training board's at 1000 MHz
    curve = dict(map(tuple, A15.raw["static_form"]["temperature"]["curve_mhz_c"]))
    t_c = curve[1000.0]
    result = cosim("power", CLOCK_CHANGE, *TWO, "--temperature", str(t_c), "-o", out)
    assert result.returncode == 0, result.stderr
    assert "the clock changed inside epoch 1, from 1000 to 1798.56 MHz after 50.0% of it" in result.stderr
    big = pd.read_csv(out).query("cluster == 'big'").set_index("epoch")
    # the model file's static form by hand, S = a f V^2 + b V e^(k (V - 1)) e^(kappa (T - T_ref)), at the stated T
    form = A15.raw["static_form"]
    # gem5's clocks: 1000 MHz and its 556 ps period (1798.56 MHz), priced at the table's 1800 MHz point's voltage
    f, v = np.array([1000.0, 1e6 / 556]), np.array([0.9437, TOP_V])
    heat = math.exp(form["temperature"]["kappa_per_k"] * (t_c - form["temperature"]["reference_c"]))
    s = form["a_w_per_mhz_v2"] * f * v**2 + form["b_w_per_v"] * v * np.exp(form["k_per_v"] * (v - 1)) * heat
    # at 1000 MHz the stated T is the board's there, where the form is the published polynomial within its fit (2 mW)
    assert s[0] == pytest.approx(static_power_w(f[:1], v[:1], A15.static)[0], abs=0.002)
    assert big.loc[1, "static_w"] == pytest.approx(0.625 * (0.5 * s[0] + 0.5 * s[1]), rel=1e-6)
    assert big.loc[0, "static_w"] == pytest.approx(0.625 * s[0], rel=1e-6)
    assert big.loc[2, "static_w"] == pytest.approx(0.625 * s[1], rel=1e-6)
    # the clock the cores ticked at on average: 279,856 cycles in 200 us
    assert big.loc[1, "freq_mhz"] == pytest.approx(279_856 / 200, rel=1e-5)
    assert "clock_change_split" in big.loc[1, "flags"] and "clock_change_split" not in big.loc[2, "flags"]


@needs_shared
def test_a_split_epoch_costs_what_its_two_recorded_halves_cost(tmp_path):
    """The spliced epoch is dump 4 of the 1000/600 MHz run plus dump 4 of the 1800/1400 MHz run: priced split it costs
    what those two real epochs cost priced on their own (their per-cycle event rates differ, which the split averages:
    within 3 %: +1.8 % big, +1.2 % LITTLE).  Priced all at its end clock, as before the split, it cost 0.276 mJ on the
    big cluster against these halves' 0.213 mJ: +29.7 %."""
    out = tmp_path / "p.csv"
    assert cosim("power", CLOCK_CHANGE, *TWO, "-o", out).returncode == 0
    split = pd.read_csv(out).query("epoch == 1").set_index("cluster")["energy_j"]
    halves = {}
    for name in ("cosim-v24-se-biglittle-o3-1000MHz-minor-600MHz", "cosim-v24-se-biglittle-o3-1800MHz-minor-1400MHz"):
        whole = tmp_path / f"{name}.csv"
        assert cosim("power", GEM5_RUNS / name, *TWO, "-o", whole).returncode == 0
        halves[name] = pd.read_csv(whole).query("epoch == 4").set_index("cluster")["energy_j"]
    truth = sum(halves.values())
    assert split["big"] == pytest.approx(truth["big"], rel=0.03) and split["little"] == pytest.approx(truth["little"], rel=0.03)


def test_the_whatif_refuses_a_clock_change_inside_an_epoch(tmp_path):
    """The what-if rescales an epoch from the one clock it ran at: it refuses the split epoch in one line, naming it."""
    result = cosim("whatif", CLOCK_CHANGE, *BIG, "-o", tmp_path / "w.csv")
    assert_one_line_error(result, "epoch 1, cluster 'big': the clock changed from 1000 to 1798.56 MHz inside this epoch", "cosim power")


# gem5's tests/configs/switcheroo.py: one CPU of each type on one core (system.cpu), all but the first switched out,
# switched in turn; here each runs one 1 ms epoch at 1 GHz (cpu0 atomic, cpu1 timing, cpu2 Minor, cpu3 O3)
SWITCHEROO = ("AtomicSimpleCPU", "TimingSimpleCPU", "MinorCPU", "DerivO3CPU")


def _switcheroo_run(folder):
    from helpers import write_stats

    folder.mkdir()
    sections = [
        ("root", {"type": "Root", "children": "system"}),
        ("system", {"type": "ArmSystem", "children": "cpu0 cpu1 cpu2 cpu3 cpu_clk_domain voltage_domain"}),
        ("system.voltage_domain", {"type": "VoltageDomain", "voltage": "1.0"}),
        ("system.cpu_clk_domain", {"type": "SrcClockDomain", "clock": "1000", "voltage_domain": "system.voltage_domain"}),
    ]
    for i, kind in enumerate(SWITCHEROO):
        cpu = {"type": kind, "clk_domain": "system.cpu_clk_domain", "switched_out": str(i > 0).lower()}
        if i == 0:  # the caches belong to the core; switched-out CPUs connect to them when switched in
            cpu |= {"children": "dcache icache", "dcache_port": "system.cpu0.dcache.cpu_side", "icache_port": "system.cpu0.icache.cpu_side"}
        sections.append((f"system.cpu{i}", cpu))
    for cache in ("dcache", "icache"):
        sections.append((f"system.cpu0.{cache}", {"type": "Cache", "size": "32768", "cpu_side": f"system.cpu0.{cache}_port"}))
    (folder / "config.ini").write_text("\n".join(f"[{n}]\n" + "\n".join(f"{k}={v}" for k, v in p.items()) + "\n" for n, p in sections))
    dumps = []
    for epoch, kind in enumerate(SWITCHEROO):
        cpu = f"system.cpu{epoch}"
        d = {"simSeconds": 0.001, "simTicks": 1e9, "finalTick": 1e9 * (epoch + 1), "simFreq": 1e12, "system.cpu_clk_domain.clock": 1000}
        d[f"{cpu}.numCycles"] = 1_000_000  # the one CPU switched in ticks every cycle of the epoch; the others none
        if "Simple" in kind:
            d[f"{cpu}.exec_context.thread_0.numBusyCycles"] = 900_000
        else:
            d[f"{cpu}.idleCycles"] = 100_000
        d[f"{cpu}.commitStats0.numInsts"] = 500_000
        d |= {f"{cpu}.commitStats0.committedInstType::{op}": n for op, n in (("IntAlu", 300_000), ("IntMult", 1000), ("IntDiv", 10))}
        d |= {
            f"system.cpu0.{c}.{s}": 1000
            for c in ("dcache", "icache")
            for s in ("overallAccesses::total", "overallMisses::total", "WriteReq.mshrMisses::total")
        }
        dumps.append(d)
    return write_stats(folder / "stats.txt", dumps)


def test_a_switcheroo_runs_pricing_and_messages_agree_per_cpu(tmp_path):
    """The O3 CPU picks the out-of-order A15 model (as for any O3 run); the note says the core is switched with the
    in-order CPUs, the warning names exactly those three (AtomicSimpleCPU, TimingSimpleCPU, MinorCPU: gem5's in-order
    kinds), and the rows flagged core_kind_mismatch are exactly the epochs they ran (0, 1, 2), not the O3's (3)."""
    stats = _switcheroo_run(tmp_path / "m5out")
    out = tmp_path / "p.csv"
    result = cosim("power", stats, "-o", out)
    assert result.returncode == 0, result.stderr
    note = next(line for line in result.stderr.splitlines() if "priced with" in line)
    assert "1 x DerivO3CPU (out-of-order), switched in turn with AtomicSimpleCPU, MinorCPU, TimingSimpleCPU" in note
    assert "priced with cortex-a15-gemstone2018" in note
    warning = next(line for line in result.stderr.splitlines() if "measured on out-of-order cores" in line)
    named = [f"system.cpu{i} ({kind})" for i, kind in enumerate(SWITCHEROO[:3])]
    assert ", ".join(named) + " are in-order" in warning and "system.cpu3 (" not in warning
    t = pd.read_csv(out)
    flagged = t["flags"].fillna("").str.contains("core_kind_mismatch")
    assert t.loc[flagged, "epoch"].tolist() == [0, 1, 2]


def test_power_cap_compares_the_peaks_upper_end(tmp_path):
    """--power-cap 1.15 W: the fastest clock whose peak plus the A15 model's interval stays under the cap, not the
    fastest whose point estimate does (kernel-choose caps the same way).  The interval at the trained clocks, on the
    V-f table: +-2 SER (2 x 0.05165 W, its published fit) plus the assumed per-core share's spread, as the demo's big
    cluster powers 2 of the A15's 4 cores: the four-core static power x (1 - 2/4) x max(0.75 - 0.5, 1.0 - 0.75), the
    static power S = a f V^2 + b V e^(k (V - 1)) e^(kappa (T - T_ref)) at one stated die temperature (the thermal loop
    would predict each row's own), all from models/cortex-a15-walker2017.json by hand."""
    t_c = 50.0  # stated: the file's reference temperature
    out = tmp_path / "w.csv"
    result = cosim("whatif", DEMO, *BIG, "--power-cap", "1.15", "--temperature", str(t_c), "-o", out)
    assert result.returncode == 0, result.stderr
    w = pd.read_csv(out)
    inside = w["big_freq_mhz"] <= 1800  # the trained clocks: no extrapolation part there
    form = A15.raw["static_form"]
    table = dict(map(tuple, A15.raw["vf_table"]["points_mhz_v"]))
    f = w["big_freq_mhz"].to_numpy(dtype=float)
    v = np.array([table.get(x, np.nan) for x in f])
    heat = math.exp(form["temperature"]["kappa_per_k"] * (t_c - form["temperature"]["reference_c"]))
    s4 = form["a_w_per_mhz_v2"] * f * v**2 + form["b_w_per_v"] * v * np.exp(form["k_per_v"] * (v - 1)) * heat
    half = 2 * 0.05165 + s4 * (1 - 2 / 4) * 0.25
    assert (w.loc[inside, "peak_power_w_hi"] - w.loc[inside, "peak_power_w"]).to_numpy() == pytest.approx(half[inside], abs=1e-4)
    surely = w[w["peak_power_w"] + half <= 1.15]
    point = w[w["peak_power_w"] <= 1.15]
    assert surely["big_freq_mhz"].max() < point["big_freq_mhz"].max()  # the case: the point estimate alone would pick faster
    assert f"big {surely.loc[surely['runtime_s'].idxmin(), 'big_freq_mhz']:g} MHz" in result.stdout
    assert "--power-cap compared the peak's upper end" in result.stdout


# --- every refusal's way out exists for that command: each option a refusal suggests is run ----------------------------

_WAY = re.compile(r"(?:cosim (?P<cmd>[a-z][a-z-]*) )?(?P<opt>--[a-z][a-z-]*)")
STARTER = GEM5_RUNS / "public-new-2022-arm-se-minor-starterse-cpucluster"
OCELOT = REPO / "traces" / "cosim-ocelot-video.trace"  # a GPU trace for cosim soc
# (command line refused, what its refusal says, {(command, option it suggests): the command line that takes it})
WAYS_OUT = [
    pytest.param(
        ("power", STARTER, "--model", "cortex-a15-walker2017"),
        "beyond its extrapolation band",
        {
            ("power", "--extrapolate"): ("power", STARTER, "--model", "cortex-a15-walker2017", "--extrapolate", "--keep-implausible"),
            ("whatif", "--freqs"): ("whatif", STARTER, "--model", "cortex-a15-walker2017", "--freqs", "cpu_cluster=1800"),
            ("power", "--model"): ("power", STARTER, "--model", "cortex-a7-gemstone2018", "--extrapolate", "--keep-implausible"),
        },
        id="power-beyond-band",
    ),
    pytest.param(
        ("power", STARTER, "--model", "cortex-a15-walker2017", "--extrapolate"),
        "at 4000 MHz is outside 0.6-1.5 V",
        {
            ("whatif", "--freqs"): ("whatif", STARTER, "--model", "cortex-a15-walker2017", "--freqs", "cpu_cluster=1800"),
            ("power", "--model"): ("power", STARTER, "--model", "cortex-a7-gemstone2018", "--extrapolate", "--keep-implausible"),
            ("power", "--keep-implausible"): ("power", STARTER, "--model", "cortex-a15-walker2017", "--extrapolate", "--keep-implausible"),
        },
        id="power-implausible-extrapolation",
    ),
    pytest.param(
        ("soc", STARTER, "--gpu", OCELOT, "--cpu-model", "cortex-a15-walker2017", "--extrapolate"),
        "at 4000 MHz is outside 0.6-1.5 V",
        {
            ("whatif", "--freqs"): ("whatif", STARTER, "--model", "cortex-a15-walker2017", "--freqs", "cpu_cluster=1800"),
            ("soc", "--cpu-model"): (
                "soc",
                STARTER,
                "--gpu",
                OCELOT,
                "--cpu-model",
                "cortex-a7-gemstone2018",
                "--extrapolate",
                "--keep-implausible",
            ),
            ("soc", "--keep-implausible"): (
                "soc",
                STARTER,
                "--gpu",
                OCELOT,
                "--cpu-model",
                "cortex-a15-walker2017",
                "--extrapolate",
                "--keep-implausible",
            ),
        },
        id="soc-voltage-outside-range",
    ),
    pytest.param(
        ("whatif", CLOCK_CHANGE, *BIG),
        "the clock changed from 1000 to 1798.56 MHz inside this epoch",
        {("power", None): ("power", CLOCK_CHANGE, *BIG)},
        id="whatif-clock-change",
    ),
]


@needs_shared
@pytest.mark.parametrize(("refused", "says", "ways"), WAYS_OUT)
def test_every_suggested_way_out_exists_and_runs(tmp_path, refused, says, ways):
    """Each option a refusal suggests is one its command has (``cosim CMD --help`` lists it), and the command line
    that takes it gets past that refusal (exit 0: priced, kept flagged, or other clocks)."""
    result = cosim(*refused, "-o", tmp_path / "refused.csv")
    assert_one_line_error(result, says)
    line = next(line for line in result.stderr.splitlines() if line.startswith("cosim: error:"))
    advice = line.split(": ", 2)[-1]
    suggested = {(m["cmd"] or refused[0], m["opt"]) for m in _WAY.finditer(advice)}
    suggested |= {(cmd, None) for cmd in re.findall(r"with cosim ([a-z-]+) \(", advice)}  # a command as the way out
    assert suggested == set(ways), f"suggested {sorted(suggested, key=str)}; the test runs {sorted(ways, key=str)}"
    for (command, option), line_args in ways.items():
        if option is not None:
            assert option in cosim(command, "--help").stdout
        taken = cosim(*line_args, "-o", tmp_path / f"{command}.csv")
        assert taken.returncode == 0, (command, option, taken.stderr)


@needs_shared
def test_apply_beyond_the_band_names_ways_out_it_has(tmp_path):
    """cosim apply of a model trained up to 1400 MHz to the Powmon rows at 1600 and 1800 MHz (beyond 1.125 x 1400 =
    1575 MHz): refused, naming --extrapolate (an option apply has, which then prices the rows) and another MODEL
    (the shipped A15 model, trained to 1800 MHz, prices them)."""
    import json

    from helpers import POWMON

    model = json.loads((REPO / "models" / "cortex-a15-walker2017.json").read_text())
    model["name"], model["training"]["freq_mhz"] = "a15-to-1400", [200.0, 1400.0]
    low = tmp_path / "a15-to-1400.json"
    low.write_text(json.dumps(model))
    result = cosim("apply", low, POWMON, "-o", tmp_path / "refused.csv")
    assert_one_line_error(result, "beyond its extrapolation band (1.125x, up to 1575 MHz)", "--extrapolate", "another MODEL")
    advice = result.stderr.split("; ")[-1]
    assert {m["opt"] for m in _WAY.finditer(advice)} == {"--extrapolate"}
    assert "--extrapolate" in cosim("apply", "--help").stdout
    assert cosim("apply", low, POWMON, "--extrapolate", "-o", tmp_path / "a.csv").returncode == 0
    assert cosim("apply", "cortex-a15-walker2017", POWMON, "-o", tmp_path / "b.csv").returncode == 0


def test_a_clock_change_whose_cycles_cannot_place_it_is_refused_naming_the_epoch(tmp_path):
    """Epoch 1 with its big cores at 150,000 cycles in 200 us: fewer than even the 200,000 that 1000 MHz ticks (they
    also slept), so the time at each clock is unknown: refused in one line naming the epoch; --keep-implausible keeps
    it, flagged, with the value cosim computed (issue #46)."""
    import gzip
    import shutil

    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(CLOCK_CHANGE / "config.ini", run / "config.ini")
    text = gzip.open(CLOCK_CHANGE / "stats.txt.gz", "rt").read()
    for cpu in ("cpus0", "cpus1"):
        line = next(x for x in text.splitlines() if x.startswith(f"system.bigCluster.{cpu}.numCycles") and "279856" in x)
        text = text.replace(line, line.replace("279856", "150000"))
    (run / "stats.txt").write_text(text)
    result = cosim("power", run / "stats.txt", *BIG, "-o", tmp_path / "p.csv")
    assert_one_line_error(
        result, "epoch 1, cluster 'big': the clock changed from 1000 to 1798.56 MHz inside this epoch", "outside the 200000-359712"
    )
    kept = cosim("power", run / "stats.txt", *BIG, "--keep-implausible", "-o", tmp_path / "p.csv")
    assert kept.returncode == 0, kept.stderr
    row = pd.read_csv(tmp_path / "p.csv").query("epoch == 1").iloc[0]
    assert row["implausible"] and "clock changed" in row["implausible_reason"] and row["power_w"] > 0
    assert row["energy_j"] == pytest.approx(row["power_w"] * row["duration_s"], rel=1e-6)  # as the CSV rounds
