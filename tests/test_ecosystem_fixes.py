"""Small public-surface fixes the JAX ecosystem needed (issue 24), each checked on its own.

- A primitive a library lowers with ``mlir.register_lowering(prim, mlir.lower_fun(impl))`` (as Equinox
  does) runs under ``jit`` on every backend, also inside control flow; without a lowering it still fails
  to compile, naming the primitive, as in JAX.
- ``jit`` takes a pytree of ``None`` shardings (JAX's "unspecified"), as Flax nnx passes.
- ``inspect.signature(jitted, follow_wrapped=False)`` is the function's (Chex's fake_pmap reads it).
- ``jax.custom_derivatives`` names ``SymbolicZero`` (what a ``symbolic_zeros=True`` rule receives) and
  the two call primitives.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import custom_derivatives, lax
from minijax.compat._served import interpreters_mlir as mlir  # jax.interpreters.mlir under the alias
from minijax.extend.core import Primitive
from minijax.interpreters import ad, batching

# A library's own primitive: impl, abstract eval, jvp and batching rules, lowered as its impl (as Equinox's
# unvmap_any).
twice_plus_p = Primitive("test_twice_plus")
twice_plus_p.def_impl(lambda x, *, c: x * 2.0 + c)
mlir.register_lowering(twice_plus_p, mlir.lower_fun(lambda x, *, c: x * 2.0 + c, multiple_results=False))
twice_plus_p.def_abstract_eval(lambda aval, *, c: aval)
ad.defjvp(twice_plus_p, lambda t, x, *, c: t * 2.0)
batching.primitive_batchers[twice_plus_p] = lambda args, dims, *, c: (twice_plus_p.bind(args[0], c=c), dims[0])


def twice_plus(x: Any, c: float = 1.0) -> Any:
    return twice_plus_p.bind(x, c=c)


def test_an_impl_defined_primitive_runs_under_jit() -> None:
    x = np.arange(4.0, dtype=np.float32)
    np.testing.assert_array_equal(jax.jit(twice_plus)(x), x * 2 + 1)
    # The jaxpr the user sees keeps the primitive; only the backend's copy is expanded.
    assert "test_twice_plus" in str(jax.make_jaxpr(twice_plus)(x))
    np.testing.assert_array_equal(jax.jit(jax.vmap(lambda v: twice_plus(v, c=3.0)))(x[:, None]), x[:, None] * 2 + 3)
    np.testing.assert_array_equal(jax.jit(jax.grad(lambda v: jnp.sum(twice_plus(v))))(x), np.full(4, 2.0))


def test_a_primitive_without_a_lowering_does_not_compile() -> None:
    p = Primitive("test_no_lowering")
    p.def_impl(lambda x: x + 1.0)
    p.def_abstract_eval(lambda aval: aval)
    assert float(p.bind(np.float32(1.0))) == 2.0  # eagerly, through the impl
    with pytest.raises(NotImplementedError, match="test_no_lowering"):
        jax.jit(p.bind)(np.float32(1.0))


def test_an_impl_defined_primitive_runs_inside_control_flow_under_jit() -> None:
    x = np.float32(1.5)
    f = jax.jit(lambda p, x: lax.cond(p, lambda v: twice_plus(v), lambda v: v, x))
    assert float(f(True, x)) == 4.0 and float(f(False, x)) == 1.5
    g = jax.jit(lambda x: lax.fori_loop(0, 3, lambda i, v: twice_plus(v, c=0.0), x))
    assert float(g(x)) == 12.0


def test_jit_takes_a_pytree_of_none_shardings_as_unspecified() -> None:
    f = jax.jit(lambda x: (x + 1, {"a": x}), in_shardings=(None,), out_shardings=(None, {"a": None}))
    out = f(np.float32(1.0))
    assert float(out[0]) == 2.0 and float(out[1]["a"]) == 1.0
    # A tree of Nones is still a tree: it must be a prefix of the results' (JAX's ValueError).
    with pytest.raises(ValueError, match="out_shardings"):
        jax.jit(lambda x: x + 1, out_shardings=(None, {"a": None}))(np.float32(1.0))
    with pytest.raises(NotImplementedError, match=r"jit\(device=...\)"):
        jax.jit(lambda x: x, device=jax.devices()[0])


def test_a_jitted_functions_signature_is_the_functions() -> None:
    def foo(x: Any, y: int = 2) -> Any:
        return x

    assert str(inspect.signature(jax.jit(foo), follow_wrapped=False)) == str(inspect.signature(foo))


def test_symbolic_zero_is_what_a_symbolic_zeros_rule_receives() -> None:
    seen = []

    @jax.custom_jvp
    def f(x: Any, y: Any) -> Any:
        return x * y

    def f_jvp(primals: Any, tangents: Any) -> Any:
        x, y = primals
        tx, ty = tangents
        seen.extend(type(t) for t in tangents)
        zero_y = isinstance(ty, custom_derivatives.SymbolicZero)
        assert not zero_y or (ty.shape == np.shape(y) and ty.dtype == np.float32)
        return f(x, y), tx * y + (0.0 if zero_y else x * ty)

    f.defjvp(f_jvp, symbolic_zeros=True)
    assert float(jax.grad(f)(np.float32(3.0), np.float32(5.0))) == 5.0
    assert custom_derivatives.SymbolicZero in seen
    assert custom_derivatives.custom_jvp_call_p.name == "custom_jvp_call"
    assert custom_derivatives.custom_vjp_call_p.name == "custom_vjp_call"
    zeros = custom_derivatives.zero_from_primal({"a": np.ones(2, np.float32)}, symbolic_zeros=True)
    assert isinstance(zeros["a"], custom_derivatives.SymbolicZero) and zeros["a"].shape == (2,)
