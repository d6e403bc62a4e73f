"""lax.scan and lax.map: semantics, the jaxpr they stage, errors, and both backends.

Each scan must equal its Python meaning: a loop calling the body on each
slice and stacking the ``y`` values (``python_scan`` below). The suite runs on
every backend (tests/conftest.py), so eager scans, jitted scans and the
evaluation of the printed-and-parsed jaxpr are checked on numpy and xla.
Constraint names (C1..) are those of spec/primitives/scan.md, section scan.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.config import config
from minijax.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var, eval_jaxpr
from minijax.jaxpr_check import JaxprTypeError, check_jaxpr
from minijax.jaxpr_parse import parse_jaxpr
from minijax.primitives.scan import scan_p

F32 = np.float32


def python_scan(f: Callable[..., Any], init: Any, xs: Any, length: int | None = None, reverse: bool = False) -> tuple[Any, Any]:
    """What lax.scan means: a Python loop over the leading axis, ys stacked."""
    leaves, tree = jax.tree_util.tree_flatten(xs)
    n = length if length is not None else leaves[0].shape[0]
    carry, ys = init, []
    for i in reversed(range(n)) if reverse else range(n):
        carry, y = f(carry, jax.tree_util.tree_unflatten(tree, [np.asarray(x)[i] for x in leaves]))
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, jax.tree_util.tree_map(lambda *y: np.stack([np.asarray(v) for v in y]), *ys)


def close(actual: Any, desired: Any, tol: float = 1e-5) -> None:
    a_leaves, a_tree = jax.tree_util.tree_flatten(actual)
    d_leaves, d_tree = jax.tree_util.tree_flatten(desired)
    assert a_tree == d_tree
    for a, d in zip(a_leaves, d_leaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(d), rtol=tol, atol=tol)


def scan_eqns(closed: ClosedJaxpr) -> list[JaxprEqn]:
    return [e for e in closed.eqns if e.primitive is scan_p]


# ---------------------------------------------------------------------------
# Semantics


BODIES: dict[str, Callable[[Any, Any], Any]] = {
    "affine": lambda c, x: (c * 0.5 + x, c - x),
    "trig": lambda c, x: (jnp.sin(c) * x + jnp.cos(x), c * 2.0),
    "tanh_rnn": lambda c, x: (jnp.tanh(c + x), jnp.tanh(c + x) * 3.0),
    "ignores_x": lambda c, x: (c + 1.0, c),
}


@pytest.mark.parametrize("name", sorted(BODIES))
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("unroll", [1, 2, 3, 0])
def test_scan_equals_its_python_loop_eager_and_jitted(name: str, reverse: bool, unroll: int) -> None:
    body = BODIES[name]
    xs = np.linspace(-1, 1, 10, dtype=F32).reshape(5, 2)
    init = np.array([0.3, -0.4], F32)
    want = python_scan(body, init, xs, reverse=reverse)
    close(lax.scan(body, init, xs, reverse=reverse, unroll=unroll), want)
    close(jax.jit(lambda c, xs: lax.scan(body, c, xs, reverse=reverse, unroll=unroll))(init, xs), want)


@settings(max_examples=20)
@given(
    length=st.integers(0, 6),
    reverse=st.booleans(),
    unroll=st.integers(0, 7),
    c0=st.floats(-2, 2, width=32),
)
def test_scan_over_random_lengths_and_unrolls_equals_the_loop(length: int, reverse: bool, unroll: int, c0: float) -> None:
    xs = np.arange(length * 3, dtype=F32).reshape(length, 3) / 7
    body = BODIES["trig"]
    init = np.full(3, c0, F32)
    got = jax.jit(lambda c, xs: lax.scan(body, c, xs, reverse=reverse, unroll=unroll))(init, xs)
    if length == 0:
        close(got[0], init)
        assert got[1].shape == (0, 3)
    else:
        close(got, python_scan(body, init, xs, reverse=reverse))


def test_pytrees_of_carries_xs_and_ys() -> None:
    def body(carry: Any, x: Any) -> Any:
        a, (b, n) = carry
        new = (a + x["u"] * b.sum(), (b * 0.5, n + 1))
        return new, {"sum": a + b, "both": (x["u"], x["v"] * n)}

    init = (F32(1.0), (np.ones(2, F32), np.int32(0)))
    xs = {"u": np.arange(4, dtype=F32), "v": np.ones((4, 3), F32)}
    carry, ys = lax.scan(body, init, xs)
    want_carry, want_ys = python_scan(body, init, xs)
    close(carry, want_carry)
    close(ys, want_ys)
    assert ys["both"][1].shape == (4, 3) and carry[1][1].dtype == np.int32


def test_xs_none_needs_length_and_ys_may_be_none() -> None:
    carry, ys = lax.scan(lambda c, _: (c * 2, c), 1, None, length=5)
    assert int(carry) == 32 and ys.tolist() == [1, 2, 4, 8, 16]
    carry, ys = lax.scan(lambda c, x: (c + x, None), F32(0), np.arange(4, dtype=F32))
    assert float(carry) == 6.0 and ys is None


def test_weakly_typed_initial_carry_takes_the_type_of_the_body() -> None:
    # A Python float carry meets a float32 input: the carry stays float32 (weak)
    # and the body's result type decides.
    carry, ys = lax.scan(lambda c, x: (c + x, c), 0.0, np.arange(3, dtype=F32))
    assert carry.dtype == np.float32 and not carry.weak_type and ys.weak_type
    # A weak int carry the body turns into a float: promoted, and traced again (JAX's two passes).
    closed = jax.make_jaxpr(lambda xs: lax.scan(lambda c, x: (c * x, c), 1, xs))(np.ones(3, F32))
    (eqn,) = scan_eqns(closed)
    assert [v.aval.str_short() for v in eqn.outvars] == ["f32[]", "f32[3]"]


def test_unchanged_carries_become_constants_and_forwarded_xs_are_not_copied() -> None:
    closed = jax.make_jaxpr(lambda c, xs: lax.scan(lambda c, x: ((c[0], c[1] + x), x * 2), c, xs))((1.0, 2.0), np.arange(3, dtype=F32))
    (eqn,) = scan_eqns(closed)
    assert (eqn.params["num_consts"], eqn.params["num_carry"]) == (1, 1)
    assert closed.jaxpr.outvars[0] is closed.jaxpr.invars[0]  # the unchanged carry is the input itself
    closed = jax.make_jaxpr(lambda c, xs: lax.scan(lambda c, x: (c + x, x), c, xs))(1.0, np.arange(3, dtype=F32))
    (eqn,) = scan_eqns(closed)
    assert len(eqn.outvars) == 1 and closed.jaxpr.outvars[1] is closed.jaxpr.invars[1]
    (c, ys) = lax.scan(lambda c, x: (c, x), 1.0, np.arange(3, dtype=F32))
    assert c == 1.0 and ys.tolist() == [0.0, 1.0, 2.0]


def test_closed_over_arrays_become_constant_operands() -> None:
    w = np.array([[1.0, 2.0], [0.5, -1.0]], F32)
    closed = jax.make_jaxpr(lambda c, xs: lax.scan(lambda c, x: (w @ c + x, c), c, xs))(np.ones(2, F32), np.ones((3, 2), F32))
    (eqn,) = scan_eqns(closed)
    assert eqn.params["num_consts"] == 1 and eqn.invars[0] is closed.jaxpr.constvars[0]
    assert not eqn.params["jaxpr"].consts  # the body closes over nothing
    close(
        lax.scan(lambda c, x: (w @ c + x, c), np.ones(2, F32), np.ones((3, 2), F32)),
        python_scan(lambda c, x: (w @ c + x, c), np.ones(2, F32), np.ones((3, 2), F32)),
    )


def test_unroll_true_unrolls_fully_and_is_visible_in_the_params() -> None:
    closed = jax.make_jaxpr(lambda xs: lax.scan(lambda c, x: (c + x, c), 0.0, xs, unroll=True))(np.ones(4, F32))
    assert scan_eqns(closed)[0].params["unroll"] == 4
    closed = jax.make_jaxpr(lambda xs: lax.scan(lambda c, x: (c + x, c), 0.0, xs, unroll=False))(np.ones(4, F32))
    assert scan_eqns(closed)[0].params["unroll"] == 1


def test_disable_jit_runs_the_body_in_python() -> None:
    seen: list[Any] = []

    def body(c: Any, x: Any) -> Any:
        seen.append(type(x).__name__)
        return c + x, c * x

    previous = config.read("jax_disable_jit")
    config.update("jax_disable_jit", True)
    try:
        got = lax.scan(body, F32(1.0), np.arange(3, dtype=F32), reverse=True)
        with pytest.raises(ValueError, match="zero-length scan is not supported in disable_jit"):
            lax.scan(body, F32(1.0), np.zeros((0,), F32))
    finally:
        config.update("jax_disable_jit", previous)
    assert seen == ["Array"] * 3  # concrete values, not tracers
    close(got, python_scan(body, F32(1.0), np.arange(3, dtype=F32), reverse=True))


def test_the_jaxpr_has_the_same_size_for_any_trip_count() -> None:
    def f(xs: Any) -> Any:
        return lax.scan(lambda c, x: (jnp.tanh(c * x + 1.0), c), 0.5, xs)

    short = jax.make_jaxpr(f)(np.ones(3, F32))
    long = jax.make_jaxpr(f)(np.ones(3000, F32))
    assert str(long).replace("3000", "3") == str(short)
    g_short = jax.make_jaxpr(jax.grad(lambda xs: f(xs)[1].sum()))(np.ones(3, F32))
    g_long = jax.make_jaxpr(jax.grad(lambda xs: f(xs)[1].sum()))(np.ones(3000, F32))
    assert len(g_long.eqns) == len(g_short.eqns)


# ---------------------------------------------------------------------------
# lax.map


@pytest.mark.parametrize("batch_size", [None, 0, 1, 2, 3, 5, 7])
def test_map_equals_stacking_with_any_batch_size(batch_size: int | None) -> None:
    xs = np.linspace(-1, 1, 15, dtype=F32).reshape(5, 3)

    def f(x: Any) -> Any:
        return {"s": jnp.sin(x).sum(), "x2": x * 2.0}

    got = lax.map(f, xs, batch_size=batch_size)
    close(got, {"s": np.sin(xs).sum(1), "x2": xs * 2.0})


def test_map_is_a_scan_without_carry() -> None:
    closed = jax.make_jaxpr(lambda xs: lax.map(lambda x: x * 2.0, xs))(np.arange(3, dtype=F32))
    (eqn,) = scan_eqns(closed)
    assert (eqn.params["num_carry"], eqn.params["num_consts"], eqn.params["length"]) == (0, 0, 3)


# ---------------------------------------------------------------------------
# The primitive: printing, parsing, type checking


def scan_program(c: Any, xs: Any) -> Any:
    return lax.scan(lambda c, x: (jnp.sin(c) * x + 1.0, c * 2.0), c, xs, reverse=True, unroll=2)


def test_the_printed_form_is_jaxs() -> None:
    text = str(jax.make_jaxpr(scan_program)(F32(1.0), np.arange(3, dtype=F32)))
    assert "scan[\n      jaxpr={ lambda ; " in text
    # params sorted by name, as JAX prints them; no other params
    order = [text.index(f"      {p}=") for p in ("jaxpr", "length", "num_carry", "num_consts", "reverse", "unroll")]
    assert order == sorted(order)
    assert "length=3" in text and "reverse=True" in text and "unroll=2" in text


@pytest.mark.parametrize(
    "program",
    [
        lambda c, xs: scan_program(c, xs),
        lambda c, xs: jax.grad(lambda c: scan_program(c, xs)[1].sum())(c),
        lambda c, xs: jax.vmap(scan_program, (None, 1))(c, jnp.stack([xs, xs], 1)),
        lambda c, xs: jax.jvp(lambda c: scan_program(c, xs), (c,), (c,)),
    ],
    ids=["scan", "grad", "vmap", "jvp"],
)
def test_print_parse_print_is_the_identity_and_the_parsed_jaxpr_runs(program: Callable[..., Any]) -> None:
    args = (F32(0.5), np.arange(3, dtype=F32))
    closed = jax.make_jaxpr(program)(*args)
    check_jaxpr(closed)
    parsed = parse_jaxpr(str(closed), closed.consts)
    assert isinstance(parsed, ClosedJaxpr)
    assert str(parsed) == str(closed)
    check_jaxpr(parsed)
    close(eval_jaxpr(parsed.jaxpr, parsed.consts, *args), jax.tree_util.tree_leaves(program(*args)))


def _scan_eqn(body: ClosedJaxpr, avals_in: list[Any], **params: Any) -> ClosedJaxpr:
    invars = [Var(a) for a in avals_in]
    out = scan_p.abstract_eval(*avals_in, jaxpr=body, **params)
    outvars = [Var(a) for a in out]
    return ClosedJaxpr(Jaxpr([], invars, outvars, [JaxprEqn(list(invars), outvars, scan_p, {**params, "jaxpr": body})]), [])


def test_the_abstract_eval_checks_every_constraint() -> None:
    from minijax.core import ShapedArray

    f32, i32 = ShapedArray((), F32), ShapedArray((), np.int32)
    body = jax.make_jaxpr(lambda c, x: (c + x, c * x))(F32(0), F32(0))  # (carry f32, x f32) -> (f32, f32)
    params = dict(reverse=False, length=3, num_consts=0, num_carry=1, unroll=1)
    outs = scan_p.abstract_eval(f32, ShapedArray((3,), F32), jaxpr=body, **params)
    assert outs == [f32, ShapedArray((3,), F32)]  # C6
    with pytest.raises(TypeError, match="non-negative int"):  # C1
        scan_p.abstract_eval(f32, ShapedArray((3,), F32), jaxpr=body, **{**params, "length": -1})
    with pytest.raises(TypeError, match="2 inputs"):  # C2
        scan_p.abstract_eval(f32, jaxpr=body, **params)
    with pytest.raises(TypeError, match="initial carry of type\ni32"):  # C4
        scan_p.abstract_eval(i32, ShapedArray((3,), F32), jaxpr=body, **params)
    with pytest.raises(TypeError, match="sequences of type\nf32\\[4\\]"):  # C5
        scan_p.abstract_eval(f32, ShapedArray((4,), F32), jaxpr=body, **params)
    bad_body = jax.make_jaxpr(lambda c, x: (x.astype(np.int32), c))(F32(0), F32(0))
    with pytest.raises(TypeError, match="carry input and output types mismatch"):  # C3
        scan_p.abstract_eval(f32, ShapedArray((3,), F32), jaxpr=bad_body, **params)


def test_check_jaxpr_reports_an_ill_typed_scan() -> None:
    from minijax.core import ShapedArray

    body = jax.make_jaxpr(lambda c, x: (c + x, c * x))(F32(0), F32(0))
    good = _scan_eqn(body, [ShapedArray((), F32), ShapedArray((3,), F32)], reverse=False, length=3, num_consts=0, num_carry=1, unroll=1)
    check_jaxpr(good)
    eqn = good.jaxpr.eqns[0]
    wrong = eqn.replace(params={**eqn.params, "length": 4})
    with pytest.raises(JaxprTypeError, match="scan rejects its operands"):
        check_jaxpr(Jaxpr([], good.jaxpr.invars, good.jaxpr.outvars, [wrong]))


# ---------------------------------------------------------------------------
# Errors: JAX's types and messages


def test_a_carry_that_changes_type_shows_both_types() -> None:
    with pytest.raises(TypeError) as info:
        lax.scan(lambda c, x: (c.astype(jnp.int32) * jnp.ones(2, jnp.int32), x), 1.0, np.arange(3.0))
    assert str(info.value) == (
        "scan body function carry input and carry output must have equal types, but they differ:\n\n"
        "The input carry c has type float32[] but the corresponding output carry component has type int32[2], "
        "so the dtypes do not match, and the shapes do not match.\n\n"
        "Revise the function so that all output types match the corresponding input types."
    )
    with pytest.raises(TypeError, match=r"  \* the input carry component c\[0\] has type float32\[\] .*;\n  \* the input carry component c\[1\]"):
        lax.scan(lambda c, x: ([c[0] * jnp.ones(2), c[1].astype(int)], x), [1.0, 2.0], np.arange(3.0))


def test_a_carry_that_changes_structure_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="(?s)must have the same pytree structure.*The input carry c is a <class '.*ShapedArray'> but the corresponding component of the carry output is a <class 'tuple'>, so their Python types differ"):
        lax.scan(lambda c, x: ((c, c), x), 1.0, np.arange(3.0))
    with pytest.raises(TypeError, match=r"with 2 children but .* with 1 child, so the numbers of children do not match, with the symmetric difference of key sets: \{'b'\}"):
        lax.scan(lambda c, x: ({"a": c["a"]}, x), {"a": 1.0, "b": 2.0}, np.arange(3.0))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: lax.scan(lambda c, x: (c, x), 1.0, (np.arange(3.0), np.arange(4.0))), ValueError, "scan got values with different leading axis sizes: 3, 4."),
        (lambda: lax.scan(lambda c, x: (c, x), 1.0, np.arange(3.0), length=4), ValueError, "scan got `length` argument of 4 which disagrees with leading axis sizes [3]."),
        (lambda: lax.scan(lambda c, x: (c, x), 1.0, None), ValueError, "scan got no values to scan over and `length` not provided."),
        (lambda: lax.scan(lambda c, x: (c, x), 1.0, 3.0), ValueError, "scan got value with no leading axis to scan over: 3.0."),
        (lambda: lax.scan(lambda c, x: (c, x), 1.0, F32(3)), IndexError, "scan got a value with no leading axis"),
        (lambda: lax.scan(lambda c, x: c, 1.0, np.arange(3.0)), TypeError, "scan body output must be a pair, got ~float32[]."),
        (lambda: lax.scan(lambda c, x: (c, x), 1.0, np.arange(3.0), unroll=-1), ValueError, "`unroll` must be a `bool` or a non-negative `int`."),
        (lambda: lax.scan(3, 1.0, np.arange(3.0)), TypeError,  # type: ignore[arg-type]
         "lax.scan: f argument should be a callable."),
        (lambda: lax.scan(lambda c, x: (c, "a"), 1.0, np.arange(3.0)), TypeError, "returned a value of type <class 'str'> at output component [1], which is not a valid JAX type"),
    ],
    ids=["lengths", "length", "nothing", "scalar", "0d", "pair", "unroll", "callable", "str"],
)
def test_bad_input_raises_jaxs_error(call: Callable[[], Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)


def test_a_traced_length_is_a_concretization_error() -> None:
    with pytest.raises(jax.errors.ConcretizationTypeError, match="The `length` argument to `scan` expects a concrete `int` value"):
        jax.jit(lambda n: lax.scan(lambda c, x: (c, x), 1.0, None, length=n))(3)


# ---------------------------------------------------------------------------
# Evaluation: eager, jit, nesting


def test_scan_of_scan_and_scan_with_cond_inside() -> None:
    xs = np.linspace(-1, 1, 6, dtype=F32).reshape(3, 2)

    def inner(d: Any, y: Any) -> Any:
        return d * jnp.cos(y) + 0.1, d

    def outer(c: Any, x: Any) -> Any:
        c2, ys = lax.scan(inner, c, x)
        return c2, ys.sum()

    def outer_meaning(c: Any, x: Any) -> Any:
        c2, ys = python_scan(inner, c, x)
        return c2, ys.sum()

    close(jax.jit(lambda c: lax.scan(outer, c, xs))(F32(0.5)), python_scan(outer_meaning, F32(0.5), xs))

    def with_cond(c: Any, x: Any) -> Any:
        return lax.cond(x > 0, lambda c: c * x, lambda c: c - x, c), c

    close(lax.scan(with_cond, F32(0.5), xs[:, 0]), python_scan(lambda c, x: (c * x if x > 0 else c - x, c), F32(0.5), xs[:, 0]))


def test_integer_and_boolean_carries() -> None:
    def body(c: Any, x: Any) -> Any:
        n, flag = c
        return (n + x, jnp.logical_xor(flag, x > 2)), n * 2

    init = (np.int32(0), np.bool_(False))
    got = jax.jit(lambda xs: lax.scan(body, init, xs))(np.arange(5, dtype=np.int32))
    close(got, python_scan(body, init, np.arange(5, dtype=np.int32)))
    assert got[0][1].dtype == np.bool_


def test_a_body_without_outputs_and_an_empty_loop() -> None:
    carry, ys = jax.jit(lambda: lax.scan(lambda c, x: (c, c), F32(1.0), None, length=0))()
    assert float(carry) == 1.0 and ys.shape == (0,)
    carry, ys = lax.scan(lambda c, x: (c, x), (), np.arange(3, dtype=F32))
    assert carry == () and ys.tolist() == [0.0, 1.0, 2.0]


def test_the_body_sees_abstract_tracers_even_without_a_transformation() -> None:
    # The FAQ's point about control-flow primitives: the body is traced to a jaxpr.
    seen: list[Any] = []

    def body(c: Any, x: Any) -> Any:
        seen.append((isinstance(c, jax.core.Tracer), isinstance(x, jax.core.Tracer)))
        return c + x, c

    carry, _ = lax.scan(body, F32(0.0), np.arange(4, dtype=F32))
    assert seen == [(True, True)] and float(carry) == 6.0
