"""lax.linalg.tridiagonal_solve(perturb_singular=True) against JAX 0.10.2 (jaxlib's perturbed kernel):
regular, singular, zero and tiny-pivot systems, float32 and float64, batched, eager and under jit, on both
backends; the derivative and the dtypes/weak types."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402
from minijax.config import config  # noqa: E402

pytestmark = pytest.mark.oracle


def _systems() -> dict[str, tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(5)
    m = 6
    regular = (rng.normal(size=(4, m)), rng.normal(size=(4, m)) + 3, rng.normal(size=(4, m)), rng.normal(size=(4, m, 2)))
    # singular: random diagonals with whole rows zeroed or repeated, small integers (exact ties in pivoting)
    ints = rng.integers(-2, 3, size=(3, 8, m)).astype(np.float64)
    ints[1, ::2, 2] = 0
    ints[:, 1::3, :] = 0
    singular = (ints[0], ints[1], ints[2], rng.integers(-3, 4, size=(8, m, 1)).astype(np.float64))
    zero = (np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 3)), np.stack([np.ones((3, 2)), np.zeros((3, 2))]))
    tiny = (np.full((2, 4), 1e-30), np.array([[1e-38, 1e-39, 1.0, 1e-30], [0.0, 1e-20, 1e-40, 1.0]]),
            np.full((2, 4), 1e-3), np.full((2, 4, 1), 1e3))
    return {"regular": regular, "singular": singular, "zero": zero, "tiny": tiny}


SYSTEMS = _systems()
PARAMS = [(name, dtype, jit, backend) for name in SYSTEMS for dtype in ("float32", "float64")
          for jit in (False, True) for backend in ("xla", "numpy")]


@pytest.mark.parametrize("name, dtype, jit, backend", PARAMS, ids=["-".join(map(str, p)) for p in PARAMS])
def test_values_equal_jax(name: str, dtype: str, jit: bool, backend: str) -> None:
    args = [a.astype(dtype) for a in SYSTEMS[name]]
    with jax.enable_x64(dtype == "float64"):
        want = np.asarray(jax.jit(lambda *a: jax.lax.linalg.tridiagonal_solve(*a, perturb_singular=True))(*args))
    previous = config.read("minijax_backend"), config.read("jax_enable_x64")
    config.update("minijax_backend", backend)
    config.update("jax_enable_x64", dtype == "float64")
    try:
        f = lambda *a: minijax.lax.linalg.tridiagonal_solve(*a, perturb_singular=True)  # noqa: E731
        got = np.asarray((minijax.jit(f) if jit else f)(*args))
    finally:
        config.update("minijax_backend", previous[0])
        config.update("jax_enable_x64", previous[1])
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == "float32" else 1e-13, equal_nan=True)


def test_derivatives_and_weak_types_equal_jax() -> None:
    dl, d, du, b = (a.astype(np.float32) for a in SYSTEMS["regular"])

    def loss(mod: Any) -> Any:
        return lambda *a: mod.lax.linalg.tridiagonal_solve(*a, perturb_singular=True).sum()

    want = jax.grad(loss(jax), (0, 1, 2, 3))(dl, d, du, b)
    got = minijax.grad(loss(minijax), (0, 1, 2, 3))(dl, d, du, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-5)
    one = [np.float32(v) * np.ones(s, np.float32) for v, s in ((0, 2), (2, 2), (1, 2), (1, (2, 1)))]
    w = jax.lax.linalg.tridiagonal_solve(*one, perturb_singular=True)
    g = minijax.lax.linalg.tridiagonal_solve(*one, perturb_singular=True)
    assert (g.dtype, g.weak_type) == (w.dtype, w.weak_type)
