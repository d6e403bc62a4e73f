"""Collectives against real JAX 0.10.2 (the oracle).

The same program, written once against ``(jax, jnp, lax)``, runs under JAX and
under minijax: the printed jaxprs must be identical (vmapped programs, grad
inside and outside the vmap, named equations traced with an axis
environment), and so must the values, dtypes and weak types; unbound names
raise NameError in both. Run where JAX is installed:
    .venv-oracle/bin/python -m pytest tests/test_collectives_oracle.py
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402
import minijax.numpy as mnp  # noqa: E402
from minijax.interpreters import batching  # noqa: E402
from minijax.lax import parallel  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

# minijax's lax with the collectives in it (whether or not minijax.lax re-exports them yet).
mlax = types.SimpleNamespace(**{n: getattr(minijax.lax, n) for n in dir(minijax.lax) if not n.startswith("_")})
for _name in parallel.__all__:
    setattr(mlax, _name, getattr(parallel, _name))

SIDES = {"jax": (jax, jax.numpy, jax.lax), "minijax": (minijax, mnp, mlax)}

Program = Callable[[Any, Any, Any], Callable[..., Any]]


def _softmax(jnp: Any, lax: Any) -> Callable[[Any], Any]:
    def softmax(x: Any) -> Any:
        e = jnp.exp(x - lax.pmax(lax.stop_gradient(x), "i"))
        return e / lax.psum(e, "i")

    return softmax


# name -> (program building the function from (jax, jnp, lax), argument shapes/dtypes)
PROGRAMS: dict[str, tuple[Program, list[tuple[tuple[int, ...], str]]]] = {
    "normalise": (lambda jax, jnp, lax: jax.vmap(lambda x: x / lax.psum(x, "i"), axis_name="i"), [((3, 2), "float32")]),
    "center": (lambda jax, jnp, lax: jax.vmap(lambda x: x - lax.pmean(x, "i"), in_axes=1, axis_name="i"), [((2, 3), "float32")]),
    "center_int": (lambda jax, jnp, lax: jax.vmap(lambda x: x - lax.pmean(x, "i"), axis_name="i"), [((3,), "int32")]),
    "shift_by_max": (lambda jax, jnp, lax: jax.vmap(lambda x: x - lax.pmax(x, "i") + lax.pmin(x, "i"), axis_name="i"), [((4, 2), "float32")]),
    "psum_positional": (lambda jax, jnp, lax: jax.vmap(lambda x: x * lax.psum(x, ("i", 1)), axis_name="i", out_axes=1), [((3, 2, 2), "float32")]),
    "psum_unbatched": (lambda jax, jnp, lax: jax.vmap(lambda x, y: x * lax.psum(y, "i"), in_axes=(0, None), axis_name="i"), [((3, 2), "float32"), ((2,), "float32")]),
    "psum_bool": (lambda jax, jnp, lax: jax.vmap(lambda x, b: x * lax.psum(b, "i"), axis_name="i"), [((3,), "int32"), ((3,), "bool")]),
    "psum_tuple": (lambda jax, jnp, lax: jax.vmap(lambda x, y: lax.psum((x, y), "i")[0] + y, in_axes=(0, None), axis_name="i"), [((3, 2), "float32"), ((2,), "float32")]),
    "axis_index": (lambda jax, jnp, lax: jax.vmap(lambda x: x + lax.axis_index("i"), axis_name="i"), [((3, 2, 2), "float32")]),
    "axis_index_two_names": (
        lambda jax, jnp, lax: jax.vmap(jax.vmap(lambda x: x * lax.axis_index(("i", "j")), axis_name="j"), axis_name="i"),
        [((2, 3), "int32")],
    ),
    "all_gather_dot": (lambda jax, jnp, lax: jax.vmap(lambda x: lax.all_gather(x, "i") @ x, axis_name="i"), [((3, 2), "float32")]),
    "all_gather_tiled": (lambda jax, jnp, lax: jax.vmap(lambda x: lax.all_gather(x, "i", axis=1, tiled=True), axis_name="i"), [((3, 2, 2), "float32")]),
    "all_gather_in_axes": (lambda jax, jnp, lax: jax.vmap(lambda x: lax.all_gather(x, "i", axis=-1).sum(-1) * x, in_axes=1, axis_name="i"), [((2, 3, 4), "float32")]),
    "psum_scatter": (lambda jax, jnp, lax: jax.vmap(lambda x: lax.psum_scatter(x, "i"), axis_name="i"), [((3, 3, 2), "float32")]),
    "psum_scatter_tiled": (
        lambda jax, jnp, lax: jax.vmap(lambda x: lax.psum_scatter(x, "i", scatter_dimension=1, tiled=True), axis_name="i"),
        [((3, 2, 6), "float32")],
    ),
    "nested_outer_name": (lambda jax, jnp, lax: jax.vmap(jax.vmap(lambda x: x / lax.psum(x, "i"), axis_name="j"), axis_name="i"), [((2, 3, 4), "float32")]),
    "nested_both_names": (
        lambda jax, jnp, lax: jax.vmap(jax.vmap(lambda x: x - lax.psum(x, ("j", "i")), in_axes=1, axis_name="j"), in_axes=1, axis_name="i"),
        [((4, 2, 3), "float32")],
    ),
    "nested_gather_outer": (lambda jax, jnp, lax: jax.vmap(jax.vmap(lambda x: lax.all_gather(x, "i", tiled=True), in_axes=1, axis_name="j"), axis_name="i"), [((2, 4, 3), "float32")]),
    "vmap_grad_psum": (lambda jax, jnp, lax: jax.vmap(jax.grad(lambda x: lax.psum(x, "i").sum()), axis_name="i"), [((3, 2), "float32")]),
    "grad_vmap_psum": (lambda jax, jnp, lax: jax.grad(lambda x: jax.vmap(lambda x: lax.psum(x, "i"), axis_name="i")(x).sum()), [((3, 2), "float32")]),
    "vmap_grad_all_gather": (lambda jax, jnp, lax: jax.vmap(jax.grad(lambda x: (lax.all_gather(x, "i") ** 2).sum()), axis_name="i"), [((3, 2), "float32")]),
    "vmap_grad_all_gather_tiled": (
        lambda jax, jnp, lax: jax.vmap(jax.grad(lambda x: (lax.all_gather(x, "i", tiled=True) ** 2).sum()), axis_name="i"),
        [((3, 2), "float32")],
    ),
    "vmap_grad_softmax": (
        lambda jax, jnp, lax: jax.vmap(jax.grad(lambda x: jnp.sum(_softmax(jnp, lax)(x) * jnp.arange(2.0))), axis_name="i"),
        [((3, 2), "float32")],
    ),
    "grad_vmap_softmax": (
        lambda jax, jnp, lax: jax.grad(lambda x: jnp.sum(jax.vmap(_softmax(jnp, lax), axis_name="i")(x) * jnp.arange(2.0))),
        [((3, 2), "float32")],
    ),
    "jvp_vmap": (
        lambda jax, jnp, lax: lambda x: jax.jvp(jax.vmap(lambda x: lax.psum(jnp.sin(x), "i"), axis_name="i"), (x,), (x,)),
        [((3, 2), "float32")],
    ),
    "vmap_jvp": (
        lambda jax, jnp, lax: jax.vmap(lambda x: jax.jvp(lambda x: x * lax.psum(jnp.sin(x), "i"), (x,), (x,)), axis_name="i"),
        [((3, 2), "float32")],
    ),
    "jit_vmap": (lambda jax, jnp, lax: jax.jit(jax.vmap(lambda x: x - lax.pmean(x, "i"), axis_name="i")), [((3, 2), "float32")]),
    "positional_only": (lambda jax, jnp, lax: lambda x: lax.psum(x, (1,)) + lax.pmax(x, (1,)), [((3, 2), "float32")]),
}


def _args(shapes: list[tuple[tuple[int, ...], str]]) -> list[np.ndarray[Any, Any]]:
    rng = np.random.default_rng(0)
    return [np.asarray(rng.normal(size=s) > 0 if d == "bool" else rng.integers(-3, 4, size=s) if d.startswith("int") else rng.normal(size=s), d) for s, d in shapes]


def _text(x: Any) -> str:
    return re.sub(r"0x[0-9a-fA-F]+", "0x...", str(x))


def _text_ignoring_int64(x: Any) -> str:
    """The printed jaxpr with JAX's ``np.int64(1)`` spelled ``1``, whitespace collapsed.

    JAX prints some params (the broadcast vmap adds for an unbatched output,
    reduce_sum's batched axes) with NumPy integers, which also changes where
    it wraps lines. Those params come from rules outside this family (vmap's
    output handling, the reductions' batching); the collectives' own
    equations are compared exactly by test_named_equations_print_as_in_jax.
    """
    text = re.sub(r"np\.int64\((-?\d+)\)", r"\1", _text(x))
    return re.sub(r"\s+", " ", re.sub(r"\[\s+|\s+\]", lambda m: m.group(0).strip(), text))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_printed_jaxpr_equals_jax(name: str) -> None:
    program, shapes = PROGRAMS[name]
    args = _args(shapes)
    want = jax.make_jaxpr(program(*SIDES["jax"]))(*args)
    got = minijax.make_jaxpr(program(*SIDES["minijax"]))(*args)
    assert _text_ignoring_int64(got) == _text_ignoring_int64(want)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_equal_jax(name: str) -> None:
    program, shapes = PROGRAMS[name]
    args = _args(shapes)
    want = jax.tree_util.tree_leaves(program(*SIDES["jax"])(*args))
    got = minijax.tree_util.tree_leaves(program(*SIDES["minijax"])(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape and g.weak_type == w.weak_type
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


# Collectives traced with the axis bound but not mapped: the named equations
# themselves (make_jaxpr(axis_env=...) in JAX).
NAMED: dict[str, tuple[Callable[[Any, Any], Callable[..., Any]], list[tuple[tuple[int, ...], str]]]] = {
    "psum": (lambda jnp, lax: lambda x: lax.psum(x, "i"), [((2,), "float32")]),
    "psum_pytree": (lambda jnp, lax: lambda x, y: lax.psum({"a": x, "b": y}, ("i", "j")), [((2,), "float32"), ((), "int32")]),
    "pmean": (lambda jnp, lax: lambda x: lax.pmean(x, "i"), [((2, 2), "float32")]),
    "pmax_pmin": (lambda jnp, lax: lambda x: lax.pmax(x, "i") - lax.pmin(x, ("i", 0)), [((2, 3), "float32")]),
    "all_gather": (lambda jnp, lax: lambda x: lax.all_gather(x, "i", axis=-1), [((2, 2), "float32")]),
    "all_gather_tiled": (lambda jnp, lax: lambda x: lax.all_gather(x, "j", axis=1, tiled=True), [((2, 2), "float32")]),
    "psum_scatter": (lambda jnp, lax: lambda x: lax.psum_scatter(x, "i", scatter_dimension=1), [((2, 3), "float32")]),
    "axis_index": (lambda jnp, lax: lambda: lax.axis_index("i"), []),
    "axis_index_tuple": (lambda jnp, lax: lambda: lax.axis_index(("i", "j")), []),
}
AXIS_ENV = [("i", 3), ("j", 2)]


@pytest.mark.parametrize("name", sorted(NAMED))
def test_named_equations_print_as_in_jax(name: str) -> None:
    program, shapes = NAMED[name]
    args = _args(shapes)
    want = jax.make_jaxpr(program(jax.numpy, jax.lax), axis_env=AXIS_ENV)(*args)
    with batching.extend_axis_env(AXIS_ENV):
        got = minijax.make_jaxpr(program(mnp, mlax))(*args)
    assert _text(got) == _text(want)
    assert [(a.shape, a.dtype, a.weak_type) for a in got.out_avals] == [(a.shape, a.dtype, a.weak_type) for a in want.out_avals]


UNBOUND: dict[str, Callable[[Any, Any], Any]] = {
    "psum": lambda lax, x: lax.psum(x, "i"),
    "psum_constant": lambda lax, x: lax.psum(2.0, "i"),
    "pmean": lambda lax, x: lax.pmean(x, "i"),
    "pmax": lambda lax, x: lax.pmax(x, "i"),
    "pmin": lambda lax, x: lax.pmin(x, "i"),
    "all_gather": lambda lax, x: lax.all_gather(x, "i"),
    "psum_scatter": lambda lax, x: lax.psum_scatter(x, "i"),
    "axis_index": lambda lax, x: lax.axis_index("i"),
}


def _error(f: Callable[[], Any]) -> BaseException:
    with pytest.raises(Exception) as info:
        f()
    return info.value


@pytest.mark.parametrize("name", sorted(UNBOUND))
@pytest.mark.parametrize("how", ["eager", "jit", "make_jaxpr", "other_vmap"])
def test_unbound_names_raise_name_error_as_in_jax(name: str, how: str) -> None:
    x = np.ones(3, np.float32)

    def run(side: str) -> Any:
        lib, _, lax = SIDES[side]
        f = lambda x: UNBOUND[name](lax, x)  # noqa: E731
        wrapped = {
            "eager": f,
            "jit": lib.jit(f),
            "make_jaxpr": lib.make_jaxpr(f),
            "other_vmap": lib.vmap(f, axis_name="j"),
        }[how]
        return wrapped(x)

    want, got = _error(lambda: run("jax")), _error(lambda: run("minijax"))
    assert type(got) is type(want) is NameError
    # JAX's message, word for word, then minijax's hint about how to bind the name.
    assert str(got).startswith(str(want).split(". To fix this")[0])


@pytest.mark.parametrize("which", ["pmax", "pmin"])
def test_pmax_pmin_derivatives_raise_as_in_jax(which: str) -> None:
    x = np.arange(3.0, dtype=np.float32)

    def run(side: str) -> Any:
        lib, _, lax = SIDES[side]
        return lib.vmap(lib.grad(lambda x: getattr(lax, which)(x, "i")), axis_name="i")(x)

    want, got = _error(lambda: run("jax")), _error(lambda: run("minijax"))
    assert type(got) is type(want) is NotImplementedError
    assert str(got) == str(want)


@pytest.mark.parametrize(
    "name, program",
    [
        ("positional out of bounds", lambda lib, lax: lib.vmap(lambda x: lax.psum(x, ("i", 1)), axis_name="i")),
        ("gather axis out of bounds", lambda lib, lax: lib.vmap(lambda x: lax.all_gather(x, "i", axis=2), axis_name="i")),
        ("tiled gather of a scalar", lambda lib, lax: lib.vmap(lambda x: lax.all_gather(x[0], "i", tiled=True), axis_name="i")),
        ("axis_index_groups", lambda lib, lax: lib.vmap(lambda x: lax.psum(x, "i", axis_index_groups=[[0, 1], [2]]), axis_name="i")),
        ("bad to", lambda lib, lax: lib.vmap(lambda x: lax.all_gather(x, "i", to="nowhere"), axis_name="i")),
    ],
)
def test_bad_input_raises_the_error_type_jax_raises(name: str, program: Callable[[Any, Any], Any]) -> None:
    x = np.ones((3, 2), np.float32)
    want = _error(lambda: program(jax, jax.lax)(x))
    got = _error(lambda: program(minijax, mlax)(x))
    assert type(got) is type(want)
