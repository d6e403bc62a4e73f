"""Windowed reductions (pooling) and their derivatives: reduce_window, reduce_window_sum,
reduce_window_max, reduce_window_min, select_and_scatter_add, select_and_gather_add.

``spec/primitives/windowed.md`` is the written specification; each check below
cites its constraint label (``# window C2``). Names, params and messages are JAX
0.10.2's. The jvp, transpose and batching rules are at the end of the module.

A window is placed on the operand after three changes to it: base dilation
(``base_dilation - 1`` holes between neighbouring elements), padding (``(low,
high)`` elements at each end; negative pads remove elements) and window
dilation (``window_dilation - 1`` holes between the window's taps). The
windows start every ``window_strides`` elements of the padded operand; holes
and padding hold the reduction's identity (the init value).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.core import Primitive, ShapedArray, Tracer, get_aval
from minijax.interpreters import ad, batching
from minijax.interpreters.tracing import trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from minijax.jaxpr_parse import open_jaxpr_params, param_parsers
from minijax.primitives import elementwise as ew, slicing
from minijax.primitives.common import index_tuple_param, standard_primitive

Shape = tuple[int, ...]
Padding = tuple[tuple[int, int], ...]
BatchDim = batching.BatchDim

__all__ = [
    "reduce_window_max_p",
    "reduce_window_min_p",
    "reduce_window_p",
    "reduce_window_shape_tuple",
    "reduce_window_sum_p",
    "select_and_gather_add_p",
    "select_and_scatter_add_p",
]

# ---------------------------------------------------------------------------
# Static params and the output shape


def _shapelike(prim: str, what: str, values: Any, strictly_positive: bool) -> Shape:
    """A window param as a tuple of ints (JAX's ``_check_shapelike``)."""
    if not isinstance(values, (tuple, list, np.ndarray)):  # window C1
        raise TypeError(f"{prim} {what} must be of type tuple/list/ndarray, got {type(values)}.")
    try:
        [operator.index(v) for v in values]
    except TypeError:  # window C1 (JAX's message shows the element types as Python prints them)
        raise TypeError(f"{prim} {what} must have every element be an integer type, got {tuple(map(type, values))}.") from None
    items = index_tuple_param(prim, what, values)  # window C1: bools refused too
    bound, words = (1, "strictly positive") if strictly_positive else (0, "nonnegative")
    if any(v < bound for v in items):  # window C2
        raise TypeError(f"{prim} {what} must have every element be {words}, got {tuple(values)}.")
    return items


def padding_pairs(prim: str, padding: Any, ndim: int) -> Padding:
    """A padding param as a tuple of ``(low, high)`` int pairs, one per dimension."""
    try:
        pairs = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(f"{prim} padding must be a sequence of (low, high) integer pairs, got {padding!r}.") from None
    if len(pairs) != ndim:  # window C4
        raise TypeError(f"{prim} got {len(pairs)} (low, high) padding pairs for an operand of rank {ndim}: pass one pair per dimension.")
    return pairs


def dilate_shape(shape: Sequence[int], dilation: Sequence[int]) -> Shape:
    """The size of each dimension after ``dilation - 1`` holes are put between its elements."""
    if any(d <= 0 for d in dilation):  # window C2
        raise TypeError(f"All dilations must be positive, got {tuple(dilation)}.")
    return tuple(0 if n == 0 else (n - 1) * d + 1 for n, d in zip(shape, dilation))


def reduce_window_shape_tuple(
    operand_shape: Sequence[int],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Shape:
    """The shape a windowed reduction with these params gives an operand of ``operand_shape``.

    A dimension whose padded size is smaller than the (dilated) window gets
    no window: size 0, as in JAX (not an error).
    """
    if base_dilation is not None:
        operand_shape = dilate_shape(operand_shape, base_dilation)
    if window_dilation is not None:
        window_dimensions = dilate_shape(window_dimensions, window_dilation)
    padded = [n + lo + hi for n, (lo, hi) in zip(operand_shape, padding)]
    return tuple(max((p - w) // s + 1, 0) for p, w, s in zip(padded, window_dimensions, window_strides))


def check_window(
    operand: ShapedArray,
    window_dimensions: Any,
    window_strides: Any,
    padding: Any,
    base_dilation: Any,
    window_dilation: Any,
) -> Shape:
    """The output shape of a windowed reduction of ``operand`` (window C1-C5).

    The messages name ``reduce_window`` as JAX's do; ``lax.reduce_window``
    calls this before binding, so that its errors read exactly as JAX's."""
    name = "reduce_window"
    dims = _shapelike(name, "window_dimensions", window_dimensions, True)
    strides = _shapelike(name, "window_strides", window_strides, True)
    base = _shapelike(name, "base_dilation", base_dilation, False)
    wdil = _shapelike(name, "window_dilation", window_dilation, False)
    if operand.ndim != len(dims):  # window C3
        raise TypeError(
            "reduce_window got the wrong number of window_dimensions for operand: "
            f"got operand shape {operand.shape} with window_dimensions {tuple(window_dimensions)}."
        )
    for what, given, value in (("window_strides", strides, window_strides), ("base_dilation", base, base_dilation),
                               ("window_dilation", wdil, window_dilation)):
        if len(given) != len(dims):  # window C3
            raise TypeError(
                f"reduce_window got inconsistent {what} and window_dimensions: "
                f"got {what} {tuple(value)} and window_dimensions {tuple(window_dimensions)}."
            )
    pads = padding_pairs(name, padding, operand.ndim)  # window C4
    return reduce_window_shape_tuple(operand.shape, dims, strides, pads, base, wdil)  # window C2, C5


# ---------------------------------------------------------------------------
# reduce_window_sum, reduce_window_max, reduce_window_min


def _monoid_rule(name: str) -> Callable[..., ShapedArray]:
    def rule(operand: ShapedArray, *, window_dimensions: Any, window_strides: Any, padding: Any,
             base_dilation: Any, window_dilation: Any) -> ShapedArray:
        if name == "reduce_window_sum" and not dtypes.issubdtype(operand.dtype, np.number):  # window C6
            raise TypeError(f"operand to reduce_window_sum must have a number dtype, got {operand.dtype.name}")
        shape = check_window(operand, window_dimensions, window_strides, padding, base_dilation, window_dilation)
        return operand.update(shape=shape)  # window C7: dtype and weak type kept

    return rule


reduce_window_sum_p = standard_primitive("reduce_window_sum", _monoid_rule("reduce_window_sum"))
reduce_window_max_p = standard_primitive("reduce_window_max", _monoid_rule("reduce_window_max"))
reduce_window_min_p = standard_primitive("reduce_window_min", _monoid_rule("reduce_window_min"))

# The monoid primitive -> the name of the reduce_* primitive whose identity
# pads its operand (minijax.primitives.reductions.reduction_identity).
MONOID_IDENTITIES: dict[str, str] = {
    "reduce_window_sum": "reduce_sum",
    "reduce_window_max": "reduce_max",
    "reduce_window_min": "reduce_min",
}


# ---------------------------------------------------------------------------
# reduce_window: any reduction, given as a jaxpr


def _reduce_window_rule(*avals: ShapedArray, jaxpr: Any, consts: Any, window_dimensions: Any, window_strides: Any,
                        padding: Any, base_dilation: Any, window_dilation: Any) -> list[ShapedArray]:
    if not avals or len(avals) % 2:  # reduce_window C1
        raise TypeError(f"reduce_window takes operands and as many init values, got {len(avals)} arguments.")
    operands, inits = avals[: len(avals) // 2], avals[len(avals) // 2 :]
    if any(o.dtype != i.dtype for o, i in zip(operands, inits)):  # reduce_window C2
        raise TypeError(
            "reduce_window got inconsistent dtypes for operands and init_values: got operand dtypes "
            f"{[o.dtype for o in operands]} and init_value dtypes {[i.dtype for i in inits]}."
        )
    if any(i.shape != () for i in inits):  # reduce_window C3
        raise TypeError(f"reduce_window expected init_values to be scalars but init_values have shapes {[i.shape for i in inits]}.")
    if len({o.shape for o in operands}) != 1:  # reduce_window C4
        raise TypeError(f"reduce_window operands must have equal shapes, got {[o.shape for o in operands]}.")
    if not isinstance(jaxpr, Jaxpr):  # reduce_window C5
        raise TypeError(f"reduce_window jaxpr must be a Jaxpr, got {type(jaxpr).__name__}.")
    n = len(operands)
    scalars = [ShapedArray((), o.dtype) for o in operands]
    body_in = [v.aval for v in jaxpr.invars]
    body_out = [get_aval(v) for v in jaxpr.outvars]
    if (len(body_in) != 2 * n or len(body_out) != n or len(jaxpr.constvars) != len(tuple(consts))
            or [a.strip_weak_type() for a in body_in] != scalars * 2
            or [a.strip_weak_type() for a in body_out] != scalars):  # reduce_window C5
        raise TypeError(
            f"reduce_window jaxpr must map two sets of {n} scalars of the operands' dtypes to one set, got "
            f"({', '.join(a.str_short() for a in body_in)}) -> ({', '.join(a.str_short() for a in body_out)})."
        )
    shape = check_window(operands[0], window_dimensions, window_strides, padding, base_dilation,
                          window_dilation)
    return [o.update(shape=shape) for o in operands]  # reduce_window C6


reduce_window_p = standard_primitive("reduce_window", _reduce_window_rule, multiple_results=True)
open_jaxpr_params.add(("reduce_window", "jaxpr"))  # jaxpr={ lambda ; ... } reads back open


def reduction_jaxpr(computation: Callable[[Any, Any], Any], init_avals: Sequence[ShapedArray],
                    unflatten: Callable[[list[Any]], Any], flatten: Callable[[Any], list[Any]]) -> tuple[Jaxpr, tuple[Any, ...]]:
    """``computation`` traced on two sets of scalars of ``init_avals``: the body of a reduce_window.

    ``unflatten`` turns a flat list of scalars into the pytree ``computation``
    takes; ``flatten`` reads its result back into a flat list.
    """
    n = len(init_avals)

    def body(*args: Any) -> list[Any]:
        return flatten(computation(unflatten(list(args[:n])), unflatten(list(args[n:]))))

    closed, _ = trace_to_jaxpr(body, [*init_avals, *init_avals])
    if any(isinstance(c, Tracer) for c in closed.consts):
        raise NotImplementedError(
            "Reduction computations can't close over Tracers. Please open an issue at https://github.com/jax-ml/jax."
        )
    return closed.jaxpr, tuple(closed.consts)


# ---------------------------------------------------------------------------
# select_and_scatter_add, select_and_gather_add: the derivatives of max/min pooling

# The selections a window can make: the first element (in row-major window
# order) that is >= (ge) or <= (le) all the others.
_SELECT_PRIMS: dict[str, Primitive] = {"ge": ew.ge_p, "le": ew.le_p}


def _check_select_prim(prim: str, select_prim: Any) -> None:
    if select_prim not in _SELECT_PRIMS.values():  # select C1
        raise TypeError(f"{prim} select_prim must be lax.ge_p or lax.le_p, got {select_prim!r}.")


def _select_and_scatter_add_rule(source: ShapedArray, operand: ShapedArray, *, select_prim: Any, window_dimensions: Any,
                                 window_strides: Any, padding: Any) -> ShapedArray:
    name = "select_and_scatter_add"
    _check_select_prim(name, select_prim)
    ones = (1,) * operand.ndim
    shape = check_window(operand, window_dimensions, window_strides, padding, ones, ones)
    if source.shape != shape:  # select C2
        raise TypeError(f"{name} source shape must be the shape of the operand's windows {shape}, got {source.shape}.")
    if source.dtype != operand.dtype:  # select C3
        raise TypeError(f"{name} source and operand dtypes must match, got {source.dtype.name} and {operand.dtype.name}.")
    return ShapedArray(operand.shape, source.dtype, source.weak_type and operand.weak_type)  # select C4


def _select_and_gather_add_rule(tangents: ShapedArray, operand: ShapedArray, *, select_prim: Any, window_dimensions: Any,
                                window_strides: Any, padding: Any, base_dilation: Any, window_dilation: Any) -> ShapedArray:
    name = "select_and_gather_add"
    _check_select_prim(name, select_prim)
    if tangents.shape != operand.shape:  # select C2
        raise TypeError(f"select_and_gather_add tangents and operand shapes must match, got {tangents.shape} and {operand.shape}.")
    if tangents.dtype != operand.dtype:  # select C3
        raise TypeError(f"{name} tangents and operand dtypes must match, got {tangents.dtype.name} and {operand.dtype.name}.")
    if not dtypes.issubdtype(operand.dtype, np.floating):  # select C5
        raise TypeError(f"{name} operand must have a floating dtype, got {operand.dtype.name}.")
    shape = check_window(operand, window_dimensions, window_strides, padding, base_dilation, window_dilation)
    return ShapedArray(shape, tangents.dtype, tangents.weak_type and operand.weak_type)  # select C4


select_and_scatter_add_p = standard_primitive("select_and_scatter_add", _select_and_scatter_add_rule)
select_and_gather_add_p = standard_primitive("select_and_gather_add", _select_and_gather_add_rule)


def _parse_select_prim(text: str, ctx: Any) -> Primitive:
    """``select_prim=ge``: the printed name of the comparison back to its primitive."""
    try:
        return _SELECT_PRIMS[text]
    except KeyError:
        raise ValueError(f"select_prim must be ge or le, got {text}") from None


for _name in ("select_and_scatter_add", "select_and_gather_add"):
    param_parsers[(_name, "select_prim")] = _parse_select_prim


# ===========================================================================
# Transformation rules: jvp, transpose and batching
#
# reduce_window_sum is linear; its transpose sums the cotangent over the
# windows that touched each operand element, a reduce_window_sum of the
# cotangent spread out by the strides and padded (as JAX does). max/min
# pooling's tangent is the tangent at the element each window selected
# (select_and_gather_add); select_and_gather_add and select_and_scatter_add
# are linear in their first operand and each other's transpose. The generic
# reduce_window's jvp reduces (primal, tangent) pairs with the jvp of its body.

_WindowParams = tuple[Shape, Shape, Padding, Shape, Shape]


def _bind_monoid(prim: Primitive, operand: Any, window_dimensions: Sequence[int], window_strides: Sequence[int],
                 padding: Sequence[tuple[int, int]], base_dilation: Sequence[int], window_dilation: Sequence[int]) -> Any:
    return prim.bind(operand, window_dimensions=tuple(window_dimensions), window_strides=tuple(window_strides),
                     padding=tuple((lo, hi) for lo, hi in padding), base_dilation=tuple(base_dilation),
                     window_dilation=tuple(window_dilation))


def _bind_gather(tangents: Any, operand: Any, select_prim: Primitive, window_dimensions: Shape, window_strides: Shape,
                 padding: Padding, base_dilation: Shape, window_dilation: Shape) -> Any:
    return select_and_gather_add_p.bind(tangents, operand, select_prim=select_prim, window_dimensions=window_dimensions,
                                        window_strides=window_strides, padding=padding, base_dilation=base_dilation,
                                        window_dilation=window_dilation)


def _bind_scatter(source: Any, operand: Any, select_prim: Primitive, window_dimensions: Shape, window_strides: Shape,
                  padding: Padding) -> Any:
    return select_and_scatter_add_p.bind(source, operand, select_prim=select_prim, window_dimensions=window_dimensions,
                                         window_strides=window_strides, padding=padding)


# --- reduce_window_sum: linear


def _vjp_padding(in_shape: Shape, window_dimensions: Shape, window_strides: Shape, out_shape: Shape, padding: Padding,
                 base_dilation: Shape, window_dilation: Shape) -> list[tuple[Any, Any]]:
    """The pads that line a stride-spread cotangent up with the windows it came from.

    After the cotangent is spread out by the strides, an operand element at
    (dilated) position i was read by the windows starting at i + low - (w - 1)
    .. i + low: padding ``w - 1 - low`` before makes a unit-stride window of
    size ``w`` ending at each position see exactly those. The pad after fills
    the rest of the dilated operand's length. (NumPy ints, as JAX's pads print.)
    """
    dilated_in = dilate_shape(in_shape, base_dilation)
    dilated_window = dilate_shape(window_dimensions, window_dilation)
    spread_out = dilate_shape(out_shape, window_strides)
    before = np.subtract(dilated_window, [lo for lo, _ in padding]) - 1
    after = np.add(dilated_in, dilated_window) - 1 - np.asarray(spread_out, np.int64) - before
    return list(zip(before, after))


def _reduce_window_sum_transpose(ct: Any, operand: Any, *, window_dimensions: Shape, window_strides: Shape,
                                 padding: Padding, base_dilation: Shape, window_dilation: Shape) -> list[Any]:
    in_shape = operand.aval.shape
    pads = _vjp_padding(in_shape, window_dimensions, window_strides, get_aval(ct).shape, padding, base_dilation,
                        window_dilation)
    config = [(lo, hi, stride - 1) for (lo, hi), stride in zip(pads, window_strides)]
    spread = slicing.pad(ct, np.zeros((), get_aval(ct).dtype), config)
    ones = (1,) * len(in_shape)
    # Striding by the base dilation keeps the positions of real operand elements.
    result = _bind_monoid(reduce_window_sum_p, spread, window_dimensions, base_dilation, [(0, 0)] * len(in_shape), ones,
                          window_dilation)
    return [result]


ad.deflinear(reduce_window_sum_p, _reduce_window_sum_transpose)


# --- reduce_window_max, reduce_window_min: the tangent at the selected element


def _chooser_jvp(select_prim: Primitive) -> Callable[..., Any]:
    def rule(t: Any, operand: Any, **params: Any) -> Any:
        return _bind_gather(t, operand, select_prim, **params)

    return rule


ad.defjvp(reduce_window_max_p, _chooser_jvp(ew.ge_p))
ad.defjvp(reduce_window_min_p, _chooser_jvp(ew.le_p))


# --- select_and_scatter_add, select_and_gather_add: linear in their first operand


def _jvp_linear_in_first(prim: Primitive) -> Callable[..., tuple[Any, Any]]:
    """The jvp of a primitive linear in its first operand, its second only choosing
    positions (whose tangent is therefore ignored)."""

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        source, operand = primals
        out = prim.bind(source, operand, **params)
        t = tangents[0]
        if type(t) is ad.Zero:
            return out, ad.Zero.from_primal(out)
        return out, prim.bind(t, operand, **params)

    return jvp


def _select_and_scatter_add_transpose(ct: Any, source: Any, operand: Any, *, select_prim: Primitive,
                                      window_dimensions: Shape, window_strides: Shape, padding: Padding) -> list[Any]:
    if ad.is_undefined_primal(operand):
        raise ValueError("select_and_scatter_add is linear only in its source, not in its operand.")
    if type(ct) is ad.Zero:
        return [ad.Zero(source.aval), None]
    ones = (1,) * len(window_dimensions)
    return [_bind_gather(ct, operand, select_prim, window_dimensions, window_strides, padding, ones, ones), None]


def _select_and_gather_add_transpose(ct: Any, tangents: Any, operand: Any, *, select_prim: Primitive,
                                     window_dimensions: Shape, window_strides: Shape, padding: Padding,
                                     base_dilation: Shape, window_dilation: Shape) -> list[Any]:
    if ad.is_undefined_primal(operand):
        raise ValueError("select_and_gather_add is linear only in its tangents, not in its operand.")
    if any(d != 1 for d in window_dilation):
        raise NotImplementedError(
            "VJP not implemented for select_and_gather (MaxPool) with window dilation, "
            f"got window_dilation={window_dilation}."
        )
    if type(ct) is ad.Zero:
        return [ad.Zero(tangents.aval), None]
    dilated = any(d != 1 for d in base_dilation)
    if dilated:
        # The holes take the identity of the selection, so that no window picks one.
        worst = np.asarray(-np.inf if select_prim is ew.ge_p else np.inf, get_aval(operand).dtype)
        operand = slicing.pad(operand, worst, tuple((0, 0, d - 1) for d in base_dilation))
    result = _bind_scatter(ct, operand, select_prim, window_dimensions, window_strides, padding)
    if dilated:
        shape = get_aval(result).shape
        result = slicing.slice(result, (0,) * len(shape), shape, base_dilation)
    return [result, None]


ad.primitive_jvps[select_and_scatter_add_p] = _jvp_linear_in_first(select_and_scatter_add_p)
ad.transpose_rules[select_and_scatter_add_p] = _select_and_scatter_add_transpose
ad.primitive_jvps[select_and_gather_add_p] = _jvp_linear_in_first(select_and_gather_add_p)
ad.transpose_rules[select_and_gather_add_p] = _select_and_gather_add_transpose


# --- reduce_window: reduce (primal, tangent) pairs with the body's jvp


def _reduce_window_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: Jaxpr, consts: tuple[Any, ...],
                       **params: Any) -> tuple[Any, Any]:
    n = len(primals) // 2
    operands, inits = list(primals[:n]), list(primals[n:])
    if not all(type(t) is ad.Zero for t in tangents[n:]):
        raise TypeError("reduce_window jvp does not support non-zero init_value_tangent.")
    operand_tangents = [ad.instantiate_zeros(t) for t in tangents[:n]]
    init_tangents = [ad.zeros_like_aval(ad.tangent_aval(get_aval(x))) for x in inits]
    body_jvp, _ = ad.jvp_jaxpr(ClosedJaxpr(jaxpr, list(consts)), [True] * (2 * n), instantiate=True)

    def pairs(left: list[Any], right: list[Any]) -> list[Any]:
        # left and right are (primals..., tangents...) of the accumulator and the element.
        return list(eval_jaxpr(body_jvp.jaxpr, body_jvp.consts, *left[:n], *right[:n], *left[n:], *right[n:]))

    init_avals = [get_aval(x) for x in [*inits, *init_tangents]]
    body, body_consts = reduction_jaxpr(pairs, init_avals, lambda xs: xs, lambda xs: list(xs))
    outs = reduce_window_p.bind(*operands, *operand_tangents, *inits, *init_tangents, jaxpr=body, consts=body_consts,
                                **params)
    return list(outs[:n]), list(outs[n:])


ad.primitive_jvps[reduce_window_p] = _reduce_window_jvp


# --- batching: the batch axis becomes a window dimension of size 1


def _insert(values: tuple[Any, ...], at: int, value: Any) -> tuple[Any, ...]:
    return (*values[:at], value, *values[at:])


def _monoid_batcher(prim: Primitive) -> Callable[..., tuple[Any, BatchDim]]:
    def rule(vals: Sequence[Any], dims: Sequence[BatchDim], *, window_dimensions: Shape, window_strides: Shape,
             padding: Padding, base_dilation: Shape, window_dilation: Shape) -> tuple[Any, BatchDim]:
        (x,), (bdim,) = vals, dims
        if bdim is None:
            raise ValueError("a batching rule was called with no batched operand")
        out = _bind_monoid(prim, x, _insert(window_dimensions, bdim, 1), _insert(window_strides, bdim, 1),
                           _insert(padding, bdim, (0, 0)), _insert(base_dilation, bdim, 1),
                           _insert(window_dilation, bdim, 1))
        return out, bdim

    return rule


for _prim in (reduce_window_sum_p, reduce_window_max_p, reduce_window_min_p):
    batching.primitive_batchers[_prim] = _monoid_batcher(_prim)


def _at_front(x: Any, bdim: BatchDim, size: int) -> Any:
    """``x`` batched on its first axis; unbatched, broadcast with NumPy-int dims (as JAX's jaxprs print them)."""
    return batching.broadcast(x, size, 0) if bdim is None else batching.moveaxis(x, bdim, 0)


def _reduce_window_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, window_dimensions: Shape,
                           window_strides: Shape, padding: Padding, base_dilation: Shape, window_dilation: Shape,
                           **params: Any) -> tuple[Any, Any]:
    n = len(vals) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("reduce_window batching is not implemented for initial values")
    size = batching.batch_size(vals, dims)
    operands = [_at_front(x, d, size) for x, d in zip(vals[:n], dims[:n])]
    outs = reduce_window_p.bind(*operands, *vals[n:], window_dimensions=(1, *window_dimensions),
                                window_strides=(1, *window_strides), padding=((0, 0), *padding),
                                base_dilation=(1, *base_dilation), window_dilation=(1, *window_dilation), **params)
    return outs, [0] * n


def _select_and_scatter_add_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, select_prim: Primitive,
                                    window_dimensions: Shape, window_strides: Shape, padding: Padding) -> tuple[Any, BatchDim]:
    size = batching.batch_size(vals, dims)
    source, operand = (_at_front(x, d, size) for x, d in zip(vals, dims))
    out = _bind_scatter(source, operand, select_prim, (1, *window_dimensions), (1, *window_strides), ((0, 0), *padding))
    return out, 0


def _select_and_gather_add_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, select_prim: Primitive,
                                   window_dimensions: Shape, window_strides: Shape, padding: Padding,
                                   base_dilation: Shape, window_dilation: Shape) -> tuple[Any, BatchDim]:
    size = batching.batch_size(vals, dims)
    tangents, operand = (_at_front(x, d, size) for x, d in zip(vals, dims))
    out = _bind_gather(tangents, operand, select_prim, (1, *window_dimensions), (1, *window_strides),
                       ((0, 0), *padding), (1, *base_dilation), (1, *window_dilation))
    return out, 0


batching.primitive_batchers[reduce_window_p] = _reduce_window_batcher
batching.primitive_batchers[select_and_scatter_add_p] = _select_and_scatter_add_batcher
batching.primitive_batchers[select_and_gather_add_p] = _select_and_gather_add_batcher
