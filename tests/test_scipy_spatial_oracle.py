"""jax.scipy.spatial.transform's Rotation and Slerp against real JAX 0.10.2:
every constructor, converter and method, on hypothesis-drawn rotations."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import jax.numpy as jjnp  # noqa: E402
import jax.scipy.spatial.transform as jtr  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

import minijax  # noqa: E402
import minijax.numpy as mjnp  # noqa: E402
import minijax.scipy.spatial.transform as mtr  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

LIBS = {"jax": (jax, jjnp, jtr), "minijax": (minijax, mjnp, mtr)}


def _same(got: Any, want: Any) -> None:
    gl, wl = minijax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(gl) == len(wl)
    for g, w in zip(gl, wl):
        assert (np.shape(g), str(np.asarray(g).dtype)) == (np.shape(w), str(np.asarray(w).dtype))
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)


def _jitted(fn: Callable[[Any, Any, Any, Any], Any], data: Any) -> None:
    """``fn(lib, jnp, transform, data)`` under each library's jit."""
    results = {name: lib.jit(lambda d, lib=lib, j=j, t=t: fn(lib, j, t, d))(data) for name, (lib, j, t) in LIBS.items()}
    _same(results["minijax"], results["jax"])


QUATS = st.integers(0, 10_000).map(lambda s: np.random.default_rng(s).normal(size=(5, 4)).astype(np.float32))
SEQS = st.sampled_from(["xyz", "ZYX", "zxz", "XYX", "yzx", "zy", "X"])


@settings(max_examples=5, deadline=None)
@given(quat=QUATS, seq=SEQS, degrees=st.booleans())
def test_converters(quat: np.ndarray[Any, Any], seq: str, degrees: bool) -> None:
    def fn(lib: Any, j: Any, t: Any, q: Any) -> Any:
        r = t.Rotation.from_quat(q)
        seq3 = seq if len(seq) == 3 else "xyz"
        return (
            r.as_quat(),
            r.as_quat(canonical=True),
            r.as_quat(scalar_first=True),
            r.as_matrix(),
            r.as_rotvec(),
            r.as_rotvec(degrees=degrees),
            r.as_mrp(),
            r.as_euler(seq3, degrees=degrees),
            r.magnitude(),
            t.Rotation.from_matrix(r.as_matrix()).as_quat(),
            t.Rotation.from_rotvec(r.as_rotvec(degrees=degrees), degrees=degrees).as_quat(),
            t.Rotation.from_mrp(r.as_mrp()).as_quat(),
            t.Rotation.from_euler(seq, r.as_euler("xyz")[:, : len(seq)], degrees=degrees).as_quat(),
            r.inv().as_quat(),
        )

    _jitted(fn, quat)


@settings(max_examples=8, deadline=None)
@given(quat=QUATS, inverse=st.booleans())
def test_composition_apply_mean_and_indexing(quat: np.ndarray[Any, Any], inverse: bool) -> None:
    vectors = np.arange(15, dtype=np.float32).reshape(5, 3) - 7

    def fn(lib: Any, j: Any, t: Any, q: Any) -> Any:
        r = t.Rotation.from_quat(q)
        return (
            (r * r[::-1]).as_quat(),
            (r[0] * r).as_quat(),
            r.apply(vectors, inverse=inverse),
            r[1].apply(vectors[0], inverse=inverse),
            r.mean().as_quat(),
            r.mean(j.arange(5.0)).as_quat(),
            t.Rotation.concatenate([r, r[:2]]).as_quat(),
            r[1:3].as_quat(),
        )

    _jitted(fn, quat)


@settings(max_examples=6, deadline=None)
@given(quat=QUATS, times=st.lists(st.floats(0, 4, width=32), min_size=1, max_size=4))
def test_slerp(quat: np.ndarray[Any, Any], times: list[float]) -> None:
    def fn(lib: Any, j: Any, t: Any, q: Any) -> Any:
        s = t.Slerp.init(j.array([0.0, 1.0, 1.5, 3.0, 4.0]), t.Rotation.from_quat(q))
        return s, s(j.array(times)).as_quat(), s(times[0]).as_quat()

    _jitted(fn, quat)


def test_eager_values_pytrees_and_vmap() -> None:
    results = {}
    for name, (lib, j, t) in LIBS.items():
        r = t.Rotation.from_euler("zxy", j.array([[90, 0, 0], [0, 45, 0], [0, 0, -30]]), degrees=True)
        results[name] = (
            r.as_euler("zxy"),
            t.Rotation.identity().as_matrix(),
            lib.vmap(lambda q, t=t: t.Rotation.from_quat(q).as_rotvec())(r.quat),
            t.Rotation.from_euler("z", 90, degrees=True).as_rotvec(),
            len(r),
            r.single,
            r[0].single,
        )
    g, w = results["minijax"], results["jax"]
    assert g[4:] == w[4:]
    _same(g[:4], w[:4])


ERRORS: list[Callable[[Any, Any], Any]] = [
    lambda j, t: t.Rotation.from_euler("xyzx", j.ones(4)),
    lambda j, t: t.Rotation.from_euler("xYz", j.ones(3)),
    lambda j, t: t.Rotation.from_euler("xxz", j.ones(3)),
    lambda j, t: t.Rotation.from_euler("abc", j.ones(3)),
    lambda j, t: t.Rotation.identity().as_euler("xy"),
    lambda j, t: t.Rotation.identity().as_euler("xxy"),
    lambda j, t: t.Rotation.identity()[0],
    lambda j, t: len(t.Rotation.identity()),
    lambda j, t: t.Rotation.from_quat(j.ones((3, 4))).mean(j.ones(2)),
    lambda j, t: t.Rotation.from_quat(j.ones((3, 4))).mean(j.ones((3, 1))),
    lambda j, t: t.Rotation.random(None),
    lambda j, t: t.Slerp.init(j.arange(2.0), j.ones((2, 4))),
    lambda j, t: t.Slerp.init(j.arange(1.0), t.Rotation.from_quat(j.ones((1, 4)))),
    lambda j, t: t.Slerp.init(j.arange(3.0), t.Rotation.from_quat(j.ones((2, 4)))),
    lambda j, t: t.Slerp.init(j.ones((2, 1)), t.Rotation.from_quat(j.ones((2, 4)))),
    lambda j, t: t.Slerp.init(j.arange(2.0), t.Rotation.from_quat(j.ones((2, 4))))(j.ones((2, 2))),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors(index: int) -> None:
    with pytest.raises(Exception) as want:
        ERRORS[index](jjnp, jtr)
    with pytest.raises(Exception) as got:
        ERRORS[index](mjnp, mtr)
    assert type(got.value).__name__ == type(want.value).__name__, (got.value, want.value)
    assert str(got.value) == str(want.value)
