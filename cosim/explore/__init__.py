"""Explore a design space: run a study of gem5 configurations, price, rank and resume it (``cosim explore``)."""
