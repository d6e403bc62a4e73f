"""Bad input that JAX refuses, refused the same way (issue 22, item 7).

1. ``jit``'s ``static_argnums`` / ``static_argnames`` (and ``donate_*``) naming
   arguments the function does not have: ValueError when ``jit`` is applied,
   except where JAX accepts any (``*args`` takes any number, ``**kwargs`` any
   name); ``checkpoint``'s and ``pmap``'s numbers checked at the call.
2. A collective over an axis name nothing binds: NameError, whatever
   transformation it runs under (pmap over another name, grad, nested vmaps),
   with a hint that names the ways minijax binds a name (vmap and pmap).
3. ``grad`` and the Jacobians return ``minijax.Array`` with JAX's dtype and
   weak type, also where the gradient is the seed passed straight through.
4. Python conversions of a traced value under ``grad``: ``bool``/``int``/
   ``index`` read a JVP tracer's concrete value (so ``if x > 0`` works, as in
   JAX), while ``float``/``complex``/``tolist``/NumPy conversions raise
   ConcretizationTypeError / TracerArrayConversionError as in JAX.

Every case here was checked against JAX 0.10.2; tests/test_bad_input_oracle.py
runs the same programs under real JAX and compares.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.errors import ConcretizationTypeError, TracerArrayConversionError, TracerBoolConversionError


def f2(x: Any, y: Any) -> Any:
    return x + y


def kwonly(x: Any, *, y: Any) -> Any:
    return x * y


def posonly(x: Any, /, y: Any) -> Any:
    return x + y


def varargs(*args: Any) -> Any:
    return args[0] * len(args)


def varkw(x: Any, **kw: Any) -> Any:
    return x * kw["n"]


# ---------------------------------------------------------------------------
# 1. static_argnums / static_argnames naming arguments the function lacks

# (function, jit keywords, start of JAX's message)
REFUSED_AT_JIT: dict[str, tuple[Callable[..., Any], dict[str, Any], str]] = {
    "argnum_past_end": (f2, {"static_argnums": 2}, "Jitted function has static_argnums=(2,), but only accepts 2 positional arguments."),
    "argnum_negative_past_start": (f2, {"static_argnums": -3}, "Jitted function has static_argnums=(-3,), but only accepts 2 positional arguments."),
    "argnums_one_bad": (lambda x: x, {"static_argnums": (0, 1)}, "Jitted function has static_argnums=(0, 1), but only accepts 1 positional arguments."),
    "argnum_of_keyword_only": (kwonly, {"static_argnums": 1}, "Jitted function has static_argnums=(1,), but only accepts 1 positional arguments."),
    "argnum_of_partial": (functools.partial(f2, 1.0), {"static_argnums": 1}, "Jitted function has static_argnums=(1,), but only accepts 1 positional arguments."),
    "unknown_argname": (f2, {"static_argnames": "z"}, "Jitted function has invalid argnames {'z'} in static_argnames. Function does not take these args."),
    "one_unknown_argname": (f2, {"static_argnames": ("x", "z")}, "Jitted function has invalid argnames {'z'} in static_argnames. Function does not take these args."),
    "positional_only_argname": (posonly, {"static_argnames": "x"}, "Jitted function has invalid argnames {'x'} in static_argnames. These are positional-only"),
    "donate_argnum_past_end": (f2, {"donate_argnums": 2}, "Jitted function has donate_argnums=(2,), but only accepts 2 positional arguments."),
    "unknown_donate_argname": (f2, {"donate_argnames": "z"}, "Jitted function has invalid argnames {'z'} in donate_argnames. Function does not take these args."),
    "static_and_donated": (f2, {"static_argnums": 0, "donate_argnums": 0}, "static_argnames and donate_argnames cannot intersect. Argument names {'x'}"),
}


@pytest.mark.parametrize("case", sorted(REFUSED_AT_JIT))
def test_jit_refuses_argnums_and_argnames_the_function_does_not_have(case: str) -> None:
    fun, kwargs, message = REFUSED_AT_JIT[case]
    # Refused when jit is applied, before any call could silently treat the argument as dynamic.
    with pytest.raises(ValueError) as info:
        jax.jit(fun, **kwargs)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"static_argnums": "x"}, "cannot be interpreted as an integer"),
        ({"static_argnums": ("x",)}, "cannot be interpreted as an integer"),
        ({"static_argnames": [0]}, "argument is not a string: 0"),
    ],
)
def test_jit_refuses_argnums_and_argnames_of_the_wrong_type(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        jax.jit(f2, **kwargs)


def test_jit_accepts_any_number_for_varargs_and_any_name_for_varkw() -> None:
    # *args takes any position: argument 3 is static (a Python int, usable in range()).
    g = jax.jit(lambda *args: args[0] * sum(range(args[3])), static_argnums=3)
    assert float(g(2.0, 0.0, 0.0, 4)) == 12.0
    assert float(jax.jit(varargs, static_argnums=-1)(2.0, 3)) == 4.0
    # **kwargs takes any name: n is static. (jit's cache belongs to the function,
    # shared with this test's other backend run: start from an empty one.)
    jax.clear_caches()
    h = jax.jit(varkw, static_argnames="n")
    assert float(h(2.0, n=3)) == 6.0
    assert len(h._cache) == 1
    h(2.0, n=4)
    assert len(h._cache) == 2  # a new static value, a new trace
    # Negative numbers in range count from the end, as in JAX.
    assert float(jax.jit(f2, static_argnums=-1)(1.0, 2.0)) == 3.0


def test_jit_of_a_function_without_a_signature_is_not_checked() -> None:
    # As in JAX: a builtin has no signature to check the numbers against.
    assert callable(jax.jit(max, static_argnums=5))


def test_checkpoint_refuses_static_argnums_past_the_arguments() -> None:
    f = jax.checkpoint(f2, static_argnums=2)
    with pytest.raises(ValueError, match=r"`static_argnums` argument to `jax.checkpoint` / `jax.remat` can only take integer values"):
        f(1.0, 2.0)
    with pytest.raises(ValueError, match=r"got \(-3,\), while `len\(args\)` = 2"):
        jax.checkpoint(f2, static_argnums=-3)(1.0, 2.0)
    assert float(jax.grad(jax.checkpoint(f2, static_argnums=-1))(1.0, 2.0)) == 1.0


def test_pmap_refuses_static_broadcasted_argnums_past_the_arguments() -> None:
    f = jax.pmap(f2, static_broadcasted_argnums=2)
    with pytest.raises(ValueError, match=r"pmapped function has static_broadcasted_argnums=\(2,\) but was called with only 2 positional arguments\. All static broadcasted arguments must be passed positionally\."):
        f(jnp.ones(1), jnp.ones(1))
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        jax.pmap(f2, static_broadcasted_argnums="y")


# ---------------------------------------------------------------------------
# 2. collectives over an unbound axis name

COLLECTIVES: dict[str, Callable[[Any], Any]] = {
    "psum": lambda x: lax.psum(x, "i"),
    "pmean": lambda x: lax.pmean(x, "i"),
    "pmax": lambda x: lax.pmax(x, "i"),
    "pmin": lambda x: lax.pmin(x, "i"),
    "all_gather": lambda x: lax.all_gather(x, "i"),
    "psum_scatter": lambda x: lax.psum_scatter(x, "i"),
    "axis_index": lambda x: x + lax.axis_index("i"),
    "axis_size": lambda x: x * lax.axis_size("i"),
}

WAYS: dict[str, Callable[[Callable[[Any], Any]], Callable[[Any], Any]]] = {
    "eager": lambda f: f,
    "jit": lambda f: jax.jit(f),
    "vmap_other_name": lambda f: jax.vmap(f, axis_name="j"),
    "pmap_other_name": lambda f: jax.pmap(f, axis_name="j"),
    "jit_of_vmap_other_name": lambda f: jax.jit(jax.vmap(f, axis_name="j")),
    "nested_vmaps_other_names": lambda f: (lambda x: jax.vmap(jax.vmap(f, axis_name="j"), axis_name="k")(x[None])),
    "grad": lambda f: jax.grad(lambda x: jnp.sum(f(x))),
}


@pytest.mark.parametrize("way", sorted(WAYS))
@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_an_unbound_axis_name_raises_name_error_with_a_hint_naming_vmap_and_pmap(name: str, way: str) -> None:
    f = WAYS[way](COLLECTIVES[name])
    with pytest.raises(NameError) as info:
        f(np.ones(1, np.float32))
    message = str(info.value)
    assert "unbound axis name: i" in message
    # minijax binds names with vmap and with pmap; the hint names both.
    assert "minijax.vmap(f, axis_name='i')" in message and "minijax.pmap(f, axis_name='i')" in message


def test_a_bound_name_still_works_under_pmap_and_vmap() -> None:
    x = jnp.arange(1.0, 2.0)
    assert np.allclose(jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(x), [1.0])
    assert np.allclose(jax.vmap(lambda v: lax.psum(v, "i"), axis_name="i")(jnp.arange(3.0)), [3.0, 3.0, 3.0])


# ---------------------------------------------------------------------------
# 3. grad returns Arrays, with JAX's dtype and weak type


@jax.custom_vjp
def _passthrough_vjp(x: Any) -> Any:
    return x


_passthrough_vjp.defvjp(lambda x: (x, None), lambda _, g: (g,))


@jax.custom_jvp
def _passthrough_jvp(x: Any) -> Any:
    return x


_passthrough_jvp.defjvp(lambda p, t: (p[0], t[0]))


def _count_up(x: Any) -> Any:
    while x < 3.0:  # concrete under grad: Python control flow on the primal
        x = x + 1.0
    return x


# name -> (thunk, expected leaves as (dtype, weak_type, value))
GRADS: dict[str, tuple[Callable[[], Any], list[tuple[str, bool, Any]]]] = {
    "identity": (lambda: jax.grad(lambda x: x)(2.0), [("float32", True, 1.0)]),
    "identity_np_float32": (lambda: jax.grad(lambda x: x)(np.float32(2.0)), [("float32", False, 1.0)]),
    "identity_np_float64": (lambda: jax.grad(lambda x: x)(np.float64(2.0)), [("float32", False, 1.0)]),
    "square_np_float64": (lambda: jax.grad(lambda x: x * x)(np.float64(2.0)), [("float32", False, 4.0)]),
    "constant_np_float64": (lambda: jax.grad(lambda x: 1.0)(np.float64(2.0)), [("float32", False, 0.0)]),
    "identity_float16": (lambda: jax.grad(lambda x: x)(jnp.float16(2.0)), [("float16", False, 1.0)]),
    "sum_of_two": (lambda: jax.grad(lambda x, y: x + y, argnums=(0, 1))(2.0, 3.0), [("float32", True, 1.0)] * 2),
    "dict_entry": (lambda: jax.grad(lambda d: d["a"])({"a": 1.0, "b": 2.0}), [("float32", True, 1.0), ("float32", True, 0.0)]),
    "value_and_grad_identity": (lambda: jax.value_and_grad(lambda x: x)(2.0)[1], [("float32", True, 1.0)]),
    "while_loop_in_python": (lambda: jax.grad(_count_up)(2.0), [("float32", True, 1.0)]),
    "custom_vjp_passthrough": (lambda: jax.grad(_passthrough_vjp)(2.0), [("float32", True, 1.0)]),
    "custom_jvp_passthrough": (lambda: jax.grad(_passthrough_jvp)(2.0), [("float32", True, 1.0)]),
    "int_output_cast": (lambda: jax.grad(lambda x: x, allow_int=True)(1.0), [("float32", True, 1.0)]),
    "jacfwd_identity": (lambda: jax.jacfwd(lambda x: x)(2.0), [("float32", True, 1.0)]),
    "jacrev_identity": (lambda: jax.jacrev(lambda x: x)(2.0), [("float32", True, 1.0)]),
    "hessian_weak": (lambda: jax.hessian(lambda x: x * x)(2.0), [("float32", True, 2.0)]),
    "hessian_linear": (lambda: jax.hessian(lambda x: x)(2.0), [("float32", True, 0.0)]),
    "hessian_strong": (lambda: jax.hessian(lambda x: x * x)(jnp.float32(2.0)), [("float32", False, 2.0)]),
    # jacfwd takes each block's type from the output, jacrev from the input.
    "jacfwd_to_float16": (lambda: jax.jacfwd(lambda x: x.astype(jnp.float16))(jnp.float32(2.0)), [("float16", False, 1.0)]),
    "jacrev_to_float16": (lambda: jax.jacrev(lambda x: x.astype(jnp.float16))(jnp.float32(2.0)), [("float32", False, 1.0)]),
    "jacfwd_weak_output": (lambda: jax.jacfwd(lambda x: x * jnp.float32(2.0))(2.0), [("float32", False, 2.0)]),
    "jacrev_weak_input": (lambda: jax.jacrev(lambda x: x * jnp.float32(2.0))(2.0), [("float32", True, 2.0)]),
    "jacfwd_two_args": (lambda: jax.jacfwd(lambda x, y: x * y, argnums=(0, 1))(2.0, jnp.float32(3.0)), [("float32", False, 3.0), ("float32", False, 2.0)]),
    "jacrev_two_args": (lambda: jax.jacrev(lambda x, y: x * y, argnums=(0, 1))(2.0, jnp.float32(3.0)), [("float32", True, 3.0), ("float32", False, 2.0)]),
    "constant": (lambda: jax.grad(lambda x: 1.0)(2.0), [("float32", True, 0.0)]),
    # The derivative of an integer output is zeros of its type; of an integer input (allow_int), of the input's.
    "jacfwd_int_output": (lambda: jax.jacfwd(lambda x: x.astype(jnp.int32))(jnp.zeros(2)), [("int32", False, [[0, 0], [0, 0]])]),
    "jacrev_int_input": (lambda: jax.jacrev(lambda x: x * 2.0, allow_int=True)(jnp.zeros(2, jnp.int32)), [("int32", False, [[0, 0], [0, 0]])]),
    "vmap_of_grad_identity": (lambda: jax.vmap(jax.grad(lambda x: x))(jnp.ones(2)), [("float32", False, [1.0, 1.0])]),
}


@pytest.mark.parametrize("case", sorted(GRADS))
def test_gradients_are_arrays_with_jax_dtype_and_weak_type(case: str) -> None:
    thunk, expected = GRADS[case]
    leaves = jax.tree_util.tree_leaves(thunk())
    assert len(leaves) == len(expected)
    for leaf, (dtype, weak, value) in zip(leaves, expected):
        assert isinstance(leaf, jax.Array), f"{case}: a {type(leaf).__name__}, not an Array"
        assert (str(leaf.dtype), leaf.weak_type) == (dtype, weak), case
        np.testing.assert_array_equal(np.asarray(leaf), np.asarray(value, dtype))


def test_jacrev_refuses_integer_outputs_as_jax_does() -> None:
    with pytest.raises(TypeError, match=r"jacrev requires real-valued outputs .* but got int32"):
        jax.jacrev(lambda x: x.astype(jnp.int32))(jnp.zeros(3))


def test_numpy_scalars_are_strongly_typed() -> None:
    # np.float64 subclasses float, but it has a dtype: never weak (as in JAX).
    assert not jnp.asarray(np.float64(2.0)).weak_type
    assert not (jnp.ones(()) + np.float64(2.0)).weak_type
    assert not jax.jit(lambda x: x)(np.float64(1.0)).weak_type
    assert jnp.asarray(2.0).weak_type


# ---------------------------------------------------------------------------
# 4. Python conversions of traced values under grad

# Differentiation modes that trace with JVP tracers of concrete primals (no jit).
MODES: dict[str, Callable[[Callable[[Any], Any]], Any]] = {
    "grad": lambda f: jax.grad(f)(2.0),
    "jvp": lambda f: jax.jvp(f, (2.0,), (1.0,)),
    "vjp": lambda f: jax.vjp(f, 2.0)[0],
    "jacfwd": lambda f: jax.jacfwd(f)(2.0),
    "linearize": lambda f: jax.linearize(f, 2.0)[0],
}

# Conversions JAX refuses on any tracer, concrete primal or not: their result
# would be a constant cut off from the derivative. name -> (function, error class, message part)
REFUSED: dict[str, tuple[Callable[[Any], Any], type[Exception], str]] = {
    "float": (lambda x: x * float(x), ConcretizationTypeError, "The problem arose with the `float` function"),
    "complex": (lambda x: x * complex(x).real, ConcretizationTypeError, "The problem arose with the `complex` function"),
    "math_sin": (lambda x: x * math.sin(x), ConcretizationTypeError, "The problem arose with the `float` function"),
    "tolist": (lambda x: x * x.tolist(), ConcretizationTypeError, "The tolist() method was called"),
    "np_asarray": (lambda x: x * np.asarray(x), TracerArrayConversionError, "The numpy.ndarray conversion method __array__() was called"),
    "np_sin": (lambda x: np.sin(x), TracerArrayConversionError, "The numpy.ndarray conversion method __array__() was called"),
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_float_complex_and_numpy_conversions_of_tracers_raise_under_grad(case: str, mode: str) -> None:
    fun, error, message = REFUSED[case]
    with pytest.raises(error, match=re.escape(message)):
        MODES[mode](fun)


def _if(x: Any) -> Any:
    return x * 2.0 if x > 0 else -x


# Conversions JAX allows on a JVP tracer of a concrete primal: Python control
# flow and integer conversions. name -> (function, gradient at 2.0)
ALLOWED: dict[str, tuple[Callable[[Any], Any], float]] = {
    "if": (_if, 2.0),
    "while": (_count_up, 1.0),
    "int": (lambda x: x * int(x), 2.0),
    "bool": (lambda x: x * bool(x), 1.0),
    "not": (lambda x: x if not x else -x, -1.0),
    "item": (lambda x: x * x.item(), 2.0),
    "round": (lambda x: x * round(x), 2.0),
    "range_of_int": (lambda x: x * len(range(int(x))), 2.0),
    "list_index_by_int": (lambda x: x * [1.0, 5.0, 7.0][int(x)], 7.0),
}


@pytest.mark.parametrize("case", sorted(ALLOWED))
def test_control_flow_and_int_conversions_work_under_grad_as_in_jax(case: str) -> None:
    fun, want = ALLOWED[case]
    g = jax.grad(fun)(2.0)
    assert isinstance(g, jax.Array) and g.weak_type and str(g.dtype) == "float32"
    assert float(g) == want


@pytest.mark.parametrize(
    ("fun", "error", "message"),
    [
        (lambda x: bool(x), ValueError, "The truth value of an array with more than one element is ambiguous"),
        (lambda x: bool(x[:0]), ValueError, "The truth value of an empty array is ambiguous"),
        (lambda x: int(x), TypeError, "Only scalar arrays can be converted to Python scalars; got arr.ndim=1"),
        (lambda x: float(x), TypeError, "Only scalar arrays can be converted to Python scalars; got arr.ndim=1"),
        (lambda x: bool(x[0]), TracerBoolConversionError, "Attempted boolean conversion of traced array with shape float32[]"),
        (lambda x: float(x[0]), ConcretizationTypeError, "The problem arose with the `float` function"),
    ],
)
def test_conversions_of_abstract_tracers_check_the_shape_first_as_in_jax(fun: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        jax.jit(fun)(jnp.ones(3))
