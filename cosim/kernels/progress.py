"""Kept for old imports: the progress reporter is :mod:`cosim.progress` (one for every long command)."""

from cosim.progress import each, stepper, tqdm_installed

__all__ = ["each", "stepper", "tqdm_installed"]
