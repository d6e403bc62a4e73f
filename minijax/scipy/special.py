"""``jax.scipy.special``: special functions, with JAX's custom derivatives.

The functions that are one primitive (``erf``, ``gammaln``, ``digamma``,
``expit``, ...) bind it; ``logit``, ``xlogy``, ``xlog1py`` and ``entr`` carry
JAX's custom jvp rules, which keep their derivatives finite where the plain
formula's are not (``xlogy(0, 0)``). ``logsumexp``, ``softmax`` and
``log_softmax`` are ``minijax.nn``'s.
"""

from __future__ import annotations

from typing import Any

import minijax.numpy as jnp
from minijax import lax
from minijax.array import Array
from minijax.custom_derivatives import custom_jvp
from minijax.nn.functions import log_softmax as log_softmax, logsumexp as logsumexp, softmax as softmax
from minijax.numpy.util import promote_args_inexact
from minijax.typing import ArrayLike


def _one(x: Any) -> Any:
    return lax.full_like(x, 1)


def _zero(x: Any) -> Any:
    return lax.full_like(x, 0)


def expit(x: ArrayLike) -> Array:
    """The logistic function ``1 / (1 + exp(-x))``."""
    (x,) = promote_args_inexact("expit", x)
    out: Array = lax.logistic(x)
    return out


@custom_jvp
def logit(x: ArrayLike) -> Array:
    """``log(x / (1 - x))``, the inverse of ``expit``."""
    (x,) = promote_args_inexact("logit", x)
    out: Array = lax.log(lax.div(x, lax.sub(_one(x), x)))
    return out


logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(_one(x), x))))


def erf(x: ArrayLike) -> Array:
    (x,) = promote_args_inexact("erf", x)
    out: Array = lax.erf(x)
    return out


def erfc(x: ArrayLike) -> Array:
    (x,) = promote_args_inexact("erfc", x)
    out: Array = lax.erfc(x)
    return out


def erfinv(x: ArrayLike) -> Array:
    (x,) = promote_args_inexact("erfinv", x)
    out: Array = lax.erf_inv(x)
    return out


def gammaln(x: ArrayLike) -> Array:
    """``log(abs(gamma(x)))``."""
    (x,) = promote_args_inexact("gammaln", x)
    out: Array = lax.lgamma(x)
    return out


def digamma(x: ArrayLike) -> Array:
    (x,) = promote_args_inexact("digamma", x)
    out: Array = lax.digamma(x)
    return out


def _x_is_not_zero(x: Any, y: Any) -> Any:
    """Where the product is computed: x != 0, or y is NaN (elsewhere the scipy functions define 0)."""

    return jnp.logical_or(lax.ne(x, _zero(x)), lax.ne(y, y))


@custom_jvp
def xlogy(x: ArrayLike, y: ArrayLike) -> Array:
    """``x * log(y)``, defined as 0 where x == 0 (unless y is NaN)."""
    x, y = promote_args_inexact("xlogy", x, y)

    safe = _x_is_not_zero(x, y)
    out: Array = jnp.where(safe, lax.mul(x, lax.log(y)), 0.0)
    return out


@xlogy.defjvp
def _xlogy_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x, y), (x_dot, y_dot) = primals, tangents
    result = xlogy(x, y)
    return result, (x_dot * lax.log(y) + y_dot * x / y).astype(result.dtype)


@custom_jvp
def xlog1py(x: ArrayLike, y: ArrayLike) -> Array:
    """``x * log1p(y)``, defined as 0 where x == 0 (unless y is NaN)."""
    x, y = promote_args_inexact("xlog1py", x, y)

    safe = _x_is_not_zero(x, y)
    out: Array = jnp.where(safe, lax.mul(x, lax.log1p(y)), 0.0)
    return out


@xlog1py.defjvp
def _xlog1py_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x, y), (x_dot, y_dot) = primals, tangents
    result = xlog1py(x, y)
    return result, (x_dot * lax.log1p(y) + y_dot * x / (1 + y)).astype(result.dtype)


@custom_jvp
def _xlogx(x: Any) -> Any:
    return xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x,), (x_dot,) = primals, tangents
    return _xlogx(x), x_dot * (lax.log(x) + 1)


def entr(x: ArrayLike) -> Array:
    """Elementwise entropy ``-x log x`` for x > 0, 0 at 0, -inf for x < 0."""
    (x,) = promote_args_inexact("entr", x)
    out: Array = lax.select(lax.lt(x, _zero(x)), lax.full_like(x, -float("inf")), lax.neg(_xlogx(x)))
    return out


__all__ = [
    "digamma", "entr", "erf", "erfc", "erfinv", "expit", "gammaln", "log_softmax", "logit", "logsumexp",
    "softmax", "xlog1py", "xlogy",
]  # fmt: skip
