"""Where a gem5 config puts Ruby's caches: the L1 RubyCaches a CPU's sequencer names, the L2 banks every CPU on a
sequencer shares, and the RubySystem whose protocol controllers count events (docs/explanation/ruby.md)."""

from __future__ import annotations

from collections.abc import Mapping


def is_sequencer(type_name: str) -> bool:
    """Whether a SimObject type is a Ruby sequencer (RubySequencer, and the protocols' own)."""
    return "Sequencer" in type_name


def ruby_l1(objects: Mapping[str, Mapping[str, str]], port_owner: str, param: str) -> str:
    """The object a CPU port leads to, or the sequencer's ``param`` (dcache, icache) where it is a Ruby sequencer."""
    params = objects.get(port_owner, {})
    return params.get(param, "").split(" ")[0] if is_sequencer(params.get("type", "")) else port_owner


def ruby_shared(objects: Mapping[str, Mapping[str, str]]) -> tuple[list[str], str]:
    """Ruby's L2 banks (the RubyCaches of its L2 controllers: MESI_Two_Level, MOESI_CMP_directory; every CPU's L1
    misses go to them), unordered, and the RubySystem object ("" if none)."""
    typed = {p: o.get("type", "") for p, o in objects.items()}
    banks = [p for p, t in typed.items() if t == "RubyCache" and typed.get(p.rsplit(".", 1)[0], "").startswith("L2Cache_Controller")]
    return banks, next((p for p, t in typed.items() if t == "RubySystem"), "")
