"""jnp.vectorize, piecewise, apply_along_axis, apply_over_axes against real JAX
0.10.2: values, shapes, dtypes and errors, over hypothesis-drawn shapes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import jax.numpy as jjnp  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

import minijax  # noqa: E402
import minijax.numpy as mjnp  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

BATCH = st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple)


def _same(got: Any, want: Any) -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert (got.shape, str(got.dtype), getattr(got, "weak_type", False)) == (
        want.shape,
        str(want.dtype),
        want.weak_type,
    )
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


@settings(max_examples=15, deadline=None)
@given(b1=BATCH, b2=BATCH, n=st.integers(1, 3), k=st.integers(1, 3), seed=st.integers(0, 100))
def test_vectorize_signature(b1: tuple[int, ...], b2: tuple[int, ...], n: int, k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(*b1, n, k)).astype(np.float32)
    v = rng.normal(size=(*b2, k)).astype(np.float32)
    try:
        np.broadcast_shapes(b1, b2)
    except ValueError:
        return

    def run(j: Any) -> Any:
        return j.vectorize(lambda a, b: (a @ b, a.sum()), signature="(n,k),(k)->(n),()")(m, v)

    _same(run(mjnp), run(jjnp))


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple), scalar=st.booleans())
def test_vectorize_elementwise_and_excluded(shape: tuple[int, ...], scalar: bool) -> None:
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    y = 2 if scalar else np.float32(2)

    def run(j: Any) -> Any:
        return j.vectorize(lambda a, p, b: a**p + b, excluded={1})(x, 2, y)

    _same(run(mjnp), run(jjnp))


PIECES: list[tuple[Callable[[Any], Any], Callable[[Any], list[Any]], list[Any]]] = [
    (lambda j: j.linspace(-3, 3, 11), lambda x: [x < 0], [lambda t: -t, lambda t: t * 2]),
    (lambda j: j.linspace(-3, 3, 11), lambda x: [x < -1, x > 1], [lambda t: -t, 5.0, lambda t: t**2]),
    (lambda j: j.arange(-4, 5), lambda x: [x < 0, x > 2], [lambda t: t * 2.5, 7]),
    (lambda j: j.arange(6.0).reshape(2, 3), lambda x: [x > 2], [lambda t: t / 2]),
    (lambda j: j.arange(-2.0, 3.0), lambda x: [True, False], [1.0, 2.0, 3.0]),
]


@pytest.mark.parametrize("case", range(len(PIECES)))
def test_piecewise(case: int) -> None:
    xs, conds, funcs = PIECES[case]

    def run(j: Any) -> Any:
        x = xs(j)
        return j.piecewise(x, conds(x), funcs)

    _same(run(mjnp), run(jjnp))


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), data=st.data())
def test_apply_along_axis(shape: tuple[int, ...], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)

    def run(j: Any) -> Any:
        return j.apply_along_axis(lambda v, s: j.stack([v.sum() * s, v.min()]), axis, x, 3)

    _same(run(mjnp), run(jjnp))


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), data=st.data())
def test_apply_over_axes(shape: tuple[int, ...], data: st.DataObject) -> None:
    axes = data.draw(st.lists(st.integers(0, len(shape) - 1), max_size=len(shape), unique=True))
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    for name in ("sum", "max", "cumsum"):
        _same(mjnp.apply_over_axes(getattr(mjnp, name), x, axes), jjnp.apply_over_axes(getattr(jjnp, name), x, axes))


def test_under_jax_transformations_as_jax() -> None:
    def program(lib: Any, j: Any, x: Any) -> Any:
        def f(t: Any) -> Any:
            return j.piecewise(t, [t < 0], [lambda u: j.sin(u), lambda u: u**3]).sum()

        return lib.jit(lib.vmap(lib.grad(f)))(x)

    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    _same(program(minijax, mjnp, x), program(jax, jjnp, x))


ERRORS: list[Callable[[Any], Any]] = [
    lambda j: j.vectorize(lambda a: a.sum(), signature="(n)->()")(j.float32(1)),
    lambda j: j.vectorize(lambda a: a, signature="(n)->()")(j.ones(3)),
    lambda j: j.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")(j.ones(3), j.ones(4)),
    lambda j: j.vectorize(lambda a: a, signature="(n)->(),()")(j.ones(3)),
    lambda j: j.vectorize(lambda a: (a, a), signature="(n)->(n)")(j.ones(3)),
    lambda j: j.vectorize(lambda a: a, signature="(n)->(n)")(j.ones(3), j.ones(3)),
    lambda j: j.vectorize(lambda a: a, signature="(n->(n)")(j.ones(3)),
    lambda j: j.vectorize(lambda a: a, excluded={-1}),
    lambda j: j.vectorize(lambda a: a, excluded={1.5}),
    lambda j: j.piecewise(j.ones(3), [j.ones(3) > 0], [1, 2, 3]),
    lambda j: j.piecewise([1.0, 2.0], [True], [1]),
    lambda j: j.apply_over_axes(lambda t, ax: t.sum(), j.ones((2, 3)), [0]),
    lambda j: j.apply_along_axis(lambda t: t, 2, j.ones((2, 3))),
    lambda j: j.apply_along_axis(lambda t: t, 0, [1.0, 2.0]),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors(index: int) -> None:
    with pytest.raises(Exception) as want:
        ERRORS[index](jjnp)
    with pytest.raises(Exception) as got:
        ERRORS[index](mjnp)
    assert type(got.value) is not AssertionError
    assert type(got.value).__name__ == type(want.value).__name__, (got.value, want.value)
    assert str(want.value).split(":")[0][:30] in str(got.value), (got.value, want.value)
