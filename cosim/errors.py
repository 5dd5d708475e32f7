"""Errors and warnings that cosim reports to users.

A :class:`CosimError` is a problem with the user's input or request.  Its message
is one line that names the file, line or field and says what to do; the CLI prints
it without a traceback and exits non-zero.  A :class:`CosimWarning` reports
something cosim worked around (a dropped dump, an extrapolated operating point):
the result is still produced, and the problem is also recorded in the output.
"""

from __future__ import annotations


class CosimError(Exception):
    """Bad input or an impossible request; ``str(err)`` is the one-line message."""


class CosimWarning(UserWarning):
    """Something was worked around; the affected epoch or value is flagged."""


class CutOffWarning(CosimWarning):
    """An input ends inside a record (a run or profile killed mid-way): the unfinished last kernel or record was
    left out and only complete ones were read; the CLI exits 3 (``--allow-partial``: 0)."""
