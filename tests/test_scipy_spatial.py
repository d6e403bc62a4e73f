"""jax.scipy.spatial.transform's Rotation and Slerp on both backends, against
SciPy's, and under jit, grad and vmap (the comparison with real JAX is
tests/test_scipy_spatial_oracle.py)."""

from __future__ import annotations

import numpy as np
import pytest

import minijax
import minijax.numpy as jnp
from minijax.scipy.spatial.transform import Rotation, Slerp

pytest.importorskip("scipy")
from scipy.spatial.transform import Rotation as SciRotation, Slerp as SciSlerp  # noqa: E402

QUATS = np.random.default_rng(0).normal(size=(4, 4))


def _close(got: minijax.Array, want: np.ndarray, atol: float = 1e-5) -> None:
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=atol)


def test_converters_are_scipys(backend_name: str) -> None:
    s = SciRotation.from_quat(QUATS)
    seqs = ("xyz", "ZXZ", "yxz")

    # One jit: on XLA, eager calls would compile each small operation on its own.
    @minijax.jit
    def convert(q: minijax.Array) -> tuple[minijax.Array, ...]:
        r = Rotation.from_quat(q)
        return (
            r.as_quat(canonical=True),
            r.as_matrix(),
            r.as_rotvec(degrees=True),
            r.as_mrp(),
            r.magnitude(),
            *(r.as_euler(seq) for seq in seqs),
            *(Rotation.from_euler(seq, r.as_euler(seq)).as_matrix() for seq in seqs),
            Rotation.from_matrix(r.as_matrix()).as_matrix(),
            Rotation.from_rotvec(r.as_rotvec()).as_matrix(),
            Rotation.from_mrp(r.as_mrp()).as_matrix(),
        )

    got = convert(jnp.asarray(QUATS, jnp.float32))
    m = s.as_matrix()
    want = (
        s.as_quat(canonical=True),
        m,
        s.as_rotvec(degrees=True),
        s.as_mrp(),
        s.magnitude(),
        *(s.as_euler(seq) for seq in seqs),
        m,
        m,
        m,
        m,
        m,
        m,
    )
    for g, w in zip(got, want, strict=True):
        _close(g, w, atol=1e-3)


def test_composition_apply_inverse_mean(backend_name: str) -> None:
    r, s = Rotation.from_quat(QUATS.astype(np.float32)), SciRotation.from_quat(QUATS)
    v = np.arange(12.0).reshape(4, 3)
    _close((r * r[::-1]).as_matrix(), (s * s[::-1]).as_matrix())
    _close(r.apply(v.astype(np.float32)), s.apply(v), atol=1e-4)
    _close(r.apply(v.astype(np.float32), inverse=True), s.apply(v, inverse=True), atol=1e-4)
    _close(r.inv().as_matrix(), s.inv().as_matrix())
    _close(r.mean().as_matrix(), s.mean().as_matrix(), atol=1e-4)
    assert len(r) == 4 and not r.single and r[2].single
    assert Rotation.concatenate([r, r[:1]]).quat.shape == (5, 4)
    _close(Rotation.identity().as_matrix(), np.eye(3))


def test_slerp_is_scipys(backend_name: str) -> None:
    times = np.array([0.0, 1.0, 2.5, 3.0])
    s = SciSlerp(times, SciRotation.from_quat(QUATS))
    slerp = Slerp.init(times, Rotation.from_quat(QUATS.astype(np.float32)))
    query = np.array([0.0, 0.3, 1.0, 2.0, 2.9, 3.0])
    assert slerp(1.5).single
    # A pytree: through jit whole.
    _close(minijax.jit(lambda sl, t: sl(t).as_matrix())(slerp, query), s(query).as_matrix(), atol=1e-4)


def test_grad_and_vmap(backend_name: str) -> None:
    def angle(v: minijax.Array) -> minijax.Array:
        return Rotation.from_rotvec(v).magnitude()

    v = jnp.array([0.3, -0.4, 1.2])
    # The magnitude of a rotation vector is its norm: the gradient is the unit vector.
    _close(minijax.grad(angle)(v), np.asarray(v) / np.linalg.norm(np.asarray(v)))
    mats = minijax.vmap(lambda q: Rotation.from_quat(q).as_matrix())(jnp.asarray(QUATS, jnp.float32))
    _close(mats, SciRotation.from_quat(QUATS).as_matrix())


def test_errors(backend_name: str) -> None:
    with pytest.raises(ValueError, match="Expected consecutive axes to be different"):
        Rotation.from_euler("xxy", jnp.ones(3))
    with pytest.raises(ValueError, match="Expected 3 axes"):
        Rotation.identity().as_euler("xy")
    with pytest.raises(TypeError, match="Single rotation is not subscriptable"):
        Rotation.identity()[0]
    with pytest.raises(ValueError, match="at least 2 rotations"):
        Slerp.init(jnp.zeros(1), Rotation.from_quat(jnp.ones((1, 4))))
