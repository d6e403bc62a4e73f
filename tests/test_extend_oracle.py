"""``jax.extend`` on minijax against real JAX: the same programs print and compute the same.

Each program takes the library (``jax`` or ``minijax``) and returns what it
shows: printed jaxprs, variable and literal reprs (object ids renumbered by
first appearance), values, and the type and message of errors.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

pytestmark = pytest.mark.oracle

VAR_ID = re.compile(r"Var\(id=(\d+)\)")


def _renumber(text: str) -> str:
    seen: dict[str, int] = {}
    return VAR_ID.sub(lambda m: f"Var(id=#{seen.setdefault(m.group(1), len(seen) + 1)})", text)


def _lib(name: str) -> Any:
    return importlib.import_module(name)


def _error(f: Callable[[], Any]) -> str:
    try:
        f()
    except Exception as e:  # noqa: BLE001  (the error is what is compared)
        return type(e).__name__
    return "no error"


def custom_primitive(lib: str) -> list[Any]:
    jax, jnp, core = _lib(lib), _lib(f"{lib}.numpy"), _lib(f"{lib}.extend.core")
    shaped_array = _lib(f"{lib}.core").ShapedArray
    p = core.Primitive("multiply_add")
    p.def_impl(lambda x, y, z: jnp.add(jnp.multiply(x, y), z))
    p.def_abstract_eval(lambda x, y, z: shaped_array(x.shape, x.dtype))
    x = jnp.arange(3.0)
    closed = jax.make_jaxpr(lambda a: p.bind(a, a, 1.0) * 2)(x)
    two = core.Primitive("two_outs")
    two.multiple_results = True
    two.def_impl(lambda a: (a + 1, a * 2))
    two.def_abstract_eval(lambda a: [a, a])
    return [
        np.asarray(p.bind(x, x, x)),
        str(closed),
        [np.asarray(v) for v in core.jaxpr_as_fun(closed)(x)],
        [np.asarray(v) for v in two.bind(x)],
        str(jax.make_jaxpr(two.bind)(x)),
        _error(lambda: jax.jit(lambda a: p.bind(a, a, a))(x)),
        _error(lambda: jax.grad(lambda a: p.bind(a, a, a).sum())(x)),
        _error(lambda: jax.vmap(lambda a: p.bind(a, a, a))(x)),
        p.name,
        p.multiple_results,
    ]


def examine(lib: str) -> list[Any]:
    """The first listing of the custom-interpreters page, on more programs."""
    jax, jnp = _lib(lib), _lib(f"{lib}.numpy")
    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    programs = [
        (lambda x: x + 1, (5,)),
        (lambda x: x * 2.5 - 1, (np.float32(2.0),)),
        (lambda x: jnp.where(x > 0, x, 0.0) + jnp.ones(4), (np.ones(4, np.float32),)),
        (lambda x: jnp.dot(w, x) + jnp.sum(w), (np.ones(4, np.float32),)),
        (lambda x: (x.astype(jnp.int8) + 3, x < 2), (np.ones(2, np.float32),)),
    ]
    shown = []
    for f, args in programs:
        closed = jax.make_jaxpr(f)(*args)
        jaxpr = closed.jaxpr
        lines = [repr(jaxpr.invars), repr(jaxpr.outvars), repr(jaxpr.constvars), str(jaxpr)]
        lines += [f"{e.invars} {e.primitive} {e.outvars}" for e in jaxpr.eqns]
        shown.append(_renumber("\n".join(lines)))
        shown.append([np.asarray(c) for c in closed.literals])
    return shown


def walk(lib: str) -> list[Any]:
    """An interpreter that walks the equations (the page's eval_jaxpr) over a program with
    literals, a constant read twice and a primitive with several results."""
    jax, jnp, lax, core = _lib(lib), _lib(f"{lib}.numpy"), _lib(f"{lib}.lax"), _lib(f"{lib}.extend.core")
    safe_map = _lib(f"{lib}._src.util").safe_map
    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)

    def program(x: Any) -> Any:
        y = jnp.tanh(jnp.dot(w, x) + 1.0) * jnp.sum(w)
        keys, vals = lax.sort((y, -y), num_keys=1)
        return jnp.exp(keys) + vals * 2, jnp.max(x)

    def eval_jaxpr(jaxpr: Any, consts: Any, *args: Any) -> Any:
        env: dict[Any, Any] = {}

        def read(v: Any) -> Any:
            return v.val if type(v) is core.Literal else env[v]

        def write(v: Any, val: Any) -> None:
            env[v] = val

        safe_map(write, jaxpr.invars, args)
        safe_map(write, jaxpr.constvars, consts)
        for eqn in jaxpr.eqns:
            out = eqn.primitive.bind(*safe_map(read, eqn.invars), **eqn.params)
            safe_map(write, eqn.outvars, out if eqn.primitive.multiple_results else [out])
        return safe_map(read, jaxpr.outvars)

    x = np.array([0.5, -1.0, 2.0, 0.25], np.float32)
    closed = jax.make_jaxpr(program)(x)
    walked = eval_jaxpr(closed.jaxpr, closed.literals, x)
    jitted = jax.jit(lambda x: eval_jaxpr(closed.jaxpr, closed.literals, x))(x)
    grad = jax.grad(lambda x: eval_jaxpr(closed.jaxpr, closed.literals, x)[0].sum())(x)
    return [str(closed), len(closed.literals), [np.asarray(v) for v in walked], [np.asarray(v) for v in jitted],
            np.asarray(grad)]  # fmt: skip


def extend_random(lib: str) -> list[Any]:
    jax, xr = _lib(lib), _lib(f"{lib}.extend.random")
    key = xr.seed_with_impl(xr.threefry_prng_impl, 7)
    return [
        np.asarray(xr.threefry_2x32((np.uint32(1), np.uint32(2)), np.arange(7, dtype=np.uint32))),
        np.asarray(jax.random.key_data(key)),
        np.asarray(jax.random.key_data(xr.random_seed(np.array([3, 4]), xr.threefry_prng_impl))),
        str(xr.threefry_prng_impl),
        _error(lambda: xr.threefry_2x32((np.uint32(1), np.uint32(2)), np.arange(4))),
    ]


def linear_util(lib: str) -> list[Any]:
    lu = _lib(f"{lib}.extend.linear_util")

    def scale(f: Any, k: float, *args: Any) -> Any:
        return f(*(a * k for a in args)) + 1

    def count(f: Any, store: Any, *args: Any) -> Any:
        out = f(*args)
        store.store(len(args))
        return out

    def negate(*args: Any) -> Any:
        out = yield tuple(-a for a in args), {}
        yield out * 10

    wrapped = lu.transformation2(scale)(lu.wrap_init(lambda x, y, bias: x + y + bias, {"bias": 100}), 2.0)
    wrapped, aux = lu.transformation_with_aux2(count)(wrapped)
    wrapped = lu.transformation(negate)(wrapped)
    return [wrapped.call_wrapped(1.0, 2.0), aux()]


def source_info(lib: str) -> list[Any]:
    siu = _lib(f"{lib}.extend.source_info_util")
    shown = [str(siu.current_name_stack())]
    with siu.extend_name_stack("outer"):
        with siu.extend_name_stack("inner"):
            shown.append(str(siu.current_name_stack()))
        with siu.transform_name_stack("vmap"):
            shown.append(str(siu.current_name_stack()))
            with siu.extend_name_stack("f"):
                shown.append(str(siu.current_name_stack()))
    stack = siu.new_name_stack("a").extend("b").transform("vmap").extend("c").transform("jvp")
    shown += [str(stack), len(stack), str(stack[:2] + stack[2:4])]
    return shown


PROGRAMS = [custom_primitive, examine, walk, extend_random, linear_util, source_info]


def _assert_same(got: Any, want: Any, where: str) -> None:
    if isinstance(want, np.ndarray):
        got = np.asarray(got)
        assert (got.dtype, got.shape) == (want.dtype, want.shape), where
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=where)
    elif isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), (where, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_same(g, w, f"{where}[{i}]")
    else:
        assert got == want, f"{where}:\n got {got!r}\nwant {want!r}"


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_minijax_shows_what_jax_shows(program: Callable[[str], Any], backend: str, monkeypatch: Any) -> None:
    want = program("jax")
    import minijax

    with minijax.default_device(minijax.devices(backend)[0]):
        got = program("minijax")
    _assert_same(got, want, program.__name__)
