"""Samplers for the linalg primitives (``minijax/primitives/linalg.py``).

Decompositions are smooth only on well-conditioned inputs, so each sampler
builds its matrices with a known structure, far from where a derivative
stops existing (and by a margin a finite-difference step cannot cross):

* ``cholesky``: symmetric positive definite, eigenvalues at least 1;
* ``triangular_solve``: diagonals of magnitude 1.5 to 3, small entries
  elsewhere;
* ``lu``: the rows of a diagonally dominant matrix in a random order, so
  that every pivot is the clear largest of its column;
* ``qr``: a random matrix plus twice the identity (its leading square block
  is well conditioned, so R's diagonal stays away from zero);
* ``eigh``: Q diag(w) Qᵀ with eigenvalues at least 0.8 apart;
* ``svd``: U diag(s) Vᵀ with singular values 1, 2, 3, ... (jittered);
* ``eig`` (cla, issue 19): V diag(w) V⁻¹ with V = I + small entries (each
  eigenvector's largest component is clearly its diagonal one, where LAPACK
  makes it real) and eigenvalues 1, 2, 3, ... (jittered; complex ones for
  complex operands, which half the cases have, with parts of the drawn
  dtype's precision). Eigenvector derivatives are enabled.

Batch axes (0 to 2 of them, sides 0 to 3) and empty matrices are drawn now
and then. Cases stay inside what the jvp rules define: eigh and svd with no
partial ``subset_by_index``, and full U/V only for square matrices.
``lu_pivots_to_permutation`` takes int32 pivots whatever integer dtype is
asked (the primitive accepts only int32), including out-of-range ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from minijax.core import primitive_registry
from minijax.testing.cases import FLOAT, INT, Case, Draw, NDArray, Operand, Sampler, Shape, case, indices, moderate

_I32 = np.dtype(np.int32)

# Matrix sides: mostly 1-3, sometimes empty.
_SIDES = st.sampled_from((1, 2, 3, 2, 3, 1, 2, 3, 0))
_BATCH_SIDES = st.sampled_from((1, 2, 3, 2, 0))


def _batch(draw: Draw) -> Shape:
    return tuple(draw(_BATCH_SIDES) for _ in range(draw(st.sampled_from((0, 0, 1, 1, 2)))))


def _cast(x: NDArray, dtype: np.dtype[Any]) -> NDArray:
    return np.asarray(x.astype(dtype))


def _orthogonal(rng: np.random.Generator, shape: Shape) -> NDArray:
    """Random matrices with orthonormal columns, of ``shape`` (..., m, k), m >= k."""
    q, r = np.linalg.qr(rng.standard_normal(shape))
    signs = np.where(np.diagonal(r, axis1=-2, axis2=-1) < 0, -1.0, 1.0)  # unique: R's diagonal positive
    return np.asarray(q * signs[..., None, :])


def _swap_last(x: NDArray) -> NDArray:
    return np.swapaxes(x, -1, -2)


# ---------------------------------------------------------------------------
# Value makers (rng, shape, dtype) -> values


def _spd(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any]) -> NDArray:
    n = shape[-1]
    a = rng.uniform(-1, 1, shape)
    return _cast(a @ _swap_last(a) / max(n, 1) + np.eye(n), dtype)


def _triangular(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any]) -> NDArray:
    n = shape[-1]
    off = rng.uniform(-0.5, 0.5, shape) / max(n, 1)
    diagonal = rng.uniform(1.5, 3, shape[:-1]) * rng.choice([-1, 1], shape[:-1])
    return _cast(off * (1 - np.eye(n)) + diagonal[..., None] * np.eye(n), dtype)


def _pivoted(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any]) -> NDArray:
    *batch, m, n = shape
    dominant = rng.uniform(-0.5, 0.5, shape) / max(m, n, 1)
    k = min(m, n)
    diagonal = rng.uniform(3, 4, (*batch, k)) * rng.choice([-1, 1], (*batch, k))
    dominant[..., range(k), range(k)] = diagonal
    order = np.argsort(rng.random((*batch, m)), axis=-1)  # each matrix's rows shuffled
    return _cast(np.take_along_axis(dominant, order[..., None], axis=-2), dtype)


def _shifted(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any]) -> NDArray:
    *_, m, n = shape
    return _cast(rng.uniform(-0.5, 0.5, shape) + 2 * np.eye(m, n), dtype)


def _separated_symmetric(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any]) -> NDArray:
    *batch, n, _ = shape
    q = _orthogonal(rng, shape)
    w = (np.arange(n) - n / 2) + rng.uniform(-0.1, 0.1, (*batch, n))
    a = (q * w[..., None, :]) @ _swap_last(q)
    return _cast((a + _swap_last(a)) / 2, dtype)


def _separated_singular_values(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any]) -> NDArray:
    *batch, m, n = shape
    k = min(m, n)
    u, v = _orthogonal(rng, (*batch, m, k)), _orthogonal(rng, (*batch, n, k))
    s = 1 + np.arange(k)[::-1] + rng.uniform(-0.1, 0.1, (*batch, k))
    return _cast((u * s[..., None, :]) @ _swap_last(v), dtype)


# ---------------------------------------------------------------------------
# Builders


def _cholesky(draw: Draw, dtype: np.dtype[Any]) -> Case:
    n = draw(_SIDES)
    return case("cholesky", {}, [Operand((*_batch(draw), n, n), dtype, _spd)], (0,))


def _triangular_solve(draw: Draw, dtype: np.dtype[Any]) -> Case:
    batch = _batch(draw)
    m, k = draw(_SIDES), draw(_SIDES)
    left_side = draw(st.booleans())
    params = {
        "left_side": left_side,
        "lower": draw(st.booleans()),
        "transpose_a": draw(st.booleans()),
        "conjugate_a": False,
        "unit_diagonal": draw(st.booleans()),
    }
    b_shape = (*batch, m, k) if left_side else (*batch, k, m)
    ops = [Operand((*batch, m, m), dtype, _triangular), Operand(b_shape, dtype, moderate())]
    return case("triangular_solve", params, ops, (0, 1), [(1,)])


def _lu(draw: Draw, dtype: np.dtype[Any]) -> Case:
    # Built directly: ``case`` drops the differentiable flag of primitives with integer
    # results, but lu's factors are differentiable (its pivots get float0 tangents).
    x = Operand((*_batch(draw), draw(_SIDES), draw(_SIDES)), dtype, _pivoted)
    return Case(primitive_registry["lu"], {}, (x.aval,), lambda rng: [x.values(rng, x.shape, x.dtype)], (0,))


def _lu_pivots_to_permutation(draw: Draw, dtype: np.dtype[Any]) -> Case:
    k = draw(_SIDES)
    size = k + draw(st.integers(0, 2))
    params = {"permutation_size": size}
    # In range mostly; out of range on both sides now and then (the primitive defines those too).
    return case("lu_pivots_to_permutation", params, [Operand((*_batch(draw), k), _I32, indices(-size - 1, size))])


def _qr(draw: Draw, dtype: np.dtype[Any]) -> Case:
    shape = (*_batch(draw), draw(_SIDES), draw(_SIDES))
    params = {"pivoting": False, "full_matrices": draw(st.booleans()), "use_magma": None}
    return case("qr", params, [Operand(shape, dtype, _shifted)], (0,))


def _eigh(draw: Draw, dtype: np.dtype[Any]) -> Case:
    n = draw(_SIDES)
    params = {
        "lower": draw(st.booleans()),
        "sort_eigenvalues": True,
        "subset_by_index": draw(st.sampled_from((None, None, (0, n)))),
        "algorithm": None,
    }
    return case("eigh", params, [Operand((*_batch(draw), n, n), dtype, _separated_symmetric)], (0,))


def _svd(draw: Draw, dtype: np.dtype[Any]) -> Case:
    m, n = draw(_SIDES), draw(_SIDES)
    compute_uv = draw(st.booleans())
    full = draw(st.booleans()) and (m == n or not compute_uv)
    subset = draw(st.sampled_from((None, None, (0, min(m, n)))))
    params = {"full_matrices": full, "compute_uv": compute_uv, "subset_by_index": subset, "algorithm": None}
    return case("svd", params, [Operand((*_batch(draw), m, n), dtype, _separated_singular_values)], (0,))


def _complex_of(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return np.dtype(np.complex128) if dtype == np.dtype(np.float64) else np.dtype(np.complex64)


def _separated_eigenvalues(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any]) -> NDArray:
    *batch, n, _ = shape
    complex_ = np.dtype(dtype).kind == "c"

    def noise(s: Shape, scale: float) -> NDArray:
        out = rng.uniform(-scale, scale, s)
        return out + 1j * rng.uniform(-scale, scale, s) if complex_ else out

    v = np.eye(n) + noise(tuple(shape), 0.2 / max(n, 1))
    w = 1 + np.arange(n) + noise((*batch, n), 0.1)
    return _cast((v * w[..., None, :]) @ np.linalg.inv(v), dtype)


def _eig(draw: Draw, dtype: np.dtype[Any]) -> Case:
    n = draw(_SIDES)
    operand_dtype = _complex_of(dtype) if draw(st.booleans()) else dtype
    params = {
        "compute_left_eigenvectors": draw(st.booleans()),
        "compute_right_eigenvectors": draw(st.booleans()),
        "enable_eigvec_derivs": True,
        "implementation": None,
    }
    return case("eig", params, [Operand((*_batch(draw), n, n), operand_dtype, _separated_eigenvalues)], (0,))


def _reflectors(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any]) -> NDArray:
    """Householder vectors below the diagonal (what geqrf leaves there), of moderate size."""
    return _cast(rng.uniform(-1, 1, shape), dtype)


def _taus(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any]) -> NDArray:
    """Reflector factors in [0, 2], where LAPACK's reflectors have them."""
    return _cast(rng.uniform(0, 2, shape), dtype)


def _upper_triangular(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any]) -> NDArray:
    """Upper triangular matrices: their own real Schur form (T = A, Q = I) on every backend."""
    return _cast(np.triu(rng.uniform(-2, 2, shape)), dtype)


def _dominant_diagonal(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any]) -> NDArray:
    """Entries of magnitude 3 to 4, for the diagonal of a diagonally dominant tridiagonal matrix."""
    return _cast(rng.uniform(3, 4, shape) * rng.choice([-1, 1], shape), dtype)


def _householder_product(draw: Draw, dtype: np.dtype[Any]) -> Case:
    batch = _batch(draw)
    n = draw(_SIDES)
    m = n + draw(st.integers(0, 2))
    k = draw(st.integers(0, n))
    ops = [Operand((*batch, m, n), dtype, _reflectors), Operand((*batch, k), dtype, _taus)]
    return case("householder_product", {}, ops)


def _ormqr(draw: Draw, dtype: np.dtype[Any]) -> Case:
    batch = _batch(draw)
    n = draw(_SIDES)
    m = n + draw(st.integers(0, 2))
    k = draw(st.integers(0, n))
    left = draw(st.booleans())
    other = draw(_SIDES)
    params = {"left": left, "transpose": draw(st.booleans())}
    c_shape = (*batch, m, other) if left else (*batch, other, m)
    ops = [Operand((*batch, m, n), dtype, _reflectors), Operand((*batch, k), dtype, _taus), Operand(c_shape, dtype, moderate())]
    return case("ormqr", params, ops)


def _hessenberg(draw: Draw, dtype: np.dtype[Any]) -> Case:
    n = draw(st.integers(1, 4))
    return case("hessenberg", {}, [Operand((*_batch(draw), n, n), dtype, _shifted)])


def _tridiagonal(draw: Draw, dtype: np.dtype[Any]) -> Case:
    n = draw(st.integers(1, 4))
    params = {"lower": draw(st.booleans())}
    return case("tridiagonal", params, [Operand((*_batch(draw), n, n), dtype, _shifted)])


def _schur(draw: Draw, dtype: np.dtype[Any]) -> Case:
    # The Schur form is unique only up to the order of the eigenvalues, which LAPACK's QR iteration
    # picks: on upper triangular matrices every backend returns A itself and Q = I.
    n = draw(_SIDES)
    params = {"compute_schur_vectors": draw(st.booleans()), "sort_eig_vals": False, "select_callable": None}
    return case("schur", params, [Operand((*_batch(draw), n, n), dtype, _upper_triangular)])


def _symmetric_product(draw: Draw, dtype: np.dtype[Any]) -> Case:
    batch = _batch(draw)
    m, n = draw(_SIDES), draw(_SIDES)
    params = {"alpha": draw(st.sampled_from((1.0, 2.0, -0.5))), "beta": draw(st.sampled_from((0.0, 1.0, 0.5)))}
    ops = [Operand((*batch, m, n), dtype, moderate()), Operand((*batch, m, m), dtype, moderate())]
    return case("symmetric_product", params, ops)


def _tridiagonal_solve(draw: Draw, dtype: np.dtype[Any]) -> Case:
    batch = _batch(draw)
    m, k = draw(_SIDES), draw(_SIDES)
    off = Operand((*batch, m), dtype, moderate())
    ops = [off, Operand((*batch, m), dtype, _dominant_diagonal), off, Operand((*batch, m, k), dtype, moderate())]
    return case("tridiagonal_solve", {"perturb_singular": draw(st.booleans())}, ops, (0, 1, 2, 3), [(3,)])


SAMPLERS: dict[str, Sampler] = {
    # laxlinalg (issue 21): the Householder family has no derivatives in JAX.
    "householder_product": Sampler("householder_product", _householder_product, FLOAT, differentiable=False),
    "ormqr": Sampler("ormqr", _ormqr, FLOAT, differentiable=False),
    "hessenberg": Sampler("hessenberg", _hessenberg, FLOAT, differentiable=False),
    "tridiagonal": Sampler("tridiagonal", _tridiagonal, FLOAT, differentiable=False),
    "schur": Sampler("schur", _schur, FLOAT, differentiable=False),
    "symmetric_product": Sampler("symmetric_product", _symmetric_product, FLOAT, differentiable=False),
    "tridiagonal_solve": Sampler("tridiagonal_solve", _tridiagonal_solve, FLOAT, linear=True),
    "cholesky": Sampler("cholesky", _cholesky, FLOAT),
    "triangular_solve": Sampler("triangular_solve", _triangular_solve, FLOAT, linear=True),
    "lu": Sampler("lu", _lu, FLOAT),
    "lu_pivots_to_permutation": Sampler("lu_pivots_to_permutation", _lu_pivots_to_permutation, INT, differentiable=False),
    "qr": Sampler("qr", _qr, FLOAT),
    "eigh": Sampler("eigh", _eigh, FLOAT),
    "svd": Sampler("svd", _svd, FLOAT),
    "eig": Sampler("eig", _eig, FLOAT),
}
