"""Reader for gem5 ``config.ini`` / ``config.json``: CPUs, clusters, clocks, voltages, caches.

Both formats are flattened to one form, ``{object path: {param: text}}`` with
config.ini's text conventions (lists space-separated, ports as their peers), so
the rest of the module does not care which file it came from.

A *cluster* is a set of CPUs sharing one clock domain, which is how gem5's
big.LITTLE configs express a DVFS domain.  Frequencies come from the clock
domain's period in ticks and the simulation tick rate.  gem5 configs usually leave
voltage domains at their 1.0 V default, so the voltages read here are reported but
never used for power unless the user asks: the model's V-f table decides.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from cosim.errors import CosimError
from cosim.readers._files import read_text
from cosim.readers._recent import parsed
from cosim.readers.config_ini import parse_ini
from cosim.readers.ruby_config import is_sequencer, ruby_l1, ruby_shared

DEFAULT_TICKS_PER_S = 1e12


@dataclass(frozen=True)
class Cluster:
    """CPUs sharing one clock domain, with the caches their PMU events refer to."""

    name: str
    cpus: tuple[str, ...]  # CPU object paths, e.g. "system.bigCluster.cpus0"; switched-out stand-ins included
    clk_domain: str
    periods_ticks: tuple[int, ...]  # every clock of the domain (several for DVFS)
    init_perf_level: int
    ticks_per_s: float
    voltage_domain: str | None
    config_voltages_v: tuple[float, ...]  # as configured; often gem5's 1.0 V default
    l1d: dict[str, str] = field(default_factory=dict)  # CPU path -> L1D path
    l1i: dict[str, str] = field(default_factory=dict)
    l2: dict[str, str] = field(default_factory=dict)  # CPU path -> first cache below its L1D
    cache_bytes: dict[str, int] = field(default_factory=dict)
    l2_sharers: dict[str, int] = field(default_factory=dict)  # L2 path -> CPUs (in the whole system) using it
    cpu_types: dict[str, str] = field(default_factory=dict)  # CPU path -> gem5 type (BaseO3CPU, MinorCPU, ...)
    # switched-out CPU -> the core it stands in for (fast-forward switch_cpus, switcheroo): in any
    # dump only one of them runs, so their counts add up to one core's
    partner: dict[str, str] = field(default_factory=dict)
    ruby: str = ""  # the Ruby sequencer type the CPUs' ports go to; "" for gem5's classic caches
    # Ruby only: its L2 banks (RubyCache objects of the L2 controllers, shared by every CPU on a sequencer) and the
    # RubySystem, whose protocol event counts are sums over all controllers of a type; l2_sharers holds their sharers
    ruby_l2: tuple[str, ...] = ()
    ruby_system: str = ""
    # CPU path -> the L1 scopes ("l1d", "l1i") the config shows it has no cache for: its port goes straight to a
    # crossbar or memory (starter_se.py --cpu atomic); an event counted there is a missing term, not a wrong path
    no_cache: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def sharers(self, cache: str) -> int:
        """How many CPUs share ``cache``; a cache named by convention only is taken as shared by the cluster."""
        if cache in self.l2_sharers:
            return self.l2_sharers[cache]
        return 1 if any(cache.startswith(cpu + ".") for cpu in self.cores) else self.n_cpus

    @property
    def freqs_mhz(self) -> tuple[float, ...]:
        """All frequencies of the clock domain [MHz]."""
        return tuple(self.ticks_per_s / p / 1e6 for p in self.periods_ticks)

    @property
    def freq_mhz(self) -> float:
        """The configured (initial) frequency [MHz]."""
        return self.freqs_mhz[min(self.init_perf_level, len(self.periods_ticks) - 1)]

    @property
    def cores(self) -> tuple[str, ...]:
        """The physical cores: CPUs that are not switched-out stand-ins."""
        return tuple(c for c in self.cpus if c not in self.partner)

    @property
    def n_cpus(self) -> int:
        """Physical cores in the cluster [count]."""
        return len(self.cores)

    def core_of(self, cpu: str) -> str:
        """The physical core whose caches ``cpu`` uses (itself, unless it is a switched-out stand-in)."""
        return self.partner.get(cpu, cpu)

    def kind(self, cpu: str) -> str:
        """``o3``, ``minor``, ``simple`` or ``other``: what decides which gem5 stats count an event."""
        return cpu_kind(self.cpu_types.get(cpu, ""))


@dataclass
class Gem5Config:
    """A parsed gem5 configuration."""

    path: str
    objects: dict[str, dict[str, str]]
    ticks_per_s: float = DEFAULT_TICKS_PER_S
    # a run with no config file: what was read from its stats' names instead (cosim.readers.stats_config), one line each
    inferred: tuple[str, ...] = ()

    def __repr__(self) -> str:  # one line: the objects are thousands of parameters
        return f"Gem5Config({self.path!r}, {len(self.objects)} objects, {len(self.cpus)} CPU(s), ISA {self.isa})"

    @property
    def cpus(self) -> list[str]:
        """Paths of the physical CPUs (switched-out stand-ins and checker CPUs left out)."""
        return list(self._cpus)

    @property
    def all_cpus(self) -> list[str]:
        """Paths of every CPU object, switched-out stand-ins included, in natural order (cpus2 before cpus10)."""
        return list(self._all_cpus)

    # found once: a config is not changed once read, and pricing asks for its CPUs per cluster and per CPU (a scan of
    # every object each time took a third of `cosim power`'s CPU time on the bundled run)
    @cached_property
    def _cpus(self) -> tuple[str, ...]:
        return tuple(c for c in self._all_cpus if not self._switched_out(c))

    @cached_property
    def _all_cpus(self) -> tuple[str, ...]:
        return tuple(sorted((p for p, params in self.objects.items() if _is_cpu_type(params.get("type", ""))), key=_natural))

    @property
    def isa(self) -> str | None:
        """The run's ISA (``arm``, ``x86``, ``alpha``, ...), from its ISA, TLB, MMU or System objects; None if none says."""
        votes: dict[str, int] = {}
        for params in self.objects.values():
            m = _ISA_TYPE.match(params.get("type", ""))
            if m:
                isa = m.group(1).lower()
                votes[isa] = votes.get(isa, 0) + 1
        return max(votes, key=votes.__getitem__) if votes else None

    def _switched_out(self, cpu: str) -> bool:
        return self.objects[cpu].get("switched_out", "false").lower() == "true"

    def _partners(self, cpus: list[str]) -> dict[str, str]:
        """Each switched-out CPU -> the physical core of its clock domain it stands in for (paired in order)."""
        out = {}
        for domain in dict.fromkeys(self._clk_domain_of(c) for c in cpus):
            cores = [c for c in self.cpus if self._clk_domain_of(c) == domain]
            spares = [c for c in self.all_cpus if self._switched_out(c) and self._clk_domain_of(c) == domain]
            groups: dict[str, list[str]] = {}
            for c in spares:
                groups.setdefault(re.sub(r"\d+$", "", c), []).append(c)
            for group in groups.values():
                for i, c in enumerate(group):
                    if cores:
                        out[c] = cores[i % len(cores)]
        return out

    def clusters(self) -> dict[str, Cluster]:
        """CPUs grouped by clock domain, named after the domain's parent (``system.bigCluster`` -> ``bigCluster``)."""
        groups: dict[str, list[str]] = {}
        for cpu in self.cpus:
            groups.setdefault(self._clock_group(cpu), []).append(cpu)
        out = {}
        for domain, cpus in groups.items():
            name = _cluster_name(domain, cpus)
            out[name] = self._cluster(name, cpus)
        return out

    def _clock_group(self, cpu: str) -> str:
        """The CPU's clock domain; for gem5 before clock domains, where each CPU has its own ``clock``, the first
        CPU of its vector (``system.cpu0`` for ``system.cpu1``) of the same type and clock: one cluster, as the same
        cores in one clock domain are, so that static power is scaled by the cores present, not by one."""
        domain = self._clk_domain_of(cpu)
        return self._own_clocks.get(cpu, domain) if domain == cpu else domain

    @cached_property
    def _own_clocks(self) -> dict[str, str]:
        """Each CPU with its own ``clock`` -> the first CPU of its vector with the same type and clock."""
        first: dict[tuple[str, str | None, str | None], str] = {}
        out = {}
        for c in self.cpus:
            if self._clk_domain_of(c) == c:
                params = self.objects[c]
                out[c] = first.setdefault((re.sub(r"\d+$", "", c), params.get("type"), params.get("clock")), c)
        return out

    def cluster(self, name: str, prefix: str) -> Cluster:
        """The CPUs whose path starts with ``prefix`` (e.g. ``system.bigCluster``), as one cluster."""
        cpus = [c for c in self.cpus if c == prefix or c.startswith(prefix + ".") or _vector_child(c, prefix)]
        if not cpus:
            known = ", ".join(sorted(self.cpus)) or "none"
            raise CosimError(f"{self.path}: no CPU under '{prefix}' for cluster '{name}'; CPUs in this config: {known}")
        domains = {self._clock_group(c) for c in cpus}
        if len(domains) > 1:
            raise CosimError(
                f"{self.path}: CPUs under '{prefix}' use several clock domains ({', '.join(sorted(domains))}); "
                "give one --cluster per clock domain"
            )
        return self._cluster(name, cpus)

    def _cluster(self, name: str, cpus: list[str]) -> Cluster:
        domain = self._clk_domain_of(cpus[0])
        periods, level = self._clock(domain)
        vdomain = self.objects.get(domain, {}).get("voltage_domain")
        volts = tuple(self._number(vdomain or "", "voltage", v) for v in self.objects.get(vdomain or "", {}).get("voltage", "").split())
        partner = {c: p for c, p in self._partners(cpus).items() if p in cpus}
        dports = {c: p for c in cpus if (p := self._peer_object(c, "dcache_port"))}
        ruby = sorted({t for p in dports.values() if is_sequencer(t := self.objects.get(p, {}).get("type", ""))})
        iports = {c: p for c in cpus if (p := self._peer_object(c, "icache_port"))}
        # a Ruby sequencer names its L1 RubyCaches (dcache=, icache=): they count the CPU's L1 events
        l1d = {c: p for c, s in dports.items() if self._is_cache(p := ruby_l1(self.objects, s, "dcache"))}
        l1i = {c: p for c, s in iports.items() if self._is_cache(p := ruby_l1(self.objects, s, "icache"))}
        l2 = {c: p for c in cpus if (p := self._cache_below(l1d.get(c)))}
        no_cache = {
            c: scopes
            for c in cpus
            if not ruby
            and (scopes := tuple(s for s, ports, l1 in (("l1d", dports, l1d), ("l1i", iports, l1i)) if c in ports and c not in l1))
        }
        all_l2 = [self._cache_below(self._peer_object(c, "dcache_port")) for c in self.cpus]
        sharers = {p: all_l2.count(p) for p in set(l2.values())}
        banks, ruby_system = ruby_shared(self.objects) if ruby else ([], "")
        ruby_l2 = tuple(sorted(banks, key=_natural))
        on_ruby = sum(1 for c in self.cpus if is_sequencer(self.objects.get(self._peer_object(c, "dcache_port") or "", {}).get("type", "")))
        sharers.update({p: on_ruby for p in (*ruby_l2, ruby_system) if p})
        caches = set(l1d.values()) | set(l1i.values()) | set(l2.values()) | set(ruby_l2)
        sizes = {c: int(self.objects[c]["size"]) for c in caches if self.objects.get(c, {}).get("size", "").isdigit()}
        everyone = cpus + [c for c in self.all_cpus if c in partner]
        return Cluster(
            name=name,
            cpus=tuple(sorted(everyone, key=_natural)),
            cpu_types={c: self.objects[c].get("type", "") for c in everyone},
            ruby=", ".join(ruby),
            ruby_l2=ruby_l2,
            ruby_system=ruby_system,
            partner=partner,
            clk_domain=domain,
            periods_ticks=periods,
            init_perf_level=level,
            ticks_per_s=self.ticks_per_s,
            voltage_domain=vdomain,
            config_voltages_v=volts,
            l1d=l1d,
            l1i=l1i,
            l2=l2,
            no_cache=no_cache,
            cache_bytes=sizes,
            l2_sharers=sharers,
        )

    def _clk_domain_of(self, cpu: str) -> str:
        # gem5 before clock domains (~2013) gave each object its own 'clock'
        params = self.objects[cpu]
        return params.get("clk_domain") or (cpu if "clock" in params else "")

    def _clock(self, domain: str) -> tuple[tuple[int, ...], int]:
        params = self.objects.get(domain)
        if params is None:
            raise CosimError(f"{self.path}: clock domain '{domain}' is not in the config")
        if "clock" in params:  # SrcClockDomain: one period, or one per DVFS level
            periods = tuple(int(self._number(domain, "clock", p, positive=True)) for p in params["clock"].split())
            if not periods:
                raise CosimError(f"{self.path}: {domain}.clock is empty; a clock domain needs its period in ticks")
            return periods, int(self._number(domain, "init_perf_level", params.get("init_perf_level", "0") or "0"))
        if "clk_divider" in params:  # DerivedClockDomain
            parent, level = self._clock(params["clk_domain"])
            div = int(self._number(domain, "clk_divider", params["clk_divider"], positive=True))
            return tuple(p * div for p in parent), level
        raise CosimError(f"{self.path}: clock domain '{domain}' has neither 'clock' nor 'clk_divider'")

    def _number(self, obj: str, param: str, text: str, *, positive: bool = False) -> float:
        """``obj.param`` as a finite number (>= 0, or > 0 with ``positive``), else a one-line error naming it."""
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0 or (positive and value == 0):
            need = "a positive number" if positive else "a number >= 0"
            raise CosimError(f"{self.path}: {obj}.{param} = {text!r} is not {need}; is the config file intact?")
        return value

    def _is_cache(self, path: str) -> bool:
        return "Cache" in self.objects.get(path, {}).get("type", "")

    def _peer_object(self, path: str, port: str) -> str | None:
        peers = self.objects.get(path, {}).get(port, "").split()
        return _port_owner(peers[0]) if peers else None

    def _cache_below(self, cache: str | None) -> str | None:
        """The first cache below ``cache``: follow its mem_side through crossbars to a cache's cpu_side."""
        if cache is None:
            return None
        frontier = [_port_owner(p) for p in self.objects.get(cache, {}).get("mem_side", "").split()]
        seen = {cache}
        for _ in range(4):
            nxt = []
            for obj in frontier:
                if obj in seen:
                    continue
                seen.add(obj)
                params = self.objects.get(obj, {})
                if "Cache" in params.get("type", ""):
                    return obj
                # a crossbar: the caches below it are attached by their cpu_side port
                nxt += [_port_owner(p) for v in params.values() for p in v.split() if _is_cpu_side(p)]
            frontier = nxt
        return None


def read_config(path: str | Path, *, ticks_per_s: float = DEFAULT_TICKS_PER_S) -> Gem5Config:
    """Read gem5's ``config.ini`` or ``config.json``.

    ``ticks_per_s`` is the simulation tick rate (``simFreq`` in stats.txt; gem5's
    default is 1e12), needed to turn clock periods into frequencies.
    """
    path = Path(path)
    text = read_text(
        path,
        missing_hint="give config.ini or config.json from gem5's output directory",
        empty_hint="an empty config file describes no run; give the one gem5 wrote",
    )
    return parsed(("config", str(path), float(ticks_per_s)), text, lambda: _parse_config(path, text, ticks_per_s))


def _parse_config(path: Path, text: str, ticks_per_s: float) -> Gem5Config:
    if not text.strip():
        raise CosimError(f"{path}: empty config file")
    n_cpus = sum(1 for m in _CPU_TYPE.finditer(text) if "Checker" not in m[0])  # before parsing: its cost grows with them
    if n_cpus > MAX_CPUS:
        raise CosimError(
            f"{path}: {n_cpus} CPU objects; cosim prices systems of up to {MAX_CPUS} CPUs (its models are of "
            "phone and board SoCs); price a part of the system with a config of that part"
        )
    if path.suffix == ".json" or text.lstrip().startswith("{"):
        objects = _flatten_json(path, text)
    else:
        objects = parse_ini(path, text)
    if not objects:
        raise CosimError(f"{path}: no SimObjects found; is this a gem5 config.ini/config.json?")
    return Gem5Config(path=str(path), objects=objects, ticks_per_s=ticks_per_s)


#: Far beyond any SoC cosim's models describe; a bigger config is refused before its cost grows with it
MAX_CPUS = 1024
_CPU_TYPE = re.compile(r'^type\s*=\s*\w*CPU\s*$|"type":\s*"\w*CPU"', re.MULTILINE)


def _flatten_json(path: Path, text: str) -> dict[str, dict[str, str]]:
    try:
        tree = json.loads(text)
    except json.JSONDecodeError as err:
        raise CosimError(f"{path}:{err.lineno}: not valid JSON ({err.msg})") from None
    except RecursionError:  # nested deeper than Python's parser goes: no file cosim reads is
        raise CosimError(f"{path}: JSON nested deeper than any gem5 config is; give the file as written") from None
    objects: dict[str, dict[str, str]] = {}

    def visit(node: dict) -> None:
        params: dict[str, str] = {}
        children = []
        for key, value in node.items():
            if isinstance(value, dict) and "path" in value:
                children.append(value)
            elif isinstance(value, list) and value and all(isinstance(v, dict) and "path" in v for v in value):
                children += value
            elif isinstance(value, dict) and "peer" in value:  # a port
                peer = value["peer"]
                params[key] = " ".join(peer) if isinstance(peer, list) else str(peer)
            elif isinstance(value, list):
                params[key] = " ".join(_ini_text(v) for v in value)
            elif key != "path":
                params[key] = _ini_text(value)
        objects[node["path"]] = params
        for child in children:
            visit(child)

    if not isinstance(tree, dict) or "path" not in tree:
        raise CosimError(f"{path}: JSON has no top-level SimObject with a 'path'; is this gem5's config.json?")
    try:
        visit(tree)
    except RecursionError:
        raise CosimError(f"{path}: SimObjects nested deeper than any gem5 system is; give the config.json gem5 wrote") from None
    return objects


def _ini_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return str(value.get("path", value))
    return str(value)


# Objects whose type names the ISA: ArmISA, X86TLB, AlphaDTB, LinuxArmSystem, ArmMMU, RiscvDecoder, ...
_ISA_TYPE = re.compile(
    r"^(?:Linux)?(Arm|X86|Alpha|Sparc|Mips|Riscv|RiscV|Power)(?:ISA|TLB|DTB|ITB|MMU|Stage2MMU|System|Decoder|Interrupts|LocalApic|EmuLinux)$"
)


def _is_cpu_type(type_name: str) -> bool:
    return type_name.endswith("CPU") and "Checker" not in type_name


def cpu_kind(type_name: str) -> str:
    """gem5 CPU type -> ``o3`` (out of order), ``minor``, ``simple`` (timing/atomic), ``inorder`` or ``other``."""
    if "O3" in type_name:
        return "o3"
    if "Minor" in type_name:
        return "minor"
    if "Simple" in type_name:
        return "simple"
    if "InOrder" in type_name:
        return "inorder"
    return "other"


def _natural(path: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path)]


def _is_cpu_side(peer: str) -> bool:
    return re.search(r"\.cpu_side(_port)?(\[\d+\])?$", peer) is not None


def _port_owner(peer: str) -> str:
    """``system.cpu0.dcache.cpu_side`` or ``system.toL2Bus.slave[1]`` -> the object path."""
    return peer.rsplit(".", 1)[0]


def _vector_child(cpu: str, prefix: str) -> bool:
    # gem5 names vector elements cpus0, cpus1, ...: prefix "system.cluster.cpus" matches them.
    return re.fullmatch(re.escape(prefix) + r"\d+(\..*)?", cpu) is not None


def _cluster_name(domain: str, cpus: list[str]) -> str:
    if len(cpus) > 1 and domain == cpus[0] and (vector := re.sub(r"\d+$", "", domain)) != domain:
        domain = vector  # CPUs with their own equal clocks (gem5 before clock domains): named after their vector, cpu0 + cpu1 -> cpu
    parent = domain.rsplit(".", 1)[0] if domain.endswith(".clk_domain") else domain
    name = parent.rsplit(".", 1)[-1]
    return name if name and name != "system" else domain.rsplit(".", 1)[-1] or cpus[0]
