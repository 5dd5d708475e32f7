"""Checks before anything runs: that the config script accepts every parameter (one ``--help`` call in gem5)."""

from __future__ import annotations

import re
import subprocess
import tempfile

from cosim.errors import CosimError
from cosim.explore.design import WORKLOAD, Design

_HELP_TIMEOUT_S = 120


def accepted_options(design: Design) -> set[str]:
    """The options ``config --help`` lists, run by the design's gem5 in a scratch folder."""
    with tempfile.TemporaryDirectory(prefix="cosim-explore-help-") as scratch:
        try:
            done = subprocess.run(
                [str(design.binary), f"--outdir={scratch}", str(design.config), "--help"],
                cwd=scratch,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=_HELP_TIMEOUT_S,
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            raise CosimError(f"{design.path}: cannot ask {design.binary} for {design.config.name}'s options ({err})") from None
    found = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", done.stdout + done.stderr))
    if not any(o.startswith("--") for o in found - {"--help", "--outdir"}):
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise CosimError(
            f"{design.path}: {design.binary.name} {design.config.name} --help listed no options "
            f"(exit {done.returncode}: {last[0][:200]}); is gem5.binary a gem5, and config a gem5 config script?"
        )
    return found


def check_parameters(design: Design) -> None:
    """Refuse a parameter that the config script does not accept."""
    names = [n for n in design.space() if n != WORKLOAD] + [a for a in design.args if a.startswith("-")]
    if not names:
        return
    found = accepted_options(design)
    unknown = [n for n in names if n.split("=", 1)[0] not in found]
    if unknown:
        raise CosimError(
            f"{design.path}: {design.config.name} does not accept {unknown[0]} (its --help lists "
            f"{', '.join(sorted(o for o in found if o.startswith('--'))[:12])}...); fix [parameters] or gem5.args"
        )
