import sys
from pathlib import Path

# tests import their helpers as a plain module
sys.path.insert(0, str(Path(__file__).parent))

import pytest


@pytest.fixture(scope="session")
def gem5_root(tmp_path_factory):
    """A folder for the real gem5 runs of this test session (see helpers.gem5_run)."""
    return tmp_path_factory.mktemp("gem5")
