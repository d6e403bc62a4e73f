"""The gather and scatter primitives: values in every mode on each backend, their rules, params and errors.

Values are checked against a loop-by-loop reference written here from the
spec (``spec/primitives/indexing.md``), independent of both backends, over
the samplers' random dimension numbers (batching dims, collapsed / inserted
axes, windows, out-of-bounds indices) and colliding updates. The jvp,
transpose and batching rules get targeted tests on top of the generic law
suites (tests/test_ad_laws.py, tests/test_vmap_laws.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minijax
import minijax.numpy as jnp
from minijax import lax
from minijax.interpreters import ad
from minijax.jaxpr import eval_jaxpr
from minijax.jaxpr_parse import parse_jaxpr
from minijax.numpy.indexing import take_along_axis
from minijax.primitives.indexing import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    gather_p,
    gather_shape,
    scatter_add_p,
    scatter_p,
)
from minijax.testing.samplers import SAMPLERS
from minijax.testing.strategies import seeds

CLIP, FILL, PROMISE = GatherScatterMode.CLIP, GatherScatterMode.FILL_OR_DROP, GatherScatterMode.PROMISE_IN_BOUNDS
ROWS = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
POINTS = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
ROW_UPDATES = ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
F32 = np.float32


def i32(*values: Any) -> np.ndarray:
    return np.array(values, np.int32)


# ---------------------------------------------------------------------------
# A reference from the spec, one element at a time


def _start(vector: np.ndarray, index_map: Any, operand_shape: tuple[int, ...], window: list[int]) -> tuple[list[int], bool]:
    starts = [0] * len(operand_shape)
    fits = True
    for k, d in enumerate(index_map):
        s = int(vector[k])
        upper = operand_shape[d] - window[d]
        fits = fits and 0 <= s <= upper
        starts[d] = min(max(s, 0), max(upper, 0))
    return starts, fits


def ref_gather(operand: np.ndarray, indices: np.ndarray, dn: GatherDimensionNumbers, slice_sizes: Any,
               mode: GatherScatterMode, fill_value: Any) -> np.ndarray:
    out_shape = gather_shape(indices.shape, dn, slice_sizes)
    out = np.zeros(out_shape, operand.dtype)
    batch_pos = [i for i in range(len(out_shape)) if i not in dn.offset_dims]
    window_axes = [d for d in range(operand.ndim) if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    for where in np.ndindex(*out_shape):
        b = tuple(where[p] for p in batch_pos)
        starts, fits = _start(indices[b], dn.start_index_map, operand.shape, list(slice_sizes))
        for d, j in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
            starts[d] = b[j]
        for k, d in enumerate(window_axes):
            starts[d] += where[dn.offset_dims[k]]
        out[where] = fill_value if (mode is FILL and not fits) else operand[tuple(starts)]
    return out


_COMBINE = {
    "scatter": lambda old, new: new,
    "scatter-add": lambda old, new: old + new,
    "scatter-sub": lambda old, new: old - new,
    "scatter-mul": lambda old, new: old * new,
    "scatter-min": np.minimum,
    "scatter-max": np.maximum,
}


def ref_scatter(name: str, operand: np.ndarray, indices: np.ndarray, updates: np.ndarray, dn: ScatterDimensionNumbers,
                mode: GatherScatterMode) -> np.ndarray:
    out = operand.copy()
    scatter_pos = [i for i in range(updates.ndim) if i not in dn.update_window_dims]
    window_axes = [d for d in range(operand.ndim) if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    window = [1] * operand.ndim
    for k, d in enumerate(window_axes):
        window[d] = updates.shape[dn.update_window_dims[k]]
    for where in np.ndindex(*updates.shape):
        b = tuple(where[p] for p in scatter_pos)
        starts, fits = _start(indices[b], dn.scatter_dims_to_operand_dims, operand.shape, window)
        if not fits and mode is not CLIP:
            continue  # the whole window is dropped
        for d, j in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims):
            starts[d] = b[j]
        for k, d in enumerate(window_axes):
            starts[d] += where[dn.update_window_dims[k]]
        with np.errstate(over="ignore"):
            out[tuple(starts)] = _COMBINE[name](out[tuple(starts)], updates[where])
    return out


def _same(got: Any, want: np.ndarray) -> None:
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(got, want)


@given(st.data(), seeds())
def test_gather_matches_the_reference(data, rng):
    case = data.draw(SAMPLERS["gather"].cases())
    operand, indices = case.args(rng)
    p = case.params
    want = ref_gather(operand, indices, p["dimension_numbers"], p["slice_sizes"], p["mode"], p["fill_value"])
    _same(case.apply(operand, indices), want)


@pytest.mark.parametrize("name", ["scatter", "scatter-add", "scatter-sub", "scatter-mul", "scatter-min", "scatter-max"])
def test_scatters_match_the_reference(name, backend_name):
    @given(st.data(), seeds())
    def run(data, rng):
        case = data.draw(SAMPLERS[name].cases())
        operand, indices, updates = case.args(rng)
        want = ref_scatter(name, operand, indices, updates, case.params["dimension_numbers"], case.params["mode"])
        got = np.asarray(case.apply(operand, indices, updates))
        if np.dtype(got.dtype).kind == "f":  # several updates of one element may add in another order
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2e-2, atol=1e-2)
            assert got.dtype == want.dtype
        else:
            _same(got, want)

    run()


# ---------------------------------------------------------------------------
# Modes, out-of-bounds windows and colliding updates, by example


def test_gather_modes():
    x = np.arange(10, dtype=F32).reshape(5, 2)
    rows = i32([3], [-1], [7])
    assert np.asarray(lax.gather(x, rows, ROWS, (1, 2), mode="clip")).tolist() == [[6, 7], [0, 1], [8, 9]]
    assert np.asarray(lax.gather(x, rows, ROWS, (1, 2))).tolist() == [[6, 7], [0, 1], [8, 9]]  # promise: clamps
    filled = np.asarray(lax.gather(x, rows, ROWS, (1, 2), mode="fill"))
    assert np.isnan(filled[1:]).all() and filled[0].tolist() == [6, 7]
    assert np.asarray(lax.gather(x, rows, ROWS, (1, 2), mode="fill", fill_value=-3)).tolist() == [[6, 7], [-3, -3], [-3, -3]]
    # A window partly outside is filled whole; integer and boolean operands get their own default fills.
    windows = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,))
    out = lax.gather(np.arange(5, dtype=np.int8), i32([3], [4]), windows, (2,), mode="fill")
    assert np.asarray(out).tolist() == [[3, 4], [-128, -128]]
    out = lax.gather(np.arange(5, dtype=np.uint16), i32([4]), windows, (2,), mode="fill")
    assert np.asarray(out).tolist() == [[65535, 65535]]
    out = lax.gather(np.zeros(3, np.bool_), i32([5]), windows, (1,), mode="fill")
    assert np.asarray(out).tolist() == [[True]]


def test_scatter_modes_drop_or_clamp_whole_windows():
    x = np.zeros(5, F32)
    windows = ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))
    starts, ones = i32([4], [-1], [1]), np.ones((3, 2), F32)
    assert np.asarray(lax.scatter_add(x, starts, ones, windows, mode="clip")).tolist() == [1, 2, 1, 1, 1]
    assert np.asarray(lax.scatter_add(x, starts, ones, windows)).tolist() == [0, 1, 1, 0, 0]
    assert np.asarray(lax.scatter_add(x, starts, ones, windows, mode="promise_in_bounds")).tolist() == [0, 1, 1, 0, 0]


def test_colliding_updates():
    x = np.zeros(4, F32)
    at = i32([1], [1], [1], [3])
    vals = np.array([1, 2, 4, 8], F32)
    assert np.asarray(lax.scatter_add(x, at, vals, POINTS)).tolist() == [0, 7, 0, 8]
    assert np.asarray(lax.scatter_sub(x, at, vals, POINTS)).tolist() == [0, -7, 0, -8]
    assert np.asarray(lax.scatter_mul(np.ones(4, F32), at, vals, POINTS)).tolist() == [1, 8, 1, 8]
    assert np.asarray(lax.scatter_min(x, at, -vals, POINTS)).tolist() == [0, -4, 0, -8]
    assert np.asarray(lax.scatter_max(x, at, vals, POINTS)).tolist() == [0, 4, 0, 8]
    kept = np.asarray(lax.scatter(x, at, vals, POINTS))  # one of the colliding updates wins
    assert kept[1] in (1, 2, 4) and kept[[0, 2, 3]].tolist() == [0, 0, 8]
    doubled = lax.scatter_apply(np.ones(4, F32), at, lambda v: v * 2, POINTS, update_shape=(4,))
    assert np.asarray(doubled).tolist() == [1, 8, 1, 2]  # applied once per update


def test_scalar_operand_and_empty_cases():
    nothing = ScatterDimensionNumbers((), (), ())
    out = lax.scatter_add(np.float32(1), np.zeros((3, 0), np.int32), np.ones(3, F32), nothing)
    assert np.asarray(out).tolist() == 4.0  # XLA's scatter refuses rank 0: lowered via shape [1]
    assert np.asarray(lax.scatter(np.float32(1), np.zeros((2, 0), np.int32), np.full(2, 5, F32), nothing)).tolist() == 5.0
    got = lax.gather(np.float32(2), np.zeros((2, 0), np.int32), GatherDimensionNumbers((), (), ()), ())
    assert np.asarray(got).tolist() == [2, 2]
    assert np.asarray(lax.gather(np.zeros((0, 2), F32), np.zeros((0, 1), np.int32), ROWS, (1, 2))).shape == (0, 2)
    assert np.asarray(lax.scatter_add(np.ones(3, F32), np.zeros((0, 1), np.int32), np.zeros(0, F32), POINTS)).tolist() == [1, 1, 1]


def test_batching_dims():
    # operand_batching_dims pair operand row b with index row b: per-row lookups in one gather.
    x = np.arange(12, dtype=F32).reshape(3, 4)
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
                                operand_batching_dims=(0,), start_indices_batching_dims=(0,))  # fmt: skip
    cols = i32([[0], [3]], [[1], [1]], [[2], [0]])
    assert np.asarray(lax.gather(x, cols, dn, (1, 1))).tolist() == [[0, 3], [5, 5], [10, 8]]
    sdn = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
                                  operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))  # fmt: skip
    out = lax.scatter_add(np.zeros((3, 4), F32), cols, np.ones((3, 2), F32), sdn)
    assert np.asarray(out).tolist() == [[1, 0, 0, 1], [0, 2, 0, 0], [1, 0, 1, 0]]


def test_index_take():
    src = np.arange(24, dtype=F32).reshape(2, 3, 4)
    out = lax.index_take(src, [i32(1, -1), i32(2, 5)], (0, 2))  # indices wrap modulo the axis sizes
    np.testing.assert_array_equal(np.asarray(out), src[[1, 1], :, [2, 1]])


# ---------------------------------------------------------------------------
# jvp, transpose and batching specifics


def test_gather_jvp_and_transpose():
    x = np.arange(5, dtype=F32)
    at = i32([4], [9], [4])
    f = lambda v: lax.gather(v, at, GatherDimensionNumbers((), (0,), (0,)), (1,), mode="fill", fill_value=np.nan)  # noqa: E731
    _, t = minijax.jvp(f, (x,), (np.ones(5, F32),))
    assert np.asarray(t).tolist() == [1, 0, 1]  # the filled element has a zero tangent (not NaN)
    (ct,) = minijax.vjp(f, x)[1](np.array([1, 10, 100], F32))
    assert np.asarray(ct).tolist() == [0, 0, 0, 0, 101]  # duplicates add up; the dropped one is gone


def test_scatter_jvp_picks_the_winning_update():
    x = np.zeros(3, F32)
    at = i32([1], [1])
    f = lambda v, u: lax.scatter(v, at, u, POINTS)  # noqa: E731
    out, t = minijax.jvp(f, (x, np.array([5, 5], F32)), (np.ones(3, F32), np.array([10, 20], F32)))
    assert np.asarray(out).tolist() == [0, 5, 0]
    tangent = np.asarray(t).tolist()
    assert tangent[0] == tangent[2] == 1 and tangent[1] in (10, 20)  # exactly one update's tangent
    unique = lambda v, u: lax.scatter(v, i32([0], [2]), u, POINTS, unique_indices=True)  # noqa: E731
    jaxpr = minijax.make_jaxpr(lambda v, u, a, b: minijax.jvp(unique, (v, u), (a, b)))(x, x[:2], x, x[:2])
    assert [e.primitive.name for e in jaxpr.eqns] == ["scatter", "scatter"]  # the fast path: no id trick


def test_scatter_rules_that_need_unique_indices():
    x, u = np.ones(3, F32), np.full(2, 2.0, F32)
    at = i32([0], [2])
    with pytest.raises(NotImplementedError, match=r"scatter_mul gradients are only implemented if `unique_indices=True`"):
        minijax.grad(lambda w: lax.scatter_mul(x, at, w, POINTS).sum())(u)
    g = minijax.grad(lambda w: lax.scatter_mul(x, at, w, POINTS, unique_indices=True).sum())(u)
    assert np.asarray(g).tolist() == [1, 1]
    assert np.asarray(minijax.grad(lambda v: lax.scatter_mul(v, at, u, POINTS).sum())(x)).tolist() == [2, 1, 2]
    # (Its jvp never puts a non-unique scatter in a linear jaxpr; transposing one directly raises, as in JAX.)
    params = minijax.make_jaxpr(lambda w: lax.scatter(x, at, w, POINTS))(u).eqns[-1].params
    with pytest.raises(NotImplementedError, match="scatter transpose is only implemented where unique_indices=True"):
        ad.transpose_rules[scatter_p](x, x, at, ad.UndefinedPrimal(minijax.core.ShapedArray((2,), F32)), **params)
    ct = minijax.vjp(lambda v, w: lax.scatter(v, at, w, POINTS, unique_indices=True), x, u)[1](np.array([1, 2, 3], F32))
    assert [np.asarray(c).tolist() for c in ct] == [[0, 2, 0], [1, 3]]
    with pytest.raises(NotImplementedError, match="scatter_apply JVP not implemented"):
        minijax.jvp(lambda v: v.at[i32(0, 1)].apply(jnp.sin), (x,), (x,))


def test_scatter_extremal_jvp_shares_ties():
    # Two updates tie for the max with the operand: each gets a third of the tangent.
    x = np.array([1.0, 0.0], F32)
    f = lambda v, u: lax.scatter_max(v, i32([0], [0]), u, POINTS)  # noqa: E731
    _, t = minijax.jvp(f, (x, np.array([1.0, 1.0], F32)), (np.array([3.0, 5.0], F32), np.array([6.0, 9.0], F32)))
    np.testing.assert_allclose(np.asarray(t), [6.0, 5.0], rtol=1e-6)
    # Under CLIP the counts see the clamped windows (JAX's rule gives NaN here; see the rule's comment).
    g = lambda v: v.at[i32(5)].min(0.0, mode="clip")  # noqa: E731
    _, t = minijax.jvp(g, (np.ones(3, F32),), (np.ones(3, F32),))
    assert np.asarray(t).tolist() == [1, 1, 0]


def test_vmap_batches_without_loops():
    xs = np.arange(15, dtype=F32).reshape(3, 5)
    idx = i32([[0], [4]], [[1], [1]], [[3], [2]])
    dn = GatherDimensionNumbers((), (0,), (0,))
    both = minijax.vmap(lambda x, i: lax.gather(x, i, dn, (1,)))
    np.testing.assert_array_equal(np.asarray(both(xs, idx)), np.take_along_axis(xs, idx[..., 0], 1))
    only_x = minijax.vmap(lambda x: lax.gather(x, idx[0], dn, (1,)))
    np.testing.assert_array_equal(np.asarray(only_x(xs)), xs[:, [0, 4]])
    only_i = minijax.vmap(lambda i: lax.gather(xs[0], i, dn, (1,)))
    np.testing.assert_array_equal(np.asarray(only_i(idx)), xs[0][idx[..., 0]])
    for f, args in ((both, (xs, idx)), (only_x, (xs,)), (only_i, (idx,))):
        assert [e.primitive.name for e in minijax.make_jaxpr(f)(*args).eqns] == ["gather"]
    add = minijax.vmap(lambda x, i, u: lax.scatter_add(x, i, u, POINTS), in_axes=(0, 0, None))
    out = add(np.zeros((3, 5), F32), idx, np.ones(2, F32))
    want = np.zeros((3, 5), F32)
    for b in range(3):
        np.add.at(want[b], idx[b, :, 0], 1)
    np.testing.assert_array_equal(np.asarray(out), want)


# ---------------------------------------------------------------------------
# Params: printing, parsing, the shared update jaxprs


def test_params_print_as_jax():
    def f(x: Any, i: Any) -> Any:
        y = lax.scatter_add(x, i, jnp.ones(2), POINTS)
        return lax.gather(y, i, GatherDimensionNumbers((), (0,), (0,)), (1,), mode="fill") + lax.scatter_add(y, i, jnp.ones(2), POINTS)[:2]

    text = str(minijax.make_jaxpr(f)(np.zeros(4, F32), i32([1], [3])))
    # One update jaxpr for both scatter-adds, printed ahead as JAX does.
    assert text.startswith("let jaxpr = { lambda ; a:f32[] b:f32[]. let c:f32[] = add a b in (c,) } in\n")
    assert text.count("update_jaxpr=jaxpr") == 2 and "update_consts=()" in text
    assert "dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,), " \
           "operand_batching_dims=(), start_indices_batching_dims=())" in text  # fmt: skip
    assert "fill_value=nan" in text and "mode=GatherScatterMode.FILL_OR_DROP" in text


def test_gather_params_parse_back():
    # (Primitive names with a hyphen, scatter-add and co, need a parser change: see the report.)
    f = lambda x, i: take_along_axis(x, i, axis=1, mode="clip").sum() + x[i[0]].sum()  # noqa: E731
    text = str(minijax.make_jaxpr(minijax.vmap(f))(np.zeros((2, 3, 4), F32), np.zeros((2, 3, 4), np.int32)))
    assert "operand_batching_dims=(0, np.int64(1))" in text  # NumPy ints in params, as JAX's batching rules make them
    assert str(parse_jaxpr(text)) == text


def test_scatter_op_ignores_an_edited_update_jaxpr():
    # scatter-add means add on every backend and in every rule; update_jaxpr is
    # printed, not obeyed (found by the fuzzer: XLA used an edited jaxpr, NumPy did not).
    text = str(minijax.make_jaxpr(lambda x, v: lax.scatter_add(x, i32([0]), v, POINTS))(np.zeros(2, F32), np.ones(1, F32)))
    edited = text.replace("add e f in", "add f f in")
    assert edited != text
    jaxpr = parse_jaxpr(edited)
    consts = [np.array([[0]], np.int32)]  # the constvar: the indices
    (out,) = eval_jaxpr(jaxpr, consts, np.array([2.0, 5.0], F32), np.array([-3.0], F32))
    np.testing.assert_array_equal(np.asarray(out), np.array([-1.0, 5.0], F32))
    (jitted,) = minijax.jit(lambda x, v: eval_jaxpr(jaxpr, consts, x, v))(
        np.array([2.0, 5.0], F32), np.array([-3.0], F32))
    np.testing.assert_array_equal(np.asarray(jitted), np.array([-1.0, 5.0], F32))


def test_update_jaxprs_are_shared_per_dtype():
    params = [minijax.make_jaxpr(lambda x: lax.scatter_add(x, i32([0]), x[:1], POINTS))(np.zeros(2, dt)).eqns[-1].params
              for dt in (F32, F32, np.int32)]  # fmt: skip
    assert params[0]["update_jaxpr"] is params[1]["update_jaxpr"]
    assert params[0]["update_jaxpr"] is not params[2]["update_jaxpr"]
    assert str(params[2]["update_jaxpr"]) == "{ lambda ; a:i32[] b:i32[]. let c:i32[] = add a b in (c,) }"


def test_modes_parse():
    assert GatherScatterMode.from_any(None) is FILL
    assert GatherScatterMode.from_any("drop") is FILL and GatherScatterMode.from_any("fill") is FILL
    assert GatherScatterMode.from_any("clip") is CLIP and GatherScatterMode.from_any(PROMISE) is PROMISE
    assert GatherScatterMode.from_any("one_hot") is GatherScatterMode.ONE_HOT
    with pytest.raises(ValueError, match='Unknown gather mode "nope"'):
        GatherScatterMode.from_any("nope")
    with pytest.raises(NotImplementedError, match="ONE_HOT"):
        lax.gather(np.zeros(3, F32), i32([0]), ROWS._replace(offset_dims=()), (1,), mode="one_hot")


# ---------------------------------------------------------------------------
# Constraints: JAX's errors


@pytest.mark.parametrize(
    "operand, indices, dn, sizes, error, message",
    [
        ((5,), (2, 1), GatherDimensionNumbers((), (0,), (0,)), (1,), None, None),
        ((5,), ("f", 2, 1), GatherDimensionNumbers((), (0,), (0,)), (1,), ValueError, "indices must have an integer type"),  # C1
        ((5,), (), GatherDimensionNumbers((), (0,), (0,)), (1,), TypeError, r"Gather index leaf dimension"),  # C2
        ((5, 2), (2, 1), GatherDimensionNumbers((2,), (0,), (0,)), (1, 2), TypeError, "Offset dimension 0 in gather op is out of bounds"),  # C3
        ((5,), (2, 2), GatherDimensionNumbers((), (0,), (0,)), (1,), TypeError, "Gather op has 1 elements in start_index_map"),  # C4
        ((5,), (2, 1), GatherDimensionNumbers((), (0,), (1,)), (1,), TypeError, r"Invalid start_index_map; domain is \[0, 1\), got: 0->1."),  # C5
        ((5, 2), (2, 1), GatherDimensionNumbers((1,), (1, 0), (0,)), (1, 1), TypeError, "collapsed_slice_dims in gather op must be sorted"),  # C6
        ((5, 2), (3, 1), GatherDimensionNumbers((), (1,), (1,), (0,), (0,)), (1, 1), TypeError, r"same shape, got \(5,\) and \(3,\)"),  # C7
        ((5,), (2, 1), GatherDimensionNumbers((), (0,), (0,)), (1, 1), TypeError, "one slice size for every input dimension"),  # C8
        ((5, 2), (2, 1), GatherDimensionNumbers((), (0,), (0,)), (1, 2), TypeError, "either be a offset dimension or explicitly collapsed"),  # C9
        ((5,), (2, 1), GatherDimensionNumbers((1,), (), (0,)), (6,), TypeError, r"Slice size at index 0 in gather op is out of range"),  # C10
        ((5,), (2, 1), GatherDimensionNumbers((), (0,), (0,)), (2,), TypeError, "can only collapse slice dims with bound 1"),  # C11
    ],
)
def test_gather_constraints(operand, indices, dn, sizes, error, message):
    idx_dtype = np.float32 if indices[:1] == ("f",) else np.int32
    idx_shape = indices[1:] if indices[:1] == ("f",) else indices
    args = (np.zeros(operand, F32), np.zeros(idx_shape, idx_dtype))
    if error is None:
        assert lax.gather(*args, dn, sizes).shape == (2,)
        return
    with pytest.raises(error, match=message):
        lax.gather(*args, dn, sizes)


@pytest.mark.parametrize(
    "updates, dn, error, message",
    [
        ((2,), POINTS, None, None),
        ((2, 1), POINTS, TypeError, "Updates tensor must be of rank 1; got 2."),  # C4
        ((2, 3), ScatterDimensionNumbers((1,), (), (0,)), TypeError, "Scatter op has window of size 1; doesn't match operand of rank 2."),  # C7
        ((2, 3), ScatterDimensionNumbers((1,), (0,), (0,)), TypeError, "Bounds of the window dimensions of updates must not exceed"),  # C10
        ((3,), POINTS, TypeError, "Bounds of the scatter dimensions of updates must be the same"),  # C11
        ((2,), ScatterDimensionNumbers((), (0,), (1,)), TypeError, r"Invalid scatter_dims_to_operand_dims mapping"),  # C9
    ],
)
def test_scatter_constraints(updates, dn, error, message):
    rank2 = len(dn.update_window_dims) + len(dn.inserted_window_dims) == 2 or updates == (2, 3)
    operand = np.zeros((5, 2) if rank2 else (5,), F32)
    args = (operand, np.zeros((2, 1), np.int32), np.zeros(updates, F32))
    if error is None:
        assert lax.scatter_add(*args, dn).shape == (5,)
        return
    with pytest.raises(error, match=message):
        lax.scatter_add(*args, dn)


def test_scatter_dtype_constraints():
    with pytest.raises(TypeError, match="lax.scatter requires arguments to have the same dtypes, got float32, int32."):
        lax.scatter_add(np.zeros(3, F32), i32([0]), np.zeros(1, np.int32), POINTS)  # C2
    with pytest.raises(ValueError, match="indices must have an integer type"):
        lax.scatter(np.zeros(3, F32), np.zeros((1, 1), F32), np.zeros(1, F32), POINTS)  # C1


def test_weak_types_and_rules_registered():
    assert gather_p.abstract_eval(minijax.core.ShapedArray((3,), F32, True), minijax.core.ShapedArray((2, 1), np.int32),
                                  dimension_numbers=GatherDimensionNumbers((), (0,), (0,)), slice_sizes=(1,),
                                  unique_indices=False, indices_are_sorted=False, mode=PROMISE,
                                  fill_value=None).weak_type  # fmt: skip
    for prim in (gather_p, scatter_add_p, scatter_p):
        assert prim in ad.primitive_jvps and prim in ad.transpose_rules
