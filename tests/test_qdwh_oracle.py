"""lax.linalg.qdwh and scipy.linalg.polar(method='qdwh') against JAX 0.10.2: the factors, the iteration
count and the convergence flag (for several max_iterations and eps), dtypes and weak types, the errors,
eager and under jit, on both backends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402
from minijax.config import config  # noqa: E402

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(3)


def _conditioned(shape: tuple[int, int], cond: float) -> np.ndarray:
    q1, _ = np.linalg.qr(RNG.normal(size=(shape[0], shape[0])))
    q2, _ = np.linalg.qr(RNG.normal(size=(shape[1], shape[1])))
    s = np.logspace(0, -np.log10(cond), shape[1])
    return ((q1[:, : shape[1]] * s) @ q2.T).astype(np.float32)


MATRICES = {
    "square": RNG.normal(size=(6, 6)).astype(np.float32),
    "tall": RNG.normal(size=(9, 4)).astype(np.float32),
    "ill": _conditioned((7, 5), 1e5),
    "one": np.full((1, 1), -3.0, np.float32),
    "zero": np.zeros((3, 3), np.float32),
}
OPTIONS = [{}, {"max_iterations": 2}, {"max_iterations": 0}, {"max_iterations": 2.5}, {"eps": 1e-3}]  # 2.5: int(), as JAX
CASES = [(name, opts) for name in MATRICES for opts in OPTIONS]


def _on(backend: str, f: Callable[[], Any]) -> Any:
    previous = config.read("minijax_backend")
    config.update("minijax_backend", backend)
    try:
        return f()
    finally:
        config.update("minijax_backend", previous)


@pytest.mark.parametrize("backend", ["xla", "numpy"])
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name, opts", CASES, ids=[f"{n}-{o}" for n, o in CASES])
def test_qdwh_equals_jax(name: str, opts: dict[str, Any], jit: bool, backend: str) -> None:
    x = MATRICES[name]
    want = jax.lax.linalg.qdwh(x, **opts)

    def run() -> Any:
        f = lambda v: minijax.lax.linalg.qdwh(v, **opts)  # noqa: E731
        return (minijax.jit(f) if jit else f)(x)

    got = _on(backend, run)
    # U of a matrix with condition number 1e5 is determined to ~eps * 1e5 in float32 (rounding in another
    # order moves it that much); H stays well determined.
    u_atol = 5e-3 if name == "ill" else 2e-5
    for g, w, atol in zip(got[:2], want[:2], (u_atol, 2e-5)):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=atol)
    for g, w in zip(got[2:], want[2:]):
        assert (g.dtype, g.weak_type, int(g)) == (w.dtype, w.weak_type, int(w))


@pytest.mark.parametrize("backend", ["xla", "numpy"])
@pytest.mark.parametrize("side, shape", [("right", (5, 3)), ("right", (2, 4, 4)), ("left", (3, 6)), ("left", (2, 2, 3))])
def test_polar_qdwh_equals_jax(side: str, shape: tuple[int, ...], backend: str) -> None:
    a = RNG.normal(size=shape).astype(np.float32)
    want = jax.scipy.linalg.polar(a, side=side)
    got = _on(backend, lambda: minijax.scipy.linalg.polar(a, side=side))
    for g, w in zip(got, want):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("call", [lambda m: m.lax.linalg.qdwh(np.ones((2, 3), np.float32)),
                                  lambda m: m.scipy.linalg.polar(np.ones((3, 2), np.float32), side="left")],
                         ids=["wide", "polar_left_tall"])
def test_errors_equal_jax(call: Callable[[Any], Any]) -> None:
    with pytest.raises(Exception) as want:
        call(jax)
    with pytest.raises(want.type):
        call(minijax)
