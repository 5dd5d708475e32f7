"""A hot four-busy-core run priced with the leakage-temperature loop, against the training-mean temperature.

    python docs/_thermal.py [../shared/data]

Powmon's rows with four threads at 1800 MHz (the A15's hottest: 60 rows, one per workload) priced by
cortex-a15-walker2017 at their measured voltage, as ``cosim apply`` prices them, three ways: at the training board's
mean temperature at 1800 MHz (the model as fitted: the default before the loop), at the die temperature each row's own
predicted power produces (:mod:`cosim.timeline.temperature`: steady state, the Powmon session's ambient, fixed point
in the leakage), and at each row's measured die temperature (what no gem5 user has).  Printed: mean and hottest
row, predicted against measured temperature, and each price's MAPE against the measured power.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

DOCS_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def hot_rows(data: Path) -> dict[str, np.ndarray | float]:
    """The three prices of Powmon's four-thread 1800 MHz rows, with their measured power and temperature."""
    import pandas as pd

    from cosim import load_model
    from cosim.fit.apply import apply_model
    from cosim.models.static_form import static_form
    from cosim.models.thermal import thermal_for
    from cosim.readers.measured import read_measured
    from cosim.timeline.temperature import Loop, point_temperature_c

    path = data / "gemstone" / "sample-input-data" / "asrtpm-A15-powmon-data.csv"
    table = pd.read_csv(path, sep="\t")
    model = load_model("cortex-a15-walker2017")
    measured = read_measured(path, events=model.events)
    hot = (table["Frequency A15"].to_numpy() == 1800) & (table["Core Mask"].astype(str).str.count(":").to_numpy() == 3)

    def price(temperature_c) -> np.ndarray:
        return apply_model(model, measured, temperature_c=temperature_c)["power_w"].to_numpy()[hot]

    curve_c = float(static_form(model).curve_temperature(1800.0))
    at_curve = price(np.full(len(table), curve_c))
    thermal = thermal_for(model)
    assert thermal is not None
    loop = Loop(thermal=thermal)

    def power_at(t: np.ndarray) -> np.ndarray:
        full = np.full(len(table), curve_c)
        full[hot] = t
        return price(full)

    predicted_c = point_temperature_c(loop, power_at, np.full(int(hot.sum()), 30.0))
    full = np.full(len(table), curve_c)
    full[hot] = predicted_c
    at_loop = price(full)
    measured_c = table["Average Temperature A15"].to_numpy(dtype=float)
    at_measured = price(measured_c)
    return {
        "curve_c": curve_c,
        "power_w": table["Power A15"].to_numpy(dtype=float)[hot],
        "temperature_c": measured_c[hot],
        "predicted_c": predicted_c,
        "at_curve_w": at_curve,
        "at_loop_w": at_loop,
        "at_measured_w": at_measured,
    }


def report(data: Path) -> str:
    """The lines ``python docs/_thermal.py`` prints."""
    r = hot_rows(data)
    p, t, tp = r["power_w"], r["temperature_c"], r["predicted_c"]
    i = int(np.argmax(t))

    def mape(x):
        return 100 * float(np.mean(np.abs(x / p - 1)))

    return "\n".join(
        [
            f"Powmon, 4 threads at 1800 MHz, cortex-a15-walker2017 at measured voltage ({len(p)} rows):",
            f"  die: measured mean {np.mean(t):.1f} °C (hottest {t[i]:.1f}), predicted from the priced power mean {np.mean(tp):.1f} °C "
            f"(hottest row {tp[i]:.1f}), training-mean at 1800 MHz {r['curve_c']:.2f} °C; predicted - measured MAE "
            f"{np.mean(np.abs(tp - t)):.2f} K",
            f"  power MAPE against measured: at the training-mean temperature {mape(r['at_curve_w']):.2f} %, closed loop "
            f"{mape(r['at_loop_w']):.2f} %, at each row's measured temperature {mape(r['at_measured_w']):.2f} %",
            f"  hottest row ({p[i]:.2f} W measured): {r['at_curve_w'][i]:.2f} W at the training mean, {r['at_loop_w'][i]:.2f} W "
            f"closed loop, {r['at_measured_w'][i]:.2f} W at its measured temperature",
            f"  mean price: {np.mean(r['at_curve_w']):.3f} W training mean -> {np.mean(r['at_loop_w']):.3f} W closed loop "
            f"({100 * (np.mean(r['at_loop_w']) / np.mean(r['at_curve_w']) - 1):+.2f} %); measured {np.mean(p):.3f} W",
        ]
    )


if __name__ == "__main__":
    print(report(Path(sys.argv[1]) if len(sys.argv) > 1 else DOCS_DATA))
