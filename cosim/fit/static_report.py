"""The checks behind the static split's figures (issue 50), printed: ``python -m cosim.fit.static_report``.

Every choice is made on training workloads (Powmon: :func:`cosim.fit.static_split.held_out`; ARMPM: its split
file) and scored on held-out ones; each line says which.  Slow parts (bootstraps) are the model files' own: the
shares' intervals come from the replicates the files state.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np

from cosim.fit.static_models import CBENCH, CBENCH_SPLIT, POWMON
from cosim.fit.static_rows import armpm_rows, powmon_rows, split_programs
from cosim.fit.static_split import Split, curve_temperature, fit_split, held_out, mape_pct, predict_w
from cosim.models.envelope import curve_voltage

A15 = ("cortex-a15-walker2017", "cortex-a15-gemstone2018", "cortex-a15-armpm-xu3")


def _pct(x: np.ndarray) -> str:
    lo, hi = np.percentile(x, [2.5, 97.5])
    return f"[{lo:.3g}, {hi:.3g}]"


def parameters(models: Path) -> None:
    from cosim.models.modelfile import load_model

    print("## fitted parameters (95 % workload-bootstrap intervals)")
    for name in (*A15, "cortex-a7-gemstone2018"):
        raw = load_model(str(models / f"{name}.json")).raw["static_form"]
        ci = raw.get("ci95", {})
        kappa = raw.get("temperature", {}).get("kappa_per_k", 0.0)
        print(
            f"{name}: a {raw['a_w_per_mhz_v2']:.4g} W/(MHz V2) {ci.get('a_w_per_mhz_v2', '(table points only)')}, "
            f"b {raw['b_w_per_v']:.4g} W/V {ci.get('b_w_per_v', '')}, k {raw['k_per_v']:.4g} /V {ci.get('k_per_v', '')}, "
            f"kappa {kappa:.4g} /K {ci.get('kappa_per_k', '')}"
        )


def shares(models: Path, rows) -> None:
    """Leakage / cluster power at 1000 and 2000 MHz (each model's curve voltage), 1 and 4 busy cores, 50 and 80 °C.
    The dynamic power is the same for every model: the Powmon training rows' measured power less walker2017's fitted
    static power, as a capacitance (W / (V² MHz)) per busy-core count, so the shares differ by their leakage alone."""
    from cosim.models.modelfile import load_model
    from cosim.models.static_form import static_form

    train = rows.take(~held_out(rows.group))
    walker = static_form(load_model(str(models / "cortex-a15-walker2017.json")))
    dyn = train.power_w - walker.static_w(train.freq_mhz, train.voltage_v, train.temperature_c)
    cap = {n: float(np.mean(dyn[train.busy_cores == n] / (train.voltage_v**2 * train.freq_mhz)[train.busy_cores == n])) for n in (1, 4)}
    print("## leakage share of cluster power (95 % interval over the bootstrap refits); 2000 MHz is above 1800: extrapolated")
    print("model | MHz | V | busy | 50 °C | 80 °C")
    for name in A15:
        model = load_model(str(models / f"{name}.json"))
        form = static_form(model)
        reps = np.asarray(form.replicates)
        for f in (1000.0, 2000.0):
            v = float(curve_voltage(model, np.array([f]))[0][0])
            for n in (1, 4):
                cells = []
                for t in (50.0, 80.0):
                    leak = reps[:, 1] * v * np.exp(reps[:, 2] * (v - 1)) * np.exp(reps[:, 3] * (t - 50.0))
                    total = reps[:, 0] * f * v**2 + leak + cap[n] * v**2 * f
                    point = float(form.leakage_w(f, v, t) / (form.static_w(f, v, t) + cap[n] * v**2 * f))
                    cells.append(f"{100 * point:.1f} % {_pct(100 * leak / total)}")
                extra = " (extrapolated)" if f > model.train_freq_mhz[1] else ""
                print(f"{name} | {f:g}{extra} | {v:.3f} | {n} | {cells[0]} | {cells[1]}")


def busy_cores(rows) -> None:
    test = held_out(rows.group)
    print("## busy cores: fitted on some core counts of the training workloads, scored on another count of the held-out ones")
    for fit_n, score_n in (((1, 2, 3), (4,)), ((4,), (1,)), ((1,), (4,))):
        fit_rows = ~test & np.isin(rows.busy_cores, fit_n)
        score = test & np.isin(rows.busy_cores, score_n)
        s = fit_split(rows.take(fit_rows))
        pred = predict_w(rows, s)
        print(
            f"fit on {fit_n} busy -> {score_n}: MAPE {mape_pct(pred[score], rows.power_w[score]):.2f} % "
            f"(a {s.a:.4g}, b {s.b:.4g}, k {s.k:.3g}, kappa {s.kappa:.3g})"
        )


def extrapolation(rows) -> None:
    """Refit jointly (dynamic coefficients, a, b, k, kappa) on training workloads <= 1600 MHz; price the held-out
    workloads' 1800 MHz rows at measured and at table voltage (the <= 1600 MHz table continued by the envelope's
    rule), at each row's measured die temperature, at the refit's top-clock training temperature, and at the die
    temperature the row's own priced power produces (the thermal model's steady state, models/thermal-xu3.json: a
    Powmon row is a run's average; R and the ambient were fitted on all Powmon rows, so in-sample for those two)."""
    from cosim.models.envelope import extrapolated_voltage
    from cosim.models.thermal import cluster_thermal

    test = held_out(rows.group)
    low = rows.take(~test & (rows.freq_mhz <= 1600))
    s = fit_split(low, joint=True)
    top = test & (rows.freq_mhz == 1800)
    curve = np.array(curve_temperature(low))
    clocks = np.unique(low.freq_mhz)
    table_v = np.array([low.voltage_v[low.freq_mhz == c].mean() for c in clocks])

    class _Table:  # the refit's V-f table: the mean measured voltage per clock of its rows
        vf_points = list(zip(clocks, table_v))
        raw: dict = {}

    v_table = extrapolated_voltage(_Table, np.array([1800.0]))[0][0]
    at = rows.take(top)
    print(f"## extrapolation: joint refit on training workloads <= 1600 MHz (k {s.k:.3g}, kappa {s.kappa:.3g}), held-out 1800 MHz rows")
    for label, v in (("measured voltage", at.voltage_v), (f"table voltage {v_table:.4f} V", np.full(len(at.power_w), v_table))):
        shifted = at.__class__(**{**at.__dict__, "voltage_v": v, "terms_w": at.terms_w * (v / at.voltage_v)[:, None] ** 2})
        for tlabel, t in (
            ("measured die temperature", at.temperature_c),
            (f"training temperature {curve[-1, 1]:g} °C", np.full(len(v), curve[-1, 1])),
            ("predicted die temperature", _predicted_c(shifted, s, np.full(len(v), curve[-1, 1]), cluster_thermal("xu3-a15"))),
        ):
            print(f"{label}, {tlabel}: MAPE {mape_pct(predict_w(shifted, s, t), at.power_w):.2f} %")


def _predicted_c(rows, split: Split, start_c: np.ndarray, thermal) -> np.ndarray:
    """The die temperature [°C] each row's own priced power holds at steady state: T = T_amb + R * P(T), by fixed point."""
    from cosim.models.thermal import steady_c

    t = start_c
    for _ in range(100):
        nxt = steady_c(thermal, predict_w(rows, split, t))
        if np.max(np.abs(nxt - t)) < 1e-4:
            return nxt
        t = nxt
    return t


def joint(rows) -> None:
    test = held_out(rows.group)
    s = fit_split(rows.take(~test), joint=True)
    pred = predict_w(rows, s)
    print(
        f"## joint refit (dynamic terms free) on Powmon training workloads: a {s.a:.4g}, b {s.b:.4g}, k {s.k:.3g}, "
        f"kappa {s.kappa:.3g}; held-out MAPE {mape_pct(pred[test], rows.power_w[test]):.2f} % (each row's temperature)"
    )
    return None


def armpm(models: Path, data: Path) -> None:
    from cosim.models.modelfile import load_model
    from cosim.models.static_form import static_form

    board = load_model(str(models / "cortex-a15-armpm-xu3.json"))
    rows = armpm_rows(board, data / CBENCH, busy_cores=1)
    train, test = split_programs(data / CBENCH_SPLIT)
    form = static_form(board)
    s = Split(form.a, form.b, form.k, form.kappa_per_k)
    tm = np.isin(rows.group, sorted(test))
    pred = predict_w(rows, s)
    c = np.array(form.curve_temperature_c)
    at_curve = predict_w(rows, s, np.interp(rows.freq_mhz, c[:, 0], c[:, 1]))
    print(
        f"## board model on ARMPM cBench test programs: MAPE {mape_pct(pred[tm], rows.power_w[tm]):.2f} % at each sample's "
        f"temperature, {mape_pct(at_curve[tm], rows.power_w[tm]):.2f} % at the training curve's"
    )


def parsec_busy(models: Path, data: Path) -> None:
    """ARMPM's PARSEC on 1 and 2 busy cores.  Its logs do not count 0x03, which the board model needs, so a model of
    the board model's other events (0x11, 0x08-0x10, 0x04, 0x10) is refitted jointly with the static form (k from
    Powmon: ARMPM's voltage moves only with its clocks) on the training programs at one count, and scored on the
    test programs at the other."""
    import dataclasses

    from cosim.models.modelfile import load_model

    board = load_model(str(models / "cortex-a15-armpm-xu3.json"))
    proxy = dataclasses.replace(board, dynamic=tuple(t for t in board.dynamic if "0x03" not in t.events))
    walker = load_model(str(models / "cortex-a15-walker2017.json")).raw["static_form"]
    walker_k = walker["k_per_v"]
    folder = data / "armpm" / "Concatenated_Data" / "PARSEC"
    rows = {n: armpm_rows(proxy, folder / f"xu3_cset_perfcpu_PARSEC_eMMC_{n}core_big.data", busy_cores=n) for n in (1, 2)}
    train, test = split_programs(data / "armpm" / "PARSEC_split.data")
    print(f"## ARMPM PARSEC busy cores (events {', '.join(t.name for t in proxy.dynamic)}; training / test programs of PARSEC_split.data)")
    for (fit_n, score_n), kappa in itertools.product(((1, 2), (2, 1)), (None, walker["temperature"]["kappa_per_k"])):
        fit_rows = rows[fit_n].take(np.isin(rows[fit_n].group, sorted(train)))
        s = fit_split(fit_rows, fixed_k=walker_k, fixed_kappa=kappa, joint=True)
        at = rows[score_n]
        held = np.isin(at.group, sorted(test))
        same = np.isin(rows[fit_n].group, sorted(test))
        print(
            f"fit on {fit_n} busy -> {score_n} busy, test programs: MAPE {mape_pct(predict_w(at, s)[held], at.power_w[held]):.2f} % "
            f"(same count, test programs: {mape_pct(predict_w(rows[fit_n], s)[same], rows[fit_n].power_w[same]):.2f} %; "
            f"a {s.a:.4g}, b {s.b:.4g}, kappa {s.kappa:.3g}{' (Powmon' + chr(39) + 's)' if kappa else ''})"
        )


def main(argv: list[str] | None = None) -> int:
    from cosim.models.modelfile import load_model

    p = argparse.ArgumentParser(prog="python -m cosim.fit.static_report", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=Path("../shared/data"))
    p.add_argument("--models", type=Path, default=Path("models"))
    args = p.parse_args(argv)
    rows = powmon_rows(load_model(str(args.models / "cortex-a15-walker2017.json")), args.data / POWMON)
    parameters(args.models)
    shares(args.models, rows)
    busy_cores(rows)
    joint(rows)
    extrapolation(rows)
    armpm(args.models, args.data)
    parsec_busy(args.models, args.data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
