"""lax.cond and lax.switch: values, pytrees, the staged ``cond`` equation, its text, and errors.

The transformation rules (jvp, grad, vmap) are tested in test_cond_transforms.py;
the comparison with real JAX is test_cond_oracle.py. Constraint labels (C1..)
are those of spec/primitives/cond.md, section cond.
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.config import config, enable_x64
from minijax.core import ShapedArray, get_aval
from minijax.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, eval_closed_jaxpr
from minijax.jaxpr_check import JaxprTypeError, check_jaxpr
from minijax.jaxpr_parse import parse_jaxpr
from minijax.primitives.cond import MemorySpace, cond_p, empty2_p

X = np.array([1.0, -2.0, 0.5], np.float32)


def cond_eqns(closed: Any) -> list[JaxprEqn]:
    return [e for e in closed.eqns if e.primitive is cond_p]


# ---------------------------------------------------------------------------
# Values


@pytest.mark.parametrize("pred", [True, False, np.bool_(True), 0, 3, -1.5, 0.0, np.int8(2)])
def test_cond_applies_true_fun_when_the_predicate_is_nonzero(pred: Any) -> None:
    def f(p: Any, x: Any) -> Any:
        return lax.cond(p, lambda x: x * 2.0, lambda x: x - 1.0, x)

    expected = X * 2.0 if pred else X - 1.0
    np.testing.assert_array_equal(f(pred, X), expected)
    np.testing.assert_array_equal(jax.jit(f)(pred, X), expected)


def test_switch_clamps_its_index_into_range() -> None:
    branches = [lambda x: -x, lambda x: x * x, lambda x: x + 10.0]
    jitted = jax.jit(lambda i, x: lax.switch(i, branches, x))
    for i in [-7, -1, 0, 1, 2, 3, 100]:
        expected = branches[min(max(i, 0), 2)](X)
        np.testing.assert_array_equal(lax.switch(i, branches, X), expected)
        np.testing.assert_array_equal(jitted(i, X), expected)


def test_the_cond_primitive_runs_the_last_branch_when_the_index_is_out_of_range() -> None:
    # cond semantics: as XLA's case (lax.switch clamps before binding).
    branches = tuple(jax.make_jaxpr(lambda x, k=k: x + float(k))(X) for k in range(3))
    direct = jax.jit(lambda i, x: cond_p.bind(i, x, branches=branches)[0])
    for i, k in [(-1, 2), (0, 0), (2, 2), (3, 2), (50, 2)]:
        np.testing.assert_array_equal(direct(np.int32(i), X), X + k)
        np.testing.assert_array_equal(cond_p.bind(np.int32(i), X, branches=branches)[0], X + k)


def test_index_of_any_integer_dtype() -> None:
    def f(i: Any) -> Any:
        return lax.switch(i, [lambda: 1.0, lambda: 2.0])

    assert float(f(np.uint8(1))) == 2.0
    assert float(jax.jit(f)(np.int16(0))) == 1.0
    with enable_x64(True):
        # As in JAX, a wide index is converted to int32 (wrapping) before the clamp.
        assert float(jax.jit(f)(np.int64(2**40))) == 1.0
        assert float(jax.jit(f)(np.int64(2**40 + 1))) == 2.0


def test_pytrees_in_and_out() -> None:
    Point = collections.namedtuple("Point", "x y")

    def f(p: Any, d: dict[str, Any], t: tuple[Any, Any]) -> Any:
        return lax.cond(
            p,
            lambda d, t: Point(d["a"] + t[0], [d["b"], t[1]]),
            lambda d, t: Point(d["a"] - t[0], [t[1], d["b"]]),
            d,
            t,
        )

    d, t = {"a": X, "b": np.float32(3.0)}, (X * 0 + 1, np.float32(4.0))
    for fun in (f, jax.jit(f)):
        out = fun(True, d, t)
        assert isinstance(out, Point) and isinstance(out.y, list)
        np.testing.assert_array_equal(out.x, X + 1)
        assert [float(v) for v in out.y] == [3.0, 4.0]
        out = fun(False, d, t)
        assert [float(v) for v in out.y] == [4.0, 3.0]


def test_operand_forms() -> None:
    # No operands; the old `operand=` keyword; the deprecated five-argument form.
    assert float(lax.cond(False, lambda: 1.0, lambda: 2.0)) == 2.0
    assert float(lax.cond(True, lambda x: x + 1.0, lambda x: x, operand=1.0)) == 2.0
    assert float(lax.switch(1, [lambda x: x, lambda x: -x], operand=3.0)) == -3.0
    assert float(lax.cond(True, 2.0, lambda x: x * 10.0, 3.0, lambda x: x)) == 20.0  # type: ignore[arg-type]
    assert float(lax.cond(False, 2.0, lambda x: x * 10.0, 3.0, lambda x: x)) == 3.0  # type: ignore[arg-type]


def test_a_single_branch_switch_is_just_a_call() -> None:
    closed = jax.make_jaxpr(lambda i, x: lax.switch(i, [lambda x: x * 3.0], x))(0, X)
    assert cond_eqns(closed) == []
    assert float(lax.switch(5, [lambda x: x * 3.0], 2.0)) == 6.0


def test_closed_over_constants_become_operands_shared_by_the_branches() -> None:
    c = np.arange(3, dtype=np.float32)
    closed = jax.make_jaxpr(lambda p, x: lax.cond(p, lambda x: x * c, lambda x: x + c, x))(True, X)
    (eqn,) = cond_eqns(closed)
    assert len(eqn.invars) == 3  # index, c (once, for both branches), x
    assert [b.in_avals for b in eqn.params["branches"]] == [[closed.jaxpr.constvars[0].aval, closed.in_avals[1]]] * 2
    np.testing.assert_array_equal(lax.cond(True, lambda x: x * c, lambda x: x + c, X), X * c)


def test_two_equal_constants_of_one_branch_keep_their_own_operands() -> None:
    # Each call makes two distinct NumPy arrays with the same contents; the
    # branch closes over both, and neither may be left unbound. Constants are
    # shared by identity (as in JAX): the two calls' four arrays are four operands.
    def branch(x: Any) -> Any:
        return jnp.sin(x) * np.asarray([0.5, 0.5, 0.5], np.float32) + np.asarray([0.5, 0.5, 0.5], np.float32) * x

    closed = jax.make_jaxpr(lambda p, x: lax.cond(p, branch, lambda x: branch(x) * 2.0, x))(True, X)
    check_jaxpr(closed.jaxpr)
    (eqn,) = cond_eqns(closed)
    assert len(eqn.invars) == 6  # index, the four constants, x
    np.testing.assert_allclose(lax.cond(True, branch, branch, X), np.sin(X) * 0.5 + 0.5 * X, rtol=1e-6)


def test_a_branch_may_close_over_a_tracer_of_an_enclosing_jit() -> None:
    @jax.jit
    def f(x: Any, y: Any) -> Any:
        return lax.cond(x.sum() > 0, lambda x: x * y, lambda x: x - y, x)

    np.testing.assert_array_equal(f(X, 2.0), X - 2.0)
    np.testing.assert_array_equal(f(-X, 2.0), -X * 2.0)


def test_outputs_passed_through_by_every_branch_are_returned_directly() -> None:
    def f(p: Any, x: Any, y: Any) -> Any:
        return lax.cond(p, lambda x, y: (x, y * 2.0), lambda x, y: (x, y + 1.0), x, y)

    closed = jax.make_jaxpr(f)(True, X, 1.0)
    (eqn,) = cond_eqns(closed)
    assert len(eqn.outvars) == 1  # only the computed output
    assert closed.jaxpr.outvars[0] is closed.jaxpr.invars[1]
    a, b = f(False, X, 1.0)
    np.testing.assert_array_equal(a, X)
    assert float(b) == 2.0
    # An output passed through from different inputs stays an output.
    swapped = jax.make_jaxpr(lambda p, x, y: lax.cond(p, lambda x, y: (y, x), lambda x, y: (x, y), x, y))(True, X, X)
    assert len(cond_eqns(swapped)[0].outvars) == 2


def test_a_forwarded_python_scalar_comes_back_as_a_weakly_typed_array() -> None:
    out = lax.cond(True, lambda x: x, lambda x: x, 1.0)
    assert isinstance(out, jax.Array) and out.weak_type and float(out) == 1.0


def test_the_results_have_the_types_of_branch_0_which_is_false_fun() -> None:  # cond C5
    strong, weak = (lambda: np.float32(1.0)), (lambda: 0.0)
    assert not lax.cond(True, weak, strong).weak_type
    assert lax.cond(False, strong, weak).weak_type
    assert jax.jit(lambda p: lax.cond(p, strong, weak))(True).weak_type


def test_branches_see_abstract_tracers_even_without_a_transformation(capsys: pytest.CaptureFixture[str]) -> None:
    def branch(x: Any) -> Any:
        print(type(x).__name__, x)
        return x

    lax.cond(True, branch, lambda x: x, 1.0)
    assert capsys.readouterr().out == "DynamicJaxprTracer JitTracer(~float32[])\n"


def test_python_control_flow_in_a_branch_names_the_branch_and_argument() -> None:
    def branch(x: Any, y: Any) -> Any:
        return x if x > 0 else y

    with pytest.raises(jax.errors.TracerBoolConversionError, match=r"tracing the function branch .* for cond\..* argument x\."):
        lax.cond(True, branch, lambda x, y: x, 1.0, 2.0)
    with pytest.raises(jax.errors.TracerBoolConversionError, match=r"for switch\."):
        lax.switch(0, [branch, lambda x, y: x], 1.0, 2.0)


def test_disable_jit_calls_the_chosen_branch_on_concrete_values() -> None:
    seen: list[Any] = []

    def branch(x: Any) -> Any:
        seen.append(x)
        return x + 1.0

    previous = config.read("jax_disable_jit")
    config.update("jax_disable_jit", True)
    try:
        assert float(lax.cond(True, branch, lambda x: x, 1.0)) == 2.0
        assert float(lax.switch(9, [lambda x: x, branch], 1.0)) == 2.0
    finally:
        config.update("jax_disable_jit", previous)
    assert [type(x) for x in seen] == [float, float]


def test_eager_cond_runs_the_branch_without_keeping_a_compiled_program() -> None:
    # Each call traces new branch jaxprs; evaluation must not grow caches per call.
    from minijax import dispatch

    lax.cond(True, lambda x: x + 1.0, lambda x: x, X)
    before = (len(dispatch._eager_cache), len(dispatch._compiled))
    for k in range(5):
        lax.cond(k % 2 == 0, lambda x: x + 1.0, lambda x: x, X)
    assert (len(dispatch._eager_cache), len(dispatch._compiled)) == before


# ---------------------------------------------------------------------------
# Errors: JAX's types and messages


def _l(x: Any) -> Any:
    return x


NOT_CALLABLE: Any = 3


ERRORS = [
    (lambda: lax.cond(np.array([True, False]), _l, _l, 1.0), TypeError, "Pred must be a scalar, got [ True False] of shape (2,)."),
    (lambda: lax.cond("a", _l, _l, 1.0), TypeError, "Pred must be a scalar, got a of type <class 'str'>"),
    (lambda: lax.cond([True], _l, _l, 1.0), TypeError, "Pred must be a scalar, got [True] of type <class 'list'>"),
    (lambda: lax.cond(None, _l, _l, 1.0), TypeError, "cond predicate is None"),
    (lambda: lax.cond(True, NOT_CALLABLE, _l, 1.0), TypeError, "lax.cond: true_fun and false_fun arguments should be callable."),
    (lambda: lax.cond(True, _l, _l, 1.0, operand=2.0), TypeError, "if 'operand' keyword is passed then no positional operands can be passed, got operand=2.0 and positional operands (1.0,)"),
    (lambda: lax.cond(True, _l, _l, "s"), TypeError, "Argument 's' of type <class 'str'> is not a valid JAX type"),
    (lambda: lax.switch(1.5, [_l], 1.0), TypeError, "Index type must be an integer, got 1.5 as float32"),
    (lambda: lax.switch(np.array([1, 2]), [_l], 1.0), TypeError, "Branch index must be scalar, got [1 2] of shape (2,)."),
    (lambda: lax.switch(1, [], 1.0), ValueError, "Empty branch sequence"),
    (lambda: lax.switch(1, [_l, NOT_CALLABLE], 1.0), TypeError, "lax.switch: branches argument should be a sequence of callables."),
]


@pytest.mark.parametrize(("call", "error", "message"), ERRORS, ids=[m[:40] for _, _, m in ERRORS])
def test_bad_arguments_raise_jaxs_errors(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


def test_branches_with_different_structures() -> None:
    t = lambda x: (x, x)  # noqa: E731
    f = lambda x: (x, x, x)  # noqa: E731
    with pytest.raises(TypeError) as info:
        lax.cond(True, t, f, 1.0)
    lines = str(info.value).splitlines()
    assert lines[0] == "cond branch outputs must have the same pytree structure, but they differ:"
    assert lines[2].startswith("true_fun is <lambda> at ") and lines[3].startswith("false_fun is <lambda> at ")
    assert lines[5] == "true_fun output is a tuple of length 2 but false_fun output is a tuple of length 3, so the lengths do not match."
    assert lines[7] == "Revise true_fun and/or false_fun so that they have the same pytree structure."
    with pytest.raises(TypeError, match=r"true_fun output is a pytree leaf but false_fun output is a <class 'tuple'>, so their Python types differ\."):
        lax.cond(True, lambda x: x, lambda x: (x,), 1.0)
    with pytest.raises(TypeError, match=r"with pytree metadata \('a',\) but false_fun output is a <class 'dict'> with pytree metadata \('b',\)"):
        lax.cond(True, lambda x: {"a": x}, lambda x: {"b": x}, 1.0)
    with pytest.raises(TypeError, match=r"branch 0 output is a pytree leaf but branch2 output is a <class 'tuple'>"):
        lax.switch(1, [lambda x: x, lambda x: x, lambda x: (x,)], 1.0)


def test_branches_with_different_output_types_show_both_types() -> None:
    with pytest.raises(TypeError) as info:
        lax.cond(True, lambda x: (x, jnp.ones(3)), lambda x: (x, jnp.ones(2, jnp.int32)), 1.0)
    lines = str(info.value).splitlines()
    assert lines[0] == "cond branches must have equal output types but they differ."
    assert lines[5] == (
        "The output of true_fun at path [1] has type float32[3] but the corresponding output of false_fun "
        "has type int32[2], so the dtypes do not match, and the shapes do not match."
    )
    assert lines[7] == "Revise true_fun and/or false_fun so that all output types match."
    with pytest.raises(TypeError) as info:
        lax.switch(0, [lambda x: (x, x), lambda x: (x, x), lambda x: (1, jnp.ones(2))], 1.0)
    lines = str(info.value).splitlines()
    assert lines[5:7] == [
        "  * the output of branch 0 at path [0] has type float32[] but the corresponding output of branch2 has type int32[], so the dtypes do not match;",
        "  * the output of branch 0 at path [1] has type float32[] but the corresponding output of branch2 has type float32[2], so the shapes do not match.",
    ]


def _closed(f: Any, *avals: Any) -> ClosedJaxpr:
    closed: ClosedJaxpr = jax.make_jaxpr(f)(*avals)
    return closed


@pytest.mark.parametrize(
    ("branches", "operands", "message"),
    [
        ((), [X], "cond requires at least one branch function"),  # C1
        ([lambda x: x], [X], "tuple of ClosedJaxpr required"),  # C1
        ((lambda x: x, lambda x: x[:2]), [X], "cond branches 0 and 1 have mismatching output types: f32[3] vs f32[2]"),  # C2
        ((lambda x: x, lambda x: x), [X, X], "cond called with 2 non-predicate operands, but branches take 1 inputs"),  # C3
        ((lambda x: x, lambda x: x), [X[:2]], "cond branches take input types f32[3], called with operands of type f32[2]"),  # C3
    ],
)
def test_the_abstract_eval_rule_checks_the_signatures(branches: Any, operands: list[Any], message: str) -> None:
    if isinstance(branches, tuple):
        branches = tuple(_closed(b, X) for b in branches)
    else:
        branches = [_closed(b, X) for b in branches]
    avals = [get_aval(x) for x in operands]
    with pytest.raises(TypeError, match=message.replace("(", r"\(").replace("[", r"\[")):
        cond_p.abstract_eval(ShapedArray((), np.int32), *avals, branches=branches)
    with pytest.raises(TypeError, match="instead of int32"):  # C4
        b = _closed(lambda x: x, X)
        cond_p.abstract_eval(ShapedArray((), np.bool_), get_aval(X), branches=(b, b))


def test_check_jaxpr_rejects_a_cond_whose_branches_disagree() -> None:
    good = jax.make_jaxpr(lambda p, x: lax.cond(p, lambda x: x, lambda x: -x, x))(True, X)
    eqn = cond_eqns(good)[0]
    bad_branch = _closed(lambda x: x[:2], X)
    bad = eqn.replace(params={"branches": (eqn.params["branches"][0], bad_branch)})
    jaxpr = good.jaxpr
    broken = Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, [jaxpr.eqns[0], bad])
    check_jaxpr(good)
    with pytest.raises(JaxprTypeError, match="mismatching output types"):
        check_jaxpr(broken)


# ---------------------------------------------------------------------------
# The jaxpr text: printed as JAX prints it, and read back


def _programs() -> list[tuple[str, Any, tuple[Any, ...]]]:
    c = np.linspace(-1, 1, 3).astype(np.float32)

    def f(i: Any, x: Any, y: Any) -> Any:
        return lax.switch(i, [lambda x, y: jnp.sin(x) * y, lambda x, y: jnp.exp(y) + x * c, lambda x, y: x * x + y], x, y)

    def loss(i: Any, x: Any, y: Any) -> Any:
        return f(i, x, y).sum()

    return [
        ("switch", f, (1, X, 2.0)),
        ("grad", jax.grad(loss, argnums=(1, 2)), (1, X, 2.0)),
        ("jvp", lambda i, x, y: jax.jvp(lambda x: f(i, x, y), (x,), (x,)), (1, X, 2.0)),
        ("vmap_index", jax.vmap(f, in_axes=(0, 0, None)), (np.array([0, 2]), np.stack([X, X]), 2.0)),
        ("vmap_operands", jax.vmap(f, in_axes=(None, 1, 0)), (1, np.stack([X, X], 1), np.ones(2, np.float32))),
    ]


@pytest.mark.parametrize(("name", "fun", "args"), _programs(), ids=[p[0] for p in _programs()])
def test_jaxprs_with_cond_typecheck_and_parse_back(name: str, fun: Any, args: tuple[Any, ...]) -> None:
    closed = jax.make_jaxpr(fun)(*args)
    # A batched index turns the cond into a select of all branches' results.
    assert bool(cond_eqns(closed)) == (name != "vmap_index")
    assert any(e.primitive.name == "select_n" for e in closed.eqns) == (name == "vmap_index")
    check_jaxpr(closed)
    text = str(closed)
    parsed = parse_jaxpr(text, consts=closed.consts)
    assert str(parsed) == text
    check_jaxpr(parsed)
    flat = jax.tree_util.tree_leaves(args)
    for got, want in zip(jax.jit(lambda *a: _eval(parsed, a))(*flat), jax.jit(lambda *a: _eval(closed, a))(*flat)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def _eval(closed: Any, args: Any) -> Any:
    return eval_closed_jaxpr(closed, *args)


def test_the_printed_cond_shows_its_branches_false_first() -> None:
    text = str(jax.make_jaxpr(lambda p, x: lax.cond(p, lambda x: x * 2.0, lambda x: x - 1.0, x))(True, np.float32(1)))
    assert text == (
        "{ lambda ; a:bool[] b:f32[]. let\n"
        "    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
        "    d:f32[] = cond[\n"
        "      branches=(\n"
        "        { lambda ; e:f32[]. let f:f32[] = sub e 1.0:f32[] in (f,) }\n"
        "        { lambda ; g:f32[]. let h:f32[] = mul g 2.0:f32[] in (h,) }\n"
        "      )\n"
        "    ] c b\n"
        "  in (d,) }"
    )


def test_a_concrete_predicate_is_an_int32_literal() -> None:
    closed = jax.make_jaxpr(lambda x: lax.cond(True, lambda x: x, lambda x: -x, x))(X)
    (eqn,) = closed.eqns
    assert str(closed).endswith("    ] 1:i32[] a\n  in (b,) }")


# ---------------------------------------------------------------------------
# empty2


def test_empty2_is_a_zero_scalar_on_every_backend() -> None:  # empty2 C1
    f = jax.jit(lambda: empty2_p.bind(dtype=np.dtype(np.int32), memory_space=MemorySpace.Device))
    out = f()
    assert out.shape == () and out.dtype == np.int32 and int(out) == 0
    eqn = jax.make_jaxpr(lambda: empty2_p.bind(dtype=np.dtype(np.float32), memory_space=MemorySpace.Device))().eqns[0]
    assert str(eqn) == "a:f32[] = empty2[dtype=float32 memory_space=MemorySpace.Device] "


# ---------------------------------------------------------------------------
# Random programs: switch equals its Python meaning, eagerly and under jit

VOCAB = [
    lambda x, y: jnp.sin(x) * y,
    lambda x, y: x * x - y,
    lambda x, y: x,
    lambda x, y: jnp.exp(0.25 * x) + y,
    lambda x, y: x[::-1] * 2.0,
    lambda x, y: (x * y).sum() + x,
    lambda x, y: jnp.full_like(x, 7.0),
]


@st.composite
def switch_programs(draw: st.DrawFn) -> tuple[list[Any], int, np.ndarray[Any, Any], np.float32]:
    picks = draw(st.lists(st.tuples(st.integers(0, len(VOCAB) - 1), st.integers(0, len(VOCAB) - 1)), min_size=1, max_size=4))
    branches = [lambda x, y, a=a, b=b: VOCAB[b](VOCAB[a](x, y), y) for a, b in picks]
    index = draw(st.integers(-2, len(picks) + 1))
    x = np.asarray(draw(st.lists(st.floats(-2, 2, width=32), min_size=3, max_size=3)), np.float32)
    y = np.float32(draw(st.floats(-2, 2, width=32)))
    return branches, index, x, y


@given(program=switch_programs())
@settings(max_examples=25)
def test_switch_equals_its_python_meaning(program: Any, backend_name: str | None) -> None:
    branches, index, x, y = program
    expected = branches[min(max(index, 0), len(branches) - 1)](x, y)
    np.testing.assert_allclose(lax.switch(index, branches, x, y), expected, rtol=1e-5, atol=1e-5)
    if backend_name != "xla" or index == 0:  # xla compiles each program: a few suffice there
        np.testing.assert_allclose(jax.jit(lambda i, x, y: lax.switch(i, branches, x, y))(index, x, y), expected, rtol=1e-5, atol=1e-5)
