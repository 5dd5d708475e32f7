"""Make tests/data/clock-change-1000-1800MHz: a clock change inside an epoch, spliced from two recorded gem5 runs.

``python tests/clock_change_fixture.py`` (needs ../shared/data/gem5).  gem5's se_biglittle.py ran the same workload
with the big cluster at 1000 MHz (cosim-v24-se-biglittle-o3-1000MHz-minor-600MHz) and at 1800 MHz
(cosim-v24-se-biglittle-o3-1800MHz-minor-1400MHz), dumping every 100 us.  The fixture's three epochs:

- epoch 0: dump 3 of the 1000/600 MHz run, as recorded;
- epoch 1: dump 4 of the 1000/600 MHz run followed by dump 4 of the 1800/1400 MHz run, as one 200 us dump: what
  gem5 writes when the clocks change halfway through an epoch (counters add up; the clock period is the one at the
  dump's end; ratios are weighted by time);
- epoch 2: dump 5 of the 1800/1400 MHz run, as recorded.

Only the lines cosim reads for the two clusters are kept (as tests/whatif_suite.py's ``slim``); the config is the
1800/1400 MHz run's (the clocks at the end).
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNS = HERE.parent.parent / "shared" / "data" / "gem5"
SLOW = RUNS / "cosim-v24-se-biglittle-o3-1000MHz-minor-600MHz"
FAST = RUNS / "cosim-v24-se-biglittle-o3-1800MHz-minor-1400MHz"
OUT = HERE / "data" / "clock-change-1000-1800MHz"
DUMP = 3  # the first of the three dumps taken (the big CPUs count idleCycles in dump 4: gem5 omits zero ones)
ADDED = ("(Count)", "(Cycle)", "(Tick)", "(Byte)", "(Second)", "(Joule)")  # totals over the dump: they add up


def dumps(path: Path, first: int, n: int) -> list[list[str]]:
    """Dumps ``first`` .. ``first + n - 1`` (0-based) of a stats.txt, each as its lines."""
    out: list[list[str]] = []
    k = -1
    with open(path) as src:
        for line in src:
            if line.startswith("---------- Begin"):
                k += 1
                if first <= k < first + n:
                    out.append([])
            if first <= k < first + n:
                out[-1].append(line)
            if k >= first + n:
                break
    return out


def _fields(line: str) -> tuple[str, str, str] | None:
    """(name, value, the rest) of a stat line, None for markers and blank lines."""
    if not line.strip() or line.startswith("-"):
        return None
    name, value, rest = (line.split(None, 2) + ["", ""])[:3]
    return name, value, rest


def splice(first: list[str], second: list[str]) -> list[str]:
    """One dump of ``first`` then ``second`` back to back."""
    a = {f[0]: f for line in first if (f := _fields(line))}
    b = {f[0]: f for line in second if (f := _fields(line))}
    t_a, t_b = float(a["simTicks"][1]), float(b["simTicks"][1])
    out = []
    names = list(b) + [n for n in a if n not in b]
    for name in names:
        fa, fb = a.get(name), b.get(name)
        va = float(fa[1]) if fa else 0.0
        vb = float(fb[1]) if fb else 0.0
        rest = (fb or fa)[2]  # type: ignore[index]
        if name.endswith(".clock") or name in ("simFreq", "hostMemory") or "(Volt)" in rest:
            value = (fb or fa)[1]  # type: ignore[index]  # as at the dump's end
        elif name == "finalTick":
            value = str(int(vb))  # rewritten below
        elif any(unit in rest.rstrip().split("#")[-1] for unit in ADDED):
            total = va + vb
            value = str(int(total)) if total.is_integer() else f"{total:.6f}"  # nan, inf stay as they are
        else:  # a ratio, rate or mean: weighted by each dump's time
            mixed = (va * t_a + vb * t_b) / (t_a + t_b)
            value = f"{mixed:.6f}"
        out.append(f"{name:<50} {value:>20} {rest}")
    return ["---------- Begin Simulation Statistics ----------\n", *out, "\n---------- End Simulation Statistics   ----------\n"]


def main() -> None:
    import sys

    sys.path.insert(0, str(HERE))
    from whatif_pairs import CLUSTERS

    from cosim import ClusterSpec, load_model, read_config
    from cosim.dse.whatif import whatif_stats
    from cosim.timeline.clusters import stats_needed

    slow = dumps(SLOW / "stats.txt", DUMP, 2)
    fast = dumps(FAST / "stats.txt", DUMP + 1, 2)
    epochs = [slow[0], splice(slow[1], fast[0]), fast[1]]
    OUT.mkdir(parents=True, exist_ok=True)
    shutil.copy(FAST / "config.ini", OUT / "config.ini")
    config = read_config(OUT / "config.ini")
    specs = [ClusterSpec(n, p, load_model(m)) for n, p, m in CLUSTERS]
    wanted = whatif_stats(config, specs) | stats_needed(config, specs)
    tick = 0
    lines = []
    for epoch in epochs:
        for line in epoch:
            f = _fields(line)
            if f is None:
                lines.append(line)
                continue
            name = f[0]
            if name == "simTicks":
                tick += int(float(f[1]))
            if name == "finalTick":
                line = f"{name:<50} {DUMP * 100_000_000 + tick:>20} {f[2]}"
            if name in wanted or not name.startswith("system.") or "clk_domain" in name:
                lines.append(line)
    with gzip.open(OUT / "stats.txt.gz", "wt", compresslevel=9) as dst:
        dst.writelines(lines)
    (OUT / "command.txt").write_text(
        f"spliced by tests/clock_change_fixture.py from {SLOW.name} dumps {DUMP}-{DUMP + 1} and {FAST.name} dumps "
        f"{DUMP + 1}-{DUMP + 2} (0-based)\n"
    )


if __name__ == "__main__":
    main()
