"""The XLA backend's structural and reduction lowerings agree with the NumPy reference.

One hypothesis differential test per primitive of ``minijax.primitives.structural``
and ``minijax.primitives.reductions``: random shapes (rank 0 and zero-size
dimensions included), params and every accepted dtype; the operation runs
eagerly on arrays placed on the ``xla`` device (``iota``, which has no
operand, through ``jit(..., backend="xla")``) and is compared with the
NumPy backend's implementation of the same primitive.

Exact agreement (bits, NaN positions and zero signs) is required for every
structural primitive, every integer/bool result, max/min/and/or/xor and
argmax/argmin. Floating-point sums, products and dot_general may add in
another order, so they are checked against an error bound (see
``_sum_bound``, ``_prod_bound``, ``_dot_bound``); those tolerances are:

- reduce_sum:  |xla - ref| <= n * eps(acc) * sum(|x|) + eps(out) * |ref| + tiny(out)
- reduce_prod: |xla - ref| <= (n * eps(acc) + eps(out)) * |ref| + tiny(out)
- dot_general: |xla - ref| <= k * eps(work) * (|lhs| . |rhs|) + eps(out) * |ref| + tiny(out)

with n the number of reduced elements, k the contracted size, acc/work the
accumulation dtype (float32 for float16/bfloat16/float32, float64 for
float64) and tiny(out) the smallest normal number of the result dtype
(XLA CPU flushes subnormal results to zero).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

pytest.importorskip("jaxlib", reason="the XLA backend needs jaxlib")


from minijax_numpy.table import IMPLS
from minijax_xla.backend import load_rules
from minijax_xla.lowering import LOWERINGS

import minijax
from minijax import dtypes
from minijax.backend import get_backend
from minijax.config import enable_x64
from minijax.core import Primitive, ShapedArray, primitive_named
from minijax.primitives.reductions import Precision
from minijax.testing.checks import families

pytestmark = pytest.mark.single_backend  # compares the xla backend with numpy, by name

XLA = get_backend("xla")
DEVICE = XLA.devices()[0]
load_rules()
get_backend("numpy")  # fills IMPLS with every family module of the reference

Array = np.ndarray[Any, Any]
Case = tuple[list[Array], dict[str, Any]]
Draw = Callable[[st.SearchStrategy[Any]], Any]

# Each example compiles one executable (tens of ms): a third of the profile's
# example count per primitive keeps the file fast and still scales with "thorough".
EXAMPLES = max(10, settings().max_examples // 3)

ALL = dtypes.supported_dtypes()
# argmax/argmin compare with lt/gt, which refuse complex operands (as in JAX).
ORDERED = tuple(d for d in ALL if not dtypes.issubdtype(d, np.complexfloating))
FLOATS = tuple(d for d in ALL if dtypes.issubdtype(d, np.floating))
INTS = tuple(d for d in ALL if dtypes.issubdtype(d, np.integer))
NUMBERS = INTS + FLOATS
BOOL_INTS = (np.dtype(np.bool_),) + INTS


def family_primitives() -> dict[str, Primitive]:
    names = [n for n, module in families().items() if module in ("structural", "slicing", "reductions")]
    return {n: primitive_named(n) for n in names}


PRIMS = family_primitives()


# ---------------------------------------------------------------------------
# Random values


def _values(
    draw: Draw, shape: tuple[int, ...], dtype: np.dtype[Any], kind: str = "any", specials: bool = True
) -> Array:
    """Values of ``dtype``: full-range and small integers, floats with NaN/inf/signed zeros.

    ``kind="dyadic"`` gives floats k/4 (|k| <= 8), which add and multiply
    exactly in every float dtype at these sizes; ``"unit"`` gives floats in
    [-2, 2], whose products neither overflow nor underflow float32.
    """
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtypes.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        if draw(st.booleans()):  # small values: ties for argmax, no wrapping
            return np.asarray(rng.integers(max(info.min, -3), 4, shape)).astype(dtype)
        return np.asarray(rng.integers(info.min, info.max, shape, endpoint=True, dtype=dtype))
    if kind == "dyadic":
        x = rng.integers(-8, 9, shape) / 4.0
    elif kind == "unit":
        x = rng.uniform(-2.0, 2.0, shape)
    else:
        x = rng.standard_normal(shape) * 4.0
    special = rng.random(shape) < (draw(st.sampled_from([0.0, 0.1, 0.3])) if specials else 0.0)
    x = np.where(special, rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0], shape), x)
    return np.asarray(x).astype(dtype)


def _shape(draw: Draw, min_rank: int = 0, max_rank: int = 3, min_dim: int = 0, max_dim: int = 4) -> tuple[int, ...]:
    rank = draw(st.integers(min_rank, max_rank))
    return tuple(draw(st.integers(min_dim, max_dim)) for _ in range(rank))


def _subset(draw: Draw, items: range | list[int], ordered: bool = False) -> tuple[int, ...]:
    chosen = [i for i in items if draw(st.booleans())]
    return tuple(chosen) if ordered else tuple(draw(st.permutations(chosen)))


# ---------------------------------------------------------------------------
# One case builder per primitive: draw -> (operands, params)


def _broadcast_in_dim(draw: Draw) -> Case:
    x_shape = _shape(draw)
    rank = len(x_shape) + draw(st.integers(0, 2))
    dims = tuple(draw(st.permutations(range(rank)))[: len(x_shape)])
    shape = [draw(st.integers(0, 3)) for _ in range(rank)]
    for n, d in zip(x_shape, dims):
        if n != 1:
            shape[d] = n
    x = _values(draw, x_shape, draw(st.sampled_from(ALL)))
    return [x], {"shape": tuple(shape), "broadcast_dimensions": dims, "sharding": None}


def _reshape(draw: Draw) -> Case:
    shape = _shape(draw)
    dims = tuple(draw(st.permutations(range(len(shape))))) if draw(st.booleans()) else None
    read = [shape[d] for d in dims] if dims is not None else list(shape)
    # Merge neighbouring sizes and sprinkle 1s: any shape of the same size.
    new: list[int] = []
    for n in read:
        if new and draw(st.booleans()):
            new[-1] *= n
        else:
            new.append(n)
        if draw(st.integers(0, 4)) == 0:
            new.append(1)
    x = _values(draw, shape, draw(st.sampled_from(ALL)))
    return [x], {"new_sizes": tuple(new), "dimensions": dims, "sharding": None}


def _transpose(draw: Draw) -> Case:
    x = _values(draw, _shape(draw, max_rank=4, max_dim=3), draw(st.sampled_from(ALL)))
    return [x], {"permutation": tuple(draw(st.permutations(range(x.ndim))))}


def _squeeze(draw: Draw) -> Case:
    shape = tuple(1 if draw(st.booleans()) else n for n in _shape(draw, max_rank=4))
    dims = _subset(draw, [i for i, n in enumerate(shape) if n == 1])
    return [_values(draw, shape, draw(st.sampled_from(ALL)))], {"dimensions": dims}


def _rev(draw: Draw) -> Case:
    x = _values(draw, _shape(draw), draw(st.sampled_from(ALL)))
    return [x], {"dimensions": _subset(draw, range(x.ndim))}


def _slice(draw: Draw) -> Case:
    x = _values(draw, _shape(draw, max_dim=6), draw(st.sampled_from(ALL)))
    starts = [draw(st.integers(0, n)) for n in x.shape]
    limits = [draw(st.integers(s, n)) for s, n in zip(starts, x.shape)]
    strides = None if draw(st.booleans()) else tuple(draw(st.integers(1, 3)) for _ in x.shape)
    return [x], {"start_indices": tuple(starts), "limit_indices": tuple(limits), "strides": strides}


def _start_indices(draw: Draw, shape: tuple[int, ...]) -> list[Array]:
    # Out-of-range starts on both sides, in any integer dtype: the clamping is under test.
    dt = draw(st.sampled_from(INTS))
    info = np.iinfo(dt)
    picks = st.one_of(st.integers(-8, 8), st.sampled_from([int(info.min), int(info.max)]))
    return [np.asarray(min(max(draw(picks), int(info.min)), int(info.max)), dtype=dt) for _ in shape]


def _dynamic_slice(draw: Draw) -> Case:
    x = _values(draw, _shape(draw), draw(st.sampled_from(ALL)))
    sizes = tuple(draw(st.integers(0, n)) for n in x.shape)
    return [x, *_start_indices(draw, x.shape)], {"slice_sizes": sizes}


def _dynamic_update_slice(draw: Draw) -> Case:
    dt = draw(st.sampled_from(ALL))
    x = _values(draw, _shape(draw), dt)
    update = _values(draw, tuple(draw(st.integers(0, n)) for n in x.shape), dt)
    return [x, update, *_start_indices(draw, x.shape)], {}


def _concatenate(draw: Draw) -> Case:
    shape = _shape(draw, min_rank=1)
    dim = draw(st.integers(0, len(shape) - 1))
    dt = draw(st.sampled_from(ALL))
    xs = []
    for _ in range(draw(st.integers(1, 3))):
        piece = list(shape)
        piece[dim] = draw(st.integers(0, 3))
        xs.append(_values(draw, tuple(piece), dt))
    return xs, {"dimension": dim}


def _pad(draw: Draw) -> Case:
    dt = draw(st.sampled_from(ALL))
    x = _values(draw, _shape(draw), dt)
    config = []
    for n in x.shape:
        lo, hi, interior = draw(st.integers(-3, 3)), draw(st.integers(-3, 3)), draw(st.integers(0, 2))
        size = lo + hi + n + max(n - 1, 0) * interior
        config.append((lo, hi - min(size, 0), interior))  # keep every result size >= 0
    return [x, _values(draw, (), dt)], {"padding_config": tuple(config)}


def _iota(draw: Draw) -> Case:
    shape = _shape(draw, min_rank=1)
    params = {"dtype": draw(st.sampled_from(NUMBERS)), "shape": shape, "sharding": None}
    return [], {**params, "dimension": draw(st.integers(0, len(shape) - 1))}


def _split(draw: Draw) -> Case:
    x = _values(draw, _shape(draw, min_rank=1, max_dim=6), draw(st.sampled_from(ALL)))
    axis = draw(st.integers(0, x.ndim - 1))
    cuts = sorted(draw(st.lists(st.integers(0, x.shape[axis]), max_size=3)))
    sizes = tuple(b - a for a, b in zip([0, *cuts], [*cuts, x.shape[axis]]))
    return [x], {"sizes": sizes, "axis": axis}


def _tile(draw: Draw) -> Case:
    x = _values(draw, _shape(draw), draw(st.sampled_from(ALL)))
    return [x], {"reps": tuple(draw(st.integers(0, 3)) for _ in x.shape)}


def _stack(draw: Draw) -> Case:
    shape, dt = _shape(draw), draw(st.sampled_from(ALL))
    xs = [_values(draw, shape, dt) for _ in range(draw(st.integers(1, 3)))]
    return xs, {"axis": draw(st.integers(0, len(shape)))}


def _reduction(name: str, accepted: tuple[np.dtype[Any], ...]) -> Callable[[Draw], Case]:
    def case(draw: Draw) -> Case:
        kind = "unit" if name == "reduce_prod" else "any"
        x = _values(draw, _shape(draw), draw(st.sampled_from(accepted)), kind)
        params: dict[str, Any] = {"axes": _subset(draw, range(x.ndim))}
        if name == "reduce_sum":
            params["out_sharding"] = None
        return [x], params

    return case


def _arg(draw: Draw) -> Case:
    shape = _shape(draw, min_rank=1)
    axis = draw(st.integers(0, len(shape) - 1))
    shape = shape[:axis] + (draw(st.integers(1, 5)),) + shape[axis + 1 :]
    x = _values(draw, shape, draw(st.sampled_from(ORDERED)), draw(st.sampled_from(["any", "dyadic"])))
    return [x], {"axes": (axis,), "index_dtype": draw(st.sampled_from(INTS))}


def _dot_general(draw: Draw) -> Case:
    batch = [draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 2)))]
    contract = [draw(st.integers(0, 4)) for _ in range(draw(st.integers(0, 2)))]

    def side() -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        # Lay out batch, contracting and free axes in a random order.
        free = [draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 2)))]
        roles = [("b", i) for i in range(len(batch))] + [("c", i) for i in range(len(contract))]
        order = draw(st.permutations(roles + [("f", i) for i in range(len(free))]))
        sizes = {"b": batch, "c": contract, "f": free}
        shape = tuple(sizes[r][i] for r, i in order)
        b = tuple(order.index(("b", i)) for i in range(len(batch)))
        c = tuple(order.index(("c", i)) for i in range(len(contract)))
        return shape, b, c

    (ls, lb, lc), (rs, rb, rc) = side(), side()
    ldt, rdt = draw(st.sampled_from(ALL)), draw(st.sampled_from(ALL))
    # Known divergence, not drawn: a bool operand times inf/NaN without a
    # contraction is 0 on XLA (and in real JAX: it rewrites convert(bool) * x
    # as a select) but NaN in the reference.
    finite = np.dtype(np.bool_) not in (ldt, rdt)
    lhs = _values(draw, ls, ldt, "dyadic", specials=finite)
    rhs = _values(draw, rs, rdt, "dyadic", specials=finite)
    preferred = draw(st.sampled_from([None, *ALL]))
    precision = draw(st.sampled_from([None, (Precision.DEFAULT, Precision.HIGHEST), (Precision.HIGH,) * 2]))
    params = {
        "dimension_numbers": ((lc, rc), (lb, rb)),
        "precision": precision,
        "preferred_element_type": preferred,
        "out_sharding": None,
    }
    try:
        PRIMS["dot_general"].abstract_eval(ShapedArray(ls, lhs.dtype), ShapedArray(rs, rhs.dtype), **params)
    except TypeError:  # a narrowing integer preferred_element_type (C7)
        params["preferred_element_type"] = None
    return [lhs, rhs], params


def _dim_as_value(draw: Draw) -> Case:
    return [], {"dim": draw(st.integers(0, 2**31 - 1))}


CASES: dict[str, Callable[[Draw], Case]] = {
    "broadcast_in_dim": _broadcast_in_dim,
    "reshape": _reshape,
    "transpose": _transpose,
    "squeeze": _squeeze,
    "rev": _rev,
    "slice": _slice,
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice,
    "concatenate": _concatenate,
    "pad": _pad,
    "iota": _iota,
    "dim_as_value": _dim_as_value,
    "split": _split,
    "tile": _tile,
    "stack": _stack,
    "reduce_sum": _reduction("reduce_sum", NUMBERS),
    "reduce_prod": _reduction("reduce_prod", NUMBERS),
    "reduce_max": _reduction("reduce_max", ALL),
    "reduce_min": _reduction("reduce_min", ALL),
    "reduce_and": _reduction("reduce_and", BOOL_INTS),
    "reduce_or": _reduction("reduce_or", BOOL_INTS),
    "reduce_xor": _reduction("reduce_xor", BOOL_INTS),
    "argmax": _arg,
    "argmin": _arg,
    "dot_general": _dot_general,
}


# ---------------------------------------------------------------------------
# Running and comparing


def run_xla(prim: Primitive, operands: list[Array], params: dict[str, Any]) -> list[Array]:
    """The primitive on the xla backend: eagerly on xla-placed arrays, or jitted when it has no operand."""
    if operands:
        out = prim.bind(*[minijax.device_put(x, device=DEVICE) for x in operands], **params)
    else:
        out = minijax.jit(lambda: prim.bind(**params), backend="xla")()
    return [np.asarray(o) for o in (out if prim.multiple_results else [out])]


def run_reference(prim: Primitive, operands: list[Array], params: dict[str, Any]) -> list[Array]:
    out = IMPLS[prim.name](*operands, **params)
    return [np.asarray(o) for o in (out if prim.multiple_results else [out])]


def _f64(x: Array) -> Array:
    return np.asarray(x).astype(np.float64)


def _acc_eps(dt: np.dtype[Any]) -> float:
    return float(np.finfo(np.float64 if dt == np.float64 else np.float32).eps)


def _sum_bound(x: Array, params: dict[str, Any], want: Array) -> Array:
    n = int(np.prod([x.shape[a] for a in params["axes"]]))
    abs_sum = np.sum(np.abs(_f64(x)), axis=params["axes"])
    info = dtypes.finfo(want.dtype)
    return np.asarray(n * _acc_eps(x.dtype) * abs_sum + float(info.eps) * np.abs(_f64(want)) + float(info.tiny))


def _prod_bound(x: Array, params: dict[str, Any], want: Array) -> Array:
    n = int(np.prod([x.shape[a] for a in params["axes"]]))
    info = dtypes.finfo(want.dtype)
    return (n * _acc_eps(x.dtype) + float(info.eps)) * np.abs(_f64(want)) + float(info.tiny)


def _dot_bound(lhs: Array, rhs: Array, params: dict[str, Any], want: Array) -> Array:
    (lc, _), _ = params["dimension_numbers"]
    k = int(np.prod([lhs.shape[d] for d in lc]))
    magnitude = IMPLS["dot_general"](
        np.abs(_f64(lhs)), np.abs(_f64(rhs)), **{**params, "preferred_element_type": np.dtype(np.float64)}
    )
    work = np.float64 if np.float64 in (lhs.dtype, rhs.dtype, want.dtype) else np.float32
    info = dtypes.finfo(want.dtype)
    return np.asarray(2 * k * float(np.finfo(work).eps) * magnitude + float(info.eps) * np.abs(_f64(want)) + float(info.tiny))


def assert_same(got: Array, want: Array, bound: Array | None = None) -> None:
    """Equal shape and dtype; equal values -- exactly (NaNs and zero signs
    included), or for floats within ``bound`` when one is given."""
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if not dtypes.issubdtype(want.dtype, np.floating):
        np.testing.assert_array_equal(got, want)
        return
    g, w = _f64(got), _f64(want)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    exact = np.isinf(w) | np.isinf(g) if bound is not None else ~np.isnan(w)
    np.testing.assert_array_equal(g[exact], w[exact])
    if bound is None:
        np.testing.assert_array_equal(np.signbit(g[exact]), np.signbit(w[exact]))
    else:
        close = ~(np.isnan(w) | exact)
        too_far = np.abs(g - w)[close] > np.broadcast_to(bound, w.shape)[close]
        assert not too_far.any(), f"beyond the tolerance: got {g[close][too_far]}, want {w[close][too_far]}"


def check(name: str, operands: list[Array], params: dict[str, Any]) -> None:
    prim = PRIMS[name]
    out_avals = prim.abstract_eval(*[ShapedArray(x.shape, x.dtype) for x in operands], **params)
    out_avals = out_avals if prim.multiple_results else [out_avals]
    got = run_xla(prim, operands, params)
    with np.errstate(all="ignore"):  # inf * 0 and the like are part of the test (also in the bounds)
        want = run_reference(prim, operands, params)
        _compare_outputs(name, operands, params, got, want, out_avals)


def _compare_outputs(
    name: str, operands: list[Array], params: dict[str, Any], got: list[Array], want: list[Array], out_avals: Any
) -> None:
    assert len(got) == len(want) == len(out_avals)
    for g, w, aval in zip(got, want, out_avals):
        assert g.shape == aval.shape and g.dtype == aval.dtype
        bound = None
        if dtypes.issubdtype(w.dtype, np.floating):
            if name == "reduce_sum":
                bound = _sum_bound(operands[0], params, w)
            elif name == "reduce_prod":
                bound = _prod_bound(operands[0], params, w)
            elif name == "dot_general":
                bound = _dot_bound(operands[0], operands[1], params, w)
        assert_same(g, w, bound)


# ---------------------------------------------------------------------------
# Tests


def test_every_family_primitive_has_a_lowering_and_a_differential_case() -> None:
    assert len(PRIMS) >= 24
    assert sorted(n for n in PRIMS if n not in LOWERINGS) == []
    assert sorted(PRIMS) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_xla_matches_numpy(name: str, data: st.DataObject) -> None:
    operands, params = CASES[name](data.draw)
    with enable_x64(True):  # keep 64-bit dtypes 64-bit on both backends
        check(name, operands, params)


def test_half_precision_sums_accumulate_in_float32() -> None:
    # 4096 ones: a float16/bfloat16 accumulator would stop at 2048/256.
    with enable_x64(True):
        for dt in (np.float16, dtypes.bfloat16):
            x = np.ones(4096, dt)
            check("reduce_sum", [x], {"axes": (0,), "out_sharding": None})
            (got,) = run_xla(PRIMS["reduce_sum"], [x], {"axes": (0,), "out_sharding": None})
            assert float(got) == 4096.0


def test_empty_reductions_give_the_identity() -> None:
    cases = [
        ("reduce_max", np.float32, -np.inf),
        ("reduce_min", np.float16, np.inf),
        ("reduce_max", np.int8, -128),
        ("reduce_min", np.uint16, 65535),
        ("reduce_and", np.int32, -1),
        ("reduce_or", np.bool_, False),
        ("reduce_prod", np.float32, 1.0),
    ]
    with enable_x64(True):
        for name, dt, want in cases:
            (got,) = run_xla(PRIMS[name], [np.zeros((0, 2), dt)], {"axes": (0,)})
            assert got.dtype == dt and (got == np.asarray(want, dt)).all(), (name, dt, got)


def test_argmax_nan_and_ties_pick_the_first() -> None:
    x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 5.0, 5.0, -0.0], [np.nan] * 4, [0.0, -0.0, 0.0, -1.0]], np.float32)
    with enable_x64(True):
        for name, want in (("argmax", [1, 1, 0, 0]), ("argmin", [1, 3, 0, 3])):
            (got,) = run_xla(PRIMS[name], [x], {"axes": (1,), "index_dtype": np.int32})
            assert got.tolist() == want, name


def test_dynamic_slice_clamps_extreme_starts() -> None:
    x = np.arange(10, dtype=np.float32)
    with enable_x64(True):
        for start in (np.int64(2**40), np.int64(-(2**40)), np.uint64(2**63 + 5), np.uint8(250), np.int8(-100)):
            check("dynamic_slice", [x, np.asarray(start)], {"slice_sizes": (3,)})
            check("dynamic_update_slice", [x, np.ones(3, np.float32), np.asarray(start)], {})


def test_iota_rounds_and_wraps_like_the_reference() -> None:
    with enable_x64(True):
        for dt, n in ((np.float16, 3000), (dtypes.bfloat16, 700), (np.int8, 300), (np.uint8, 600)):
            check("iota", [], {"dtype": np.dtype(dt), "shape": (2, n), "dimension": 1, "sharding": None})


def test_jit_of_several_family_ops() -> None:
    from minijax import lax

    def f(x: Any, i: Any) -> Any:
        y = lax.dynamic_slice(lax.rev(x, (0,)), (i, 0), (2, 3))
        return lax.dot_general(y, lax.transpose(x, (1, 0)), (((1,), (0,)), ((), ()))), lax.argmax(x, 1, np.int32)

    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    got = minijax.jit(f, backend="xla")(x, np.int32(5))
    want = f(x, np.int32(5))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
