"""Start-up time: `cosim --help` against a bare `python -c pass` (pytest tests/bench --benchmark-enable -n 0)."""

from __future__ import annotations

import subprocess
import sys
import time


def _best_of(args: list[str], n: int = 5) -> float:
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(args, capture_output=True, check=True)
        best = min(best, time.perf_counter() - t0)
    return best


def test_help_startup(benchmark, measured):
    bare = _best_of([sys.executable, "-I", "-c", "pass"])
    benchmark.pedantic(
        subprocess.run,
        args=([sys.executable, "-I", "-m", "cosim.cli", "--help"],),
        kwargs={"capture_output": True, "check": True},
        rounds=5,
        iterations=1,
    )
    cosim_s = _best_of([sys.executable, "-I", "-m", "cosim.cli", "--help"])
    ratio = cosim_s / bare
    benchmark.extra_info["ratio_to_python_pass"] = round(ratio, 2)
    measured("startup_help", cosim_s=round(cosim_s, 3), python_s=round(bare, 3), ratio=round(ratio, 2))
    print(f"\ncosim --help {cosim_s:.3f} s, python -c pass {bare:.3f} s (best of 5): {ratio:.2f}x (target <= 5)")
    assert ratio <= 5.0, f"cosim --help is {ratio:.1f}x python -c pass"
