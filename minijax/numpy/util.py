"""What every ``jnp`` function does to its arguments before calling ``lax``.

NumPy's API is forgiving (any dtypes, any ranks, Python scalars) while ``lax``
is strict (equal dtypes, equal ranks or rank 0). The helpers here bridge the
two exactly the way JAX does, so that our jaxprs read like JAX's:

* ``check_arraylike`` rejects lists and tuples where an array is expected
  (JAX refuses to guess how a list should become an array inside a traced
  function; the user writes ``jnp.asarray`` explicitly).
* ``promote_dtypes`` converts every operand to the promoted dtype of
  ``minijax.dtypes.result_type``. Python scalars are converted on the host, so
  ``x + 1`` shows the literal ``1.0:f32[]`` and no ``convert_element_type``.
* ``promote_shapes`` applies NumPy's rank promotion with ``broadcast_in_dim``
  (``f32[3]`` meeting ``f32[2,3]`` becomes ``f32[1,3]``); rank-0 operands are
  left alone because every ``lax`` elementwise op accepts them.
"""

from __future__ import annotations

import functools
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias, TypeVar, cast, overload

import numpy as np

from minijax import core, dtypes, lax as lax
from minijax.array import Array, device_put_value
from minijax.config import numpy_rank_promotion
from minijax.primitives.elementwise import convert_element_type_p
from minijax.stages import jit

# Anything a jnp function accepts as an array operand.
ArrayLike: TypeAlias = Any

# An operand after promote_args_inexact / promote_dtypes_inexact: an Array (or a tracer, which counts
# as one), or a host constant already of the promoted dtype. Constants stay on the host so that they
# become literals, not equations: a weak Python scalar stays a Python float, a NumPy value a NumPy one
# (ml_dtypes' scalars, like bfloat16's, stand under np.number as in minijax.typing.ArrayLike).
# Never a bool or an int: those become floats.
InexactOperand: TypeAlias = Array | np.ndarray[Any, Any] | np.number[Any] | float

_PYTHON_SCALARS = (bool, int, float)


# =====================================================================================
# Eager calls run compiled (issue 23). An optimisation of calling ``fun``
# itself, which is what it computes: read ``fun``. JAX defines its ``jnp``
# functions under ``jit(inline=True)``: traced, they inline; called eagerly,
# the whole function is one cached executable, so its Python (promotion, weak
# types, shape checks, one dispatch per primitive) runs once per signature and
# a later call is a cache lookup. ``compiled_when_eager`` does the same for
# the common eager call: positional operands that are all Arrays, no
# transformation active. Every other call (a transformation tracing, keyword
# arguments, Python scalars, NumPy arrays, lists, which ``fun`` must check or
# reject itself) is the plain call of ``fun``. ``tests/test_dispatch.py``
# checks that the two agree.
# =====================================================================================


_F = TypeVar("_F", bound=Callable[..., Any])


def compiled_when_eager(fun: _F) -> _F:
    """``fun``, run as a cached ``jit`` of itself when called eagerly on Arrays only."""
    jitted = jit(fun)

    @functools.wraps(fun)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if args and not kwargs and core.trace_state.trace is core.eval_trace:
            for a in args:
                if type(a) is not Array:
                    return fun(*args, **kwargs)
            return jitted(*args)
        return fun(*args, **kwargs)

    wrapper.plain = fun  # type: ignore[attr-defined]  # (the plain path, for tests)
    return cast(_F, wrapper)


def is_arraylike(x: Any) -> bool:
    """An array, a tracer, a NumPy value or a Python scalar (not a list)."""
    return isinstance(x, (Array, core.Tracer, np.ndarray, np.generic, *_PYTHON_SCALARS, complex)) or hasattr(
        x, "__jax_array__"
    )


def check_arraylike(fun_name: str, *args: Any) -> None:
    """Raise JAX's TypeError when an argument is not an array or a scalar."""
    for pos, arg in enumerate(args):
        if not is_arraylike(arg):
            raise TypeError(f"{fun_name} requires ndarray or scalar arguments, got {type(arg)} at position {pos}.")


def check_no_out(fun_name: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{fun_name} is not supported.")


def ndim(x: Any) -> int:
    return len(shape(x))


def shape(x: Any) -> tuple[int, ...]:
    s = getattr(x, "shape", None)
    return tuple(s) if s is not None else np.shape(x)


# ---------------------------------------------------------------------------
# Dtype conversion and promotion


def traced_shape_error(shown: Any, tracer: Any) -> TypeError:
    """JAX's error for a shape with a traced dimension (``shown``: the shape as the message prints it)."""
    return TypeError(
        f"Shapes must be 1D sequences of concrete values of integer type, got {shown}.\n"
        "If using `jit`, try using `static_argnums` or applying `jit` to smaller subfunctions.\n"
        + tracer._origin_msg()
    )


def _python_scalar_to(x: bool | int | float, dtype: np.dtype[Any], weak_type: bool) -> Any:
    """A Python scalar as a host constant of ``dtype`` (no equation is recorded).

    A weak constant of the default dtype of its kind stays a Python scalar:
    that is exactly what a weak value is. Anything else becomes a NumPy
    scalar, or a weak Array for the rare weak non-default dtypes.
    """
    check_python_int(x)
    if weak_type and dtype == dtypes.dtype(_kind_scalar_type(dtype)):
        return _kind_scalar_type(dtype)(x)
    if dtype.kind in "iu" and type(x) is int:
        # Like JAX, a Python int meeting a narrower integer array wraps around.
        value: Any = np.array(x).astype(dtype)[()]
    elif dtype.kind in "iu" and type(x) is float:
        # As convert_element_type computes it (XLA's rule): truncate, saturate
        # out-of-range values (inf too), NaN to 0. NumPy would raise or wrap.
        info = np.iinfo(dtype)
        value = dtype.type(0 if x != x else info.max if x >= info.max else info.min if x <= info.min else int(x))
    else:
        value = np.array(x, dtype=dtype)[()]
    return device_put_value(value, weak_type=True) if weak_type else value


def check_python_int(x: Any) -> None:
    """A Python int is first a weak value of the default int dtype; it must fit there."""
    if type(x) is int:
        default = dtypes.default_int_dtype()
        info = np.iinfo(default)
        if not info.min <= x <= info.max:
            raise OverflowError(f"Python int {x} too large to convert to {default.name}")


def _kind_scalar_type(dtype: np.dtype[Any]) -> type:
    if dtype == np.bool_:
        return bool
    return int if dtype.kind in "iu" else float


def convert_element_type(x: Any, dtype: Any, weak_type: bool = False) -> Any:
    """``x`` as ``dtype`` (with the given weak flag); a no-op when it already is.

    Host values (Python and NumPy scalars, NumPy arrays) are converted on the
    host; arrays and tracers bind ``convert_element_type``.
    """
    dtype = dtypes.canonicalize_dtype(dtype)
    if type(x) in _PYTHON_SCALARS:
        return _python_scalar_to(x, dtype, weak_type)
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype == dtype and not weak_type:
            # Not a copy: a traced function that closes over `x` captures this
            # very object, which is what identifies the constant (cond shares
            # it between its branches).
            return x
        host = np.asarray(x)
        if host.dtype.kind == "c" and dtype.kind != "c":  # the real part, as the primitive converts
            host = host.real
        value = host.astype(dtype)
        if weak_type:
            return device_put_value(value, weak_type=True)
        return value if isinstance(x, np.ndarray) else value[()]
    aval = core.get_aval(x)
    if aval.dtype == dtype and aval.weak_type == weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=dtype, weak_type=weak_type, sharding=None)


# narrow: JAX 0.10.2 maps int4/uint4 to float32 and leaves int1/int2/uint1/uint2
# as they are (its table lists only the former), so jnp.divide of int2 values
# divides as integers. Kept, so results have JAX's dtype.
_NARROW_TO_INEXACT = {np.dtype(dtypes.int4): np.dtype(np.float32), np.dtype(dtypes.uint4): np.dtype(np.float32)}
_NARROW_KEPT = frozenset(np.dtype(d) for d in (dtypes.int1, dtypes.int2, dtypes.uint1, dtypes.uint2))


def to_inexact_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """Integers and bool compute in the default float; floats stay themselves."""
    if dtype in _NARROW_TO_INEXACT:
        return _NARROW_TO_INEXACT[dtype]
    if dtype in _NARROW_KEPT:
        return dtype
    return dtype if dtypes.issubdtype(dtype, np.inexact) else dtypes.default_float_dtype()


def to_numeric_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """bool becomes the default int (NumPy's arithmetic on bool would be logic)."""
    return dtypes.default_int_dtype() if dtype == np.bool_ else dtype


def promote_dtypes(*args: Any) -> list[Any]:
    """Convert every argument to the dtype they promote to together."""
    if len(args) < 2:
        return list(args)
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    return [convert_element_type(x, dtype, weak) for x in args]


@overload
def promote_dtypes_inexact(*args: Array) -> list[Array]: ...
@overload
def promote_dtypes_inexact(*args: ArrayLike) -> list[InexactOperand]: ...
def promote_dtypes_inexact(*args: ArrayLike) -> list[Any]:
    """Like ``promote_dtypes``, then integers and bool become the default float."""
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    dtype = to_inexact_dtype(dtype)
    return [convert_element_type(x, dtype, weak) for x in args]


def promote_dtypes_numeric(*args: Any) -> list[Any]:
    """Like ``promote_dtypes``, then bool becomes the default int."""
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    dtype = to_numeric_dtype(dtype)
    return [convert_element_type(x, dtype, weak) for x in args]


def check_no_float0(fun_name: str, *args: Any) -> None:
    for x in args:
        if getattr(x, "dtype", None) == dtypes.float0:
            raise TypeError(
                f"Called {fun_name} with a float0 array. float0s do not support any operations by "
                "design because they are not compatible with non-trivial vector spaces. No implicit "
                "dtype conversion is done. You can use np.zeros_like(arr, dtype=np.float) to cast a "
                "float0 array to a regular zeros array. If you didn't expect to get a float0 you "
                "might have accidentally taken a gradient with respect to an integer argument."
            )


# ---------------------------------------------------------------------------
# Shapes


def broadcast_shapes(fun_name: str, *shapes: Sequence[int]) -> tuple[int, ...]:
    """NumPy's broadcast of several shapes, or JAX's ValueError."""
    rank = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    result = []
    for dims in zip(*padded):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise ValueError(
                f"{fun_name}: incompatible shapes for broadcasting: "
                + ", ".join(str(tuple(s)) for s in shapes)
            )
        result.append(sizes.pop() if sizes else (0 if 0 in dims else 1))
    return tuple(result)


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """Prepend unit dimensions (one ``broadcast_in_dim``) until ``x`` has ``rank``."""
    s = shape(x)
    extra = rank - len(s)
    if extra <= 0:
        return x
    return lax.broadcast_in_dim(x, (1,) * extra + s, tuple(range(extra, rank)))


def broadcast_to(x: Any, target: Sequence[int]) -> Any:
    """``x`` broadcast to exactly ``target`` (used by where, full, ...)."""
    target = tuple(target)
    s = shape(x)
    if s == target:
        return x
    extra = len(target) - len(s)
    if extra < 0 or any(d != 1 and d != t for d, t in zip(s, target[extra:])):
        raise ValueError(f"Incompatible shapes for broadcasting: {s} and requested shape {target}")
    # Size-1 dimensions that grow must not be listed as kept dimensions
    # with a different size; broadcast_in_dim allows 1 -> n, so keep them all.
    return lax.broadcast_in_dim(x, target, tuple(range(extra, len(target))))


def promote_shapes(fun_name: str, *args: Any) -> list[Any]:
    """NumPy rank promotion: lower-rank (non-scalar) operands get leading unit dims."""
    if len(args) < 2:
        return list(args)
    shapes = [shape(x) for x in args]
    nonscalar_ranks = {len(s) for s in shapes if s}
    if len(nonscalar_ranks) < 2:
        return list(args)  # equal ranks, or scalars: lax broadcasts (or rejects) those itself
    # Ranks differ: NumPy's rule decides here, with JAX's ValueError.
    _check_broadcastable(shapes)
    mode = numpy_rank_promotion.value
    if mode != "allow":
        _rank_promotion_problem(fun_name, shapes, mode)
    rank = max(nonscalar_ranks)
    return [x if not s else broadcast_to_rank(x, rank) for x, s in zip(args, shapes)]


def _check_broadcastable(shapes: list[tuple[int, ...]]) -> None:
    """JAX's ValueError when NumPy broadcasting cannot combine the shapes."""
    rank = max(len(s) for s in shapes)
    for dims in zip(*[(1,) * (rank - len(s)) + tuple(s) for s in shapes]):
        if len({d for d in dims if d != 1}) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}")


def _rank_promotion_problem(fun_name: str, shapes: list[tuple[int, ...]], mode: str) -> None:
    shown = " ".join(str(s) for s in shapes)
    link = "https://docs.jax.dev/en/latest/rank_promotion_warning.html"
    if mode == "raise":
        raise ValueError(
            f"Operands could not be broadcast together for {fun_name} on shapes {shown} and with "
            f"the config option jax_numpy_rank_promotion='raise'. For more information, see {link}."
        )
    warnings.warn(
        f"Following NumPy automatic rank promotion for {fun_name} on shapes {shown}. Set the "
        "jax_numpy_rank_promotion config option to 'allow' to disable this warning; for more "
        f"information, see {link}.",
        stacklevel=4,
    )


# The dtypes that need no promotion in the fast paths below (float0 and any
# future extended dtype take the general path).
_PLAIN_DTYPES = frozenset(np.dtype(d) for d in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, dtypes.bfloat16, np.float32, np.float64,
))
_INEXACT_DTYPES = frozenset(np.dtype(d) for d in (np.float16, dtypes.bfloat16, np.float32, np.float64))
INEXACT_DTYPES = _INEXACT_DTYPES  # the float dtypes promote_args_inexact leaves alone
_NUMERIC_DTYPES = _PLAIN_DTYPES - {np.dtype(np.bool_)}


def _already_promoted(args: tuple[Any, ...], allowed: frozenset[np.dtype[Any]]) -> bool:
    """True when every operand is an array or tracer with one aval whose dtype is allowed.

    Then the general prologue would return the operands unchanged; checking
    this first is the eager and tracing hot path (``x + y`` on equal arrays).
    """
    first = None
    for x in args:
        if type(x) is not Array and not isinstance(x, core.Tracer):
            return False
        aval = x.aval
        if first is None:
            if aval.dtype not in allowed:
                return False
            first = aval
        elif aval is not first and (aval.fast_key is None or aval.fast_key != first.fast_key) and aval != first:
            return False  # (equal fast keys name equal avals: dispatch.aval_key)
    return first is not None


def promote_args(fun_name: str, *args: Any) -> list[Any]:
    """check_arraylike + promote_dtypes + promote_shapes: the usual ufunc prologue."""
    if _already_promoted(args, _PLAIN_DTYPES):
        return list(args)
    check_arraylike(fun_name, *args)
    check_no_float0(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes(*args))


# Arrays (and tracers) in, Arrays out; host constants may stay host constants (InexactOperand).
@overload
def promote_args_inexact(fun_name: str, *args: Array) -> list[Array]: ...
@overload
def promote_args_inexact(fun_name: str, *args: ArrayLike) -> list[InexactOperand]: ...
def promote_args_inexact(fun_name: str, *args: ArrayLike) -> list[Any]:
    if _already_promoted(args, _INEXACT_DTYPES):
        return list(args)
    check_arraylike(fun_name, *args)
    check_no_float0(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_inexact(*args))


def promote_args_numeric(fun_name: str, *args: Any) -> list[Any]:
    if _already_promoted(args, _NUMERIC_DTYPES):
        return list(args)
    check_arraylike(fun_name, *args)
    check_no_float0(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_numeric(*args))


# ---------------------------------------------------------------------------
# Axes


def canonicalize_axis(axis: Any, num_dims: int) -> int:
    """An axis in ``[-ndim, ndim)`` as a non-negative int, or JAX's ValueError."""
    i: int = operator.index(axis)
    if not -num_dims <= i < num_dims:
        raise ValueError(f"axis {i} is out of bounds for array of dimension {num_dims}")
    return i % num_dims if num_dims else i


def canonicalize_axes(axis: Any, num_dims: int) -> tuple[int, ...]:
    """``axis=None | int | sequence`` as a tuple of distinct non-negative axes."""
    if axis is None:
        return tuple(range(num_dims))
    if isinstance(axis, (tuple, list)):
        axes = tuple(canonicalize_axis(a, num_dims) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"duplicate value in 'axis': {tuple(axis)}")
        return axes
    return (canonicalize_axis(core.concrete_or_error(axis, "The axis argument must be static."), num_dims),)


# ---------------------------------------------------------------------------
# where: selection with NumPy broadcasting (used throughout jnp)


def _where(condition: Any, x: Any, y: Any) -> Any:
    x, y = promote_dtypes(x, y)
    if type(condition) in _PYTHON_SCALARS:
        condition = np.bool_(condition)
    if dtypes.dtype(condition) != np.bool_:
        condition = lax.ne(condition, convert_element_type(0, dtypes.dtype(condition)))
    target = broadcast_shapes("where", shape(condition), shape(x), shape(y))
    if shape(condition):
        condition = broadcast_to(condition, target)
    # A scalar predicate selects whole operands: select_n takes it as it is.
    x, y = (_as_operand(broadcast_to(v, target)) for v in (x, y))
    return lax.select_n(_as_operand(condition), y, x)


def _as_operand(x: Any) -> Any:
    # select_n reads its operands' dtypes; host scalars become arrays first.
    if type(x) in _PYTHON_SCALARS or isinstance(x, np.generic):
        return device_put_value(x, weak_type=dtypes.is_weakly_typed(x))
    return x


# JAX stages its where as a jit named ``_where``; so do we, so jaxprs show the same call.
where_jit = jit(_where)
