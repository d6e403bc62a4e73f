"""The convolution primitive: conv_general_dilated.

``spec/primitives/convolution.md`` is the written specification; each check
below cites its constraint label (``# conv C3``). Names, params and messages
are JAX 0.10.2's. The jvp, transpose and batching rules are at the end of the
module.

A convolution is stated in a canonical axis order: lhs (batch, feature,
spatial...), rhs (out feature, in feature, spatial...), result (batch,
feature, spatial...). ``ConvDimensionNumbers`` says, for each operand and the
result, which of its axes is each canonical axis, so any layout (NHWC, HWIO,
...) is the canonical one seen through a permutation.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from minijax import dtypes
from minijax.core import ShapedArray, get_aval
from minijax.interpreters import ad, batching
from minijax.jaxpr_parse import param_completers, param_constructors
from minijax.primitives import elementwise as ew, structural as sp
from minijax.primitives.common import check_no_sharding, index_param, index_tuple_param, standard_primitive
from minijax.primitives.reductions import Precision, canonicalize_precision

__all__ = [
    "ConvDimensionNumbers",
    "conv_dimension_numbers",
    "conv_general_dilated",
    "conv_general_dilated_p",
    "conv_general_permutations",
    "conv_output_shape",
]

Shape = tuple[int, ...]
Pads = tuple[tuple[int, int], ...]


class ConvDimensionNumbers(NamedTuple):
    """Which axis of each operand is each canonical axis of a convolution.

    ``lhs_spec``: the lhs axes holding (batch, feature, spatial...).
    ``rhs_spec``: the rhs axes holding (out feature, in feature, spatial...).
    ``out_spec``: the result axes holding (batch, feature, spatial...).
    The spatial axes are listed in the same order in all three.
    """

    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


# ``ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), ...)`` in a jaxpr's text reads back.
param_constructors["ConvDimensionNumbers"] = ConvDimensionNumbers


# ---------------------------------------------------------------------------
# Dimension numbers from strings such as ('NHWC', 'HWIO', 'NHWC')


def conv_general_permutations(dimension_numbers: Any) -> tuple[Shape, Shape, Shape]:
    """The (lhs, rhs, out) specs that three layout strings describe.

    'N' and 'C' mark the batch and feature axes of the lhs and the result,
    'O' and 'I' the out and in feature axes of the kernel; any other letters
    name spatial axes, in the order the kernel string lists them.
    """
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(pairs):
        spec = dimension_numbers[i]
        if not spec.count(a) == spec.count(b) == 1:  # conv C16
            raise TypeError(
                f"convolution dimension_numbers[{i}] must contain the characters '{a}' and '{b}' exactly once, got {spec}."
            )
        if len(spec) != len(set(spec)):  # conv C16
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate characters, got {spec}.")
    spatial = [set(s) - set(p) for s, p in zip(dimension_numbers, pairs)]
    if not spatial[0] == spatial[1] == spatial[2]:  # conv C16
        raise TypeError(
            f"convolution dimension_numbers elements must each have the same set of spatial characters, got {dimension_numbers}."
        )

    def perm(spec: str, pair: tuple[str, str]) -> Shape:
        others = sorted((i for i, c in enumerate(spec) if c not in pair), key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *others)

    return perm(lhs_spec, pairs[0]), perm(rhs_spec, pairs[1]), perm(out_spec, pairs[2])


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int], dimension_numbers: Any) -> ConvDimensionNumbers:
    """``dimension_numbers`` (None, three layout strings, or ConvDimensionNumbers) as ConvDimensionNumbers."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):  # conv C15
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got {len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)):  # conv C16
        raise TypeError(f"convolution dimension_numbers must be tuple/list or None, got {type(dimension_numbers)}.")
    if len(dimension_numbers) != 3:  # conv C16
        raise TypeError(f"convolution dimension_numbers list/tuple must be length 3, got {len(dimension_numbers)}.")
    if not all(isinstance(s, str) for s in dimension_numbers):  # conv C16
        raise TypeError(f"convolution dimension_numbers elements must be strings, got {tuple(map(type, dimension_numbers))}.")
    for i, s in enumerate(dimension_numbers):
        if len(s) != len(lhs_shape):  # conv C16
            raise TypeError(
                f"convolution dimension_numbers[{i}] must have len equal to the ndim of lhs and rhs, got {len(s)} "
                f"for lhs and rhs shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}."
            )
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


# ---------------------------------------------------------------------------
# The shape rule


def dilate_dim(size: int, dilation: int) -> int:
    """The size of an axis of ``size`` elements with ``dilation - 1`` holes between neighbours."""
    return 0 if size == 0 else 1 + dilation * (size - 1)


def conv_output_shape(lhs_shape: Sequence[int], rhs_shape: Sequence[int], strides: Sequence[int], pads: Sequence[tuple[int, int]], batch_group_count: int = 1) -> Shape:
    """The canonical (batch, feature, spatial...) result shape for canonical operand shapes
    (dilations already applied) and explicit pads."""
    if len(pads) != len(lhs_shape) - 2:  # conv C11
        raise TypeError(f"Wrong number of explicit pads for convolution: expected {len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [n + lo + hi for n, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):  # conv C12
        raise ValueError(
            "Negative padding is larger than the size of the corresponding dimension: "
            f"got padding={tuple(tuple(p) for p in pads)} for lhs_shape[2:]={tuple(lhs_shape[2:])}"
        )
    # A window larger than the padded input fits nowhere: that axis is empty (conv C13).
    spatial = tuple(max((p - k) // s + 1, 0) for p, k, s in zip(padded, rhs_shape[2:], strides))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0], *spatial)


def _spec(what: str, spec: Any, ndim: int) -> Shape:
    axes = index_tuple_param("conv_general_dilated", what, spec)
    if sorted(axes) != list(range(ndim)):  # conv C14
        raise TypeError(
            f"conv_general_dilated dimension_numbers.{what} must list each of the {ndim} axes once, got {axes}."
        )
    return axes


def canonical_dimension_numbers(dimension_numbers: Any, ndim: int) -> ConvDimensionNumbers:
    """``dimension_numbers`` checked (a ConvDimensionNumbers of permutations of range(ndim)), with int tuples."""
    if not isinstance(dimension_numbers, ConvDimensionNumbers):  # conv C14
        raise TypeError(
            f"conv_general_dilated dimension_numbers must be a ConvDimensionNumbers, got {dimension_numbers!r}."
        )
    lhs, rhs, out = dimension_numbers
    return ConvDimensionNumbers(_spec("lhs_spec", lhs, ndim), _spec("rhs_spec", rhs, ndim), _spec("out_spec", out, ndim))


def _pads(padding: Any) -> Pads:
    try:
        return tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):  # conv C11
        raise TypeError(f"conv_general_dilated padding must be a sequence of (low, high) integer pairs, got {padding!r}.") from None


def _check_precision(precision: Any) -> None:
    ok = precision is None or (
        isinstance(precision, tuple) and len(precision) == 2 and all(isinstance(p, Precision) for p in precision)
    )
    if not ok:  # conv C10
        raise TypeError(f"conv_general_dilated precision must be None or a pair of lax.Precision values, got {precision!r}.")


def _result_dtype(lhs: ShapedArray, rhs: ShapedArray, preferred_element_type: Any) -> np.dtype[Any]:
    ew.check_same_dtypes("conv_general_dilated", [lhs, rhs])  # conv C8
    dtype = lhs.dtype
    if preferred_element_type is None:
        return dtype
    preferred = dtypes.canonicalize_dtype(preferred_element_type)
    # conv C9: JAX's rule for preferred_element_type (as for dot_general in JAX).
    int_to_float = dtypes.issubdtype(dtype, np.integer) and dtypes.issubdtype(preferred, np.floating)
    if not int_to_float:
        for kind in (np.integer, np.floating, np.complexfloating):
            if dtypes.issubdtype(dtype, kind) and not dtypes.issubdtype(preferred, kind):
                raise TypeError(
                    "Input type is incompatible with `preferred_element_type`. The compatible combinations of "
                    "(input_type, preferred_element_type) are (integral, integral), (integral, floating), "
                    "(floating, floating), (complex, complex."
                )
        if dtypes.issubdtype(dtype, np.signedinteger) and not dtypes.issubdtype(preferred, np.signedinteger):
            raise TypeError("`preferred_element_type` must have the same signedness as the original type.")
    if preferred.itemsize < dtype.itemsize:
        raise TypeError("`preferred_element_type` must not be narrower than the original type.")
    return preferred


def _conv_rule(
    lhs: ShapedArray,
    rhs: ShapedArray,
    *,
    window_strides: Any,
    padding: Any,
    lhs_dilation: Any,
    rhs_dilation: Any,
    dimension_numbers: Any,
    feature_group_count: Any,
    batch_group_count: Any,
    precision: Any,
    preferred_element_type: Any,
    out_sharding: Any = None,
) -> ShapedArray:
    name = "conv_general_dilated"
    check_no_sharding(name, out_sharding)
    if lhs.ndim != rhs.ndim:  # conv C1
        raise ValueError(
            f"conv_general_dilated lhs and rhs must have the same number of dimensions, but got {lhs.shape} and {rhs.shape}."
        )
    if lhs.ndim < 2:  # conv C1
        raise TypeError(f"conv_general_dilated operands must have at least 2 dimensions, got {lhs.shape} and {rhs.shape}.")
    dn = canonical_dimension_numbers(dimension_numbers, lhs.ndim)  # conv C14
    fgc = index_param(name, "feature_group_count", feature_group_count)
    bgc = index_param(name, "batch_group_count", batch_group_count)
    lhs_c = tuple(lhs.shape[i] for i in dn.lhs_spec)
    rhs_c = tuple(rhs.shape[i] for i in dn.rhs_spec)
    if fgc <= 0:  # conv C2
        raise ValueError(f"conv_general_dilated feature_group_count must be a positive integer, got {fgc}.")
    if lhs_c[1] % fgc:  # conv C3
        raise ValueError(
            "conv_general_dilated feature_group_count must divide lhs feature dimension size, "
            f"but {fgc} does not divide {lhs_c[1]}."
        )
    if lhs_c[1] // fgc != rhs_c[1]:  # conv C4
        raise ValueError(
            "conv_general_dilated lhs feature dimension size divided by feature_group_count must equal the rhs "
            f"input feature dimension size, but {lhs_c[1]} // {fgc} != {rhs_c[1]}."
        )
    if rhs_c[0] % fgc:  # conv C5
        raise ValueError(
            "conv_general_dilated rhs output feature dimension size must be a multiple of feature_group_count, "
            f"but {rhs_c[0]} is not a multiple of {fgc}."
        )
    if bgc <= 0:  # conv C2
        raise ValueError(f"conv_general_dilated batch_group_count must be a positive integer, got {bgc}.")
    if bgc > 1 and lhs_c[0] % bgc:  # conv C6
        raise ValueError(
            f"conv_general_dilated batch_group_count must divide lhs batch dimension size, but {bgc} does not divide {lhs_c[0]}."
        )
    if rhs_c[0] % bgc:  # conv C6
        raise ValueError(
            "conv_general_dilated rhs output feature dimension size must be a multiple of batch_group_count, "
            f"but {rhs_c[0]} is not a multiple of {bgc}."
        )
    if bgc > 1 and fgc > 1:  # conv C7
        raise ValueError(
            "At most one of batch_group_count and feature_group_count may be > 1, "
            f"got batch_group_count={bgc} and feature_group_count={fgc}"
        )
    nsp = lhs.ndim - 2
    strides = index_tuple_param(name, "window_strides", window_strides)
    if len(strides) != nsp:  # conv C11
        raise ValueError(
            "conv_general_dilated window and window_strides must have the same number of dimensions, "
            f"but got {nsp} and {len(strides)}"
        )
    lhs_dil = index_tuple_param(name, "lhs_dilation", lhs_dilation)
    rhs_dil = index_tuple_param(name, "rhs_dilation", rhs_dilation)
    for what, values in (("lhs_dilation", lhs_dil), ("rhs_dilation", rhs_dil)):
        if len(values) != nsp:  # conv C11
            raise ValueError(f"conv_general_dilated {what} must have {nsp} entries, one per spatial dimension, got {values}.")
        if any(d <= 0 for d in values):  # conv C12
            raise TypeError(f"All dilations must be positive, got {values}.")
    # JAX leaves these two to XLA, which rejects them while compiling (conv C12).
    if any(s <= 0 for s in strides):
        raise ValueError(f"conv_general_dilated window_strides must be positive, got {strides}.")
    if any(k == 0 for k in rhs_c[2:]):
        raise ValueError(f"conv_general_dilated window (the rhs spatial dimensions) must not be empty, got rhs shape {rhs.shape}.")
    pads = _pads(padding)
    _check_precision(precision)  # conv C10
    lhs_t = (*lhs_c[:2], *(dilate_dim(n, d) for n, d in zip(lhs_c[2:], lhs_dil)))
    rhs_t = (*rhs_c[:2], *(dilate_dim(n, d) for n, d in zip(rhs_c[2:], rhs_dil)))
    out_c = conv_output_shape(lhs_t, rhs_t, strides, pads, bgc)  # conv C11-C13
    out_shape = [0] * lhs.ndim
    for i, axis in enumerate(dn.out_spec):
        out_shape[axis] = out_c[i]
    dtype = _result_dtype(lhs, rhs, preferred_element_type)  # conv C8, C9
    return ShapedArray(tuple(out_shape), dtype, lhs.weak_type and rhs.weak_type)  # conv C17


conv_general_dilated_p = standard_primitive("conv_general_dilated", _conv_rule)


def _complete_conv(params: dict[str, Any], in_avals: list[ShapedArray], out_avals: list[ShapedArray]) -> dict[str, Any]:
    # The text shows every param; read back, sequences are made tuples of ints and a precision pair a tuple.
    params = dict(params)
    dn = params.get("dimension_numbers")
    if isinstance(dn, ConvDimensionNumbers):
        params["dimension_numbers"] = ConvDimensionNumbers(*(tuple(s) for s in dn))
    precision = params.get("precision")
    if isinstance(precision, list):
        params["precision"] = tuple(precision)
    for key in ("window_strides", "lhs_dilation", "rhs_dilation"):
        if isinstance(params.get(key), list):
            params[key] = tuple(params[key])
    if isinstance(params.get("padding"), (list, tuple)):
        params["padding"] = tuple(tuple(p) if isinstance(p, list) else p for p in params["padding"])
    return params


param_completers["conv_general_dilated"] = _complete_conv


# ===========================================================================
# Bind helper (``minijax.lax.conv_general_dilated`` resolves string padding first)


def conv_general_dilated(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int],
    rhs_dilation: Sequence[int],
    dimension_numbers: ConvDimensionNumbers,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Bind conv_general_dilated as JAX's ``lax.conv_general_dilated`` would with explicit
    padding: the pads become Python ints, the other sequences tuples of their elements as given."""
    return conv_general_dilated_p.bind(
        lhs,
        rhs,
        window_strides=tuple(window_strides),
        padding=tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding),
        lhs_dilation=tuple(lhs_dilation),
        rhs_dilation=tuple(rhs_dilation),
        dimension_numbers=ConvDimensionNumbers(*(tuple(s) for s in dimension_numbers)),
        feature_group_count=feature_group_count,
        batch_group_count=batch_group_count,
        precision=canonicalize_precision(precision),
        preferred_element_type=preferred_element_type,
        out_sharding=None,
    )


# ===========================================================================
# Transformation rules: jvp, transpose and batching
#
# The convolution is bilinear: its jvp is the sum of the two one-sided
# convolutions, and its transpose with respect to either operand is again a
# convolution. Ignoring the spatial axes, it is a matrix product
# [batch, in] x [in, out] -> [batch, out]; the cotangent of the lhs is
# [batch, out] x [out, in] (the kernel with its feature axes swapped and its
# window reversed, strides and lhs dilation trading places), and the cotangent
# of the kernel is [in, batch] x [batch, out] (the lhs and the cotangent seen
# with their batch and feature axes swapped, strides and rhs dilation trading
# places). Feature groups of the forward convolution become batch groups of
# the kernel's transpose and vice versa.


def _swap01(spec: Sequence[int]) -> Shape:
    return (spec[1], spec[0], *spec[2:])


def reshape_axis_into(src: int, dst: int, x: Any) -> Any:
    """``x`` with axis ``src`` merged into axis ``dst`` (numbered once ``src`` is removed), as its major part."""
    shape = get_aval(x).shape
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new_shape = [n for i, n in enumerate(shape) if i != src]
    new_shape[dst] *= shape[src]
    return sp.reshape(x, new_shape, perm)


def reshape_axis_out_of(src: int, size1: int, x: Any) -> Any:
    """``x`` with axis ``src`` split into (size1, rest)."""
    shape = list(get_aval(x).shape)
    shape[src : src + 1] = [size1, shape[src] // size1]
    return sp.reshape(x, shape)


def _dilated(shape: Sequence[int], dilation: Sequence[int]) -> list[int]:
    return [dilate_dim(n, d) for n, d in zip(shape, dilation)]


def _lhs_transpose_pads(lhs_sp: Sequence[int], rhs_sp: Sequence[int], strides: Sequence[int], out_sp: Sequence[int], padding: Pads, lhs_dil: Sequence[int], rhs_dil: Sequence[int]) -> Pads:
    lhs_d, rhs_d, out_d = _dilated(lhs_sp, lhs_dil), _dilated(rhs_sp, rhs_dil), _dilated(out_sp, strides)
    before = [k - lo - 1 for k, (lo, _) in zip(rhs_d, padding)]
    after = [n + k - 1 - o - b for n, k, o, b in zip(lhs_d, rhs_d, out_d, before)]
    return tuple(zip(before, after))


def _rhs_transpose_pads(lhs_sp: Sequence[int], rhs_sp: Sequence[int], strides: Sequence[int], out_sp: Sequence[int], padding: Pads, lhs_dil: Sequence[int], rhs_dil: Sequence[int]) -> Pads:
    lhs_d, rhs_d, out_d = _dilated(lhs_sp, lhs_dil), _dilated(rhs_sp, rhs_dil), _dilated(out_sp, strides)
    return tuple((lo, o - n + k - lo - 1) for n, k, o, (lo, _) in zip(lhs_d, rhs_d, out_d, padding))


def _convert_to(x: Any, aval: ShapedArray) -> Any:
    if get_aval(x).dtype == aval.dtype:
        return x
    return ew.convert_element_type_p.bind(x, new_dtype=aval.dtype, weak_type=False, sharding=None)


def _transpose_lhs(ct: Any, lhs: ShapedArray, rhs: Any, params: dict[str, Any]) -> Any:
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    rhs_shape = get_aval(rhs).shape
    kernel = rhs
    if fgc > 1 or bgc > 1:
        # Move the group out of the kernel's out features into its in features.
        kernel = reshape_axis_out_of(rhs_spec[0], max(fgc, bgc), kernel)
        kernel = reshape_axis_into(rhs_spec[0], rhs_spec[1], kernel)
    ct_shape = get_aval(ct).shape
    pads = _lhs_transpose_pads(
        [lhs.shape[i] for i in lhs_spec[2:]],
        [rhs_shape[i] for i in rhs_spec[2:]],
        params["window_strides"],
        [ct_shape[i] for i in out_spec[2:]],
        params["padding"],
        params["lhs_dilation"],
        params["rhs_dilation"],
    )
    kernel = sp.rev_p.bind(kernel, dimensions=tuple(rhs_spec[2:]))
    kernel = _convert_to(kernel, get_aval(ct).strip_weak_type().update(shape=get_aval(kernel).shape))
    out = conv_general_dilated(
        ct,
        kernel,
        window_strides=params["lhs_dilation"],
        padding=pads,
        lhs_dilation=params["window_strides"],
        rhs_dilation=params["rhs_dilation"],
        dimension_numbers=ConvDimensionNumbers(out_spec, _swap01(rhs_spec), lhs_spec),
        feature_group_count=max(fgc, bgc),
        batch_group_count=1,
        precision=params["precision"],
        preferred_element_type=params["preferred_element_type"],
    )
    out = _convert_to(out, lhs)
    if bgc > 1:
        out = reshape_axis_out_of(lhs_spec[1], bgc, out)
        out = reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
    return out


def _transpose_rhs(ct: Any, lhs: Any, rhs: ShapedArray, params: dict[str, Any]) -> Any:
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    ct_shape = get_aval(ct).shape
    lhs_shape = get_aval(lhs).shape
    pads = _rhs_transpose_pads(
        [lhs_shape[i] for i in lhs_spec[2:]],
        [rhs.shape[i] for i in rhs_spec[2:]],
        params["window_strides"],
        [ct_shape[i] for i in out_spec[2:]],
        params["padding"],
        params["lhs_dilation"],
        params["rhs_dilation"],
    )
    lhs = _convert_to(lhs, get_aval(ct).strip_weak_type().update(shape=lhs_shape))
    out = conv_general_dilated(
        lhs,
        ct,
        window_strides=params["rhs_dilation"],
        padding=pads,
        lhs_dilation=params["lhs_dilation"],
        rhs_dilation=params["window_strides"],
        dimension_numbers=ConvDimensionNumbers(_swap01(lhs_spec), _swap01(out_spec), _swap01(rhs_spec)),
        feature_group_count=bgc,
        batch_group_count=fgc,
        precision=params["precision"],
        preferred_element_type=params["preferred_element_type"],
    )
    return _convert_to(out, rhs)


def _conv_transpose(ct: Any, lhs: Any, rhs: Any, **params: Any) -> list[Any]:
    lhs_linear = ad.is_undefined_primal(lhs)
    if lhs_linear == ad.is_undefined_primal(rhs):
        raise ValueError("conv_general_dilated transpose: exactly one operand must be linear (the other a known value).")
    target = lhs if lhs_linear else rhs
    zero = ad.Zero(ad.tangent_aval(target.aval))
    if type(ct) is ad.Zero:
        return [zero, None] if lhs_linear else [None, zero]
    if lhs_linear:
        return [_transpose_lhs(ct, lhs.aval, rhs, params), None]
    if 0 in get_aval(ct).shape:
        # An empty cotangent contributes nothing to the kernel, and its transpose would
        # be a convolution with an empty window (JAX makes the same exception).
        return [None, zero]
    return [None, _transpose_rhs(ct, lhs, rhs.aval, params)]


def _jvp_lhs(t: Any, lhs: Any, rhs: Any, **params: Any) -> Any:
    return conv_general_dilated_p.bind(t, rhs, **params)


def _jvp_rhs(t: Any, lhs: Any, rhs: Any, **params: Any) -> Any:
    return conv_general_dilated_p.bind(lhs, t, **params)


ad.defjvp(conv_general_dilated_p, _jvp_lhs, _jvp_rhs)
ad.transpose_rules[conv_general_dilated_p] = _conv_transpose


# --- batching: the vmapped axis is folded into an axis the convolution already
# has (the batch, or the features with one more group), never looped over.


def _conv_batcher(vals: Sequence[Any], dims: Sequence[batching.BatchDim], **params: Any) -> tuple[Any, int]:
    lhs, rhs = vals
    lbd, rbd = dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]

    def bind(new_lhs: Any, new_rhs: Any, **changes: Any) -> Any:
        return conv_general_dilated_p.bind(new_lhs, new_rhs, **{**params, **changes})

    if lbd is None and rbd is None:
        raise ValueError("a batching rule was called with no batched operand")
    size = get_aval(lhs).shape[lbd] if lbd is not None else get_aval(rhs).shape[batching.only_batch_dim([rbd])]
    if size == 0:
        # Folding an empty axis into another would lose that axis's size: compute the empty result directly.
        lhs_a, rhs_a = get_aval(lhs), get_aval(rhs)
        lhs_u = lhs_a if lbd is None else lhs_a.update(shape=tuple(n for i, n in enumerate(lhs_a.shape) if i != lbd))
        rhs_u = rhs_a if rbd is None else rhs_a.update(shape=tuple(n for i, n in enumerate(rhs_a.shape) if i != rbd))
        out = _conv_rule(lhs_u, rhs_u, **params)
        return ew.full((0, *out.shape), 0, out.dtype), 0
    if lbd is not None and rbd is not None:
        if bgc > 1:
            new_lhs = reshape_axis_into(lbd, lhs_spec[0], lhs)
            changes = {"batch_group_count": bgc * size}
        else:
            new_lhs = reshape_axis_into(lbd, lhs_spec[1], lhs)
            changes = {"feature_group_count": fgc * size}
        out = bind(new_lhs, reshape_axis_into(rbd, rhs_spec[0], rhs), **changes)
        return reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    if lbd is not None:
        if bgc == 1:
            out = bind(reshape_axis_into(lbd, lhs_spec[0], lhs), rhs)
        else:
            # The batch groups must stay outermost in the lhs batch axis: split them off,
            # put the vmapped axis inside them, and merge back.
            new_lhs = reshape_axis_out_of(lhs_spec[0] + int(lbd <= lhs_spec[0]), bgc, lhs)
            new_lhs = reshape_axis_into(lbd + int(lhs_spec[0] < lbd), lhs_spec[0] + 1, new_lhs)
            new_lhs = reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
            out = bind(new_lhs, rhs)
        return reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
    assert rbd is not None
    if fgc == 1 and bgc == 1:
        out = bind(lhs, reshape_axis_into(rbd, rhs_spec[0], rhs))
        return reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    # The groups must stay outermost in the kernel's out features: the vmapped
    # axis goes inside each group, and comes out of each group of the result.
    groups = max(fgc, bgc)
    new_rhs = reshape_axis_out_of(rhs_spec[0] + int(rbd <= rhs_spec[0]), groups, rhs)
    new_rhs = reshape_axis_into(rbd + int(rhs_spec[0] < rbd), rhs_spec[0] + 1, new_rhs)
    new_rhs = reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
    out = bind(lhs, new_rhs)
    out = reshape_axis_out_of(out_spec[1], groups, out)
    out = reshape_axis_out_of(out_spec[1] + 1, size, out)
    out = reshape_axis_into(out_spec[1], out_spec[1] + 1, out)
    return out, out_spec[1]


batching.primitive_batchers[conv_general_dilated_p] = _conv_batcher
