"""Timelines, one module each: :mod:`~cosim.timeline.cpu` (per epoch and cluster, from gem5),
:mod:`~cosim.timeline.gpu` (per kernel launch, Tegra K1 rails or the Ocelot access-rate model) and
:mod:`~cosim.timeline.soc` (both on one time axis).  The CPU timeline draws on :mod:`~cosim.timeline.clusters` (which
CPUs, which model, their clock), :mod:`~cosim.timeline.core_kind` (in-order or out-of-order),
:mod:`~cosim.timeline.model_checks` (ISA, CPU types, operating points), :mod:`~cosim.timeline.cpu_flags` (the flags
text), :mod:`~cosim.timeline.cycles` and :mod:`~cosim.timeline.clock_change`."""
