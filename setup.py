"""Only here to declare the optional C line scanner; everything else is in pyproject.toml.

If the compiler is missing the build goes on without it and cosim uses its
pure-Python scanner (slower, same results).
"""
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("cosim.readers._statscan", ["cosim/readers/_statscan.c"], optional=True),
    ]
)
