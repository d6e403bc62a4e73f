# ruff: noqa
# mypy: ignore-errors
# Seed: faq.ko.rst, lines 321-325.
# Changes: the page puts the value on a third GPU (jax.devices()[2]); this
# machine has one CPU device, so the example uses jax.devices()[0].
import minijax as jax
from minijax import device_put
arr = device_put(1, jax.devices()[0])  # doctest: +SKIP
print(arr.devices())  # doctest: +SKIP
print(repr(arr))
