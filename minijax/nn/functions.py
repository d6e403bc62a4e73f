"""``jax.nn``'s functions: activations, softmax and friends, one_hot, standardize.

Each function is written the way JAX 0.10 writes it, because the jaxpr is part
of the contract: the same ``jnp``/``lax`` calls in the same order, staged as a
``jit`` of the same name where JAX stages one (``jit[name=relu]``), and the same
custom derivatives where JAX has them:

* ``relu`` and ``relu6`` are ``custom_jvp`` functions whose derivative is 0 at
  the kinks (0 for relu; 0 and 6 for relu6) instead of whatever ``max``'s rule
  would pick;
* ``log1mexp`` states its derivative ``g / expm1(x)`` directly;
* ``softplus`` inherits ``logaddexp``'s custom rule (finite at +-inf).

Numerics: ``softmax``/``log_softmax``/``logsumexp`` subtract the maximum before
exponentiating, so large inputs neither overflow nor lose precision; the
maximum goes through ``stop_gradient`` (the shift cancels mathematically, so
its derivative would only add rounding noise and work).
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Literal, SupportsIndex, overload

import numpy as np

from minijax import config, core, dtypes, lax
from minijax.custom_derivatives import custom_jvp
from minijax.numpy import (
    abs as jnp_abs,
    array,
    asarray,
    clip,
    exp,
    expm1,
    log,
    log1p,
    logaddexp,
    max as jnp_max,
    maximum,
    mean,
    minimum,
    split,
    sqrt,
    square,
    subtract,
    sum as jnp_sum,
    tanh,
    util as np_util,
    where as jnp_where,
)
from minijax.stages import jit

Array = Any
ArrayLike = Any
Axis = int | Sequence[int] | None
Fn = Callable[..., Any]


def _staged(name: str, static_argnames: tuple[str, ...] = ()) -> Callable[[Fn], Fn]:
    """Decorator: ``jit`` the function under ``name``, as JAX's ``@api.jit`` does for these."""

    def wrap(fun: Fn) -> Fn:
        fun.__name__ = fun.__qualname__ = name
        staged: Fn = jit(fun, static_argnames=static_argnames)
        staged.__doc__ = fun.__doc__
        return staged

    return wrap


def _ensure_array(fun_name: str, x: ArrayLike) -> Any:
    """JAX's ``ensure_arraylike``: reject lists and tuples, make NumPy values arrays.

    A Python scalar stays one. JAX makes it a weak array and folds the
    conversion when it meets another operand, so in its jaxprs such a value
    is a literal of the other operand's dtype (``add c 4.0:f32[]`` in
    squareplus); an untouched Python scalar gives the same equations.
    """
    np_util.check_arraylike(fun_name, x)
    if type(x) in (bool, int, float):
        return x
    return asarray(x)


# ---------------------------------------------------------------------------
# Rectifiers (custom derivatives at the kinks)


@_staged("identity")
def identity(x: ArrayLike) -> Array:
    """The identity activation: returns ``x`` unchanged (as an array)."""
    return _ensure_array("identity", x)


@_staged("relu")
def _relu(x: ArrayLike) -> Array:
    return maximum(x, 0)


relu = custom_jvp(_relu)
relu.__doc__ = """Rectified linear unit ``max(x, 0)``; its derivative at 0 is taken to be 0 (as in JAX)."""
# The tangent passes where x > 0 and is 0 elsewhere, the kink included.
relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0)))


@_staged("relu6")
def _relu6(x: ArrayLike) -> Array:
    return minimum(maximum(x, 0), 6.0)


relu6 = custom_jvp(_relu6)
relu6.__doc__ = """``min(max(x, 0), 6)``; its derivative at 0 and at 6 is taken to be 0 (as in JAX)."""
relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0)))


@_staged("hard_sigmoid")
def hard_sigmoid(x: ArrayLike) -> Array:
    """``relu6(x + 3) / 6``: a piecewise-linear sigmoid."""
    return relu6(x + 3.0) / 6.0


@_staged("hard_silu")
def hard_silu(x: ArrayLike) -> Array:
    """``x * hard_sigmoid(x)`` (also called hard_swish)."""
    x_arr = _ensure_array("hard_silu", x)
    return x_arr * hard_sigmoid(x_arr)


hard_swish = hard_silu


@_staged("leaky_relu")
def leaky_relu(x: ArrayLike, negative_slope: ArrayLike = 1e-2) -> Array:
    """``x`` where ``x >= 0``, else ``negative_slope * x``."""
    x_arr = _ensure_array("leaky_relu", x)
    return jnp_where(x_arr >= 0, x_arr, negative_slope * x_arr)


@_staged("hard_tanh")
def hard_tanh(x: ArrayLike) -> Array:
    """``x`` clipped to ``[-1, 1]``."""
    x_arr = _ensure_array("hard_tanh", x)
    return jnp_where(x_arr > 1, 1, jnp_where(x_arr < -1, -1, x_arr))


# ---------------------------------------------------------------------------
# Smooth activations


def sigmoid(x: ArrayLike) -> Array:
    """The logistic sigmoid ``1 / (1 + exp(-x))``.

    JAX stages it as an inlined jit, so its jaxpr is the bare ``logistic``
    equation; a plain function records exactly that.
    """
    return lax.logistic(x)


@_staged("softplus")
def softplus(x: ArrayLike) -> Array:
    """``log(1 + exp(x))``, computed as ``logaddexp(x, 0)`` (no overflow for large x)."""
    return logaddexp(x, 0)


@_staged("log_sigmoid")
def log_sigmoid(x: ArrayLike) -> Array:
    """``log(sigmoid(x)) = -softplus(-x)``."""
    x_arr = _ensure_array("log_sigmoid", x)
    return -softplus(-x_arr)


@_staged("soft_sign")
def soft_sign(x: ArrayLike) -> Array:
    """``x / (|x| + 1)``."""
    x_arr = _ensure_array("soft_sign", x)
    return x_arr / (jnp_abs(x_arr) + 1)


@_staged("silu")
def silu(x: ArrayLike) -> Array:
    """``x * sigmoid(x)`` (also called swish)."""
    x_arr = _ensure_array("silu", x)
    return x_arr * sigmoid(x_arr)


swish = silu


@_staged("mish")
def mish(x: ArrayLike) -> Array:
    """``x * tanh(softplus(x))``."""
    x_arr = _ensure_array("mish", x)
    return x_arr * tanh(softplus(x_arr))


@_staged("squareplus")
def squareplus(x: ArrayLike, b: ArrayLike = 4) -> Array:
    """``(x + sqrt(x**2 + b)) / 2``: a smooth, algebraic relu."""
    x_arr, b_arr = _ensure_array("squareplus", x), _ensure_array("squareplus", b)
    y = x_arr + sqrt(square(x_arr) + b_arr)
    return y / 2


@_staged("sparse_plus")
def sparse_plus(x: ArrayLike) -> Array:
    """0 for ``x <= -1``, ``x`` for ``x >= 1`` and ``(x + 1)**2 / 4`` in between."""
    x_arr = _ensure_array("sparse_plus", x)
    return jnp_where(x_arr <= -1.0, 0.0, jnp_where(x_arr >= 1.0, x_arr, (x_arr + 1.0) ** 2 / 4))


@_staged("sparse_sigmoid")
def sparse_sigmoid(x: ArrayLike) -> Array:
    """``clip((x + 1) / 2, 0, 1)``: the derivative of ``sparse_plus``."""
    return 0.5 * clip(x + 1.0, 0.0, 2.0)


@_staged("elu")
def elu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Array:
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``.

    The inner ``where`` feeds ``expm1`` zeros where ``x > 0``, so a large
    positive ``x`` cannot overflow into an infinite (and then NaN) gradient.
    """
    x_arr = _ensure_array("elu", x)
    return jnp_where(x_arr > 0, x_arr, alpha * expm1(jnp_where(x_arr > 0, 0.0, x_arr)))


@_staged("celu")
def celu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Array:
    """``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``."""
    return maximum(x, 0.0) + alpha * expm1(minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@_staged("selu")
def selu(x: ArrayLike) -> Array:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def gelu(x: ArrayLike, approximate: bool = True) -> Array:
    """Gaussian error linear unit: ``x * Phi(x)``.

    ``approximate=True`` (the default) uses the tanh formula
    ``x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x**3)))``; ``False`` the exact
    ``x/2 * erfc(-x / sqrt(2))``.
    """
    [x_arr] = np_util.promote_args_inexact("gelu", x)
    dt = dtypes.dtype(x_arr)
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(dt)
        cdf = 0.5 * (1.0 + tanh(sqrt_2_over_pi * (x_arr + 0.044715 * (x_arr**3))))
        return x_arr * cdf
    sqrt_half = np.sqrt(0.5).astype(dt)
    return array(0.5 * x_arr * lax.erfc(-x_arr * sqrt_half), dtype=dt)


@_staged("glu", static_argnames=("axis",))
def glu(x: ArrayLike, axis: int = -1) -> Array:
    """Gated linear unit: split ``x`` in two halves along ``axis``, ``first * sigmoid(second)``."""
    x_arr = _ensure_array("glu", x)
    size = x_arr.shape[axis]
    if size % 2 != 0:
        raise ValueError(f"glu: the size of axis {axis} must be divisible by 2, got shape {x_arr.shape}.")
    x1, x2 = split(x_arr, 2, axis)
    return x1 * sigmoid(x2)


def _log1mexp_impl(x: ArrayLike) -> Array:
    x_arr = _ensure_array("log1mexp", x)
    c = log(2.0)
    # Two formulas, each accurate on its side of log(2) (Maechler's note).
    return jnp_where(x_arr < c, log(-expm1(-x_arr)), log1p(-exp(-x_arr)))


log1mexp = custom_jvp(_staged("log1mexp")(_log1mexp_impl))
log1mexp.__doc__ = """``log(1 - exp(-x))`` for ``x >= 0``, accurate for small and large ``x``."""
log1mexp.defjvps(lambda g, ans, x: g / expm1(x))


# ---------------------------------------------------------------------------
# Reductions: logsumexp, softmax, log_softmax, logmeanexp, standardize


def _reduction_dims(ndim: int, axis: Axis) -> tuple[int, ...]:
    """``axis`` (None: all) as a tuple of non-negative axes; duplicates are an error."""
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list, np.ndarray)) else (axis,)
    dims = tuple(np_util.canonicalize_axis(a, ndim) for a in axes)
    if len(dims) != len(set(dims)):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return dims


@overload
def logsumexp(a: ArrayLike, axis: Axis = None, b: ArrayLike | None = None, keepdims: bool = False,
              return_sign: Literal[False] = False, where: ArrayLike | None = None) -> Array: ...


@overload
def logsumexp(a: ArrayLike, axis: Axis = None, b: ArrayLike | None = None, keepdims: bool = False, *,
              return_sign: Literal[True], where: ArrayLike | None = None) -> tuple[Array, Array]: ...


@overload
def logsumexp(a: ArrayLike, axis: Axis = None, b: ArrayLike | None = None, keepdims: bool = False,
              return_sign: bool = False, where: ArrayLike | None = None) -> Array | tuple[Array, Array]: ...


def logsumexp(
    a: ArrayLike,
    axis: Axis = None,
    b: ArrayLike | None = None,
    keepdims: bool = False,
    return_sign: bool = False,
    where: ArrayLike | None = None,
) -> Array | tuple[Array, Array]:
    """``log(sum(b * exp(a)))`` over ``axis``, without overflow (``jax.nn.logsumexp``).

    The maximum (replaced by 0 where it is not finite, e.g. all ``-inf``) is
    subtracted before ``exp`` and added back after ``log``. With ``b`` the sum
    may be negative: ``return_sign=True`` returns ``(log|sum|, sign(sum))``,
    otherwise negative sums give NaN.
    """
    if where is not None:
        a = jnp_where(where, a, 0)
    if b is not None:
        a_arr, b_arr = np_util.promote_args_inexact("logsumexp", a, b)
        a_arr = jnp_where(b_arr != 0, a_arr, -np.inf)
    else:
        (a_arr,) = np_util.promote_args_inexact("logsumexp", a)
        b_arr = a_arr
    dims = _reduction_dims(np_util.ndim(a_arr), axis)
    amax = jnp_max(a_arr, axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
    amax = lax.stop_gradient(lax.select(lax.is_finite(amax), amax, lax.full_like(amax, 0)))
    amax_with_dims = amax if keepdims else lax.expand_dims(amax, dims)
    exp_a = lax.exp(lax.sub(a_arr, np_util.convert_element_type(amax_with_dims, dtypes.dtype(a_arr))))
    if b is not None:
        exp_a = lax.mul(exp_a, b_arr)
    sumexp = jnp_sum(exp_a, axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    sumexp = jnp_abs(sumexp)
    out = lax.add(lax.log(sumexp), np_util.convert_element_type(amax, dtypes.dtype(sumexp)))
    if return_sign:
        return out, sign
    if b is not None:
        out = jnp_where(sign < 0, asarray(np.nan, dtype=dtypes.dtype(out)), out)
    return out


def _count(x: Any, dims: tuple[int, ...], keepdims: bool, where: ArrayLike | None, dtype: np.dtype[Any]) -> Any:
    """How many elements each reduction over ``dims`` sees (JAX's ``_count``)."""
    if where is None:
        n = 1
        for d in dims:
            n *= np_util.shape(x)[d]
        return np_util.convert_element_type(n, dtype)
    mask = np_util.broadcast_to(asarray(where), np_util.shape(x))
    return jnp_sum(mask, dims, dtype=dtype, keepdims=keepdims)


@_staged("logmeanexp", static_argnames=("axis", "keepdims"))
def logmeanexp(x: ArrayLike, axis: Axis = None, where: ArrayLike | None = None, keepdims: bool = False) -> Array:
    """``logsumexp(x) - log(n)``: the log of the mean of ``exp(x)``."""
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    dims = _reduction_dims(np_util.ndim(x), axis)
    count = _count(x, dims, keepdims, where, dtypes.dtype(lse))
    return lse - log(count)


@_staged("log_softmax", static_argnames=("axis",))
def log_softmax(x: ArrayLike, axis: Axis = -1, where: ArrayLike | None = None) -> Array:
    """``x - logsumexp(x, axis)``: the log of ``softmax``, computed stably.

    Masked-out elements (``where`` False) are ``-inf``.
    """
    x_arr = _ensure_array("log_softmax", x)
    x_max = jnp_max(x_arr, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x_arr if where is None else jnp_where(where, x_arr, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_logsumexp = log(jnp_sum(exp(shifted), axis, where=where, keepdims=True))
    result = shifted - shifted_logsumexp
    if where is not None:
        return jnp_where(where, result, -np.inf)
    return result


def _softmax_custom_jvp_enabled() -> bool:
    # JAX's ``jax_softmax_custom_jvp`` flag (False by default in 0.10), when
    # minijax.config defines it.
    try:
        return bool(config.read("jax_softmax_custom_jvp"))
    except KeyError:
        return False


def softmax(x: ArrayLike, axis: Axis = -1, where: ArrayLike | None = None) -> Array:
    """``exp(x) / sum(exp(x), axis)``, computed stably (the maximum is subtracted first).

    Masked-out elements (``where`` False) are 0, and the result sums to 1
    along ``axis``. As in JAX 0.10 with its default
    ``jax_softmax_custom_jvp=False``, the derivative is the formula's, with the
    maximum under ``stop_gradient``; with the flag on, softmax is a
    ``custom_jvp`` whose rule is ``y * (dx - sum(y * dx))``.
    """
    if _softmax_custom_jvp_enabled():
        return _softmax_with_rule(x, axis, where, -np.inf)
    return _softmax_formula(x, axis, where, -np.inf, stop_max_gradient=True)


def _softmax_formula(x: ArrayLike, axis: Axis, where: ArrayLike | None, initial: ArrayLike,
                     stop_max_gradient: bool) -> Array:
    x_max = jnp_max(x, axis, where=where, initial=initial, keepdims=True)
    x_safe = x if where is None else jnp_where(where, x, initial)
    unnormalized = exp(x_safe - (lax.stop_gradient(x_max) if stop_max_gradient else x_max))
    result = unnormalized / jnp_sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = jnp_where(where, result, 0)
    return result


def _softmax(x: ArrayLike, axis: Axis = -1, where: ArrayLike | None = None, initial: ArrayLike = -np.inf) -> Array:
    return _softmax_formula(x, axis, where, initial, stop_max_gradient=False)


_softmax_with_rule = custom_jvp(_softmax, nondiff_argnums=(1,))


@_softmax_with_rule.defjvp
def _softmax_jvp(axis: Axis, primals: Any, tangents: Any) -> tuple[Any, Any]:
    # d softmax = y * (dx - <y, dx>): one multiply-and-sum, no exp of the tangent.
    (x, where, initial), (x_dot, _, _) = primals, tangents
    y = _softmax_with_rule(x, axis, where, initial)
    return y, y * (x_dot - jnp_sum(y * x_dot, axis, where=where, keepdims=True))


@_staged("standardize", static_argnames=("axis", "algorithm"))
def standardize(
    x: ArrayLike,
    axis: Axis = -1,
    mean: ArrayLike | None = None,
    variance: ArrayLike | None = None,
    epsilon: ArrayLike = 1e-5,
    where: ArrayLike | None = None,
    *,
    algorithm: str = "fast",
) -> Array:
    """``(x - mean) / sqrt(variance + epsilon)`` over ``axis``.

    ``algorithm="fast"`` computes the variance as ``mean(x**2) - mean(x)**2``
    (clipped at 0), ``"stable"`` as ``mean((x - mean)**2)``.
    """
    np_util.check_arraylike("standardize", x)
    for arg in (mean, variance, where):
        if arg is not None:
            np_util.check_arraylike("standardize", arg)
    if mean is None:
        mean = _mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = _mean(square(subtract(x, mean)), axis, keepdims=True, where=where)
        elif algorithm == "fast":
            variance = _mean(square(x), axis, keepdims=True, where=where) - square(mean)
            variance = clip(variance, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return subtract(x, mean) * lax.rsqrt(variance + epsilon)


_mean = mean  # standardize's parameter named ``mean`` shadows the function


# ---------------------------------------------------------------------------
# one_hot


def _one_hot_impl(x: Any, num_classes: int, *, dtype: Any, axis: Any) -> Array:
    ndim = np_util.ndim(x)
    if isinstance(axis, (int, np.integer)):
        out_axis = np_util.canonicalize_axis(axis, ndim + 1)
    else:
        # A named (vmap) axis: compare against this program's index along it.
        axis_size = lax.axis_size(axis)
        if num_classes != axis_size:
            raise ValueError(f"Expected num_classes to match the size of axis {axis}, but {num_classes} != {axis_size}")
        return asarray(x == lax.axis_index(axis), dtype=dtype)
    lhs = lax.expand_dims(x, (operator.index(axis),))
    rhs_shape = [1] * ndim
    rhs_shape.insert(out_axis, num_classes)
    rhs = lax.broadcasted_iota(dtypes.dtype(x), rhs_shape, out_axis)
    return (lhs == rhs).astype(dtype)


_one_hot = _staged("_one_hot", static_argnames=("num_classes", "dtype", "axis"))(_one_hot_impl)


def one_hot(x: ArrayLike, num_classes: int, *, dtype: Any | None = None, axis: SupportsIndex | str = -1) -> Array:
    """One-hot encode integer indices: a new axis of length ``num_classes`` (at ``axis``).

    ``out[..., c, ...] = (x == c)``; indices outside ``[0, num_classes)`` give
    all zeros. ``dtype`` defaults to the default float dtype.
    """
    num_classes = core.concrete_or_error(num_classes, "The error arose in jax.nn.one_hot argument `num_classes`.")
    num_classes = operator.index(num_classes)
    x_arr = asarray(x)
    if not dtypes.issubdtype(dtypes.dtype(x_arr), np.integer):
        warnings.warn(
            f"jax.nn.one_hot input should be integer-typed; got dtype={dtypes.dtype(x_arr)}",
            DeprecationWarning,
            stacklevel=2,
        )
    out_dtype = dtypes.default_float_dtype() if dtype is None else dtype
    return _one_hot(x_arr, num_classes, dtype=out_dtype, axis=axis)


__all__ = [
    "celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "identity",
    "leaky_relu", "log1mexp", "log_sigmoid", "log_softmax", "logmeanexp", "logsumexp", "mish", "one_hot",
    "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign", "softmax", "softplus", "sparse_plus",
    "sparse_sigmoid", "squareplus", "standardize", "swish",
]  # fmt: skip
