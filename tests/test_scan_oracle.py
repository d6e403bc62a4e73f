"""lax.scan and lax.map against real JAX: values, printed jaxprs, error messages.

Each program is written once against a library (``jax`` or ``minijax``) and
run with both. The jaxpr texts of scan, its grad (known scan, hoisted
loop-invariant residuals, reverse scan of the transposed body), jvp and vmap
must equal JAX's byte for byte; the values must agree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402

pytestmark = pytest.mark.oracle

F32 = np.float32
W = np.linspace(-1, 1, 16, dtype=F32).reshape(4, 4)
U = np.linspace(-1, 1, 8, dtype=F32).reshape(4, 2)
H = np.linspace(0, 1, 4, dtype=F32)
XS = np.linspace(-1, 1, 10, dtype=F32).reshape(5, 2)
SEQ = np.arange(1, 4, dtype=F32)

Program = tuple[Callable[..., Any], tuple[Any, ...]]


def programs(jx: Any) -> dict[str, Program]:
    """The programs, for ``jx`` either ``jax`` or ``minijax``."""
    jnp, lax = jx.numpy, jx.lax

    def trig(c: Any, xs: Any) -> Any:
        return lax.scan(lambda c, x: (c * 2.0 + x, jnp.sin(c)), c, xs)

    def loss(c: Any, xs: Any) -> Any:
        carry, ys = lax.scan(lambda c, x: (jnp.sin(c) * x, c * 2.0), c, xs)
        return carry + ys.sum()

    def hoisted(w: Any, c: Any, xs: Any) -> Any:
        carry, ys = lax.scan(lambda c, x: (c * jnp.sin(w) + x, jnp.cos(w) * c), c, xs)
        return carry + ys.sum()

    def unused_ys(c: Any, xs: Any) -> Any:
        return lax.scan(lambda c, x: (jnp.sin(c) * x, c * 2.0), c, xs)[0]

    def rnn(w: Any, u: Any, h: Any, xs: Any) -> Any:
        def cell(h: Any, x: Any) -> Any:
            h = jnp.tanh(w @ h + u @ x)
            return h, h

        return lax.scan(cell, h, xs)[1].sum()

    def second(c: Any) -> Any:
        return lax.scan(lambda c, x: (jnp.sin(c) * x, None), c, SEQ)[0]

    return {
        "scan": (trig, (1.0, SEQ)),
        "scan_reverse_unroll": (lambda c, xs: lax.scan(lambda c, x: (c + x, None), c, xs, reverse=True, unroll=2), (1.0, SEQ)),
        "scan_length": (lambda c: lax.scan(lambda c, _: (c + 1, c), c, None, length=4), (1,)),
        "scan_consts": (lambda c, xs: lax.scan(lambda c, x: (W @ c + x, c), c, xs), (H, np.ones((3, 4), F32))),
        "scan_pytree": (lambda c, xs: lax.scan(lambda c, x: ((c[0], c[1] + x), x * 2), c, xs), ((1.0, 2.0), SEQ)),
        "scan_int": (lambda xs: lax.scan(lambda c, x: (c + x, c), 0, xs), (np.arange(5, dtype=np.int32),)),
        "scan_forwarding_everything": (lambda c, xs: lax.scan(lambda c, x: (c, x), c, xs), (1.0, SEQ)),
        "grad": (jx.grad(loss), (1.0, SEQ)),
        "grad_both": (jx.grad(loss, argnums=(0, 1)), (1.0, SEQ)),
        "grad_hoisted": (jx.grad(hoisted, argnums=(0, 1)), (2.0, 1.0, SEQ)),
        "grad_hoisted_carry_only": (jx.grad(hoisted, argnums=(1,)), (2.0, 1.0, SEQ)),
        "linearize_hoisted": (lambda w, c, xs: jx.linearize(hoisted, w, c, xs)[1](1.0, 1.0, xs), (2.0, 1.0, SEQ)),
        "grad_unused_ys": (jx.grad(unused_ys), (1.0, SEQ)),
        "grad_rnn": (jx.grad(rnn, argnums=(0, 1)), (W, U, H, XS)),
        "grad_rnn_all": (jx.grad(rnn, argnums=(0, 1, 2, 3)), (W, U, H, XS)),
        "grad_grad": (jx.grad(jx.grad(second)), (0.5,)),
        "jvp": (lambda c, xs, t: jx.jvp(trig, (c, xs), (t, xs)), (1.0, SEQ, 1.0)),
        "jvp_zero_xs_tangent": (lambda c, xs: jx.jvp(trig, (c, xs), (0.0, jnp.zeros(3))), (1.0, SEQ)),
        "jvp_rnn": (lambda h, t: jx.jvp(lambda h: rnn(W, U, h, XS), (h,), (t,)), (H, H)),
        "vmap": (jx.vmap(trig), (np.ones(2, F32), np.ones((2, 3), F32))),
        "vmap_xs_axis_1": (jx.vmap(trig, (None, 1)), (1.0, np.ones((3, 2), F32))),
        "vmap_rnn": (jx.vmap(rnn, (None, None, 0, None)), (W, U, np.stack([H, H]), XS)),
        "vmap_grad_rnn": (jx.vmap(jx.grad(rnn), (None, None, 0, None)), (W, U, np.stack([H, H]), XS)),
        "map": (lambda xs: lax.map(lambda x: x * 2, xs), (SEQ,)),
        "map_batch_size": (lambda xs: lax.map(lambda x: x * 2, xs, batch_size=2), (np.arange(5, dtype=F32),)),
        "map_batch_size_exact": (lambda xs: lax.map(lambda x: x * 2, xs, batch_size=2), (np.arange(4, dtype=F32),)),
    }


def extra_programs(jx: Any) -> dict[str, Program]:
    """Programs whose texts differ from JAX's for reasons outside scan's rules.

    JAX's tracer drops a ``convert_element_type`` that changes nothing (the
    transpose of the convert of a weakly typed carry), minijax stages it; JAX
    types ``add_any`` like its first operand (weak type included), minijax
    strips the weak type unless both are weak, so the cotangent of a weak
    carry can come out strongly typed. Their values and dtypes are compared.
    """
    jnp, lax = jx.numpy, jx.lax
    return {
        "grad_reverse_weak_carry": (
            jx.grad(lambda c, xs: lax.scan(lambda c, x: (c * x + jnp.sin(c), c), c, xs, reverse=True)[0]),
            (0.5, SEQ),
        ),
        "grad_int_carry": (
            jx.grad(lambda c, xs: lax.scan(lambda c, x: ((c[0] + 1, c[1] * x), c[0]), (0, c), xs)[0][1]),
            (2.0, SEQ),
        ),
    }


NAMES = sorted(programs(minijax))
EXTRA = sorted(extra_programs(minijax))


def _values(out: Any) -> list[np.ndarray[Any, Any]]:
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(out)]


@pytest.mark.parametrize("name", NAMES)
def test_the_jaxpr_text_is_jaxs(name: str) -> None:
    mini, args = programs(minijax)[name]
    real, _ = programs(jax)[name]
    assert str(minijax.make_jaxpr(mini)(*args)) == str(jax.make_jaxpr(real)(*args))


@pytest.mark.parametrize("name", NAMES + EXTRA)
def test_values_dtypes_and_weak_types_are_jaxs(name: str) -> None:
    table_mini = {**programs(minijax), **extra_programs(minijax)}
    table_real = {**programs(jax), **extra_programs(jax)}
    (mini, args), (real, _) = table_mini[name], table_real[name]
    got, want = mini(*args), real(*args)
    assert minijax.tree_util.tree_structure(got).num_leaves == jax.tree_util.tree_structure(want).num_leaves
    for g, w in zip(minijax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        if name in NAMES:
            assert getattr(g, "weak_type", None) == getattr(w, "weak_type", None)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-6, atol=2e-6)


ERRORS: list[Callable[[Any], Any]] = [
    lambda jx: jx.lax.scan(lambda c, x: (c.astype(jx.numpy.int32) * jx.numpy.ones(2, jx.numpy.int32), x), 1.0, np.arange(3.0)),
    lambda jx: jx.lax.scan(lambda c, x: ([c[0] * jx.numpy.ones(2), c[1].astype(int)], x), [1.0, 2.0], np.arange(3.0)),
    lambda jx: jx.lax.scan(lambda c, x: ({"a": c["a"], "b": c["a"].astype(int)}, x), {"a": 1.0, "b": 2.0}, np.arange(3.0)),
    lambda jx: jx.lax.scan(lambda c, x: ({"a": c["a"]}, x), {"a": 1.0, "b": 2.0}, np.arange(3.0)),
    lambda jx: jx.lax.scan(lambda *a: (a[0] * jx.numpy.ones(2), a[1]), 1.0, np.arange(3.0)),
    lambda jx: jx.lax.scan(lambda c, x: (c, x), 1.0, (np.arange(3.0), np.arange(4.0))),
    lambda jx: jx.lax.scan(lambda c, x: (c, x), 1.0, np.arange(3.0), length=4),
    lambda jx: jx.lax.scan(lambda c, x: (c, x), 1.0, None),
    lambda jx: jx.lax.scan(lambda c, x: (c, x), 1.0, 3.0),
    lambda jx: jx.lax.scan(lambda c, x: (c, x), 1.0, [1, 2]),
    lambda jx: jx.lax.scan(lambda c, x: c, 1.0, np.arange(3.0)),
    lambda jx: jx.lax.scan(lambda c, x: (c, x), 1.0, np.arange(3.0), unroll=-1),
    lambda jx: jx.lax.scan(3, 1.0, np.arange(3.0)),
]


def _error(call: Callable[[Any], Any], jx: Any) -> Exception:
    try:
        call(jx)
    except Exception as e:  # the error is what is compared
        return e
    raise AssertionError("no error raised")


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_have_jaxs_type_and_message(index: int) -> None:
    got, want = _error(ERRORS[index], minijax), _error(ERRORS[index], jax)
    assert type(got).__name__ == type(want).__name__
    # JAX's message names its own aval class; minijax's is minijax.core.ShapedArray.
    assert str(got) == str(want).replace("jax._src.core.ShapedArray", "minijax.core.ShapedArray")
