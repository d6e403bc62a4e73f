"""lax.while_loop and lax.fori_loop: values, pytrees, the staged ``while`` equation, its text, and errors.

The transformation rules (jvp, linearize, grad, vmap) are tested in
test_while_transforms.py; the comparison with real JAX is test_while_oracle.py.
Constraint labels (C1..) are those of spec/primitives/while_loop.md, section
while.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.config import config
from minijax.core import ShapedArray
from minijax.jaxpr import ClosedJaxpr, JaxprEqn
from minijax.jaxpr_check import JaxprTypeError, check_jaxpr
from minijax.jaxpr_parse import parse_jaxpr
from minijax.primitives.while_loop import while_p

X = np.array([1.0, -2.0, 0.5], np.float32)
Fn = Callable[..., Any]


def while_eqns(closed: Any) -> list[JaxprEqn]:
    return [e for e in closed.eqns if e.primitive is while_p]


def python_while(cond_fun: Any, body_fun: Any, val: Any) -> Any:
    while cond_fun(val):
        val = body_fun(val)
    return val


# ---------------------------------------------------------------------------
# Values


# Carry updates (i, x) -> x on x: f32[3], built from a small vocabulary; the
# loop runs while i < n, so it always ends.
VOCAB = [
    lambda i, x: x * 1.5,
    lambda i, x: jnp.sin(x) + x,
    lambda i, x: x[::-1] - 1.0,
    lambda i, x: x + i.astype(jnp.float32),
    lambda i, x: jnp.where(x > 0.0, x, -x),
    lambda i, x: x * x.sum() * 0.1,
]


@st.composite
def counted_loops(draw: st.DrawFn) -> tuple[Any, int, np.ndarray[Any, Any]]:
    picks = draw(st.lists(st.integers(0, len(VOCAB) - 1), min_size=1, max_size=3))
    n = draw(st.integers(0, 4))
    x = np.asarray(draw(st.lists(st.floats(-2, 2), min_size=3, max_size=3)), np.float32)

    def body(carry: tuple[Any, Any]) -> tuple[Any, Any]:
        i, x = carry
        for k in picks:
            x = VOCAB[k](i, x)
        return i + 1, x

    return body, n, x


@given(loop=counted_loops())
@settings(max_examples=15)
def test_while_loop_equals_the_python_loop(loop: Any, backend_name: str | None) -> None:
    body, n, x = loop
    cond: Fn = lambda c: c[0] < n  # noqa: E731
    i_want, x_want = python_while(cond, body, (np.int32(0), x))
    i, got = jax.jit(lambda x: lax.while_loop(cond, body, (0, x)))(x)
    assert int(i) == int(i_want) == n
    np.testing.assert_allclose(got, x_want, rtol=1e-5, atol=1e-5)


def test_eager_and_jitted_loops_agree_and_end_when_the_predicate_does() -> None:
    f: Fn = lambda x: lax.while_loop(lambda c: c.sum() < 100.0, lambda c: c * 2.0 + 1.0, x)  # noqa: E731
    want = python_while(lambda c: c.sum() < 100.0, lambda c: c * 2.0 + 1.0, X)
    np.testing.assert_array_equal(f(X), want)
    np.testing.assert_array_equal(jax.jit(f)(X), want)


def test_a_false_predicate_runs_the_body_zero_times() -> None:
    calls = []

    def body(c: Any) -> Any:
        calls.append(c)  # traced once, never run
        return c + 1.0

    out = lax.while_loop(lambda c: c.sum() > 100.0, body, X)
    np.testing.assert_array_equal(out, X)
    assert len(calls) == 1


def test_pytree_carries() -> None:
    Point = collections.namedtuple("Point", "x y")

    def body(c: dict[str, Any]) -> dict[str, Any]:
        p, n = c["p"], c["n"]
        return {"p": Point(p.x * 2.0, p.y - 1), "n": n + 1}

    out = jax.jit(lambda p: lax.while_loop(lambda c: c["n"] < 3, body, {"p": p, "n": 0}))(Point(X, np.int32(5)))
    assert isinstance(out["p"], Point)
    np.testing.assert_array_equal(out["p"].x, X * 8.0)
    assert int(out["p"].y) == 2 and int(out["n"]) == 3


def test_constants_the_functions_close_over_are_leading_operands() -> None:
    c = np.array([1.0, 2.0, 3.0], np.float32)
    d = jnp.array([0.5, 0.5, 0.5])

    def f(x: Any, y: Any) -> Any:
        return lax.while_loop(lambda v: v.sum() < y, lambda v: v * c + d, x)

    closed = jax.make_jaxpr(f)(X, 50.0)
    (eqn,) = while_eqns(closed)
    assert eqn.params["cond_nconsts"] == 1 and eqn.params["body_nconsts"] == 2
    assert [type(v) for v in eqn.params["body_jaxpr"].jaxpr.constvars] == []  # all constants became operands
    want = python_while(lambda v: v.sum() < 50.0, lambda v: v * c + np.asarray(d), X)
    np.testing.assert_allclose(f(X, 50.0), want)
    np.testing.assert_allclose(jax.jit(f)(X, 50.0), want)


def test_a_carry_the_body_forwards_and_the_predicate_ignores_becomes_a_constant() -> None:
    # As JAX does: it is a body constant, and comes back exactly as given.
    y = np.float32(2.0)
    f: Fn = lambda x, y: lax.while_loop(lambda v: v[0] < 10.0, lambda v: (v[0] + v[1], v[1], v[2]), (x, y, 2.0))  # noqa: E731
    out = f(1.0, y)
    assert float(out[0]) == 11.0 and out[1] is y and out[2] == 2.0 and type(out[2]) is float
    (eqn,) = while_eqns(jax.make_jaxpr(f)(1.0, y))
    assert eqn.params["body_nconsts"] == 2 and len(eqn.outvars) == 1
    assert len(eqn.params["cond_jaxpr"].in_avals) == 1


@pytest.mark.parametrize("body", [
    pytest.param(lambda c: (c[0] + 1, c[1]), id="a carry forwarded"),
    pytest.param(lambda c: (c[0] + 1, c[1] * 2.0), id="every carry changed"),
])  # fmt: skip
def test_an_effect_in_a_jit_inside_the_predicate_survives_dead_code_elimination(
    body: Callable[[Any], Any], capsys: pytest.CaptureFixture[str]
) -> None:
    # Regression: moving a forwarded carry to the constants prunes the predicate's
    # dead code, and that pruning once ignored effects inside nested jaxprs: the
    # jit below (its output unused) was dropped with its print.
    def cond_fun(c: Any) -> Any:
        jax.jit(lambda i: jax.debug.print("predicate sees {}", i))(c[0])
        return c[0] < 3

    out = lax.while_loop(cond_fun, body, (0, 1.0))
    jax.effects_barrier()
    assert int(out[0]) == 3
    assert capsys.readouterr().out == "".join(f"predicate sees {i}\n" for i in range(4))
    (eqn,) = while_eqns(jax.make_jaxpr(lambda: lax.while_loop(cond_fun, body, (0, 1.0)))())
    assert [e.primitive.name for e in eqn.params["cond_jaxpr"].eqns][0] == "jit"


def test_a_weakly_typed_initial_value_takes_the_body_s_type() -> None:
    out = lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, 0)
    assert out.dtype == np.float32 and not out.weak_type and float(out) == 3.0
    # The body keeps a weak carry weak.
    out = lax.while_loop(lambda c: c < 3.0, lambda c: c + 1.0, 0.0)
    assert out.dtype == np.float32 and out.weak_type


def test_the_functions_see_abstract_tracers_even_without_a_transformation(capsys: pytest.CaptureFixture[str]) -> None:
    def body(c: Any) -> Any:
        print(c)
        return c * 2.0

    assert float(lax.while_loop(lambda c: c < 10.0, body, 1.0)) == 16.0
    assert capsys.readouterr().out == "JitTracer(~float32[])\n"


def test_disable_jit_runs_a_python_loop_on_concrete_values() -> None:
    seen: list[Any] = []

    def body(c: Any) -> Any:
        seen.append(c)
        return c * 2.0

    previous = config.read("jax_disable_jit")
    config.update("jax_disable_jit", True)
    try:
        assert float(lax.while_loop(lambda c: bool(c < 10.0), body, 1.0)) == 16.0
        # Under vmap the predicate is abstract: the loop is staged after all.
        out = jax.vmap(lambda x: lax.while_loop(lambda c: c < 10.0, body, x))(np.array([1.0, 20.0], np.float32))
    finally:
        config.update("jax_disable_jit", previous)
    assert len(seen) == 5  # four concrete iterations, then one trace under vmap
    np.testing.assert_array_equal(out, [16.0, 20.0])


def test_eager_loops_do_not_keep_compiled_programs() -> None:
    # Each call traces new jaxprs; evaluation must not grow caches per call.
    from minijax import dispatch

    lax.while_loop(lambda c: c.sum() < 10.0, lambda c: c * 2.0, X)
    before = (len(dispatch._eager_cache), len(dispatch._compiled))
    for k in range(3):
        cond: Fn = functools.partial(lambda limit, c: c.sum() < limit, 10.0 * k)
        out = lax.while_loop(cond, lambda c: c + 1.0, X)
        np.testing.assert_array_equal(out, python_while(cond, lambda c: c + 1.0, X))
    assert (len(dispatch._eager_cache), len(dispatch._compiled)) == before


def test_a_loop_inside_jit_closes_over_its_tracers() -> None:
    @jax.jit
    def f(x: Any, y: Any) -> Any:
        return lax.while_loop(lambda c: c < y, lambda c: c * 2.0 + x, x)

    assert float(f(1.0, 20.0)) == python_while(lambda c: c < 20.0, lambda c: c * 2.0 + 1.0, 1.0)


def test_nested_loops() -> None:
    def f(x: Any) -> Any:
        def outer_body(c: Any) -> Any:
            return lax.while_loop(lambda d: d < c * 4.0, lambda d: d * 1.5, c) + 1.0

        return lax.while_loop(lambda c: c < 100.0, outer_body, x)

    def reference(x: float) -> float:
        return float(python_while(lambda c: c < 100.0, lambda c: python_while(lambda d: d < c * 4.0, lambda d: d * 1.5, c) + 1.0, np.float32(x)))

    assert float(f(1.0)) == pytest.approx(reference(1.0))
    assert float(jax.jit(f)(1.0)) == pytest.approx(reference(1.0))


# ---------------------------------------------------------------------------
# fori_loop


def test_fori_loop_with_a_static_trip_count_is_a_scan() -> None:
    f: Fn = lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0 + i, x)  # noqa: E731
    closed = jax.make_jaxpr(f)(1.0)
    assert [e.primitive.name for e in closed.eqns] == ["scan"]
    assert closed.eqns[0].params["length"] == 3
    assert float(f(1.0)) == ((1.0 * 2 + 0) * 2 + 1) * 2 + 2


def test_fori_loop_with_traced_bounds_is_a_while_over_index_bound_and_carry() -> None:
    f: Fn = lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2.0 + i, x)  # noqa: E731
    closed = jax.make_jaxpr(f)(1.0, 3)
    (eqn,) = while_eqns(closed)
    assert [a.str_short() for a in eqn.params["body_jaxpr"].in_avals] == ["i32[]", "i32[]", "f32[]"]
    assert float(jax.jit(f)(1.0, 3)) == 12.0
    assert float(jax.jit(f)(1.0, 0)) == 1.0


@pytest.mark.parametrize(("lower", "upper"), [(0, 5), (2, 5), (5, 2), (-3, 1), (4, 4)])
def test_fori_loop_equals_the_python_range_loop(lower: int, upper: int) -> None:
    body: Fn = lambda i, c: c * 0.5 + i  # noqa: E731
    want = 1.0
    for i in range(lower, upper):
        want = body(i, want)
    assert float(lax.fori_loop(lower, upper, body, 1.0)) == want
    assert float(jax.jit(lambda lo, hi: lax.fori_loop(lo, hi, body, 1.0))(lower, upper)) == want


def test_fori_loop_index_takes_the_typed_bound_s_dtype() -> None:
    seen = []

    def body(i: Any, c: Any) -> Any:
        seen.append(i.dtype)
        return c + i

    jax.jit(lambda n: lax.fori_loop(0, n, body, 1.0))(np.int16(3))
    assert seen == [np.dtype(np.int16)]


# ---------------------------------------------------------------------------
# The jaxpr: text, type checking, parsing back


def test_the_printed_while_shows_jaxs_params() -> None:
    text = str(jax.make_jaxpr(lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x))(1.0))
    assert text == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = while[\n"
        "      body_jaxpr={ lambda ; c:f32[]. let d:f32[] = mul c 2.0:f32[] in (d,) }\n"
        "      body_nconsts=0\n"
        "      cond_jaxpr={ lambda ; e:f32[]. let f:bool[] = lt e 10.0:f32[] in (f,) }\n"
        "      cond_nconsts=0\n"
        "    ] a\n"
        "  in (b,) }"
    )


def _programs() -> list[tuple[str, Any, tuple[Any, ...]]]:
    loop: Fn = lambda x, y: lax.while_loop(lambda c: c[0] < y, lambda c: (c[0] * 2.0 + y, jnp.sin(c[1]) * c[0]), (x, x))  # noqa: E731
    return [
        ("plain", loop, (1.0, 10.0)),
        ("jvp", lambda x, y: jax.jvp(lambda x: loop(x, y), (x,), (1.0,)), (1.0, 10.0)),
        ("linearize", lambda x, y: jax.linearize(lambda x: loop(x, y), x)[1](1.0), (1.0, 10.0)),
        ("vmap", jax.vmap(loop, (0, None)), (X, 10.0)),
        ("vmap_batched_bound", jax.vmap(loop), (X, X + 5.0)),
        ("fori", lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, x), (2.0, 3)),
    ]


@pytest.mark.parametrize(("name", "fun", "args"), _programs(), ids=[p[0] for p in _programs()])
def test_jaxprs_with_while_typecheck_and_parse_back(name: str, fun: Any, args: tuple[Any, ...]) -> None:
    closed = jax.make_jaxpr(fun)(*args)
    check_jaxpr(closed)
    text = str(closed)
    again = parse_jaxpr(text)
    assert str(again) == text
    check_jaxpr(again)


def _loop_closed() -> ClosedJaxpr:
    closed: ClosedJaxpr = jax.make_jaxpr(lambda x: lax.while_loop(lambda c: c[0] < 5.0, lambda c: (c[0] + 1.0, c[1] * 2.0), (x, X)))(0.0)
    return closed


def test_check_jaxpr_rejects_a_while_whose_body_changes_the_carry_type() -> None:
    closed = _loop_closed()
    (eqn,) = while_eqns(closed)
    bad_body = jax.make_jaxpr(lambda a, b: (a + 1.0, b[:2]))(0.0, X)
    eqn.params = {**eqn.params, "body_jaxpr": bad_body}
    with pytest.raises(JaxprTypeError, match=r"body_jaxpr returns \(f32\[\], f32\[2\]\) but the carry is \(f32\[\], f32\[3\]\)"):
        check_jaxpr(closed)


S = ShapedArray((), np.float32)
V = ShapedArray((3,), np.float32)


def _l(x: Any) -> Any:
    return x


def _cj(f: Any, *avals: ShapedArray) -> ClosedJaxpr:
    closed: ClosedJaxpr = jax.make_jaxpr(f)(*[np.zeros(a.shape, a.dtype) for a in avals])
    return closed


# (operands, cond_jaxpr, body_jaxpr, (cond_nconsts, body_nconsts), message)
SIGNATURE_ERRORS = [
    ([S], (lambda c: c < 1.0, [S]), (_l, [S]), ("x", 0), r"must be non-negative ints"),  # C1
    ([S], (lambda c: c < 1.0, [S]), (_l, [S]), (2, 0), r"must be non-negative ints counting leading operands, of which there are 1"),  # C1
    ([V], (lambda c: c < 1.0, [S]), (_l, [V]), (0, 0), r"cond_jaxpr takes \(f32\[\]\) but is given its constants and the carry \(f32\[3\]\)"),  # C2
    ([S, V], (lambda c: c[0] < 1.0, [V]), (lambda k, c: c, [V, V]), (0, 1), r"body_jaxpr takes \(f32\[3\], f32\[3\]\) but is given .* \(f32\[\], f32\[3\]\)"),  # C2
    ([S], (lambda c: c < 1.0, [S]), (lambda c: c.astype(np.int32), [S]), (0, 0), r"body_jaxpr returns \(i32\[\]\) but the carry is \(f32\[\]\)"),  # C3
    ([S], (_l, [S]), (_l, [S]), (0, 0), r"cond_jaxpr must return one boolean .* got \(f32\[\]\)"),  # C4
    ([S], (lambda c: jnp.array([True, False]), [S]), (_l, [S]), (0, 0), r"a prefix of every carry's shape .* got \(bool\[2\]\) for a carry \(f32\[\]\)"),  # C4
]


@pytest.mark.parametrize(("operands", "cond", "body", "nconsts", "message"), SIGNATURE_ERRORS)
def test_the_abstract_eval_rule_checks_the_signatures(operands: list[ShapedArray], cond: Any, body: Any, nconsts: tuple[Any, int], message: str) -> None:
    cond_closed, body_closed = _cj(cond[0], *cond[1]), _cj(body[0], *body[1])
    with pytest.raises(TypeError, match=message):
        while_p.abstract_eval(*operands, cond_jaxpr=cond_closed, body_jaxpr=body_closed, cond_nconsts=nconsts[0], body_nconsts=nconsts[1])


def test_the_results_have_the_body_s_types_weak_types_included() -> None:  # C5
    closed = _cj(lambda c: c < 1.0, S)
    body = jax.make_jaxpr(lambda c: c + 1.0)(1.0)  # weak in, weak out
    (out,) = while_p.abstract_eval(S.update(weak_type=True), cond_jaxpr=closed, body_jaxpr=body, cond_nconsts=0, body_nconsts=0)
    assert out == ShapedArray((), np.float32, weak_type=True)


def test_a_batched_predicate_freezes_finished_lanes() -> None:  # C4
    # cond: bool[3] on a carry f32[3,2]; each row doubles until its first element reaches 10.
    carry = np.array([[1.0, 1.0], [3.0, -1.0], [20.0, 0.5]], np.float32)
    cond = _cj(lambda c: c[:, 0] < 10.0, ShapedArray((3, 2), np.float32))
    body = _cj(lambda c: c * 2.0, ShapedArray((3, 2), np.float32))
    want = np.array([[16.0, 16.0], [12.0, -4.0], [20.0, 0.5]], np.float32)
    params = dict(cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=0, body_nconsts=0)
    (out,) = while_p.bind(carry, **params)
    np.testing.assert_array_equal(out, want)
    (out,) = jax.jit(lambda c: while_p.bind(c, **params))(carry)
    np.testing.assert_array_equal(out, want)


# ---------------------------------------------------------------------------
# Errors: JAX's types and messages


NOT_CALLABLE: Any = 3

ERRORS = [
    (lambda: lax.while_loop(lambda c: c, _l, 1.0), TypeError, "cond_fun must return a boolean scalar, but got output type(s) [ShapedArray(float32[], weak_type=True)]."),
    (lambda: lax.while_loop(lambda c: 1, _l, 1.0), TypeError, "cond_fun must return a boolean scalar, but got output type(s) [ShapedArray(int32[], weak_type=True)]."),
    (lambda: lax.while_loop(lambda c: jnp.array([True, False]), _l, 1.0), TypeError, "cond_fun must return a boolean scalar, but got output type(s) [ShapedArray(bool[2])]."),
    (lambda: lax.while_loop(lambda c: (c < 1.0, c < 2.0), _l, 1.0), TypeError, "cond_fun must return a boolean scalar, but got pytree PyTreeDef((*, *))."),
    (lambda: lax.while_loop(lambda c: c < 1.0, NOT_CALLABLE, 1.0), TypeError, "lax.while_loop: body_fun and cond_fun arguments should be callable."),
    (lambda: lax.while_loop(lambda c: c < 1.0, _l, "x"), TypeError, "Argument 'x' of type <class 'str'> is not a valid JAX type"),
    (lambda: lax.fori_loop(0, 3, NOT_CALLABLE, 1.0), TypeError, "lax.fori_loop: body_fun argument should be callable."),
    (lambda: lax.fori_loop(np.int8(0), np.int16(3), lambda i, c: c, 1.0), TypeError, "lower and upper arguments to fori_loop must have equal types, got int8 and int16"),
    (lambda: lax.fori_loop(0.0, 3, lambda i, c: c, 1.0), TypeError, "lower and upper arguments to fori_loop must have equal types, got float32 and int32"),
    (
        lambda: jax.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c, 1.0, unroll=2))(3),
        ValueError,
        "Can only use `unroll` in `fori_loop` if the loop bounds are statically known.",
    ),
]


@pytest.mark.parametrize(("call", "error", "message"), ERRORS, ids=[m[:50] for _, _, m in ERRORS])
def test_bad_arguments_raise_jaxs_errors(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


def test_a_body_returning_a_non_array_names_the_function() -> None:
    def body(c: Any) -> Any:
        return "x"

    with pytest.raises(TypeError, match=r"^function body at .*test_while.py:\d+ traced for while_body returned a value of type <class 'str'>, which is not a valid JAX type$"):
        lax.while_loop(lambda c: c < 1.0, body, 1.0)


def test_a_body_changing_the_carry_structure_shows_both() -> None:
    with pytest.raises(TypeError) as info:
        lax.while_loop(lambda c: c < 1.0, lambda c: (c, c), 1.0)
    assert str(info.value) == (
        "while_loop body function carry input and carry output must have the same pytree structure, but they differ:\n\n"
        "The input carry c is a <class 'minijax.core.ShapedArray'> but the corresponding component of the carry output "
        "is a <class 'tuple'>, so their Python types differ.\n\n"
        "Revise the function so that the carry output has the same pytree structure as the carry input."
    )
    with pytest.raises(TypeError, match=r"The input carry c is a <class 'dict'> with pytree metadata \('a', 'b'\) but .* metadata \('a', 'c'\)"):
        lax.while_loop(lambda c: c["a"] < 1, lambda c: {"a": c["a"], "c": c["b"]}, {"a": 1.0, "b": 2.0})
    with pytest.raises(TypeError, match=r"The input carry c is a list of length 2 but the corresponding component of the carry output is a list of length 1"):
        lax.while_loop(lambda c: c[0] < 1, lambda c: [c[0]], [1.0, 2.0])


def test_a_body_changing_the_carry_types_shows_both_types() -> None:
    with pytest.raises(TypeError) as info:
        lax.while_loop(lambda c: c[0] < 1, lambda c: (c[0], c[1].astype(jnp.int32), c[2][None]), (1.0, 2.0, jnp.ones(2)))
    assert str(info.value).splitlines() == [
        "while_loop body function carry input and carry output must have equal types, but they differ:",
        "",
        "  * the input carry component c[1] has type float32[] but the corresponding output carry component has type int32[], so the dtypes do not match;",
        "  * the input carry component c[2] has type float32[2] but the corresponding output carry component has type float32[1,2], so the shapes do not match.",
        "",
        "Revise the function so that all output types match the corresponding input types.",
    ]
    # fori_loop's while form names the carry (index, bound, value) as JAX does.
    with pytest.raises(TypeError, match=r"The input carry component loop_carry\[2\] has type float32\[\] but .* int32\[\], so the dtypes do not match\."):
        jax.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c.astype(jnp.int32), 1.0))(3)


def test_python_control_flow_in_the_functions_names_the_function_and_argument() -> None:
    def cond(c: Any) -> Any:
        return c[0] < 3.0 if c[1] > 0 else False

    with pytest.raises(jax.errors.TracerBoolConversionError) as info:
        lax.while_loop(cond, lambda c: c, (1.0, 2.0))
    assert "while tracing the function cond at " in str(info.value)
    assert "for while_cond. This concrete value was not available in Python because it depends on the value of the argument c[1]." in str(info.value)

    def body(i: Any, c: Any) -> Any:
        return c if c > 1.0 else c + 1.0

    with pytest.raises(jax.errors.TracerBoolConversionError) as info:
        jax.jit(lambda n: lax.fori_loop(0, n, body, 1.0))(3)
    assert "for fori_loop. This concrete value was not available in Python because it depends on the value of the argument c." in str(info.value)
