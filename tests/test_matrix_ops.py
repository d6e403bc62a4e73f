"""minijax.numpy's matrix helpers (minijax/numpy/matrix_ops.py) against NumPy.

einsum on random subscripts (both calling conventions, every ``optimize``
choice), the diagonal/triangle/index helpers, kron, cross, vander, polyval,
meshgrid, roll (static and traced shifts) and 1-D convolve/correlate (every
mode, both argument orders), with their error types; the convolution's
derivatives and batching. (Comparisons with JAX, jaxpr text included, are in
test_matrix_ops_oracle.py; test_conv_api.py checks that convolve is one
``conv_general_dilated``.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minijax as jax
import minijax.numpy as jnp
from minijax.testing import check_grads

NDArray = np.ndarray[Any, Any]


def arange(shape: tuple[int, ...], dtype: Any = np.float32) -> NDArray:
    n = int(np.prod(shape))
    return (np.arange(n) % 7 - 3).reshape(shape).astype(dtype)


# ---------------------------------------------------------------------------
# einsum


@st.composite
def einsum_problems(draw: st.DrawFn) -> tuple[str, list[NDArray]]:
    """A random einsum: 1-3 operands over labels a-e (repeats allowed), implicit or explicit output."""
    labels = "abcde"
    sizes = {c: draw(st.integers(1, 3)) for c in labels}
    n_ops = draw(st.integers(1, 3))
    terms = [draw(st.text(alphabet=labels, min_size=0, max_size=3)) for _ in range(n_ops)]
    used = sorted(set("".join(terms)))
    explicit = draw(st.booleans())
    spec = ",".join(terms)
    if explicit:
        out = draw(st.permutations(used).map(lambda p: "".join(p[: draw(st.integers(0, len(p)))])))
        spec += "->" + out
    ops = [arange(tuple(sizes[c] for c in t)) + i for i, t in enumerate(terms)]
    return spec, ops


@settings(max_examples=30)
@given(problem=einsum_problems(), optimize=st.sampled_from(["auto", True, False, "greedy", "optimal"]))
def test_einsum_matches_numpy(problem: tuple[str, list[NDArray]], optimize: Any) -> None:
    spec, ops = problem
    expected = np.einsum(spec, *[o.astype(np.float64) for o in ops])
    out = jnp.einsum(spec, *ops, optimize=optimize)
    assert out.shape == expected.shape and out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)


def test_einsum_interleaved_form_and_ellipsis() -> None:
    m, x = arange((4, 4)), arange((4,))
    np.testing.assert_allclose(np.asarray(jnp.einsum(m, (0, 1), x, (1,), (0,))), m @ x)
    np.testing.assert_allclose(np.asarray(jnp.einsum(m, [0, 1], x, [1])), m @ x)
    np.testing.assert_allclose(np.asarray(jnp.einsum(m, (..., 0), (...,))), m.sum(-1))
    a, b = arange((2, 3, 4)), arange((2, 4, 5))
    np.testing.assert_allclose(np.asarray(jnp.einsum("...ij,...jk->...ik", a, b)), a @ b)
    np.testing.assert_allclose(np.asarray(jnp.einsum("ii", m)), np.trace(m))
    np.testing.assert_allclose(np.asarray(jnp.einsum("ii->i", m)), np.diag(m))


def test_einsum_dtypes() -> None:
    i32, f16 = arange((3,), np.int32), arange((3,), np.float16)
    assert jnp.einsum("i,i", i32, i32).dtype == np.int32
    assert jnp.einsum("i,i", i32, f16).dtype == np.float16
    assert jnp.einsum("i,j->ij", np.ones(2, bool), np.ones(3, bool)).dtype == np.bool_
    out = jnp.einsum("ij,jk", arange((2, 3), np.float16), arange((3, 2), np.float16), preferred_element_type=jnp.float32)
    assert out.dtype == np.float32
    weak = jnp.einsum(",", 2.0, 3.0)
    assert weak.dtype == np.float32 and weak.weak_type and float(weak) == 6.0
    assert not jnp.einsum(",i", 2.0, arange((3,))).weak_type


def test_einsum_path_and_explicit_paths() -> None:
    x, y, z = arange((2, 3)), arange((3, 50)), arange((50, 5))
    path, info = jnp.einsum_path("ij,jk,kl", x, y, z, optimize="optimal")
    assert path == [(1, 2), (0, 1)] and "Optimized FLOP count" in str(info)
    assert jnp.einsum_path("ij,jk,kl", x, y, z, optimize=False)[0] == [(0, 1), (0, 1)]
    for p in (path, [(0, 1), (0, 1)]):
        np.testing.assert_allclose(np.asarray(jnp.einsum("ij,jk,kl", x, y, z, optimize=p)), x @ y @ z, rtol=1e-5)
    with pytest.raises(NotImplementedError, match="3 or more"):
        jnp.einsum("i,i,i", arange((2,)), arange((2,)), arange((2,)), optimize=[(0, 1, 2)])


def test_einsum_errors() -> None:
    with pytest.raises(ValueError):
        jnp.einsum("ij,jk", arange((3, 4)), arange((5, 2)))
    with pytest.raises(ValueError):
        jnp.einsum("ij,jk", arange((3, 4)))
    with pytest.raises(NotImplementedError, match="'out' argument"):
        jnp.einsum("ij", arange((3, 4)), out=arange((3, 4)))  # type: ignore[arg-type]


def test_einsum_is_dot_generals_and_transforms() -> None:
    a, b = arange((3, 4)), arange((4, 5))
    jaxpr = str(jax.make_jaxpr(lambda u, v: jnp.einsum("ij,jk->ki", u, v))(a, b))
    assert jaxpr.count("dot_general") == 1 and "transpose" not in jaxpr  # operands swapped instead
    g = jax.grad(lambda u: jnp.einsum("ij,jk->", u, b))(a)
    np.testing.assert_allclose(np.asarray(g), np.broadcast_to(b.sum(1), (3, 4)), rtol=1e-6)
    batched = jax.vmap(lambda u: jnp.einsum("ij,jk", u, b))(np.stack([a, 2 * a]))
    np.testing.assert_allclose(np.asarray(batched), np.stack([a @ b, 2 * a @ b]), rtol=1e-6)


@settings(max_examples=20)
@given(problem=einsum_problems(), optimize=st.sampled_from(["auto", True, False]))
def test_eager_einsum_on_arrays_runs_its_planned_program_again(problem: tuple[str, list[NDArray]], optimize: Any) -> None:
    # On concrete Arrays einsum keeps its plan as one jitted program (the fast path); the
    # second call must be served by it and agree with the first, and with NumPy.
    from minijax.numpy import matrix_ops

    spec, ops = problem
    arrays = [jax.device_put(o) for o in ops]
    expected = np.einsum(spec, *[o.astype(np.float64) for o in ops])
    first = jnp.einsum(spec, *arrays, optimize=optimize)
    assert matrix_ops._plan_key((spec, *arrays), optimize, None, None, jax.lax.dot_general) in matrix_ops._einsum_plans
    again = jnp.einsum(spec, *arrays, optimize=optimize)
    for out in (first, again):
        assert out.shape == expected.shape and out.dtype == np.float32
        np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)


def test_eager_einsum_plans_are_kept_apart_by_every_option_and_operand_type() -> None:
    a16, b16 = jax.device_put(arange((2, 3), np.float16)), jax.device_put(arange((3, 2), np.float16))
    assert jnp.einsum("ij,jk", a16, b16).dtype == np.float16
    assert jnp.einsum("ij,jk", a16, b16, preferred_element_type=jnp.float32).dtype == np.float32
    assert jnp.einsum("ij,jk", a16, b16).dtype == np.float16
    weak = jax.device_put(2.0) * 1  # a float32 Array of weak type
    f32 = jax.device_put(arange((3,)))
    assert jnp.einsum(",i", weak, f32.astype(np.float16)).dtype == np.float16
    assert jnp.einsum(",i", weak, f32).dtype == np.float32
    assert jnp.einsum(",", weak, weak).weak_type and not jnp.einsum(",", weak, weak.astype(np.float32)).weak_type
    f, g = jax.device_put(arange((3, 4))), jax.device_put(arange((5, 2)))
    with pytest.raises(ValueError):  # a mismatch is the planner's error, every time
        jnp.einsum("ij,jk", f, g)
    with pytest.raises(ValueError):
        jnp.einsum("ij,jk", f, g)


def test_eager_einsum_plans_are_bounded_and_cleared_with_the_caches() -> None:
    from minijax.config import config_context
    from minijax.numpy import matrix_ops

    with config_context(minijax_executable_cache_size=3):
        for n in range(1, 7):
            x = jax.device_put(arange((n,)))
            np.testing.assert_allclose(np.asarray(jnp.einsum("i,i", x, x)), float(np.dot(arange((n,)), arange((n,)))))
        assert len(matrix_ops._einsum_plans) <= 3
    jax.clear_caches()
    assert len(matrix_ops._einsum_plans) == 0


# ---------------------------------------------------------------------------
# Diagonals, traces, triangles


@pytest.mark.parametrize("shape", [(3, 4), (4, 3), (3, 3), (2, 3, 4)])
@pytest.mark.parametrize("offset", [0, 1, -1, 5])
def test_diagonal_and_trace(shape: tuple[int, ...], offset: int) -> None:
    a = arange(shape)
    np.testing.assert_array_equal(np.asarray(jnp.diagonal(a, offset)), np.diagonal(a, offset))
    np.testing.assert_allclose(np.asarray(jnp.trace(a, offset)), np.trace(a, offset))
    if len(shape) == 3:
        np.testing.assert_array_equal(np.asarray(jnp.diagonal(a, offset, 2, 0)), np.diagonal(a, offset, 2, 0))
        np.testing.assert_allclose(np.asarray(jnp.trace(a, offset, 2, 1, jnp.int32)), np.trace(a, offset, 2, 1, np.int32))
    else:
        np.testing.assert_array_equal(np.asarray(jnp.diag(a, offset)), np.diag(a, offset))


def test_diag_and_diagflat_build_matrices() -> None:
    v = arange((3,))
    for k in (0, 2, -1):
        np.testing.assert_array_equal(np.asarray(jnp.diag(v, k)), np.diag(v, k))
        np.testing.assert_array_equal(np.asarray(jnp.diagflat(arange((2, 2)), k)), np.diagflat(arange((2, 2)), k))
    assert jnp.trace(arange((3, 3), np.int8)).dtype == np.int32  # sums promote small integers
    assert jnp.trace(np.ones((2, 2), bool)).dtype == np.int32
    with pytest.raises(ValueError, match="1d or 2d"):
        jnp.diag(arange((2, 2, 2)))
    with pytest.raises(ValueError, match="at least two dimensions"):
        jnp.diagonal(arange((3,)))
    with pytest.raises(ValueError, match="can not be same"):
        jnp.trace(arange((3, 3)), axis1=1, axis2=-1)


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
def test_triangles(k: int) -> None:
    m = arange((2, 3, 4))
    np.testing.assert_array_equal(np.asarray(jnp.tril(m, k)), np.tril(m, k))
    np.testing.assert_array_equal(np.asarray(jnp.triu(m, k)), np.triu(m, k))
    np.testing.assert_array_equal(np.asarray(jnp.tri(3, 5, k)), np.tri(3, 5, k))


@pytest.mark.parametrize(("n", "k", "m"), [(4, 0, None), (3, 1, 5), (5, -2, 2), (2, 3, None)])
def test_triangle_indices(n: int, k: int, m: int | None) -> None:
    for ours, theirs in zip(jnp.tril_indices(n, k, m), np.tril_indices(n, k, m)):
        np.testing.assert_array_equal(np.asarray(ours), theirs)
    for ours, theirs in zip(jnp.triu_indices(n, k, m), np.triu_indices(n, k, m)):
        np.testing.assert_array_equal(np.asarray(ours), theirs)


def test_triangle_helpers_dtypes_and_errors() -> None:
    assert jnp.tri(2).dtype == np.float32 and jnp.tri(2, dtype=jnp.int8).dtype == np.int8
    a = arange((3, 4))
    for ours, theirs in zip(jnp.tril_indices_from(a, 1), np.tril_indices_from(a, 1)):
        np.testing.assert_array_equal(np.asarray(ours), theirs)
    for ours, theirs in zip(jnp.triu_indices_from(a, -1), np.triu_indices_from(a, -1)):
        np.testing.assert_array_equal(np.asarray(ours), theirs)
    for ours, theirs in zip(jnp.diag_indices(3, 3), np.diag_indices(3, 3)):
        np.testing.assert_array_equal(np.asarray(ours), theirs)
    assert len(jnp.diag_indices_from(arange((2, 2, 2)))) == 3
    with pytest.raises(ValueError, match="at least 2D"):
        jnp.tril(arange((3,)))
    with pytest.raises(ValueError, match="Only 2-D"):
        jnp.triu_indices_from(arange((3,)))
    with pytest.raises(ValueError, match="equal length"):
        jnp.diag_indices_from(arange((2, 3)))
    with pytest.raises(ValueError, match="nonnegative"):
        jnp.diag_indices(-1)


# ---------------------------------------------------------------------------
# Products, grids, shifts


def test_kron_cross_vander_polyval() -> None:
    a, b = arange((2, 3)), arange((3, 2), np.int32)
    np.testing.assert_array_equal(np.asarray(jnp.kron(a, b)), np.kron(a, b))
    np.testing.assert_array_equal(np.asarray(jnp.kron(arange((3,)), b)), np.kron(arange((3,)), b))
    assert jnp.kron(a, b).dtype == np.float32
    u, v = arange((4, 3)), arange((4, 3)) + 1
    np.testing.assert_allclose(np.asarray(jnp.cross(u, v)), np.cross(u, v))
    u2_as_3 = np.pad(u[:, :2], ((0, 0), (0, 1)))  # a 2-vector is a 3-vector with z = 0
    np.testing.assert_allclose(np.asarray(jnp.cross(u[:, :2], v)), np.cross(u2_as_3, v))
    np.testing.assert_allclose(np.asarray(jnp.cross(u[:, :2], v[:, :2])), u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0])
    np.testing.assert_allclose(np.asarray(jnp.cross(u.T, v.T, axis=0)), np.cross(u.T, v.T, axis=0))
    x = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.vander(x)), np.vander(x))
    np.testing.assert_array_equal(np.asarray(jnp.vander(x, 4, increasing=True)), np.vander(x, 4, increasing=True))
    np.testing.assert_allclose(np.asarray(jnp.polyval(np.array([2.0, -1.0, 3.0]), x)), np.polyval([2.0, -1.0, 3.0], x))
    assert int(jnp.polyval(jnp.array([2, 5, 1]), 3)) == 34
    with pytest.raises(ValueError, match="2 or 3"):
        jnp.cross(arange((4,)), arange((3,)))
    with pytest.raises(ValueError, match="one-dimensional"):
        jnp.vander(arange((2, 2)))


def test_vecdot_matvec_vecmat_matrix_transpose() -> None:
    m, v = arange((4, 2, 3)), arange((3,))
    np.testing.assert_allclose(np.asarray(jnp.matvec(m, v)), m @ v)
    np.testing.assert_allclose(np.asarray(jnp.vecmat(arange((2,)), m)), arange((2,)) @ m)
    np.testing.assert_allclose(np.asarray(jnp.vecdot(m, v)), (m * v).sum(-1))
    np.testing.assert_allclose(np.asarray(jnp.vecdot(m, m, axis=1)), (m * m).sum(1))
    assert jnp.matrix_transpose(m).shape == (4, 3, 2)
    with pytest.raises(ValueError):
        jnp.matvec(m, arange((4,)))
    with pytest.raises(ValueError, match="at least two-dimensional"):
        jnp.matrix_transpose(v)


def test_meshgrid() -> None:
    x, y, z = arange((3,)), arange((2,)), arange((4,))
    for indexing in ("xy", "ij"):
        for sparse in (False, True):
            ours = jnp.meshgrid(x, y, z, indexing=indexing, sparse=sparse)
            for o, t in zip(ours, np.meshgrid(x, y, z, indexing=indexing, sparse=sparse)):
                np.testing.assert_array_equal(np.asarray(o), t)
    assert jnp.meshgrid() == []
    with pytest.raises(ValueError, match="must be 1D"):
        jnp.meshgrid(arange((2, 2)))
    with pytest.raises(ValueError, match="copy=True"):
        jnp.meshgrid(x, copy=False)
    with pytest.raises(ValueError, match="indexing"):
        jnp.meshgrid(x, indexing="yx")


@pytest.mark.parametrize(("shift", "axis"), [(1, None), (-5, 1), ((1, 2), (0, 1)), (2, (0, 1)), ((1, -1), 1), (7, 0)])
def test_roll(shift: Any, axis: Any) -> None:
    a = arange((3, 4))
    np.testing.assert_array_equal(np.asarray(jnp.roll(a, shift, axis)), np.roll(a, shift, axis))
    # A traced shift takes the dynamic path: same answer.
    traced = jax.jit(lambda x, s: jnp.roll(x, s, axis))(a, np.asarray(shift, np.int32))
    np.testing.assert_array_equal(np.asarray(traced), np.roll(a, shift, axis))


def test_roll_of_empty_axis() -> None:
    assert jnp.roll(np.ones((0, 3)), 2, axis=0).shape == (0, 3)


# ---------------------------------------------------------------------------
# 1-D convolution


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize(("n", "m"), [(5, 3), (2, 6), (4, 4), (1, 1), (6, 1)])
def test_convolve_and_correlate_match_numpy(mode: Any, n: int, m: int) -> None:
    a = np.linspace(-1, 2, n).astype(np.float32)
    v = np.linspace(3, -2, m).astype(np.float32) ** 2
    np.testing.assert_allclose(np.asarray(jnp.convolve(a, v, mode)), np.convolve(a, v, mode), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.correlate(a, v, mode)), np.correlate(a, v, mode), rtol=1e-5, atol=1e-5)


def test_convolve_dtypes_and_errors() -> None:
    i = np.arange(4, dtype=np.int32)
    assert jnp.convolve(i, i).dtype == np.float32  # NumPy convolves in floating point
    out = jnp.convolve(i.astype(np.int8), np.ones(3, np.int8), preferred_element_type=jnp.int32)
    assert out.dtype == np.int32 and np.asarray(out).tolist() == np.convolve(i, np.ones(3, np.int32)).tolist()
    assert jnp.convolve(np.ones(3, np.float16), np.ones(2, np.float16)).dtype == np.float16
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.convolve(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="mode must be one of"):
        jnp.correlate(np.ones(3), np.ones(2), mode="wide")
    with pytest.raises(ValueError, match="cannot be empty"):
        jnp.convolve(np.ones(0), np.ones(2))


def test_convolve_differentiates_and_batches() -> None:
    a = np.array([0.5, -1.0, 2.0, 0.25, 1.5], np.float32)
    v = np.array([1.0, -2.0, 0.5], np.float32)
    for mode in ("full", "same", "valid"):
        check_grads(jax.jit(lambda x, y, mode=mode: jnp.convolve(x, y, mode)), (a, v), order=1, atol=1e-2, rtol=1e-2)
        check_grads(jax.jit(lambda x, y, mode=mode: jnp.correlate(y, x, mode)), (a, v), order=1, atol=1e-2, rtol=1e-2)
    batch = np.stack([a, 2 * a, -a])
    out = jax.vmap(lambda x: jnp.convolve(x, v, "same"))(batch)
    np.testing.assert_allclose(np.asarray(out), np.stack([np.convolve(x, v, "same") for x in batch]), rtol=1e-5)
    kernels = np.stack([v, v[::-1]])
    out = jax.vmap(lambda y: jnp.correlate(a, y), in_axes=0)(kernels)
    np.testing.assert_allclose(np.asarray(out), np.stack([np.correlate(a, y) for y in kernels]), rtol=1e-5)


# ---------------------------------------------------------------------------
# Transformations of the other helpers


TRANSFORMED: dict[str, Any] = {
    "diagonal": lambda a: jnp.diagonal(a, 1),
    "trace": lambda a: jnp.trace(a, -1),
    "diag": lambda a: jnp.diag(a),
    "diagflat": lambda a: jnp.diagflat(a[0], 1),
    "tril": lambda a: jnp.tril(a, 1),
    "triu": lambda a: jnp.triu(a),
    "kron": lambda a: jnp.kron(a, a[:2, :2]),
    "roll": lambda a: jnp.roll(a, (1, -2), (0, 1)),
    "cross": lambda a: jnp.cross(a[:, :3], a[:, 1:]),
    "vander": lambda a: jnp.vander(a[0], 3),
    "polyval": lambda a: jnp.polyval(a[0], a[1]),
    "einsum": lambda a: jnp.einsum("ij,kj->ik", a, a),
    "meshgrid": lambda a: jnp.meshgrid(a[0], a[1, :2])[0],
}


@pytest.mark.parametrize("name", sorted(TRANSFORMED))
def test_helpers_differentiate_and_batch(name: str) -> None:
    f = TRANSFORMED[name]
    a = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
    check_grads(jax.jit(f), (a,), order=1, modes=("rev",), atol=1e-2, rtol=1e-2)
    batch = np.stack([a, a[::-1], 2 * a])
    out = jax.jit(jax.vmap(f))(batch)
    expected = np.stack([np.asarray(f(x)) for x in batch])
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-6)
