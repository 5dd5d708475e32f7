"""Devices are compared by the GPU's name, without the index nvprof appends ("GeForce GTX 980 (1)"), and a model used
outside its device needs --any-device, which flags every row it writes."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import REPO
from helpers import run_cosim as cosim
from test_cli import assert_one_line_error
from test_kernel_dvfs import _roofline_table

from cosim.errors import CosimError
from cosim.models.device import device_flag, device_name, same_device

DATA = REPO / "tests" / "data" / "gpu"


def test_device_name_drops_only_the_profilers_index():
    assert device_name("GeForce GTX 980 (1)") == "GeForce GTX 980"
    assert device_name("NVIDIA GeForce RTX 3090") == "NVIDIA GeForce RTX 3090"
    assert same_device("GeForce GTX 980 (1)", "geforce gtx 980 (0)")
    assert not same_device("GeForce GTX 980 (0)", "GeForce GTX 1070 (0)")


def test_the_rail_models_device_check_reads_the_name_without_index():
    raw = {"device": {"names": ["GK20A"], "compute_capability": ["3.2"]}}
    assert device_flag("m", raw, device="GK20A (1)", capability=None, source="f") == ""
    with pytest.raises(CosimError, match="pass --any-device"):
        device_flag("m", raw, device="GeForce GTX 980 (0)", capability=None, source="f")
    assert device_flag("m", raw, device="GeForce GTX 980 (0)", capability=None, source="f", any_device=True) == "device_mismatch"


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    d = tmp_path_factory.mktemp("dev")
    _roofline_table().assign(device="GeForce GTX 980 (1)").to_csv(d / "t.csv", index=False)
    # the physics family: the device check is the same for every family, and it needs no scikit-learn (1.9 s CPU less)
    assert cosim("kernel-fit", d / "t.csv", "-o", d / "m.json", "--family", "physics").returncode == 0
    return d


def test_a_kernel_model_predicts_the_same_gpu_in_another_slot_and_flags_another_gpu_only_when_asked(fitted, tmp_path):
    table = pd.read_csv(fitted / "t.csv")
    table.assign(device="GeForce GTX 980 (0)").to_csv(tmp_path / "slot0.csv", index=False)
    r = cosim("kernel-predict", fitted / "m.json", tmp_path / "slot0.csv", "-o", tmp_path / "p.csv")
    assert r.returncode == 0, r.stderr
    table.assign(device="GeForce GTX 1070 (0)").to_csv(tmp_path / "other.csv", index=False)
    refused = cosim("kernel-predict", fitted / "m.json", tmp_path / "other.csv", "-o", tmp_path / "q.csv")
    assert_one_line_error(refused, "fitted on 'GeForce GTX 980'", "--any-device")
    r = cosim("kernel-predict", fitted / "m.json", tmp_path / "other.csv", "--any-device", "-o", tmp_path / "q.csv")
    assert r.returncode == 0, r.stderr
    assert pd.read_csv(tmp_path / "q.csv")["flags"].str.contains("device_mismatch").all()
