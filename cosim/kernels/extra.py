"""The ``[kernels]`` extra (scikit-learn, which brings scipy): a one-line refusal where it is missing."""

from __future__ import annotations

import importlib

from cosim.errors import CosimError

# module -> the package that installs it
PACKAGES = {"sklearn": "scikit-learn", "scipy": "scipy", "scipy.optimize": "scipy"}


def require_extra(*modules: str, command: str = "this kernel model") -> None:
    """Import ``modules`` (default: all the extra installs), or raise one line naming the missing package and the extra."""
    for name in modules or tuple(PACKAGES):
        try:
            importlib.import_module(name)
        except ImportError:
            raise CosimError(
                f"{command} needs the [kernels] extra ({PACKAGES.get(name, name)} is not installed): pip install 'cosim[kernels]' "
                "(in a checkout: pip install '.[kernels]')"
            ) from None
