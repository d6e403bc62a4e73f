"""Autodiff rules of the reductions and dot_general (minijax/primitives/reductions.py).

Laws, on random shapes, axes, dimension numbers and values, in float32 and
float64:
- jvp agrees with central finite differences of the function (computed in
  float64 whatever dtype is under test, so the reference is precise);
- the transposition law <ct, L t> = <L^T ct, t> for the linear primitives
  (reduce_sum, dot_general in each operand), with cotangents of exactly the
  operand's shape and dtype;
- grad/jvp compose with jit.
Plus the exact semantics JAX gives at the corners: ties of max/min share
the tangent, zeros in a product, zero (float0) tangents of argmax/argmin
and of the logical reductions. The helpers here are shared with
test_batching_reductions.py.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minijax as jax
import minijax.numpy as jnp
from minijax import dtypes, lax
from minijax.backend import get_backend
from minijax.config import config, config_context
from minijax.core import ShapedArray
from minijax.interpreters import ad, batching
from minijax.primitives import reductions as rp, structural as sp

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)

# ---------------------------------------------------------------------------
# Shared helpers and strategies


def law(**strategies: st.SearchStrategy[Any]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """``@given(**strategies)``, with fewer examples on a compiling backend.

    On xla every example compiles its programs afresh (random shapes), so a
    property runs 1/8 of the profile's examples there (at least 4); the
    numpy run covers the full count. The other arguments are pytest fixtures.
    """

    def decorate(test: Callable[..., None]) -> Callable[..., None]:
        def run(*args: Any, **fixtures: Any) -> None:
            examples = settings().max_examples  # the loaded profile's
            if get_backend().name != "numpy":
                examples = max(4, examples // 8)

            def example(**drawn: Any) -> None:
                test(*args, **fixtures, **drawn)

            example.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
                [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY) for name in strategies]
            )
            settings(max_examples=examples)(given(**strategies)(example))()

        signature = inspect.signature(test)
        kept = [p for p in signature.parameters.values() if p.name not in strategies]
        run.__signature__ = signature.replace(parameters=kept)  # type: ignore[attr-defined]
        run.__name__, run.__doc__ = test.__name__, test.__doc__
        return run

    return decorate


@pytest.fixture(params=["float32", "float64"])
def float_dtype(request: pytest.FixtureRequest) -> Iterator[np.dtype[Any]]:
    """The float dtype under test; float64 runs with jax_enable_x64 on (restored after)."""
    dtype = np.dtype(request.param)
    before = config.read("jax_enable_x64")
    config.update("jax_enable_x64", dtype == F64)
    try:
        yield dtype
    finally:
        config.update("jax_enable_x64", before)


def shapes(max_rank: int = 3, max_side: int = 4, min_side: int = 1) -> st.SearchStrategy[tuple[int, ...]]:
    return st.lists(st.integers(min_side, max_side), max_size=max_rank).map(tuple)


@st.composite
def shape_and_axes(draw: st.DrawFn, max_rank: int = 3, min_side: int = 1) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A shape and distinct reduction axes in any order (lax accepts unsorted axes)."""
    shape = draw(shapes(max_rank, min_side=min_side))
    chosen = draw(st.lists(st.sampled_from(range(len(shape))), unique=True)) if shape else []
    return shape, tuple(chosen)


DotCase = tuple[tuple[int, ...], tuple[int, ...], rp.DotDimensionNumbers]


@st.composite
def dot_cases(draw: st.DrawFn, max_each: int = 2) -> DotCase:
    """(lhs shape, rhs shape, dimension numbers) with batch, contracting and free axes
    of random sizes, each operand's axes in a random order."""
    n_batch, n_contract, n_lfree, n_rfree = (draw(st.integers(0, max_each)) for _ in range(4))
    batch = [draw(st.integers(1, 3)) for _ in range(n_batch)]
    contract = [draw(st.integers(1, 3)) for _ in range(n_contract)]

    def operand(n_free: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        roles = [("b", i) for i in range(n_batch)] + [("c", i) for i in range(n_contract)]
        roles += [("f", i) for i in range(n_free)]
        order = draw(st.permutations(roles))
        free = [draw(st.integers(1, 3)) for _ in range(n_free)]
        size = {"b": batch, "c": contract, "f": free}
        shape = tuple(size[kind][i] for kind, i in order)
        return shape, tuple(order.index(("b", i)) for i in range(n_batch)), tuple(order.index(("c", i)) for i in range(n_contract))

    lshape, lb, lc = operand(n_lfree)
    rshape, rb, rc = operand(n_rfree)
    return lshape, rshape, ((lc, rc), (lb, rb))


def rand(seed: int, shape: Sequence[int], dtype: np.dtype[Any], low: float = -2.0, high: float = 2.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, size=tuple(shape)).astype(dtype)


def distinct(seed: int, shape: Sequence[int], dtype: np.dtype[Any]) -> np.ndarray:
    """Values 0.25 apart, so that max/min are attained once and are smooth around x."""
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape, dtype=np.int64))
    values = (rng.permutation(size) - size / 2) * 0.25 + rng.uniform(0, 0.1)
    return values.reshape(tuple(shape)).astype(dtype)


def assert_close(actual: Any, expected: Any, dtype: np.dtype[Any], scale: float = 1.0) -> None:
    """Close within a tolerance for ``dtype``; ``scale`` is the size of the terms summed."""
    tol = 2e-4 if dtype == F32 else 1e-8
    np.testing.assert_allclose(np.asarray(actual, np.float64), np.asarray(expected, np.float64), rtol=tol, atol=tol * scale)


def finite_difference(f: Callable[..., Any], primals: Sequence[np.ndarray], tangents: Sequence[np.ndarray]) -> np.ndarray:
    """Central difference of ``f`` along ``tangents``, computed in float64 (one jitted program)."""
    eps = 1e-6
    with config_context(jax_enable_x64=True):
        xs = [np.asarray(p, F64) for p in primals]
        ts = [np.asarray(t, F64) for t in tangents]
        f64 = jax.jit(f)
        plus = np.asarray(f64(*(x + eps * t for x, t in zip(xs, ts))), F64)
        minus = np.asarray(f64(*(x - eps * t for x, t in zip(xs, ts))), F64)
    return (plus - minus) / (2 * eps)


def check_jvp(f: Callable[..., Any], primals: Sequence[np.ndarray], tangents: Sequence[np.ndarray], dtype: np.dtype[Any]) -> None:
    """jvp (under jit: one compile per example) agrees with finite differences in float64."""
    out, tangent_out = jax.jit(lambda p, t: jax.jvp(f, tuple(p), tuple(t)))(list(primals), list(tangents))
    assert tangent_out.shape == out.shape and tangent_out.dtype == out.dtype == dtype
    assert_close(out, f(*primals), dtype)
    scale = 1.0 + sum(float(np.sum(np.abs(p))) * float(np.max(np.abs(t), initial=0.0)) for p, t in zip(primals, tangents))
    assert_close(tangent_out, finite_difference(f, primals, tangents), dtype, scale)


# ---------------------------------------------------------------------------
# jvp against finite differences


@law(case=shape_and_axes(), seed=st.integers(0, 2**32 - 1))
def test_reduce_sum_jvp(float_dtype: np.dtype[Any], case: Any, seed: int) -> None:
    shape, axes = case
    x, t = rand(seed, shape, float_dtype), rand(seed + 1, shape, float_dtype)
    check_jvp(lambda x: lax.reduce_sum(x, axes), [x], [t], float_dtype)


@pytest.mark.parametrize("reduce", [lax.reduce_max, lax.reduce_min], ids=["max", "min"])
@law(case=shape_and_axes(), seed=st.integers(0, 2**32 - 1))
def test_reduce_max_min_jvp(float_dtype: np.dtype[Any], reduce: Callable[..., Any], case: Any, seed: int) -> None:
    shape, axes = case
    x, t = distinct(seed, shape, float_dtype), rand(seed + 1, shape, float_dtype)
    check_jvp(lambda x: reduce(x, axes), [x], [t], float_dtype)


@law(case=shape_and_axes(min_side=0), seed=st.integers(0, 2**32 - 1), zeros=st.floats(0.0, 0.5))
def test_reduce_prod_jvp(float_dtype: np.dtype[Any], case: Any, seed: int, zeros: float) -> None:
    """Zero-sized reductions and exact zeros in the operand included (the product is a polynomial)."""
    shape, axes = case
    rng = np.random.default_rng(seed)
    x = rand(seed, shape, float_dtype, 0.5, 1.5) * rng.choice(np.array([-1, 1], float_dtype), size=shape)
    x = np.where(rng.random(shape) < zeros, float_dtype.type(0), x).astype(float_dtype)
    t = rand(seed + 1, shape, float_dtype)
    check_jvp(lambda x: lax.reduce_prod(x, axes), [x], [t], float_dtype)


@law(case=dot_cases(), seed=st.integers(0, 2**32 - 1))
def test_dot_general_jvp(float_dtype: np.dtype[Any], case: DotCase, seed: int) -> None:
    lshape, rshape, dn = case
    xs = [rand(seed, lshape, float_dtype), rand(seed + 1, rshape, float_dtype)]
    ts = [rand(seed + 2, lshape, float_dtype), rand(seed + 3, rshape, float_dtype)]
    check_jvp(lambda a, b: lax.dot_general(a, b, dn), xs, ts, float_dtype)


def test_max_ties_share_the_tangent(float_dtype: np.dtype[Any]) -> None:
    # JAX's rule: the tangent is the mean of the tangents where the extremum is attained.
    x = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, -1.0]], float_dtype)
    t = np.array([[10.0, 20.0, 40.0, 80.0], [1.0, 2.0, 6.0, 100.0]], float_dtype)
    _, tangent = jax.jvp(lambda x: lax.reduce_max(x, (1,)), (x,), (t,))
    np.testing.assert_allclose(tangent, [30.0, 3.0])
    _, tangent = jax.jvp(lambda x: lax.reduce_min(x, (0,)), (x[:, :3],), (t[:, :3],))
    np.testing.assert_allclose(tangent, [10.0, 20.0, 40.0])
    assert tangent.dtype == float_dtype


def _jacobian_row(f: Callable[[Any], Any], x: np.ndarray) -> np.ndarray:
    """The gradient of scalar ``f`` by forward mode, one basis tangent at a time."""
    basis = np.eye(x.size, dtype=x.dtype).reshape(x.size, *x.shape)
    return np.array([jax.jvp(f, (x,), (e,))[1] for e in basis]).reshape(x.shape)


PROD_CASES = [([2.0, 0.0, 3.0], [0.0, 6.0, 0.0]), ([0.0, 4.0, 0.0], [0.0, 0.0, 0.0]), ([2.0, 5.0, 3.0], [15.0, 6.0, 10.0])]


@pytest.mark.parametrize(("x", "expected"), PROD_CASES)
def test_prod_derivative_is_exact_at_zeros(x: list[float], expected: list[float]) -> None:
    g = _jacobian_row(lambda v: lax.reduce_prod(v, (0,)), np.array(x, np.float32))
    np.testing.assert_array_equal(g, np.array(expected, np.float32))


def test_preferred_element_type_cotangents_have_the_operand_dtype() -> None:
    """A float16 contraction computed in float32 still hands each operand a float16 cotangent."""
    a = rand(0, (2, 3), np.dtype(np.float16))
    b = rand(1, (3, 4), np.dtype(np.float16))

    def f(a: Any, b: Any) -> Any:
        return jnp.sum(lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=np.float32))

    ga, gb = jax.grad(f, argnums=(0, 1))(a, b)
    assert (ga.dtype, gb.dtype, ga.shape, gb.shape) == (np.float16, np.float16, a.shape, b.shape)
    ones = np.ones((2, 4), np.float32)
    np.testing.assert_allclose(ga, (ones @ b.astype(np.float32).T).astype(np.float16), rtol=1e-3)
    np.testing.assert_allclose(gb, (a.astype(np.float32).T @ ones).astype(np.float16), rtol=1e-3)


# ---------------------------------------------------------------------------
# Non-differentiable primitives: zero tangents (float0 for integer results)


@pytest.mark.parametrize("prim", [rp.argmax_p, rp.argmin_p], ids=lambda p: p.name)
def test_arg_reductions_have_zero_tangents(prim: Any) -> None:
    x = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], np.float32)
    out, tangent = ad.primitive_jvps[prim]([x], [np.ones_like(x)], axes=(1,), index_dtype=np.dtype(np.int32))
    np.testing.assert_array_equal(out, [1, 0] if prim is rp.argmax_p else [0, 1])
    assert type(tangent) is ad.Zero and tangent.aval.dtype == dtypes.float0 and tangent.aval.shape == (2,)
    # Through the public API: the index is a constant, the value still differentiable.
    fn = lax.argmax if prim is rp.argmax_p else lax.argmin
    _, t = jax.jvp(lambda x: fn(x, 1, np.int32), (x,), (np.ones_like(x),))
    assert t.dtype == dtypes.float0 and t.shape == (2,)
    g = jax.grad(lambda x: lax.reduce_sum(x, (0, 1)) * lax.convert_element_type(fn(x, 1, np.int32)[0], np.float32))(x)
    np.testing.assert_array_equal(g, np.full_like(x, 1.0 if prim is rp.argmax_p else 0.0))


@pytest.mark.parametrize("prim", [rp.reduce_and_p, rp.reduce_or_p, rp.reduce_xor_p], ids=lambda p: p.name)
@pytest.mark.parametrize("dtype", [np.bool_, np.int32])
def test_logical_reductions_have_zero_tangents(prim: Any, dtype: Any) -> None:
    x = np.array([[1, 0, 3], [1, 2, 0]], dtype)
    t = np.zeros(x.shape, dtypes.float0)
    out, tangent = ad.primitive_jvps[prim]([x], [t], axes=(0,))
    np.testing.assert_array_equal(out, prim.bind(x, axes=(0,)))
    assert type(tangent) is ad.Zero and tangent.aval.dtype == dtypes.float0 and tangent.aval.shape == (3,)
    out2, tangent2 = jax.jvp(lambda x: prim.bind(x, axes=(0,)), (x,), (t,))
    np.testing.assert_array_equal(out2, out)
    assert tangent2.dtype == dtypes.float0 and tangent2.shape == (3,)


def test_integer_dot_general_has_float0_tangent() -> None:
    a, b = np.arange(6, dtype=np.int32).reshape(2, 3), np.ones((3,), np.int32)
    zero = np.zeros((2, 3), dtypes.float0)
    out, tangent = jax.jvp(lambda a: lax.dot(a, b), (a,), (zero,))
    np.testing.assert_array_equal(out, a @ b)
    assert tangent.dtype == dtypes.float0 and tangent.shape == (2,)


# ---------------------------------------------------------------------------
# The transposition law for the linear primitives


def check_transpose(f: Callable[[Any], Any], x: np.ndarray, seed: int, dtype: np.dtype[Any], coefficient: float = 1.0) -> None:
    """<ct, L t> == <L^T ct, t> with L = f's linearization at x; L^T ct has x's aval.

    ``coefficient`` bounds L's matrix entries (for the tolerance).
    """

    def both(x: Any, t: Any, ct: Any) -> tuple[Any, Any]:
        _, f_jvp = jax.linearize(f, x)
        _, f_vjp = jax.vjp(f, x)
        return f_jvp(t), f_vjp(ct)[0]

    t = rand(seed, x.shape, dtype)
    ct = rand(seed + 1, jax.eval_shape(f, x).shape, dtype)
    lt, ct_x = jax.jit(both)(x, t, ct)
    assert ct_x.shape == x.shape and ct_x.dtype == x.dtype
    lhs = float(np.sum(np.asarray(ct, F64) * np.asarray(lt, F64)))
    rhs = float(np.sum(np.asarray(ct_x, F64) * np.asarray(t, F64)))
    # Every term of either sum is ct_i * L_ij * t_j.
    scale = 1.0 + float(np.sum(np.abs(ct))) * 2.0 * coefficient * max(1, x.size)
    assert_close(lhs, rhs, dtype, scale)


@law(case=shape_and_axes(min_side=0), seed=st.integers(0, 2**32 - 1))
def test_reduce_sum_transpose(float_dtype: np.dtype[Any], case: Any, seed: int) -> None:
    shape, axes = case
    check_transpose(lambda x: lax.reduce_sum(x, axes), rand(seed, shape, float_dtype), seed + 2, float_dtype)


@pytest.mark.parametrize("side", ["lhs", "rhs"])
@law(case=dot_cases(), seed=st.integers(0, 2**32 - 1))
def test_dot_general_transpose(float_dtype: np.dtype[Any], side: str, case: DotCase, seed: int) -> None:
    lshape, rshape, dn = case
    a, b = rand(seed, lshape, float_dtype), rand(seed + 1, rshape, float_dtype)
    if side == "lhs":
        check_transpose(lambda a: lax.dot_general(a, b, dn), a, seed + 2, float_dtype, 2.0)
    else:
        check_transpose(lambda b: lax.dot_general(a, b, dn), b, seed + 2, float_dtype, 2.0)


def test_transpose_rules_pass_zero_cotangents_through() -> None:
    x = ad.UndefinedPrimal(ShapedArray((2, 3), F32))
    (out,) = ad.transpose_rules[sp.reduce_sum_p](ad.Zero(ShapedArray((3,), F32)), x, axes=(0,), out_sharding=None)
    assert type(out) is ad.Zero and out.aval.shape == (2, 3)
    outs = ad.transpose_rules[rp.dot_general_p](
        ad.Zero(ShapedArray((2, 4), F32)),
        x,
        np.ones((3, 4), np.float32),
        dimension_numbers=(((1,), (0,)), ((), ())),
        precision=None,
        preferred_element_type=None,
        out_sharding=None,
    )
    assert outs[1] is None and type(outs[0]) is ad.Zero and outs[0].aval.shape == (2, 3)


# ---------------------------------------------------------------------------
# Composition with jit, and reverse mode end to end


def _loss(w: Any, b: Any, x: Any) -> Any:
    h = lax.dot_general(x, w, (((1,), (0,)), ((), ())))
    return lax.reduce_sum(lax.reduce_max(h, (1,)) * lax.reduce_sum(h * b, (1,)), (0,)) + lax.reduce_prod(lax.reduce_sum(w, (0,)), (0,))


def _loss_inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return distinct(0, (3, 4), F32) / 4, rand(1, (4,), F32), rand(2, (5, 3), F32)


def test_jvp_composes_with_jit() -> None:
    w, b, x = _loss_inputs()
    tw = rand(4, w.shape, F32)
    f = lambda w: _loss(w, b, x)  # noqa: E731
    _, t_eager = jax.jvp(f, (w,), (tw,))
    _, t_jit_inner = jax.jvp(jax.jit(f), (w,), (tw,))
    _, t_jit_outer = jax.jit(lambda w, tw: jax.jvp(f, (w,), (tw,)))(w, tw)
    np.testing.assert_allclose(t_jit_inner, t_eager, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t_jit_outer, t_eager, rtol=1e-5, atol=1e-5)
    check_jvp(f, [w], [tw], F32)


def test_linear_transpose_composes_with_jit() -> None:
    """vjp of the linear primitives alone (reduce_sum, dot_general, mul), inside and outside jit."""
    w, b, x = _loss_inputs()

    def f(w: Any) -> Any:
        return lax.reduce_sum(lax.dot_general(x, w, (((1,), (0,)), ((), ()))) * b, (0, 1))

    expected = np.broadcast_to((x.sum(0)[:, None] * b[None, :]), w.shape)
    for g in (jax.grad(f), jax.grad(jax.jit(f)), jax.jit(jax.grad(f))):
        np.testing.assert_allclose(g(w), expected, rtol=1e-5, atol=1e-5)


# Reverse mode through reduce_max/min and reduce_prod also needs the
# transpose rules of the primitives their jvp rules stage: div and mul
# (elementwise), slice, pad, squeeze and reshape (structural).


def test_grad_composes_with_jit() -> None:
    w, b, x = _loss_inputs()
    expected = [_jacobian_row(lambda w: _loss(w, b, x), w), _jacobian_row(lambda b: _loss(w, b, x), b)]
    for g in (jax.grad(_loss, argnums=(0, 1)), jax.grad(jax.jit(_loss), argnums=(0, 1)), jax.jit(jax.grad(_loss, argnums=(0, 1)))):
        for got, want in zip(g(w, b, x), expected):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_grad_of_max_and_min_share_ties(float_dtype: np.dtype[Any]) -> None:
    g = jax.grad(lambda x: jnp.min(x))(np.array([1.0, 3.0, 1.0], float_dtype))
    np.testing.assert_allclose(g, [0.5, 0.0, 0.5])
    assert g.dtype == float_dtype
    g = jax.grad(lambda x: jnp.sum(jnp.max(x, axis=0)))(np.array([[1.0, 4.0], [2.0, 4.0]], float_dtype))
    np.testing.assert_allclose(g, [[0.0, 0.5], [1.0, 0.5]])


@pytest.mark.parametrize(("x", "expected"), PROD_CASES)
def test_grad_of_prod_is_exact_at_zeros(x: list[float], expected: list[float]) -> None:
    g = jax.grad(lambda v: jnp.prod(v))(np.array(x, np.float32))
    np.testing.assert_array_equal(g, np.array(expected, np.float32))


@law(case=shape_and_axes(min_side=0), seed=st.integers(0, 2**32 - 1))
def test_grad_of_prod_matches_forward_mode(case: Any, seed: int) -> None:
    shape, axes = case
    x = rand(seed, shape, F32, 0.5, 1.5)
    f = lambda x: lax.reduce_sum(lax.reduce_prod(x, axes), tuple(range(len(shape) - len(axes))))  # noqa: E731
    np.testing.assert_allclose(jax.grad(f)(x), _jacobian_row(f, x) if x.size else np.zeros(shape), rtol=1e-5, atol=1e-5)


def test_second_order() -> None:
    # prod(x) for x in R^2 has Hessian [[0, 1], [1, 0]]; x.x has Hessian 2 I.
    x = np.array([2.0, 3.0], np.float32)
    h0 = jax.grad(lambda x: jax.grad(lambda x: jnp.prod(x))(x)[0])(x)
    np.testing.assert_allclose(h0, [0.0, 1.0])
    h1 = jax.grad(lambda v: jax.grad(lambda w: jnp.dot(w, w))(v)[1])(x)
    np.testing.assert_allclose(h1, [0.0, 2.0])


# ---------------------------------------------------------------------------
# Every primitive of the family has its rules


FAMILY = [*rp.REDUCTION_PRIMITIVES.values(), rp.argmax_p, rp.argmin_p, rp.dot_general_p]


@pytest.mark.parametrize("prim", FAMILY, ids=lambda p: p.name)
def test_every_primitive_has_its_rules(prim: Any) -> None:
    assert prim in ad.primitive_jvps
    assert prim in batching.primitive_batchers
    assert (prim in ad.transpose_rules) == (prim in (sp.reduce_sum_p, rp.dot_general_p))
