"""Stand-in for gem5's C++ module _m5 (see ../README.md)."""

from _m5 import core  # noqa: F401
