"""custom_gradient, linear_transpose, closure_convert, custom_batching, named_call/named_scope,
and two custom_vjp fidelity details, on each backend under jit/grad/vmap.

Each case in CASES is written against a library namespace ``m`` (``m.jax``,
``m.jnp``) so that tests/test_custom_rules_oracle.py runs the same code on real
JAX; here each case's value is checked against its closed form.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import minijax
import minijax.numpy

MINI = SimpleNamespace(jax=minijax, jnp=minijax.numpy)


def _square_custom_gradient(m: Any) -> Any:
    @m.jax.custom_gradient
    def f(x: Any) -> Any:
        # The rule says 3x (not 2x): the test can tell the rule ran.
        return x**2, lambda g: (3.0 * g * x,)

    return f


def _two_arg_custom_gradient(m: Any) -> Any:
    @m.jax.custom_gradient
    def f(x: Any, y: Any) -> Any:
        return x * y, lambda g: (g * y, 10.0 * g * x)

    return f


def _cv(m: Any) -> Any:
    @m.jax.custom_batching.custom_vmap
    def f(x: Any, y: Any) -> Any:
        return x + y

    @f.def_vmap
    def rule(axis_size: int, in_batched: list[Any], xs: Any, ys: Any) -> Any:
        # A product (not the sum): proves the rule, not f, ran under vmap.
        out = m.jnp.multiply(xs, ys) + axis_size
        return out, in_batched[0] or in_batched[1]

    return f


def _closure_converted(m: Any, a: Any) -> Any:
    conv, consts = m.jax.closure_convert(lambda x: m.jnp.sin(x * a), 1.0)
    return conv(2.0, *consts)


X3 = np.array([0.5, 1.0, 2.0], np.float32)

CASES: dict[str, tuple[Callable[[Any], Any], Callable[[], Any]]] = {
    "custom_gradient": (lambda m: _square_custom_gradient(m)(3.0), lambda: 9.0),
    "custom_gradient_grad": (lambda m: m.jax.grad(_square_custom_gradient(m))(3.0), lambda: 9.0),
    "custom_gradient_jit_grad": (lambda m: m.jax.jit(m.jax.grad(_square_custom_gradient(m)))(3.0), lambda: 9.0),
    "custom_gradient_grad_jit": (lambda m: m.jax.grad(m.jax.jit(_square_custom_gradient(m)))(3.0), lambda: 9.0),
    "custom_gradient_vmap_grad": (lambda m: m.jax.vmap(m.jax.grad(_square_custom_gradient(m)))(X3), lambda: 3 * X3),
    "custom_gradient_two_args": (lambda m: m.jax.grad(_two_arg_custom_gradient(m), argnums=(0, 1))(3.0, 4.0), lambda: (4.0, 30.0)),
    "linear_transpose": (lambda m: m.jax.linear_transpose(lambda x, y: (2 * x + y, x), 1.0, 2.0)((1.0, 1.0)), lambda: (3.0, 1.0)),
    "linear_transpose_jit": (
        lambda m: m.jax.jit(m.jax.linear_transpose(lambda x: m.jnp.cumsum(x), X3))(X3),
        lambda: np.cumsum(X3[::-1])[::-1],
    ),
    "linear_transpose_int": (lambda m: m.jax.linear_transpose(lambda x: 3 * x, 1)(2), lambda: 6),
    "closure_convert_grad": (lambda m: m.jax.grad(lambda a: _closure_converted(m, a))(0.5), lambda: 2 * np.cos(1.0)),
    "closure_convert_consts": (
        lambda m: m.jax.grad(lambda a: m.jnp.float32(len(m.jax.closure_convert(lambda x: x * a, 1.0)[1])) * a)(0.5),
        lambda: 1.0,
    ),
    "custom_vmap_plain": (lambda m: _cv(m)(1.0, 2.0), lambda: 3.0),
    "custom_vmap_vmap": (lambda m: m.jax.vmap(_cv(m), (0, None))(X3, 2.0), lambda: X3 * 2 + 3),
    "custom_vmap_jit_vmap": (lambda m: m.jax.jit(m.jax.vmap(_cv(m)))(X3, X3), lambda: X3 * X3 + 3),
    "custom_vmap_grad_vmap": (lambda m: m.jax.grad(lambda x: m.jax.vmap(_cv(m))(x, x).sum())(X3), lambda: 2 * X3),
    "custom_vmap_nested": (
        lambda m: m.jax.vmap(m.jax.vmap(_cv(m), (0, None)), (None, 0))(X3, X3[:2]),
        lambda: X3[None, :] * X3[:2, None] + 3,
    ),
    "sequential_vmap": (
        lambda m: m.jax.vmap(m.jax.custom_batching.sequential_vmap(lambda x, y: m.jnp.sin(x) * y), (0, None))(X3, 2.0),
        lambda: np.sin(X3) * 2,
    ),
    "named_scope_jit_grad": (
        lambda m: m.jax.jit(m.jax.grad(m.jax.named_scope("layer")(lambda x: x * x)))(3.0), lambda: 6.0,
    ),
    "named_call_vmap": (lambda m: m.jax.vmap(m.jax.named_call(lambda x: x + 1, name="inc"))(X3), lambda: X3 + 1),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_case_gives_its_closed_form(case: str) -> None:
    run, want = CASES[case]
    got = run(MINI)
    for g, w in zip(minijax.tree_util.tree_leaves(got), minijax.tree_util.tree_leaves(want())):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6)


def _vjp_residual_types(m: Any) -> list[str]:
    """The types bwd sees: JAX hands a scalar Array residual to bwd as an Array."""
    seen: list[str] = []

    @m.jax.custom_vjp
    def f(x: Any) -> Any:
        return m.jnp.sin(x)

    def fwd(x: Any) -> Any:
        return f(x), m.jnp.cos(x)

    def bwd(cos_x: Any, g: Any) -> Any:
        seen.append("Array" if isinstance(cos_x, m.jax.Array) else type(cos_x).__name__)
        return (cos_x * g,)

    f.defvjp(fwd, bwd)
    _, f_vjp = m.jax.vjp(f, 3.0)
    (ct,) = f_vjp(1.0)
    seen.append("Array" if isinstance(ct, m.jax.Array) else type(ct).__name__)
    return seen


def test_custom_vjp_bwd_gets_arrays_not_python_floats() -> None:
    assert _vjp_residual_types(MINI) == ["Array", "Array"]


def _jvp_of_custom_vjp_log(m: Any) -> list[str]:
    log: list[str] = []

    @m.jax.custom_vjp
    def f(x: Any) -> Any:
        log.append("f")
        return m.jnp.sin(x)

    def fwd(x: Any) -> Any:
        log.append("fwd")
        return f(x), m.jnp.cos(x)

    f.defvjp(fwd, lambda c, g: (c * g,))
    try:
        m.jax.jvp(f, (3.0,), (1.0,))
    except TypeError as e:
        log.append(str(e))
    return log


def test_jvp_of_custom_vjp_runs_fwd_then_raises() -> None:
    assert _jvp_of_custom_vjp_log(MINI) == ["fwd", "f", "can't apply forward-mode autodiff (jvp) to a custom_vjp function."]


ERRORS: dict[str, Callable[[Any], Any]] = {
    "linear_transpose_mixed_dtypes": lambda m: m.jax.linear_transpose(lambda x: x.astype("int32"), 1.0),
    "linear_transpose_bad_ct_tree": lambda m: m.jax.linear_transpose(lambda x: (x, x), 1.0)(1.0),
    "linear_transpose_bad_ct_type": lambda m: m.jax.linear_transpose(lambda x: x, np.ones(2, np.float32))(np.ones(3, np.float32)),
    "named_scope_not_a_string": lambda m: m.jax.named_scope(3),
    "custom_vmap_no_rule": lambda m: m.jax.custom_batching.custom_vmap(lambda x: x)(1.0),
    "closure_convert_wrong_tree": lambda m: m.jax.closure_convert(lambda x: x, 1.0)[0]((1.0,)),
}


def _error_of(case: str, m: Any) -> tuple[str, str]:
    with pytest.raises(Exception) as info:
        ERRORS[case](m)
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_bad_input_raises_a_type_or_attribute_error(case: str) -> None:
    kind, message = _error_of(case, MINI)
    assert kind in ("TypeError", "AttributeError"), (kind, message)


def test_named_scopes_nest_and_unwind() -> None:
    from minijax.api import current_name_stack

    with minijax.named_scope("outer"):
        inner = minijax.named_call(lambda: current_name_stack(), name="inner")()
        assert current_name_stack() == "outer"
    assert inner == "outer/inner"
    assert current_name_stack() == ""
