"""``jax.scipy.spatial.transform``: 3-D rotations (``Rotation``) stored as unit
quaternions ``(x, y, z, w)`` (scalar last, as SciPy), and spherical linear
interpolation between them (``Slerp``). Both are NamedTuples, so pytrees that
pass through ``jit`` and ``vmap``.

A ``Rotation`` holds one quaternion (shape ``(4,)``: ``single``) or a stack of
them (``(N, 4)``). The conversions are written for one quaternion and lifted
over stacks with ``jnp.vectorize``, as JAX does.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from minijax import numpy as jnp
from minijax.config import config_context
from minijax.numpy.functional import vectorize

__all__ = ["Rotation", "Slerp"]


def _check_axes(seq: str, what: str) -> bool:
    """Whether ``seq`` (already length-checked) is extrinsic (lower case); raises on a bad sequence."""
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError(f"Expected axes from `seq` to be from {what}, got {seq}")
    if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return extrinsic


def _axis_index(axis: str) -> int:
    if axis in ("x", "y", "z"):
        return "xyz".index(axis)
    raise ValueError(f"Expected axis to be from ['x', 'y', 'z'], got {axis}")


class Rotation(NamedTuple):
    """A rotation, or a stack of rotations, in 3 dimensions (SciPy's ``Rotation``)."""

    quat: Any

    @classmethod
    def concatenate(cls, rotations: Sequence[Rotation]) -> Rotation:
        return cls(jnp.concatenate([r.quat for r in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles: Any, degrees: bool = False) -> Rotation:
        """Rotations by ``angles`` about the axes of ``seq``: lower case extrinsic, upper case intrinsic."""
        if len(seq) < 1 or len(seq) > 3:
            raise ValueError(f"Expected axis specification to be a non-empty string of upto 3 characters, got {seq}")
        extrinsic = _check_axes(seq, "['x', 'y', 'z'] or ['X', 'Y', 'Z']")
        axes = jnp.array([_axis_index(a) for a in seq.lower()])
        return cls(_quat_from_euler(jnp.atleast_1d(angles), axes, not extrinsic, degrees))

    @classmethod
    def from_matrix(cls, matrix: Any) -> Rotation:
        return cls(_quat_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp: Any) -> Rotation:
        """From modified Rodrigues parameters ``axis * tan(angle / 4)``."""
        return cls(_quat_from_mrp(mrp))

    @classmethod
    def from_quat(cls, quat: Any) -> Rotation:
        """From quaternions ``(x, y, z, w)``, normalized."""
        return cls(_normalize(quat))

    @classmethod
    def from_rotvec(cls, rotvec: Any, degrees: bool = False) -> Rotation:
        """From rotation vectors ``axis * angle``."""
        return cls(_quat_from_rotvec(rotvec, degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype: Any = float) -> Rotation:
        """The identity rotation (one: JAX's ``identity`` has no ``num``)."""
        if num is not None:
            raise NotImplementedError("Rotation.identity(num=...) is not supported (as in JAX): only num=None.")
        return cls(jnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype))

    @classmethod
    def random(cls, random_key: Any, num: int | None = None) -> Rotation:
        # JAX defines the name without an implementation.
        raise NotImplementedError()

    def __getitem__(self, indexer: Any) -> Rotation:
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        if self.single:
            raise TypeError("Single rotation has no len().")
        return int(self.quat.shape[0])

    def __mul__(self, other: Any) -> Rotation:  # type: ignore[override]
        """The composition: ``(p * q).apply(v) == p.apply(q.apply(v))``."""
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors: Any, inverse: bool = False) -> Any:
        return _apply(self.as_matrix(), vectors, inverse)

    def as_euler(self, seq: str, degrees: bool = False) -> Any:
        if len(seq) != 3:
            raise ValueError(f"Expected 3 axes, got {seq}.")
        extrinsic = _check_axes(seq, "['x', 'y', 'z'] or ['X', 'Y', 'Z']")
        axes = jnp.array([_axis_index(a) for a in seq.lower()])
        # The axes argument has one dimension fewer than a stack of quaternions.
        with config_context(jax_numpy_rank_promotion="allow"):
            return _euler_from_quat(self.quat, axes, extrinsic, degrees)

    def as_matrix(self) -> Any:
        return _matrix_from_quat(self.quat)

    def as_mrp(self) -> Any:
        return _mrp_from_quat(self.quat)

    def as_rotvec(self, degrees: bool = False) -> Any:
        return _rotvec_from_quat(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Any:
        """The quaternions; ``canonical`` picks the sign with ``w >= 0``, ``scalar_first`` returns ``(w, x, y, z)``."""
        quat = _canonical(self.quat) if canonical else self.quat
        return jnp.roll(quat, shift=1, axis=-1) if scalar_first else quat

    def inv(self) -> Rotation:
        return Rotation(_conjugate(self.quat))

    def magnitude(self) -> Any:
        """The rotation angle in radians, in [0, pi]."""
        return _angle(self.quat)

    def mean(self, weights: Any = None) -> Rotation:
        """The (weighted) mean rotation: the top eigenvector of ``sum_i w_i q_i q_i^T`` (Markley et al.)."""
        dtype = self.quat.dtype
        w = jnp.ones(self.quat.shape[0], dtype=dtype) if weights is None else jnp.asarray(weights, dtype=dtype)
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError(
                "Expected `weights` to have number of values equal to number of rotations, "
                f"got {w.shape[0]} values and {len(self)} rotations."
            )
        k = jnp.dot(w[None, :] * self.quat.T, self.quat)
        _, vectors = jnp.linalg.eigh(k)
        return Rotation(vectors[:, -1])

    @property
    def single(self) -> bool:
        return bool(self.quat.ndim == 1)


class Slerp(NamedTuple):
    """Spherical linear interpolation between key rotations at increasing key times (SciPy's ``Slerp``).

    Build it with ``Slerp.init(times, rotations)``; call it with times in the key range.
    """

    times: Any
    timedelta: Any
    rotations: Rotation
    rotvecs: Any

    @classmethod
    def init(cls, times: Any, rotations: Rotation) -> Slerp:
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError(f"Expected times to be specified in a 1 dimensional array, got {times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError(
                "Expected number of rotations to be equal to number of timestamps given, "
                f"got {len(rotations)} rotations and {times.shape[0]} timestamps."
            )
        # Times are not checked to increase: that would need their values (JAX neither).
        starts = Rotation(rotations.as_quat()[:-1])
        steps = (starts.inv() * Rotation(rotations.as_quat()[1:])).as_rotvec()
        return cls(times=times, timedelta=times[1:] - times[:-1], rotations=starts, rotvecs=steps)

    def __call__(self, times: Any) -> Rotation:
        t = jnp.asarray(times, dtype=self.times.dtype)
        if t.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single_time = t.ndim == 0
        t = jnp.atleast_1d(t)
        segment = jnp.maximum(jnp.searchsorted(self.times, t) - 1, 0)
        fraction = (t - self.times[segment]) / self.timedelta[segment]
        result: Rotation = self.rotations[segment] * Rotation.from_rotvec(self.rotvecs[segment] * fraction[:, None])
        return result[0] if single_time else result


# ---------------------------------------------------------------------------
# One quaternion at a time, lifted over stacks by vectorize


def _lift(signature: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return functools.partial(vectorize, signature=signature)


@_lift("(n)->()")
def _norm(v: Any) -> Any:
    return jnp.sqrt(jnp.dot(v, v))


@_lift("(n)->(n)")
def _normalize(q: Any) -> Any:
    return q / _norm(q)


@_lift("(n)->(n)")
def _conjugate(q: Any) -> Any:
    return q * jnp.array([-1, -1, -1, 1], dtype=q.dtype)


@_lift("(n)->()")
def _angle(q: Any) -> Any:
    return 2.0 * jnp.arctan2(_norm(q[:3]), jnp.abs(q[3]))


@_lift("(n)->(n)")
def _canonical(q: Any) -> Any:
    # The sign that makes the first nonzero of (w, x, y, z) positive.
    neg, zero = q < 0, q == 0
    flip = neg[3] | (zero[3] & neg[0]) | (zero[3] & zero[0] & neg[1]) | (zero[3] & zero[0] & zero[1] & neg[2])
    return jnp.where(flip, -q, q)


@_lift("(n),(n)->(n)")
def _compose(p: Any, q: Any) -> Any:
    """The Hamilton product p q, scalar last."""
    c = jnp.cross(p[:3], q[:3])
    return jnp.array(
        [
            p[3] * q[0] + q[3] * p[0] + c[0],
            p[3] * q[1] + q[3] * p[1] + c[1],
            p[3] * q[2] + q[3] * p[2] + c[2],
            p[3] * q[3] - p[0] * q[0] - p[1] * q[1] - p[2] * q[2],
        ]
    )


@_lift("(m,m),(m),()->(m)")
def _apply(matrix: Any, vector: Any, inverse: Any) -> Any:
    return jnp.where(inverse, matrix.T, matrix) @ vector


@_lift("(m)->(n,n)")
def _matrix_from_quat(q: Any) -> Any:
    x, y, z, w = q[0], q[1], q[2], q[3]
    xx, yy, zz, ww = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    return jnp.array(
        [
            [+xx - yy - zz + ww, 2 * (xy - zw), 2 * (xz + yw)],
            [2 * (xy + zw), -xx + yy - zz + ww, 2 * (yz - xw)],
            [2 * (xz - yw), 2 * (yz + xw), -xx - yy + zz + ww],
        ]
    )


@_lift("(m,m)->(n)")
def _quat_from_matrix(m: Any) -> Any:
    # Shepperd's method: build the quaternion from the largest of the diagonal and the trace.
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    candidates = jnp.array([m[0, 0], m[1, 1], m[2, 2], trace], dtype=m.dtype)
    i = jnp.argmax(candidates)
    j = (i + 1) % 3
    k = (j + 1) % 3
    from_diagonal = jnp.empty(4, dtype=m.dtype)
    from_diagonal = from_diagonal.at[i].set(1 - candidates[3] + 2 * m[i, i])
    from_diagonal = from_diagonal.at[j].set(m[j, i] + m[i, j])
    from_diagonal = from_diagonal.at[k].set(m[k, i] + m[i, k])
    from_diagonal = from_diagonal.at[3].set(m[k, j] - m[j, k])
    from_trace = jnp.array([m[2, 1] - m[1, 2], m[0, 2] - m[2, 0], m[1, 0] - m[0, 1], 1 + candidates[3]], dtype=m.dtype)
    return _normalize(jnp.where(i != 3, from_diagonal, from_trace))


@_lift("(m)->(n)")
def _quat_from_mrp(mrp: Any) -> Any:
    s = jnp.dot(mrp, mrp) + 1
    return jnp.hstack([2 * mrp[:3], (2 - s)]) / s


@_lift("(m)->(n)")
def _mrp_from_quat(q: Any) -> Any:
    sign = jnp.where(q[3] < 0, -1.0, 1.0)
    return sign * q[:3] / (1.0 + sign * q[3])


@_lift("(m),()->(n)")
def _quat_from_rotvec(rotvec: Any, degrees: Any) -> Any:
    rotvec = jnp.where(degrees, jnp.deg2rad(rotvec), rotvec)
    angle = _norm(rotvec)
    a2 = angle * angle
    # sin(angle / 2) / angle, by its Taylor series near 0.
    scale = jnp.where(angle <= 1e-3, 0.5 - a2 / 48 + a2 * a2 / 3840, jnp.sin(angle / 2) / angle)
    return jnp.hstack([scale * rotvec, jnp.cos(angle / 2)])


@_lift("(m),()->(n)")
def _rotvec_from_quat(q: Any, degrees: Any) -> Any:
    q = jnp.where(q[3] < 0, -q, q)  # w >= 0: the angle in [0, pi]
    angle = 2.0 * jnp.arctan2(_norm(q[:3]), q[3])
    a2 = angle * angle
    # angle / sin(angle / 2), by its Taylor series near 0.
    scale = jnp.where(angle <= 1e-3, 2 + a2 / 12 + 7 * a2 * a2 / 2880, angle / jnp.sin(angle / 2))
    scale = jnp.where(degrees, jnp.rad2deg(scale), scale)
    return scale * jnp.array(q[:3])


@_lift("(),()->(n)")
def _elementary_quat(axis: Any, angle: Any) -> Any:
    q = jnp.zeros(4, dtype=angle.dtype)
    q = q.at[3].set(jnp.cos(angle / 2.0))
    return q.at[axis].set(jnp.sin(angle / 2.0))


@_lift("(m),(m),(),()->(n)")
def _quat_from_euler(angles: Any, axes: Any, intrinsic: Any, degrees: Any) -> Any:
    angles = jnp.where(degrees, jnp.deg2rad(angles), angles)
    result = _elementary_quat(axes[0], angles[0])
    for idx in range(1, len(axes)):
        q = _elementary_quat(axes[idx], angles[idx])
        # Intrinsic rotations compose on the right, extrinsic on the left.
        result = jnp.where(intrinsic, _compose(result, q), _compose(q, result))
    return result


@_lift("(m),(l),(),()->(n)")
def _euler_from_quat(q: Any, axes: Any, extrinsic: Any, degrees: Any) -> Any:
    # Bernardes and Viollet (2022): Euler angles of any sequence straight from the quaternion.
    first = jnp.where(extrinsic, 0, 2)
    third = jnp.where(extrinsic, 2, 0)
    axes = jnp.where(extrinsic, axes, axes[::-1])
    i, j, k = axes[0], axes[1], axes[2]
    symmetric = i == k
    k = jnp.where(symmetric, 3 - i - j, k)
    sign = jnp.array((i - j) * (j - k) * (k - i) // 2, dtype=q.dtype)
    eps = 1e-7
    a = jnp.where(symmetric, q[3], q[3] - q[j])
    b = jnp.where(symmetric, q[i], q[i] + q[k] * sign)
    c = jnp.where(symmetric, q[j], q[j] + q[3])
    d = jnp.where(symmetric, q[k] * sign, q[k] * sign - q[i])
    angles = jnp.empty(3, dtype=q.dtype)
    angles = angles.at[1].set(2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b)))
    # 0: regular; 1: middle angle 0; 2: middle angle pi (gimbal lock: one angle set to 0).
    case = jnp.where(jnp.abs(angles[1] - np.pi) <= eps, 2, 0)
    case = jnp.where(jnp.abs(angles[1]) <= eps, 1, case)
    half_sum = jnp.arctan2(b, a)
    half_diff = jnp.arctan2(d, c)
    angles = angles.at[0].set(jnp.where(case == 1, 2 * half_sum, 2 * half_diff * jnp.where(extrinsic, -1, 1)))
    angles = angles.at[first].set(jnp.where(case == 0, half_sum - half_diff, angles[first]))
    angles = angles.at[third].set(jnp.where(case == 0, half_sum + half_diff, angles[third]))
    angles = angles.at[third].set(jnp.where(symmetric, angles[third], angles[third] * sign))
    angles = angles.at[1].set(jnp.where(symmetric, angles[1], angles[1] - np.pi / 2))
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    return jnp.where(degrees, jnp.rad2deg(angles), angles)
