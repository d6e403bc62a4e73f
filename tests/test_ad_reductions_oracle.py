"""grad, jvp and vmap through the reductions and dot_general, against real JAX.

Each program is written once against a library (``jax`` or ``minijax``) and
run with both: the jaxpr texts must be equal byte for byte (the rules stage
the same equations as JAX's, NumPy-integer params included) and the values
must agree. The programs include the ones issue 4 names: an MLP loss with
``x @ w + b``, tanh and mean squared error, and a softmax cross-entropy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402

pytestmark = pytest.mark.oracle

F32 = np.float32
BF16 = np.dtype(ml_dtypes.bfloat16)
X = np.linspace(-1, 1, 15, dtype=F32).reshape(5, 3)
W = np.linspace(-0.5, 0.7, 12, dtype=F32).reshape(3, 4)
B = np.linspace(0.1, 0.4, 4, dtype=F32)
Y = np.linspace(0.2, -0.3, 20, dtype=F32).reshape(5, 4)
W2 = np.linspace(-1, 1, 8, dtype=F32).reshape(4, 2)
MAT = np.linspace(-1, 1, 12, dtype=F32).reshape(4, 3)
LABELS = np.eye(4, dtype=F32)[[0, 2, 1, 3, 0]]
TIES = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], F32)
EMPTY = np.zeros((0, 3), F32)
WITH_ZEROS = np.array([[2.0, 0.0, 3.0, 1.5], [0.0, 4.0, 0.0, 1.0], [1.0, 2.0, 3.0, 4.0]], F32)

Program = tuple[Callable[..., Any], list[Any]]


def programs(jx: Any) -> dict[str, Program]:
    """The programs, for ``jx`` either ``jax`` or ``minijax``."""
    jnp, lax = jx.numpy, jx.lax
    grad, vmap, jvp, jit = jx.grad, jx.vmap, jx.jvp, jx.jit

    def mse(params: Any, x: Any, y: Any) -> Any:
        w, b = params
        p = jnp.tanh(x @ w + b)
        return jnp.mean((p - y) ** 2)

    def mse_bf16(params: Any, x: Any, y: Any) -> Any:
        # bfloat16 weights and inputs, the product accumulated and returned in float32.
        w, b = params
        p = jnp.tanh(jnp.matmul(x, w, preferred_element_type=np.float32) + b)
        return jnp.mean((p - y) ** 2)

    def mlp2(params: Any, x: Any, y: Any) -> Any:
        (w1, b1), (w2, b2) = params
        h = jnp.tanh(jnp.dot(x, w1) + b1)
        out = jnp.dot(h, w2) + b2
        return jnp.mean(jnp.sum((out - y) ** 2, axis=1))

    def xent(w: Any, x: Any, labels: Any) -> Any:
        logits = x @ w
        m = jnp.max(logits, axis=-1, keepdims=True)
        shifted = logits - lax.stop_gradient(m)
        logp = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True))
        return -jnp.mean(jnp.sum(labels * logp, axis=-1))

    def pet(w: Any, x: Any) -> Any:
        return jnp.sum(lax.dot_general(x, w, (((1,), (0,)), ((), ())), preferred_element_type=np.float32))

    def batched_dims(a: Any, b: Any) -> Any:
        # Batch axes 0 (lhs) / 2 (rhs), contracting 2 (lhs) / 0 (rhs).
        return jnp.sum(jnp.sin(lax.dot_general(a, b, (((2,), (0,)), ((0,), (2,))))))

    def stack(*xs: Any, axis: int = 0) -> Any:
        return np.stack(xs, axis)

    return {
        # reductions
        "grad_sum": (grad(lambda x: jnp.sum(x)), [X]),
        "grad_mean": (grad(lambda x: jnp.mean(x)), [X]),
        "grad_sum_axis": (grad(lambda x: jnp.sum(jnp.sum(x, axis=1) * jnp.arange(5.0))), [X]),
        "grad_max": (grad(lambda x: jnp.max(x)), [X[0]]),
        "grad_max_axis": (grad(lambda x: jnp.sum(jnp.max(x, axis=0))), [X]),
        "grad_min_axis": (grad(lambda x: jnp.sum(jnp.min(x, axis=1))), [X]),
        "grad_max_ties": (grad(lambda x: jnp.sum(jnp.sin(jnp.max(x, axis=1)))), [TIES]),
        "grad_prod": (grad(lambda x: jnp.prod(x)), [X[0]]),
        "grad_prod_axis": (grad(lambda x: jnp.sum(jnp.prod(x, axis=1))), [X]),
        "grad_prod_zeros": (grad(lambda x: jnp.sum(jnp.prod(x, axis=1))), [WITH_ZEROS]),
        "jvp_max": (lambda x, t: jvp(lambda x: lax.reduce_max(x, (1,)), (x,), (t,)), [X, X]),
        "jvp_min_ties": (lambda x, t: jvp(lambda x: lax.reduce_min(x, (0,)), (x,), (t,)), [TIES, X[:2]]),
        "jvp_prod": (lambda x, t: jvp(lambda x: lax.reduce_prod(x, (0, 1)), (x,), (t,)), [X, X]),
        "jvp_prod_axes": (lambda x, t: jvp(lambda x: lax.reduce_prod(x, (1,)), (x,), (t,)), [WITH_ZEROS, WITH_ZEROS]),
        "jvp_prod_empty": (lambda x, t: jvp(lambda x: lax.reduce_prod(x, (0,)), (x,), (t,)), [EMPTY, EMPTY]),
        "jvp_prod_empty_to_scalar": (lambda x, t: jvp(lambda x: lax.reduce_prod(x, (0, 1)), (x,), (t,)), [EMPTY, EMPTY]),
        "grad_argmax_value": (grad(lambda x: jnp.sum(x * jnp.argmax(x, axis=1)[:, None])), [X]),
        # dot_general
        "jvp_dot": (lambda x, w, t, s: jvp(jnp.dot, (x, w), (t, s)), [X, W, X, W]),
        "grad_dot_lhs": (grad(lambda x, w: jnp.sum(jnp.dot(x, w))), [X, W]),
        "grad_dot_rhs": (grad(lambda x, w: jnp.sum(jnp.dot(x, w)), 1), [X, W]),
        "grad_matvec": (grad(lambda w, v: jnp.sum(jnp.sin(w @ v)), (0, 1)), [W.T, W[:, 0]]),
        "grad_vecdot": (grad(lambda u, v: jnp.sin(jnp.dot(u, v)), (0, 1)), [W[0], W[1]]),
        "grad_preferred_element_type": (grad(pet, (0, 1)), [W.astype(np.float16), X.astype(np.float16)]),
        "grad_batched_matmul": (grad(lambda a, b: jnp.sum(jnp.matmul(a, b)), (0, 1)), [stack(X, X), stack(W, W)]),
        "grad_batch_dims": (grad(batched_dims, (0, 1)), [stack(X, 2 * X), stack(W[:, :2], W[:, 2:], axis=2)]),
        # the programs of issue 4
        "grad_mlp_mse": (grad(mse), [(W, B), X, Y]),
        "grad_mlp_bf16": (grad(mse_bf16), [(W.astype(BF16), B), X.astype(BF16), Y]),
        "grad_mlp2": (grad(mlp2), [((W, B), (W2, B[:2])), X, Y[:, :2]]),
        "grad_softmax_xent": (grad(xent), [W, X, LABELS]),
        "jit_grad_softmax_xent": (jit(grad(xent)), [W, X, LABELS]),
        # vmap
        "vmap_apply_matrix": (vmap(lambda v: jnp.dot(MAT, v)), [X]),
        "vmap_dot": (vmap(jnp.dot), [stack(X, X), stack(W, W)]),
        "vmap_dot_none_1": (vmap(jnp.dot, in_axes=(None, 1)), [X, stack(W, W, axis=1)]),
        "vmap_dot_1_none": (vmap(jnp.dot, in_axes=(1, None)), [stack(X, X, axis=1), W]),
        "vmap_dot_1_2": (vmap(jnp.dot, in_axes=(1, 2)), [stack(X, X, axis=1), stack(W, W, axis=2)]),
        "vmap_dot_out_axes": (vmap(jnp.dot, in_axes=(None, 0), out_axes=1), [X, stack(W, W)]),
        "vmap_sum": (vmap(lambda x: jnp.sum(x, axis=0), in_axes=1), [stack(X, X, axis=1)]),
        "vmap_max": (vmap(lambda x: jnp.max(x, axis=1), in_axes=2), [stack(X, X, axis=2)]),
        "vmap_prod_all": (vmap(jnp.prod, in_axes=1), [X]),
        "vmap_argmax": (vmap(lambda x: jnp.argmax(x, axis=1), in_axes=1), [stack(X, X, axis=1)]),
        "vmap_any": (vmap(lambda x: jnp.any(x > 0, axis=0), in_axes=1), [X]),
        "vmap_grad_mse": (vmap(grad(mse), in_axes=(None, 0, 0)), [(W, B), stack(X, X), stack(Y, Y)]),
        "grad_vmap_max": (grad(lambda x: jnp.sum(vmap(jnp.max, in_axes=1)(x))), [X]),
        "grad_vmap_prod": (grad(lambda x: jnp.sum(vmap(lambda r: jnp.prod(r, axis=1), in_axes=2)(x))), [stack(X, X, axis=2)]),
        "vmap_jvp_prod": (vmap(lambda x, t: jvp(lambda x: jnp.prod(x, axis=0), (x,), (t,)), in_axes=1), [X, X]),
        "grad_vmap_xent": (grad(lambda w: jnp.sum(vmap(xent, in_axes=(None, 0, 0))(w, stack(X, -X), stack(LABELS, LABELS)))), [W]),
    }


NAMES = list(programs(minijax))


def _leaves(tree: Any, lib: Any) -> list[np.ndarray]:
    return [np.asarray(leaf) for leaf in lib.tree_util.tree_leaves(tree)]


@pytest.mark.parametrize("name", NAMES)
def test_jaxpr_text_is_jaxs(name: str) -> None:
    jax_fn, args = programs(jax)[name]
    mini_fn, _ = programs(minijax)[name]
    expected = str(jax.make_jaxpr(jax_fn)(*args))
    assert str(minijax.make_jaxpr(mini_fn)(*args)) == expected


@pytest.mark.parametrize("name", NAMES)
def test_values_are_jaxs(name: str) -> None:
    jax_fn, args = programs(jax)[name]
    mini_fn, _ = programs(minijax)[name]
    expected = _leaves(jax.jit(jax_fn)(*args), jax)
    got = _leaves(mini_fn(*args), minijax)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        tol = 1e-2 if e.dtype in (np.float16, BF16) else 1e-5
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)
