"""Array creation: array/asarray, zeros/ones/full/empty (and ``_like``), arange, linspace, eye.

Host data (Python scalars, nested lists of them, NumPy arrays) is converted
on the host and placed on the default device. Everything whose values may
be traced (lists holding arrays or tracers, ``full`` with a traced fill value,
``linspace`` bounds) is built with ``lax`` operations, so jaxprs show the
same equations as JAX's.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from minijax import core, dtypes, lax as lax
from minijax.array import Array, device_put_value
from minijax.interpreters.tracing import DynamicJaxprTrace
from minijax.numpy import util
from minijax.numpy.util import ArrayLike
from minijax.placement import device_put
from minijax.primitives.elementwise import convert_element_type_p
from minijax.sharding_rules import explicit_type, out_sharding_param, place_result
from minijax.stages import jit

__all__ = [
    "arange",
    "array",
    "asarray",
    "astype",
    "empty",
    "empty_like",
    "eye",
    "full",
    "full_like",
    "identity",
    "linspace",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
]


def as_array(x: Any) -> Any:
    """A host value (Python or NumPy) as an Array; arrays and tracers pass through."""
    if isinstance(x, (Array, core.Tracer)):
        return x
    if type(x) is np.ndarray and x.ndim:
        trace = core.current_trace()
        if isinstance(trace, DynamicJaxprTrace):  # while tracing: one Array (one constvar) per host array
            return trace.host_constant(x, _to_device)
    return _to_device(x)


def _to_device(x: Any) -> Any:
    return device_put_value(x, weak_type=dtypes.is_weakly_typed(x))


def _user_dtype(dtype: Any, fun_name: str) -> np.dtype[Any] | None:
    return None if dtype is None else dtypes.check_user_dtype_supported(dtype, fun_name)



def _place(x: Any, device: Any) -> Any:
    return x if device is None else device_put(x, device)


# ---------------------------------------------------------------------------
# Shapes


def canonicalize_shape(shape: Any, context: str = "") -> tuple[int, ...]:
    """``shape`` (an int, or a sequence or 1-D array of ints, all concrete) as a tuple of ints."""
    # A 1-D array is a sequence of dimensions (jnp.zeros(np.array([2, 3]))),
    # as in JAX; anything else that is not a tuple or list is one dimension.
    is_sequence = isinstance(shape, (tuple, list)) or getattr(shape, "ndim", None) == 1
    dims = tuple(shape) if is_sequence else (shape,)
    out = []
    for d in dims:
        if isinstance(d, core.Tracer) and d.to_concrete_value() is None:
            raise util.traced_shape_error(tuple(dims), d)
        try:
            out.append(core.dim_index(d))
        except TypeError:
            raise TypeError(
                f"Shapes must be 1D sequences of concrete values of integer type, got {tuple(dims)}.{context}"
            ) from None
    return tuple(out)


def _check_nonnegative(shape: tuple[int, ...]) -> None:
    if any(d < 0 for d in shape):
        raise TypeError(f"broadcast_in_dim shape must have every element be nonnegative, got {shape}.")


# ---------------------------------------------------------------------------
# array / asarray


def _copy(x: Any) -> Any:
    # JAX records an explicit copy for jnp.array(tracer); arrays are immutable,
    # so without a copy primitive the value itself is an equally good answer.
    prim = core.primitive_registry.get("copy")
    return x if prim is None else prim.bind(x)


def _holds_arrays(obj: Any) -> bool:
    if isinstance(obj, (list, tuple)):
        return any(_holds_arrays(o) for o in obj)
    return isinstance(obj, (Array, core.Tracer)) or hasattr(obj, "__jax_array__")


def _leaves(obj: Any) -> list[Any]:
    if isinstance(obj, (list, tuple)):
        return [leaf for o in obj for leaf in _leaves(o)]
    return [obj]


def _stack_nested(obj: Any, dtype: np.dtype[Any]) -> Any:
    """A nested list holding arrays or tracers, built with broadcast_in_dim + concatenate."""
    if not isinstance(obj, (list, tuple)):
        if hasattr(obj, "__jax_array__"):
            obj = obj.__jax_array__()
        return util.convert_element_type(obj, dtype)
    if not _holds_arrays(obj):
        return np.array(obj, dtype=dtype)
    rows = []
    for element in obj:
        part = _stack_nested(element, dtype)
        rows.append(lax.broadcast_in_dim(part, (1, *util.shape(part)), tuple(range(1, util.ndim(part) + 1))))
    return lax.concatenate(rows, 0)


def array(
    object: Any,
    dtype: Any = None,
    copy: bool = True,
    order: str | None = "K",
    ndmin: int = 0,
    *,
    device: Any = None,
    out_sharding: Any = None,
) -> Array:
    """An array from ``object``: an array, a scalar, or nested lists/tuples of those.

    Python scalars give weakly typed arrays (``jnp.array(1)`` has weak int32);
    lists give strongly typed ones, of the dtype their elements promote to.
    """
    if order is not None and order != "K":
        raise NotImplementedError("Only implemented for order='K'")
    want = _user_dtype(dtype, "array")
    if hasattr(object, "__jax_array__"):
        object = object.__jax_array__()
    out: Any
    if isinstance(object, (Array, core.Tracer)):
        out = _copy(object) if copy else object
        if want is not None:
            out = util.convert_element_type(out, want)
    elif isinstance(object, (list, tuple)):
        leaves = _leaves(object)
        if any(leaf is None for leaf in leaves):
            raise ValueError("None is not a valid value for jnp.array")
        if want is None:
            want = dtypes.canonicalize_dtype(dtypes.result_type(*leaves)) if leaves else dtypes.default_float_dtype()
        out = _stack_nested(object, want)
    elif object is None:
        raise ValueError("None is not a valid value for jnp.array")
    elif type(object) in (bool, int, float, complex):
        if want is None:
            out = util.convert_element_type(object, dtypes.dtype(object), dtypes.is_weakly_typed(object))
        else:
            # An explicit dtype converts like NumPy does (out-of-range ints are an error).
            out = np.array(object, dtype=want)
    elif type(object) is np.ndarray and want is None:
        out = object  # as_array converts it (to its canonical dtype): while tracing, once per trace
    else:
        host = np.asarray(object)
        out = np.asarray(host, dtype=want if want is not None else dtypes.canonicalize_dtype(host.dtype))
    out = as_array(out)
    if ndmin > util.ndim(out):
        extra = ndmin - util.ndim(out)
        out = lax.broadcast_in_dim(out, (1,) * extra + util.shape(out), tuple(range(extra, ndmin)))
    if out_sharding is not None and core.current_trace() is not core.eval_trace:
        # (as JAX stages it: a conversion to the array's own dtype whose result has the sharding)
        aval = core.get_aval(out)
        out = convert_element_type_p.bind(out, new_dtype=aval.dtype, weak_type=aval.weak_type,
                                          sharding=out_sharding_param(out_sharding, "array"))
    placed: Array = _place(place_result(out, out_sharding, "array"), device)
    return placed


def asarray(
    a: Any,
    dtype: Any = None,
    order: str | None = None,
    *,
    copy: bool | None = None,
    device: Any = None,
    out_sharding: Any = None,
) -> Array:
    """Like ``array``, but without a copy unless ``copy=True`` asks for one."""
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "asarray")
    return array(a, dtype=dtype, copy=bool(copy), order=order, device=device, out_sharding=out_sharding)


# ---------------------------------------------------------------------------
# Filled arrays


def _full(shape: tuple[int, ...], fill_value: Any, dtype: np.dtype[Any], weak_type: bool, out_sharding: Any = None) -> Any:
    """``lax.full``: a scalar converted to ``dtype`` and broadcast to ``shape`` (laid out as ``out_sharding``)."""
    _check_nonnegative(shape)
    value = as_array(util.convert_element_type(fill_value, dtype, weak_type))
    if shape == ():
        return place_result(value, out_sharding, "full")
    return lax.broadcast_in_dim(value, shape, (), out_sharding=out_sharding)


def _fill(fun_name: str, shape: Any, fill_value: Any, dtype: Any, device: Any, out_sharding: Any) -> Any:
    dims = canonicalize_shape(shape)
    want = _user_dtype(dtype, fun_name)
    dt = want if want is not None else dtypes.default_float_dtype()
    return _place(_full(dims, fill_value, dt, False, out_sharding), device)


def zeros(shape: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """An array of zeros (default dtype float32, or float64 with x64)."""
    return _fill("zeros", shape, 0, dtype, device, out_sharding)


def ones(shape: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """An array of ones (default dtype float32, or float64 with x64)."""
    return _fill("ones", shape, 1, dtype, device, out_sharding)


def empty(shape: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """Like ``zeros``: arrays are immutable, so there is nothing to leave uninitialized."""
    return _fill("empty", shape, 0, dtype, device, out_sharding)


def full(shape: Any, fill_value: ArrayLike, dtype: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """An array of ``shape`` filled with ``fill_value`` (broadcast if it is an array)."""
    util.check_arraylike("full", fill_value)
    dims = canonicalize_shape(shape)
    want = _user_dtype(dtype, "full")
    if util.ndim(fill_value) == 0:
        if want is None:
            weak = dtypes.is_weakly_typed(fill_value)
            out = _full(dims, fill_value, dtypes.dtype(fill_value, canonicalize=True), weak, out_sharding)
        else:
            out = _full(dims, fill_value, want, False, out_sharding)
    else:
        out = place_result(util.broadcast_to(asarray(fill_value, dtype=want), dims), out_sharding, "full")
    return _place(out, device)


def astype(x: ArrayLike, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    """``x`` converted to ``dtype`` (``x.astype(dtype)`` for any array-like)."""
    util.check_arraylike("astype", x)
    return asarray(x).astype(dtype, copy=copy, device=device)


def _like(
    fun_name: str, a: Any, fill_value: Any, dtype: Any, shape: Any, device: Any, out_sharding: Any = None
) -> Any:
    # As in JAX, anything with a shape and a dtype (a jax.ShapeDtypeStruct)
    # describes the result; only other values must be arrays.
    described = hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, (Array, core.Tracer, np.ndarray, np.generic))
    util.check_arraylike(fun_name, *([fill_value] if described else [a, fill_value]))
    want = _user_dtype(dtype, fun_name)
    # The result is weak only when it copies a weak array's dtype (a
    # description's weak_type is not copied, as in JAX).
    weak = want is None and not described and dtypes.is_weakly_typed(a)
    out_dtype = want if want is not None else dtypes.dtype(a, canonicalize=True)
    dims = util.shape(a) if shape is None else canonicalize_shape(shape)
    typed = explicit_type(a) if out_sharding is None and shape is None and not described else None
    if typed is not None:  # (as in JAX: the result is laid out as ``a`` is, over Explicit axes)
        out_sharding = typed.sharding
    if util.ndim(fill_value) == 0:
        out = _full(dims, fill_value, out_dtype, weak, out_sharding)
    else:
        out = place_result(util.broadcast_to(asarray(fill_value, dtype=want), dims), out_sharding, fun_name)
    return _place(out, device)


def zeros_like(a: ArrayLike, dtype: Any = None, shape: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """Zeros with the shape and dtype of ``a`` (either may be overridden)."""
    return _like("zeros_like", a, 0, dtype, shape, device, out_sharding)


def ones_like(a: ArrayLike, dtype: Any = None, shape: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """Ones with the shape and dtype of ``a`` (either may be overridden)."""
    return _like("ones_like", a, 1, dtype, shape, device, out_sharding)


def empty_like(prototype: ArrayLike, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    """Like ``zeros_like``."""
    return _like("empty_like", prototype, 0, dtype, shape, device)


def full_like(
    a: ArrayLike,
    fill_value: ArrayLike,
    dtype: Any = None,
    shape: Any = None,
    *,
    device: Any = None,
    out_sharding: Any = None,
) -> Any:
    """``fill_value`` in the shape and dtype of ``a`` (either may be overridden)."""
    return _like("full_like", a, fill_value, dtype, shape, device, out_sharding)


# ---------------------------------------------------------------------------
# Ranges


def _concrete_scalar(x: Any, name: str) -> Any:
    if isinstance(x, core.Tracer):
        x = core.concrete_or_error(x, f"It arose in the jnp.arange argument '{name}'")
    if np.ndim(x) != 0:
        raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={np.asarray(x)}")
    return x


def arange(
    start: ArrayLike,
    stop: ArrayLike | None = None,
    step: ArrayLike | None = None,
    dtype: Any = None,
    *,
    device: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Evenly spaced values in ``[start, stop)``: ``iota``, scaled by step, shifted by start.

    Bounds must be concrete. The dtype is what the bounds promote to
    (ints give int32, floats float32), unless ``dtype`` says otherwise.
    """
    util.check_arraylike("arange", start, *(x for x in (stop, step) if x is not None))
    names = ("stop", "start", "step") if stop is None else ("start", "stop", "step")
    start = _concrete_scalar(start, names[0])
    stop = None if stop is None else _concrete_scalar(stop, names[1])
    step = None if step is None else _concrete_scalar(step, names[2])
    want = _user_dtype(dtype, "arange")
    if want is None:
        want = dtypes.canonicalize_dtype(dtypes.result_type(*(x for x in (start, stop, step) if x is not None)))
    if not dtypes.issubdtype(want, np.number):
        raise TypeError(
            f"iota does not accept dtype {want.name}. Accepted dtypes are subtypes of integer, "
            "floating, complexfloating."
        )
    if stop is None and step is None:
        return _place(lax.broadcasted_iota(want, (max(0, math.ceil(_host(start))),), 0, out_sharding=out_sharding), device)
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    size = max(0, math.ceil((_host(stop) - _host(start)) / _host(step)))
    out = lax.broadcasted_iota(want, (size,), 0, out_sharding=out_sharding)
    # lax's conversion, as JAX's arange does: a Python int bound beyond int32
    # (arange(0, 2**40, 2**31)) wraps around instead of raising OverflowError.
    if _host(step) != 1:
        out = lax.mul(lax.convert_element_type(step, want), out)
    out = lax.add(lax.convert_element_type(start, want), out)
    return _place(out, device)


def _host(x: Any) -> Any:
    """A concrete scalar as a Python number (for size arithmetic on the host)."""
    return np.asarray(x).item()


def linspace(
    start: ArrayLike,
    stop: ArrayLike,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
    *,
    device: Any = None,
) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` (included unless ``endpoint=False``).

    ``start`` and ``stop`` may be arrays: the samples are laid out along ``axis``.
    """
    num = operator.index(core.concrete_or_error(num, "'num' argument of jnp.linspace"))
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    util.check_arraylike("linspace", start, stop)
    want = _user_dtype(dtype, "linspace")
    if want is None:
        want = util.to_inexact_dtype(dtypes.canonicalize_dtype(dtypes.result_type(start, stop)))
    out = _linspace_jit(start, stop, num=num, endpoint=bool(endpoint), retstep=bool(retstep), dtype=want, axis=axis)
    return _place(out, device)


def _linspace(start: Any, stop: Any, num: int, endpoint: bool, retstep: bool, dtype: np.dtype[Any], axis: int) -> Any:
    compute = util.to_inexact_dtype(dtype)
    start = util.convert_element_type(start, compute)
    stop = util.convert_element_type(stop, compute)
    bounds = util.broadcast_shapes("linspace", util.shape(start), util.shape(stop))
    axis = util.canonicalize_axis(axis, len(bounds) + 1)
    start_b = util.broadcast_to(start, bounds)
    with_axis = bounds[:axis] + (1,) + bounds[axis:]
    delta: Any
    if num > 1:
        div = num - 1 if endpoint else num
        delta = _true_divide(lax.sub(*util.promote_args("subtract", stop, start)), div)
        iota_shape = (1,) * axis + (div,) + (1,) * (len(bounds) - axis)
        real = np.dtype(np.finfo(compute).dtype) if compute.kind == "c" else compute  # iota is real
        step = util.convert_element_type(_true_divide(_reshape(lax.iota(real, div), iota_shape), div), compute)
        out = lax.add(
            lax.mul(_reshape(start_b, with_axis), lax.sub(util.convert_element_type(1, compute), step)),
            lax.mul(_reshape(util.broadcast_to(stop, bounds), with_axis), step),
        )
        if endpoint:
            stop_b = util.broadcast_to(stop, bounds)
            out = lax.concatenate([out, lax.broadcast_in_dim(stop_b, with_axis, _kept_dims(len(bounds), axis))], axis)
    elif num == 1:
        delta = as_array(util.convert_element_type(np.nan, compute))
        out = _reshape(start_b, with_axis)
    else:
        delta = as_array(util.convert_element_type(np.nan, compute))
        out = _full(bounds[:axis] + (0,) + bounds[axis:], 0, dtype, False)
    if dtypes.issubdtype(dtype, np.integer) and num > 0:
        out = lax.floor(out)
    out = util.convert_element_type(out, dtype)
    return (out, delta) if retstep else out


def _true_divide(x: Any, y: Any) -> Any:
    """``jnp.true_divide(x, y)`` (minijax.numpy.ufuncs builds on this module)."""
    return lax.div(*util.promote_args_inexact("true_divide", x, y))


def _reshape(x: Any, shape: tuple[int, ...]) -> Any:
    return x if util.shape(x) == shape else lax.reshape(x, shape)


def _kept_dims(rank: int, axis: int) -> tuple[int, ...]:
    """Dimensions of a rank-``rank`` array inside one with a new unit ``axis``."""
    return tuple(d if d < axis else d + 1 for d in range(rank))


_linspace_jit = jit(_linspace, static_argnames=("num", "endpoint", "retstep", "dtype", "axis"))


def eye(N: Any, M: Any = None, k: Any = 0, dtype: Any = None, *, device: Any = None) -> Any:
    """A 2-D array with ones on the ``k``-th diagonal and zeros elsewhere."""
    want = _user_dtype(dtype, "eye")
    (n,) = canonicalize_shape(N, " argument of 'N' jnp.eye().")
    (m,) = (n,) if M is None else canonicalize_shape(M, " argument of 'M' jnp.eye().")
    if n < 0 or m < 0:
        raise ValueError(f"negative dimensions are not allowed, got {N} and {M}")
    shape = (n, m)
    rows = lax.broadcasted_iota(np.int32, shape, 0)
    cols = lax.broadcasted_iota(np.int32, shape, 1)
    offset = lax.add(rows, util.convert_element_type(k, np.int32))
    out = util.convert_element_type(lax.eq(offset, cols), want if want is not None else dtypes.default_float_dtype())
    return _place(out, device)


def identity(n: Any, dtype: Any = None) -> Any:
    """The ``n`` x ``n`` identity matrix."""
    return eye(n, dtype=dtype)
