"""An independent reliability campaign over the cosim CLI (issue 51): a measurement, not a test.

    python tests/campaign.py --cases 600 --out /tmp/campaign

Every case copies real inputs (../shared/data/gem5, traces/, tests/data) into its own folder under OUT, mutates the
copy, runs ``python -I -m cosim.cli ...`` on it and classifies the result:

- ``refusal``: non-zero exit (not 4), no traceback, exactly one ``cosim: error:`` line (other ``cosim:`` notes allowed);
  for exit 3 (a reported partial loss) the epochs written must be a prefix of the unmodified run's;
- ``right0``: exit 0 and the oracle holds;
- ``WRONG0``: exit 0 and the oracle fails (reason recorded);
- ``internal``: exit 4, a traceback, or a timeout (hang);
- ``badrefusal``: non-zero exit whose stderr is not one ``cosim: error:`` line;
- ``lost``: an input's bytes changed, or an interrupted command left a mixed set of old and new outputs.

The oracles are independent of the code under test: the unmodified run's own numbers (energy, epochs, flags), what the
mutation must do (a cut or zero-filled run must not silently give fewer epochs; a benign re-encoding must give the same
numbers; an impossible counter must be refused or flagged), and physics (power positive and finite,
power_lo_w <= power_w <= power_hi_w).  Writes OUT/cases.csv and prints the table by class; always exits 0.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "gem5"
TIMEOUT_S = 90
NUL = b"\0"


SRC: str | None = None  # --src: run the cosim of this source tree (e.g. an older commit) instead of the installed one


def cli(*args) -> list[str]:
    if SRC:
        boot = f"import sys; sys.path.insert(0, {SRC!r}); from cosim.cli import main; sys.exit(main())"
        return [sys.executable, "-I", "-c", boot, *map(str, args)]
    return [sys.executable, "-I", "-m", "cosim.cli", *map(str, args)]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "-"


def hash_tree(folder: Path) -> dict[str, str]:
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_symlink() or not p.is_file():
            continue
        out[str(p.relative_to(folder))] = sha(p)
    return out


@dataclass
class Result:
    rc: int
    out: str
    err: str
    secs: float


@dataclass
class Case:
    cls: str
    name: str
    build: Callable[[Path], list[str]]  # makes the inputs in the case folder, returns the argv
    oracle: Callable[[Path, Result], str | None]  # None: right; else the reason it is wrong
    outputs: tuple[str, ...] = ("out.csv",)
    special: Callable[[Path], tuple[str, str]] | None = None  # runs the whole case itself -> (class, detail)
    row: dict = field(default_factory=dict)
    base: dict | None = None


# --- reading results ---------------------------------------------------------------------------------------------


def read_csv(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        return list(csv.DictReader(f))


def num(x: str | None) -> float | None:
    try:
        return float(x) if x not in (None, "") else None
    except ValueError:
        return math.nan


def sane_rows(rows: list[dict]) -> str | None:
    """Physics every priced row must satisfy."""
    for r in rows:
        p, lo, hi = num(r.get("power_w")), num(r.get("power_lo_w")), num(r.get("power_hi_w"))
        if r.get("power_w", None) is None:
            continue
        if p is None:
            if str(r.get("implausible", "")).lower() == "true":
                continue
            return f"row {r.get('epoch')} {r.get('cluster')}: empty power_w at exit 0"
        if not math.isfinite(p) or p <= 0:
            return f"row {r.get('epoch')} {r.get('cluster')}: power_w={p}"
        if p > 50 and str(r.get("implausible", "")).lower() != "true":
            return f"row {r.get('epoch')} {r.get('cluster')}: power_w={p:.3g} W for a mobile cluster, not flagged"
        if lo is not None and hi is not None and not (lo <= p * (1 + 1e-9) and p <= hi * (1 + 1e-9)):
            return f"row {r.get('epoch')}: power_lo_w {lo} <= power_w {p} <= power_hi_w {hi} fails"
        e = num(r.get("energy_j"))
        if e is not None and (not math.isfinite(e) or e < 0):
            return f"row {r.get('epoch')}: energy_j={e}"
        d = num(r.get("duration_s"))
        if d is not None and (not math.isfinite(d) or d <= 0):
            return f"row {r.get('epoch')}: duration_s={d}"
    return None


def summary(rows: list[dict]) -> dict:
    epochs = sorted({r.get("epoch") for r in rows}, key=lambda x: float(x) if x not in (None, "") else -1)
    energy = sum(num(r.get("energy_j")) or 0.0 for r in rows)
    per_epoch = defaultdict(float)
    for r in rows:
        per_epoch[(r.get("epoch"), r.get("cluster"))] += num(r.get("energy_j")) or 0.0
    flags = set()
    for r in rows:
        flags |= {f.split(":")[0] for f in (r.get("flags") or "").split(";") if f}
        if str(r.get("implausible", "")).lower() == "true":
            flags.add("implausible")
    return {
        "epochs": len(epochs),
        "energy": energy,
        "per_epoch": dict(per_epoch),
        "flags": flags,
        "lohi": [(r.get("power_lo_w"), r.get("power_hi_w")) for r in rows],
    }


def close(a: float, b: float, rel: float = 1e-6) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-30)


def warned(err: str) -> bool:
    """A warning, error or note (a loss accepted with --allow-partial) about the input (not the note that the C line
    scanner is not built)."""
    return any(re.match(r"cosim: (warning|error|note)", x) and "line scanner" not in x for x in err.splitlines())


# --- oracles -----------------------------------------------------------------------------------------------------


def oracle_same(base: dict):
    """A mutation that loses nothing: exit 0 must give the unmodified run's epochs and energy."""

    def check(d: Path, r: Result) -> str | None:
        rows = read_csv(d / "out.csv")
        bad = sane_rows(rows)
        if bad:
            return bad
        s = summary(rows)
        if s["epochs"] != base["epochs"] or not close(s["energy"], base["energy"], 1e-6):
            return f"epochs {s['epochs']} vs {base['epochs']}, energy {s['energy']:.6g} vs {base['energy']:.6g} J"
        return None

    return check


def oracle_loss(base: dict, *, allow_partial: bool = False):
    """Information was destroyed (cut, zero-filled, junk): exit 0 only with --allow-partial, a warning, and the epochs
    kept equal to the unmodified run's; otherwise the loss must be reported (non-zero exit)."""

    def check(d: Path, r: Result) -> str | None:
        rows = read_csv(d / "out.csv")
        bad = sane_rows(rows)
        if bad:
            return bad
        s = summary(rows)
        if not allow_partial:
            if s["epochs"] == base["epochs"] and close(s["energy"], base["energy"], 1e-6) and warned(r.err):
                return None  # nothing lost and said so
            return f"exit 0 without --allow-partial: {s['epochs']} of {base['epochs']} epochs, energy {s['energy']:.4g} vs {base['energy']:.4g} J, warned={warned(r.err)}"
        if not warned(r.err) and s["epochs"] < base["epochs"]:
            return f"--allow-partial: {s['epochs']} of {base['epochs']} epochs silently"
        return prefix(base, s)

    return check


def prefix(base: dict, s: dict) -> str | None:
    """The epochs kept must be the unmodified run's own (the last one may be partial only if flagged)."""
    for k, e in s["per_epoch"].items():
        b = base["per_epoch"].get(k)
        if b is None:
            return f"epoch {k} is not in the unmodified run"
        if not close(e, b, 1e-6):
            last = max(int(float(x[0])) for x in s["per_epoch"]) if s["per_epoch"] else -1
            if int(float(k[0])) == last:
                return f"last kept epoch {k} has energy {e:.4g} J vs {b:.4g} J unmodified"
            return f"kept epoch {k}: energy {e:.4g} J vs {b:.4g} J unmodified"
    return None


def oracle_flag_or_same(base: dict):
    """An impossible or changed input: exit 0 only with the unmodified numbers, or with a new flag on the rows."""

    def check(d: Path, r: Result) -> str | None:
        rows = read_csv(d / "out.csv")
        bad = sane_rows(rows)
        if bad:
            return bad
        s = summary(rows)
        same = s["epochs"] == base["epochs"] and close(s["energy"], base["energy"], 1e-6)
        if same:
            return None
        if s["flags"] - base["flags"]:
            return None
        return f"silent change: epochs {s['epochs']} vs {base['epochs']}, energy {s['energy']:.6g} vs {base['energy']:.6g} J, no new flag"

    return check


def oracle_changed_or_flag(base: dict):
    """A model change that must show (an exponent): the numbers must change, or a flag must say why not."""

    def check(d: Path, r: Result) -> str | None:
        rows = read_csv(d / "out.csv")
        bad = sane_rows(rows)
        if bad:
            return bad
        s = summary(rows)
        if close(s["energy"], base["energy"], 1e-12) and not (s["flags"] - base["flags"]):
            return "the changed model term had no effect on the number and no flag says so"
        return None

    return check


def oracle_sane(d: Path, r: Result) -> str | None:
    rows = read_csv(d / "out.csv")
    if not rows:
        return "exit 0 but no rows written"
    return sane_rows(rows)


def oracle_refuse(d: Path, r: Result) -> str | None:
    return "exit 0 where the input must be refused"


# --- the runner ----------------------------------------------------------------------------------------------------


def run(argv: list[str], cwd: Path, timeout: float = TIMEOUT_S) -> Result:
    t = time.time()
    try:
        p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, errors="replace")
        return Result(p.returncode, p.stdout, p.stderr, time.time() - t)
    except subprocess.TimeoutExpired as e:
        return Result(-999, str(e.stdout or ""), f"TIMEOUT after {timeout}s", time.time() - t)


def classify_exit(d: Path, r: Result, oracle, base: dict | None) -> tuple[str, str]:
    if r.rc == -999:
        return "internal", "hang: " + r.err
    if r.rc == 4 or "Traceback" in r.err:
        return "internal", last_line(r.err)
    if r.rc == 0:
        why = oracle(d, r)
        return ("WRONG0", why) if why else ("right0", "")
    lines = [x for x in r.err.splitlines() if x.strip()]
    errors = [x for x in lines if x.startswith("cosim: error:") or x.startswith("cosim: ") and "error" in x[:20]]
    # sweep/validate list each failed run on its own line ("cosim: error: run NAME: ...") before their one verdict
    errors = [x for x in errors if not x.startswith("cosim: error: run ")] or errors[-1:]
    stray = [x for x in lines if not x.startswith("cosim:") and not x.startswith("  ")]
    if len(errors) != 1 or stray:
        return "badrefusal", f"rc={r.rc} {len(errors)} error line(s), {len(stray)} stray: " + " | ".join(lines[-3:])[:300]
    if r.rc == 3 and base is not None:
        rows = read_csv(d / "out.csv")
        if rows:
            bad = sane_rows(rows) or prefix(base, summary(rows))
            if bad:
                return "WRONG0", "exit 3 output: " + bad  # a wrong number written, even at exit 3
    return "refusal", errors[0][:300]


def last_line(s: str) -> str:
    lines = [x for x in s.splitlines() if x.strip()]
    return lines[-1][:300] if lines else ""


# --- inputs ------------------------------------------------------------------------------------------------------


def prepare_bases(out: Path) -> dict[str, Path]:
    """Decompressed copies of the real runs the mutations start from."""
    src = {
        "o3-600": SHARED / "cosim-v24-se-o3-600MHz",
        "biglittle47": ROOT / "traces" / "cosim-v24-se-biglittle-1800-1400MHz",
        "minor39": ROOT / "tests" / "data" / "gem5-minor-sleep-1000MHz",
        "clock3": ROOT / "tests" / "data" / "clock-change-1000-1800MHz",
        "atomic4": SHARED / "cosim-v24-starter-se-atomic-4cores-1000MHz",
        "o3-2cpu": SHARED / "cosim-v24-se-o3-2cpu-1process-1000MHz",
    }
    bases = {}
    for name, s in src.items():
        if not s.is_dir():
            continue
        d = out / "base" / name
        if not d.exists():
            d.mkdir(parents=True)
            for f in s.iterdir():
                if f.name == "stats.txt.gz":
                    (d / "stats.txt").write_bytes(gzip.decompress(f.read_bytes()))
                elif f.is_file() and f.name in ("stats.txt", "config.ini", "config.json"):
                    shutil.copyfile(f, d / f.name)
        bases[name] = d
    return bases


def baseline(d: Path, extra=()) -> dict | None:
    r = run(cli("power", d, "-o", d.parent / f"{d.name}.base.csv", *extra), d.parent)
    if r.rc != 0:
        return None
    return summary(read_csv(d.parent / f"{d.name}.base.csv"))


def copy_run(src: Path, dst: Path) -> Path:
    dst.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.is_file():
            shutil.copyfile(f, dst / f.name)
    return dst


def dump_spans(text: bytes) -> list[tuple[int, int]]:
    starts = [m.start() for m in re.finditer(rb"-+ Begin Simulation Statistics -+", text)]
    ends = [m.end() for m in re.finditer(rb"-+ End Simulation Statistics\s+-+\n?", text)]
    return list(zip(starts, ends))


def set_stat(text: bytes, pattern: bytes, value: bytes, dumps: list[int] | None) -> bytes:
    """Replace the value of every stat matching ``pattern`` in the given dumps (all if None)."""
    spans = dump_spans(text)
    out, pos = [], 0
    for i, (a, b) in enumerate(spans):
        if dumps is not None and i not in dumps:
            continue
        out.append(text[pos:a])
        block = re.sub(rb"(?m)^(\S*" + pattern + rb"\S*\s+)(-?[0-9.eE+naif-]+)", lambda m: m.group(1) + value, text[a:b])
        out.append(block)
        pos = b
    out.append(text[pos:])
    return b"".join(out)


def scale_stat(text: bytes, pattern: bytes, factor: float, dumps: list[int] | None) -> bytes:
    spans = dump_spans(text)
    out, pos = [], 0

    def sub(m):
        try:
            v = float(m.group(2))
        except ValueError:
            return m.group(0)
        return m.group(1) + repr(v * factor).encode()

    for i, (a, b) in enumerate(spans):
        if dumps is not None and i not in dumps:
            continue
        out.append(text[pos:a])
        out.append(re.sub(rb"(?m)^(\S*" + pattern + rb"\S*\s+)([0-9][0-9.eE+-]*)", sub, text[a:b]))
        pos = b
    out.append(text[pos:])
    return b"".join(out)


# --- case generators ------------------------------------------------------------------------------------------------


def stats_cases(rng: random.Random, bases: dict[str, Path], bl: dict[str, dict], n: int) -> list[Case]:
    cases: list[Case] = []
    names = [k for k in ("minor39", "clock3", "o3-600", "atomic4", "o3-2cpu", "biglittle47") if bl.get(k)]

    def mk(cls, name, base, mutate, oracle, extra=(), gz=False):
        def build(d: Path, base=base, mutate=mutate, extra=extra, gz=gz):
            run_dir = copy_run(bases[base], d / "run")
            data = (run_dir / "stats.txt").read_bytes()
            new = mutate(data)
            if gz:
                (run_dir / "stats.txt").unlink()
                (run_dir / "stats.txt.gz").write_bytes(new)
            else:
                (run_dir / "stats.txt").write_bytes(new)
            return cli("power", run_dir, "-o", d / "out.csv", *extra)

        cases.append(Case(cls, f"{name} [{base}]", build, oracle, base=bl[base]))

    while len(cases) < n:
        b = rng.choice(names[:5] if rng.random() < 0.85 else names)
        base = bl[b]
        k = rng.randrange(12)
        ap = rng.random() < 0.3
        extra = ("--allow-partial",) if ap else ()
        if k == 0:
            frac = rng.uniform(0.05, 0.98)
            mk(
                "stats-truncate",
                f"cut at {frac:.3f}{' +allow-partial' if ap else ''}",
                b,
                lambda t, f=frac: t[: int(len(t) * f)],
                oracle_loss(base, allow_partial=ap),
                extra,
            )
        elif k == 1:
            nz = rng.choice([512, 4096, 65536, 1 << 20])
            mk(
                "stats-zero-tail",
                f"append {nz} zero bytes{' +allow-partial' if ap else ''}",
                b,
                lambda t, nz=nz: t + b"\0" * nz,
                oracle_loss(base, allow_partial=ap),
                extra,
            )
        elif k == 2:
            frac = rng.uniform(0.3, 0.95)
            mk(
                "stats-zero-tail",
                f"zero-fill from {frac:.2f} to end{' +allow-partial' if ap else ''}",
                b,
                lambda t, f=frac: t[: int(len(t) * f)] + b"\0" * (len(t) - int(len(t) * f)),
                oracle_loss(base, allow_partial=ap),
                extra,
            )
        elif k == 3:
            junk = rng.choice(
                [
                    b"garbage line here\n" * 40,
                    b"system.cpu.numCycles 12\n",
                    os.urandom(3000),
                    b"\n---------- Begin Simulation Statistics ----------\nsimSeconds 0.1\n",
                    b"Exiting @ tick 123 because exit\n",
                ]
            )
            mk(
                "stats-junk-tail",
                f"append {len(junk)} bytes of {'binary' if NUL in junk else repr(junk[:20])}{' +allow-partial' if ap else ''}",
                b,
                lambda t, j=junk: t + j,
                oracle_loss(base, allow_partial=ap),
                extra,
            )
        elif k == 4:
            spans = dump_spans((bases[b] / "stats.txt").read_bytes())
            every = rng.random() < 0.5 or len(spans) == 1
            dumps = None if every else [rng.randrange(len(spans))]
            stat = rng.choice([rb"\.numCycles", rb"\.committedInsts", rb"\.numInsts", rb"dcache\.overallAccesses::total"])
            val = rng.choice([b"-1", b"-12345", b"-1e9"])
            mk(
                "stats-negative",
                f"{stat.decode()} = {val.decode()} in {'every dump' if every else f'dump {dumps}'}",
                b,
                lambda t, s=stat, v=val, ds=dumps: set_stat(t, s, v, ds),
                oracle_refuse,
            )
        elif k == 5:
            spans = dump_spans((bases[b] / "stats.txt").read_bytes())
            dumps = None if rng.random() < 0.4 else [rng.randrange(len(spans))]
            stat = rng.choice(
                [rb"\.numCycles", rb"\.committedInsts", rb"dcache\.overallMisses::total", rb"simSeconds", rb"simTicks", rb"\.numInsts"]
            )
            val = rng.choice([b"nan", b"inf", b"-inf", b"1e300", b"1e30", b"NaN"])
            mk(
                "stats-nan-huge",
                f"{stat.decode()} = {val.decode()} in {dumps or 'every dump'}",
                b,
                lambda t, s=stat, v=val, ds=dumps: set_stat(t, s, v, ds),
                oracle_flag_or_same(base),
            )
        elif k == 6:
            spans = dump_spans((bases[b] / "stats.txt").read_bytes())
            i = rng.randrange(len(spans))

            def dup(t, i=i):
                sp = dump_spans(t)
                a, e = sp[i]
                return t[:e] + t[a:e] + t[e:]

            mk("stats-dup-dump", f"dump {i} written twice", b, dup, oracle_flag_or_same(base))
        elif k == 7:
            enc = rng.choice(["crlf", "bom", "utf16", "latin1-comment", "nul-in-line", "tabs", "trailing-ws"])

            def recode(t, enc=enc):
                if enc == "crlf":
                    return t.replace(b"\n", b"\r\n")
                if enc == "bom":
                    return b"\xef\xbb\xbf" + t
                if enc == "utf16":
                    return t.decode("utf-8", "replace").encode("utf-16")
                if enc == "latin1-comment":
                    return re.sub(rb"#", b"# caf\xe9 \xff ", t, count=5)
                if enc == "nul-in-line":
                    i = t.find(b"numCycles")
                    return t[:i] + b"\0\0" + t[i:] if i > 0 else t
                if enc == "tabs":
                    return re.sub(rb"(?m)^(\S+) +", lambda m: m.group(1) + b"\t", t)
                return t.replace(b"\n", b"   \n")

            benign = enc in ("crlf", "bom", "latin1-comment", "tabs", "trailing-ws")
            mk("stats-encoding", enc, b, recode, oracle_same(base) if benign else oracle_flag_or_same(base))
        elif k == 8:
            kind = rng.choice(["whole", "cut", "flip", "two-members", "trailing-junk"])

            seed = rng.random()

            def gz(t, kind=kind, seed=seed):
                z = gzip.compress(t, 6, mtime=0)
                if kind == "cut":
                    return z[: int(len(z) * (0.2 + 0.7 * seed))]
                if kind == "flip":
                    i = int(len(z) * (0.1 + 0.8 * seed))
                    return z[:i] + bytes([z[i] ^ 0x55]) + z[i + 1 :]
                if kind == "two-members":
                    return z + gzip.compress(t[:1000], 6, mtime=0)
                if kind == "trailing-junk":
                    return z + b"junk after the gzip member"
                return z

            orc = oracle_same(base) if kind == "whole" else oracle_loss(base, allow_partial=ap)
            mk("stats-gzip", f"gzip {kind}{' +allow-partial' if ap else ''}", b, gz, orc, extra, gz=True)
        elif k == 9:
            spans = dump_spans((bases[b] / "stats.txt").read_bytes())
            frac = rng.uniform(0.1, 0.8)
            size = rng.choice([4096, 65536])
            mk(
                "stats-zero-hole",
                f"{size} zero bytes at {frac:.2f}{' +allow-partial' if ap else ''}",
                b,
                lambda t, f=frac, s=size: t[: int(len(t) * f)] + b"\0" * s + t[int(len(t) * f) + s :],
                oracle_loss(base, allow_partial=ap),
                extra,
            )
        elif k == 10:
            stat = rng.choice([rb"\.numCycles", rb"\.committedInsts", rb"dcache\.overallAccesses::total", rb"\.numInsts"])
            fac = rng.choice([1.05, 0.9, 1e6, 1e-6])
            big = fac == 1e6  # more events per cycle than a core counts; x1e-6 is a quiet but possible run
            mk(
                "stats-scale",
                f"{stat.decode()} x {fac}",
                b,
                lambda t, s=stat, f=fac: scale_stat(t, s, f, None),
                oracle_flag_or_same(base) if big else oracle_sane,
            )
        else:
            spans = dump_spans((bases[b] / "stats.txt").read_bytes())
            stat = rng.choice([rb"\.numCycles", rb"simSeconds", rb"\.committedInsts", rb"finalTick"])

            def drop(t, s=stat):
                return re.sub(rb"(?m)^\S*" + s + rb"\S*\s+.*\n", b"", t)

            mk("stats-drop-stat", f"lines of {stat.decode()} removed", b, drop, oracle_flag_or_same(base))
    return cases


def config_cases(rng: random.Random, bases: dict[str, Path], bl: dict[str, dict], n: int) -> list[Case]:
    cases: list[Case] = []
    names = [k for k in ("o3-600", "minor39", "clock3", "atomic4") if bl.get(k) and (bases[k] / "config.ini").exists()]
    while len(cases) < n:
        b = rng.choice(names)
        base = bl[b]
        k = rng.randrange(7)

        def mk(name, mutate, oracle, b=b, target="config.ini"):
            def build(d: Path):
                run_dir = copy_run(bases[b], d / "run")
                (run_dir / target).write_bytes(mutate((run_dir / target).read_bytes()))
                return cli("power", run_dir, "-o", d / "out.csv")

            cases.append(Case("config", f"{name} [{b}]", build, oracle))

        if k == 0:
            frac = rng.uniform(0.0, 0.95)
            mk(f"config.ini cut at {frac:.2f}", lambda t, f=frac: t[: int(len(t) * f)], oracle_flag_or_same(base))
        elif k == 1:
            val = rng.choice([b"0", b"-1000", b"1", b"nan", b"abc", b"99999999999999999999"])
            mk(f"every clock = {val.decode()}", lambda t, v=val: re.sub(rb"(?m)^clock=\S+", b"clock=" + v, t), oracle_flag_or_same(base))
        elif k == 2:
            junk = rng.choice([os.urandom(2000), b"[broken\nkey without equals\n", b"\0" * 4096])
            mk("config.ini junk appended", lambda t, j=junk: t + j, oracle_flag_or_same(base))
        elif k == 3:
            mk("config.ini empty", lambda t: b"", oracle_flag_or_same(base))
        elif k == 4:
            mk("config.ini utf-16", lambda t: t.decode("utf-8", "replace").encode("utf-16"), oracle_flag_or_same(base))
        elif k == 5:
            typ = rng.choice([b"TimingSimpleCPU", b"NoSuchCPU", b"", b"X86O3CPU"])
            mk(
                f"cpu type = {typ.decode()!r}",
                lambda t, v=typ: re.sub(rb"(?m)^(type=)(\w*O3CPU|\w*MinorCPU|\w*AtomicSimpleCPU)$", lambda m: m.group(1) + v, t),
                oracle_sane if typ == b"TimingSimpleCPU" else oracle_flag_or_same(base),
            )
        else:
            mk("config.ini zero-filled tail", lambda t: t[: len(t) // 2] + b"\0" * (len(t) - len(t) // 2), oracle_flag_or_same(base))
    # config.json (the big.LITTLE run that has one)
    bl_json = SHARED / "cosim-v24-se-biglittle-o3-1000MHz-minor-600MHz"
    if bl_json.is_dir():
        for kind in ["cut", "null-clock", "string-clock", "not-json", "list", "empty"]:

            def build(d: Path, kind=kind):
                run_dir = d / "run"
                run_dir.mkdir(parents=True)
                shutil.copyfile(bl_json / "stats.txt", run_dir / "stats.txt")
                t = (bl_json / "config.json").read_bytes()
                if kind == "cut":
                    t = t[: len(t) // 3]
                elif kind == "null-clock":
                    t = re.sub(rb'"clock": \[[^\]]*\]', b'"clock": null', t)
                elif kind == "string-clock":
                    t = re.sub(rb'"clock": \[[^\]]*\]', b'"clock": "fast"', t)
                elif kind == "not-json":
                    t = b"{this is not json"
                elif kind == "list":
                    t = b"[1, 2, 3]"
                else:
                    t = b""
                (run_dir / "config.json").write_bytes(t)
                return cli("power", run_dir, "--config", run_dir / "config.json", "-o", d / "out.csv")

            cases.append(Case("config", f"config.json {kind} [biglittle-1000-600]", build, oracle_flag_or_same(BL_JSON_BASE)))
    return cases


BL_JSON_BASE: dict = {}


MODEL_FIELDS = [
    "plausibility",
    "events",
    "dynamic_terms",
    "static_terms",
    "fit",
    "envelope",
    "cores",
    "vf_table",
    "training",
    "units",
    "static_form",
    "cores_per_cluster",
    "isa",
    "core_kind",
    "name",
    "schema",
]


def model_cases(rng: random.Random, bases: dict[str, Path], n: int) -> list[Case]:
    cases: list[Case] = []
    run_for = {
        "cortex-a15-gemstone2018": "o3-600",
        "cortex-a15-walker2017": "o3-600",
        "cortex-a15-armpm-xu3": "o3-600",
        "cortex-a7-gemstone2018": "minor39",
    }
    models = {m: json.loads((ROOT / "models" / f"{m}.json").read_text()) for m in run_for}
    mbase: dict[str, dict | None] = {}
    for m, b in run_for.items():
        mbase[m] = baseline_model(bases[b], ROOT / "models" / f"{m}.json")
    while len(cases) < n:
        m = rng.choice([k for k in models if mbase.get(k)])
        base = mbase[m]
        b = run_for[m]
        doc = json.loads(json.dumps(models[m]))
        k = rng.randrange(9)
        orc = oracle_flag_or_same(base)
        if k in (0, 1):
            f = rng.choice([x for x in MODEL_FIELDS if x in doc])
            v = rng.choice([None, "text", [], 7, {}, True])
            doc[f] = v
            name = f"{f} = {json.dumps(v)}"
        elif k == 2:
            f = rng.choice([x for x in MODEL_FIELDS + ["notes", "source"] if x in doc])
            del doc[f]
            name = f"{f} removed"
        elif k == 3:
            terms = doc.get("static_terms") or []
            if not terms:
                continue
            i = rng.randrange(len(terms))
            key = rng.choice(["f_exp", "v_exp"])
            old = terms[i].get(key, 0)
            v = rng.choice([old + 0.5, -1, 1e9, "1", None, old + 1])
            terms[i][key] = v
            name = f"static_terms[{i}].{key} {old} -> {json.dumps(v)}"
            if isinstance(v, float) and v == old + 0.5:
                orc = oracle_changed_or_flag(base)
        elif k == 4:
            terms = doc.get("dynamic_terms") or []
            if not terms:
                continue
            i = rng.randrange(len(terms))
            orig = terms[i]["coefficient"]
            v = rng.choice([-abs(orig), orig * 1e6, 0.0, "x", None, float("nan")])
            terms[i]["coefficient"] = v
            name = f"dynamic_terms[{i}].coefficient = {v}"
            if isinstance(v, float) and v == v and abs(v) <= abs(orig):
                orc = oracle_sane  # a negative or zero coefficient exists in published fits
        elif k == 5:
            doc["dynamic_terms"] = []
            name = "dynamic_terms = []"
        elif k == 6:
            pts = doc.get("vf_table", {}).get("points_mhz_v") or []
            if not pts:
                continue
            kind = rng.choice(["reverse", "negative-volt", "empty", "dup", "string"])
            if kind == "reverse":
                pts.reverse()
                orc = oracle_same(base)
            elif kind == "negative-volt":
                for p in pts:
                    p[1] = -p[1]
            elif kind == "empty":
                pts.clear()
            elif kind == "dup":
                pts.append([pts[0][0], pts[0][1] * 1.2])
            else:
                pts[0][0] = "fast"
            name = f"vf_table {kind}"
        elif k == 7:
            raw = json.dumps(doc).encode()
            kind = rng.choice(["cut", "utf16", "list", "empty", "nan-literal"])
            payload = {
                "cut": raw[: len(raw) // 2],
                "utf16": json.dumps(doc).encode("utf-16"),
                "list": b"[]",
                "empty": b"",
                "nan-literal": raw.replace(b'"coefficient": ', b'"coefficient": NaN, "x": ', 1),
            }[kind]
            cases.append(
                Case("model-file", f"{m}: file {kind}", mk_model_build(bases[b], payload), oracle_refuse if kind != "nan-literal" else orc)
            )
            continue
        else:
            if "cores" in doc and isinstance(doc["cores"], dict):
                v = rng.choice([-0.5, 1.5, 0.0, 1.0, "x"])
                doc["cores"]["per_core_static_fraction"] = v
                name = f"cores.per_core_static_fraction = {v}"
                if v in (0.0, 1.0):
                    orc = oracle_sane
            else:
                continue
        cases.append(Case("model-file", f"{m}: {name}", mk_model_build(bases[b], json.dumps(doc).encode()), orc))
    return cases


def mk_model_build(run_dir: Path, payload: bytes):
    def build(d: Path):
        r = copy_run(run_dir, d / "run")
        (d / "model.json").write_bytes(payload)
        return cli("power", r, "--model", d / "model.json", "-o", d / "out.csv")

    return build


def baseline_model(run_dir: Path, model: Path) -> dict | None:
    out = run_dir.parent / f"{run_dir.name}.{model.stem}.csv"
    r = run(cli("power", run_dir, "--model", model, "-o", out), run_dir.parent)
    return summary(read_csv(out)) if r.rc == 0 else None


# --- commands over the same inputs -----------------------------------------------------------------------------------

REAL_RUNS = [
    "cosim-v24-se-o3-600MHz",
    "cosim-v24-se-o3-200MHz",
    "cosim-v24-se-o3-2cpu-1process-1000MHz",
    "cosim-v24-starter-se-atomic-4cores-1000MHz",
    "public-new-v24-x86-simpoint-2dumps",
    "public-old-x86-fs-timingsimple-ruby-mesi",
    "public-old2012-arm32-fs-o3-dual",
    "public-old2016-arm-se-minor-mcf",
    "public-old2016-arm64-fs-o3-dual",
    "public-old2016-arm64-fs-timingsimple-ruby-moesi",
    "public-old2016-null-dram-lowp-28dumps",
    "public-new-2022-arm-se-minor-starterse-cpucluster",
    "public-ext2019-empty-stats",
    "cosim-v24-se-biglittle-o3-1800MHz-minor-1400MHz",
]


def command_cases(rng: random.Random, n: int) -> list[Case]:
    """power and whatif (and sweep) on the same real run with the same options must agree: what power refuses for a
    reason that a clock does not change, whatif must not price; power's flags must be on whatif's rows."""
    cases: list[Case] = []
    optsets = [(), ("--any-isa",), ("--any-isa", "--extrapolate"), ("--extrapolate",), ("--keep-implausible",)]
    for run_name in REAL_RUNS:
        src = SHARED / run_name
        if not src.is_dir():
            continue
        for opts in optsets:
            cmds = ["whatif", "sweep"] if "--keep-implausible" not in opts else ["sweep"]
            for cmd in cmds:
                cases.append(
                    Case(
                        f"cmd-{cmd}",
                        f"{cmd} vs power {' '.join(opts)} [{run_name}]",
                        lambda d, src=src, o=opts, c=cmd: pair(d, src, o, c),
                        lambda d, r: None,
                        special=None,
                    )
                )
                cases[-1].special = lambda d, src=src, o=opts, c=cmd: pair_case(d, src, o, c)
        # soc with the bundled GPU trace (CPU side refused by power -> soc must refuse too)
        cases.append(
            Case("cmd-soc", f"soc vs power [{run_name}]", lambda d: [], lambda d, r: None, special=lambda d, src=src: soc_case(d, src))
        )
    return cases[:n] if n else cases


def pair(d, src, opts, cmd):
    return []


def power_then(d: Path, src: Path, opts) -> tuple[Result, dict | None]:
    pr = run(cli("power", src, "-o", d / "power.csv", *opts), d)
    return pr, (summary(read_csv(d / "power.csv")) if pr.rc == 0 else None)


CLOCK_WORDS = ("band", "MHz", "extrapolat", "clock")


def pair_case(d: Path, src: Path, opts, cmd) -> tuple[str, str]:
    d.mkdir(parents=True, exist_ok=True)
    before = hash_tree(src)
    pr, ps = power_then(d, src, opts)
    if cmd == "whatif":
        freqs = []
        if ps:
            rows = read_csv(d / "power.csv")
            seen = {}
            for r in rows:
                seen.setdefault(r["cluster"], r["freq_mhz"])
            freqs = [x for c, f in seen.items() for x in ("--freqs", f"{c}={round(float(f))}")]
        else:
            m = re.search(r"--freqs (\S+=\d+)", pr.err)
            if m:
                freqs = ["--freqs", m.group(1)]
        wr = run(cli("whatif", src, "-o", d / "out.csv", *opts, *freqs), d)
    else:
        wr = run(cli("sweep", src, "-o", d / "out.csv", *opts), d)
    if hash_tree(src) != before:
        return "lost", "input changed"
    if wr.rc == -999 or wr.rc == 4 or "Traceback" in wr.err:
        return "internal", last_line(wr.err)
    if pr.rc == 4 or "Traceback" in pr.err:
        return "internal", "power: " + last_line(pr.err)
    rows = read_csv(d / "out.csv")
    if wr.rc != 0:
        kind, why = classify_exit(d, wr, oracle_sane, None)
        if kind == "WRONG0":
            return kind, why
        if pr.rc == 0 and kind == "refusal" and cmd == "sweep":
            return "WRONG0", f"sweep refuses what power prices: {why}"
        return kind, why
    # exit 0
    bad = sane_rows([r for r in rows if r.get("power_w") is not None])
    if bad:
        return "WRONG0", bad
    wflags = set()
    for r in rows:
        for col in ("flags",):
            wflags |= {f.split(":")[0] for f in (r.get(col) or "").replace(";", " ").replace(",", " ").split() if f}
        if str(r.get("implausible", "")).lower() == "true":
            wflags.add("implausible")
    if pr.rc != 0:
        why = last_line(pr.err)
        if cmd == "whatif" and not any(w in why for w in CLOCK_WORDS):
            return "WRONG0", f"whatif prices what power refuses for a non-clock reason: {why[:200]}"
        if cmd == "sweep" and "--allow-partial" not in opts:
            energies = [num(r.get("energy_j")) for r in rows if r.get("energy_j")]
            if any(e is not None and e == e for e in energies):
                return "WRONG0", f"sweep priced at exit 0 what power refuses: {why[:200]}"
        return "right0", ""
    if ps:
        missing = {f for f in ps["flags"] if f != "extrapolated" and not f.startswith("freq")} - wflags
        if cmd == "whatif" and missing and rows and "flags" in rows[0]:
            return "WRONG0", f"whatif drops power's flags {sorted(missing)}"
        if cmd == "whatif":
            es = [num(r.get("energy_j")) for r in rows if r.get("energy_j")]
            if es and not any(e is not None and close(e, ps["energy"], 0.02) for e in es):
                return "WRONG0", f"whatif at the run's own clocks: energy {es[:3]} vs power's {ps['energy']:.5g} J"
        if cmd == "sweep":
            es = [num(r.get("energy_j")) for r in rows if r.get("energy_j")]
            if es and not close(es[0], ps["energy"], 1e-6):
                return "WRONG0", f"sweep energy {es[0]} vs power's {ps['energy']:.6g} J"
    return "right0", ""


def soc_case(d: Path, src: Path) -> tuple[str, str]:
    d.mkdir(parents=True, exist_ok=True)
    stats = src / "stats.txt"
    pr, ps = power_then(d, src, ())
    sr = run(cli("soc", stats, "--gpu", ROOT / "traces" / "cosim-nvprof-dct.txt", "-o", d / "out.csv"), d)
    if sr.rc == 4 or "Traceback" in sr.err or sr.rc == -999:
        return "internal", last_line(sr.err)
    if sr.rc != 0:
        return classify_exit(d, sr, oracle_sane, None)
    if pr.rc != 0:
        return "WRONG0", f"soc prices a CPU side power refuses: {last_line(pr.err)[:200]}"
    rows = read_csv(d / "out.csv")
    for r in rows:
        for k, v in r.items():
            if k and k.endswith("_w") and v not in ("", None):
                x = num(v)
                if x is None or not math.isfinite(x) or x < 0:
                    return "WRONG0", f"soc {k}={v}"
    return "right0", ""


# --- options --------------------------------------------------------------------------------------------------------


def option_cases(rng: random.Random, bases: dict[str, Path], bl: dict[str, dict]) -> list[Case]:
    cases: list[Case] = []
    b = "biglittle47" if bl.get("biglittle47") else "o3-600"
    base = bl[b]
    clusters = sorted({k[1] for k in base["per_epoch"]})
    c0 = clusters[0]

    def add(cls, name, argv_tail, oracle, *, prep=None, cmd="power", input_is_run=True):
        def build(d: Path):
            r = copy_run(bases[b], d / "run")
            if prep:
                prep(d, r)
            tail = [str(x).replace("{RUN}", str(r)).replace("{D}", str(d)) for x in argv_tail]
            return cli(cmd, r, *tail)

        cases.append(Case(cls, f"{cmd} {name} [{b}]", build, oracle))

    for v in ["0", "-5", "nan", "inf", "1e9", "abc", "", "600,", "600,600", "1e-3", "2000", "3000"]:
        for extra in [(), ("--extrapolate",)]:
            add(
                "opt-freqs",
                f"--freqs {c0}={v} {' '.join(extra)}",
                ["--freqs", f"{c0}={v}", "-o", "{D}/out.csv", *extra],
                lambda d, r: sane_rows(read_csv(d / "out.csv")) or (None if read_csv(d / "out.csv") else "no rows"),
                cmd="whatif",
            )
    for v in ["0", "-1", "nan", "inf", "100", "0.9", "1.0", "1.5", "0.0001", "1e308"]:
        add(
            "opt-voltage",
            f"--voltage {c0}={v}",
            ["--voltage", f"{c0}={v}", "-o", "{D}/out.csv"],
            oracle_sane if v in ("0.9", "1.0") else oracle_flag_or_same(base),
        )
    for v in ["-300", "nan", "inf", "1e6", "25", "85", "-40", "200", "-273.15"]:
        add(
            "opt-temperature",
            f"--temperature {v}",
            ["--temperature", v, "-o", "{D}/out.csv"],
            oracle_sane if v in ("25", "85") else oracle_flag_or_same(base),
        )
    for combo in [
        ("--any-isa",),
        ("--extrapolate",),
        ("--allow-partial",),
        ("--any-isa", "--extrapolate", "--allow-partial"),
        ("--strict",),
        ("--keep-implausible",),
        ("--voltage-model",),
        ("--powered-cores", f"{c0}=4"),
        ("--powered-cores", f"{c0}=0"),
        ("--powered-cores", f"{c0}=-1"),
        ("--powered-cores", f"{c0}=1000"),
    ]:
        same = combo in (
            ("--any-isa",),
            ("--extrapolate",),
            ("--allow-partial",),
            ("--any-isa", "--extrapolate", "--allow-partial"),
            ("--keep-implausible",),
            ("--strict",),
        )
        sane_only = combo == ("--powered-cores", f"{c0}=4")  # what the user asks: static of 4 cores
        add(
            "opt-combo",
            " ".join(combo),
            [*combo, "-o", "{D}/out.csv"],
            oracle_same(base) if same else oracle_sane if sane_only else oracle_flag_or_same(base),
        )

    # -o naming an input / hard link / read-only / symlink loops
    def out_is(target):
        return lambda d, r: None

    for target in ["stats.txt", "config.ini"]:
        add("opt-output-input", f"-o {target} (the input)", ["-o", "{RUN}/" + target], oracle_refuse)
        add("opt-output-input", f"--plot {target}", ["-o", "{D}/out.csv", "--plot", "{RUN}/" + target], oracle_refuse)
        add("opt-output-input", f"--ptrace {target}", ["-o", "{D}/out.csv", "--ptrace", "{RUN}/" + target], oracle_refuse)

    add(
        "opt-output-input",
        "-o a hard link to stats.txt",
        ["-o", "{D}/link.csv"],
        oracle_refuse,
        prep=lambda d, r: os.link(r / "stats.txt", d / "link.csv"),
    )
    add(
        "opt-output-input",
        "-o a symlink to stats.txt",
        ["-o", "{D}/sym.csv"],
        oracle_refuse,
        prep=lambda d, r: os.symlink(r / "stats.txt", d / "sym.csv"),
    )

    def ro(d, r):
        (d / "ro").mkdir()
        os.chmod(d / "ro", 0o555)

    if os.geteuid() != 0:  # root writes anywhere
        add("opt-readonly", "-o into a read-only folder", ["-o", "{D}/ro/out.csv"], oracle_refuse, prep=ro)
        add("opt-readonly", "--plot into a read-only folder", ["-o", "{D}/out.csv", "--plot", "{D}/ro/p.png"], oracle_refuse, prep=ro)
        add("opt-readonly", "whatif -o into a read-only folder", ["-o", "{D}/ro/out.csv"], oracle_refuse, prep=ro, cmd="whatif")
    add(
        "opt-readonly",
        "-o into a missing folder",
        ["-o", "{D}/no/such/out.csv"],
        lambda d, r: None if (d / "no/such/out.csv").exists() else "exit 0, nothing written",
    )
    add("opt-readonly", "-o is a folder", ["-o", "{D}"], oracle_refuse)
    add("opt-readonly", "-o /dev/full", ["-o", "/dev/full"], oracle_refuse)

    def loop_cases():
        out = []
        for kind in ["self", "pair", "dir-into-itself", "dangling", "dev-null", "dir-no-stats"]:

            def build(d: Path, kind=kind):
                r = d / "run"
                r.mkdir(parents=True)
                shutil.copyfile(bases[b] / "config.ini", r / "config.ini")
                if kind == "self":
                    os.symlink("stats.txt", r / "stats.txt")
                    target = r
                elif kind == "pair":
                    os.symlink("b.txt", r / "stats.txt")
                    os.symlink("stats.txt", r / "b.txt")
                    target = r / "stats.txt"
                elif kind == "dir-into-itself":
                    shutil.copyfile(bases[b] / "stats.txt", r / "stats.txt")
                    os.symlink(".", r / "loop")
                    target = r / "loop" / "loop" / "loop"
                elif kind == "dangling":
                    os.symlink("nowhere.txt", r / "stats.txt")
                    target = r
                elif kind == "dev-null":
                    target = Path("/dev/null")
                else:
                    target = r
                return cli("power", target, "-o", d / "out.csv")

            orc = oracle_same(base) if kind == "dir-into-itself" else oracle_refuse
            out.append(Case("opt-symlink", f"power stats {kind}", build, orc))
            out.append(
                Case(
                    "opt-symlink",
                    f"sweep {kind}",
                    lambda d, kind=kind, build=build: [("sweep" if a == "power" else a) for a in build(d)],
                    orc if kind != "dir-into-itself" else oracle_sane,
                )
            )
        return out

    cases += loop_cases()

    # sweep over a folder where one run is mutated: the loss must be reported
    def sweep_build(d: Path):
        root = d / "runs"
        for nm in ["a", "b", "c"]:
            r = copy_run(bases["o3-600"], root / nm)
            if nm == "b":
                t = (r / "stats.txt").read_bytes()
                (r / "stats.txt").write_bytes(t[: len(t) // 2])
        return cli("sweep", root, "-o", d / "out.csv")

    cases.append(
        Case("opt-combo", "sweep of 3 runs, one cut", sweep_build, lambda d, r: "exit 0 with one run of three cut, without --allow-partial")
    )
    return cases


# --- validate, explore ------------------------------------------------------------------------------------------------


def study_cases() -> list[Case]:
    cases: list[Case] = []
    armpm = ROOT.parent / "shared" / "data" / "armpm" / "Concatenated_Data" / "cBench" / "xu3_cset_perfcpu_cBench_eMMC_big.data"
    xu3 = SHARED / "xu3-mibench-train"
    if armpm.is_file() and xu3.is_dir():
        progs = sorted(p for p in xu3.iterdir() if p.is_dir())[:3]

        for kind in ["clean", "cut-one", "zero-tail-one", "negative-cycles-one"]:

            def build(d: Path, kind=kind):
                for i, p in enumerate(progs):
                    for clk in sorted(p.iterdir())[:1]:
                        dst = copy_run(clk, d / "runs" / p.name / clk.name)
                        if i == 1 and kind != "clean":
                            t = (dst / "stats.txt").read_bytes()
                            if kind == "cut-one":
                                t = t[: len(t) * 2 // 3]
                            elif kind == "zero-tail-one":
                                t = t + b"\0" * 8192
                            else:
                                t = set_stat(t, rb"\.numCycles", b"-5", None)
                            (dst / "stats.txt").write_bytes(t)
                return cli("validate", armpm, d / "runs", "-o", d / "out.csv")

            orc = (
                (lambda d, r: None if read_csv(d / "out.csv") else "no rows")
                if kind == "clean"
                else (lambda d, r: "exit 0 with a damaged run among the runs, no --allow-partial")
            )
            cases.append(Case("cmd-validate", f"validate {kind}", build, orc))

    # explore --dry-run must not run anything: a binary that leaves a mark
    for extra in [(), ("--no-check",)]:

        def build(d: Path, extra=extra):
            d.mkdir(parents=True, exist_ok=True)
            gem5 = d / "gem5.sh"
            gem5.write_text(f"#!/bin/sh\ntouch {d}/RAN\necho usage\n")
            gem5.chmod(0o755)
            (d / "se.py").write_text("# config\n")
            (d / "design.toml").write_text(
                f'[gem5]\nbinary = "{gem5}"\nconfig = "{d}/se.py"\nworkload = ["{d}/se.py", "1"]\n[parameters]\n"--big-cores" = [1, 2]\n'
            )
            return cli("explore", d / "design.toml", "-o", d / "study", "--dry-run", *extra)

        cases.append(
            Case(
                "cmd-explore",
                f"explore --dry-run {' '.join(extra)}",
                build,
                lambda d, r: "--dry-run ran the design's binary" if (d / "RAN").exists() else None,
            )
        )

    def user_folder(d: Path):
        d.mkdir(parents=True, exist_ok=True)
        (d / "mine").mkdir()
        (d / "mine" / "results.csv").write_text("my,own\n1,2\n")
        (d / "design.toml").write_text('[gem5]\nbinary = "no/gem5"\nconfig = "no/se.py"\nworkload = ["x"]\n[parameters]\n"--a" = [1]\n')
        return cli("explore", d / "design.toml", "-o", d / "mine", "--dry-run")

    cases.append(
        Case(
            "cmd-explore",
            "explore -o a user folder holding results.csv (dry run)",
            user_folder,
            lambda d, r: None if (d / "mine" / "results.csv").read_text() == "my,own\n1,2\n" else "user's results.csv overwritten",
        )
    )
    return cases


# --- GPU logs -------------------------------------------------------------------------------------------------------


def gpu_cases(rng: random.Random, n: int) -> list[Case]:
    files = sorted((ROOT / "tests" / "data" / "gpu").glob("*.*")) + [
        ROOT / "traces" / x for x in ("cosim-nvprof-dct.csv", "cosim-nvprof-dct.txt", "cosim-ocelot-video.trace")
    ]
    files = [f for f in files if f.suffix != ".md"]
    bases: dict[Path, tuple[int, list[dict]]] = {}
    ok = []
    tmp = Path(os.environ.get("CAMPAIGN_TMP", "/tmp"))
    for f in files:
        o = tmp / f"gpu-base-{f.name}.csv"
        args = ["--model", "ocelot-fermi-aalto2013"] if f.suffix == ".trace" else []
        r = run(cli("gpu", f, "-o", o, *args), tmp)
        if r.rc == 0:
            bases[f] = (r.rc, read_csv(o))
            ok.append(f)
    cases: list[Case] = []
    if not ok:
        return cases
    while len(cases) < n:
        f = rng.choice(ok)
        base_rows = bases[f][1]
        k = rng.randrange(7)
        args = ["--model", "ocelot-fermi-aalto2013"] if f.suffix == ".trace" else []
        ap = rng.random() < 0.3
        if ap:
            args = args + ["--allow-partial"]
        data = f.read_bytes()
        if k == 0:
            frac = rng.uniform(0.1, 0.97)
            new, what, kind = data[: int(len(data) * frac)], f"cut at {frac:.2f}", "loss"
        elif k == 1:
            new, what, kind = data + b"\0" * 4096, "zero tail", "loss"
        elif k == 2:
            lines = data.split(b"\n")
            i = rng.randrange(1, max(2, len(lines) - 1))
            lines.insert(i, b"garbage,,,not,a,row")
            new, what, kind = b"\n".join(lines), f"junk line at {i}", "loss"
        elif k == 3:
            new, what, kind = re.sub(rb"(?<=[,\s])(\d+\.\d+)(?=[,\s])", b"nan", data, count=rng.randint(1, 3)), "nan values", "flag"
        elif k == 4:
            new, what, kind = re.sub(rb"(?<=[,\s])(\d+\.\d+)(?=[,\s])", b"-\\1", data, count=rng.randint(1, 3)), "negative values", "flag"
        elif k == 5:
            new, what, kind = data.replace(b"\n", b"\r\n"), "CRLF", "same"
        else:
            new, what, kind = data.decode("utf-8", "replace").encode("utf-16"), "utf-16", "flag"

        def build(d: Path, new=new, f=f, args=args):
            d.mkdir(parents=True, exist_ok=True)
            p = d / f.name
            p.write_bytes(new)
            return cli("gpu", p, "-o", d / "out.csv", *args)

        def orc(d: Path, r: Result, kind=kind, base_rows=base_rows, ap=ap, new=new, data=data) -> str | None:
            rows = read_csv(d / "out.csv")
            for row in rows:
                for c, v in row.items():
                    if c and (c.endswith("_w") or c.endswith("_j")) and v not in ("", None):
                        x = num(v)
                        if x is None or not math.isfinite(x) or x < 0:
                            return f"{c}={v} at exit 0"
            if new == data:
                return None
            if kind == "same":
                return None if len(rows) == len(base_rows) else f"{len(rows)} rows vs {len(base_rows)}"
            if len(rows) < len(base_rows) and not warned(r.err):
                return f"{len(rows)} of {len(base_rows)} kernels at exit 0, no warning"
            if kind == "flag" and rows == base_rows:
                return None
            return None

        cases.append(Case("gpu-log", f"{f.name}: {what}{' +allow-partial' if ap else ''}", build, orc))
    return cases


def gpu_energy_cases(rng: random.Random, n: int) -> list[Case]:
    """cosim gpu-energy on a power log + kernel trace pair, one of them damaged."""
    data = ROOT / "tests" / "data" / "gpu"
    log, trace = data / "nvidia-smi-lms50-3-kernels.csv", data / "nsys-cuda-gpu-trace-3-kernels.csv"
    if not (log.is_file() and trace.is_file()):
        return []
    tmp = Path(os.environ.get("CAMPAIGN_TMP", "/tmp"))
    r = run(cli("gpu-energy", log, trace, "-o", tmp / "ge-base.csv"), tmp)
    base_rows = read_csv(tmp / "ge-base.csv") if r.rc == 0 else []
    cases: list[Case] = []
    while len(cases) < n:
        which = rng.choice(["log", "trace"])
        src = log if which == "log" else trace
        t = src.read_bytes()
        k = rng.randrange(6)
        if k == 0:
            frac = rng.uniform(0.2, 0.97)
            new, what = t[: int(len(t) * frac)], f"cut at {frac:.2f}"
        elif k == 1:
            new, what = t + NUL * 2048, "zero tail"
        elif k == 2:
            new, what = (
                re.sub(rb"(\d+\.\d+) W", b"nan W", t, count=2) if which == "log" else re.sub(rb",(\d{4,}),", b",-\\1,", t, count=1),
                "nan/negative values",
            )
        elif k == 3:
            lines = t.split(b"\n")
            i = rng.randrange(1, max(2, len(lines) - 1))
            new, what = b"\n".join(lines[:i] + lines[i + 1 :]), f"line {i} removed"
        elif k == 4:
            lines = t.split(b"\n")
            new, what = b"\n".join(lines[:1] + list(reversed(lines[1:]))), "rows reversed"
        else:
            new, what = t.replace(b"\n", b"\r\n"), "CRLF"

        def build(d: Path, which=which, new=new):
            d.mkdir(parents=True, exist_ok=True)
            a, b = d / log.name, d / trace.name
            a.write_bytes(new if which == "log" else log.read_bytes())
            b.write_bytes(new if which == "trace" else trace.read_bytes())
            return cli("gpu-energy", a, b, "-o", d / "out.csv")

        def orc(d: Path, r: Result, which=which, what=what, new=new, t=t) -> str | None:
            rows = read_csv(d / "out.csv")
            for row in rows:
                p, lo, hi = num(row.get("measured_power_w")), num(row.get("measured_power_lo_w")), num(row.get("measured_power_hi_w"))
                if p is not None and (not math.isfinite(p) or p <= 0):
                    return f"measured_power_w={p}"
                if None not in (p, lo, hi) and not (lo <= p <= hi):
                    return f"lo {lo} <= p {p} <= hi {hi} fails"
                e = num(row.get("measured_energy_j"))
                if e is not None and (not math.isfinite(e) or e < 0):
                    return f"measured_energy_j={e}"
            if which == "trace" and len(rows) < len(base_rows) and not warned(r.err) and "removed" not in what:
                return f"{len(rows)} of {len(base_rows)} kernels at exit 0, no warning"
            if what == "CRLF" and [x.get("measured_energy_j") for x in rows] != [x.get("measured_energy_j") for x in base_rows]:
                return "CRLF changed the energies"
            return None

        cases.append(Case("gpu-energy", f"{which} {what}", build, orc))
    return cases


# --- interrupts -----------------------------------------------------------------------------------------------------


def interrupt_cases(rng: random.Random, bases: dict[str, Path], n: int) -> list[Case]:
    b = "biglittle47" if "biglittle47" in bases else "minor39"
    cases = []
    for _ in range(n):
        sig = rng.choice([signal.SIGINT, signal.SIGKILL, signal.SIGTERM])
        delay = rng.uniform(0.05, 1.3)
        cases.append(
            Case(
                "interrupt",
                f"{sig.name} after {delay:.2f}s [{b}]",
                lambda d: [],
                lambda d, r: None,
                special=lambda d, sig=sig, delay=delay: interrupt(d, bases[b], sig, delay),
            )
        )
    return cases


_NEW_HASHES: dict = {}


def interrupt(d: Path, run_src: Path, sig, delay: float) -> tuple[str, str]:
    d.mkdir(parents=True, exist_ok=True)
    r = copy_run(run_src, d / "run")
    outs = [d / "o" / "p.csv", d / "o" / "p.png", d / "o" / "p.ptrace"]
    (d / "o").mkdir()
    old = run(cli("power", r, "-o", outs[0], "--plot", outs[1], "--ptrace", outs[2]), d)
    if old.rc != 0:
        return "internal", "setup run failed: " + last_line(old.err)
    old_h = [sha(p) for p in outs]
    newargs = (
        ["--voltage", "bigCluster=1.2", "--voltage", "littleCluster=1.2"]
        if "biglittle" in str(run_src) or run_src.name == "biglittle47"
        else ["--temperature", "60"]
    )
    if "h" not in _NEW_HASHES:
        (d / "n").mkdir()
        nouts = [d / "n" / p.name for p in outs]
        nr = run(cli("power", r, "-o", nouts[0], "--plot", nouts[1], "--ptrace", nouts[2], *newargs), d)
        _NEW_HASHES["h"] = [sha(p) for p in nouts] if nr.rc == 0 else None
        _NEW_HASHES["h2"] = None
    before = hash_tree(r)
    p = subprocess.Popen(
        cli("power", r, "-o", outs[0], "--plot", outs[1], "--ptrace", outs[2], *newargs),
        cwd=d,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(delay)
    p.send_signal(sig)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        return "internal", "hang after " + sig.name
    if hash_tree(r) != before:
        return "lost", "input changed"
    now = [sha(x) for x in outs]
    new_h = _NEW_HASHES.get("h")
    litter = [x.name for x in (d / "o").iterdir() if x not in outs]
    gen = [
        "either" if o == nh else "old" if a == o else ("new" if new_h and a == nh else "other")
        for a, o, nh in zip(now, old_h, new_h or [None] * 3)
    ]
    if "either" in gen:  # an output the new options do not change says nothing about the set
        known = [g for g in gen if g != "either"]
        gen = [g if g != "either" else (known[0] if known else "old") for g in gen]
    # a PNG may differ run to run; judge by the CSV and ptrace, and the PNG only if it is neither
    if len(set(gen)) > 1 or "other" in gen:
        return "lost", f"mixed outputs after {sig.name}: csv={gen[0]} png={gen[1]} ptrace={gen[2]}"
    if litter:
        return "lost", f"litter left after {sig.name}: {litter}"
    if p.returncode == 4 or "Traceback" in err:
        return "internal", last_line(err)
    if p.returncode == 0:
        return "right0", "finished before the signal"
    lines = [x for x in err.splitlines() if x.strip()]
    if sig == signal.SIGKILL or p.returncode < 0:  # killed, or signalled before cosim set its handler up
        return "refusal", f"killed; outputs all {gen[0]}"
    if not lines or not lines[-1].startswith("cosim:"):
        return "badrefusal", f"{sig.name}: rc={p.returncode} stderr: {' | '.join(lines[-2:])[:200]}"
    return "refusal", f"{sig.name}: outputs all {gen[0]}: {lines[-1][:150]}"


# --- main -------------------------------------------------------------------------------------------------------------


def execute(i: int, case: Case, out: Path) -> dict:
    d = out / "cases" / f"{i:04d}"
    if d.exists():
        shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    t = time.time()
    try:
        if case.special:
            kind, why = case.special(d)
            rc = ""
        else:
            argv = case.build(d)
            inputs_before = hash_tree(d)
            r = run(argv, d)
            rc = r.rc
            changed = [k for k, v in inputs_before.items() if hash_tree(d).get(k) != v]
            if changed:
                kind, why = "lost", f"input changed: {changed[:3]}"
            else:
                kind, why = classify_exit(d, r, case.oracle, case.base)
            if kind == "right0" and r.rc != 0:
                kind = "refusal"
            case.row["argv"] = " ".join(shlex_quote(a) for a in argv)
    except Exception as e:  # a bug in the campaign itself: recorded, not hidden
        kind, why, rc = "campaign-error", f"{type(e).__name__}: {e}", ""
    return {
        "id": i,
        "class": case.cls,
        "case": case.name,
        "outcome": kind,
        "rc": rc,
        "detail": why,
        "secs": round(time.time() - t, 2),
        "argv": case.row.get("argv", ""),
        "dir": str(d),
    }


def shlex_quote(a: str) -> str:
    import shlex

    return shlex.quote(str(a))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=600)
    ap.add_argument("--out", type=Path, default=Path("/tmp/campaign"))
    ap.add_argument("--seed", type=int, default=51)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated class prefixes to run")
    ap.add_argument("--src", default="", help="source tree whose cosim to run (default: the installed one)")
    a = ap.parse_args()
    global SRC
    SRC = str(Path(a.src).resolve()) if a.src else None
    out = a.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.environ["CAMPAIGN_TMP"] = str(out)
    rng = random.Random(a.seed)
    shared_before = hash_tree(SHARED) if SHARED.is_dir() else {}
    bundled_before = {**hash_tree(ROOT / "traces"), **{"tests/data/" + k: v for k, v in hash_tree(ROOT / "tests" / "data").items()}}
    bases = prepare_bases(out)
    bl = {k: baseline(v) for k, v in bases.items()}
    for k, v in bl.items():
        print(f"base {k}: " + (f"{v['epochs']} epochs, {v['energy']:.6g} J, flags {sorted(v['flags'])}" if v else "refused"))
    blj = SHARED / "cosim-v24-se-biglittle-o3-1000MHz-minor-600MHz"
    if blj.is_dir():
        r = run(cli("power", blj, "--config", blj / "config.json", "-o", out / "blj.base.csv"), out)
        BL_JSON_BASE.update(
            summary(read_csv(out / "blj.base.csv"))
            if r.rc == 0
            else {"epochs": -1, "energy": 0, "per_epoch": {}, "flags": set(), "lohi": []}
        )

    total = a.cases
    fixed = command_cases(rng, 0) + option_cases(rng, bases, bl) + study_cases()
    n_int = max(10, total // 20)
    n_gpu = max(20, total // 10)
    n_model = max(40, total // 6)
    n_cfg = max(20, total // 15)
    n_stats = max(50, total - len(fixed) - n_int - n_gpu - n_model - n_cfg - 6)
    cases = (
        stats_cases(rng, bases, bl, n_stats)
        + config_cases(rng, bases, bl, n_cfg)
        + model_cases(rng, bases, n_model)
        + fixed
        + gpu_cases(rng, n_gpu // 2)
        + gpu_energy_cases(rng, n_gpu - n_gpu // 2)
    )
    ints = interrupt_cases(rng, bases, n_int)
    if a.only:
        keep = tuple(a.only.split(","))
        cases = [c for c in cases if c.cls.startswith(keep)]
        ints = [c for c in ints if c.cls.startswith(keep)]
    print(f"{len(cases) + len(ints)} cases", flush=True)
    rows: list[dict] = []
    t0 = time.time()
    with ThreadPoolExecutor(a.jobs) as pool:
        futs = [pool.submit(execute, i, c, out) for i, c in enumerate(cases)]
        for n, f in enumerate(futs, 1):
            rows.append(f.result())
            if n % 50 == 0:
                print(f"  {n}/{len(cases)} done, {time.time() - t0:.0f} s", flush=True)
    for j, c in enumerate(ints):  # one at a time: timing matters
        rows.append(execute(len(cases) + j, c, out))
    if SHARED.is_dir() and hash_tree(SHARED) != shared_before:
        rows.append({"id": -1, "class": "inputs", "case": "../shared/data/gem5", "outcome": "lost", "detail": "shared data changed"})
    bundled_after = {**hash_tree(ROOT / "traces"), **{"tests/data/" + k: v for k, v in hash_tree(ROOT / "tests" / "data").items()}}
    if bundled_after != bundled_before:
        rows.append({"id": -2, "class": "inputs", "case": "traces/, tests/data", "outcome": "lost", "detail": "bundled data changed"})
    with open(out / "cases.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["id", "class", "case", "outcome", "rc", "detail", "secs", "argv", "dir"])
        w.writeheader()
        w.writerows(rows)
    table(rows)
    print(f"\n{len(rows)} cases in {time.time() - t0:.0f} s; cases: {out / 'cases.csv'}")
    return 0


OUTCOMES = ["refusal", "right0", "WRONG0", "internal", "badrefusal", "lost", "campaign-error"]


def table(rows: list[dict]) -> None:
    by = defaultdict(Counter)
    for r in rows:
        by[r["class"]][r["outcome"]] += 1
    head = f"{'class':22s} {'cases':>5s} " + " ".join(f"{o:>9s}" for o in OUTCOMES)
    print(head)
    print("-" * len(head))
    tot = Counter()
    for cls in sorted(by):
        c = by[cls]
        tot.update(c)
        print(f"{cls:22s} {sum(c.values()):5d} " + " ".join(f"{c[o]:9d}" for o in OUTCOMES))
    print("-" * len(head))
    print(f"{'total':22s} {sum(tot.values()):5d} " + " ".join(f"{tot[o]:9d}" for o in OUTCOMES))
    print("\nfailures:")
    for r in rows:
        if r["outcome"] in ("WRONG0", "internal", "badrefusal", "lost", "campaign-error"):
            print(f"  [{r['class']}] {r['case']}: {r['outcome']}: {str(r['detail'])[:220]}")


if __name__ == "__main__":
    sys.exit(main())
