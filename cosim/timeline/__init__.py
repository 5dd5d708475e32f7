"""Timelines, one module each: :mod:`~cosim.timeline.cpu` (per epoch and cluster, from gem5),
:mod:`~cosim.timeline.gpu` (per kernel launch, Tegra K1 rails or the Ocelot access-rate model) and
:mod:`~cosim.timeline.soc` (both on one time axis)."""
