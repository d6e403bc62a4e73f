"""Sorting and cumulative primitives: sort, top_k, cumsum, cumprod, cummax, cummin, cumlogsumexp.

``spec/primitives/sorting.md`` is the written specification; each check below
cites its constraint label (``# sort C2``). Names, params and messages are JAX
0.10.2's. The jvp, transpose and batching rules are at the end of the module.

The order ``sort`` uses on floats is a total order in which -0.0 and 0.0 are
equal and every NaN (whatever its sign) is greater than +inf; ``top_k``
uses the IEEE total order instead (-NaN < -inf < ... < -0.0 < 0.0 < ... <
inf < NaN), as XLA's TopK does. Both keep equal elements in their original
order (``sort`` when ``is_stable``; ``top_k`` always).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.core import Primitive, ShapedArray, current_trace, get_aval
from minijax.interpreters import ad, batching
from minijax.primitives import complex as cx, elementwise as ew, slicing, structural as sp
from minijax.primitives.calls import CustomJVPCall, NamedCallable
from minijax.primitives.common import index_param, standard_primitive
from minijax.primitives.indexing import GatherDimensionNumbers, GatherScatterMode, gather_p

# ---------------------------------------------------------------------------
# sort


def _sort_rule(*operands: ShapedArray, dimension: Any, is_stable: Any, num_keys: Any) -> list[ShapedArray]:
    if not operands:  # sort C1
        raise TypeError("Sort requires at least one operand")
    shapes = {x.shape for x in operands}
    if len(shapes) != 1:  # sort C2
        raise TypeError("Arguments to sort must have equal shapes, got: " + " ".join(str(x.shape) for x in operands))
    ndim = operands[0].ndim
    dim = index_param("sort", "dimension", dimension)
    if not 0 <= dim < ndim:  # sort C3
        raise ValueError(f"sort: dimension {dim} is out of bounds for operands of shape {operands[0].shape}")
    keys = index_param("sort", "num_keys", num_keys)
    if not 1 <= keys <= len(operands):  # sort C4
        raise ValueError(f"num_keys={keys} must be between 1 and len(operand)={len(operands)}")
    if not isinstance(is_stable, (bool, np.bool_)):  # sort C5
        raise TypeError(f"sort: is_stable must be a bool, got {is_stable!r}")
    return list(operands)  # sort C6: the operands' avals, weak types kept


sort_p = standard_primitive("sort", _sort_rule, multiple_results=True)


# ---------------------------------------------------------------------------
# top_k


def _top_k_rule(operand: ShapedArray, *, k: Any, axis: Any) -> list[ShapedArray]:
    k = index_param("top_k", "k", k)
    axis = index_param("top_k", "axis", axis)
    if k < 0:  # top_k C1
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if operand.ndim == 0:  # top_k C2
        raise TypeError(f"top_k operand must have >= 1 dimension, got {operand.shape}")
    if not 0 <= axis < operand.ndim:  # top_k C3
        raise ValueError(f"axis argument out of range: axis={axis} for operand.shape={operand.shape}")
    shape = list(operand.shape)
    if shape[axis] < k:  # top_k C4
        raise ValueError(
            f"k argument to top_k must be no larger than size along axis; got k={k} with shape={shape} and axis={axis}"
        )
    if shape[axis] > np.iinfo(np.int32).max + 1:  # top_k C5
        raise ValueError(
            "top_k returns int32 indices, which will overflow for array dimensions larger than the maximum "
            f"int32 ({np.iinfo(np.int32).max}). Got operand.shape={operand.shape}"
        )
    shape[axis] = k
    # top_k C6: JAX keeps the operand's weak type on both results.
    return [operand.update(shape=shape), operand.update(shape=shape, dtype=np.dtype(np.int32))]


top_k_p = standard_primitive("top_k", _top_k_rule, multiple_results=True)


# ---------------------------------------------------------------------------
# The cumulative reductions


def _cumulative_rule(name: str, floating_only: bool) -> Callable[..., ShapedArray]:
    def rule(x: ShapedArray, *, axis: Any, reverse: Any) -> ShapedArray:
        axis = index_param(name, "axis", axis)
        if axis < 0:  # cumulative C1
            raise ValueError("XLA operations do not allow negative axes")
        if axis >= x.ndim:  # cumulative C1
            raise ValueError(f"axis {axis} is out of bounds for array of shape {x.shape}")
        if not isinstance(reverse, (bool, np.bool_)):  # cumulative C2
            raise TypeError(f"{name}: reverse must be a bool, got {reverse!r}")
        kind = np.floating if floating_only else np.number
        if not dtypes.issubdtype(x.dtype, kind):  # cumulative C3
            accepted = "floating" if floating_only else "number"
            raise TypeError(f"{name} does not accept dtype {x.dtype.name}. Accepted dtypes are subtypes of {accepted}.")
        return x  # cumulative C4: the operand's aval, weak type kept

    return rule


# name -> whether the primitive takes floating operands only. (JAX's rule
# accepts integers for cumlogsumexp too, then fails while lowering.)
_CUMULATIVE: dict[str, bool] = {
    "cumsum": False,
    "cumprod": False,
    "cummax": False,
    "cummin": False,
    "cumlogsumexp": True,
}
CUMULATIVE_PRIMITIVES: dict[str, Primitive] = {
    name: standard_primitive(name, _cumulative_rule(name, floating)) for name, floating in _CUMULATIVE.items()
}
cumsum_p = CUMULATIVE_PRIMITIVES["cumsum"]
cumprod_p = CUMULATIVE_PRIMITIVES["cumprod"]
cummax_p = CUMULATIVE_PRIMITIVES["cummax"]
cummin_p = CUMULATIVE_PRIMITIVES["cummin"]
cumlogsumexp_p = CUMULATIVE_PRIMITIVES["cumlogsumexp"]


def index_dtype_for_shape(shape: Sequence[int]) -> np.dtype[Any]:
    """The unsigned dtype sort's jvp numbers positions in: uint32, or uint64 beyond its range (as JAX)."""
    return np.dtype(np.uint64) if any(n > np.iinfo(np.uint32).max for n in shape) else np.dtype(np.uint32)


# ===========================================================================
# Transformation rules: jvp, transpose and batching
#
# sort and top_k move elements: the tangents are moved the same way. JAX
# sorts an iota along with the operands and gathers each tangent at the
# resulting positions; top_k gathers at its index result. cumsum is linear
# and its transpose is the cumulative sum running the other way. The other
# cumulative reductions are differentiated as JAX does: as the jvp of a
# parallel prefix scan (``associative_scan``) of their combining function.

BatchDim = batching.BatchDim


def _take_along(t: Any, idx: Any, axis: int, batch_dims: tuple[Any, ...]) -> Any:
    """``t`` gathered along ``axis`` at ``idx`` (``idx`` has t's shape but along ``axis``, plus a trailing 1).

    One gather with batching dimensions, as JAX's sort and top_k jvps stage it.
    """
    ndim = get_aval(t).ndim
    numbers = GatherDimensionNumbers(
        offset_dims=(),
        collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
        operand_batching_dims=batch_dims,
        start_indices_batching_dims=batch_dims,
    )
    return gather_p.bind(
        t,
        idx,
        dimension_numbers=numbers,
        slice_sizes=(1,) * ndim,
        indices_are_sorted=False,
        unique_indices=False,
        mode=GatherScatterMode.PROMISE_IN_BOUNDS,
        fill_value=None,
    )


def _sort_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, dimension: int, is_stable: bool, num_keys: int) -> tuple[Any, Any]:
    shape = get_aval(primals[0]).shape
    iota = sp.iota(index_dtype_for_shape(shape), shape, dimension)
    *outs, positions = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    # NumPy integers, as JAX computes the batching dims (its jaxprs print np.int64(i)).
    batch_dims = tuple(np.delete(np.arange(len(shape), dtype=np.int64), dimension))
    idx = sp.broadcast_in_dim_p.bind(
        positions, shape=(*shape, 1), broadcast_dimensions=tuple(range(len(shape))), sharding=None
    )
    out_tangents = [t if type(t) is ad.Zero else _take_along(t, idx, dimension, batch_dims) for t in tangents]
    return outs, out_tangents


def _top_k_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, k: int, axis: int) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    values, indices = top_k_p.bind(x, k=k, axis=axis)
    index_zero = ad.Zero.from_primal(indices)
    if type(t) is ad.Zero:
        return [values, indices], [ad.Zero.from_primal(values), index_zero]
    shape = get_aval(indices).shape
    idx = sp.reshape_p.bind(indices, new_sizes=(*shape, 1), dimensions=None, sharding=None)
    batch_dims = tuple(i for i in range(len(shape)) if i != axis)
    return [values, indices], [_take_along(t, idx, axis, batch_dims), index_zero]


ad.primitive_jvps[sort_p] = _sort_jvp
ad.primitive_jvps[top_k_p] = _top_k_jvp


# --- cumsum: linear


def _cumsum_transpose(ct: Any, x: Any, *, axis: int, reverse: bool) -> list[Any]:
    if type(ct) is ad.Zero:
        return [ad.Zero(x.aval)]
    return [cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


ad.deflinear(cumsum_p, _cumsum_transpose)


# --- cumprod, cummax, cummin, cumlogsumexp: the jvp of a prefix scan


def _interleave(a: Any, b: Any, axis: int) -> Any:
    """Elements of ``a`` at the even positions along ``axis``, of ``b`` at the odd ones.

    Each is spread out with interior padding and the two are added (the
    zeros of one meet the values of the other)."""
    a_aval, b_aval = get_aval(a), get_aval(b)
    same = a_aval.shape[axis] == b_aval.shape[axis]
    a_pad, b_pad = [(0, 0, 0)] * a_aval.ndim, [(0, 0, 0)] * b_aval.ndim
    a_pad[axis] = (0, 1 if same else 0, 1)
    b_pad[axis] = (1, 0 if same else 1, 1)
    zero = np.zeros((), a_aval.dtype)
    op = ew.or_p if a_aval.dtype == np.bool_ else ew.add_p
    return op.bind(slicing.pad(a, zero, a_pad), slicing.pad(b, zero, b_pad))


def associative_scan(combine: Callable[[list[Any], list[Any]], list[Any]], elems: Sequence[Any], axis: int, reverse: bool = False) -> list[Any]:
    """The inclusive prefix combination of the arrays ``elems`` along ``axis`` by the associative ``combine``.

    ``combine(a, b)`` maps two lists of arrays (slices of ``elems``) to one.
    The parallel algorithm JAX's ``lax.associative_scan`` uses (Blelloch):
    combine neighbouring pairs, scan the half-length result recursively (the
    odd positions), then combine those with the remaining elements (the even
    positions) and interleave. log2(n) levels of elementwise work, so its jvp
    is made of elementwise jvps; the cumulative primitives differentiate
    through it.
    """
    elems = list(elems)
    if reverse:
        elems = [sp.rev_p.bind(e, dimensions=(axis,)) for e in elems]

    def scan(xs: list[Any]) -> list[Any]:
        n = get_aval(xs[0]).shape[axis]
        if n < 2:
            return xs
        pairs = combine([slicing.slice_in_dim(x, 0, n - 1, 2, axis) for x in xs], [slicing.slice_in_dim(x, 1, n, 2, axis) for x in xs])
        odd = scan(pairs)
        if n % 2 == 0:  # the last odd result has no even element after it
            odd_head = [slicing.slice_in_dim(o, 0, get_aval(o).shape[axis] - 1, 1, axis) for o in odd]
        else:
            odd_head = odd
        even = combine(odd_head, [slicing.slice_in_dim(x, 2, n, 2, axis) for x in xs])
        even = [sp.concatenate([slicing.slice_in_dim(x, 0, 1, 1, axis), e], axis) for x, e in zip(xs, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = scan(elems)
    return [sp.rev_p.bind(o, dimensions=(axis,)) for o in out] if reverse else out


def logaddexp_function(name: str, exp: Primitive, log_base: float) -> Callable[[Any, Any], Any]:
    """``log(exp(x1) + exp(x2))`` (``exp`` is ``exp_p`` or ``exp2_p``, ``log_base`` e or 2)
    of two arrays of one inexact dtype, with JAX's custom derivative: the
    formula's derivative is NaN where both inputs are infinite, so the rule
    ``t1 * exp(x1 - out) + t2 * exp(x2 - out)`` (+inf read as 0) is stated
    instead. ``jnp.logaddexp`` is this function (after promotion), and so is
    the combining function whose prefix scan cumlogsumexp's jvp differentiates.
    """

    def formula(x1: Any, x2: Any) -> list[Any]:
        amax = ew.max_p.bind(x1, x2)
        if dtypes.issubdtype(get_aval(x1).dtype, np.complexfloating):
            return [complex_formula(x1, x2, amax)]
        delta = ew.sub_p.bind(x1, x2)
        # Where delta is NaN (inf - inf of the same sign, or a NaN input) the sum is right.
        nan_delta = ew.ne_p.bind(delta, delta)
        total = ew.add_p.bind(x1, x2)
        tail = ew.log1p_p.bind(exp.bind(ew.neg_p.bind(ew.abs_p.bind(delta)), accuracy=None), accuracy=None)
        if log_base != 1.0:
            tail = ew.mul_p.bind(_const(amax, 1 / log_base), tail)
        return [ew.select_n_p.bind(nan_delta, ew.add_p.bind(amax, tail), total)]

    def complex_formula(x1: Any, x2: Any, amax: Any) -> Any:
        # amax is the lexicographic maximum; the imaginary part comes back wrapped into
        # [-pi, pi] (scaled by 1/log_base), a branch of the complex logarithm, as JAX does.
        delta = ew.sub_p.bind(ew.add_p.bind(x1, x2), ew.mul_p.bind(amax, _const(amax, 2)))
        tail = ew.log1p_p.bind(exp.bind(delta, accuracy=None), accuracy=None)
        if log_base != 1.0:
            tail = ew.mul_p.bind(_const(amax, 1 / log_base), tail)
        out = ew.add_p.bind(amax, tail)
        half = np.pi / log_base
        imag = cx.imag_p.bind(out)
        rem = ew.rem_p.bind(ew.add_p.bind(imag, _const(imag, half)), _const(imag, 2 * half))
        rem = ew.select_n_p.bind(
            ew.lt_p.bind(rem, _const(rem, 0)), rem, ew.add_p.bind(rem, _const(rem, 2 * half))
        )
        return cx.complex_p.bind(cx.real_p.bind(out), ew.sub_p.bind(rem, _const(rem, half)))

    def rule(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        (x1, x2), (t1, t2) = primals, tangents
        out = apply(x1, x2)

        def times_exp(t: Any, x: Any) -> Any:
            return ew.mul_p.bind(t, exp.bind(ew.sub_p.bind(_replace_inf(x), _replace_inf(out)), accuracy=None))

        return [out], [ew.add_p.bind(times_exp(t1, x1), times_exp(t2, x2))]

    formula.__name__ = formula.__qualname__ = name
    rule.__name__ = rule.__qualname__ = f"_{name}_jvp"
    jvp = NamedCallable(rule, rule.__name__)

    def apply(x1: Any, x2: Any) -> Any:
        call = CustomJVPCall(formula, jvp, name, symbolic_zeros=False)
        return current_trace().process_custom_jvp_call(call, [x1, x2])[0]

    apply.__name__ = apply.__qualname__ = name
    return apply


def _replace_inf(x: Any) -> Any:
    """``x`` with +inf (a complex ``x``: +inf real part) replaced by 0."""
    dtype = get_aval(x).dtype
    re_x = cx.real_p.bind(x) if dtypes.issubdtype(dtype, np.complexfloating) else x
    return ew.select_n_p.bind(ew.eq_p.bind(re_x, _const(re_x, np.inf)), x, ew.full_like(x, 0, dtype))


def _const(x: Any, value: float) -> Any:
    """``value`` in ``x``'s dtype, weakly typed only when ``x`` is a weak scalar (JAX's ``lax._const``)."""
    aval = get_aval(x)
    return ew.scalar_like(x, value) if aval.weak_type and not aval.shape else np.array(value, aval.dtype)


logaddexp = logaddexp_function("logaddexp", ew.exp_p, 1.0)


def _combiner(prim: Primitive) -> Callable[[Any, Any], Any]:
    return lambda a, b: prim.bind(a, b)


def _flat(combine: Callable[[Any, Any], Any]) -> Callable[[list[Any], list[Any]], list[Any]]:
    return lambda a, b: [combine(a[0], b[0])]


# name -> the combining function of the prefix scan its jvp differentiates.
_COMBINERS: dict[str, Callable[[Any, Any], Any]] = {
    "cumprod": _combiner(ew.mul_p),
    "cummax": _combiner(ew.max_p),
    "cummin": _combiner(ew.min_p),
    "cumlogsumexp": logaddexp,
}


def _cumulative_jvp(name: str) -> ad.JvpRule:
    combine = _flat(_COMBINERS[name])

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], *, axis: int, reverse: bool) -> tuple[Any, Any]:
        def scan(x: Any) -> list[Any]:
            return associative_scan(combine, [x], axis, reverse)

        (out,), (t_out,) = ad.jvp_flat(scan, list(primals), list(tangents))
        return out, t_out

    return jvp


for _name in _COMBINERS:
    ad.primitive_jvps[CUMULATIVE_PRIMITIVES[_name]] = _cumulative_jvp(_name)


# --- batching


def _sort_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, dimension: int, is_stable: bool, num_keys: int) -> tuple[Any, Any]:
    # The first batched operand decides where the batch axis is; unbatched
    # operands are broadcast along it (sort needs operands of one shape).
    proto, bdim = next((v, d) for v, d in zip(vals, dims) if d is not None)
    shape = get_aval(proto).shape
    operands = []
    for v, d in zip(vals, dims):
        if d is None:
            kept = tuple(i for i in range(len(shape)) if i != bdim)
            operands.append(sp.broadcast_in_dim(v, shape, kept))
        else:
            operands.append(batching.moveaxis(v, d, bdim))
    new_dimension = dimension + (1 if bdim <= dimension else 0)
    outs = sort_p.bind(*operands, dimension=new_dimension, is_stable=is_stable, num_keys=num_keys)
    return outs, [bdim] * len(outs)


def _top_k_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, k: int, axis: int) -> tuple[Any, Any]:
    (x,), (bdim,) = vals, dims
    if bdim is None:
        raise ValueError("a batching rule was called with no batched operand")
    return top_k_p.bind(x, k=k, axis=axis + 1 if bdim <= axis else axis), [bdim, bdim]


def _cumulative_batcher(prim: Primitive) -> Callable[..., tuple[Any, BatchDim]]:
    def rule(vals: Sequence[Any], dims: Sequence[BatchDim], *, axis: int, reverse: bool) -> tuple[Any, BatchDim]:
        (x,), (bdim,) = vals, dims
        if bdim is None:
            raise ValueError("a batching rule was called with no batched operand")
        return prim.bind(x, axis=axis if axis < bdim else axis + 1, reverse=reverse), bdim

    return rule


batching.primitive_batchers[sort_p] = _sort_batcher
batching.primitive_batchers[top_k_p] = _top_k_batcher
for _prim in CUMULATIVE_PRIMITIVES.values():
    batching.primitive_batchers[_prim] = _cumulative_batcher(_prim)
