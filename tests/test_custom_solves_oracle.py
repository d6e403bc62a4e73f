"""custom_linear_solve, custom_root and the sparse solvers against real JAX 0.10.2 (the oracle).

Each program is written once against a (jax, jnp, lax, sparse) namespace and
runs under JAX and under minijax: values and derivatives must agree, the
printed jaxprs of custom_linear_solve programs must be identical, and errors
must have JAX's type and message. Run where JAX is installed:
    /work/venv-oracle/bin/python -m pytest -m oracle tests/test_custom_solves_oracle.py
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")
jax_sparse = pytest.importorskip("jax.scipy.sparse.linalg")

import minijax  # noqa: E402
import minijax.numpy  # noqa: E402
import minijax.scipy.sparse.linalg  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

JAX = SimpleNamespace(jax=jax, jnp=jax.numpy, lax=jax.lax, sparse=jax_sparse)
MINI = SimpleNamespace(jax=minijax, jnp=minijax.numpy, lax=minijax.lax, sparse=minijax.scipy.sparse.linalg)
Lib = SimpleNamespace

A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.0], [0.5, 0.0, 2.0]], np.float32)
N = np.array([[3.0, 1.0, 0.0], [-1.0, 2.0, 0.5], [0.0, 1.0, 4.0]], np.float32)
B = np.array([1.0, 2.0, -1.0], np.float32)
B2 = np.ones(2, np.float32)


# --- jaxpr text ------------------------------------------------------------------------


def _scaled(lib: Lib, **kw: Any) -> Callable[..., Any]:
    def f(b: Any, c: Any) -> Any:
        return lib.lax.custom_linear_solve(lambda x: c * x, b, lambda mv, b: b / c, **kw)

    return f


TEXT_PROGRAMS: dict[str, tuple[Callable[[Lib], Callable[..., Any]], tuple[Any, ...]]] = {
    "literal_symmetric": (lambda lib: lambda b: lib.lax.custom_linear_solve(lambda x: 2.0 * x, b, lambda mv, b: b / 2.0, symmetric=True), (B2,)),
    "no_transpose": (lambda lib: _scaled(lib), (B2, 3.0)),
    "transpose_solve": (lambda lib: lambda b, c: lib.lax.custom_linear_solve(lambda x: c * x, b, lambda mv, b: b / c, lambda vm, b: b / c), (B2, 3.0)),
    "symmetric_closure": (lambda lib: _scaled(lib, symmetric=True), (B2, 3.0)),
    "grad": (lambda lib: lib.jax.grad(lambda c: _scaled(lib, symmetric=True)(lib.jnp.ones(2), c).sum()), (3.0,)),
    "jvp": (lambda lib: lambda b, c: lib.jax.jvp(_scaled(lib, symmetric=True), (b, c), (b, c)), (B2, 3.0)),
    "vmap": (lambda lib: lambda b, c: lib.jax.vmap(_scaled(lib, symmetric=True), (0, None))(b, c), (np.ones((3, 2), np.float32), 3.0)),
    "scan_solver": (
        lambda lib: lambda b, c: lib.lax.custom_linear_solve(
            lambda x: c * x, b, lambda mv, b: lib.lax.fori_loop(0, 3, lambda i, x: x + (b - mv(x)) / c, b), symmetric=True
        ),
        (B2, 3.0),
    ),
    "matrix": (lambda lib: lambda a, b: lib.lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, b: b / 4.0, symmetric=True), (A, B)),
}


@pytest.mark.parametrize("name", sorted(TEXT_PROGRAMS))
def test_jaxpr_text_is_jaxs(name):
    program, args = TEXT_PROGRAMS[name]
    want = str(jax.make_jaxpr(program(JAX))(*args))
    got = str(minijax.make_jaxpr(program(MINI))(*args))
    assert got == want


# --- values and derivatives ------------------------------------------------------------


def _solve_n(lib: Lib) -> Callable[..., Any]:
    return lambda a, b: lib.lax.custom_linear_solve(
        lambda x: a @ x, b, lambda mv, r: lib.jnp.linalg.solve(a, r), lambda vm, r: lib.jnp.linalg.solve(a.T, r)
    )


def _root_sqrt(lib: Lib) -> Callable[..., Any]:
    def f(c: Any) -> Any:
        newton = lambda f, x: lib.lax.fori_loop(0, 30, lambda i, x: x - f(x) / (2 * x), x)  # noqa: E731
        return lib.lax.custom_root(lambda x: x**2 - c, 1.0, newton, lambda g, y: y / g(1.0))

    return f


def _root_aux(lib: Lib) -> Callable[..., Any]:
    def f(c: Any) -> Any:
        def solve(f: Any, x0: Any) -> Any:
            return lib.jnp.linalg.solve(lib.jnp.asarray(N), -f(lib.jnp.zeros_like(x0))), lib.jnp.float32(2.0)

        x, aux = lib.lax.custom_root(lambda x: lib.jnp.asarray(N) @ x - c, lib.jnp.zeros(3), solve,
                                   lambda g, y: lib.jnp.linalg.solve(lib.jax.jacfwd(g)(y), y), has_aux=True)  # fmt: skip
        return x * aux

    return f


def _sparse(name: str, **kw: Any) -> Callable[[Lib], Callable[..., Any]]:
    return lambda lib: lambda a, b: getattr(lib.sparse, name)(a, b, **kw)[0]


VALUE_PROGRAMS: dict[str, tuple[Callable[[Lib], Callable[..., Any]], tuple[Any, ...]]] = {
    "solve": (_solve_n, (N, B)),
    "solve_jacfwd_a": (lambda lib: lib.jax.jacfwd(_solve_n(lib)), (N, B)),
    "solve_jacrev_a": (lambda lib: lib.jax.jacrev(_solve_n(lib)), (N, B)),
    "solve_jacfwd_b": (lambda lib: lib.jax.jacfwd(_solve_n(lib), argnums=1), (N, B)),
    "solve_vmap_a": (lambda lib: lib.jax.vmap(_solve_n(lib), (0, None)), (np.stack([N, N + np.eye(3, dtype=np.float32)]), B)),
    "solve_vmap_b": (lambda lib: lib.jax.vmap(_solve_n(lib), (None, 1)), (N, np.stack([B, 2 * B], 1))),
    "solve_hessian": (lambda lib: lib.jax.hessian(lambda b: (_solve_n(lib)(N, b) ** 2).sum()), (B,)),
    "root": (_root_sqrt, (2.0,)),
    "root_grad": (lambda lib: lib.jax.grad(_root_sqrt(lib)), (2.0,)),
    "root_grad_grad": (lambda lib: lib.jax.grad(lib.jax.grad(_root_sqrt(lib))), (4.0,)),
    "root_vmap_grad": (lambda lib: lib.jax.vmap(lib.jax.grad(_root_sqrt(lib))), (np.array([1.0, 4.0, 9.0], np.float32),)),
    "root_aux_jacfwd": (lambda lib: lib.jax.jacfwd(_root_aux(lib)), (B,)),
    "root_aux_jacrev": (lambda lib: lib.jax.jacrev(_root_aux(lib)), (B,)),
}
for _name, _kw, _mat in [("cg", {}, A), ("gmres", {}, N), ("bicgstab", {}, N), ("gmres", {"solve_method": "incremental", "restart": 2}, N)]:
    _key = _name + ("_incremental" if _kw else "")
    VALUE_PROGRAMS[f"{_key}_jacfwd_b"] = (lambda lib, n=_name, k=_kw: lib.jax.jacfwd(_sparse(n, tol=1e-6, **k)(lib), argnums=1), (_mat, B))
    VALUE_PROGRAMS[f"{_key}_jacfwd_a"] = (lambda lib, n=_name, k=_kw: lib.jax.jacfwd(_sparse(n, tol=1e-6, **k)(lib)), (_mat, B))
    VALUE_PROGRAMS[f"{_key}_grad_a"] = (lambda lib, n=_name, k=_kw: lib.jax.grad(lambda a, b: _sparse(n, tol=1e-6, **k)(lib)(a, b).sum()), (_mat, B))
    VALUE_PROGRAMS[f"{_key}_grad_closure"] = (
        lambda lib, n=_name, k=_kw, m=_mat: lib.jax.grad(lambda s, b: _sparse(n, tol=1e-6, **k)(lib)(lambda v: s * (m @ v), b).sum()),
        (1.5, B),
    )
    VALUE_PROGRAMS[f"{_key}_vmap_b"] = (lambda lib, n=_name, k=_kw: lib.jax.vmap(_sparse(n, tol=1e-6, **k)(lib), (None, 0)), (_mat, np.stack([B, -2 * B])))


@pytest.mark.parametrize("name", sorted(VALUE_PROGRAMS))
def test_values_and_derivatives_are_jaxs(name):
    program, args = VALUE_PROGRAMS[name]
    want = program(JAX)(*args)
    got = minijax.jit(program(MINI))(*args)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-4, atol=2e-5)
    assert np.asarray(got).dtype == np.asarray(want).dtype


def test_has_aux_values_are_jaxs():
    def program(lib: Lib) -> Any:
        solve = lambda mv, b: (lib.jnp.linalg.solve(N, b), {"n": lib.jnp.int32(3)})  # noqa: E731
        return lib.lax.custom_linear_solve(lambda x: N @ x, B, solve, solve, has_aux=True)

    (x_j, aux_j), (x_m, aux_m) = program(JAX), program(MINI)
    np.testing.assert_allclose(x_m, x_j, rtol=1e-5)
    assert int(aux_m["n"]) == int(aux_j["n"]) == 3


# --- errors ----------------------------------------------------------------------------


ERRORS: dict[str, Callable[[Lib], Any]] = {
    "matvec_shape": lambda lib: lib.lax.custom_linear_solve(lambda x: x[:1], lib.jnp.ones(2), lambda mv, b: b),
    "matvec_tree": lambda lib: lib.lax.custom_linear_solve(lambda x: (x, x), lib.jnp.ones(2), lambda mv, b: b),
    "solve_shape": lambda lib: lib.lax.custom_linear_solve(lambda x: x, lib.jnp.ones(2), lambda mv, b: b[:1]),
    "solve_tree": lambda lib: lib.lax.custom_linear_solve(lambda x: x, lib.jnp.ones(2), lambda mv, b: (b, b)),
    "transpose_solve_shape": lambda lib: lib.lax.custom_linear_solve(lambda x: x, lib.jnp.ones(2), lambda mv, b: b, lambda vm, b: b[:1]),
    "no_transpose_solve": lambda lib: lib.jax.grad(lambda b: lib.lax.custom_linear_solve(lambda x: 2 * x, b, lambda mv, b: b / 2).sum())(lib.jnp.ones(2)),
    "root_f_tree": lambda lib: lib.lax.custom_root(lambda x: (x, x), 1.0, lambda f, x: x, lambda g, y: y),
    "root_solve_tree": lambda lib: lib.lax.custom_root(lambda x: x, 1.0, lambda f, x: (x, x), lambda g, y: y),
    "root_tangent_solve_tree": lambda lib: lib.lax.custom_root(lambda x: x, 1.0, lambda f, x: x, lambda g, y: (y, y)),
    "root_has_aux_not_pair": lambda lib: lib.lax.custom_root(lambda x: x, 1.0, lambda f, x: x, lambda g, y: y, has_aux=True),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_jaxs(name):
    with pytest.raises(Exception) as want:
        ERRORS[name](JAX)
    with pytest.raises(type(want.value)) as got:
        ERRORS[name](MINI)
    assert str(got.value) == str(want.value)
