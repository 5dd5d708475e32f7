"""A gem5 configuration read from the names in stats.txt, for a run whose output has no config.ini or config.json
(gem5's regression references of 2016, SimPoint runs copied without it).

The names say which objects exist: a CPU is an object with a ``numCycles`` stat, its kind the stat groups only that
kind writes (O3's ``rob``/``iew``/``rename``, Minor's ``fetch2``, a simple CPU's busy cycles), its clock the
nearest ``cpu_clk_domain`` or ``clk_domain`` above it (gem5 dumps every clock domain's period), its caches the
conventional names (``cpu.dcache``, the stdlib's ``l1d-cache-0``; Ruby's ``l1_cntrl0.L1Dcache``, given to the CPUs in
order, as gem5's Ruby configs number them).  Every guess is listed in :attr:`Gem5Config.inferred`; the rows priced
from it carry the flag ``config_from_stats``.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping
from pathlib import Path

from cosim.errors import CosimError
from cosim.readers.gem5_config import Gem5Config, _natural
from cosim.readers.gem5_stats import END_MARKER, _open

#: a first dump bigger than this is read no further (gem5's largest systems dump a few MB)
_MAX_BYTES = 64 << 20
_O3, _MINOR, _SIMPLE = ("rob", "iew", "rename"), ("fetch2",), ("num_busy_cycles", "exec_context")
#: an object name only one ISA's systems have
_ISA_MARKS = {"Arm": ("stage2_mmu", ".realview.", ".gic."), "X86": ("apic_clk_domain", ".pc.south_bridge", "interrupts.clk_domain")}


def first_dump(path: Path) -> dict[str, str]:
    """``{stat name: value text}`` of the first dump of a plain or gzip stats file."""
    out: dict[str, str] = {}
    read = 0
    try:
        with _open(path) as f:
            tail = b""
            while read < _MAX_BYTES and (block := f.read(1 << 20)):
                read += len(block)
                text = tail + block
                cut = text.rfind(b"\n") + 1
                text, tail = text[:cut], text[cut:]
                end = text.find(END_MARKER)
                for line in text[: None if end < 0 else end].decode(errors="replace").splitlines():
                    parts = line.split()
                    if len(parts) >= 2 and not line.startswith("-"):
                        out.setdefault(parts[0], parts[1])
                if end >= 0:
                    break
    except (OSError, EOFError, zlib.error):
        return out  # the stats reader says what is wrong with the file
    return out


def config_from_stats(stats_path: Path, cpu_types: Mapping[str, str] | None = None) -> Gem5Config:
    """The run's CPUs, their kind, clock domains, caches and ISA as a :class:`Gem5Config` read from the stats' names.

    ``cpu_types`` (``{CPU path: gem5 type}``, ``--cpu-type``) names the CPUs and their kind; default: every object
    with a ``numCycles`` stat, its kind from its stat groups.
    """
    names = first_dump(stats_path)
    objects: dict[str, dict[str, str]] = {}
    inferred: list[str] = []
    found = sorted({n[: -len(".numCycles")] for n in names if n.endswith(".numCycles")}, key=_natural)
    if cpu_types:
        unknown = [c for c in cpu_types if c not in found]
        if unknown:
            raise CosimError(
                f"{stats_path}: --cpu-type {unknown[0]}: no such CPU in the stats (no {unknown[0]}.numCycles); "
                f"CPUs there: {', '.join(found) or 'none'}"
            )
        cpus = list(cpu_types)
    else:
        cpus = found
    groups = {c: {n[len(c) + 1 :].split(".")[0] for n in names if n.startswith(c + ".")} for c in cpus}
    kinds = []
    for cpu in cpus:
        kind = (cpu_types or {}).get(cpu) or _kind_from_stats(groups[cpu])
        objects[cpu] = {"type": kind}
        if cpu.rsplit(".", 1)[-1].startswith("switch_cpus"):  # se.py's fast-forward stand-ins run a core in their turn
            objects[cpu]["switched_out"] = "true"
            inferred.append(f"{cpu} a switched-out stand-in (se.py's name for one)")
        if cpu not in (cpu_types or {}):
            kinds.append(f"{cpu} {kind}")
        domain = _clock_domain(cpu, names)
        if domain is None:
            raise CosimError(
                f"{stats_path}: no config.ini beside it and no clock domain of {cpu} in its stats "
                f"(no {cpu.rsplit('.', 1)[0]}.cpu_clk_domain.clock or .clk_domain.clock); pass --config"
            )
        objects[cpu]["clk_domain"] = domain
        objects[domain] = {"type": "SrcClockDomain", "clock": names[f"{domain}.clock"]}
    if kinds:
        inferred.append(f"kind from its stat groups: {', '.join(kinds)}")
    inferred.append("clock: " + ", ".join(sorted({objects[c]["clk_domain"] for c in cpus})))
    caches = _ruby(cpus, names, objects) or _classic(cpus, names, objects)
    if caches:
        inferred.append(caches)
    isa = next((isa for isa, marks in _ISA_MARKS.items() if any(m in n for n in names for m in marks)), None)
    if isa:
        objects["system.isa (from stats)"] = {"type": f"{isa}ISA"}
        inferred.append(f"ISA {isa.upper()} from object names only its systems have")
    return Gem5Config(path=str(stats_path), objects=objects, inferred=tuple(inferred))


def _kind_from_stats(groups: set[str]) -> str:
    """A gem5 type for a CPU whose stat groups say its kind (:func:`cosim.readers.gem5_config.cpu_kind` reads it back)."""
    if groups & set(_O3):
        return "O3CPU"
    if groups & set(_MINOR):
        return "MinorCPU"
    if groups & set(_SIMPLE) or "num_int_alu_accesses" in groups:
        return "SimpleCPU"
    return "UnknownCPU"


def _clock_domain(cpu: str, names: Mapping[str, str]) -> str | None:
    """The nearest clock domain above ``cpu`` whose period the stats dump: ``system.cpu_clk_domain`` (se.py, fs.py),
    ``system.bigCluster.clk_domain``, the stdlib's ``board.clk_domain``."""
    parts = cpu.split(".")
    for i in range(len(parts), 0, -1):
        above = ".".join(parts[:i])
        for domain in (f"{above}.cpu_clk_domain", f"{above}.clk_domain"):
            if f"{domain}.clock" in names:
                return domain
    return None


def _ruby(cpus: list[str], names: Mapping[str, str], objects: dict[str, dict[str, str]]) -> str:
    """Ruby's L1 controllers given to the CPUs in order, its L2 banks and RubySystem; "" when the stats show no Ruby
    L1 for each CPU."""
    demand = re.compile(r"^(.+)\.(L1Dcache|L1Icache|L2cache)\.(?:m_)?demand_accesses$")
    found: dict[str, list[str]] = {"L1Dcache": [], "L1Icache": [], "L2cache": []}
    for name in names:
        if m := demand.match(name):
            found[m[2]].append(m[1])
    l1 = sorted(set(found["L1Dcache"]), key=_natural)
    if not l1 or len(l1) != len(cpus):
        return ""
    system = l1[0].rsplit(".", 1)[0]
    objects[system] = {"type": "RubySystem"}
    for cpu, controller in zip(cpus, l1, strict=True):
        sequencer = f"{controller}.sequencer"
        objects[sequencer] = {"type": "RubySequencer", "dcache": f"{controller}.L1Dcache"}
        objects[f"{controller}.L1Dcache"] = {"type": "RubyCache"}
        objects[cpu]["dcache_port"] = f"{sequencer}.in_ports[1]"
        if controller in found["L1Icache"]:
            objects[sequencer]["icache"] = f"{controller}.L1Icache"
            objects[f"{controller}.L1Icache"] = {"type": "RubyCache"}
            objects[cpu]["icache_port"] = f"{sequencer}.in_ports[0]"
    for bank in found["L2cache"]:
        objects[bank] = {"type": "L2Cache_Controller"}
        objects[f"{bank}.L2cache"] = {"type": "RubyCache"}
    pairs = ", ".join(f"{c}->{p}" for c, p in zip(cpus, l1, strict=True))
    return f"Ruby L1 controllers given to the CPUs in order ({pairs}), L2 banks {', '.join(found['L2cache']) or 'none'}"


def _classic(cpus: list[str], names: Mapping[str, str], objects: dict[str, dict[str, str]]) -> str:
    """gem5's classic caches by their conventional names: se.py's ``cpu.dcache`` / ``cpu.icache`` / ``cpu.l2cache``
    or ``system.l2``, the stdlib's ``l1d-cache-N`` / ``l1i-cache-N`` / ``l2-cache-N``; "" when none is there."""
    prefixes = {n.rsplit(".", 1)[0] for n in names}
    objs = {p.rsplit(".", i)[0] for p in prefixes for i in range(1, p.count(".") + 1)} | prefixes
    said = []
    for i, cpu in enumerate(cpus):
        hierarchy = next((o.rsplit(".", 1)[0] for o in objs if o.endswith(f".l1d-cache-{i}")), None)
        candidates: list[tuple[str, str, str | None]] = [(f"{cpu}.dcache", f"{cpu}.icache", None)]
        if hierarchy:
            candidates.append((f"{hierarchy}.l1d-cache-{i}", f"{hierarchy}.l1i-cache-{i}", f"{hierarchy}.l2-cache-{i}"))
        for l1d, l1i, l2 in candidates:
            if l1d not in objs:
                continue
            below = next((c for c in (l2, f"{cpu}.l2cache", "system.l2", "system.l2c") if c and c in objs), None)
            objects[l1d] = {"type": "Cache", **({"mem_side": f"{below}.cpu_side_port"} if below else {})}
            objects[cpu]["dcache_port"] = f"{l1d}.cpu_side_port"
            if l1i in objs:
                objects[l1i] = {"type": "Cache"}
                objects[cpu]["icache_port"] = f"{l1i}.cpu_side_port"
            if below:
                objects[below] = {"type": "Cache"}
            said.append(f"{cpu}: {l1d}" + (f", {below}" if below else ""))
            break
    return f"caches by their conventional names ({'; '.join(said)})" if said else ""
