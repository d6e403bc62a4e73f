"""Structural, reduction and dot primitives against real JAX 0.10.2 (the oracle).

The same program, written once against a ``lax`` module, runs under JAX and
under minijax: the printed jaxprs must be identical, and so must the values,
dtypes and weak types. Run where JAX is installed:
    .venv-oracle/bin/python -m pytest tests/test_structural_oracle.py
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import ml_dtypes
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

from hypothesis import given, strategies as st  # noqa: E402
from test_structural import F32, I32, PROGRAMS, B, Program, args_for  # noqa: E402

import minijax  # noqa: E402
import minijax.lax.structural  # noqa: E402, F401  (the module under test, before the lead registers it)

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

def _normalize(text: str) -> str:
    return re.sub(r"0x[0-9a-fA-F]+", "0x...", text)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_printed_jaxpr_equals_jax(name: str) -> None:
    program, args = PROGRAMS[name]
    want = jax.make_jaxpr(lambda *a: program(jax.lax, *a))(*args_for(jax.lax, args))
    got = minijax.make_jaxpr(lambda *a: program(minijax.lax, *a))(*args_for(minijax.lax, args))
    assert _normalize(str(got)) == _normalize(str(want))


X64_PROGRAMS: dict[str, tuple[Program, list[Any]]] = {
    "dynamic_slice_static": (lambda lax, x: lax.dynamic_slice(x, (0, -1), (1, 2)), [np.ones((2, 3))]),
    "dynamic_slice_traced": (lambda lax, x, i: lax.dynamic_slice(x, (i, 0), (1, 2)), [np.ones((2, 3)), -1]),
    "iota_int": (lambda lax: lax.iota(int, 3), []),
    "argmax_int": (lambda lax, x: lax.argmax(x, 0, int), [np.ones((2, 3))]),
    "full_int": (lambda lax: lax.full((2,), 1), []),
    "dot_to_float64": (lambda lax, x: lax.dot(x, x.T, preferred_element_type=np.float64), [np.ones((2, 3), np.float32)]),
    "dot_mixed_64": (lambda lax, x, y: lax.dot_general(x, y, (((0,), (0,)), ((), ()))), [np.ones(3, np.int64), np.ones(3, np.uint64)]),
    "reduce_sum_int64": (lambda lax, x: lax.reduce_sum(x, (0,)), [np.ones((2, 3), np.int64)]),
}


@pytest.mark.parametrize("name", sorted(X64_PROGRAMS))
def test_printed_jaxpr_equals_jax_with_x64(name: str) -> None:
    from minijax.config import config_context

    program, args = X64_PROGRAMS[name]
    jax.config.update("jax_enable_x64", True)
    try:
        want = jax.make_jaxpr(lambda *a: program(jax.lax, *a))(*args)
        with config_context(jax_enable_x64=True):
            got = minijax.make_jaxpr(lambda *a: program(minijax.lax, *a))(*args)
    finally:
        jax.config.update("jax_enable_x64", False)
    assert str(got) == str(want)


def _leaves(x: Any) -> list[Any]:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def assert_like_jax(got: Any, want: Any) -> None:
    """Same dtype, shape, weak type and values (NaN equals NaN; bfloat16 compared as float32)."""
    for g, w in zip(_leaves(got), _leaves(want), strict=True):
        assert (g.dtype, g.shape, g.aval.weak_type) == (w.dtype, w.shape, w.aval.weak_type)
        g_np, w_np = np.asarray(g), np.asarray(w)
        if w_np.dtype == np.dtype(ml_dtypes.bfloat16):
            g_np, w_np = g_np.astype(np.float32), w_np.astype(np.float32)
        np.testing.assert_array_equal(g_np, w_np)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_dtypes_and_weak_types_equal_jax(name: str) -> None:
    program, args = PROGRAMS[name]
    assert_like_jax(program(minijax.lax, *args_for(minijax.lax, args)), program(jax.lax, *args_for(jax.lax, args)))


# ---------------------------------------------------------------------------
# dot_general's dtype rule, every pair


DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.float16, ml_dtypes.bfloat16, np.float32)]


@pytest.mark.parametrize("lhs", DTYPES, ids=str)
def test_dot_general_result_dtype_equals_jax(lhs: np.dtype[Any]) -> None:
    dn = (((0,), (0,)), ((), ()))
    for rhs in DTYPES:
        for pet in [None, *DTYPES]:
            args = (jax.ShapeDtypeStruct((3,), lhs), jax.ShapeDtypeStruct((3,), rhs))
            f = lambda lax, pet=pet: lambda a, b: lax.dot_general(a, b, dn, preferred_element_type=pet)  # noqa: E731
            try:
                want: Any = jax.eval_shape(f(jax.lax), *args).dtype
            except TypeError:
                want = TypeError
            try:
                got: Any = minijax.eval_shape(f(minijax.lax), *(minijax.ShapeDtypeStruct((3,), d) for d in (lhs, rhs))).dtype
            except TypeError:
                got = TypeError
            assert got == want, (lhs, rhs, pet)


# ---------------------------------------------------------------------------
# Random programs: values equal JAX's


def _random(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        return np.asarray(rng.integers(-50 if dtype.kind == "i" else 0, 50, shape)).astype(dtype)
    return np.asarray(rng.standard_normal(shape) * 4).astype(dtype)


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)


@given(shapes, st.sampled_from(DTYPES), st.integers(0, 2**32 - 1), st.data())
def test_random_structural_programs_equal_jax(shape: tuple[int, ...], dtype: np.dtype[Any], seed: int, data: Any) -> None:
    rng = np.random.default_rng(seed)
    x = _random(rng, shape, dtype)
    ndim = len(shape)
    starts = [np.int32(s) for s in rng.integers(-5, 5, ndim)]
    ops: list[Program] = [
        lambda lax, x: lax.rev(x, tuple(range(ndim))),
        lambda lax, x: lax.transpose(x, tuple(reversed(range(ndim)))),
        lambda lax, x: lax.pad(x, x.dtype.type(1), [(1, -1, 1)] * ndim) if all(shape) else lax.rev(x, ()),
        lambda lax, x: lax.dynamic_slice(x, starts, [n // 2 for n in shape]),
        lambda lax, x: lax.reduce_max(x, tuple(range(ndim))),
        lambda lax, x: lax.argmin(x, 0, np.int32) if ndim and shape[0] else lax.rev(x, ()),
    ]
    op = data.draw(st.sampled_from(ops))
    assert_like_jax(op(minijax.lax, x), op(jax.lax, x))


@given(st.integers(0, 3), st.integers(0, 4), st.integers(0, 4), st.integers(0, 3), st.sampled_from(DTYPES), st.sampled_from(DTYPES), st.integers(0, 2**32 - 1))
def test_random_dot_general_equals_jax(b: int, m: int, k: int, n: int, lhs_dtype: Any, rhs_dtype: Any, seed: int) -> None:
    rng = np.random.default_rng(seed)
    lhs, rhs = _random(rng, (b, m, k), lhs_dtype), _random(rng, (k, b, n), rhs_dtype)
    dn = (((2,), (0,)), ((0,), (1,)))
    got = minijax.lax.dot_general(lhs, rhs, dn)
    want = jax.lax.dot_general(lhs, rhs, dn)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    g, w = np.asarray(got).astype(np.float64), np.asarray(want).astype(np.float64)
    # Float sums of up to 4 products agree within the result's rounding.
    np.testing.assert_allclose(g, w, rtol=1e-2 if got.dtype.itemsize == 2 else 1e-6, atol=1e-2)


@given(st.integers(1, 300), st.sampled_from([np.float16, ml_dtypes.bfloat16, np.float32]), st.integers(0, 2**32 - 1))
def test_float_reduce_sum_is_close_to_jax(n: int, dtype: Any, seed: int) -> None:
    # XLA adds narrow floats in its own order and precision; minijax rounds a
    # float32 sum once. They agree within a few units of the result's precision.
    x = _random(np.random.default_rng(seed), (n,), np.dtype(dtype))
    got = np.asarray(minijax.lax.reduce_sum(x, (0,))).astype(np.float64)
    want = np.asarray(jax.lax.reduce_sum(x, (0,))).astype(np.float64)
    eps = float(ml_dtypes.finfo(dtype).eps)
    assert abs(got - want) <= 4 * eps * float(np.sum(np.abs(x.astype(np.float64)))) + eps


# ---------------------------------------------------------------------------
# Errors: the same exception types as JAX


ERROR_PROGRAMS: list[tuple[str, Program]] = [
    ("broadcast_in_dim", lambda lax: lax.broadcast_in_dim(F32, (2, 4), (0, 1))),
    ("broadcast_in_dim dups", lambda lax: lax.broadcast_in_dim(np.ones((3, 3)), (2, 3), (1, 1))),
    ("reshape negative", lambda lax: lax.reshape(F32, (-1, 6))),
    ("reshape size", lambda lax: lax.reshape(F32, (4, 2))),
    ("transpose", lambda lax: lax.transpose(F32, (0, 0))),
    ("squeeze", lambda lax: lax.squeeze(F32, (0,))),
    ("rev", lambda lax: lax.rev(F32, (2,))),
    ("slice", lambda lax: lax.slice(F32, (0, 0), (3, 3))),
    ("dynamic_slice float", lambda lax: lax.dynamic_slice(F32, (0.0, 0), (1, 2))),
    ("dynamic_slice count", lambda lax: lax.dynamic_slice(F32, (0,), (1, 2))),
    ("dynamic_update_slice", lambda lax: lax.dynamic_update_slice(F32, np.ones((3, 3), np.float32), (0, 0))),
    ("concatenate", lambda lax: lax.concatenate([F32, I32], 0)),
    ("concatenate empty", lambda lax: lax.concatenate([], 0)),
    ("pad", lambda lax: lax.pad(F32, np.float32(0), ((-3, 0, 0), (0, 0, 0)))),
    ("pad dtype", lambda lax: lax.pad(F32, 0, ((0, 0, 0), (0, 0, 0)))),
    ("iota", lambda lax: lax.iota(np.bool_, 3)),
    ("iota dimension", lambda lax: lax.broadcasted_iota(np.int32, (2, 3), 2)),
    ("expand_dims", lambda lax: lax.expand_dims(F32, (0, 0))),
    ("split", lambda lax: lax.split(F32, (1, 2), 0)),
    ("stack", lambda lax: lax.stack([F32, F32[:1]])),
    ("reduce_sum axes", lambda lax: lax.reduce_sum(F32, (2,))),
    ("reduce_sum bool", lambda lax: lax.reduce_sum(B, (0,))),
    ("reduce_and float", lambda lax: lax.reduce_and(F32, (0,))),
    ("argmax axis", lambda lax: lax.argmax(F32, 2, np.int32)),
    ("argmax empty", lambda lax: lax.argmax(np.ones((0, 3)), 0, np.int32)),
    ("argmax index dtype", lambda lax: lax.argmax(F32, 0, np.float32)),
    ("dot_general contract", lambda lax: lax.dot_general(F32, F32, (((1,), (0,)), ((), ())))),
    ("dot_general narrow", lambda lax: lax.dot_general(I32, I32, (((1,), (1,)), ((), ())), preferred_element_type=np.int8)),
    ("dot", lambda lax: lax.dot(np.ones((2, 3, 4)), np.ones(4))),
    ("batch_matmul", lambda lax: lax.batch_matmul(np.ones(4), np.ones(4))),
]


@pytest.mark.parametrize("name, program", ERROR_PROGRAMS, ids=[n for n, _ in ERROR_PROGRAMS])
def test_error_types_equal_jax(name: str, program: Program) -> None:
    def error_of(lax: Any) -> type[BaseException]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                program(lax)
            except Exception as e:  # noqa: BLE001  (the type is what is compared)
                return type(e)
        raise AssertionError(f"{name}: no error raised")

    want = error_of(jax.lax)
    # JAX reports some errors from XLA's verifier with its own exception class.
    expected = ValueError if want.__name__ == "MLIRError" else want
    assert issubclass(error_of(minijax.lax), expected)
