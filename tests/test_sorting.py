"""Sorting, top_k, the cumulative reductions and the jnp functions built on them.

Runs on every backend (tests/conftest.py). The primitives are checked
against NumPy references of the spec's semantics (spec/primitives/sorting.md:
sort order with NaN last and -0.0 == 0.0, top_k's total order, stability,
accumulation), their constraint errors, their jvp/transpose/vmap specifics;
the jnp functions against NumPy over hypothesis inputs, with the size=
arguments and the errors of data-dependent shapes under jit. The generic laws
(finite differences, transposition, vmap) run in test_ad_laws/test_vmap_laws
through the samplers.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minijax
import minijax.numpy as jnp
from minijax import lax
from minijax.errors import ConcretizationTypeError
from minijax.primitives.sorting import cumsum_p, sort_p, top_k_p

F32 = np.float32
NAN = np.nan


def arr(x: Any) -> np.ndarray:
    return np.asarray(x)


def same(got: Any, want: Any) -> None:
    """Equal values and dtype, NaN equal to NaN, signed zeros told apart."""
    g, w = arr(got), arr(want)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    assert g.shape == w.shape, (g.shape, w.shape)
    if g.dtype.kind == "f" or g.dtype == np.dtype(ml_dtypes.bfloat16):
        g, w = g.astype(np.float64), w.astype(np.float64)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))
    np.testing.assert_array_equal(g, w)


# ===========================================================================
# sort


def test_sort_puts_nans_last_and_keeps_zeros_in_order():
    x = np.array([0.0, -0.0, NAN, -NAN, 1.0, -np.inf, np.inf, -1.0, 0.0, -0.0], F32)
    out = arr(lax.sort(x))
    # -0.0 and 0.0 tie: a stable sort keeps their order; NaNs of either sign last, in order.
    want = np.array([-np.inf, -1.0, 0.0, -0.0, 0.0, -0.0, 1.0, np.inf, NAN, -NAN], F32)
    same(out, want)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int32, np.float16, ml_dtypes.bfloat16, np.float32])
def test_sort_matches_a_stable_numpy_sort(dtype):
    rng = np.random.default_rng(0)
    x = (rng.integers(0, 4, (3, 7)) if dtype != np.bool_ else rng.random((3, 7)) < 0.5).astype(dtype)
    for dim in (0, 1):
        same(lax.sort(x, dimension=dim), np.sort(x.astype(np.float64) if dtype == ml_dtypes.bfloat16 else x,
                                                   axis=dim, kind="stable").astype(dtype))  # fmt: skip


def test_sort_is_stable_on_ties_and_carries_other_operands():
    keys = np.array([2, 1, 2, 1, 0], np.int32)
    vals = np.arange(5, dtype=F32)
    k, v = lax.sort_key_val(keys, vals)
    same(k, np.array([0, 1, 1, 2, 2], np.int32))
    same(v, np.array([4.0, 1.0, 3.0, 0.0, 2.0], F32))


def test_sort_with_two_keys_is_lexicographic():
    first = np.array([1, 0, 1, 0, 1], np.int32)
    second = np.array([5.0, 7.0, -1.0, 7.0, NAN], F32)
    payload = np.arange(5, dtype=np.int32)
    a, b, c = lax.sort((first, second, payload), num_keys=2)
    same(a, np.array([0, 0, 1, 1, 1], np.int32))
    same(b, np.array([7.0, 7.0, -1.0, 5.0, NAN], F32))
    same(c, np.array([1, 3, 2, 0, 4], np.int32))


def test_sort_along_a_middle_axis_and_of_empty_arrays():
    x = np.random.default_rng(1).standard_normal((2, 5, 3)).astype(F32)
    same(lax.sort(x, dimension=1), np.sort(x, axis=1))
    same(lax.sort(np.zeros((0, 3), F32), dimension=0), np.zeros((0, 3), F32))
    same(lax.sort(np.zeros((2, 0), np.int32)), np.zeros((2, 0), np.int32))


def test_unstable_sort_orders_keys():
    x = np.random.default_rng(2).integers(0, 3, 50).astype(F32)
    same(lax.sort(x, is_stable=False), np.sort(x))


@pytest.mark.parametrize(
    ("operands", "params", "error", "match"),
    [
        ((), {}, TypeError, "at least one operand"),  # sort C1
        ((np.ones(3), np.ones(2)), {}, TypeError, "equal shapes"),  # sort C2
        ((np.ones(3),), {"dimension": 1}, ValueError, "out of bounds"),  # sort C3
        ((np.ones(3), np.ones(3)), {"num_keys": 3}, ValueError, "num_keys=3 must be between 1"),  # sort C4
        ((np.ones(3),), {"is_stable": 1}, TypeError, "is_stable must be a bool"),  # sort C5
    ],
)
def test_sort_constraints(operands, params, error, match):
    full = {"dimension": 0, "is_stable": True, "num_keys": 1, **params}
    with pytest.raises(error, match=match):
        sort_p.bind(*operands, **full)


def test_a_valid_call_does_not_let_an_equal_but_wrongly_typed_param_through():
    # is_stable=True and is_stable=1 compare and hash equal: the abstract-eval
    # cache must still check the second call (sort C5).
    sort_p.bind(np.ones(3), dimension=0, is_stable=True, num_keys=1)
    with pytest.raises(TypeError, match="is_stable must be a bool"):
        sort_p.bind(np.ones(3), dimension=0, is_stable=1, num_keys=1)


def test_lax_sort_wrapper_errors():
    with pytest.raises(TypeError, match="Sort requires at least one operand"):
        lax.sort([])
    with pytest.raises(ValueError, match="must equal 1 for a single operand"):
        lax.sort(np.ones(3), num_keys=2)
    with pytest.raises(ValueError, match="out of bounds for array of dimension 0"):
        lax.sort(np.float32(1.0))


def test_sort_keeps_weak_types():
    out = minijax.eval_shape(lambda: lax.sort(lax.broadcast(1.0, (3,))))
    assert out.weak_type


# ===========================================================================
# top_k


def test_top_k_uses_the_total_order_and_lower_indices_first():
    x = np.array([0.0, -0.0, NAN, -NAN, 1.0, -np.inf, np.inf, -1.0, 0.0, -0.0], F32)
    values, indices = lax.top_k(x, 10)
    same(indices, np.array([2, 6, 4, 0, 8, 1, 9, 7, 5, 3], np.int32))
    same(values, x[arr(indices)])


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int16, np.float16, np.float32])
def test_top_k_along_an_axis(dtype):
    rng = np.random.default_rng(3)
    x = (rng.integers(0, 5, (4, 6)) if dtype != np.bool_ else rng.random((4, 6)) < 0.5).astype(dtype)
    for axis, k in [(0, 2), (1, 3), (1, 0)]:
        values, indices = lax.top_k(x, k, axis=axis)
        order = np.argsort(-np.moveaxis(x, axis, -1).astype(np.float64), axis=-1, kind="stable")[..., :k]
        same(indices, np.moveaxis(order, -1, axis).astype(np.int32))
        same(values, np.take_along_axis(x, np.moveaxis(order, -1, axis), axis))


@pytest.mark.parametrize(
    ("shape", "k", "axis", "error", "match"),
    [
        ((3,), -1, 0, ValueError, "nonnegative"),  # top_k C1
        ((), 0, 0, TypeError, ">= 1 dimension"),  # top_k C2
        ((3,), 1, 1, ValueError, "axis argument out of range"),  # top_k C3
        ((3,), 4, 0, ValueError, "no larger than size along axis"),  # top_k C4
    ],
)
def test_top_k_constraints(shape, k, axis, error, match):
    with pytest.raises(error, match=match):
        top_k_p.bind(np.ones(shape, F32), k=k, axis=axis)


# ===========================================================================
# Cumulative reductions


def _numpy_cumulative(name: str, x: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    fns = {"cumsum": np.cumsum, "cumprod": np.cumprod, "cummax": np.maximum.accumulate,
           "cummin": np.minimum.accumulate, "cumlogsumexp": np.logaddexp.accumulate}  # fmt: skip
    work = np.flip(x, axis) if reverse else x
    out = fns[name](work.astype(np.float64) if x.dtype.kind == "f" else work, axis=axis)
    out = np.flip(out, axis) if reverse else out
    return np.asarray(out).astype(x.dtype)


CUMULATIVE = ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]


@pytest.mark.parametrize("name", CUMULATIVE)
@given(st.integers(0, 2**31), st.sampled_from([np.int8, np.uint32, np.float16, np.float32]), st.integers(0, 1),
       st.booleans())  # fmt: skip
@settings(max_examples=8)
def test_cumulative_reductions_match_numpy(name, seed, dtype, axis, reverse):
    if name == "cumlogsumexp" and np.dtype(dtype).kind != "f":
        dtype = np.float32
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 4, (3, 4)).astype(dtype) if np.dtype(dtype).kind != "f" else rng.uniform(-2, 2, (3, 4)).astype(dtype)
    got = getattr(lax, name)(x, axis=axis, reverse=reverse)
    want = _numpy_cumulative(name, x, axis, reverse)
    assert arr(got).dtype == want.dtype
    if want.dtype.kind == "f":
        tol = 2e-3 if want.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(arr(got).astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(arr(got), want)  # integers wrap the same way


def test_float16_cumsum_accumulates_in_float32():
    x = np.full(4096, 1.0, np.float16)
    # In float16, 2048 + 1 rounds back to 2048; accumulated in float32 the count is exact.
    assert float(arr(lax.cumsum(x))[-1]) == 4096.0


def test_cummax_propagates_nan_and_orders_signed_zeros():
    x = np.array([-0.0, 0.0, -1.0, NAN, 5.0], F32)
    same(lax.cummax(x), np.array([-0.0, 0.0, 0.0, NAN, NAN], F32))
    same(lax.cummin(np.array([0.0, -0.0, 1.0], F32)), np.array([0.0, -0.0, -0.0], F32))


def test_cumlogsumexp_does_not_overflow():
    x = np.array([1000.0, 1000.0, -np.inf], F32)
    np.testing.assert_allclose(arr(lax.cumlogsumexp(x)), [1000.0, 1000.0 + np.log(2.0), 1000.0 + np.log(2.0)])


def test_cumulative_of_an_empty_axis():
    same(lax.cumsum(np.zeros((0, 2), F32)), np.zeros((0, 2), F32))


@pytest.mark.parametrize(
    ("x", "axis", "reverse", "error", "match"),
    [
        (np.ones(3, F32), -1, False, ValueError, "negative axes"),  # cumulative C1
        (np.ones(3, F32), 1, False, ValueError, "out of bounds for array of shape"),  # cumulative C1
        (np.ones(3, F32), 0, 1, TypeError, "reverse must be a bool"),  # cumulative C2
        (np.ones(3, np.bool_), 0, False, TypeError, "does not accept dtype bool"),  # cumulative C3
    ],
)
def test_cumulative_constraints(x, axis, reverse, error, match):
    with pytest.raises(error, match=match):
        cumsum_p.bind(x, axis=axis, reverse=reverse)


def test_cumlogsumexp_takes_floats_only():  # cumulative C3
    with pytest.raises(TypeError, match="Accepted dtypes are subtypes of floating"):
        lax.cumlogsumexp(np.ones(3, np.int32))


# ===========================================================================
# jvp, transpose and vmap specifics


def test_sort_moves_tangents_with_their_keys():
    x = np.array([3.0, 1.0, 2.0], F32)
    t = np.array([30.0, 10.0, 20.0], F32)
    out, t_out = minijax.jvp(lax.sort, (x,), (t,))
    same(t_out, np.array([10.0, 20.0, 30.0], F32))
    g = minijax.grad(lambda x: jnp.sum(lax.sort(x) * jnp.arange(3.0)))(x)
    same(g, np.array([2.0, 0.0, 1.0], F32))


def test_sort_jvp_of_a_carried_operand_and_an_integer_key():
    keys = np.array([2, 0, 1], np.int32)
    vals = np.array([1.0, 2.0, 3.0], F32)
    _, (tk, tv) = minijax.jvp(lambda v: lax.sort_key_val(keys, v), (vals,), (np.ones(3, F32) * np.array([1, 2, 3], F32),))
    assert arr(tk).dtype == minijax.dtypes.float0
    same(tv, np.array([2.0, 3.0, 1.0], F32))


def test_top_k_gradient_reaches_the_chosen_entries():
    x = np.array([[1.0, 5.0, 3.0], [4.0, 0.0, 2.0]], F32)
    g = minijax.grad(lambda x: jnp.sum(lax.top_k(x, 2)[0]))(x)
    same(g, np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]], F32))


def test_cumsum_transposes_to_the_reversed_cumsum():
    jaxpr = minijax.make_jaxpr(minijax.grad(lambda x: jnp.sum(lax.cumsum(x) * x)))(np.ones(3, F32))
    assert "cumsum[axis=0 reverse=True]" in str(jaxpr)
    g = minijax.grad(lambda x: jnp.sum(lax.cumsum(x, reverse=True)))(np.ones(4, F32))
    same(g, np.array([1.0, 2.0, 3.0, 4.0], F32))


def test_cumprod_gradient_is_exact_at_zeros():
    x = np.array([2.0, 0.0, 3.0, 4.0], F32)
    g = minijax.jit(minijax.grad(lambda x: lax.cumprod(x)[-1]))(x)
    same(g, np.array([0.0, 24.0, 0.0, 0.0], F32))


def test_cummax_gradient_goes_to_the_running_maximum():
    x = np.array([1.0, 3.0, 2.0, 5.0], F32)
    g = minijax.jit(minijax.grad(lambda x: jnp.sum(lax.cummax(x))))(x)
    same(g, np.array([1.0, 2.0, 0.0, 1.0], F32))


def test_cumlogsumexp_gradient_is_a_softmax_sum():
    x = np.array([0.0, 1.0, 2.0], F32)
    g = arr(minijax.jit(minijax.grad(lambda x: lax.cumlogsumexp(x)[-1]))(x))
    np.testing.assert_allclose(g, np.exp(x) / np.exp(x).sum(), rtol=1e-6)


def test_vmap_of_sort_broadcasts_unbatched_operands():
    keys = np.array([[3.0, 1.0, 2.0], [0.0, 2.0, 1.0]], F32)
    payload = np.array([10, 20, 30], np.int32)
    _, vals = minijax.vmap(lambda k: lax.sort_key_val(k, payload))(keys)
    same(vals, np.array([[20, 30, 10], [10, 30, 20]], np.int32))
    # No loop over the batch: one sort equation whatever the batch size.
    text = str(minijax.make_jaxpr(minijax.vmap(lambda k: lax.sort_key_val(k, payload), in_axes=1))(keys.T))
    assert text.count(" sort[") == 1 and "dimension=0" in text


def test_vmap_of_top_k_and_cumulative_ops_shift_their_axis():
    x = np.random.default_rng(4).standard_normal((3, 4, 5)).astype(F32)
    v, i = minijax.vmap(lambda r: lax.top_k(r, 2), in_axes=1)(x)
    want_v, want_i = lax.top_k(np.moveaxis(x, 1, 0), 2)
    same(v, want_v)
    same(i, want_i)
    out = minijax.vmap(lambda r: lax.cumsum(r, axis=1), in_axes=2, out_axes=2)(x)
    np.testing.assert_allclose(arr(out), np.cumsum(x, axis=1), rtol=1e-5, atol=1e-6)


def test_grad_and_vmap_compose_with_jit():
    x = np.random.default_rng(5).standard_normal((2, 4)).astype(F32)

    def f(x):
        return jnp.sum(jnp.sort(x) * jnp.cumsum(x, axis=0))

    want = minijax.vmap(minijax.grad(f))(x)
    np.testing.assert_allclose(arr(minijax.jit(minijax.vmap(minijax.grad(f)))(x)), arr(want), rtol=1e-6)


def test_associative_scan_matches_a_loop():
    x = np.arange(1.0, 8.0, dtype=F32)
    same(minijax.jit(lambda x: lax.associative_scan(lax.add, x))(x), np.cumsum(x))
    same(minijax.jit(lambda x: lax.associative_scan(lax.mul, x, reverse=True))(x), np.flip(np.cumprod(np.flip(x))))
    pair = minijax.jit(lambda x: lax.associative_scan(lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1])), (x, -x)))(x)
    same(pair[1], np.full(7, -1.0, F32))


# ===========================================================================
# jnp: sorting


floats = st.lists(st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, NAN, np.inf, -np.inf]), min_size=0, max_size=9)


@given(floats, st.booleans())
@settings(max_examples=15)
def test_jnp_sort_and_argsort_match_numpy(values, descending):
    x = np.array(values, F32)
    got_order = arr(jnp.argsort(x, descending=descending))
    if descending:
        # NumPy has no descending sort: a stable sort of the negation, NaN first.
        key = np.where(np.isnan(x), -np.inf, -np.where(x == 0, 0.0, x))
        want_order = np.argsort(key, kind="stable")
        want_order = np.concatenate([want_order[np.isnan(x)[want_order]], want_order[~np.isnan(x)[want_order]]])
    else:
        want_order = np.argsort(x, kind="stable")
    np.testing.assert_array_equal(got_order, want_order)
    # A descending sort is the ascending one reversed (so ties come out reversed too, as in JAX).
    ascending = x[np.argsort(x, kind="stable")]
    same(jnp.sort(x, descending=descending), ascending[::-1] if descending else ascending)


def test_jnp_sort_argsort_options():
    x = np.array([[3, 1, 2], [0, 5, 4]], np.int8)
    same(jnp.sort(x, axis=None), np.sort(x, axis=None))
    same(jnp.sort(x, axis=0), np.sort(x, axis=0))
    same(jnp.argsort(x, axis=None), np.argsort(x, axis=None).astype(np.int32))
    same(jnp.argsort(x, dtype=np.int16), np.argsort(x).astype(np.int16))
    same(jnp.asarray(x).sort(axis=0), np.sort(x, axis=0))
    same(jnp.asarray(x).argsort(), np.argsort(x).astype(np.int32))
    with pytest.raises(TypeError, match="'kind' argument to sort is not supported"):
        jnp.sort(x, kind="stable")
    with pytest.raises(TypeError, match="'order' argument to argsort is not supported"):
        jnp.argsort(x, order="a")


def test_lexsort_uses_the_last_key_first():
    a, b = np.array([1, 5, 1, 4, 3]), np.array([9, 4, 0, 4, 0])
    same(jnp.lexsort((a, b)), np.lexsort((a, b)).astype(np.int32))
    same(jnp.lexsort((np.int32(1),)), np.int32(0))
    with pytest.raises(TypeError, match="len > 0"):
        jnp.lexsort(())


@given(st.lists(st.integers(0, 5), min_size=1, max_size=8), st.data())
@settings(max_examples=15)
def test_partition_and_argpartition(values, data):
    x = np.array(values, np.int32)
    kth = data.draw(st.integers(0, len(values) - 1))
    p = arr(jnp.partition(x, kth))
    s = np.sort(x)
    assert p[kth] == s[kth] and (p[:kth] <= s[kth]).all() and (p[kth + 1 :] >= s[kth]).all()
    idx = arr(jnp.argpartition(x, kth))
    assert sorted(idx.tolist()) == list(range(len(values)))  # a permutation
    same(x[idx][kth], s[kth])
    assert (x[idx][:kth] <= s[kth]).all() and (x[idx][kth + 1 :] >= s[kth]).all()


def test_partition_of_unsigned_values_and_along_an_axis():
    x = np.array([[3, 0, 2], [1, 1, 0]], np.uint8)
    p = arr(jnp.partition(x, 0, axis=1))
    np.testing.assert_array_equal(p[:, 0], [0, 0])


def test_sort_complex_sorts_by_real_then_imaginary_part():
    got = jnp.sort_complex(np.array([[1 + 2j, -1j, 1 - 1j], [3, 2, 1]], np.complex64))
    assert got.tolist() == [[-1j, 1 - 1j, 1 + 2j], [1, 2, 3]]
    assert jnp.sort_complex(np.float32([2, 1])).dtype == np.complex64


# ===========================================================================
# jnp: cumulative reductions


@pytest.mark.parametrize(
    ("fn", "x", "kwargs", "want"),
    [
        (jnp.cumsum, np.array([[1, 2], [3, 4]], np.int8), {}, np.array([1, 3, 6, 10], np.int8)),
        (jnp.cumsum, np.array([True, True, False]), {}, np.array([1, 2, 2], np.int32)),
        (jnp.cumsum, np.array([1, -1, 2]), {"dtype": bool}, np.array([True, True, True])),
        (jnp.cumsum, np.array([[1.0, 2.0], [3.0, 4.0]], F32), {"axis": 0}, np.array([[1.0, 2.0], [4.0, 6.0]], F32)),
        (jnp.cumprod, np.array([1, 2, 3], np.uint8), {"dtype": np.float32}, np.array([1.0, 2.0, 6.0], F32)),
        (jnp.nancumsum, np.array([1.0, NAN, 2.0], F32), {}, np.array([1.0, 1.0, 3.0], F32)),
        (jnp.nancumprod, np.array([2.0, NAN, 2.0], F32), {}, np.array([2.0, 2.0, 4.0], F32)),
    ],
)
def test_jnp_cumulative_reductions(fn, x, kwargs, want):
    same(fn(x, **kwargs), want)


def test_array_api_cumulative_functions():
    x = np.array([[1, 2], [3, 4]], np.int8)
    same(jnp.cumulative_sum(x, axis=1), np.array([[1, 3], [3, 7]], np.int32))
    same(jnp.cumulative_sum(x, axis=0, include_initial=True), np.array([[0, 0], [1, 2], [4, 6]], np.int32))
    same(jnp.cumulative_prod(np.array([2, 3], np.int8), include_initial=True), np.array([1, 2, 6], np.int8))
    with pytest.raises(ValueError, match="axis was not set"):
        jnp.cumulative_sum(x)
    with pytest.raises(ValueError, match="non-scalar"):
        jnp.cumulative_prod(np.float32(1))
    same(jnp.asarray(x).cumsum(), np.cumsum(x).astype(np.int8))
    same(jnp.asarray(x).cumprod(axis=1), np.cumprod(x, axis=1).astype(np.int8))


# ===========================================================================
# jnp: searching


METHODS = ["scan", "scan_unrolled", "sort", "compare_all"]


@pytest.mark.parametrize("method", METHODS)
@given(st.lists(st.sampled_from([0.0, 1.0, 1.0, 2.5, -3.0, np.inf]), max_size=7),
       st.lists(st.sampled_from([0.0, 1.0, 2.0, -5.0, 2.5, np.inf, -0.0]), min_size=0, max_size=5),
       st.sampled_from(["left", "right"]))  # fmt: skip
@settings(max_examples=6)
def test_searchsorted_matches_numpy(method, a, v, side):
    a_sorted = np.sort(np.array(a, F32))
    q = np.array(v, F32)
    same(jnp.searchsorted(a_sorted, q, side=side, method=method), np.searchsorted(a_sorted, q, side=side).astype(np.int32))


def test_searchsorted_with_nan_sorter_and_a_method_on_arrays():
    a = np.array([1.0, 2.0, NAN], F32)
    same(jnp.searchsorted(a, np.array([NAN, 3.0], F32)), np.array([2, 2], np.int32))
    same(jnp.searchsorted(a, np.array([NAN], F32), side="right"), np.array([3], np.int32))
    unsorted = np.array([3, 1, 2])
    same(jnp.searchsorted(unsorted, 2, sorter=np.argsort(unsorted)), np.int32(1))
    same(jnp.asarray(np.array([1, 2, 3])).searchsorted(np.array([[2, 4]])), np.array([[1, 3]], np.int32))
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.searchsorted(np.ones((2, 2)), 1.0)
    with pytest.raises(ValueError, match="invalid argument method='bogus'"):
        jnp.searchsorted(np.ones(2), 1.0, method="bogus")


def test_digitize_matches_numpy_for_increasing_and_decreasing_bins():
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0], F32)
    for bins in (np.array([0.0, 1.0, 2.0], F32), np.array([2.0, 1.0, 0.0], F32)):
        for right in (False, True):
            same(jnp.digitize(x, bins, right=right), np.digitize(x, bins, right=right).astype(np.int32))
    same(jnp.digitize(x, np.zeros(0, F32)), np.zeros(6, np.int32))


# ===========================================================================
# jnp: nonzero, argwhere, count_nonzero


@given(st.lists(st.integers(0, 2), min_size=1, max_size=12))
@settings(max_examples=10)
def test_nonzero_argwhere_flatnonzero_match_numpy(values):
    x = np.array(values, np.int32)
    x2 = x[: len(values) // 2 * 2].reshape(2, -1) if len(values) >= 2 else x.reshape(1, -1)
    for got, want in zip(jnp.nonzero(x2), np.nonzero(x2)):
        same(got, want.astype(np.int32))
    same(jnp.argwhere(x2), np.argwhere(x2).astype(np.int32))
    same(jnp.flatnonzero(x2), np.flatnonzero(x2).astype(np.int32))
    same(jnp.count_nonzero(x2, axis=0), np.count_nonzero(x2, axis=0).astype(np.int32))
    same(jnp.asarray(x2).nonzero()[0], np.nonzero(x2)[0].astype(np.int32))


def test_nonzero_with_size_truncates_or_pads_under_jit():
    x = np.array([0, 3, 0, 4, 5])
    f = minijax.jit(lambda x: jnp.nonzero(x, size=2))
    same(f(x)[0], np.array([1, 3], np.int32))
    same(jnp.nonzero(x, size=5, fill_value=-1)[0], np.array([1, 3, 4, -1, -1], np.int32))
    same(jnp.argwhere(np.array([[0, 1], [1, 0]]), size=3, fill_value=7), np.array([[0, 1], [1, 0], [7, 7]], np.int32))
    same(jnp.argwhere(np.int32(3)), np.zeros((1, 0), np.int32))


def test_data_dependent_shapes_need_size_under_jit():
    with pytest.raises(ConcretizationTypeError, match="size argument of jnp.nonzero"):
        minijax.jit(jnp.nonzero)(np.ones(3))
    with pytest.raises(ConcretizationTypeError, match="jnp.unique"):
        minijax.jit(jnp.unique)(np.ones(3))
    with pytest.raises(ConcretizationTypeError, match="static `length`"):
        minijax.jit(jnp.bincount)(np.ones(3, np.int32))
    with pytest.raises(ConcretizationTypeError, match="union1d"):
        minijax.jit(jnp.union1d)(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="0d arrays"):
        jnp.nonzero(np.float32(1.0))


# ===========================================================================
# jnp: unique and set operations


@given(st.lists(st.sampled_from([3.0, 1.0, 2.0, 1.0, NAN, -0.0, 0.0]), min_size=1, max_size=8))
@settings(max_examples=12)
def test_unique_matches_numpy(values):
    x = np.array(values, F32)
    got = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=True)
    same(got[0], want[0])
    for g, w in zip(got[1:], want[1:]):
        same(g, w.astype(np.int32))


def test_unique_with_size_and_fill_value_under_jit():
    x = np.array([3, 1, 3, 2])
    f = minijax.jit(lambda x: jnp.unique(x, size=5, fill_value=-1, return_counts=True, return_index=True))
    values, index, counts = f(x)
    same(values, np.array([1, 2, 3, -1, -1], np.int32))
    same(index, np.array([1, 3, 0, 1, 1], np.int32))  # padding: the first value's index
    same(counts, np.array([1, 1, 2, 0, 0], np.int32))
    same(jnp.unique(x, size=2), np.array([1, 2], np.int32))
    same(jnp.unique(x, size=4), np.array([1, 2, 3, 1], np.int32))  # padded with the smallest value
    with pytest.raises(ValueError, match="fill_value must be specified"):
        jnp.unique(np.zeros(0), size=2)


def test_unique_along_an_axis_and_the_array_api_variants():
    x = np.array([[1, 2], [0, 5], [1, 2]])
    values, inverse, counts = jnp.unique(x, axis=0, return_inverse=True, return_counts=True)
    same(values, np.array([[0, 5], [1, 2]], np.int32))
    same(inverse, np.array([1, 0, 1], np.int32))
    same(counts, np.array([1, 2], np.int32))
    y = np.array([1.0, NAN, NAN, 1.0], F32)
    same(jnp.unique_values(y), np.array([1.0, NAN, NAN], F32))  # NaNs distinct
    all_ = jnp.unique_all(y)
    same(all_.counts, np.array([2, 1, 1], np.int32))
    same(jnp.unique_counts(np.array([2, 2, 5])).counts, np.array([2, 1], np.int32))
    same(jnp.unique_inverse(np.array([[2, 5], [5, 2]])).inverse_indices, np.array([[0, 1], [1, 0]], np.int32))


@pytest.mark.parametrize("method", ["auto", "compare_all", "binary_search", "sort"])
@given(st.lists(st.integers(0, 6), max_size=6), st.lists(st.integers(0, 6), max_size=5), st.booleans())
@settings(max_examples=5)
def test_isin_matches_numpy(method, a, b, invert):
    x, t = np.array(a, np.int32), np.array(b, np.int32)
    same(jnp.isin(x, t, invert=invert, method=method), np.isin(x, t, invert=invert))


@given(st.lists(st.integers(0, 5), max_size=6), st.lists(st.integers(0, 5), max_size=6))
@settings(max_examples=10)
def test_set_operations_match_numpy(a, b):
    x, y = np.array(a, np.int32), np.array(b, np.int32)
    same(jnp.union1d(x, y), np.union1d(x, y).astype(np.int32))
    same(jnp.intersect1d(x, y), np.intersect1d(x, y).astype(np.int32))
    same(jnp.setdiff1d(x, y), np.setdiff1d(x, y).astype(np.int32))
    same(jnp.setxor1d(x, y), np.setxor1d(x, y).astype(np.int32))
    got = jnp.intersect1d(x, y, return_indices=True)
    for g, w in zip(got, np.intersect1d(x, y, return_indices=True)):
        same(g, w.astype(np.int32))


def test_set_operations_with_size():
    x, y = np.array([1, 2, 3, 2]), np.array([2, 3, 4])
    values, i1, i2 = minijax.jit(lambda x, y: jnp.intersect1d(x, y, size=3, return_indices=True))(x, y)
    same(values, np.array([2, 3, 2], np.int32))
    same(i1, np.array([1, 2, 4], np.int32))  # padding: out-of-range indices
    same(i2, np.array([0, 1, 3], np.int32))
    same(jnp.union1d(x, y, size=5, fill_value=0), np.array([1, 2, 3, 4, 0], np.int32))
    same(jnp.setdiff1d(x, y, size=2), np.array([1, 0], np.int32))
    same(jnp.setxor1d(x, y, size=3, fill_value=9), np.array([1, 4, 9], np.int32))


# ===========================================================================
# jnp: bincount and histograms


def test_bincount_matches_numpy():
    x = np.array([0, 1, 1, 3, 1])
    same(jnp.bincount(x), np.bincount(x).astype(np.int32))
    w = np.array([0.5, 1.0, 1.0, 2.0, 0.25], F32)
    same(jnp.bincount(x, w, minlength=6), np.bincount(x, w, minlength=6).astype(F32))
    same(minijax.jit(lambda x: jnp.bincount(x, length=3))(x), np.array([1, 3, 0], np.int32))  # 3 is dropped
    same(jnp.bincount(np.array([-2, 1])), np.array([1, 1], np.int32))  # negatives count as 0
    with pytest.raises(TypeError, match="integer type"):
        jnp.bincount(np.ones(3, F32))


@given(st.lists(st.floats(-5, 5, width=32), min_size=1, max_size=10), st.sampled_from([1, 3, 4]), st.booleans())
@settings(max_examples=10)
def test_histogram_matches_numpy(values, bins, density):
    x = np.array(values, F32)
    counts, edges = jnp.histogram(x, bins=bins, density=density)
    _, want_edges = np.histogram(x.astype(np.float64), bins=bins)
    np.testing.assert_allclose(arr(edges), want_edges, rtol=1e-5, atol=1e-5)
    # Counted against the float32 edges: a value on an edge computed in float64 may fall either side.
    want_counts, _ = np.histogram(x, bins=arr(edges), density=density)
    np.testing.assert_allclose(arr(counts), want_counts, rtol=1e-4, atol=1e-5)


def test_histogram_with_edges_range_and_weights():
    x = np.array([1.0, 2.0, 9.0, 10.0], F32)
    counts, edges = jnp.histogram(x, bins=np.array([0.0, 5.0, 10.0], F32), weights=np.array([1.0, 2.0, 3.0, 4.0], F32))
    same(counts, np.array([3.0, 7.0], F32))
    counts, edges = jnp.histogram(x, bins=2, range=(0.0, 4.0))
    same(counts, np.array([1.0, 1.0], F32))  # 9 and 10 fall outside the range
    same(jnp.histogram_bin_edges(np.array([1.0, 1.0], F32), 2), np.array([0.5, 1.0, 1.5], F32))
    with pytest.raises(NotImplementedError, match="string values for `bins`"):
        jnp.histogram_bin_edges(x, "auto")


def test_printed_jaxprs_parse_back():
    from minijax.jaxpr import eval_jaxpr
    from minijax.jaxpr_parse import parse_jaxpr

    def f(x):
        return (lax.sort((x, x * 2), num_keys=2, is_stable=False), lax.top_k(x, 2),
                lax.cumlogsumexp(x, 1, reverse=True), minijax.jvp(jnp.sort, (x,), (x,)))  # fmt: skip

    x = np.arange(12, dtype=F32).reshape(3, 4)[::-1]
    closed = minijax.make_jaxpr(f)(x)
    parsed = parse_jaxpr(str(closed))
    assert str(parsed) == str(closed)
    for got, want in zip(eval_jaxpr(parsed.jaxpr, parsed.consts, x), minijax.tree_util.tree_leaves(f(x))):
        same(got, want)
