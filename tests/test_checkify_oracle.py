"""checkify against real JAX: the same programs report the same errors, raise the same
exceptions with the same messages, and compute the same values.

Each program is written once against a namespace holding either library
(``jax``, ``jnp``, ``lax``, ``checkify``) and returns a report: the messages
it saw (``err.get()``, or the type and text of what it raised) and its values
as NumPy arrays. Both backends are compared with JAX.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

from jax.experimental import checkify as jax_checkify  # noqa: E402

import minijax  # noqa: E402
from minijax.config import config_context  # noqa: E402
from minijax.experimental import checkify as mini_checkify  # noqa: E402

pytestmark = pytest.mark.oracle


def namespace(real: bool) -> types.SimpleNamespace:
    if real:
        return types.SimpleNamespace(jax=jax, jnp=jax.numpy, lax=jax.lax, checkify=jax_checkify)
    return types.SimpleNamespace(jax=minijax, jnp=minijax.numpy, lax=minijax.lax, checkify=mini_checkify)


def report(fn: Callable[[], Any]) -> Any:
    """What running ``fn`` shows: its result as host values, or the exception's type name and text."""
    try:
        out = fn()
    except Exception as e:
        return ("raised", type(e).__name__, str(e))
    return _host(out)


def _host(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return type(x)(_host(v) for v in x)
    if isinstance(x, dict):
        return {k: _host(v) for k, v in x.items()}
    if x is None or isinstance(x, str):
        return x
    if hasattr(x, "get") and hasattr(x, "throw"):  # an Error: its message
        return ("Error", x.get())
    return np.asarray(x)


def _indexed(ns: Any) -> Callable[..., Any]:
    def f(x, i):
        ns.checkify.check(i >= 0, "index needs to be non-negative, got {i}", i=i)
        return ns.jnp.sin(x[i])

    return f


def p_jit_user_check(ns: Any) -> Any:
    f = _indexed(ns)
    return report(lambda: ns.jax.jit(ns.checkify.checkify(f))(ns.jnp.ones(5), -2))


def p_throw(ns: Any) -> Any:
    err, _ = ns.checkify.checkify(_indexed(ns))(ns.jnp.ones(5), ns.jnp.int32(-1))
    return report(err.throw), str(err)


def p_automatic(ns: Any) -> Any:
    jnp, ck = ns.jnp, ns.checkify
    errors = ck.user_checks | ck.index_checks | ck.float_checks

    def f(x, i):
        ck.check(i >= 0, "index needs to be non-negative!")
        return jnp.sin(x[i])

    checked = ck.checkify(f, errors=errors)
    cases = [(jnp.ones(5), 100), (jnp.ones(5), -1), (jnp.array([jnp.inf, 1]), 0), (jnp.array([5, 1]), 0)]
    return [report(lambda a=a: checked(*a)) for a in cases]


def p_bad_input(ns: Any) -> Any:
    jnp, ck = ns.jnp, ns.checkify
    return [
        report(lambda: ck.check(jnp.array([True, False]), "m")),
        report(lambda: ck.debug_check(np.bool_(True), "m")),
        report(lambda: ck.checkify(_indexed(ns))(jnp.ones(5), 100)),
        report(lambda: ck.check_error(3)),
        report(lambda: ck.check(jnp.array(1.0) > 2, "x is {a}", a=jnp.array(1.0))),
    ]


def p_unfunctionalized(ns: Any) -> Any:
    jnp, lax, f = ns.jnp, ns.lax, _indexed(ns)
    return [
        report(lambda: ns.jax.jit(f)(jnp.ones(5), -1)),
        report(lambda: f(jnp.ones(5), jnp.int32(-1))),
        report(lambda: lax.scan(lambda c, i: (c, f(jnp.ones(5), i)), 0.0, jnp.arange(3))),
        report(lambda: lax.cond(True, lambda i: f(jnp.ones(5), i), lambda i: jnp.float32(0.0), -1)),
    ]


def p_float_and_index(ns: Any) -> Any:
    jnp, lax, ck = ns.jnp, ns.lax, ns.checkify
    out = []
    for fun, args, errors in [
        (lambda x, y: x / y, (jnp.float32(1.0), jnp.float32(0.0)), ck.div_checks),
        (lambda x, y: x / y, (jnp.arange(3), jnp.arange(3)), ck.float_checks),
        (lambda x, y: x / y, (jnp.float32(0.0), jnp.float32(0.0)), ck.nan_checks),
        (lambda x, i: x.at[i].add(1.0), (jnp.zeros(3), 5), ck.index_checks),
        (lambda x, i: x.at[i].set(1.0), (jnp.zeros((2, 3)), (1, -9)), ck.index_checks),
        (lambda x, i: lax.dynamic_update_slice(x, jnp.ones(2), (i,)), (jnp.zeros(3), 2), ck.index_checks),
        (lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 2)), (jnp.zeros((3, 3)), 2), ck.index_checks),
        (lambda x, idx: x[idx], (jnp.zeros((3, 3)), jnp.array([0, 1, 4])), ck.index_checks),
        (lambda x, idx: x[:, idx], (jnp.zeros((3, 3)), jnp.array([[0, -7], [1, 2]])), ck.index_checks),
        (lambda x: jnp.sum(jnp.log(x)), (jnp.array([1.0, -1.0]),), ck.automatic_checks),
        (lambda x: jnp.dot(x, x), (jnp.array([jnp.inf, 0.0]),), ck.nan_checks),
    ]:
        out.append(report(lambda f=fun, a=args, e=errors: ck.checkify(f, errors=e)(*a)))
    return out


def p_vmap(ns: Any) -> Any:
    jax_, jnp, ck = ns.jax, ns.jnp, ns.checkify

    def f(x, i):
        ck.check(i >= 0, "index needs to be non-negative! {}", i)
        return x[i]

    checked = ck.checkify(f, errors=ck.all_checks)
    errs, out = jax_.vmap(checked)(jnp.ones((3, 5)), jnp.array([-1, 2, 100]))
    errs2, _ = jax_.vmap(checked)(jnp.ones((3, 5)), jnp.array([2, -1, -2]))
    return [
        errs.get(), report(errs.throw), report(errs2.throw), np.asarray(out),
        report(lambda: ck.checkify(jax_.vmap(f), errors=ck.all_checks)(jnp.ones((3, 5)), jnp.array([-3, -1, 2]))),
        report(lambda: jax_.vmap(f)(jnp.ones((3, 5)), jnp.array([-3, -1, 2]))),
        report(lambda: jax_.vmap(jax_.vmap(checked))(jnp.ones((2, 2, 5)), jnp.array([[1, -1], [-2, 9]]))[0].get()),
    ]  # fmt: skip


def p_grad(ns: Any) -> Any:
    jax_, jnp, ck = ns.jax, ns.jnp, ns.checkify

    def f(x):
        return x / (1 + jnp.sqrt(x))

    def g(x):
        ck.check(x > 0, "pos {}", x)
        return jnp.sin(x) * x

    @jax_.custom_vjp
    def negative_gradient(x):
        return x

    def bwd(_, grad):
        ck.check(grad < 0, "gradient needs to be negative!")
        return (grad,)

    negative_gradient.defvjp(lambda x: (negative_gradient(x), None), bwd)
    return [
        report(lambda: ck.checkify(jax_.grad(f), errors=ck.nan_checks)(0.0)),
        report(lambda: jax_.grad(lambda x: ck.checkify(g)(x)[1])(jnp.float32(1.0))),
        report(lambda: jax_.jvp(lambda x: ck.checkify(g)(x)[1], (jnp.float32(1.0),), (jnp.float32(2.0),))),
        report(lambda: jax_.grad(g)(jnp.float32(-1.0))),
        report(lambda: jax_.grad(negative_gradient)(-1.0)),
        report(lambda: ck.checkify(jax_.grad(negative_gradient))(-1.0)),
    ]


def p_custom_rules(ns: Any) -> Any:
    jax_, jnp, ck = ns.jax, ns.jnp, ns.checkify

    @jax_.custom_jvp
    def cj(x):
        ck.check(x > 0, "cj x {}", x)
        return jnp.sin(x)

    cj.defjvp(lambda p, t: (cj(p[0]), jnp.cos(p[0]) * t[0] * 10))

    @jax_.custom_vjp
    def cv(x):
        ck.check(x > 0, "cv x {}", x)
        return jnp.sin(x)

    cv.defvjp(lambda x: (cv(x), jnp.cos(x)), lambda r, g: (r * g * 10,))
    out = []
    for fun in (cj, cv):
        out += [
            report(lambda fun=fun: ck.checkify(fun)(-1.0)),
            report(lambda fun=fun: jax_.grad(lambda x: ck.checkify(fun)(x)[1])(2.0)),
            report(lambda fun=fun: ck.checkify(jax_.grad(fun))(-2.0)),
            report(lambda fun=fun: ck.checkify(lambda x: jax_.nn.relu(jnp.log(x)) + jax_.nn.softplus(x),
                                               errors=ck.all_checks)(-1.0)),
        ]  # fmt: skip
    return out


def p_control_flow(ns: Any) -> Any:
    jax_, jnp, lax, ck = ns.jax, ns.jnp, ns.lax, ns.checkify

    def fcond(x):
        def big(a):
            ck.check(a < 5, "too big {}", a)
            return jnp.log(a)

        return lax.cond(x > 0, big, lambda a: jnp.sin(a) / a, x)

    def fwhile(x):
        def body(c):
            ck.check(c < 10, "c is {}", c)
            return c + 3

        def cond(c):
            ck.check(c > -5, "cond c is {}", c)
            return c < 20

        return lax.while_loop(cond, body, x)

    def fscan(xs):
        def body(c, x):
            ck.check(x > 0, "x {} at c {}", x, c)
            return c + jnp.log(x), c

        return lax.scan(body, jnp.float32(0.0), xs)

    checked = ck.checkify(fcond, errors=ck.all_checks)
    out = [report(lambda v=v: checked(v)) for v in (7.0, 0.0, -jnp.inf, 2.0)]
    out += [report(lambda v=v: jax_.jit(checked)(v)) for v in (7.0, 2.0)]
    out += [report(lambda v=v: ck.checkify(fwhile)(v)) for v in (1.0, -7.0, 11.0)]
    out += [report(lambda v=v: jax_.jit(ck.checkify(fwhile))(v)) for v in (1.0, -7.0)]
    out += [report(lambda: ck.checkify(jax_.vmap(fwhile))(jnp.array([1.0, 2.0])))]
    for xs in ([1.0, 2.0, -1.0, 3.0], [1.0, 2.0, 3.0]):
        out.append(report(lambda xs=xs: ck.checkify(fscan, errors=ck.all_checks)(jnp.array(xs))))
        out.append(report(lambda xs=xs: jax_.jit(ck.checkify(fscan, errors=ck.nan_checks))(jnp.array(xs))))
    out.append(report(lambda: ck.checkify(lambda x: jax_.checkpoint(lambda a: jnp.log(a) * 2)(x),
                                          errors=ck.all_checks)(-1.0)))  # fmt: skip
    return out


def p_check_error_and_debug(ns: Any) -> Any:
    jax_, jnp, ck = ns.jax, ns.jnp, ns.checkify

    def f(x):
        ck.check(x > 0, "must be positive!")
        return x

    def with_inner_jit(x):
        error, out = jax_.jit(ck.checkify(f))(x)
        ck.check_error(error)
        return out

    def d(x):
        ck.debug_check(x > 0, "dbg {}", x)
        return x * 2

    return [
        report(lambda: with_inner_jit(1)), report(lambda: with_inner_jit(-1)),
        report(lambda: ck.checkify(with_inner_jit)(-1)),
        report(lambda: d(jnp.float32(-1.0))), report(lambda: jax_.jit(d)(jnp.float32(-1.0))),
        report(lambda: ck.checkify(d)(jnp.float32(-1.0))),
        report(lambda: ck.checkify(f, errors=ck.nan_checks)(jnp.float32(-1.0))),
        str(ck.init_error), ck.init_error.get(),
        sorted(c.__name__ for c in ck.all_checks - ck.user_checks),
    ]  # fmt: skip


def p_calls(ns: Any) -> Any:
    """A check inside a jit and a checkpoint, with checkify outside or inside the other transformations."""
    jax_, jnp, ck = ns.jax, ns.jnp, ns.checkify

    def f(x):
        ck.check(x > 0, "x {}", x)
        return jnp.sin(x) * x

    out = []
    for wrap in (jax_.jit, jax_.checkpoint):
        g = wrap(f)
        out += [
            report(lambda g=g: ck.checkify(g)(-1.0)),
            report(lambda g=g: ck.checkify(jax_.grad(g))(-1.0)),
            report(lambda g=g: ck.checkify(jax_.grad(g))(1.0)),
            report(lambda g=g: jax_.grad(lambda x: ck.checkify(g)(x)[1])(1.0)),
            report(lambda g=g: jax_.vmap(ck.checkify(g))(jnp.array([1.0, -1.0]))),
            report(lambda g=g: ck.checkify(jax_.vmap(g))(jnp.array([1.0, -1.0]))),
            report(lambda g=g: jax_.grad(g)(-1.0)),
            report(lambda g=g: ck.checkify(lambda x: jax_.vjp(g, x)[1](1.0))(-1.0)),
            report(lambda g=g: ck.checkify(lambda x: jax_.linearize(g, x)[1](1.0))(-1.0)),
        ]
    return out


def p_jaxprs(ns: Any) -> Any:
    """``check`` and ``debug_check`` as staged, batched and differentiated (the codes masked:
    they count every check the process made)."""
    jax_, jnp, ck = ns.jax, ns.jnp, ns.checkify

    def f(x, i):
        ck.check(i >= 0, "index needs to be non-negative!")
        ck.debug_check(x[0] > 0, "x {}", x[0])
        return jnp.sin(x[i])

    texts = [
        jax_.make_jaxpr(f)(jnp.ones((5,)), 1),
        jax_.make_jaxpr(jax_.vmap(f))(jnp.ones((3, 5)), jnp.arange(3)),
        jax_.make_jaxpr(jax_.grad(f))(jnp.ones((5,)), 1),
    ]
    return [re.sub(r"(select_n False:bool\[\] )\d+", r"\1#", str(t)) for t in texts]


PROGRAMS = [p_jit_user_check, p_throw, p_automatic, p_bad_input, p_unfunctionalized, p_float_and_index, p_vmap,
            p_grad, p_custom_rules, p_control_flow, p_check_error_and_debug, p_calls, p_jaxprs]  # fmt: skip


def _assert_same(got: Any, want: Any, where: str) -> None:
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), (where, got, want)
        assert (got.shape, got.dtype) == (want.shape, want.dtype), (where, got, want)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6, err_msg=where)
        return
    if isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want), (where, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_same(g, w, f"{where}[{i}]")
        return
    assert got == want, (where, got, want)


@pytest.mark.parametrize("backend", ["xla", "numpy"])
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_minijax_reports_what_jax_reports(program: Callable[[Any], Any], backend: str) -> None:
    want = program(namespace(real=True))
    with config_context(minijax_backend=backend):
        got = program(namespace(real=False))
    _assert_same(got, want, program.__name__)
