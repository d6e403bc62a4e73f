"""``jax.interpreters.pxla``: JAX's SPMD partitioner. minijax has none; its one public name raises."""

from __future__ import annotations

from minijax.compat._served.standin import stand_in_function

create_compile_options = stand_in_function("jax.interpreters.pxla.create_compile_options", "minijax has no SPMD partitioner")
