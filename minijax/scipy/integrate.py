"""``jax.scipy.integrate``: the trapezoidal rule (``jnp.trapezoid``, under SciPy's name)."""

from minijax.numpy.numerical import trapezoid as trapezoid

__all__ = ["trapezoid"]
