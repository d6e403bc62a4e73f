"""Reductions and contractions: reduce_max/min/prod/and/or/xor, argmax, argmin, dot_general.

``spec/primitives/reductions.md`` is the written specification; each check
below cites its constraint label (``# dot_general C3``). reduce_sum, the
transpose of broadcast_in_dim, lives with it in ``structural.py``; it shares
the monoid reductions' shape rule (``common.reduction_rule``). Weak types: the
monoid reductions keep the operand's weak type, argmax/argmin results are
never weak, dot_general is weak only when both operands are.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from minijax import config, dtypes
from minijax.core import Primitive, ShapedArray, get_aval, partial_sum_products, shape_size
from minijax.interpreters import ad, batching
from minijax.jaxpr import param_filters
from minijax.jaxpr_parse import param_completers, param_constructors
from minijax.mesh import NamedSharding, PartitionSpec
from minijax.primitives import elementwise as ew, slicing, structural as sp
from minijax.primitives.common import check_no_sharding, int_tuple, reduction_rule, standard_primitive
from minijax.sharding_rules import explicit_spec

# ---------------------------------------------------------------------------
# The monoid reductions (reduce_sum is in structural.py)

reduce_prod_p = standard_primitive("reduce_prod", reduction_rule("reduce_prod"))
reduce_max_p = standard_primitive("reduce_max", reduction_rule("reduce_max"))
reduce_min_p = standard_primitive("reduce_min", reduction_rule("reduce_min"))
reduce_and_p = standard_primitive("reduce_and", reduction_rule("reduce_and"))
reduce_or_p = standard_primitive("reduce_or", reduction_rule("reduce_or"))
reduce_xor_p = standard_primitive("reduce_xor", reduction_rule("reduce_xor"))
# Every monoid reduction by name, reduce_sum included.
REDUCTION_PRIMITIVES: dict[str, Primitive] = {
    p.name: p for p in (sp.reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p, reduce_or_p, reduce_xor_p)
}


# ---------------------------------------------------------------------------
# argmax, argmin


def _arg_reduction_rule(name: str) -> Callable[..., ShapedArray]:
    def rule(x: ShapedArray, *, axes: Any, index_dtype: Any) -> ShapedArray:
        axes = int_tuple(name, "axes", axes)
        if len(axes) != 1:  # argmax C1
            raise ValueError(f"{name} reduces exactly one axis, got axes {axes}.")
        (axis,) = axes
        if not 0 <= axis < x.ndim:  # argmax C2
            raise ValueError(f"{name}: Invalid axis {axis} for operand shape {x.shape}")
        index = np.dtype(index_dtype)
        if not dtypes.issubdtype(index, np.integer):  # argmax C3
            raise TypeError(f"{name}: index_dtype must be an integer type, but got {index.name}")
        if x.shape[axis] == 0:  # argmax C4
            raise ValueError(
                f"argmin and argmax require non-empty reduced dimension. operand.shape={x.shape} axis={axis}"
            )
        if x.dtype.kind == "c":  # argmax C6: JAX's reducer compares with gt (lt), which refuses complex
            compare = "gt" if name == "argmax" else "lt"
            raise TypeError(
                f"{compare} does not accept dtype {x.dtype.name} at position 0. "
                "Accepted dtypes at position 0 are subtypes of integer, floating, bool."
            )
        shape = x.shape[:axis] + x.shape[axis + 1 :]
        return ShapedArray(shape, dtypes.canonicalize_dtype(index), weak_type=False)  # argmax C5

    return rule


argmax_p = standard_primitive("argmax", _arg_reduction_rule("argmax"))
argmin_p = standard_primitive("argmin", _arg_reduction_rule("argmin"))


# ---------------------------------------------------------------------------
# dot_general


class Precision(enum.Enum):
    """How precisely a backend should compute a contraction (``lax.Precision``).

    The NumPy backend always computes in float32 or better, so it ignores it;
    the param is stored and printed as JAX does.
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> Precision | None:
        if isinstance(value, str):
            return _PRECISION_NAMES.get(value.lower())
        return None

    def __repr__(self) -> str:
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name


# The string spellings JAX accepts for each precision.
_PRECISION_NAMES: dict[str, Precision] = {
    "default": Precision.DEFAULT,
    "fastest": Precision.DEFAULT,
    "bfloat16": Precision.DEFAULT,
    "high": Precision.HIGH,
    "bfloat16_3x": Precision.HIGH,
    "tensorfloat32": Precision.HIGH,
    "highest": Precision.HIGHEST,
    "float32": Precision.HIGHEST,
}

DotDimensionNumbers = tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]]


def canonicalize_dimension_numbers(dimension_numbers: Any) -> DotDimensionNumbers:
    """((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)) as tuples of ints."""
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError(
            "dot_general dimension_numbers must be ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)), "
            f"got {dimension_numbers!r}."
        ) from None

    def ints(what: str, v: Any) -> tuple[int, ...]:
        return int_tuple("dot_general", what, v)

    return (ints("lhs_contracting", lc), ints("rhs_contracting", rc)), (ints("lhs_batch", lb), ints("rhs_batch", rb))


# The dtype a mixed-dtype dot_general computes in: the "larger" operand dtype,
# ranked by kind (bool < integer < floating), then width, then signed over
# unsigned and bfloat16 over float16 (as JAX 0.10.2 picks; checked against it).
def _dot_rank(dt: np.dtype[Any]) -> tuple[int, int, int]:
    kind = 0 if dt == np.bool_ else 1 if dtypes.issubdtype(dt, np.integer) else 2
    tiebreak = int(dtypes.issubdtype(dt, np.signedinteger) or dt == np.dtype(dtypes.bfloat16))
    return kind, dt.itemsize, tiebreak


# Memoised (here and below): pure functions of dtypes, asked on every eager dot_general of the NumPy backend.
@functools.cache
def dot_input_dtype(lhs: np.dtype[Any], rhs: np.dtype[Any]) -> np.dtype[Any]:
    return max(lhs, rhs, key=_dot_rank)


def _bits(dt: np.dtype[Any]) -> int:
    return 1 if dt == np.bool_ else 8 * dt.itemsize


def _check_dims(side: str, aval: ShapedArray, batch: tuple[int, ...], contract: tuple[int, ...]) -> None:
    if any(not 0 <= d < aval.ndim for d in batch + contract):  # dot_general C1
        raise TypeError(
            f"dot_general requires {side} dimension numbers to be nonnegative and less than the number of "
            f"axes of the {side} value, got {side}_batch of {batch} and {side}_contracting of {contract} "
            f"for {side} of rank {aval.ndim}"
        )
    if len(set(batch)) != len(batch):  # dot_general C3
        raise TypeError(f"dot_general requires {side} batch dimensions to be distinct, got {side}_batch {batch}.")
    if len(set(contract)) != len(contract):  # dot_general C3
        raise TypeError(
            f"dot_general requires {side} contracting dimensions to be distinct, got {side}_contracting {contract}."
        )
    if set(batch) & set(contract):  # dot_general C4
        raise TypeError(
            f"dot_general requires {side} batch dimensions to be disjoint from contracting dimensions, got "
            f"{side}_batch {batch} and {side}_contracting {contract}."
        )


def _check_precision(precision: Any) -> None:
    ok = precision is None or (
        isinstance(precision, tuple) and len(precision) == 2 and all(isinstance(p, Precision) for p in precision)
    )
    if not ok:  # dot_general C8
        raise TypeError(f"dot_general precision must be None or a pair of lax.Precision values, got {precision!r}.")


def _dot_general_rule(
    lhs: ShapedArray,
    rhs: ShapedArray,
    *,
    dimension_numbers: Any,
    precision: Any,
    preferred_element_type: Any,
    out_sharding: Any = None,
) -> ShapedArray:
    check_no_sharding("dot_general", out_sharding)
    _check_precision(precision)
    (lc, rc), (lb, rb) = canonicalize_dimension_numbers(dimension_numbers)
    _check_dims("lhs", lhs, lb, lc)  # dot_general C1, C3, C4
    _check_dims("rhs", rhs, rb, rc)
    if len(lb) != len(rb):  # dot_general C2
        raise TypeError(
            "dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, got "
            f"lhs_batch {lb} and rhs_batch {rb}."
        )
    lhs_batch, rhs_batch = tuple(lhs.shape[d] for d in lb), tuple(rhs.shape[d] for d in rb)
    if lhs_batch != rhs_batch:  # dot_general C5
        raise TypeError(
            "dot_general requires lhs batch dimensions and rhs batch dimensions to have the same shape, "
            f"got {lhs_batch} and {rhs_batch}."
        )
    lhs_contract, rhs_contract = tuple(lhs.shape[d] for d in lc), tuple(rhs.shape[d] for d in rc)
    if lhs_contract != rhs_contract:  # dot_general C6
        raise TypeError(
            "dot_general requires contracting dimensions to have the same shape, got "
            f"{lhs_contract} and {rhs_contract}."
        )
    dtype = dot_input_dtype(lhs.dtype, rhs.dtype)
    if preferred_element_type is not None:
        preferred = dtypes.canonicalize_dtype(preferred_element_type)
        # Integer results may only widen; bool counts as 1 bit wide.
        narrower = _bits(preferred) < _bits(dtype)
        if dtypes.issubdtype(dtype, np.integer) and narrower:  # dot_general C7
            raise TypeError(
                "`preferred_element_type` must not be narrower than the original type, got "
                f"preferred_element_type of {preferred.name} for result type of {dtype.name}."
            )
        dtype = preferred
    lhs_free = tuple(n for i, n in enumerate(lhs.shape) if i not in lb + lc)
    rhs_free = tuple(n for i, n in enumerate(rhs.shape) if i not in rb + rc)
    return ShapedArray(lhs_batch + lhs_free + rhs_free, dtype, lhs.weak_type and rhs.weak_type)  # dot_general C9


dot_general_p = standard_primitive("dot_general", _dot_general_rule)


def _dot_general_params(params: dict[str, Any]) -> list[tuple[str, Any]]:
    # JAX writes the dimension numbers with lists inside and hides None params.
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    dn = f"(({list(lc)}, {list(rc)}), ({list(lb)}, {list(rb)}))"
    shown: list[tuple[str, Any]] = [("dimension_numbers", dn)]
    precision = params.get("precision")
    if precision is not None:
        shown.append(("precision", "(" + ", ".join(repr(p) for p in precision) + ")"))
    if params.get("preferred_element_type") is not None:
        shown.append(("preferred_element_type", params["preferred_element_type"]))
    return shown  # (out_sharding: the result's type says it, as in JAX's text)


def _complete_dot_general(
    params: dict[str, Any], in_avals: list[ShapedArray], out_avals: list[ShapedArray]
) -> dict[str, Any]:
    # The text has lists inside dimension_numbers and leaves out the None params.
    precision = params.get("precision")
    return {
        "dimension_numbers": canonicalize_dimension_numbers(params["dimension_numbers"]),
        "precision": None if precision is None else tuple(precision),
        "preferred_element_type": params.get("preferred_element_type"),
        "out_sharding": params.get("out_sharding"),
    }


param_filters["dot_general"] = _dot_general_params
param_completers["dot_general"] = _complete_dot_general
param_constructors["Precision"] = Precision  # precision=(Precision.HIGH, ...) reads back


@functools.cache
def dot_accumulation_dtypes(in_dtype: np.dtype[Any], out_dtype: np.dtype[Any]) -> tuple[np.dtype[Any], np.dtype[Any]]:
    """How dot_general computes (its Semantics in spec/primitives/reductions.md).

    Returns (stage, work): each operand is converted to the common input dtype
    ``in_dtype``, then to ``stage`` (rounding or wrapping as a conversion does),
    then to ``work``, the dtype the products are accumulated in; the result is
    then converted to ``out_dtype``. Every backend follows this, so it is
    stated once, here.
    """
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    if dtypes.issubdtype(in_dtype, np.floating):
        # Floats accumulate in float32 (float64 when either end is float64), round once.
        return in_dtype, f64 if f64 in (in_dtype, out_dtype) else f32
    if dtypes.issubdtype(out_dtype, np.floating):
        # Integer operands with a floating result are rounded to it first.
        return out_dtype, f64 if out_dtype == f64 else f32
    if out_dtype == np.bool_:
        # A boolean result is "any product nonzero": count in a wide enough integer.
        return in_dtype, np.dtype(np.int32) if in_dtype == np.bool_ else in_dtype
    # Integers (and bools with an integer result) wrap around in the result type.
    return out_dtype, out_dtype


def reduction_identity(name: str, dtype: np.dtype[Any]) -> Any:
    """The identity of the reduce_* primitive ``name`` at ``dtype``: what reducing nothing gives.

    (reduce_* Semantics in spec/primitives/reductions.md.) Backends start their
    reductions from it and ``lax.reduce`` recognises a monoid by it.
    """
    if name in ("reduce_sum", "reduce_or", "reduce_xor"):
        return np.zeros((), dtype)[()]
    if name == "reduce_prod":
        return np.ones((), dtype)[()]
    if dtype == np.bool_:
        return np.bool_(name in ("reduce_min", "reduce_and"))
    if name == "reduce_and":
        return np.array(-1).astype(dtype)[()]  # every bit set
    if dtypes.issubdtype(dtype, np.floating):
        inf = dtype.type(-np.inf if name == "reduce_max" else np.inf)
        if np.isinf(np.float32(inf)):
            return inf
        # A narrow float without infinities (float8_e4m3fn, ...): its extreme finite value.
        limits = dtypes.finfo(dtype)
        return dtype.type(limits.min if name == "reduce_max" else limits.max)
    if dtype.kind == "c":  # -inf + 0j / inf + 0j, as JAX's (max/min compare complex lexicographically)
        return np.array(-np.inf if name == "reduce_max" else np.inf, dtype)[()]
    info = dtypes.iinfo(dtype)
    return dtype.type(info.min if name == "reduce_max" else info.max)


# ===========================================================================
# Bind helpers (``minijax.lax`` checks the user's arguments, then calls these)


def canonicalize_precision(precision: Any) -> tuple[Precision, Precision] | None:
    """None, or a (lhs, rhs) pair of ``Precision`` from any spelling JAX accepts.

    None takes ``jax_default_matmul_precision`` when it is set, as JAX does at
    trace time (the jaxpr then shows the precision the flag names).
    """
    if precision is None:
        default = config.read("jax_default_matmul_precision")
        if default is None:
            return None
        if default.lower() not in _PRECISION_NAMES:
            raise NotImplementedError(
                f"jax_default_matmul_precision={default!r} names a dot algorithm preset "
                "(lax.DotAlgorithmPreset), which minijax does not implement; use 'default', "
                "'high' or 'highest' (or their aliases)"
            )
        return (Precision(default), Precision(default))
    try:
        if isinstance(precision, (str, Precision)):
            return (Precision(precision), Precision(precision))
        if isinstance(precision, (tuple, list)) and len(precision) == 2 and all(isinstance(p, (str, Precision)) for p in precision):
            return (Precision(precision[0]), Precision(precision[1]))
    except ValueError:
        pass
    raise ValueError(
        "Precision argument must be one of: None, a string in ['highest', 'float32', 'high', 'bfloat16_3x', "
        "'tensorfloat32', 'default', 'bfloat16', 'fastest'], a lax.Precision value, or a tuple of two "
        f"lax.Precision values or strings; but got {precision!r}."
    )


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None, preferred_element_type: Any = None,
                out_sharding: Any = None) -> Any:
    return dot_general_p.bind(
        lhs,
        rhs,
        dimension_numbers=canonicalize_dimension_numbers(dimension_numbers),
        precision=canonicalize_precision(precision),
        preferred_element_type=preferred_element_type,
        out_sharding=out_sharding,
    )


# ===========================================================================
# Autodiff rules (jvp, and transpose for the linear primitives)
#
# The rules bind primitives directly, so that the equations they stage are
# exactly the ones JAX stages (checked against JAX 0.10.2 by
# tests/test_ad_reductions_oracle.py). Under linearize a jvp rule runs with
# the split trace current: the primal-only work (comparisons, counts,
# slices of the primal) must stay in applications of its own, apart from
# the applications that touch the tangent. The other families' primitives
# are reached through their modules (ew., sp., slicing.), so that this module's
# namespace holds only its own.


def _kept_axes(ndim: int, removed: tuple[int, ...]) -> list[int]:
    """The axes of a rank-``ndim`` array that are not in ``removed``, in order."""
    return [i for i in range(ndim) if i not in removed]


# --- reduce_max, reduce_min: the tangent is averaged over the positions that
# attain the extremum (ties share it equally), as JAX defines it.


def _chooser_jvp(t: Any, ans: Any, x: Any, *, axes: tuple[int, ...]) -> Any:
    aval = get_aval(x)
    keepdims = tuple(1 if i in axes else n for i, n in enumerate(aval.shape))
    t_dtype = get_aval(t).dtype
    at_extremum = ew.eq_p.bind(x, sp.reshape(ans, keepdims))
    indicator = ew.convert_element_type_p.bind(at_extremum, new_dtype=t_dtype, weak_type=False, sharding=None)
    counts = sp.reduce_sum(indicator, axes)
    chosen = sp.reduce_sum(ew.mul_p.bind(t, indicator), axes)
    return ew.div_p.bind(chosen, counts)


ad.defjvp2(reduce_max_p, _chooser_jvp)
ad.defjvp2(reduce_min_p, _chooser_jvp)


# --- reduce_prod: JAX differentiates a pairwise product tree rather than
# dividing the product by each element, so zeros in the operand are exact.
# The reduced axes are moved to the front and flattened into one; each level
# multiplies the first half by the second (padded with 1 when the length is
# odd), carrying the tangent by the product rule.


def _reduce_prod_jvp(primals: Any, tangents: Any, *, axes: tuple[int, ...]) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    aval = get_aval(x)
    kept = _kept_axes(aval.ndim, tuple(axes))
    kept_shape = tuple(aval.shape[i] for i in kept)
    n = shape_size(aval.shape[a] for a in axes)
    perm = tuple(int(a) for a in axes) + tuple(kept)  # plain ints, as JAX's reshape makes them
    x = sp.reshape(x, (n, *kept_shape), perm)
    t = sp.reshape(ad.instantiate_zeros(t), (n, *kept_shape), perm)
    if n == 0:  # an empty product: the constant 1, with a zero tangent (after the reshapes, as JAX)
        ones = ew.full(kept_shape, 1, aval.dtype)
        return ones, ad.Zero(ad.tangent_aval(get_aval(ones)))
    one, zero = np.ones((), aval.dtype), np.zeros((), get_aval(t).dtype)
    rank = 1 + len(kept_shape)

    def rows(v: Any, start: int, stop: int) -> Any:
        shape = get_aval(v).shape
        return slicing.slice(v, (start, *[0] * (rank - 1)), (stop, *shape[1:]), (1,) * rank)

    while n > 1:
        half = (n + 1) // 2
        x1, t1 = rows(x, 0, half), rows(t, 0, half)
        x2, t2 = rows(x, half, n), rows(t, half, n)
        if n % 2:  # odd: pad the second half with the product's identity
            config = ((0, 1, 0), *[(0, 0, 0)] * (rank - 1))
            x2, t2 = slicing.pad(x2, one, config), slicing.pad(t2, zero, config)
        # d(x1 * x2) = t1 * x2 + x1 * t2, in the order mul's jvp stages it.
        x = ew.mul_p.bind(x1, x2)
        t = ad.add_tangents(ew.mul_p.bind(t1, x2), ew.mul_p.bind(x1, t2))
        n = half
    return sp.squeeze_p.bind(x, dimensions=(0,)), sp.squeeze_p.bind(t, dimensions=(0,))


ad.primitive_jvps[reduce_prod_p] = _reduce_prod_jvp


# --- Non-differentiable: logical reductions (bool/int operands, whose
# tangents are float0 anyway) and the index-valued argmax/argmin.

for _prim in (reduce_and_p, reduce_or_p, reduce_xor_p, argmax_p, argmin_p):
    ad.defjvp_zero(_prim)


# --- dot_general: bilinear. Its jvp is the sum of the two one-sided
# products; each transpose contracts the cotangent with the other operand
# and permutes the result back into the operand's axis order.


def _dot_general_jvp_lhs(t: Any, lhs: Any, rhs: Any, **params: Any) -> Any:
    return dot_general_p.bind(t, rhs, **params)


def _dot_general_jvp_rhs(t: Any, lhs: Any, rhs: Any, **params: Any) -> Any:
    return dot_general_p.bind(lhs, t, **params)


def _dot_cotangent(ct: Any, target: ShapedArray, other: Any, numbers: DotDimensionNumbers, target_is_lhs: bool, params: dict[str, Any]) -> Any:
    """The cotangent of the dot_general operand ``target``, ``other`` being the other operand.

    ``numbers`` are ((target_contract, other_contract), (target_batch,
    other_batch)); ``params`` the equation's other params. The cotangent's
    axes are (batch, lhs free, rhs free). Contracting it with ``other`` over
    other's free axes leaves (batch, target free, other's contracting axes
    in increasing order); target's contracting axes, paired with those and
    sorted the same way, say where the last group goes, and one transpose
    puts every axis back where the target has it.
    """
    (t_contract, o_contract), (t_batch, o_batch) = numbers
    t_free = _kept_axes(target.ndim, t_contract + t_batch)
    o_free = _kept_axes(get_aval(other).ndim, o_contract + o_batch)
    nb = len(t_batch)
    start = nb + len(t_free) if target_is_lhs else nb  # where other's free axes sit in ct
    ct_numbers = ((tuple(range(start, start + len(o_free))), tuple(o_free)), (tuple(range(nb)), o_batch))
    paired = [c for _, c in sorted(zip(o_contract, t_contract))]
    layout = [*t_batch, *t_free, *paired]  # the target axis each result axis is
    # shtypes: the cotangent is laid out as its operand (in the product's order), as in JAX; the
    # forward product's own out_sharding is no cotangent's.
    spec, named = explicit_spec(target), getattr(target, "sharding", None)
    given = None
    if spec is not None and isinstance(named, NamedSharding):
        given = NamedSharding(named.mesh, PartitionSpec(*(spec[a] for a in layout)))
    params = {**params, "out_sharding": given}
    outer, partial_sum_products.allowed = partial_sum_products.allowed, True  # shtypes: see core
    try:
        out = dot_general_p.bind(ct, other, dimension_numbers=canonicalize_dimension_numbers(ct_numbers), **params)
    finally:
        partial_sum_products.allowed = outer
    out = sp.transpose(out, tuple(int(i) for i in np.argsort(layout)))
    if get_aval(out).dtype != target.dtype:  # e.g. a preferred_element_type wider than the operand
        out = ew.convert_element_type_p.bind(out, new_dtype=target.dtype, weak_type=target.weak_type, sharding=None)
    return out


def _dot_general_transpose(ct: Any, lhs: Any, rhs: Any, *, dimension_numbers: Any, **params: Any) -> list[Any]:
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_linear = ad.is_undefined_primal(lhs)
    if lhs_linear == ad.is_undefined_primal(rhs):
        raise ValueError("dot_general transpose: exactly one operand must be linear (the other a known value).")
    target = lhs if lhs_linear else rhs
    if type(ct) is ad.Zero:
        zero = ad.Zero(ad.tangent_aval(target.aval))
        return [zero, None] if lhs_linear else [None, zero]
    if lhs_linear:
        return [_dot_cotangent(ct, lhs.aval, rhs, ((lc, rc), (lb, rb)), True, params), None]
    return [None, _dot_cotangent(ct, rhs.aval, lhs, ((rc, lc), (rb, lb)), False, params)]


ad.defjvp(dot_general_p, _dot_general_jvp_lhs, _dot_general_jvp_rhs)
ad.transpose_rules[dot_general_p] = _dot_general_transpose


# ===========================================================================
# Batching rules


for _prim in (*REDUCTION_PRIMITIVES.values(), argmax_p, argmin_p):
    if _prim is not sp.reduce_sum_p:  # (structural.py registers its rules)
        batching.defreducer(_prim)


def _dot_general_batcher(vals: Any, dims: Any, *, dimension_numbers: Any, **params: Any) -> tuple[Any, int]:
    """The vmapped axis becomes one more batch axis, placed first, when both operands have
    it, else one more free axis of the operand that has it (as in JAX)."""
    lhs, rhs = vals
    lbd, rbd = dims
    (lc, rc), (lb, rb) = dimension_numbers

    def bump(axes: tuple[int, ...], bdim: int | None) -> tuple[int, ...]:  # axis numbers once bdim is inserted
        return axes if bdim is None else tuple(a + 1 if a >= bdim else a for a in axes)

    lc, lb, rc, rb = bump(lc, lbd), bump(lb, lbd), bump(rc, rbd), bump(rb, rbd)
    if lbd is not None and rbd is not None:
        lb, rb, out_dim = (lbd, *lb), (rbd, *rb), 0
    elif lbd is not None:
        # The result's axes are (batch, lhs free, rhs free); the vmapped axis
        # is an lhs free axis, after the lhs free axes that precede it.
        out_dim = len(lb) + sum(1 for i in _kept_axes(get_aval(lhs).ndim, lc + lb) if i < lbd)
    else:
        # ... or an rhs free axis, after every batch and lhs free axis.
        before = sum(1 for i in _kept_axes(get_aval(rhs).ndim, rc + rb) if i < rbd)
        out_dim = get_aval(lhs).ndim - len(lc) + before
    # Plain ints, as JAX's dot_general makes them (operand dims may be NumPy integers).
    numbers = canonicalize_dimension_numbers(((lc, rc), (lb, rb)))
    given = params.get("out_sharding")
    if isinstance(given, NamedSharding):
        # shtypes: the given layout gains the vmapped axis's (as the operand that has it lays it out)
        owner, bdim = (lhs, lbd) if lbd is not None else (rhs, rbd)
        spec = explicit_spec(get_aval(owner))
        entries = list(given.spec) + [None] * max(0, out_dim - len(given.spec))
        entries.insert(out_dim, None if spec is None or bdim is None else spec[bdim])
        params = {**params, "out_sharding": NamedSharding(given.mesh, PartitionSpec(*entries))}
    return dot_general_p.bind(lhs, rhs, dimension_numbers=numbers, **params), out_dim


batching.primitive_batchers[dot_general_p] = _dot_general_batcher
