"""Operators and methods of arrays, shared by ``minijax.Array`` and every ``Tracer``.

A value behaves the same whether it is concrete or being traced: ``x + 1``,
``x.sum()``, ``x[0]`` and ``x.at[0].set(1)`` are the same ``jnp`` calls on both.
``attach(jnp)`` (run by ``minijax.numpy`` once it has imported everything)
sets them on the two classes. Operators return ``NotImplemented`` for operands that are not arrays
or scalars (a list, a string), so Python raises its usual TypeError, as JAX does.

Methods that forward to a ``jnp`` function another module defines (reshape,
transpose, matmul, cumsum, ...) look it up when called, by name, in the
namespace ``attach`` was given (this module sits below ``minijax.numpy``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from minijax import core, dtypes, lax
from minijax.array import Array
from minijax.errors import ConcretizationTypeError
from minijax.numpy import indexing, util
from minijax.numpy.creation import array
from minijax.numpy.reductions import any as jnp_any
from minijax.numpy.ufuncs import equal
from minijax.numpy.ufuncs_math import conjugate, imag, real, round as jnp_round

Method = Callable[..., Any]


# The ``minijax.numpy`` namespace, given to ``attach``.
_namespace: list[Any] = []


def _jnp(name: str) -> Method:
    fn = getattr(_namespace[0], name, None)
    if fn is None:
        raise NotImplementedError(f"jnp.{name} (used by the array method) is not available in minijax yet")
    result: Method = fn
    return result


# ---------------------------------------------------------------------------
# Operators

# dunder -> (jnp function, reflected?)
_BINARY_OPERATORS: dict[str, tuple[str, bool]] = {
    "__add__": ("add", False),
    "__radd__": ("add", True),
    "__sub__": ("subtract", False),
    "__rsub__": ("subtract", True),
    "__mul__": ("multiply", False),
    "__rmul__": ("multiply", True),
    "__truediv__": ("true_divide", False),
    "__rtruediv__": ("true_divide", True),
    "__floordiv__": ("floor_divide", False),
    "__rfloordiv__": ("floor_divide", True),
    "__mod__": ("remainder", False),
    "__rmod__": ("remainder", True),
    "__divmod__": ("divmod", False),
    "__rdivmod__": ("divmod", True),
    "__pow__": ("power", False),
    "__rpow__": ("power", True),
    "__matmul__": ("matmul", False),
    "__rmatmul__": ("matmul", True),
    "__and__": ("bitwise_and", False),
    "__rand__": ("bitwise_and", True),
    "__or__": ("bitwise_or", False),
    "__ror__": ("bitwise_or", True),
    "__xor__": ("bitwise_xor", False),
    "__rxor__": ("bitwise_xor", True),
    "__lshift__": ("left_shift", False),
    "__rlshift__": ("left_shift", True),
    "__rshift__": ("right_shift", False),
    "__rrshift__": ("right_shift", True),
    "__eq__": ("equal", False),
    "__ne__": ("not_equal", False),
    "__lt__": ("less", False),
    "__le__": ("less_equal", False),
    "__gt__": ("greater", False),
    "__ge__": ("greater_equal", False),
}

_UNARY_OPERATORS: dict[str, str] = {
    "__neg__": "negative",
    "__pos__": "positive",
    "__abs__": "absolute",
    "__invert__": "invert",
}


def _binary_operator(dunder: str, fun_name: str, reflected: bool) -> Method:
    resolved: list[Method] = []  # the jnp function, looked up on first use

    def op(self: Any, other: Any) -> Any:
        if type(other) is not Array and not util.is_arraylike(other):
            return NotImplemented
        if not resolved:
            resolved.append(_jnp(fun_name))
        fn = resolved[0]
        return fn(other, self) if reflected else fn(self, other)

    op.__name__ = op.__qualname__ = dunder
    return op


def _unary_operator(dunder: str, fun_name: str) -> Method:
    resolved: list[Method] = []

    def op(self: Any) -> Any:
        if not resolved:
            resolved.append(_jnp(fun_name))
        return resolved[0](self)

    op.__name__ = op.__qualname__ = dunder
    return op


def _round(self: Any, ndigits: int | None = None) -> Any:
    if ndigits is None:
        # Python's round(x) gives an integer.
        return util.convert_element_type(jnp_round(self), dtypes.default_int_dtype())
    return jnp_round(self, ndigits)


def _contains(self: Any, value: Any) -> bool:

    return bool(jnp_any(equal(self, value)))


# ---------------------------------------------------------------------------
# Methods that forward to jnp functions with the array as first argument

_FORWARDED = (
    "all", "any", "argmax", "argmin", "argpartition", "argsort", "choose", "clip", "compress", "cumprod",
    "cumsum", "diagonal", "dot", "max", "mean", "min", "nonzero", "prod", "ptp", "repeat", "searchsorted",
    "sort", "std", "sum", "swapaxes", "take", "trace", "var",
)


def _forwarding_method(name: str) -> Method:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _jnp(name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``jnp.{name}(self, ...)``."
    return method


def astype(self: Any, dtype: Any, copy: bool = False, device: Any = None) -> Any:
    """This array converted to ``dtype`` (a strongly typed result)."""
    if device is not None:
        raise NotImplementedError("astype(device=...) is not supported by minijax")
    # dtype=None means the default floating dtype, as in JAX.
    want = dtypes.canonicalize_dtype(np.float64) if dtype is None else dtypes.check_user_dtype_supported(dtype, "astype")
    if dtypes.issubdtype(dtypes.dtype(self), np.complexfloating):
        if want == np.bool_:  # nonzero, as JAX's astype (convert_element_type would read the real part)
            return lax.ne(self, lax.full_like(self, 0))
        if want.kind in "iuf" or dtypes.issubdtype(want, np.floating):
            warnings.warn(
                "Casting from complex to real dtypes will soon raise a ValueError. Please first use jnp.real or "
                "jnp.imag to take the real/imaginary component of your input.",
                DeprecationWarning,
                stacklevel=2,
            )
    return util.convert_element_type(self, want)


def reshape(self: Any, *args: Any, order: str = "C", **kwargs: Any) -> Any:
    """``jnp.reshape``; the shape may be given as separate ints: ``x.reshape(2, 3)``."""
    if "shape" in kwargs:
        shape = kwargs.pop("shape")
    elif len(args) == 1 and not isinstance(args[0], int):
        shape = args[0]
    else:
        shape = args
    return _jnp("reshape")(self, shape, order=order, **kwargs)


def transpose(self: Any, *args: Any) -> Any:
    """``jnp.transpose``; axes may be given as separate ints: ``x.transpose(1, 0)``."""
    axes = args[0] if len(args) == 1 and (args[0] is None or isinstance(args[0], (tuple, list))) else args
    return _jnp("transpose")(self, axes or None)


def squeeze(self: Any, axis: Any = None) -> Any:
    return _jnp("squeeze")(self, axis)


def ravel(self: Any, order: str = "C") -> Any:
    return _jnp("ravel")(self, order=order)


def flatten(self: Any, order: str = "C") -> Any:
    """A 1-D copy (arrays are immutable, so the same as ``ravel``)."""
    return _jnp("ravel")(self, order=order)


def round_method(self: Any, decimals: int = 0, out: None = None) -> Any:
    return jnp_round(self, decimals, out)


def conj(self: Any) -> Any:
    return conjugate(self)


def copy(self: Any) -> Any:
    return array(self, copy=True)


def view(self: Any, dtype: Any = None, type: Any = None) -> Any:
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None or dtypes.canonicalize_dtype(dtype) == self.dtype:
        return self
    raise NotImplementedError("array.view(dtype) (a bitcast) is not supported by minijax yet.")


def _T(self: Any) -> Any:
    return _jnp("transpose")(self)


def _mT(self: Any) -> Any:
    if self.ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got ndim={self.ndim}")
    return _jnp("swapaxes")(self, -1, -2)


def _real(self: Any) -> Any:
    return real(self)


def _imag(self: Any) -> Any:
    return imag(self)


def _getitem(self: Any, idx: Any) -> Any:
    return indexing.getitem(self, idx)


def _at(self: Any) -> Any:
    helper = getattr(indexing, "_IndexUpdateHelper", None)
    return helper(self) if helper is not None else indexing.at_helper(self)


# ---------------------------------------------------------------------------
# Tracer-only: conversions that need a concrete value


def _tracer_item(self: Any, *args: Any) -> Any:
    value = self.to_concrete_value()
    if value is None:
        raise ConcretizationTypeError(self, "This occurred in the item() method of jax.Array")
    return np.asarray(value).item(*args)


def _tracer_tolist(self: Any) -> Any:
    # Never from a concrete value (as in JAX): a list of floats taken out of
    # grad's trace would silently drop the derivative.
    raise ConcretizationTypeError(
        self, f"The tolist() method was called on traced array with shape {self.aval.str_short()}."
    )


def _tracer_iter(self: Any) -> Iterator[Any]:
    if not self.shape:
        raise TypeError("iteration over a 0-d array")

    # Row by row with index_in_dim (a unit-stride slice, then squeeze), as JAX
    # iterates a traced array.
    for i in range(self.shape[0]):
        yield lax.index_in_dim(self, i, keepdims=False)


def _array_iter(self: Array) -> Iterator[Array]:
    """Iterate over the rows of a concrete array, each taken at an index passed
    as an operand (``dynamic_index_in_dim``): one executable serves every row,
    where indexing with each Python int compiles a slice per row on XLA
    (iterating over 300 rows: 1 compile instead of 300; JAX too compiles per
    chunk, not per row). Key arrays and arrays laid out over several devices
    are indexed row by row, as before."""
    if not self.shape:
        raise TypeError("iteration over a 0-d array")
    if isinstance(self.dtype, dtypes.ExtendedDType) or len(self.devices()) != 1:
        for i in range(self.shape[0]):
            yield self[i]
        return
    for i in range(self.shape[0]):
        yield lax.dynamic_index_in_dim(self, np.int32(i), keepdims=False)


def _nbytes(self: Any) -> int:
    return int(self.size * self.dtype.itemsize)


def _itemsize(self: Any) -> int:
    return int(self.dtype.itemsize)


# ---------------------------------------------------------------------------


def _shared_members() -> dict[str, Any]:
    members: dict[str, Any] = {}
    for dunder, (fun_name, reflected) in _BINARY_OPERATORS.items():
        members[dunder] = _binary_operator(dunder, fun_name, reflected)
    for dunder, fun_name in _UNARY_OPERATORS.items():
        members[dunder] = _unary_operator(dunder, fun_name)
    for name in _FORWARDED:
        members[name] = _forwarding_method(name)
    members.update(
        __round__=_round,
        __contains__=_contains,
        __getitem__=_getitem,
        astype=astype,
        reshape=reshape,
        transpose=transpose,
        squeeze=squeeze,
        ravel=ravel,
        flatten=flatten,
        round=round_method,
        conj=conj,
        conjugate=conj,
        copy=copy,
        view=view,
        T=property(_T),
        mT=property(_mT),
        real=property(_real),
        imag=property(_imag),
        at=property(_at),
    )
    return members


_TRACER_ONLY: dict[str, Any] = {
    "item": _tracer_item,
    "tolist": _tracer_tolist,
    "__iter__": _tracer_iter,
    "nbytes": property(_nbytes),
    "itemsize": property(_itemsize),
}


def attach(jnp: Any) -> None:
    """Give ``Array`` and ``Tracer`` their operators and methods, which look the
    ``jnp`` functions they forward to up in ``jnp`` (idempotent)."""
    _namespace[:] = [jnp]
    for name, member in _shared_members().items():
        setattr(Array, name, member)
        setattr(core.Tracer, name, member)
    for name, member in _TRACER_ONLY.items():
        setattr(core.Tracer, name, member)
    Array.__iter__ = _array_iter  # type: ignore[method-assign]
