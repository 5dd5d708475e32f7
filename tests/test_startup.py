"""Start-up stays light: `import cosim` and `cosim --help` load no pandas, pyarrow or matplotlib (`--help` no numpy)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("pandas", "pyarrow", "matplotlib")


def _loaded(code: str, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    probe = f"import sys\n{code}\nprint(','.join(m for m in {heavy!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    last = (result.stdout.splitlines() or [""])[-1]  # the probe's own line ("" when nothing heavy is loaded)
    return [m for m in last.split(",") if m]


def test_import_cosim_is_light():
    assert _loaded("import cosim") == []


def test_help_is_light():
    assert (
        _loaded(
            "import contextlib, io\nfrom cosim.cli import main\nwith contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        main(['--help'])\n    except SystemExit:\n        pass",
            heavy=(*HEAVY, "numpy", "optuna"),  # numpy alone doubles the start-up (explore's --sampler choices loaded it)
        )
        == []
    )


def test_public_api_still_there():
    import cosim

    assert callable(cosim.read_stats) and callable(cosim.power_timeline) and "read_stats" in dir(cosim)


def test_power_on_a_real_run_loads_no_pandas(tmp_path):
    """`cosim power` keeps numpy columns from reader to CSV: pandas' import alone costs ~0.6 CPU s."""
    from helpers import REPO

    run = REPO / "traces" / "cosim-v24-se-biglittle-1800-1400MHz"
    argv = ["power", str(run / "stats.txt.gz"), "-o", str(tmp_path / "power.csv")]
    loaded = _loaded(
        "import contextlib, io\nfrom cosim.cli import main\nwith contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main({argv!r}) == 0"
    )
    assert loaded == []
    assert (tmp_path / "power.csv").stat().st_size > 10_000
