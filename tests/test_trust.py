"""One trust check for every command that prices (issue 51.1, 53.3) and model files checked before use (51.2).

Expected values come from the files themselves (gem5's stats, a config without its ISA's clocks, the model file's
own table) or from hand computation written here, never from cosim's output.
"""

from __future__ import annotations

import csv
import json
import shutil

import pytest
from helpers import GEM5_RUNS, needs_shared

from cosim.errors import CosimError
from cosim.models.modelfile import load_model, shipped_models_dir


def _model(tmp_path, mutate):
    data = json.loads((shipped_models_dir() / "cortex-a15-gemstone2018.json").read_text())
    mutate(data)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    return path


def _set(field, value):
    return lambda d: d.__setitem__(field, value)


_WRONG = {"null": None, "string": "x", "list": [1], "number": 3}


@pytest.mark.parametrize("value", _WRONG.values(), ids=_WRONG.keys())
@pytest.mark.parametrize("field", ["plausibility", "events", "dynamic_terms", "static_terms", "fit", "envelope", "cores"])
def test_a_table_of_the_wrong_type_is_one_line_naming_it(tmp_path, field, value):
    with pytest.raises(CosimError) as err:
        load_model(_model(tmp_path, _set(field, value)))
    text = str(err.value)
    assert "\n" not in text and "models/README.md" in text
    assert f": {field}" in text and "must be" in text  # the field (or its first term) and what is allowed


@pytest.mark.parametrize(
    "mutate, says",
    [
        (_set("dynamic_terms", []), "dynamic_terms is []; it must be a non-empty list"),
        (lambda d: d["static_terms"][1].update(f_exp=1.5), "static_terms[1] (f).f_exp is 1.5; it must be a whole number 0-4"),
        (lambda d: d["static_terms"][1].update(v_exp=-1), "static_terms[1] (f).v_exp is -1; it must be a whole number 0-4"),
        (lambda d: d.update(cores_per_cluster=0), "cores_per_cluster is 0; it must be a whole number of cores"),
        (lambda d: d["cores"].update(per_core_static_fraction=1.5), "cores.per_core_static_fraction is 1.5; it must be a fraction 0-1"),
        (lambda d: d["envelope"].update(band_x_top_clock=0.5), "envelope.band_x_top_clock is 0.5; it must be a number >= 1"),
        (lambda d: d["training"].update(freq_mhz=[1800, 200]), "training.freq_mhz is [1800, 200]; its lowest must come first"),
    ],
)
def test_a_field_out_of_its_range_is_refused(tmp_path, mutate, says):
    with pytest.raises(CosimError) as err:
        load_model(_model(tmp_path, mutate))
    assert says in str(err.value)


def test_unknown_keys_inside_a_table_are_left_to_their_readers(tmp_path):
    """New optional fields (static split, temperature terms) are not refused by the schema."""

    def add(d):
        d["static_form"]["split_interval_w"] = [0.1, 0.2]
        d["envelope"]["new_field"] = "words"
        d["test_split"] = {"programs": []}

    assert load_model(_model(tmp_path, add)).defaults == ()


@needs_shared
def test_an_omitted_cores_table_is_its_default_stated_and_flagged(tmp_path):
    """No ``cores`` table: phi = 1 (models/README.md), so one of 4 cores draws 1/4 of the static power, not the
    1 - 0.75 + 0.75/4 = 0.4375 the shipped file's 0.75 gives; the rows and the summary line say so."""
    from helpers import run_cosim

    path = _model(tmp_path, lambda d: d.pop("cores"))
    assert load_model(path).defaults == ("cores",)
    out = tmp_path / "p.csv"
    done = run_cosim("power", GEM5_RUNS / "cosim-v24-se-o3-600MHz", "--model", path, "-o", out)
    assert done.returncode == 0, done.stderr
    row = next(csv.DictReader(out.open()))
    assert float(row["cores_scaled"]) == pytest.approx(1 / 4)
    assert "model_default:cores" in row["flags"].split(";")
    assert "model file omits cores (default: per_core_static_fraction 1" in done.stdout


def _rate_run(tmp_path):
    """The O3 run at 600 MHz with its executed instructions raised to 4.04 a cycle: 850697 cycles x 4.04 = 3436816
    (gem5's numCycles of that run), more than the A15's 3-wide issue can count."""
    run = tmp_path / "run"
    run.mkdir()
    src = GEM5_RUNS / "cosim-v24-se-o3-600MHz"
    shutil.copy(src / "config.ini", run / "config.ini")
    text = (src / "stats.txt").read_text()
    assert "system.cpu.numCycles                           850697" in text
    old = "system.cpu.executeStats0.numInsts             1247737"
    assert old in text
    (run / "stats.txt").write_text(text.replace(old, "system.cpu.executeStats0.numInsts             3436816"))
    return run


@needs_shared
@pytest.mark.parametrize("command", ["power", "whatif", "sweep"])
def test_a_rate_no_clock_changes_is_refused_by_power_and_its_way_out(tmp_path, command, capsys):
    from cosim.cli import main

    code = main([command, str(_rate_run(tmp_path)), "-o", str(tmp_path / "o.csv")])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2
    assert "0x1b (INST_SPEC) at 4.04 per cycle is more than the 3 a cortex-a15-gemstone2018 core can count" in err
    assert "cosim whatif --freqs" not in err  # changing the clock cannot fix a rate per cycle
    assert not (tmp_path / "o.csv").exists()


#: ten real runs from ../shared/data/gem5: big.LITTLE, below training, one idle CPU, four atomic CPUs, a 4 GHz Minor,
#: x86 at 3 GHz without config.ini, x86 at 2 GHz, a 2 GHz Minor, ARM64 without config.ini, an old ARMv7 O3
TEN_RUNS = [
    "cosim-v24-se-biglittle-o3-1000MHz-minor-600MHz",
    "cosim-v24-se-o3-200MHz",
    "cosim-v24-se-o3-2cpu-1process-1000MHz",
    "cosim-v24-starter-se-atomic-4cores-1000MHz",
    "public-new-2022-arm-se-minor-starterse-cpucluster",
    "public-new-v24-x86-simpoint-2dumps",
    "public-old-x86-fs-timingsimple-ruby-mesi",
    "public-old2016-arm-se-minor-mcf",
    "public-old2016-arm64-fs-timingsimple-ruby-moesi",
    "public-old2012-arm32-fs-o3-dual",
]


TRUST_FLAGS = ("implausible", "isa_mismatch", "isa_unknown", "config_from_stats", "more_cpus_than_model", "idle_cpu", "model_default")


def trust_flags(rows, clusters) -> set[str]:
    """The trust check's flags of a table (power's per cluster row, whatif's on every row with ``:<cluster>``): those
    issue 51 names (and the model file's defaults)."""
    out = set()
    for row in rows:
        for flag in row["flags"].split(";"):
            if flag.split(":")[0] in TRUST_FLAGS:
                head, _, tail = flag.rpartition(":")
                out.add(head if tail in clusters and head else flag)
    return out


def _price(command, run, tmp_path, capsys, *extra):
    from cosim.cli import main

    out = tmp_path / f"{command}.csv"
    code = main([command, str(GEM5_RUNS / run), "-o", str(out), *extra])
    err = capsys.readouterr().err.strip().splitlines()
    rows = list(csv.DictReader(out.open())) if code == 0 else []
    return code, (err[-1] if err else ""), rows


@needs_shared
@pytest.mark.parametrize("run", TEN_RUNS)
def test_power_and_whatif_refuse_alike_and_flag_alike(run, tmp_path, capsys):
    """Where ``power`` refuses for a reason no clock changes (the ISA), ``whatif`` refuses too; where it refuses a
    clock, its way out (``whatif`` at the models' V-f clocks) prices; where both price, the same trust flags."""
    x86 = "x86" in run
    p_code, p_err, p_rows = _price("power", run, tmp_path, capsys)
    w_code, w_err, w_rows = _price("whatif", run, tmp_path, capsys)
    if x86:  # README.md of ../shared: both are x86 runs; the shipped models are ARM
        assert p_code == w_code == 2
        assert "the run is X86 but" in p_err and "the run is X86 but" in w_err
        p_code, p_err, p_rows = _price("power", run, tmp_path, capsys, "--any-isa")
        w_code, w_err, w_rows = _price("whatif", run, tmp_path, capsys, "--any-isa")
    if p_code == 2:
        assert "cosim whatif" in p_err  # refused for its clock: the what-if at trained clocks is the way out
        assert w_code == 0, w_err
    else:
        assert p_code == w_code == 0, (p_err, w_err)
        clusters = {r["cluster"] for r in p_rows}
        assert trust_flags(p_rows, clusters) == trust_flags(w_rows[:1], clusters)
    flags = trust_flags(w_rows, {"board", "cpu_clk_domain", "cpu", "cpu_cluster", "bigCluster", "littleCluster"})
    assert ("isa_mismatch" in flags) == x86
    # gem5's own files: no config.ini beside the stats, and a CPU whose numCycles is 0 in every dump
    assert ("config_from_stats" in flags) == (not (GEM5_RUNS / run / "config.ini").exists())
    if run == "cosim-v24-se-o3-2cpu-1process-1000MHz":
        assert "system.cpu1.numCycles                               0" in (GEM5_RUNS / run / "stats.txt").read_text()
        assert "idle_cpu:system.cpu1" in flags


@needs_shared
@pytest.mark.parametrize(
    "run, mhz, cluster, trained, flags",
    [
        ("public-new-v24-x86-simpoint-2dumps", "3003", "board", "1800", {"isa_mismatch", "config_from_stats"}),
        ("public-old-x86-fs-timingsimple-ruby-mesi", "2000", "cpu_clk_domain", "1400", {"isa_mismatch"}),
    ],
)
def test_an_x86_run_no_model_prices_gets_every_reason_and_a_way_out_that_prices(run, mhz, cluster, trained, flags, tmp_path, capsys):
    """gem5's x86 runs at 3 GHz (333 ticks a cycle at 1 THz) and 2 GHz (500 ticks): one line naming the ISA and the
    clock, and the what-if at a trained clock it names gives a number, flagged."""
    code, err, _ = _price("power", run, tmp_path, capsys)
    assert code == 2
    assert "the run is X86 but" in err and f"runs at {mhz} MHz" in err and "beyond its band" in err
    assert "cosim fit" in err
    way = err.split("cosim whatif ")[1].split(" (rows flagged")[0].split()
    from cosim.cli import main

    assert way[1:] == ["--any-isa", "--freqs", f"{cluster}={trained}"]
    assert main(["whatif", *way, "-o", str(tmp_path / "w.csv")]) == 0
    row = next(csv.DictReader((tmp_path / "w.csv").open()))
    assert float(row["energy_j"]) > 0 and float(row[f"{cluster}_freq_mhz"]) == float(trained)
    assert flags <= set(row["flags"].split(";"))


@needs_shared
def test_a_cluster_bigger_than_the_model_and_a_default_are_flagged_by_power_and_whatif_alike(tmp_path, capsys):
    """The two-CPU run (config.ini: system.cpu0, system.cpu1) priced by a one-core model without its cores table:
    more CPUs than the model's cluster, phi's default taken, and system.cpu1's numCycles 0: under both commands."""

    def one_core(d):
        d.update(cores_per_cluster=1)
        d.pop("cores")

    model = str(_model(tmp_path, one_core))
    run = "cosim-v24-se-o3-2cpu-1process-1000MHz"
    assert "[system.cpu1]" in (GEM5_RUNS / run / "config.ini").read_text()
    p_code, p_err, p_rows = _price("power", run, tmp_path, capsys, "--model", model)
    w_code, w_err, w_rows = _price("whatif", run, tmp_path, capsys, "--model", model)
    assert p_code == w_code == 0, (p_err, w_err)
    want = {"more_cpus_than_model", "model_default:cores", "idle_cpu:system.cpu1"}
    assert trust_flags(p_rows, {"cpu_clk_domain"}) == want
    assert all(trust_flags([row], {"cpu_clk_domain"}) == want for row in w_rows)


@pytest.mark.parametrize(
    "mhz, first_way",
    [
        (1000.0, "pass --any-isa to price it anyway"),  # inside the A7's trained clocks: the ISA is the only reason
        (1600.0, "pass --any-isa --extrapolate"),  # 1.14x its top 1400 MHz: beyond the 1.125x band, below 1.5 V
    ],
)
def test_the_combined_line_offers_the_ways_out_that_work(mhz, first_way):
    from types import SimpleNamespace

    import numpy as np

    from cosim.timeline.trust import refuse_unpriceable

    spec = SimpleNamespace(name="cpu", model=load_model("cortex-a7-gemstone2018"))
    config = SimpleNamespace(isa="x86", inferred=())
    with pytest.raises(CosimError) as err:
        refuse_unpriceable("stats.txt", config, [spec], lambda s: np.array([mhz]), any_isa=False, extrapolate=False)
    text = str(err.value)
    assert "the run is X86 but cortex-a7-gemstone2018 was trained on ARM cores" in text
    assert text.split("ways out: ")[1].startswith(first_way)
    assert ("beyond its band" in text) == (mhz > 1400 * 1.125)
    assert "cosim fit" in text and "--any-isa --freqs cpu=" in text
