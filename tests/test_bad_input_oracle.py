"""Bad input (issue 22, item 7) against real JAX 0.10.2 (the oracle).

Each program is written once as a function of a library triple
``(jax, jnp, lax)`` and run with JAX's and with minijax's. Where JAX raises,
minijax must raise the same exception class (and, for jit's argument checks,
JAX's message must start minijax's, which then adds its hint); where JAX
returns, minijax must return the same values with the same types: a gradient
is an Array in both, of the same dtype and weak type.

The programs: ``static_argnums``/``static_argnames``/``donate_*`` naming
arguments the function lacks (``jit``, ``checkpoint``, ``pmap``); collectives
over an unbound axis name under each transformation; gradients that are the
seed passed straight through, and Jacobian blocks' types; Python conversions
of traced values under grad, jvp, vjp and jacfwd.

Run with the oracle environment (README.md, "More"):
    .venv-oracle/bin/python -m pytest tests/test_bad_input_oracle.py
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402
import minijax.numpy as mnp  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

SIDES = {"jax": (jax, jax.numpy, jax.lax), "minijax": (minijax, mnp, minijax.lax)}

# A program takes (jax, jnp, lax) and returns what it computes (or raises).
Program = Callable[[Any, Any, Any], Any]


def _outcome(side: str, program: Program) -> tuple[str, Any]:
    """("raised", the exception) or ("returned", the value)."""
    try:
        return "returned", program(*SIDES[side])
    except Exception as e:  # the point is to compare which exception
        return "raised", e


def _f2(x: Any, y: Any) -> Any:
    return x + y


def _kwonly(x: Any, *, y: Any) -> Any:
    return x * y


def _posonly(x: Any, /, y: Any) -> Any:
    return x + y


def _varkw(x: Any, **kw: Any) -> Any:
    return x * kw["n"]


# ---------------------------------------------------------------------------
# 1. argument numbers and names

ARGS: dict[str, Program] = {
    "jit_argnum_past_end": lambda jax, jnp, lax: jax.jit(_f2, static_argnums=2),
    "jit_argnum_negative_past_start": lambda jax, jnp, lax: jax.jit(_f2, static_argnums=-3),
    "jit_argnums_one_bad": lambda jax, jnp, lax: jax.jit(lambda x: x, static_argnums=(0, 1)),
    "jit_argnum_of_keyword_only": lambda jax, jnp, lax: jax.jit(_kwonly, static_argnums=1),
    "jit_argnum_of_partial": lambda jax, jnp, lax: jax.jit(functools.partial(_f2, 1.0), static_argnums=1),
    "jit_unknown_argname": lambda jax, jnp, lax: jax.jit(_f2, static_argnames="z"),
    "jit_one_unknown_argname": lambda jax, jnp, lax: jax.jit(_f2, static_argnames=("x", "z")),
    "jit_positional_only_argname": lambda jax, jnp, lax: jax.jit(_posonly, static_argnames="x"),
    "jit_donate_argnum_past_end": lambda jax, jnp, lax: jax.jit(_f2, donate_argnums=2),
    "jit_static_and_donated": lambda jax, jnp, lax: jax.jit(_f2, static_argnums=0, donate_argnums=0),
    "jit_argnums_string": lambda jax, jnp, lax: jax.jit(_f2, static_argnums="x"),
    "jit_argnames_not_strings": lambda jax, jnp, lax: jax.jit(_f2, static_argnames=[0]),
    "jit_varargs_any_number": lambda jax, jnp, lax: jax.jit(lambda *a: a[0] * sum(range(a[3])), static_argnums=3)(2.0, 0.0, 0.0, 4),
    "jit_varkw_any_name": lambda jax, jnp, lax: jax.jit(_varkw, static_argnames="n")(2.0, n=3),
    "jit_negative_in_range": lambda jax, jnp, lax: jax.jit(_f2, static_argnums=-1)(1.0, 2.0),
    "checkpoint_argnum_past_end": lambda jax, jnp, lax: jax.checkpoint(_f2, static_argnums=2)(1.0, 2.0),
    "checkpoint_negative_in_range": lambda jax, jnp, lax: jax.grad(jax.checkpoint(_f2, static_argnums=-1))(1.0, 2.0),
    "jacrev_int_output": lambda jax, jnp, lax: jax.jacrev(lambda x: x.astype(jnp.int32))(jnp.zeros(3)),
    "pmap_argnum_past_end": lambda jax, jnp, lax: jax.pmap(_f2, static_broadcasted_argnums=2)(jnp.ones(1), jnp.ones(1)),
}


@pytest.mark.parametrize("case", sorted(ARGS))
def test_argument_numbers_and_names_are_checked_as_in_jax(case: str) -> None:
    (want_kind, want), (got_kind, got) = _outcome("jax", ARGS[case]), _outcome("minijax", ARGS[case])
    assert got_kind == want_kind, (want, got)
    if want_kind == "raised":
        assert type(got).__name__ == type(want).__name__, (want, got)
        # JAX's sentence first; minijax may add how to fix it.
        assert str(got).startswith(str(want)), (str(want), str(got))
    elif not callable(want):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


# ---------------------------------------------------------------------------
# 2. unbound axis names

COLLECTIVES: dict[str, Callable[[Any, Any], Any]] = {
    "psum": lambda lax, x: lax.psum(x, "i"),
    "pmean": lambda lax, x: lax.pmean(x, "i"),
    "pmax": lambda lax, x: lax.pmax(x, "i"),
    "pmin": lambda lax, x: lax.pmin(x, "i"),
    "all_gather": lambda lax, x: lax.all_gather(x, "i"),
    "psum_scatter": lambda lax, x: lax.psum_scatter(x, "i"),
    "axis_index": lambda lax, x: x + lax.axis_index("i"),
    "axis_size": lambda lax, x: x * lax.axis_size("i"),
}

WAYS: dict[str, Callable[[Any, Any, Callable[[Any], Any]], Callable[[Any], Any]]] = {
    "eager": lambda jax, jnp, f: f,
    "jit": lambda jax, jnp, f: jax.jit(f),
    "vmap_other_name": lambda jax, jnp, f: jax.vmap(f, axis_name="j"),
    "pmap_other_name": lambda jax, jnp, f: jax.pmap(f, axis_name="j"),
    "jit_of_vmap_other_name": lambda jax, jnp, f: jax.jit(jax.vmap(f, axis_name="j")),
    "nested_vmaps_other_names": lambda jax, jnp, f: (lambda x: jax.vmap(jax.vmap(f, axis_name="j"), axis_name="k")(x[None])),
    "grad": lambda jax, jnp, f: jax.grad(lambda x: jnp.sum(f(x))),
}

# JAX differentiates before it looks the name up, and pmax/pmin have no
# derivative: it raises NotImplementedError where minijax names the unbound
# axis (NameError). Both refuse the program.
DIFFERENT_FIRST_COMPLAINT = {("pmax", "grad"), ("pmin", "grad")}


@pytest.mark.parametrize("way", sorted(WAYS))
@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_unbound_axis_names_raise_name_error_as_in_jax(name: str, way: str) -> None:
    def program(lib: Any, jnp: Any, lax: Any) -> Any:
        return WAYS[way](lib, jnp, lambda x: COLLECTIVES[name](lax, x))(np.ones(1, np.float32))

    (want_kind, want), (got_kind, got) = _outcome("jax", program), _outcome("minijax", program)
    assert want_kind == got_kind == "raised"
    assert type(got) is NameError
    # The fix minijax suggests must exist in minijax: vmap or pmap first (JAX suggests only shard_map).
    assert "minijax.pmap(f, axis_name='i')" in str(got) and "shard_map`" not in str(got)
    if (name, way) in DIFFERENT_FIRST_COMPLAINT:
        assert type(want) is NotImplementedError
    else:
        assert type(want) is NameError
        # JAX's words up to its fix, then minijax's own (vmap, pmap, or shard_map over a mesh).
        assert str(got).split(". To fix this")[0] == str(want).split(". To fix this")[0]


# ---------------------------------------------------------------------------
# 3. gradients are Arrays of JAX's type


def _count_up(x: Any) -> Any:
    while x < 3.0:
        x = x + 1.0
    return x


def _passthrough_vjp(jax: Any) -> Any:
    @jax.custom_vjp
    def f(x: Any) -> Any:
        return x

    f.defvjp(lambda x: (x, None), lambda _, g: (g,))
    return f


def _passthrough_jvp(jax: Any) -> Any:
    @jax.custom_jvp
    def f(x: Any) -> Any:
        return x

    f.defjvp(lambda p, t: (p[0], t[0]))
    return f


GRADS: dict[str, Program] = {
    "identity": lambda jax, jnp, lax: jax.grad(lambda x: x)(2.0),
    "identity_np_float32": lambda jax, jnp, lax: jax.grad(lambda x: x)(np.float32(2.0)),
    "identity_np_float64": lambda jax, jnp, lax: jax.grad(lambda x: x)(np.float64(2.0)),
    "square_np_float64": lambda jax, jnp, lax: jax.grad(lambda x: x * x)(np.float64(2.0)),
    "constant_np_float64": lambda jax, jnp, lax: jax.grad(lambda x: 1.0)(np.float64(2.0)),
    "identity_float16": lambda jax, jnp, lax: jax.grad(lambda x: x)(jnp.float16(2.0)),
    "sum_of_two": lambda jax, jnp, lax: jax.grad(lambda x, y: x + y, argnums=(0, 1))(2.0, 3.0),
    "dict_entry": lambda jax, jnp, lax: jax.grad(lambda d: d["a"])({"a": 1.0, "b": 2.0}),
    "while_loop_in_python": lambda jax, jnp, lax: jax.grad(_count_up)(2.0),
    "custom_vjp_passthrough": lambda jax, jnp, lax: jax.grad(_passthrough_vjp(jax))(2.0),
    "custom_jvp_passthrough": lambda jax, jnp, lax: jax.grad(_passthrough_jvp(jax))(2.0),
    "int_output_cast": lambda jax, jnp, lax: jax.grad(lambda x: x, allow_int=True)(1.0),
    "jacfwd_identity": lambda jax, jnp, lax: jax.jacfwd(lambda x: x)(2.0),
    "jacrev_identity": lambda jax, jnp, lax: jax.jacrev(lambda x: x)(2.0),
    "hessian_weak": lambda jax, jnp, lax: jax.hessian(lambda x: x * x)(2.0),
    "hessian_linear": lambda jax, jnp, lax: jax.hessian(lambda x: x)(2.0),
    "hessian_vector": lambda jax, jnp, lax: jax.hessian(lambda x: (x * x).sum())(jnp.ones(2)),
    "jacfwd_to_float16": lambda jax, jnp, lax: jax.jacfwd(lambda x: x.astype(jnp.float16))(jnp.float32(2.0)),
    "jacrev_to_float16": lambda jax, jnp, lax: jax.jacrev(lambda x: x.astype(jnp.float16))(jnp.float32(2.0)),
    "jacfwd_weak_output": lambda jax, jnp, lax: jax.jacfwd(lambda x: x * jnp.float32(2.0))(2.0),
    "jacrev_weak_input": lambda jax, jnp, lax: jax.jacrev(lambda x: x * jnp.float32(2.0))(2.0),
    "jacfwd_two_args": lambda jax, jnp, lax: jax.jacfwd(lambda x, y: x * y, argnums=(0, 1))(2.0, jnp.float32(3.0)),
    "jacrev_two_args": lambda jax, jnp, lax: jax.jacrev(lambda x, y: x * y, argnums=(0, 1))(2.0, jnp.float32(3.0)),
    "constant": lambda jax, jnp, lax: jax.grad(lambda x: 1.0)(2.0),
    "vmap_of_grad_identity": lambda jax, jnp, lax: jax.vmap(jax.grad(lambda x: x))(jnp.ones(2)),
    "numpy_float64_asarray": lambda jax, jnp, lax: jnp.asarray(np.float64(2.0)),
    "jacfwd_int_output": lambda jax, jnp, lax: jax.jacfwd(lambda x: x.astype(jnp.int32))(jnp.zeros(2)),
    "jacrev_int_input": lambda jax, jnp, lax: jax.jacrev(lambda x: x * 2.0, allow_int=True)(jnp.zeros(2, jnp.int32)),
}


def _typed(lib: Any, x: Any) -> tuple[bool, str, bool]:
    return isinstance(x, lib.Array), str(x.dtype), bool(getattr(x, "weak_type", False))


@pytest.mark.parametrize("case", sorted(GRADS))
def test_gradients_are_arrays_of_the_type_jax_gives(case: str) -> None:
    (want_kind, want), (got_kind, got) = _outcome("jax", GRADS[case]), _outcome("minijax", GRADS[case])
    assert want_kind == got_kind == "returned", (want, got)
    want_leaves, got_leaves = jax.tree_util.tree_leaves(want), minijax.tree_util.tree_leaves(got)
    assert len(want_leaves) == len(got_leaves)
    for w, g in zip(want_leaves, got_leaves):
        assert _typed(minijax, g) == _typed(jax, w)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


# ---------------------------------------------------------------------------
# 4. Python conversions of traced values under differentiation


def _if(x: Any) -> Any:
    return x * 2.0 if x > 0 else -x


CONVERSIONS: dict[str, Callable[[Any, Any], Any]] = {
    "if": lambda np_, x: _if(x),
    "while": lambda np_, x: _count_up(x),
    "int": lambda np_, x: x * int(x),
    "bool": lambda np_, x: x * bool(x),
    "not": lambda np_, x: x if not x else -x,
    "item": lambda np_, x: x * x.item(),
    "round": lambda np_, x: x * round(x),
    "range_of_int": lambda np_, x: x * len(range(int(x))),
    "list_index_by_int": lambda np_, x: x * [1.0, 5.0, 7.0][int(x)],
    "float": lambda np_, x: x * float(x),
    "complex": lambda np_, x: x * complex(x).real,
    "math_sin": lambda np_, x: x * math.sin(x),
    "tolist": lambda np_, x: x * x.tolist(),
    "np_asarray": lambda np_, x: x * np.asarray(x),
    "np_sin": lambda np_, x: np.sin(x),
    "range_of_float": lambda np_, x: x * len(range(x)),
}

MODES: dict[str, Callable[[Any, Callable[[Any], Any]], Any]] = {
    "grad": lambda jax, f: jax.grad(f)(2.0),
    "jvp": lambda jax, f: jax.jvp(f, (2.0,), (1.0,))[0],
    "vjp": lambda jax, f: jax.vjp(f, 2.0)[0],
    "jacfwd": lambda jax, f: jax.jacfwd(f)(2.0),
    "jit": lambda jax, f: jax.jit(f)(2.0),
    "vmap": lambda jax, f: jax.vmap(f)(np.full(2, 2.0, np.float32)),
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("case", sorted(CONVERSIONS))
def test_conversions_of_traced_values_raise_or_compute_as_in_jax(case: str, mode: str) -> None:
    def program(lib: Any, jnp: Any, lax: Any) -> Any:
        return MODES[mode](lib, lambda x: CONVERSIONS[case](np, x))

    (want_kind, want), (got_kind, got) = _outcome("jax", program), _outcome("minijax", program)
    assert got_kind == want_kind, (want, got)
    if want_kind == "raised":
        assert type(got).__name__ == type(want).__name__, (want, got)
        assert [c.__name__ for c in type(got).__mro__ if c.__module__.startswith("minijax")] == [
            c.__name__ for c in type(want).__mro__ if c.__module__.startswith("jax") and not c.__name__.startswith("_")
        ]
    else:
        np.testing.assert_allclose(np.asarray(got), np.asarray(want))
