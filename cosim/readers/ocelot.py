"""GPU Ocelot per-kernel instruction-class traces (thesis Section 6.1.3).

The trace generator prints, at the end of each kernel launch::

    Kernel name: _Z9transposeIjEvPT_jS1_j10NcvSize32u
    Integer_arithmetic: 9041472
    Memory_offchip: 526338
    ...

One block per launch; a kernel launched again gets another block.  The name may
carry a launch configuration, ``<<<grid, block>>>`` (CUDA syntax, each a number
or ``(x,y,z)``) or ``grid=(x,y,z) block=(x,y,z)``.  Class names are the thesis's
classes (Section 6.1.1.1) in any case, with ``_``, ``-`` or spaces; others are an
error unless a class map renames them.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
import re
import tomllib
from pathlib import Path

import pandas as pd

from cosim.errors import CosimError
from cosim.readers._files import read_text
from cosim.readers.cutoff import ends_mid_line, left_out

# Canonical class -> accepted spellings (after lower-casing and squeezing separators to "_").
OCELOT_CLASSES: dict[str, tuple[str, ...]] = {
    "integer_arithmetic": ("integer_arithmetic", "int_arithmetic"),
    "integer_division": ("integer_division", "int_division"),
    "integer_logical": ("integer_logical", "int_logical"),
    "integer_comparison": ("integer_comparison", "int_comparison"),
    "float_arithmetic": ("float_arithmetic",),
    "float_division": ("float_division",),
    "float_comparison": ("float_comparison", "combined_float_and_double_comparison"),
    "double_arithmetic": ("double_arithmetic",),
    "double_division": ("double_division",),
    "special": ("special", "transcendental", "transcendental_and_other_special_operations"),
    "memory_onchip": ("memory_onchip", "on_chip_memory", "onchip_memory", "memory_on_chip"),
    "memory_offchip": ("memory_offchip", "off_chip_memory", "offchip_memory", "memory_off_chip"),
    "control": ("control", "control_flow"),
    "parallelism": ("parallelism",),
    "other": ("other",),
}
_ALIASES = {alias: canon for canon, aliases in OCELOT_CLASSES.items() for alias in aliases}
IGNORE = "ignore"

_KERNEL = re.compile(r"^\s*Kernel name:\s*(?P<rest>\S.*?)\s*$")
_COUNT = re.compile(r"^\s*(?P<cls>[A-Za-z][\w \-]*?)\s*:\s*(?P<count>\S+)\s*$")
_CUDA_LAUNCH = re.compile(r"\s*<<<\s*(?P<grid>[^,()]+|\([^)]*\))\s*,\s*(?P<block>[^>()]+|\([^)]*\))\s*>>>\s*$")
_KV_LAUNCH = re.compile(r"\s*grid\s*=\s*(?P<grid>\([^)]*\)|\d+)\s*,?\s*block\s*=\s*(?P<block>\([^)]*\)|\d+)\s*$")


def canonical_class(name: str) -> str | None:
    """The canonical class for a trace spelling, or None when unknown."""
    return _ALIASES.get(_squeeze(name))


def _squeeze(name: str) -> str:
    return re.sub(r"[\s\-_]+", "_", name.strip().lower())


def read_class_map(path: str | Path) -> dict[str, str]:
    """A TOML class map: ``[classes]`` trace-class name -> canonical class or ``"ignore"``."""
    path = Path(path)
    text = read_text(path, missing_hint="give a TOML file with a [classes] table")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise CosimError(f"{path}: not valid TOML ({err})") from None
    classes = data.get("classes")
    if not isinstance(classes, dict) or not classes:
        raise CosimError(f'{path}: needs a [classes] table, e.g. Tex_fetch = "memory_offchip"')
    out = {}
    for name, target in classes.items():
        target_canon = IGNORE if target == IGNORE else canonical_class(str(target))
        if target_canon is None:
            raise CosimError(f"{path}: class '{name}' maps to '{target}'; targets: {', '.join(OCELOT_CLASSES)} or \"ignore\"")
        out[_squeeze(name)] = target_canon
    return out


def read_ocelot_trace(path: str | Path, *, class_map: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per kernel launch, in trace order.

    Columns: ``launch`` (0, 1, ...), ``kernel`` (raw name), ``kernel_display``
    (demangled), ``launch_config`` (as written, or ""), ``threads`` (grid x block
    threads when a launch configuration gives them, else nan), ``repeat`` (0 for
    a kernel's first launch, 1 for its second, ...), ``line`` and one ``n_<class>``
    count column per canonical class (0 where the block has no line for it).
    """
    path = Path(path)
    text = read_text(path, missing_hint="give a GPU Ocelot instruction-class trace")
    mapping = dict(_ALIASES)
    if class_map:
        mapping.update(class_map)
    rows: list[dict] = []
    current: dict | None = None
    classes: dict[str, str] = {}  # raw label (before ':') -> canonical class
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if "Kernel name:" in line and (m := _KERNEL.match(line)):
            _close(path, current)
            kernel, config, threads = _split_launch(m["rest"])
            current = {"launch": len(rows), "kernel": kernel, "launch_config": config, "threads": threads, "line": lineno, "_seen": {}}
            rows.append(current)
            continue
        label, sep, value = line.partition(":")
        cls = classes.get(label)  # class labels repeat in every block: look each spelling up once
        if cls is None:
            m = _COUNT.match(line)
            if m is None:
                raise CosimError(f"{path}:{lineno}: expected 'Kernel name: <name>' or '<Class>: <count>', got '{line.strip()[:60]}'")
            cls = mapping.get(_squeeze(m["cls"]))
            if cls is None:
                raise CosimError(
                    f"{path}:{lineno}: unknown instruction class '{m['cls']}'; known: "
                    f"{', '.join(OCELOT_CLASSES)}; pass --class-map FILE to rename or ignore it"
                )
            classes[label] = cls
        if current is None:
            raise CosimError(f"{path}:{lineno}: class count before any 'Kernel name:' line")
        count = _count(path, lineno, label.strip(), value.strip())
        if cls == IGNORE:
            continue
        if cls in current["_seen"]:
            raise CosimError(f"{path}:{lineno}: class '{label.strip()}' appears twice in the kernel block of line {current['line']}")
        current["_seen"][cls] = lineno
        current[f"n_{cls}"] = count
    # the trace ends inside its last block (a last block without counts is cut, not refused as _close would)
    if rows and (ends_mid_line(text) or not rows[-1]["_seen"]):
        last = rows.pop()
        why = "the trace ends mid-line" if ends_mid_line(text) else "the trace ends before its class counts"
        left_out(path, last["line"], f"kernel '{last['kernel']}'", why, kept=len(rows), unit="launch")
    if not rows:
        raise CosimError(f"{path}: no 'Kernel name:' line; is this a GPU Ocelot instruction-class trace?")
    out = pd.DataFrame(rows).drop(columns="_seen")
    for cls in OCELOT_CLASSES:
        col = f"n_{cls}"
        out[col] = out[col].fillna(0).astype("int64") if col in out else 0
    out["kernel_display"] = [demangle(k) for k in out["kernel"]]
    out["repeat"] = out.groupby("kernel").cumcount()
    out.attrs["ocelot"] = {"path": str(path)}
    lead = ["launch", "kernel", "kernel_display", "launch_config", "threads", "repeat", "line"]
    return out[lead + [f"n_{c}" for c in OCELOT_CLASSES]]


def _close(path: Path, block: dict | None) -> None:
    if block is not None and not block["_seen"]:
        raise CosimError(f"{path}:{block['line']}: kernel '{block['kernel']}' has no class counts; truncated trace?")


_MAX_COUNT = 2**63 - 1  # counts are kept as int64; no kernel executes more instructions than that


def _count(path: Path, lineno: int, cls: str, text: str) -> int:
    value = _whole(path, lineno, cls, text)
    if value > _MAX_COUNT:
        raise CosimError(f"{path}:{lineno}: count of '{cls}' is {text}, beyond 2^63-1 instructions; is the trace intact?")
    return value


def _whole(path: Path, lineno: int, cls: str, text: str) -> int:
    if text.isdigit():
        return int(text)
    try:
        value = float(text)
    except ValueError:
        raise CosimError(f"{path}:{lineno}: count of '{cls}' is '{text}', not a number") from None
    if not math.isfinite(value) or value < 0 or value != int(value):
        raise CosimError(f"{path}:{lineno}: count of '{cls}' is {text}; instruction counts are whole numbers >= 0")
    return int(value)


def _split_launch(rest: str) -> tuple[str, str, float]:
    for pattern in (_CUDA_LAUNCH, _KV_LAUNCH):
        if m := pattern.search(rest):
            name = rest[: m.start()].strip()
            if name:
                return name, m.group(0).strip(), _threads(m["grid"]) * _threads(m["block"])
    return rest.strip(), "", math.nan


def _threads(text: str) -> float:
    numbers = re.findall(r"\d+", text)
    return float(math.prod(int(n) for n in numbers)) if numbers else math.nan


@functools.cache
def demangle(name: str) -> str:
    """The C++ name of an Itanium-mangled symbol (``_Z...``), via libstdc++; else ``name`` itself."""
    func = _cxa_demangle()
    if func is None or not name.startswith("_Z"):
        return name
    status = ctypes.c_int()
    ptr = func(name.encode(), None, None, ctypes.byref(status))
    if not ptr:
        return name
    try:
        return ctypes.string_at(ptr).decode(errors="replace") if status.value == 0 else name
    finally:
        _free(ptr)


@functools.cache
def _cxa_demangle():
    found = ctypes.util.find_library("stdc++")
    if not found:
        return None
    try:
        func = ctypes.CDLL(found).__cxa_demangle
    except (OSError, AttributeError):
        return None
    func.restype = ctypes.c_void_p
    func.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_int)]
    return func


def _free(ptr: int) -> None:
    _libc_free()(ptr)


@functools.cache
def _libc_free():
    # found once: find_library runs ``ldconfig -p`` in a new process each call (it was once per demangled name)
    free = ctypes.CDLL(ctypes.util.find_library("c")).free
    free.argtypes = [ctypes.c_void_p]
    return free
