"""``jnp`` matrix helpers: einsum, diagonals and triangles, kron, meshgrid, roll, convolve ...

As everywhere in ``minijax.numpy``, each function makes the ``lax`` calls JAX
makes, in the same order and staged under the same ``jit`` names, so that
``make_jaxpr`` prints what JAX prints. Two places differ, both documented:

* ``convolve``/``correlate``: JAX calls ``lax.conv_general_dilated``, which
  minijax does not have. Here the sliding windows of the padded signal are
  laid out as a matrix with one broadcast, two reshapes, a pad and a slice,
  and contracted with the kernel by one ``dot_general``: a fixed handful of
  linear primitives, so jvp, transpose and vmap come for free.
* ``diagonal`` of a square matrix: JAX adds a ``platform_dependent`` branch for
  TPU kernels; minijax always takes the (gather) branch JAX runs on CPU/GPU.

``einsum`` chooses its contraction order with opt_einsum (as JAX does) and
performs each pairwise contraction as one ``dot_general`` (plus a transpose
when the result's axes come out in another order).

Sections: einsum; products (kron, cross, vander, polyval); diagonals and
traces; triangles; index helpers; grids and shifts; 1-D convolution.
"""

from __future__ import annotations

import collections
import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import core, dtypes, lax
from minijax.array import Array as ConcreteArray
from minijax.caching import BoundedCache
from minijax.config import executable_cache_size
from minijax.mesh import NamedSharding, PartitionSpec as P
from minijax.numpy import util
from minijax.numpy.creation import arange, array, eye, ones, zeros, zeros_like
from minijax.numpy.reductions import sum as _jnp_sum
from minijax.numpy.shape_ops import expand_dims, flip, moveaxis, ravel, reshape
from minijax.numpy.sorting import nonzero
from minijax.numpy.tensor_contractions import matmul, vdot
from minijax.numpy.ufuncs import power, remainder, subtract
from minijax.numpy.ufuncs_math import conjugate
from minijax.numpy.util import (
    canonicalize_axis,
    check_arraylike,
    convert_element_type,
    promote_dtypes,
    promote_dtypes_inexact,
    where_jit,
)
from minijax.sharding_rules import out_sharding_param, place_result
from minijax.stages import jit
from minijax.vectorization import vmap

__all__ = [
    "convolve", "correlate", "cross", "diag", "diag_indices", "diag_indices_from", "diagflat", "diagonal",
    "einsum", "einsum_path", "kron", "matrix_transpose", "matvec", "meshgrid", "polyval", "roll", "trace", "tri",
    "tril", "tril_indices", "tril_indices_from", "triu", "triu_indices", "triu_indices_from", "vander", "vecdot",
    "vecmat",
]  # fmt: skip

ArrayLike = Any
Array = Any
Fn = Callable[..., Any]


def _staged(name: str, **jit_kwargs: Any) -> Callable[[Fn], Fn]:
    """Decorator: ``jit`` under ``name``, as JAX stages these functions."""

    def wrap(fun: Fn) -> Fn:
        fun.__name__ = fun.__qualname__ = name
        staged: Fn = jit(fun, **jit_kwargs)
        return staged

    return wrap


def _ensure_array(fun_name: str, x: ArrayLike) -> Any:
    check_arraylike(fun_name, x)
    return array(x, copy=False)


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _ndim(x: Any) -> int:
    return len(_shape(x))


def _static_int(x: Any, what: str) -> int:
    return operator.index(core.concrete_or_error(x, f"The {what} must be a static integer."))


# ---------------------------------------------------------------------------
# einsum


@functools.cache
def _opt_einsum() -> Any:
    """The opt_einsum module, imported at the first contraction planned rather than with
    ``minijax.numpy`` (it is ~4% of ``import minijax``, and most programs never call einsum)."""
    import opt_einsum

    return opt_einsum


@functools.cache
def _unoptimized() -> Any:
    """opt_einsum's path optimizer for ``optimize=False``: contract the operands left to right, as written."""

    class Unoptimized(_opt_einsum().paths.PathOptimizer):  # type: ignore[misc]
        def __call__(self, inputs: Sequence[Any], *args: Any, **kwargs: Any) -> list[tuple[int, int]]:
            return [(0, 1)] * (len(inputs) - 1)

    return Unoptimized()


def _path_type(optimize: Any) -> Any:
    """opt_einsum's ``optimize`` argument for JAX's: True is 'optimal', False keeps the written order."""
    if optimize is True:
        return "optimal"
    if optimize is False:
        return _unoptimized()
    return optimize


Contraction = tuple[tuple[int, ...], frozenset[str], str]


def einsum(
    subscripts: Any,
    /,
    *operands: Any,
    out: None = None,
    optimize: Any = "auto",
    precision: Any = None,
    preferred_element_type: Any = None,
    _dot_general: Fn = lax.dot_general,
    out_sharding: Any = None,
) -> Array:
    """Einstein summation: ``einsum('ij,jk->ik', a, b)`` or the interleaved ``einsum(a, [0, 1], b, [1, 2], [0, 2])``.

    ``optimize`` chooses the pairwise contraction order: ``"auto"`` (default),
    ``True``/``"optimal"``, ``"greedy"`` or any opt_einsum strategy, ``False``
    (left to right), or an explicit path (from ``einsum_path``). Products
    accumulate in ``preferred_element_type`` (default: the promoted dtype).
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    sharding = out_sharding_param(out_sharding, "einsum")
    all_args = tuple(
        arg.__jax_array__() if hasattr(arg, "__jax_array__") else arg for arg in (subscripts, *operands)
    )
    eager = sharding is None and _all_concrete(all_args[1:]) and core.trace_state.trace is core.eval_trace
    plan_key = _plan_key(all_args, optimize, precision, preferred_element_type, _dot_general) if eager else None
    plan = None if plan_key is None else _einsum_plans.get(plan_key)
    if plan is not None:  # (an optimisation of the two steps below, for a plan seen before)
        return plan(*all_args[1:])
    # opt_einsum parses both calling conventions and plans the contraction
    # order from the shapes alone (einsum_call=True hands back the operands).
    contract_operands, planned = _opt_einsum().contract_path(
        *all_args, einsum_call=True, use_blas=True, optimize=_path_type(optimize)
    )
    contractions: tuple[Contraction, ...] = tuple((tuple(c[0]), frozenset(c[1]), c[2]) for c in planned)
    check_arraylike("einsum", *contract_operands)
    if plan_key is not None:
        # Eager einsum on Arrays runs as one compiled program of the whole contraction, with
        # the plan fixed, as JAX stages it (a jit of ``_einsum`` with the plan static).
        plan = _einsum_program(contractions, precision, preferred_element_type, _dot_general)
        _einsum_plans.put(plan_key, plan)
        return plan(*contract_operands)
    arrays = [array(op, copy=False) for op in contract_operands]
    if sharding is not None and (len(contractions) != 1 or len(contractions[0][0]) != 2):
        # JAX computes these under auto_axes and lays the result out afterwards.
        raise NotImplementedError(
            "jnp.einsum: out_sharding is supported for one contraction of two operands in minijax (issue 17)."
        )
    out = _einsum(arrays, contractions, precision, preferred_element_type, _dot_general, sharding)
    return place_result(out, out_sharding, "einsum")


# (subscripts, optimize, options, operand types) -> the jitted contraction for them
# (``_einsum_program``): the eager fast path of ``einsum``, which otherwise plans the contraction
# again at every call. Bounded like the executables each plan compiles, and emptied by
# ``jax.clear_caches``.
_einsum_plans: BoundedCache[tuple[Any, ...], Callable[..., Array]] = BoundedCache("einsum plans", executable_cache_size)


def _all_concrete(operands: Sequence[Any]) -> bool:
    return bool(operands) and all(type(op) is ConcreteArray for op in operands)


def _plan_key(all_args: Sequence[Any], optimize: Any, *options: Any) -> tuple[Any, ...] | None:
    """The key of einsum's eager plans for these arguments (subscripts first) and ``options``
    (the other arguments the program depends on), or None when they name no reusable plan
    (interleaved subscripts, an explicit path, an option that is not hashable)."""
    subscripts = all_args[0]
    if type(subscripts) is not str or not (optimize is None or type(optimize) in (str, bool)):
        return None
    key = (subscripts, optimize, *options, *(type(o) for o in options), *(op.aval for op in all_args[1:]))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _einsum_program(contractions: tuple[Contraction, ...], precision: Any, preferred_element_type: Any,
                    _dot_general: Fn) -> Callable[..., Array]:
    def contract(*operands: Any) -> Array:
        return _einsum(list(operands), contractions, precision, preferred_element_type, _dot_general)

    contract.__name__ = contract.__qualname__ = "_einsum"
    program: Callable[..., Array] = jit(contract)
    return program


def einsum_path(subscripts: Any, /, *operands: Any, optimize: Any = "auto") -> tuple[list[tuple[int, ...]], Any]:
    """The contraction path ``einsum`` would take (for its ``optimize=``), and opt_einsum's report."""
    result: tuple[list[tuple[int, ...]], Any] = _opt_einsum().contract_path(
        subscripts, *operands, optimize=_path_type(optimize)
    )
    return result


def _remove_chars(s: str, chars: str) -> str:
    return s.translate(str.maketrans(dict.fromkeys(chars)))


class _Einsum:
    """One einsum evaluation: the accumulation dtype and the steps every contraction shares."""

    def __init__(self, operands: list[Any], preferred_element_type: Any) -> None:
        if preferred_element_type is None:
            self.dtype, self.weak = dtypes.result_type(*operands, return_weak_type_flag=True)
        else:
            self.dtype, self.weak = dtypes.check_user_dtype_supported(preferred_element_type, "einsum"), False

    def sum(self, x: Any, axes: Sequence[int]) -> Any:
        """Sum over ``axes`` in the accumulation dtype (bool sums are ``or``)."""
        if dtypes.result_type(x, self.dtype) != dtypes.dtype(x):
            x = convert_element_type(x, self.dtype)
        dt = dtypes.dtype(x)
        return lax.reduce(x, np.array(0, dt), lax.bitwise_or if dt == np.bool_ else lax.add, tuple(axes))

    def sum_uniques(self, operand: Any, names: str, uniques: Sequence[str]) -> tuple[Any, str]:
        """Sum away the axes named only here and absent from the result."""
        if uniques:
            operand = self.sum(operand, [names.index(name) for name in uniques])
            names = _remove_chars(names, "".join(uniques))
        return operand, names

    def sum_repeats(self, operand: Any, names: str, counts: collections.Counter[str], keep_names: str) -> tuple[Any, str]:
        """Take the diagonal over repeated names (``ii``): mask off-diagonal entries, then sum."""
        for name, count in counts.items():
            if count > 1:
                axes = [i for i, n in enumerate(names) if n == name]
                eye = _delta(_shape(operand), axes)
                operand = lax.select(eye, operand, lax.full_like(operand, 0))
                if name not in keep_names:
                    operand = self.sum(operand, axes)
                    names = names.replace(name, "")
                else:
                    operand = self.sum(operand, axes[:-1])
                    names = names.replace(name, "", count - 1)
        return operand, names


def _delta(shape: tuple[int, ...], axes: Sequence[int]) -> Any:
    """A boolean Kronecker delta over ``axes`` (true where all those indices agree), broadcast to ``shape``."""
    base_shape = tuple(shape[a] for a in axes)
    iotas = [lax.broadcasted_iota(np.uint32, base_shape, i) for i in range(len(base_shape))]
    eyes = [lax.eq(i1, i2) for i1, i2 in zip(iotas[:-1], iotas[1:])]
    result = eyes[0]
    for e in eyes[1:]:
        result = lax.bitwise_and(result, e)
    return lax.broadcast_in_dim(result, shape, tuple(axes))


def _filter_singleton_dims(operand: Any, names: str, other_shape: tuple[int, ...], other_names: str) -> tuple[Any, str]:
    """Squeeze size-1 axes that would broadcast against a larger axis of the other operand."""
    keep = [operand_dim != 1 or j == -1 or other_shape[j] == 1 for operand_dim, j in zip(_shape(operand), map(other_names.find, names))]
    squeezed = [i for i, k in enumerate(keep) if not k]
    kept_names = "".join(n for n, k in zip(names, keep) if k)
    return (lax.squeeze(operand, tuple(squeezed)) if squeezed else operand), kept_names


def _einsum(operands: list[Any], contractions: Sequence[Contraction], precision: Any, preferred_element_type: Any,
            _dot_general: Fn, out_sharding: Any = None) -> Array:
    ev = _Einsum(operands, preferred_element_type)
    for operand_indices, contracted_names_set, einstr in contractions:
        contracted_names = sorted(contracted_names_set)
        input_str, result_names = einstr.split("->")
        input_names = input_str.split(",")
        if len(operand_indices) == 1:
            operand = operands.pop(operand_indices[0])
            (names,) = input_names
            counts = collections.Counter(names)
            uniques = [name for name in contracted_names if counts[name] == 1]
            operand, names = ev.sum_uniques(operand, names, uniques)
            operand, names = ev.sum_repeats(operand, names, counts, result_names)
        elif len(operand_indices) == 2:
            operand, names = _contract_pair(ev, operands, operand_indices, input_names, result_names, contracted_names,
                                            precision, _dot_general, out_sharding)
        else:
            raise NotImplementedError(
                "jax.numpy.einsum does not support simultaneous contraction of 3 or more operands. Typically this "
                "means you've passed an unsupported path to the einsum optimize parameter."
            )
        if names != result_names:
            operand = lax.transpose(operand, tuple(names.index(name) for name in result_names))
        operands.append(operand)
    return convert_element_type(operands[0], ev.dtype, ev.weak)


def _contract_pair(ev: _Einsum, operands: list[Any], operand_indices: tuple[int, ...], input_names: list[str],
                   result_names: str, contracted: list[str], precision: Any, _dot_general: Fn,
                   out_sharding: Any = None) -> tuple[Any, str]:
    """One ``dot_general`` of two operands, after summing axes only one of them has."""
    lhs, rhs = (operands.pop(i) for i in operand_indices)
    lhs_names, rhs_names = input_names
    lhs, lhs_names = _filter_singleton_dims(lhs, lhs_names, _shape(rhs), rhs_names)
    rhs, rhs_names = _filter_singleton_dims(rhs, rhs_names, _shape(lhs), lhs_names)
    lhs_counts, rhs_counts = collections.Counter(lhs_names), collections.Counter(rhs_names)
    lhs_uniques = [n for n in contracted if lhs_counts[n] == 1 and rhs_counts[n] == 0]
    lhs, lhs_names = ev.sum_uniques(lhs, lhs_names, lhs_uniques)
    rhs_uniques = [n for n in contracted if rhs_counts[n] == 1 and lhs_counts[n] == 0]
    rhs, rhs_names = ev.sum_uniques(rhs, rhs_names, rhs_uniques)
    lhs, lhs_names = ev.sum_repeats(lhs, lhs_names, lhs_counts, result_names + rhs_names)
    rhs, rhs_names = ev.sum_repeats(rhs, rhs_names, rhs_counts, result_names + lhs_names)

    contracted = [n for n in contracted if n in set(lhs_names) | set(rhs_names)]
    both = set(lhs_names) & set(rhs_names)
    batch_names = "".join(n for n in result_names if n in both)
    lhs_batch = tuple(lhs_names.find(n) for n in batch_names)
    rhs_batch = tuple(rhs_names.find(n) for n in batch_names)
    for n in contracted:
        if n not in lhs_names or n not in rhs_names or _shape(lhs)[lhs_names.index(n)] != _shape(rhs)[rhs_names.index(n)]:
            raise ValueError(
                f"Incompatible reduction dimensions: lhs.shape={_shape(lhs)} lhs_names={lhs_names} "
                f"rhs.shape={_shape(rhs)} rhs_names={rhs_names}"
            )
    lhs_cont = tuple(lhs_names.index(n) for n in contracted)
    rhs_cont = tuple(rhs_names.index(n) for n in contracted)
    deleted = batch_names + "".join(contracted)
    rest_lhs, rest_rhs = _remove_chars(lhs_names, deleted), _remove_chars(rhs_names, deleted)
    # dot_general's result is (batch, lhs free, rhs free): swap the operands
    # when that order is the wanted one, saving the transpose.
    names = batch_names + rest_rhs + rest_lhs
    swap = names == result_names
    if not swap:
        names = batch_names + rest_lhs + rest_rhs
    given: dict[str, Any] = {}
    if out_sharding is not None:  # the result's spec, in the product's own order (transposed after)
        spec = tuple(out_sharding.spec) + (None,) * (len(result_names) - len(out_sharding.spec))
        given["out_sharding"] = NamedSharding(out_sharding.mesh, P(*(spec[result_names.index(n)] for n in names)))
    if swap:
        out = _dot_general(rhs, lhs, ((rhs_cont, lhs_cont), (rhs_batch, lhs_batch)), precision,
                           preferred_element_type=ev.dtype, **given)
    else:
        out = _dot_general(lhs, rhs, ((lhs_cont, rhs_cont), (lhs_batch, rhs_batch)), precision,
                           preferred_element_type=ev.dtype, **given)
    return out, names


# ---------------------------------------------------------------------------
# Products: kron, cross, vander, polyval, vecdot/matvec/vecmat


@_staged("kron")
def kron(a: ArrayLike, b: ArrayLike) -> Array:
    """The Kronecker product: blocks ``a[i, j] * b``, as a ``(m*p, n*q)`` array for 2-D inputs."""
    check_arraylike("kron", a, b)
    a, b = promote_dtypes(a, b)
    if _ndim(a) < _ndim(b):
        a = expand_dims(a, tuple(range(_ndim(b) - _ndim(a))))
    elif _ndim(b) < _ndim(a):
        b = expand_dims(b, tuple(range(_ndim(a) - _ndim(b))))
    a_reshaped = expand_dims(a, tuple(range(1, 2 * _ndim(a), 2)))
    b_reshaped = expand_dims(b, tuple(range(0, 2 * _ndim(b), 2)))
    out_shape = tuple(int(d) for d in np.multiply(_shape(a), _shape(b)))
    return reshape(lax.mul(a_reshaped, b_reshaped), out_shape)


@_staged("cross", static_argnames=("axisa", "axisb", "axisc", "axis"))
def cross(a: ArrayLike, b: ArrayLike, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None) -> Array:
    """The cross product of 2- or 3-vectors along the given axes (2-vectors give the scalar z part)."""
    check_arraylike("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(a, axisa, -1)
    b = moveaxis(b, axisb, -1)
    if _shape(a)[-1] not in (2, 3) or _shape(b)[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if _shape(a)[-1] == 2 and _shape(b)[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    a2 = a[..., 2] if _shape(a)[-1] == 3 else zeros_like(a0)
    b0, b1 = b[..., 0], b[..., 1]
    b2 = b[..., 2] if _shape(b)[-1] == 3 else zeros_like(b0)
    c = array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])
    return moveaxis(c, 0, axisc)


@_staged("vander", static_argnames=("N", "increasing"))
def vander(x: ArrayLike, N: int | None = None, increasing: bool = False) -> Array:  # noqa: N803  (NumPy's name)
    """The Vandermonde matrix: columns ``x**(N-1), ..., x**0`` (reversed if ``increasing``)."""
    x = _ensure_array("vander", x)
    if _ndim(x) != 1:
        raise ValueError("x must be a one-dimensional array")
    n = _shape(x)[0] if N is None else _static_int(N, "'N' argument of jnp.vander()")
    if n < 0:
        raise ValueError("N must be nonnegative")
    powers = lax.iota(dtypes.dtype(x), n)
    if not increasing:
        powers = lax.sub(np.array(n - 1, dtypes.dtype(x))[()], powers)
    return power(x[..., None], expand_dims(powers, tuple(range(_ndim(x)))))


@_staged("polyval", static_argnames=("unroll",))
def polyval(p: ArrayLike, x: ArrayLike, *, unroll: int = 16) -> Array:
    """The polynomial with coefficients ``p`` (highest power first) at ``x``, by Horner's rule in a scan."""
    check_arraylike("polyval", p, x)
    p_arr, x_arr = promote_dtypes(array(p, copy=False), array(x, copy=False))
    shape = util.broadcast_shapes("polyval", _shape(p_arr)[1:], _shape(x_arr))
    y = lax.full_like(x_arr, 0, shape=shape, dtype=dtypes.dtype(x_arr))
    y, _ = lax.scan(lambda y, c: (y * x_arr + c, None), y, p_arr, unroll=unroll)
    return y


def _vectorized(fun: Fn, core_ndims: Sequence[int], name: str) -> Fn:
    """``jnp.vectorize(fun, signature=...)`` for a fixed number of core axes per input.

    The non-core (loop) axes broadcast: size-1 ones are squeezed, every
    other loop axis becomes one ``vmap`` (innermost first), and loop axes
    that no input really has are expanded back at the end, as JAX does.
    """

    def wrapped(*args: Any) -> Any:
        loop_shapes = [_shape(a)[: _ndim(a) - n] for a, n in zip(args, core_ndims)]
        broadcast_shape = util.broadcast_shapes(name, *loop_shapes)
        squeezed = []
        rev_filled: list[tuple[int, ...]] = []
        for arg, loop_shape in zip(args, loop_shapes):
            rev_filled.append(((1,) * (len(broadcast_shape) - len(loop_shape)) + loop_shape)[::-1])
            ones_at = tuple(i for i, size in enumerate(loop_shape) if size == 1)
            squeezed.append(lax.squeeze(arg, ones_at) if ones_at else arg)
        vectorized = fun
        dims_to_expand = []
        for negdim, axis_sizes in enumerate(zip(*rev_filled)):
            in_axes = tuple(None if size == 1 else 0 for size in axis_sizes)
            if all(axis is None for axis in in_axes):
                dims_to_expand.append(len(broadcast_shape) - 1 - negdim)
            else:
                vectorized = vmap(vectorized, in_axes)
        result = vectorized(*squeezed)
        return expand_dims(result, tuple(dims_to_expand)) if dims_to_expand else result

    return wrapped


def _check_core_sizes(name: str, a: Any, b: Any, a_axis: int, b_axis: int) -> None:
    if _shape(a)[a_axis] != _shape(b)[b_axis]:
        raise ValueError(f"{name}: inconsistent core dimension sizes, got shapes {_shape(a)} and {_shape(b)}.")


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Array:
    """Dot products of the vectors along ``axis``, broadcasting the other axes."""
    check_arraylike("jnp.vecdot", x1, x2)
    x1_arr, x2_arr = array(x1, copy=False), array(x2, copy=False)
    if _shape(x1_arr)[axis] != _shape(x2_arr)[axis]:
        raise ValueError(f"axes must match; got shapes {_shape(x1_arr)} and {_shape(x2_arr)} with {axis=}")
    x1_arr, x2_arr = moveaxis(x1_arr, axis, -1), moveaxis(x2_arr, axis, -1)

    def one(a: Any, b: Any) -> Any:
        return vdot(a, b, precision=precision, preferred_element_type=preferred_element_type)

    return _vectorized(one, (1, 1), "vecdot")(x1_arr, x2_arr)


@_staged("matvec")
def matvec(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Matrix-vector products over the last axes, broadcasting the leading ones."""
    check_arraylike("matvec", x1, x2)
    a, b = array(x1, copy=False), array(x2, copy=False)
    _check_core_sizes("matvec", a, b, -1, -1)
    return _vectorized(matmul, (2, 1), "matvec")(a, b)


@_staged("vecmat")
def vecmat(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Vector-matrix products over the last axes (conjugating the vector), broadcasting the leading ones."""
    check_arraylike("matvec", x1, x2)
    a, b = array(x1, copy=False), array(x2, copy=False)
    _check_core_sizes("vecmat", a, b, -1, -2)
    return _vectorized(matmul, (1, 2), "vecmat")(conjugate(a), b)


def matrix_transpose(x: ArrayLike, /) -> Array:
    """Swap the last two axes."""
    x_arr = _ensure_array("matrix_transpose", x)
    nd = _ndim(x_arr)
    if nd < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got {nd=}")
    return lax.transpose(x_arr, (*range(nd - 2), nd - 1, nd - 2))


# ---------------------------------------------------------------------------
# Diagonals and traces


@_staged("trace", static_argnames=("axis1", "axis2", "dtype"))
def trace(a: ArrayLike, offset: int | ArrayLike = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: None = None) -> Array:
    """The sum along the ``offset`` diagonal of the ``axis1``/``axis2`` planes."""
    a = _ensure_array("trace", a)
    util.check_no_out("trace", out)
    nd = _ndim(a)
    if canonicalize_axis(axis1, nd) == canonicalize_axis(axis2, nd):
        raise ValueError(f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}")
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "trace")
    a_shape = _shape(a)
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    mask = eye(a_shape[axis1], a_shape[axis2], k=offset, dtype=bool)
    a = where_jit(mask, a, zeros_like(a))
    return _jnp_sum(a, axis=(-2, -1), dtype=dtype)


@_staged("diagonal", static_argnames=("offset", "axis1", "axis2"))
def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """The ``offset`` diagonal of the ``axis1``/``axis2`` planes, as a new last axis."""
    a = _ensure_array("diagonal", a)
    if _ndim(a) < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    offset = _static_int(offset, "'offset' argument of jnp.diagonal()")
    a_shape = _shape(a)
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    diag_size = max(0, min(a_shape[axis1] + min(offset, 0), a_shape[axis2] - max(offset, 0)))
    i = arange(diag_size)
    # arange(0, n) is a bare iota in JAX; arange(n) gives exactly that here.
    j = arange(abs(offset), abs(offset) + diag_size) if offset else arange(diag_size)
    return a[..., i, j] if offset >= 0 else a[..., j, i]


@_staged("_diag", static_argnames=("k",))
def _diag(v: Any, k: int) -> Array:
    v_shape = _shape(v)
    if len(v_shape) == 1:
        zero = lax.full_like(v, shape=(), fill_value=0)
        n = v_shape[0] + abs(k)
        v = lax.pad(v, zero, ((max(0, -k), max(0, k), 0),))
        return where_jit(eye(n, k=k, dtype=bool), v[:, None], zero)
    if len(v_shape) == 2:
        return diagonal(v, offset=k)
    raise ValueError("diag input must be 1d or 2d")


def diag(v: ArrayLike, k: int = 0) -> Array:
    """A 1-D ``v``: the square matrix with ``v`` on diagonal ``k``; a 2-D ``v``: its diagonal ``k``."""
    return _diag(_ensure_array("diag", v), operator.index(k))


def diagflat(v: ArrayLike, k: int = 0) -> Array:
    """The square matrix with the flattened ``v`` on diagonal ``k``."""
    check_arraylike("diagflat", v)
    v_ravel = ravel(v)
    v_length = _shape(v_ravel)[0]
    adj_length = v_length + abs(k)
    res = zeros(adj_length * adj_length, dtype=dtypes.dtype(v_ravel))
    i = arange(adj_length - abs(k))
    fi = i + k + i * adj_length if k >= 0 else i + (i - k) * adj_length
    res = res.at[fi].set(v_ravel)
    return res.reshape(adj_length, adj_length)


# ---------------------------------------------------------------------------
# Triangles


def _tri_mask(shape: tuple[int, int], k: int) -> Any:
    """Boolean ``row + k >= col`` (the lower triangle up to diagonal ``k``)."""
    index_dtype = np.dtype(np.int64) if max(shape, default=0) > np.iinfo(np.int32).max else np.dtype(np.int32)
    if not np.iinfo(index_dtype).min <= k <= np.iinfo(index_dtype).max:
        index_dtype = np.dtype(np.int64)
    rows = lax.add(lax.broadcasted_iota(index_dtype, shape, 0), np.array(k, index_dtype)[()])
    return lax.ge(rows, lax.broadcasted_iota(index_dtype, shape, 1))


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Array:  # noqa: N803  (NumPy's names)
    """Ones on and below diagonal ``k`` of an ``N x M`` array (float32 by default, as in JAX)."""
    out_dtype = np.dtype(np.float32) if dtype is None else dtypes.check_user_dtype_supported(dtype, "tri")
    n = _static_int(N, "N argument of jnp.tri")
    m = n if M is None else _static_int(M, "M argument of jnp.tri")
    k = _static_int(k, "k argument of jnp.tri")
    return convert_element_type(_tri_mask((n, m), k), out_dtype)


def _triangle(name: str, m: Any, k: int, lower: bool) -> Array:
    m = _ensure_array(name, m)
    m_shape = _shape(m)
    if len(m_shape) < 2:
        raise ValueError(f"Argument to jax.numpy.{name} must be at least 2D")
    rows, cols = m_shape[-2:]
    which = lax.broadcast(tri(rows, cols, k=k if lower else k - 1, dtype=bool), m_shape[:-2])
    if lower:
        return lax.select(which, m, zeros_like(m))
    return lax.select(which, zeros_like(m), m)


@_staged("tril", static_argnames=("k",))
def tril(m: ArrayLike, k: int = 0) -> Array:
    """``m`` with the elements above diagonal ``k`` zeroed (on the last two axes)."""
    return _triangle("tril", m, k, lower=True)


@_staged("triu", static_argnames=("k",))
def triu(m: ArrayLike, k: int = 0) -> Array:
    """``m`` with the elements below diagonal ``k`` zeroed (on the last two axes)."""
    return _triangle("triu", m, k, lower=False)


# ---------------------------------------------------------------------------
# Index helpers


def _triu_size(n: int, m: int, k: int) -> int:
    """How many elements of an ``n x m`` matrix lie on or above diagonal ``k``."""
    if k < 0:
        return n * m - _triu_size(m, n, 1 - k)
    if k >= m:
        return 0
    mk = min(n, m - k)
    return mk * (mk + 1) // 2 + mk * (m - k - mk)


def _triangle_sizes(n: Any, k: Any, m: Any, name: str) -> tuple[int, int, int]:
    n = _static_int(n, f"n argument of jnp.{name}")
    k = _static_int(k, f"k argument of jnp.{name}")
    m = n if m is None else _static_int(m, f"m argument of jnp.{name}")
    return n, k, m


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """Row and column indices of the lower triangle (up to diagonal ``k``) of an ``n x m`` matrix."""
    n, k, m = _triangle_sizes(n, k, m, "tril_indices")
    i, j = nonzero(tril(ones((n, m)), k=k), size=_triu_size(m, n, -k))
    return i, j


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """Row and column indices of the upper triangle (from diagonal ``k``) of an ``n x m`` matrix."""
    n, k, m = _triangle_sizes(n, k, m, "triu_indices")
    i, j = nonzero(triu(ones((n, m)), k=k), size=_triu_size(n, m, k))
    return i, j


def _matrix_shape(arr: Any, name: str) -> tuple[int, ...]:
    shape = tuple(arr.shape) if hasattr(arr, "shape") else _shape(_ensure_array(name, arr))
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Array, Array]:
    """``tril_indices`` for the shape of the 2-D ``arr``."""
    shape = _matrix_shape(arr, "tril_indices_from")
    return tril_indices(shape[0], k=k, m=shape[1])


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Array, Array]:
    """``triu_indices`` for the shape of the 2-D ``arr``."""
    shape = _matrix_shape(arr, "triu_indices_from")
    return triu_indices(shape[0], k=k, m=shape[1])


def diag_indices(n: int, ndim: int = 2) -> tuple[Array, ...]:
    """``ndim`` copies of ``arange(n)``: the indices of the main diagonal of an ``n``-cube."""
    n = _static_int(n, "'n' argument of jnp.diag_indices()")
    ndim = _static_int(ndim, "'ndim' argument of jnp.diag_indices()")
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    index_dtype = np.dtype(np.int64) if n > np.iinfo(np.int32).max else dtypes.default_int_dtype()
    return (lax.iota(index_dtype, n),) * ndim


def diag_indices_from(arr: ArrayLike) -> tuple[Array, ...]:
    """``diag_indices`` for the square (all axes equal) ``arr``."""
    shape = _shape(_ensure_array("diag_indices_from", arr))
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], ndim=len(shape))


# ---------------------------------------------------------------------------
# Grids and shifts


def meshgrid(*xi: ArrayLike, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> list[Array]:
    """Coordinate arrays from 1-D coordinate vectors (``indexing="xy"``: the first two axes swapped)."""
    check_arraylike("meshgrid", *xi)
    args = [array(x, copy=False) for x in xi]
    if not copy:
        raise ValueError("jax.numpy.meshgrid only supports copy=True")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    if any(_ndim(a) != 1 for a in args):
        raise ValueError(f"Arguments to jax.numpy.meshgrid must be 1D, got shapes {[_shape(a) for a in args]}")
    if indexing == "xy" and len(args) >= 2:
        args[0], args[1] = args[1], args[0]
    full = [_shape(a)[0] for a in args]
    output = []
    for i, a in enumerate(args):
        shape = [1] * len(args) if sparse else list(full)
        shape[i] = _shape(a)[0]
        output.append(lax.broadcast_in_dim(a, tuple(shape), (i,)))
    if indexing == "xy" and len(args) >= 2:
        output[0], output[1] = output[1], output[0]
    return output


def _roll_static_impl(a: Any, shift: tuple[int, ...], axis: tuple[int, ...]) -> Array:
    for ax, s in zip(*np.broadcast_arrays(axis, shift)):
        size = _shape(a)[ax]
        if size == 0:
            continue
        i = int(-s) % size
        a = lax.concatenate([lax.slice_in_dim(a, i, size, axis=int(ax)), lax.slice_in_dim(a, 0, i, axis=int(ax))], int(ax))
    return a


_roll_static = _staged("_roll_static", static_argnums=(1, 2))(_roll_static_impl)


@_staged("_roll_dynamic", static_argnums=(2,))
def _roll_dynamic(a: Any, shift: Any, axis: tuple[int, ...]) -> Array:
    b_shape = np.broadcast_shapes(_shape(shift), np.shape(axis))
    if len(b_shape) != 1:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    shifts = lax.broadcast_in_dim(shift, b_shape, tuple(range(len(b_shape) - _ndim(shift), len(b_shape))))
    for s, i in zip(shifts, np.broadcast_to(axis, b_shape)):
        i = int(i)
        size = np.array(_shape(a)[i], np.int32)[()]
        x = remainder(lax.convert_element_type(s, np.int32), lax.max(size, np.int32(1)))
        a_concat = lax.concatenate((a, a), i)
        a = lax.dynamic_slice_in_dim(a_concat, subtract(size, x), _shape(a)[i], axis=i)
    return a


def _index_tuple(x: Any) -> tuple[int, ...]:
    """A static int or sequence of ints as a tuple; TypeError (a ConcretizationTypeError) for traced values."""
    x = core.concrete_or_error(x, "expected a static index or sequence of indices.")
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(operator.index(i) for i in x)


def roll(a: ArrayLike, shift: ArrayLike | Sequence[int], axis: int | Sequence[int] | None = None) -> Array:
    """Shift elements cyclically by ``shift`` along ``axis`` (the flattened array when None)."""
    arr = _ensure_array("roll", a)
    if axis is None:
        return roll(ravel(arr), shift, 0).reshape(_shape(arr))
    axes = tuple(canonicalize_axis(ax, _ndim(arr)) for ax in _index_tuple(axis))
    try:
        shifts = _index_tuple(shift)
    except TypeError:
        return _roll_dynamic(arr, array(shift, copy=False), axes)
    return _roll_static(arr, shifts, axes)


# ---------------------------------------------------------------------------
# 1-D convolution


@_staged("_conv", static_argnames=("mode", "op", "precision", "preferred_element_type"))
def _conv(x: Any, y: Any, mode: str, op: str, precision: Any, preferred_element_type: Any = None) -> Array:
    if _ndim(x) != 1 or _ndim(y) != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        # NumPy computes convolutions in floating point.
        x, y = promote_dtypes_inexact(x, y)
    else:
        x, y = promote_dtypes(x, y)
    if _shape(x)[0] == 0 or _shape(y)[0] == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {_shape(x)} and {_shape(y)}.")
    reverse_out = False
    if op == "correlate":
        y = conjugate(y)
        if _shape(x)[0] < _shape(y)[0]:
            x, y = y, x
            reverse_out = True
    elif op == "convolve":
        if _shape(x)[0] < _shape(y)[0]:
            x, y = y, x
        y = flip(y)
    width = _shape(y)[0]
    pads = {"valid": (0, 0), "same": (width // 2, width - width // 2 - 1), "full": (width - 1, width - 1)}
    if mode not in pads:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    # One batch element, one feature: a 1-D convolution of x with the (flipped) kernel y.
    result = lax.conv_general_dilated(x[None, None, :], y[None, None, :], (1,), [pads[mode]], precision=precision,
                                      preferred_element_type=preferred_element_type)
    return result[0, 0, ::-1] if reverse_out else result[0, 0, :]


@_staged("convolve", static_argnames=("mode", "precision", "preferred_element_type"))
def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Array:
    """The discrete 1-D convolution ``sum_j a[j] * v[n - j]`` (``mode``: "full", "same" or "valid")."""
    check_arraylike("convolve", a, v)
    return _conv(array(a, copy=False), array(v, copy=False), mode=mode, op="convolve", precision=precision,
                 preferred_element_type=preferred_element_type)


@_staged("correlate", static_argnames=("mode", "precision", "preferred_element_type"))
def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Array:
    """The 1-D cross-correlation ``sum_n a[n + k] * conj(v[n])`` (``mode``: "valid", "same" or "full")."""
    check_arraylike("correlate", a, v)
    return _conv(array(a, copy=False), array(v, copy=False), mode=mode, op="correlate", precision=precision,
                 preferred_element_type=preferred_element_type)

