"""grad, vjp, jvp and vmap of structural programs against real JAX 0.10.2 (the oracle).

Each program is written once against a (jax, jnp, lax) triple and runs
under JAX and under minijax: the printed jaxprs of its grad, vjp, jvp or
vmap must be identical, and so must the values. Where minijax's jaxpr
differs on purpose (stack's transpose: JAX has an ``unstack`` primitive;
vmap of the dynamic slices with per-element starts: JAX uses gather and
scatter, which minijax does not have yet) the values are still compared.
Run where JAX is installed:
    .venv-oracle/bin/python -m pytest tests/test_ad_structural_oracle.py
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402
import minijax.numpy  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

JAX = SimpleNamespace(jax=jax, jnp=jax.numpy, lax=jax.lax)
MINI = SimpleNamespace(jax=minijax, jnp=minijax.numpy, lax=minijax.lax)
Lib = SimpleNamespace
Program = Callable[[Lib], Callable[..., Any]]

X = np.arange(12, dtype=np.float32).reshape(4, 3) / 7 - 0.5
XB = np.arange(60, dtype=np.float32).reshape(5, 4, 3) / 11 - 2.0


def squares(f: Callable[..., Any]) -> Callable[..., Any]:
    """The scalar loss sum(f(...) ** 2), whose grad goes through f's transpose rules."""
    return lambda *a: (f(*a) ** 2).sum()


# Programs for grad: name -> (program, args). The transposes of slice, pad,
# broadcast_in_dim, reshape, transpose, rev, squeeze, concatenate, split,
# tile and the dynamic slices all appear.
GRAD_PROGRAMS: dict[str, tuple[Program, list[Any]]] = {
    "slice": (lambda m: lambda x: x[1:3], [X]),
    "strided_slice": (lambda m: lambda x: x[::2, 1:], [X]),
    "index_row": (lambda m: lambda x: x[1], [X]),
    "index_column": (lambda m: lambda x: x[:, 1], [X]),
    "reversed_row": (lambda m: lambda x: x[-1, ::-1], [X]),
    "new_axes": (lambda m: lambda x: x[None, :, None], [X]),
    "flip": (lambda m: lambda x: m.jnp.flip(x, 0), [X]),
    "expand_dims": (lambda m: lambda x: m.jnp.expand_dims(x, 1), [X]),
    "broadcast_to": (lambda m: lambda x: m.jnp.broadcast_to(x, (2, 4, 3)), [X]),
    "swapaxes_ravel": (lambda m: lambda x: m.jnp.swapaxes(x, 0, 1).reshape(-1), [X]),
    "concatenate": (lambda m: lambda x: m.jnp.concatenate([x, 2 * x], axis=1), [X]),
    "split": (lambda m: lambda x: m.jnp.split(x, [1, 3])[1], [X]),
    "tile": (lambda m: lambda x: m.jnp.tile(x, (2, 1)), [X]),
    "pad": (lambda m: lambda x: m.lax.pad(x, 1.0, [(1, 2, 1), (0, -1, 0)]), [X]),
    "dynamic_slice": (lambda m: lambda x: m.lax.dynamic_slice(x, (1, 0), (2, 2)), [X]),
    "dynamic_update_slice": (lambda m: lambda x: m.lax.dynamic_update_slice(x, x[:2, :2] * 3, (1, 1)), [X]),
    "broadcasting_add": (lambda m: lambda x, b: x + b, [X, np.linspace(-1, 1, 3, dtype=np.float32)]),
    "broadcasting_mul": (lambda m: lambda x, b: x * b, [X, np.linspace(-1, 1, 4, dtype=np.float32).reshape(4, 1)]),
    "gram": (lambda m: lambda x: x.T @ x, [X]),
    "squeeze": (lambda m: lambda x: m.jnp.squeeze(x[:, :1]), [X]),
    "ravel_every_third": (lambda m: lambda x: x.ravel()[::3], [X]),
    "transpose_of_slice_of_broadcast": (lambda m: lambda x: m.jnp.broadcast_to(x[:1], (2, 4, 3)).transpose(2, 0, 1), [X]),
}


def _grad_of(m: Lib, name: str) -> tuple[Callable[..., Any], list[Any]]:
    program, args = GRAD_PROGRAMS[name]
    f = program(m)
    return m.jax.grad(squares(f), argnums=tuple(range(len(args)))), args


@pytest.mark.parametrize("name", sorted(GRAD_PROGRAMS))
def test_jaxpr_of_grad_equals_jax(name: str) -> None:
    want_fun, args = _grad_of(JAX, name)
    got_fun, _ = _grad_of(MINI, name)
    assert str(minijax.make_jaxpr(got_fun)(*args)) == str(jax.make_jaxpr(want_fun)(*args))


@pytest.mark.parametrize("name", sorted(GRAD_PROGRAMS))
def test_grad_equals_jax(name: str) -> None:
    want_fun, args = _grad_of(JAX, name)
    got_fun, _ = _grad_of(MINI, name)
    for g, w in zip(got_fun(*args), want_fun(*args), strict=True):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


# vjp and jvp with integer start indices: their cotangents are float0, their tangents symbolic zeros.
def _vjp_program(m: Lib) -> Callable[..., Any]:
    def f(x: Any, u: Any, i: Any) -> Any:
        out, pullback = m.jax.vjp(lambda x, u: m.lax.dynamic_update_slice(x, u, (i, 0)), x, u)
        return pullback(m.jnp.ones_like(out))

    return f


def _jvp_program(m: Lib) -> Callable[..., Any]:
    def f(x: Any, i: Any) -> Any:
        return m.jax.jvp(lambda x: m.lax.dynamic_slice(x, (i, 0), (2, 2)), (x,), (m.jnp.ones_like(x),))

    return f


def test_vjp_with_traced_start_indices_equals_jax() -> None:
    args = [X, np.ones((2, 2), np.float32), np.int32(1)]
    assert str(minijax.make_jaxpr(_vjp_program(MINI))(*args)) == str(jax.make_jaxpr(_vjp_program(JAX))(*args))


def test_jvp_with_traced_start_indices_equals_jax() -> None:
    args = [X, np.int32(3)]
    assert str(minijax.make_jaxpr(_jvp_program(MINI))(*args)) == str(jax.make_jaxpr(_jvp_program(JAX))(*args))
    for g, w in zip(_jvp_program(MINI)(*args), _jvp_program(JAX)(*args)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_grad_through_stack_equals_jax_in_value() -> None:
    # The jaxprs differ in one place: JAX transposes stack with its ``unstack`` primitive.
    want = jax.grad(lambda x, y: (jax.numpy.stack([x, y * 2], 1) ** 2).sum(), (0, 1))(X, X + 1)
    got = minijax.grad(lambda x, y: (minijax.numpy.stack([x, y * 2], 1) ** 2).sum(), (0, 1))(X, X + 1)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


# Programs for vmap: name -> (program, args, in_axes, out_axes).
VMAP_PROGRAMS: dict[str, tuple[Program, list[Any], Any, Any]] = {
    "slice": (lambda m: lambda x: x[1:3], [XB], 0, 0),
    "slice_axis_1": (lambda m: lambda x: x[1:3], [XB], 1, 0),
    "strided_slice": (lambda m: lambda x: x[::2, 1:], [XB], 2, 2),
    "index": (lambda m: lambda x: x[1], [XB], 1, 0),
    "new_axes": (lambda m: lambda x: x[None, :, None], [XB], 0, 0),
    "transpose": (lambda m: lambda x: x.T, [XB], 2, 0),
    "ravel": (lambda m: lambda x: x.reshape(-1), [XB], 1, 0),
    "flip": (lambda m: lambda x: m.jnp.flip(x, 0), [XB], 1, 1),
    "add_shared": (lambda m: lambda x, b: x + b, [XB, np.ones(3, np.float32)], (0, None), 0),
    "add_both": (lambda m: lambda x, b: x + b, [XB, np.ones((5, 3), np.float32)], (0, 0), 0),
    "add_other_axis": (lambda m: lambda x, b: x + b, [XB, np.ones((3, 5), np.float32)], (0, 1), 0),
    "broadcast_to": (lambda m: lambda x: m.jnp.broadcast_to(x, (2, 4, 3)), [XB], 0, 0),
    "concatenate": (lambda m: lambda x: m.jnp.concatenate([x, 2 * x], axis=1), [XB], 1, 0),
    "concatenate_shared": (lambda m: lambda x, y: m.jnp.concatenate([x, y]), [XB, np.ones((4, 3), np.float32)], (1, None), 0),
    "tile": (lambda m: lambda x: m.jnp.tile(x, (2, 1)), [XB], 2, 0),
    "expand_dims": (lambda m: lambda x: m.jnp.expand_dims(x, 0), [XB], 2, 0),
    "squeeze": (lambda m: lambda x: m.jnp.squeeze(x[:, :1]), [XB], 1, 0),
    "dense_tanh": (lambda m: lambda x, w: m.jnp.tanh(x @ w), [XB, np.ones((3, 2), np.float32)], (0, None), 0),
    "pad": (lambda m: lambda x: m.lax.pad(x, 0.0, [(1, 1, 0), (0, 0, 1)]), [XB], 2, 0),
    "pad_batched_value": (lambda m: lambda x, v: m.lax.pad(x, v, [(1, 2, 1), (0, -1, 0)]), [XB, np.arange(4, dtype=np.float32)], (1, 0), 1),
    "pad_shared_operand": (lambda m: lambda x, v: m.lax.pad(x, v, [(1, 2, 1), (0, -1, 0)]), [X, np.arange(4, dtype=np.float32)], (None, 0), 0),
    "split": (lambda m: lambda x: m.jnp.split(x, [1], axis=1), [XB], 1, 1),
    "stack": (lambda m: lambda x, y: m.jnp.stack([x, y], axis=1), [XB, XB], (1, 1), 2),
    "rev": (lambda m: lambda x: m.lax.rev(x, (0,)), [XB], 1, 1),
    "grad_of_slice": (lambda m: m.jax.grad(lambda x: (x[1:] ** 2).sum()), [XB], 0, 0),
    "grad_of_ravel": (lambda m: m.jax.grad(lambda x: (x.T.reshape(-1)[::2] ** 2).sum()), [XB], 1, 0),
}


def _vmap_of(m: Lib, name: str) -> tuple[Callable[..., Any], list[Any]]:
    program, args, in_axes, out_axes = VMAP_PROGRAMS[name]
    return m.jax.vmap(program(m), in_axes=in_axes, out_axes=out_axes), args


@pytest.mark.parametrize("name", sorted(VMAP_PROGRAMS))
def test_jaxpr_of_vmap_equals_jax(name: str) -> None:
    want_fun, args = _vmap_of(JAX, name)
    got_fun, _ = _vmap_of(MINI, name)
    assert str(minijax.make_jaxpr(got_fun)(*args)) == str(jax.make_jaxpr(want_fun)(*args))


@pytest.mark.parametrize("name", sorted(VMAP_PROGRAMS))
def test_vmap_equals_jax(name: str) -> None:
    want_fun, args = _vmap_of(JAX, name)
    got_fun, _ = _vmap_of(MINI, name)
    for g, w in zip(minijax.tree_util.tree_leaves(got_fun(*args)), jax.tree_util.tree_leaves(want_fun(*args)), strict=True):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


# Programs mixing grad and vmap both ways, under jit.
MIXED_PROGRAMS: dict[str, tuple[Program, list[Any]]] = {
    "grad_of_vmap_slice_transpose": (lambda m: m.jax.grad(lambda x: (m.jax.vmap(lambda x: x[1:3].T)(x) ** 2).sum()), [XB]),
    "grad_of_vmap_index": (lambda m: m.jax.grad(lambda x: (m.jax.vmap(lambda x: x[1], in_axes=1)(x) ** 2).sum()), [XB]),
    "grad_of_vmap_shared": (
        lambda m: m.jax.grad(lambda x, b: (m.jax.vmap(lambda x, b: x + b, in_axes=(0, None))(x, b) ** 2).sum(), argnums=(0, 1)),
        [XB, np.ones(3, np.float32)],
    ),
    "grad_of_vmap_concatenate": (lambda m: m.jax.grad(lambda x: (m.jax.vmap(lambda x: m.jnp.concatenate([x, x[:1]]))(x) ** 2).sum()), [XB]),
    "vmap_of_grad_tile": (lambda m: m.jax.vmap(m.jax.grad(lambda x: (m.jnp.tile(x, (2, 1)) ** 2).sum()), in_axes=2), [XB]),
    "jit_vmap_grad_pad": (lambda m: m.jax.jit(m.jax.vmap(m.jax.grad(lambda x: (m.lax.pad(x, 0.0, [(1, 1, 1), (0, 0, 0)]) ** 2).sum()))), [XB]),
}


@pytest.mark.parametrize("name", sorted(MIXED_PROGRAMS))
def test_jaxpr_of_grad_and_vmap_equals_jax(name: str) -> None:
    program, args = MIXED_PROGRAMS[name]
    assert str(minijax.make_jaxpr(program(MINI))(*args)) == str(jax.make_jaxpr(program(JAX))(*args))
    for g, w in zip(minijax.tree_util.tree_leaves(program(MINI)(*args)), jax.tree_util.tree_leaves(program(JAX)(*args)), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)


# Dynamic slices with per-element start indices: JAX gathers and scatters,
# minijax shifts; the values must agree (out-of-range starts clamp alike).
STARTS = np.array([0, 3, -1, 10, 2], np.int32)
COLS = np.array([1, 0, 6, 2, 1], np.int32)


def _per_element_programs(m: Lib) -> dict[str, tuple[Callable[..., Any], list[Any]]]:
    ds = lambda x, i, j: m.lax.dynamic_slice(x, (i, j), (2, 2))  # noqa: E731
    dus = lambda x, u, i, j: m.lax.dynamic_update_slice(x, u, (i, j))  # noqa: E731
    return {
        "slice_shared_operand": (m.jax.vmap(ds, in_axes=(None, 0, None)), [X, STARTS, np.int32(1)]),
        "slice_all_batched": (m.jax.vmap(ds), [XB, STARTS, COLS]),
        "slice_operand_axis_2": (m.jax.vmap(ds, in_axes=(2, 0, 0)), [np.moveaxis(XB, 0, 2).copy(), STARTS, COLS]),
        "update_shared_operand": (m.jax.vmap(dus, in_axes=(None, 0, 0, 0)), [X, -XB[:, :2, :2], STARTS, COLS]),
        "update_shared_update": (m.jax.vmap(dus, in_axes=(0, None, 0, None)), [XB, np.full((1, 3), 9.0, np.float32), STARTS, np.int32(0)]),
        "grad_through_batched_slice": (
            m.jax.grad(lambda x: (m.jax.vmap(ds, in_axes=(0, 0, 0))(x, STARTS, COLS) ** 3).sum()),
            [XB],
        ),
    }


@pytest.mark.parametrize("name", sorted(_per_element_programs(MINI)))
def test_per_element_start_indices_equal_jax_in_value(name: str) -> None:
    got_fun, args = _per_element_programs(MINI)[name]
    want_fun, _ = _per_element_programs(JAX)[name]
    g, w = got_fun(*args), want_fun(*args)
    assert (g.dtype, g.shape) == (w.dtype, w.shape)
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)
