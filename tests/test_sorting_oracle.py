"""Sorting, cumulative reductions, searching and set operations against real JAX 0.10.2 (the oracle).

The same program, written once against a (jax, lax, jnp) triple, runs under
JAX and under minijax: for a fixed list of programs the printed jaxprs must be
identical; over hypothesis inputs the values and dtypes must be. Run where JAX
is installed:
    .venv-oracle/bin/python -m pytest tests/test_sorting_oracle.py
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import jax.numpy  # noqa: E402, F811  (jax.numpy as an attribute of jax)
from hypothesis import given, settings, strategies as st  # noqa: E402

import minijax  # noqa: E402
import minijax.numpy  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")


class Lib(NamedTuple):
    jax: Any
    lax: Any
    jnp: Any


JAX = Lib(jax, jax.lax, jax.numpy)
MINI = Lib(minijax, minijax.lax, minijax.numpy)

Program = Callable[..., Any]
F32 = np.float32
X = np.ones((3, 4), F32)

# name -> (program of (lib, *args), args). Each is printed with make_jaxpr under both.
PROGRAMS: dict[str, tuple[Program, list[Any]]] = {
    "lax_sort": (lambda m, x: m.lax.sort(x), [X]),
    "lax_sort_dim0_unstable": (lambda m, x: m.lax.sort(x, dimension=0, is_stable=False), [X]),
    "lax_sort_two_keys": (lambda m, x: m.lax.sort((x, x * 2, x.astype(np.int32)), num_keys=2), [X]),
    "sort_key_val": (lambda m, x: m.lax.sort_key_val(x, x.astype(np.int32)), [X]),
    "top_k": (lambda m, x: m.lax.top_k(x, 2), [X]),
    "top_k_axis0": (lambda m, x: m.lax.top_k(x, 1, axis=0), [X]),
    "cumsum": (lambda m, x: m.lax.cumsum(x, 1), [X]),
    "cumsum_reverse": (lambda m, x: m.lax.cumsum(x, 0, reverse=True), [X]),
    "cumprod": (lambda m, x: m.lax.cumprod(x), [X]),
    "cummax": (lambda m, x: m.lax.cummax(x, 1, reverse=True), [X]),
    "cummin": (lambda m, x: m.lax.cummin(x), [X]),
    "cumlogsumexp": (lambda m, x: m.lax.cumlogsumexp(x, 1), [X]),
    "jnp_sort": (lambda m, x: m.jnp.sort(x), [X]),
    "jnp_sort_flat_descending": (lambda m, x: m.jnp.sort(x, axis=None, descending=True), [X]),
    "jnp_argsort": (lambda m, x: m.jnp.argsort(x, axis=0), [X]),
    "jnp_argsort_descending": (lambda m, x: m.jnp.argsort(x, descending=True), [X]),
    "jnp_argsort_unstable_descending_int16": (lambda m, x: m.jnp.argsort(x, stable=False, descending=True, dtype=np.int16), [X]),
    "jnp_lexsort": (lambda m, x: m.jnp.lexsort((x[0], x[1], x[2])), [X]),
    "jnp_partition": (lambda m, x: m.jnp.partition(x, 1), [X]),
    "jnp_partition_unsigned": (lambda m, x: m.jnp.partition(x, 2, axis=0), [np.ones((3, 4), np.uint8)]),
    "jnp_cumsum_flat": (lambda m, x: m.jnp.cumsum(x), [X]),
    "jnp_cumsum_int8": (lambda m, x: m.jnp.cumsum(x, axis=1), [np.ones((3, 4), np.int8)]),
    "jnp_cumsum_bool": (lambda m, x: m.jnp.cumsum(x > 0), [X]),
    "jnp_cumsum_to_bool": (lambda m, x: m.jnp.cumsum(x, dtype=bool), [X]),
    "jnp_cumprod_dtype": (lambda m, x: m.jnp.cumprod(x, 0, dtype=np.int32), [X]),
    "jnp_nancumsum": (lambda m, x: m.jnp.nancumsum(x, 1), [X]),
    "jnp_nancumprod": (lambda m, x: m.jnp.nancumprod(x), [X]),
    "jnp_cumulative_sum": (lambda m, x: m.jnp.cumulative_sum(x, axis=1, include_initial=True), [X]),
    "jnp_cumulative_prod_int8": (lambda m, x: m.jnp.cumulative_prod(x, axis=0), [np.ones((3, 4), np.int8)]),
    "jnp_count_nonzero": (lambda m, x: m.jnp.count_nonzero(x, axis=1), [X]),
    "jnp_isin": (lambda m, x: m.jnp.isin(x, x[0]), [X]),
    "jnp_argpartition": (lambda m, x: m.jnp.argpartition(x, 2), [np.ones((2, 6), np.int32)]),
    "jnp_bincount_length_weights": (lambda m, x: m.jnp.bincount(x.astype(np.int32)[0], weights=x[1], length=4), [X]),
    "jnp_flatnonzero_size": (lambda m, x: m.jnp.flatnonzero(x, size=2, fill_value=-1), [X]),
    "jvp_sort": (lambda m, x: m.jax.jvp(lambda y: m.lax.sort((y, y * 2), num_keys=1), (x,), (x,)), [X]),
    "jvp_cumprod": (lambda m, x: m.jax.jvp(lambda y: m.lax.cumprod(y), (x[0],), (x[1],)), [np.ones((2, 5), F32)]),
    "jvp_cummax_reverse": (lambda m, x: m.jax.jvp(lambda y: m.lax.cummax(y, reverse=True), (x[0],), (x[1],)), [np.ones((2, 5), F32)]),
    "jvp_cumlogsumexp": (lambda m, x: m.jax.jvp(lambda y: m.lax.cumlogsumexp(y), (x[0],), (x[1],)), [np.ones((2, 3), F32)]),
    "grad_cumsum": (lambda m, x: m.jax.grad(lambda y: m.lax.cumsum(y).sum())(x), [np.ones(5, F32)]),
    "grad_cumprod": (lambda m, x: m.jax.grad(lambda y: m.lax.cumprod(y).sum())(x), [np.ones((2, 5), F32)]),
    "grad_cummin": (lambda m, x: m.jax.grad(lambda y: m.lax.cummin(y, axis=1, reverse=True).sum())(x), [np.ones((2, 4), F32)]),
    "grad_cumlogsumexp": (lambda m, x: m.jax.grad(lambda y: m.lax.cumlogsumexp(y, axis=1).sum())(x), [np.ones((2, 5), F32)]),
    "grad_sort": (lambda m, x: m.jax.grad(lambda y: m.jnp.sort(y).sum())(x), [np.ones(4, F32)]),
    "vmap_sort_unbatched_operand": (lambda m, x: m.jax.vmap(lambda y: m.lax.sort((y, x[:, 0]), 0, num_keys=1), in_axes=1)(x), [X]),
    "vmap_top_k": (lambda m, x: m.jax.vmap(lambda y: m.lax.top_k(y, 2), in_axes=1)(x), [np.ones((2, 4, 3), F32)]),
    "vmap_cummin": (lambda m, x: m.jax.vmap(lambda y: m.lax.cummin(y, axis=1, reverse=True), in_axes=2)(x), [np.ones((2, 4, 3), F32)]),
    "vmap_jnp_argsort": (lambda m, x: m.jax.vmap(m.jnp.argsort)(x), [X]),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_printed_jaxpr_equals_jax(name: str) -> None:
    program, args = PROGRAMS[name]
    want = jax.make_jaxpr(lambda *a: program(JAX, *a))(*args)
    got = minijax.make_jaxpr(lambda *a: program(MINI, *a))(*args)
    assert str(got) == str(want)


# ---------------------------------------------------------------------------
# Values and dtypes over random inputs


def _leaves(x: Any) -> list[Any]:
    return [leaf for item in (x if isinstance(x, (list, tuple)) else [x]) for leaf in _leaves_of(item)]


def _leaves_of(x: Any) -> list[Any]:
    return _leaves(x) if isinstance(x, (list, tuple)) else [x]


def assert_like_jax(got: Any, want: Any, exact: bool = True) -> None:
    """Same dtype, shape and values (NaN equal to NaN; signed zeros told apart when exact)."""
    g_leaves, w_leaves = _leaves(got), _leaves(want)
    assert len(g_leaves) == len(w_leaves)
    for g, w in zip(g_leaves, w_leaves):
        g_np, w_np = np.asarray(g), np.asarray(w)
        assert (g_np.dtype, g_np.shape) == (w_np.dtype, w_np.shape)
        if w_np.dtype.kind == "f" or w_np.dtype == np.dtype(ml_dtypes.bfloat16):
            g_np, w_np = g_np.astype(np.float64), w_np.astype(np.float64)
            if exact:
                np.testing.assert_array_equal(np.signbit(g_np), np.signbit(w_np))
                np.testing.assert_array_equal(g_np, w_np)
            else:
                np.testing.assert_allclose(g_np, w_np, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(g_np, w_np)


SPECIALS = [0.0, -0.0, 1.0, -1.0, 2.0, np.nan, -np.nan, np.inf, -np.inf]
DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int32, np.uint8, np.float16, ml_dtypes.bfloat16, np.float32)]


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
    """Few distinct values (ties), and NaNs of both signs and signed zeros for floats."""
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -3, 4, shape).astype(dtype)
    return np.asarray(rng.choice(np.array(SPECIALS, np.float32), shape)).astype(dtype)


shapes = st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple)


@given(shapes, st.sampled_from(DTYPES), st.integers(0, 2**32 - 1), st.data())
@settings(max_examples=15)
def test_sort_and_top_k_equal_jax(shape: tuple[int, ...], dtype: np.dtype[Any], seed: int, data: Any) -> None:
    rng = np.random.default_rng(seed)
    x, y = _values(rng, shape, dtype), _values(rng, shape, dtype)
    dim = data.draw(st.integers(0, len(shape) - 1))
    k = data.draw(st.integers(0, shape[dim]))
    programs: list[Program] = [
        lambda m: m.lax.sort(x, dimension=dim),
        lambda m: m.lax.sort((x, y, np.arange(x.size, dtype=np.int32).reshape(shape)), dimension=dim, num_keys=2),
        lambda m: m.lax.top_k(x, k, axis=dim),
        lambda m: m.jnp.argsort(x, axis=dim, descending=True),
        lambda m: m.jnp.sort(x, axis=None, descending=True),
        lambda m: m.jnp.lexsort((x, y), axis=dim),
    ]
    program = data.draw(st.sampled_from(programs))
    assert_like_jax(program(MINI), program(JAX))


@given(shapes, st.sampled_from([np.dtype(t) for t in (np.int8, np.uint8, np.int32, np.float16, np.float32)]),
       st.integers(0, 2**32 - 1), st.booleans(), st.data())  # fmt: skip
@settings(max_examples=15)
def test_cumulative_reductions_equal_jax(shape: tuple[int, ...], dtype: np.dtype[Any], seed: int, reverse: bool,
                                         data: Any) -> None:  # fmt: skip
    rng = np.random.default_rng(seed)
    x = _values(rng, shape, dtype)
    axis = data.draw(st.integers(0, len(shape) - 1))
    name = data.draw(st.sampled_from(["cumsum", "cumprod", "cummax", "cummin"] + (["cumlogsumexp"] if dtype.kind == "f" else [])))
    got = getattr(MINI.lax, name)(x, axis, reverse)
    want = getattr(JAX.lax, name)(x, axis, reverse)
    # Sums of specials are exact (or NaN/inf); float16 sums round alike after a float32 accumulation.
    assert_like_jax(got, want, exact=name in ("cummax", "cummin") or dtype.kind != "f")
    jnp_name = data.draw(st.sampled_from(["cumsum", "cumprod", "nancumsum", "nancumprod"]))
    assert_like_jax(getattr(MINI.jnp, jnp_name)(x, axis=axis), getattr(JAX.jnp, jnp_name)(x, axis=axis),
                    exact=dtype.kind != "f")  # fmt: skip


@given(st.lists(st.sampled_from([0.0, 1.0, 1.0, 2.5, -3.0, np.inf, np.nan]), min_size=0, max_size=7),
       st.lists(st.sampled_from([0.0, 1.0, 2.0, -5.0, 2.5, np.inf, -0.0, np.nan]), min_size=0, max_size=5),
       st.sampled_from(["left", "right"]), st.sampled_from(["scan", "scan_unrolled", "sort", "compare_all"]))  # fmt: skip
@settings(max_examples=15)
def test_searchsorted_and_digitize_equal_jax(a: list[float], v: list[float], side: str, method: str) -> None:
    sorted_a, q = np.sort(np.array(a, F32)), np.array(v, F32)
    assert_like_jax(MINI.jnp.searchsorted(sorted_a, q, side=side, method=method),
                    JAX.jnp.searchsorted(sorted_a, q, side=side, method=method))  # fmt: skip
    if len(a):
        assert_like_jax(MINI.jnp.digitize(q, sorted_a, right=side == "left"), JAX.jnp.digitize(q, sorted_a, right=side == "left"))


@given(st.lists(st.integers(-2, 4), min_size=1, max_size=9), st.lists(st.integers(-2, 4), min_size=0, max_size=6),
       st.integers(1, 6), st.data())  # fmt: skip
@settings(max_examples=15)
def test_counting_unique_and_set_operations_equal_jax(a: list[int], b: list[int], size: int, data: Any) -> None:
    x, y = np.array(a, np.int32), np.array(b, np.int32)
    xf = np.where(x == 4, np.nan, x).astype(F32)  # NaNs for unique's equal_nan
    programs: list[Program] = [
        lambda m: m.jnp.nonzero(x),
        lambda m: m.jnp.nonzero(x.reshape(1, -1), size=size, fill_value=-1),
        lambda m: m.jnp.argwhere(x, size=size),
        lambda m: m.jnp.flatnonzero(x),
        lambda m: m.jnp.count_nonzero(x),
        lambda m: m.jnp.unique(xf, return_index=True, return_inverse=True, return_counts=True),
        lambda m: m.jnp.unique(xf, equal_nan=False, size=size, return_counts=True),
        lambda m: m.jnp.unique(x, size=size, fill_value=9, return_index=True, return_inverse=True),
        lambda m: m.jnp.unique_all(xf),
        lambda m: m.jnp.isin(x, y, method=data.draw(st.sampled_from(["auto", "binary_search", "sort"]))),
        lambda m: m.jnp.union1d(x, y),
        lambda m: m.jnp.union1d(x, y, size=size),
        lambda m: m.jnp.intersect1d(x, y, return_indices=True),
        lambda m: m.jnp.intersect1d(x, y, size=size, return_indices=True),
        lambda m: m.jnp.setdiff1d(x, y),
        lambda m: m.jnp.setdiff1d(x, y, size=size),
        lambda m: m.jnp.setxor1d(x, y),
        lambda m: m.jnp.setxor1d(x, y, size=size),
        lambda m: m.jnp.bincount(np.abs(x), minlength=size),
        lambda m: m.jnp.bincount(x, weights=x.astype(F32), length=size),
        lambda m: m.jnp.histogram(x, bins=size),
        lambda m: m.jnp.histogram(xf, bins=np.array([-1.0, 0.5, 2.0], F32), density=True),
        lambda m: m.jnp.partition(x, len(a) // 2),
        lambda m: m.jnp.cumulative_sum(x.astype(np.int8), include_initial=True),
    ]
    program = data.draw(st.sampled_from(programs))
    try:
        want = program(JAX)
    except Exception as e:  # the same error type from minijax
        with pytest.raises(type(e)):
            program(MINI)
        return
    assert_like_jax(program(MINI), want, exact=False)


@pytest.mark.parametrize(
    "program",
    [
        lambda m: m.jax.jit(m.jnp.nonzero)(np.ones(3)),
        lambda m: m.jax.jit(m.jnp.unique)(np.ones(3)),
        lambda m: m.jax.jit(m.jnp.bincount)(np.ones(3, np.int32)),
        lambda m: m.jax.jit(lambda x: m.jnp.setdiff1d(x, x))(np.ones(3)),
        lambda m: m.jnp.nonzero(np.float32(1)),
        lambda m: m.jnp.sort(np.ones(3), kind="stable"),
        lambda m: m.jnp.searchsorted(np.ones((2, 2)), 1.0),
        lambda m: m.jnp.searchsorted(np.ones(2), 1.0, method="bogus"),
        lambda m: m.jnp.cumulative_sum(np.ones((2, 2))),
        lambda m: m.lax.cumsum(np.ones(3), axis=-1),
        lambda m: m.lax.cumsum(np.ones(3, bool)),
        lambda m: m.lax.top_k(np.ones(3), 4),
        lambda m: m.lax.sort((np.ones(3), np.ones(2))),
        lambda m: m.lax.sort([np.ones(3)] * 2, num_keys=3),
    ],
)
def test_errors_equal_jax(program: Program) -> None:
    with pytest.raises(Exception) as want:
        program(JAX)
    with pytest.raises(Exception) as got:
        program(MINI)
    assert type(got.value).__name__ == type(want.value).__name__
    # Where JAX's message does not name the operation, minijax puts its name in
    # front ("cumsum: XLA operations do not allow negative axes"); the rest is JAX's text.
    mine, theirs = str(got.value).split("\n")[0], str(want.value).split("\n")[0]
    assert theirs in (mine, re.sub(r"^[a-z_]+: ", "", mine)) or "Concretization" in type(want.value).__name__


X64_PROGRAMS: list[Program] = [
    lambda m: m.jnp.argsort(np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])),
    lambda m: m.jnp.cumsum(np.array([True, False, True])),
    lambda m: m.jnp.cumulative_sum(np.array([1, 2], np.int8)),
    lambda m: m.jnp.searchsorted(np.array([1.0, 2.0]), np.array([1.5])),
    lambda m: m.jnp.unique(np.array([3, 1, 3]), return_counts=True, return_inverse=True, return_index=True),
    lambda m: m.jnp.nonzero(np.array([0.0, 2.0])),
    lambda m: m.jnp.bincount(np.array([0, 2])),
    lambda m: m.jnp.lexsort((np.array([1, 0]), np.array([0, 0]))),
    lambda m: m.lax.top_k(np.array([1.0, 3.0]), 1),
    lambda m: m.jnp.histogram(np.array([1.0, 2.0, 2.5]), 2),
    lambda m: m.jnp.intersect1d(np.array([1, 2]), np.array([2, 3]), return_indices=True),
    lambda m: m.jnp.count_nonzero(np.array([1.0, 0.0])),
]


@pytest.mark.parametrize("index", range(len(X64_PROGRAMS)))
def test_values_and_dtypes_equal_jax_with_x64(index: int) -> None:
    from minijax.config import config_context

    program = X64_PROGRAMS[index]
    jax.config.update("jax_enable_x64", True)
    try:
        want = program(JAX)
        with config_context(jax_enable_x64=True):
            got = program(MINI)
    finally:
        jax.config.update("jax_enable_x64", False)
    assert_like_jax(got, want)
