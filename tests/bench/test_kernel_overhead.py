"""Prediction overhead per kernel launch in batches of 1 and 20 (the Jetson AGX paper's Fig. 7 question).

Reported, not asserted: ``pytest tests/bench/test_kernel_overhead.py -s``.
"""

from __future__ import annotations

import pytest

pytest.importorskip("sklearn")

from cosim.kernels import synthetic as S
from cosim.kernels.log import tidy
from cosim.kernels.train import fit_kernel, prediction_overhead_s


def test_prediction_overhead_batches_of_1_and_20(measured):
    log = tidy(S.kernel_log(n_boards=3), source="synthetic")
    rows = log[log["kernel"] == "conv2d"]
    model = fit_kernel(rows, "conv2d", budget=1)
    one = prediction_overhead_s(model, rows, batch=1)
    twenty = prediction_overhead_s(model, rows, batch=20)
    measured("kernel_prediction_overhead", batch1_ms=round(one * 1e3, 2), batch20_ms=round(twenty * 1e3, 2))
    print(f"\nconv2d runtime+power prediction: {one * 1e3:.2f} ms per launch in batches of 1, {twenty * 1e3:.3f} ms in batches of 20")
    assert twenty < one  # batching amortises the per-call cost
