"""cosim on runs of the real gem5 v24 (../shared/tools/gem5) made inside the test: every CPU type, with and
without an L2, and gzip stats as gem5 writes them.  Skipped when the bundled gem5 is not here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import gem5_run, needs_gem5
from test_cli import cosim

from cosim.counters.pmc import event_rates
from cosim.models.modelfile import load_model
from cosim.readers.gem5_config import read_config
from cosim.readers.gem5_stats import read_stats, stats_file

pytestmark = needs_gem5

CPUS = ["O3CPU", "MinorCPU", "TimingSimpleCPU", "AtomicSimpleCPU"]
ALWAYS_ZERO = {"0x6a", "0x0f"}  # gem5 cannot count unaligned accesses: the map says so (constant 0, flagged)
ALL_EVENTS = sorted(
    set().union(*(load_model(m).events for m in ("cortex-a15-walker2017", "cortex-a15-gemstone2018", "cortex-a7-gemstone2018")))
    - ALWAYS_ZERO
)


@pytest.mark.parametrize("cpu", CPUS)
def test_no_event_is_silently_zero(gem5_root, cpu):
    """Each CPU type has its own v24 stats; an event the CPU did is never priced as 0."""
    run = gem5_run(gem5_root, cpu=cpu)
    stats = read_stats(run / "stats.txt")
    cluster = read_config(run / "config.ini").cluster("c", "system.cluster")
    rates = event_rates(stats, cluster, ALL_EVENTS, generation="v20.1+", cores_per_cluster=4, freq_mhz=np.full(len(stats), 1000.0))
    totals = {event: rates.eph[event].sum() for event in ALL_EVENTS}
    assert all(t > 0 for t in totals.values()), f"{cpu}: zero events {[e for e, t in totals.items() if t <= 0]}"
    # cycles: active (O3/Minor) or busy (simple) cycles, never more than the cycles simulated
    cycles = stats["system.cluster.cpus.numCycles"].to_numpy()
    assert np.all(rates.eph["0x11"] * 4 * stats["duration_s"].to_numpy() * 1000.0 <= cycles + 1e-6)
    assert rates.eph["0x11"].sum() > 0.3 * (cycles / (4 * stats["duration_s"] * 1000.0)).sum()


@pytest.mark.parametrize("cpu", CPUS)
def test_every_cpu_type_prices_with_its_default_model(gem5_root, cpu, tmp_path):
    run = gem5_run(gem5_root, cpu=cpu)
    out = tmp_path / "p.csv"
    result = cosim("power", run / "stats.txt", "-o", out)
    assert result.returncode == 0, result.stderr
    expected = "cortex-a15-gemstone2018" if cpu == "O3CPU" else "cortex-a7-gemstone2018"
    assert f"priced with {expected}" in result.stderr
    t = pd.read_csv(out)
    assert (t["model"] == expected).all()
    assert np.isfinite(t["power_w"]).all() and (t["power_w"] > 0).all()
    assert (t["power_w"] < load_model(expected).max_power_w).all()
    assert not t["implausible"].any()


def test_run_without_l2_prices_from_l1_misses(gem5_root, tmp_path):
    run = gem5_run(gem5_root, cpu="TimingSimpleCPU", levels=1)
    config = read_config(run / "config.ini")
    assert config.cluster("c", "system.cluster").l2 == {}
    out = tmp_path / "p.csv"
    result = cosim("power", run / "stats.txt", "--model", "cortex-a15-walker2017", "-o", out)
    assert result.returncode == 0, result.stderr
    t = pd.read_csv(out)
    assert t["subst_0x50"].all() and t["subst_0x19"].all()  # L2 loads and bus accesses from L1 misses, flagged
    assert (t["eph_0x50"] > 0).any() and (t["eph_0x19"] > 0).any()


def test_gzip_stats_as_gem5_writes_them(gem5_root, tmp_path):
    plain = gem5_run(gem5_root, cpu="AtomicSimpleCPU")
    gz = gem5_run(gem5_root, cpu="AtomicSimpleCPU", extra=("--stats-file=stats.txt.gz",))
    assert stats_file(gz).name == "stats.txt.gz"
    a, b = read_stats(plain / "stats.txt"), read_stats(stats_file(gz))
    simulated = [c for c in b.columns if not c.startswith("host")]  # host time and memory differ run to run
    assert len(a) == len(b) > 1
    pd.testing.assert_frame_equal(a[simulated], b[simulated])


def test_multi_core_cluster_matches_sum_of_its_cpus(gem5_root):
    run = gem5_run(gem5_root, cpu="MinorCPU", cores=2)
    stats = read_stats(run / "stats.txt")
    cluster = read_config(run / "config.ini").cluster("c", "system.cluster")
    assert cluster.n_cpus == 2
    rates = event_rates(stats, cluster, ["0x08"], generation="v20.1+", cores_per_cluster=4, freq_mhz=np.full(len(stats), 1000.0))
    insts = sum(stats[f"system.cluster.cpus{i}.commitStats0.numInsts"] for i in range(2))
    np.testing.assert_allclose(rates.eph["0x08"], insts / (4 * stats["duration_s"] * 1000.0))


def test_switched_cpus_price_the_cpu_that_ran(gem5_root, tmp_path):
    """Fast-forward on an atomic CPU, then a switched-out Minor CPU takes over (as se.py's switch_cpus)."""
    from helpers import REPO

    run = gem5_run(gem5_root, cpu="switch", config=REPO / "tests" / "gem5_configs" / "se_switch.py")
    stats = read_stats(run / "stats.txt")
    cluster = read_config(run / "config.ini").cluster("c", "system.cluster")
    assert cluster.n_cpus == 1 and cluster.partner == {"system.switch_cpus": "system.cluster.cpus"}
    side = __import__("json").loads((run / "cosim-run.json").read_text())  # attach_power's cheap dumps hold the spare CPU
    assert side["stats_dumped"] == "cosim" and side["clusters"]["c"]["spare_cpus"] == ["system.switch_cpus"]
    rates = event_rates(stats, cluster, ["0x11", "0x08"], generation="v20.1+", cores_per_cluster=4, freq_mhz=np.full(len(stats), 1000.0))
    # the switch at 300 us may leave one cycle to either CPU in the epoch after it (gem5 runs differ by that cycle)
    atomic = stats["system.cluster.cpus.numCycles"].to_numpy() > 1
    minor = stats["system.switch_cpus.numCycles"].to_numpy() > 2
    assert atomic[:2].all() and minor[-5:].all() and not (atomic & minor)[3:].any()
    # every epoch is priced from the CPU that ran in it: instructions retired in each one, by either CPU
    insts = stats["system.cluster.cpus.commitStats0.numInsts"] + stats["system.switch_cpus.commitStats0.numInsts"]
    np.testing.assert_allclose(rates.eph["0x08"], insts / (4 * stats["duration_s"] * 1000.0))
    assert (rates.eph["0x11"] > 0).all()
    out = tmp_path / "p.csv"
    result = cosim("power", run / "stats.txt", "-o", out)
    assert result.returncode == 0 and "cortex-a7-gemstone2018" in result.stdout + result.stderr, result.stderr  # the sidecar names it
    assert (pd.read_csv(out)["power_w"] > 0).all()


COUNTER_DOC = __import__("helpers").REPO / "docs" / "reference" / "gem5-v24-counter-map.md"


def counter_map_doc(runs: dict[str, object]) -> str:
    """docs/reference/gem5-v24-counter-map.md: for each CPU type, the source the v20.1+ map picks on a real v24 run."""
    from cosim.counters.pmc import load_event_map

    emap = load_event_map("v20.1+")
    chosen = {}
    for cpu, run in runs.items():
        stats = read_stats(run / "stats.txt")
        cluster = read_config(run / "config.ini").cluster("c", "system.cluster")
        rates = event_rates(
            stats, cluster, sorted(emap.names), generation="v20.1+", cores_per_cluster=4, freq_mhz=np.full(len(stats), 1000.0)
        )
        chosen[cpu] = {e: next(iter(by_cpu.values())) for e, by_cpu in rates.chosen.items()}
    lines = [
        "# gem5 v24 stats behind each PMU event, per CPU type",
        "",
        "Generated by `tests/test_real_gem5.py` from `cosim/counters/maps/gem5-v20.1plus.toml` and real runs of the",
        "a gem5 v24.0.0.1 ARM build, not shipped (`gem5_scripts/examples/se_cluster.py`, one CPU, L1s and an L2): the source the map picks",
        "for each CPU type. `cpu.` is the CPU object, `l1d.`/`l1i.` its L1 caches, `l2.` the cache below the L1D.",
        "A source marked * is a substitute: every epoch priced with it carries the flag `subst:<event>`.",
        "Regenerate with `COSIM_REGEN=1 pytest tests/test_real_gem5.py -k counter_map`.",
        "",
        "| event | " + " | ".join(runs) + " |",
        "|---|" + "---|" * len(runs),
    ]
    for event in sorted(emap.names):
        cells = [f"`{chosen[c][event].expr}`" + (" *" if chosen[c][event].substitute else "") for c in runs]
        lines.append(f"| {event} {emap.names[event]} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def test_counter_map_doc_is_generated_from_the_map(gem5_root):
    import os

    text = counter_map_doc({cpu: gem5_run(gem5_root, cpu=cpu) for cpu in CPUS})
    if os.environ.get("COSIM_REGEN"):
        COUNTER_DOC.write_text(text)
    assert COUNTER_DOC.read_text() == text


def test_online_power_in_gem5_equals_offline(gem5_root, tmp_path):
    """cosim's model attached inside real gem5 (MathExprPowerModel, gem5's own expression parser) gives, per dump,
    the power cosim computes offline from the same dumps."""
    import json

    from helpers import REPO

    from cosim import ClusterSpec, power_timeline

    run = gem5_run(
        gem5_root,
        cpu="online",
        size=2,
        config=REPO / "tests" / "gem5_configs" / "se_online_check.py",
        extra_args=("--gem5-scripts", str(REPO / "gem5_scripts")),
    )
    online = np.array(json.loads((run / "online-power.json").read_text())["power_w_per_cpu"]).sum(axis=1)
    # the dumps are attach_power's cheap ones: the statistics cosim reads, not the whole system's
    assert json.loads((run / "cosim-run.json").read_text())["stats_dumped"] == "cosim"
    assert "system.membus." not in (run / "stats.txt").read_text()
    stats = read_stats(run / "stats.txt")
    offline = power_timeline(
        stats, read_config(run / "config.ini"), [ClusterSpec("little", "system.littleCluster", load_model("cortex-a7-gemstone2018"))]
    )
    assert len(online) == len(offline) > 10
    rel = np.abs(online - offline["power_w"].to_numpy()) / offline["power_w"].to_numpy()
    assert rel.max() < 1e-6, rel.max()
    # gem5's own stats agree too, to the 6 decimals it prints them with
    printed = sum(stats[f"system.littleCluster.cpus{i}.power_model.{k}"] for i in range(2) for k in ("dynamicPower", "staticPower"))
    np.testing.assert_allclose(printed, offline["power_w"], atol=2e-6)
    print(f"largest relative difference online vs offline: {rel.max():.3g}")


def test_biglittle_example_runs_with_cosim_attached(gem5_root, tmp_path):
    """gem5_scripts/examples/se_biglittle_power.py in the bundled gem5: the A7 model online on the LITTLE cluster,
    the A15 model (Vector stats) kept offline with a warning; cosim power then needs no flags."""
    from helpers import REPO

    run = gem5_run(
        gem5_root,
        cpu="example",
        size=1,
        config=REPO / "gem5_scripts" / "examples" / "se_biglittle_power.py",
        extra_args=("--big-cores", "1", "--little-cores", "1", "--online", "little", "--online", "big"),
    )
    side = __import__("json").loads((run / "cosim-run.json").read_text())
    assert side["gem5_version"] == "24.0.0.1" and side["epoch_ticks"] == 100_000_000
    assert side["clusters"]["big"]["online"] is False and side["clusters"]["little"]["online"] is True
    assert side["clusters"]["big"]["dvfs_voltages_v"] == [1.1741] and side["clusters"]["little"]["dvfs_voltages_v"] == [1.253]
    out = tmp_path / "p.csv"
    result = cosim("power", run / "stats.txt", "-o", out)  # clusters and models from cosim-run.json
    assert result.returncode == 0, result.stderr
    t = pd.read_csv(out)
    little = t[t["cluster"] == "little"].reset_index(drop=True)
    stats = read_stats(run / "stats.txt")
    printed = stats["system.littleCluster.cpus.power_model.dynamicPower"] + stats["system.littleCluster.cpus.power_model.staticPower"]
    np.testing.assert_allclose(printed, little["power_w"], atol=2e-6)  # gem5 prints 6 decimals
    assert not t["extrapolated"].any()


def test_biglittle_example_refuses_a_clock_outside_the_vf_table_in_one_line(tmp_path):
    """A LITTLE clock the A7 model's V-f table lacks (800 MHz): one line naming the cluster, the clock, the table and
    the ways out, a non-zero exit and no traceback (a new user's trial got a Python traceback); --keep-voltages
    (voltages as configured) is that way out."""
    import subprocess

    from helpers import GEM5, REPO

    args = [str(GEM5 / "gem5"), "-q", f"--outdir={tmp_path}", str(REPO / "gem5_scripts" / "examples" / "se_biglittle_power.py")]
    args += ["--little-freq", "800MHz", "--big-cores", "1", "--little-cores", "1", "--", str(GEM5 / "workloads" / "phases.aarch64"), "1"]
    result = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "Traceback" not in result.stderr + result.stdout
    line = next(x for x in result.stderr.splitlines() if x.startswith("se_biglittle_power.py:"))
    assert "800.0 MHz" in line and "cortex-a7-gemstone2018" in line and "--keep-voltages" in line


def test_stdlib_board_example_runs(gem5_root, tmp_path):
    """A gem5-stdlib SimpleBoard with cosim attached: priced offline; online it stays offline with a warning, because
    the stdlib names its caches with '-' (l1d-cache-0), which gem5's expressions read as a minus."""
    import subprocess

    from helpers import GEM5, REPO

    out_dir = gem5_root / "stdlib"
    result = subprocess.run(
        [
            str(GEM5 / "gem5"),
            f"--outdir={out_dir}",
            str(REPO / "gem5_scripts" / "examples" / "stdlib_board_power.py"),
            "--binary",
            str(GEM5 / "workloads" / "phases.aarch64"),
            "--args",
            "1",
            "--online",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-1500:] + result.stderr[-1500:]
    assert "cluster little stays offline: stat board.cache_hierarchy.l1d-cache-0.overallAccesses cannot be named" in result.stderr
    side = __import__("json").loads((out_dir / "cosim-run.json").read_text())["clusters"]["little"]
    assert side["cpus"] == ["board.processor.cores.core"] and side["l2"]["board.processor.cores.core"] == "board.cache_hierarchy.l2-cache-0"
    priced = cosim("power", out_dir / "stats.txt", "-o", tmp_path / "p.csv")
    assert priced.returncode == 0, priced.stderr
    t = pd.read_csv(tmp_path / "p.csv")
    assert (t["model"] == "cortex-a7-gemstone2018").all() and (t["power_w"] > 0).all() and len(t) > 5
