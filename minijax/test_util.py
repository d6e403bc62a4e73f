"""``jax.test_util``'s names: the derivative checks of ``minijax.testing``."""

from minijax.testing.gradients import check_grads as check_grads, check_jvp as check_jvp, check_vjp as check_vjp

__all__ = ["check_grads", "check_jvp", "check_vjp"]
