"""The device check: the GPU counterpart of the ISA check.

A GPU model file names the devices it was trained on (``device.names``,
matched case-insensitively inside the device name a profiler prints, and
``device.compute_capability``).  Data from another device is refused in one
line unless the user passes ``--any-device``; then every row is flagged
``device_mismatch``.  Data that names no device is priced and flagged
``device_unknown``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from cosim.errors import CosimError

_INDEX = re.compile(r"\s*\(\d+\)\s*$")


def device_name(text: str) -> str:
    """The GPU's name without the index nvprof appends: ``"GeForce GTX 980 (1)"`` -> ``"GeForce GTX 980"``; the same
    GPU model in another slot (or on another machine) is the same device to a power model."""
    return _INDEX.sub("", text).strip()


def same_device(a: str, b: str) -> bool:
    """Whether two device names printed by profilers name the same GPU model (index and case aside)."""
    return device_name(a).lower() == device_name(b).lower()


def device_flag(
    model_name: str, model_raw: Mapping[str, Any], *, device: str | None, capability: str | None, source: str, any_device: bool = False
) -> str:
    """``""`` when the data's device is one the model was trained on, else the flag its rows carry.

    Raises :class:`CosimError` for a known other device unless ``any_device``.
    """
    spec = model_raw.get("device") or {}
    names = [n.lower() for n in spec.get("names", [])]
    capabilities = [str(c) for c in spec.get("compute_capability", [])]
    if not names and not capabilities:
        return ""
    named = bool(device and device.strip() and not device.strip().isdigit())
    if named and device and any(n in device_name(device).lower() for n in names):
        return ""
    if not named and capability and capability in capabilities:
        return ""
    if not named and not capability:
        return "device_unknown"
    if any_device:
        return "device_mismatch"
    what = f"device '{device}'" if named else f"compute capability {capability}"
    trained = ", ".join(spec.get("names", [])) + (f" (compute capability {', '.join(capabilities)})" if capabilities else "")
    raise CosimError(
        f"{source}: the data is from {what} but {model_name} was trained on {trained}; "
        "pass --any-device to price it anyway (rows flagged device_mismatch)"
    )
