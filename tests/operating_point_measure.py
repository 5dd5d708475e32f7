"""Issue 42's before/after numbers for the static power of every shipped CPU model (what envelope.md's tables quote).

Runs on this checkout or an older one (its ``envelope_static_w``), so the "before" is measured on the unchanged code:

    .venv/bin/python tests/operating_point_measure.py                       # this checkout
    git archive d4ba719 cosim models | tar -x -C /tmp/before
    PYTHONPATH=/tmp/before .venv/bin/python tests/operating_point_measure.py  # the parent of issue 42's work

Prints the GemStone A15's static change from its table's 1.183 V to Powmon's 1.1741 V at 1800 MHz, the TCAD A15's
static power 0.31 % either side of its 200/600/1400 MHz table clocks along its curve, the static power at 200 MHz and
0.95/1.0 V, and per model the largest 1 MHz and 5 mV step over 200 MHz to the band's top x 0.8-1.4 V (an idle
cluster's power: the dynamic terms are smooth), with the points where it falls with V or is negative.
"""

from __future__ import annotations

import math

import numpy as np

import cosim.models.envelope as env
from cosim.models.modelfile import load_model, operating_point


def static_w(model, f, v) -> np.ndarray:
    """Static power [W] by this checkout's function (the one function, or the old envelope's)."""
    f, v = np.asarray(f, dtype=float), np.asarray(v, dtype=float)
    if hasattr(env, "static_at_w"):
        return env.static_at_w(model, f, v)
    return env.envelope_static_w(model, f, v)


def curve_v(model, f) -> np.ndarray:
    """The voltage cosim gives a clock without --voltage [V]."""
    return operating_point(model, np.atleast_1d(np.asarray(f, dtype=float))).voltage_v


def main() -> None:
    print("code from", env.__file__)
    a15g, a15w, a7 = (load_model(n) for n in ("cortex-a15-gemstone2018", "cortex-a15-walker2017", "cortex-a7-gemstone2018"))
    s1, s2 = static_w(a15g, [1800.0, 1800.0], [1.183, 1.1741])
    print(f"gemstone A15 static at 1800 MHz: 1.183 V {s1:.4f} W, 1.1741 V {s2:.4f} W: {100 * (s2 / s1 - 1):+.1f} %")
    for table_mhz in (200.0, 600.0, 1400.0):
        fs = np.array([table_mhz * (1 - 0.0031), table_mhz, table_mhz * (1 + 0.0031)])
        s = static_w(a15w, fs, curve_v(a15w, fs))
        print(f"walker2017 along its curve at {fs[0]:.2f}/{table_mhz:g}/{fs[2]:.2f} MHz: {s.round(5)}  steps "
              f"{100 * (s[0] / s[1] - 1):+.1f} % / {100 * (s[2] / s[1] - 1):+.1f} %")  # fmt: skip
    fs = np.arange(1390.0, 1410.0, 0.25)
    falls = int((np.diff(static_w(a15w, fs, curve_v(a15w, fs))) < 0).sum())
    print(f"walker2017 1390-1410 MHz along the curve: falls at {falls} of {len(fs) - 1} 0.25 MHz steps")
    print("walker2017 static at 200 MHz 0.95 V:", static_w(a15w, [200.0], [0.95])[0], "; A7 at 200 MHz 0.95/1.0 V:",
          static_w(a7, [200.0, 200.0], [0.95, 1.0]))  # fmt: skip
    for m in (a15w, a15g, a7):
        f = np.arange(200.0, math.floor(m.train_freq_mhz[1] * 1.125) + 1, 1.0)
        v = np.round(np.arange(0.8, 1.4 + 1e-9, 0.005), 3)
        ff, vv = np.meshgrid(f, v, indexing="ij")
        p = static_w(m, ff.ravel(), vv.ravel()).reshape(ff.shape)
        df, dv = np.abs(np.diff(p, axis=0)), np.abs(np.diff(p, axis=1))
        i, j = np.unravel_index(np.argmax(df), df.shape)
        k, n = np.unravel_index(np.argmax(dv), dv.shape)
        print(f"{m.name}: grid {f[0]:g}-{f[-1]:g} MHz x 0.8-1.4 V: largest 1 MHz step {df.max():.4f} W (at {f[i]:g}->{f[i] + 1:g} MHz, "
              f"{v[j]:.3f} V), largest 5 mV step {dv.max():.4f} W (at {f[k]:g} MHz, {v[n]:.3f}->{v[n] + 0.005:.3f} V); falls with V on "
              f"{(np.diff(p, axis=1) < 0).sum()} of {dv.size} steps; min {p.min():.4f} W, max {p.max():.3f} W; negative at {(p < 0).sum()} points")  # fmt: skip


if __name__ == "__main__":
    main()
