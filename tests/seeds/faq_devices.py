# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 312-314. The page shows a GPU machine
# ({CudaDevice(id=0)}); on a CPU-only machine JAX prints the CPU device.
from minijax import numpy as jnp
print(jnp.ones(3).devices())  # doctest: +SKIP
