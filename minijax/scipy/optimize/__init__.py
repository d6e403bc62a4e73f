"""``jax.scipy.optimize``: ``minimize`` (BFGS, and JAX's experimental L-BFGS)
returning ``OptimizeResults``, written on ``lax.while_loop`` so that it runs
under ``jit`` and ``vmap``. The line search is the strong-Wolfe search of
Nocedal and Wright (algorithms 3.5 and 3.6), as SciPy and JAX have it, so the
iterates follow JAX's step for step."""

from minijax.scipy.optimize.minimize import OptimizeResults as OptimizeResults, minimize as minimize

__all__ = ["OptimizeResults", "minimize"]
