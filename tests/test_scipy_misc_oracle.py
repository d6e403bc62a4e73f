"""jax.scipy's ndimage.map_coordinates, interpolate.RegularGridInterpolator,
cluster.vq.vq and integrate.trapezoid against real JAX 0.10.2: values, dtypes,
weak types and errors over hypothesis-drawn shapes and options."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import jax.numpy as jjnp  # noqa: E402
import jax.scipy as jsp  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

import minijax  # noqa: E402
import minijax.numpy as mjnp  # noqa: E402
import minijax.scipy as msp  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

LIBS = {"jax": (jax, jjnp, jsp), "minijax": (minijax, mjnp, msp)}


def _same(got: Any, want: Any, rtol: float = 1e-5) -> None:
    if isinstance(want, tuple):
        for g, w in zip(got, want, strict=True):
            _same(g, w, rtol)
        return
    assert (got.shape, str(got.dtype), getattr(got, "weak_type", False)) == (
        want.shape,
        str(want.dtype),
        want.weak_type,
    )
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=rtol)


def _both(fn: Callable[[Any, Any, Any], Any], rtol: float = 1e-5) -> None:
    _same(fn(*LIBS["minijax"]), fn(*LIBS["jax"]), rtol)


MODES = st.sampled_from(["constant", "nearest", "wrap", "mirror", "reflect"])


@settings(max_examples=20, deadline=None)
@given(
    shape=st.lists(st.integers(2, 5), min_size=1, max_size=3).map(tuple),
    order=st.sampled_from([0, 1]),
    mode=MODES,
    cval=st.sampled_from([0.0, -1.5, 2]),
    dtype=st.sampled_from(["float32", "int32"]),
    seed=st.integers(0, 1000),
)
def test_map_coordinates(shape: tuple[int, ...], order: int, mode: str, cval: float, dtype: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    image = (rng.normal(size=shape) * 10).astype(dtype)
    coords = [rng.uniform(-3, s + 2, size=(4, 2)).astype(np.float32) for s in shape]
    # Exact halves and integers: rounding and edges.
    coords[0][0] = [0.5, 1.0]
    _both(lambda m, j, s: s.ndimage.map_coordinates(image, coords, order, mode, cval))


def test_map_coordinates_grad_and_jit() -> None:
    def f(lib: Any, j: Any, s: Any) -> Any:
        image = j.arange(12.0).reshape(3, 4)

        def loss(img: Any, c: Any) -> Any:
            return s.ndimage.map_coordinates(img, [c, c + 0.25], 1, "reflect").sum()

        return lib.jit(lib.grad(loss, argnums=(0, 1)))(image, j.array([0.3, 1.7, 2.2]))

    _both(f)


@settings(max_examples=8, deadline=None)
@given(
    sizes=st.lists(st.integers(2, 4), min_size=1, max_size=3),
    extra=st.sampled_from([(), (2,)]),
    method=st.sampled_from(["linear", "nearest"]),
    fill=st.sampled_from([np.nan, None, -1.0]),
    seed=st.integers(0, 1000),
)
def test_regular_grid_interpolator(sizes: list[int], extra: tuple[int, ...], method: str, fill: Any, seed: int) -> None:
    rng = np.random.default_rng(seed)
    grid = [np.sort(rng.uniform(0, 5, size=n)).astype(np.float32) + np.arange(n) for n in sizes]
    values = rng.normal(size=(*sizes, *extra)).astype(np.float32)
    xi = np.stack([rng.uniform(g[0] - 1, g[-1] + 1, size=(3, 2)) for g in grid], -1).astype(np.float32)

    def f(lib: Any, j: Any, s: Any) -> Any:
        # Under jit: one compilation per example rather than one per eager operation.
        def run(g: Any, v: Any, x: Any) -> Any:
            interp = s.interpolate.RegularGridInterpolator(g, v, method=method, fill_value=fill)
            other = "nearest" if method == "linear" else "linear"
            return interp(x), interp(x, method=other)

        return lib.jit(run)(tuple(grid), values, xi)

    _both(f)


def test_regular_grid_interpolator_tuple_points_and_ints() -> None:
    def f(lib: Any, j: Any, s: Any) -> Any:
        interp = s.interpolate.RegularGridInterpolator(
            (j.array([1, 2, 3]), j.array([4, 5, 6])), j.arange(9).reshape(3, 3)
        )
        return interp((j.array([1.5, 2.2]), j.array([4.5, 5.8]))), interp(j.array([1.5, 4.5]))

    _both(f)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 6), k=st.integers(1, 4), d=st.sampled_from([None, 1, 3]), seed=st.integers(0, 1000))
def test_vq(n: int, k: int, d: int | None, seed: int) -> None:
    rng = np.random.default_rng(seed)
    obs = rng.normal(size=(n,) if d is None else (n, d)).astype(np.float32)
    book = rng.normal(size=(k,) if d is None else (k, d)).astype(np.float32)
    _both(lambda m, j, s: s.cluster.vq.vq(obs, book))


@settings(max_examples=15, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
    data=st.data(),
    kind=st.sampled_from(["dx", "x1", "xnd", "dxarr"]),
)
def test_trapezoid(shape: tuple[int, ...], data: st.DataObject, kind: str) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    y = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) ** 1.5
    x1 = np.cumsum(np.arange(1, shape[axis] + 1, dtype=np.float32))
    kw: dict[str, Any] = {
        "dx": {"dx": 0.5},
        "x1": {"x": x1},
        "xnd": {"x": y * 0.5 + 1},
        "dxarr": {"dx": np.full(shape[axis] - 1, 0.25, np.float32)} if len(shape) == 1 and shape[0] > 1 else {"dx": 2},
    }[kind]
    _both(lambda m, j, s: s.integrate.trapezoid(y, axis=axis, **kw))
    _both(lambda m, j, s: s.integrate.trapezoid(np.arange(5), dx=2))


ERRORS: list[Callable[[Any, Any, Any], Any]] = [
    lambda m, j, s: s.ndimage.map_coordinates(j.ones((2, 2)), [j.zeros(3)], 1),
    lambda m, j, s: s.ndimage.map_coordinates(j.ones(3), [j.zeros(3)], 2),
    lambda m, j, s: s.ndimage.map_coordinates(j.ones(3), [j.zeros(3)], 1, mode="grid-wrap"),
    lambda m, j, s: s.interpolate.RegularGridInterpolator((j.arange(3.0),), j.ones(3), method="cubic"),
    lambda m, j, s: s.interpolate.RegularGridInterpolator((j.arange(3.0),), j.ones(3), bounds_error=True),
    lambda m, j, s: s.interpolate.RegularGridInterpolator((j.arange(3.0), j.arange(2.0)), j.ones(3)),
    lambda m, j, s: s.interpolate.RegularGridInterpolator((j.arange(3.0),), j.ones(3))(j.ones((2, 2))),
    lambda m, j, s: s.interpolate.RegularGridInterpolator((j.arange(3.0),), j.ones(3))(j.ones(2), method="cubic"),
    lambda m, j, s: s.cluster.vq.vq(j.ones((2, 2)), j.ones(2)),
    lambda m, j, s: s.cluster.vq.vq(j.ones((2, 2, 2)), j.ones((2, 2, 2))),
    lambda m, j, s: s.cluster.vq.vq([1.0], j.ones(2)),
    lambda m, j, s: s.integrate.trapezoid([1.0, 2.0]),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors(index: int) -> None:
    with pytest.raises(Exception) as want:
        ERRORS[index](*LIBS["jax"])
    with pytest.raises(Exception) as got:
        ERRORS[index](*LIBS["minijax"])
    assert type(got.value).__name__ == type(want.value).__name__, (got.value, want.value)
    assert str(got.value)[:40] == str(want.value)[:40], (got.value, want.value)
