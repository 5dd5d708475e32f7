"""A documented analytic ground truth for testing the kernel-level method (no public AGX data exists).

Each kernel's work is its FLOPs and bytes.  On a board with GPU clock g, memory
clock m and CPU clock c [MHz]:

    compute  = FLOPs / (1.4e12 * eff_k * g / 1377)            [s]   (Table 3: 1.4 TFLOP/s at 1377 MHz)
    memory   = bytes / (136.5e9 * 0.6 * min(1, m / 2133))      [s]   (Table 3: 136.5 GB/s at 2133 MHz)
    launch   = 5e-6 + 30e-6 * 1000 / c                         [s]   (CPU-side launch cost)
    runtime  = (max(compute, memory) + 0.3 * min(compute, memory) + launch) * board_rt * noise
    V_gpu    = 0.6 + 0.4 * g / 1377                            [V]
    power    = (4.0 + 9.0 * V_gpu^2 * g/1000 * compute/runtime + 2.5 * m/1000 * memory/runtime
                + 0.8 * c/1000) * board_p * noise              [W]

Boards differ by fixed factors: board_rt ~ N(1, 0.03), board_p ~ N(1, 0.05)
(the paper finds runtime and power vary between nominally identical boards, power
more); each measurement has log-normal noise of 2 %.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cosim.kernels.space import sample_space

EFFICIENCY = {"conv2d": 0.5, "matmul": 0.7, "relu": 0.05, "maxpool2d": 0.05, "add": 0.05}
MODELLED = ("conv2d", "matmul", "relu", "maxpool2d")  # "add" is a left-out kernel, as in the paper's Table 1


def work(kernel: str, p: dict[str, float], shape: list[float]) -> tuple[float, float]:
    """(FLOPs, bytes) of one launch."""
    if kernel == "conv2d":
        n, cin, h, w = shape
        ho, wo = h / p["stride"], w / p["stride"]
        flops = 2 * n * p["cout"] * ho * wo * cin * p["k"] ** 2
        return flops, 4 * (n * cin * h * w + cin * p["cout"] * p["k"] ** 2 + n * p["cout"] * ho * wo)
    if kernel == "matmul":
        m, k = shape
        return 2 * m * k * p["n"], 4 * (m * k + k * p["n"] + m * p["n"])
    numel = float(np.prod(shape))
    if kernel == "maxpool2d":
        return numel * p["k"] ** 2, 4 * numel * (1 + 1 / p["stride"] ** 2)
    return numel, (12 if kernel == "add" else 8) * numel


def truth(kernel: str, p: dict, shape: list[float], cpu: float, gpu: float, emc: float) -> tuple[float, float]:
    """Noise-free runtime [ms] and power [W] of one launch on a reference board."""
    flops, nbytes = work(kernel, p, shape)
    compute = flops / (1.4e12 * EFFICIENCY[kernel] * gpu / 1377)
    memory = nbytes / (136.5e9 * 0.6 * min(1.0, emc / 2133))
    launch = 5e-6 + 30e-6 * 1000 / cpu
    runtime = max(compute, memory) + 0.3 * min(compute, memory) + launch
    v_gpu = 0.6 + 0.4 * gpu / 1377
    power = 4.0 + 9.0 * v_gpu**2 * gpu / 1000 * compute / runtime + 2.5 * emc / 1000 * memory / runtime + 0.8 * cpu / 1000
    return runtime * 1e3, power


def networks(rng: np.random.Generator, n_networks: int = 6) -> dict[str, list[tuple[str, dict, list[float]]]]:
    """Small CNN-like networks: conv / relu / pool stacks, residual adds and a classifier matmul."""
    nets = {}
    for i in range(n_networks):
        layers, hw, ch = [], float(rng.choice([112, 224])) / 2, 3.0
        for stage in range(int(rng.integers(3, 5))):
            cout = float(rng.choice([32, 64, 128, 256]) * (stage + 1) // 2 or 32)
            k = float(rng.choice([1, 3, 3, 5]))
            layers.append(("conv2d", {"cout": cout, "k": k, "stride": 1.0}, [1.0, ch, hw, hw]))
            layers.append(("relu", {}, [1.0, cout, hw, hw]))
            layers.append(("add", {}, [1.0, cout, hw, hw]))
            layers.append(("maxpool2d", {"k": 2.0, "stride": 2.0}, [1.0, cout, hw, hw]))
            ch, hw = cout, hw / 2
        layers.append(("matmul", {"n": 1000.0}, [1.0, ch * hw * hw]))
        nets[f"net{i}"] = layers
    return nets


def measure(
    rng: np.random.Generator, kernel: str, p: dict, shape: list[float], cpu: float, gpu: float, emc: float, board_rt: float, board_p: float
) -> tuple[float, float]:
    runtime, power = truth(kernel, p, shape, cpu, gpu, emc)
    return runtime * board_rt * rng.lognormal(0, 0.02), power * board_p * rng.lognormal(0, 0.02)


# launches sampled per board: more for the kernel with the most parameters (the paper sizes data likewise)
ROWS_PER_BOARD = {"conv2d": 900, "matmul": 300, "relu": 300, "maxpool2d": 300}


def kernel_log(*, n_boards: int = 13, rows_per_board: dict[str, int] | None = None, seed: int = 0) -> pd.DataFrame:
    """A training/testing log in the kernel-log schema: the space-reduced kernel space on every board."""
    from cosim.kernels.log import board_levels
    from cosim.models.modelfile import shipped_models_dir

    rng = np.random.default_rng(seed)
    levels = board_levels(shipped_models_dir() / "jetson-agx-dvfs.json")
    boards = _draw_boards(rng, n_boards)
    nets = networks(np.random.default_rng(seed + 1))
    rows = []
    for kernel in MODELLED:
        seen = [(p, s) for layers in nets.values() for k, p, s in layers if k == kernel]
        for board, (b_rt, b_p) in boards.items():
            for p, shape in sample_space(seen, (rows_per_board or ROWS_PER_BOARD)[kernel], rng):
                f = {d: float(rng.choice(levels[d])) for d in ("cpu", "gpu", "emc")}
                runtime, power = measure(rng, kernel, p, shape, f["cpu"], f["gpu"], f["emc"], b_rt, b_p)
                rows.append(_row("sampled", kernel, p, shape, f, runtime, power, board))
    return pd.DataFrame(rows)


def network_log(boards: dict[str, tuple[float, float]], *, n_configs: int = 20, seed: int = 0) -> pd.DataFrame:
    """Every launch of every network at ``n_configs`` DVFS configurations on ``boards``."""
    from cosim.kernels.log import board_levels
    from cosim.models.modelfile import shipped_models_dir

    rng = np.random.default_rng(seed)
    levels = board_levels(shipped_models_dir() / "jetson-agx-dvfs.json")
    nets = networks(np.random.default_rng(seed + 1))
    rows = []
    for c in range(n_configs):
        f = {d: float(rng.choice(levels[d])) for d in ("cpu", "gpu", "emc")}
        for board, (b_rt, b_p) in boards.items():
            for net, layers in nets.items():
                for kernel, p, shape in layers:
                    runtime, power = measure(rng, kernel, p, shape, f["cpu"], f["gpu"], f["emc"], b_rt, b_p)
                    rows.append(_row(net, kernel, p, shape, f, runtime, power, board) | {"config": c})
    return pd.DataFrame(rows)


def board_factors(n_boards: int = 13, seed: int = 0) -> dict[str, tuple[float, float]]:
    """The same per-board factors :func:`kernel_log` draws for ``seed``."""
    return _draw_boards(np.random.default_rng(seed), n_boards)


def _draw_boards(rng: np.random.Generator, n_boards: int) -> dict[str, tuple[float, float]]:
    """Board id -> (runtime factor, power factor); the first draws of a log's generator."""
    return {f"agx{b:02d}": (rng.normal(1, 0.03), rng.normal(1, 0.05)) for b in range(1, n_boards + 1)}


def _row(network, kernel, p, shape, f, runtime, power, board) -> dict:
    return {
        "network": network,
        "kernel": kernel,
        "params": ";".join(f"{k}={v:g}" for k, v in p.items()),
        "input_shape": "x".join(f"{d:g}" for d in shape),
        "cpu_mhz": f["cpu"],
        "gpu_mhz": f["gpu"],
        "emc_mhz": f["emc"],
        "runtime_ms": runtime,
        "power_w": power,
        "board": board,
    }
