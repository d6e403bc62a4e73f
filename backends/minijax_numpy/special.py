"""NumPy implementations: the special-function primitives (``minijax/primitives/special.py``).

Every function is evaluated in float64 and rounded to the operand dtype. The
incomplete gamma and beta functions and the scaled Bessel functions are the
series and continued fractions of ``minijax/primitives/special_algorithms.py``
(which the XLA backend evaluates too, in the operand's dtype); ``zeta`` and
``polygamma`` are written here: the Euler-Maclaurin sum for the Hurwitz zeta
function, and psi^(m)(x) = (-1)^(m+1) m! zeta(m+1, x).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from minijax.primitives import special_algorithms as alg
from minijax_numpy.elementwise import _digamma, _lgamma
from minijax_numpy.table import IMPLS

Array = np.ndarray[Any, Any]
_F64 = np.dtype(np.float64)
_EPS = float(np.finfo(np.float64).eps)
_TINY = float(np.finfo(np.float64).tiny)


class _NumpyOps:
    """The ``ops`` namespace of special_algorithms, on float64 NumPy arrays."""

    where = staticmethod(np.where)
    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    log1p = staticmethod(np.log1p)
    abs = staticmethod(np.abs)
    sqrt = staticmethod(np.sqrt)
    isnan = staticmethod(np.isnan)
    lgamma = staticmethod(_lgamma)
    digamma = staticmethod(_digamma)

    @staticmethod
    def full_like(x: Array, value: float) -> Array:
        return np.full_like(x, value)

    @staticmethod
    def any(mask: Array) -> bool:
        return bool(np.any(mask))

    @staticmethod
    def loop(cond: Callable[[Any], Any], body: Callable[[Any], Any], state: Any) -> Any:
        while cond(state):
            state = body(state)
        return state


_OPS = _NumpyOps()


def _in_float64(fn: Callable[..., Array]) -> Callable[..., Array]:
    """``fn`` on the operands broadcast together and converted to float64, rounded back."""

    def run(*xs: Array, **params: Any) -> Array:
        dtype = xs[0].dtype
        wide = np.broadcast_arrays(*(np.asarray(x, _F64) for x in xs))
        with np.errstate(all="ignore"):
            return np.asarray(fn(*(np.array(w) for w in wide))).astype(dtype)

    return run


# Bernoulli numbers B_2, B_4, ..., B_20 over (2j)!: the Euler-Maclaurin corrections.
_BERNOULLI_2J = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330)
_ZETA_SHIFT = 12


def _zeta(x: Array, q: Array) -> Array:
    """zeta(x, q) = sum_{k<N} (q+k)^-x + w^(1-x)/(x-1) + w^-x/2
    + sum_j B_2j/(2j)! x(x+1)...(x+2j-2) w^(-x-2j+1), with w = q + N."""
    total = np.zeros_like(x)
    for k in range(_ZETA_SHIFT):
        total = total + np.power(q + k, -x)
    w = q + _ZETA_SHIFT
    total = total + np.power(w, 1 - x) / (x - 1) + np.power(w, -x) / 2
    rising = x.copy()  # x (x+1) ... (x+2j-2)
    for j, b in enumerate(_BERNOULLI_2J, 1):
        total = total + b / math.factorial(2 * j) * rising * np.power(w, -x - 2 * j + 1)
        rising = rising * (x + 2 * j - 1) * (x + 2 * j)
    # XLA's conventions (which JAX's values are): at a pole of a term (q a non-positive
    # integer) the sum is +inf for even integer x and NaN otherwise; a negative q needs an
    # integer x; x < 1 and infinite operands give NaN; but x = 1 is +inf whatever q is.
    # The pole rule comes after the x < 1 one: zeta(0, 0), zeta(-2, -1) and zeta(2, -inf) are +inf in JAX.
    x_is_int = np.floor(x) == x
    pole = (q <= 0) & (np.floor(q) == q)
    total = np.where((x < 1) | np.isinf(x) | np.isinf(q), np.nan, total)
    total = np.where((q < 0) & ~x_is_int, np.nan, total)
    total = np.where(pole, np.where(x_is_int & (np.mod(x, 2) == 0), np.inf, np.nan), total)
    return np.where(x == 1, np.inf, total)


def _polygamma(m: Array, x: Array) -> Array:
    """psi^(m)(x): digamma for m = 0, (-1)^(m+1) m! zeta(m+1, x) for integer m >= 1, NaN otherwise."""
    is_int = (m >= 0) & (np.floor(m) == m)
    safe_m = np.where(is_int, m, 1.0)
    sign = np.where(np.mod(safe_m, 2) == 0, -1.0, 1.0)
    factorial = np.exp(_lgamma(safe_m + 1))
    higher = sign * factorial * _zeta(safe_m + 1, x)
    out = np.where(m == 0, _digamma(x), higher)
    return np.where(is_int, out, np.nan)


IMPLS["igamma"] = _in_float64(lambda a, x: alg.igamma(_OPS, a, x, _EPS))
IMPLS["igammac"] = _in_float64(lambda a, x: alg.igammac(_OPS, a, x, _EPS))
IMPLS["igamma_grad_a"] = _in_float64(lambda a, x: alg.igamma_grad_a(_OPS, a, x, _EPS))
IMPLS["regularized_incomplete_beta"] = _in_float64(lambda a, b, x: alg.betainc(_OPS, a, b, x, _EPS, _TINY))
IMPLS["polygamma"] = _in_float64(_polygamma)
IMPLS["zeta"] = _in_float64(_zeta)
IMPLS["bessel_i0e"] = _in_float64(lambda x: alg.bessel_i0e(_OPS, x))
IMPLS["bessel_i1e"] = _in_float64(lambda x: alg.bessel_i1e(_OPS, x))
