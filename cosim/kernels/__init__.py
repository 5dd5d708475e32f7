"""Kernel-level runtime and power models across DVFS configurations (the Jetson AGX method).

log.py: the kernel-launch log format · space.py: training-space reduction ·
train.py: per-kernel gradient-boosted models with leave-one-board-out tuning ·
metrics.py: the paper's accuracy metrics and network-level aggregation ·
synthetic.py: a documented analytic ground truth to test the method on.
"""
