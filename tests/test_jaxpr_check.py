"""check_jaxpr: accepts what tracing produces, rejects each kind of corruption (spec T1-T6)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minijax as jax
from minijax import lax
from minijax.core import ShapedArray
from minijax.jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var
from minijax.jaxpr_check import JaxprTypeError, check_jaxpr
from minijax.primitives.elementwise import add_p, convert_element_type_p, sin_p

X3 = np.ones(3, np.float32)
F32_3 = ShapedArray((3,), np.float32)


def _pair(a: Any) -> Any:
    return lax.sin(a), lax.cos(a)


@pytest.mark.parametrize(
    "fun, args",
    [
        (lambda x: lax.mul(lax.sin(x), 2.0), [X3]),
        (lambda x: x, [1.0]),
        (lambda x: lax.add(x, np.arange(3, dtype=np.float32)), [X3]),
        (lambda x: jax.jit(_pair)(x)[1], [X3]),
        (lambda x, y: lax.select_n(lax.gt(x, y), x, y), [X3, X3]),
        (lambda x: lax.convert_element_type(x, np.int32), [1.5]),
    ],
)
def test_traced_jaxprs_typecheck(fun, args):
    check_jaxpr(jax.make_jaxpr(fun)(*args))


def _sin_jaxpr() -> tuple[Jaxpr, Var, Var, Var]:
    """``{ lambda ; a:f32[3]. let b = sin a; c = sin b in (c,) }`` and its vars."""
    a, b, c = Var(F32_3), Var(F32_3), Var(F32_3)
    eqns = [JaxprEqn([a], [b], sin_p, {"accuracy": None}), JaxprEqn([b], [c], sin_p, {"accuracy": None})]
    return Jaxpr([], [a], [c], eqns), a, b, c


def test_the_hand_built_jaxpr_is_well_typed():
    jaxpr, *_ = _sin_jaxpr()
    check_jaxpr(jaxpr)
    assert isinstance(JaxprTypeError("x"), TypeError)


@pytest.mark.parametrize(
    "aval, shown",
    [
        (ShapedArray((4,), np.float32), "declared f32[4] but sin applied to (f32[3]) gives f32[3]"),
        (ShapedArray((3,), np.int32), "declared i32[3] but sin applied to (f32[3]) gives f32[3]"),
        (
            ShapedArray((3,), np.float32, weak_type=True),
            "declared f32[3] (weakly typed) but sin applied to (f32[3]) gives f32[3]",
        ),
    ],
)
def test_a_result_of_the_wrong_shape_dtype_or_weak_type_is_rejected(aval, shown):
    jaxpr, a, b, c = _sin_jaxpr()
    wrong = Var(aval)
    jaxpr.eqns[0].outvars = [wrong]
    jaxpr.eqns[1].invars = [wrong]
    with pytest.raises(JaxprTypeError, match="result 0 of sin is ") as info:
        check_jaxpr(jaxpr)
    assert shown in str(info.value)
    # The equation is printed with the names str(jaxpr) gives it.
    assert "in equation: b:" in str(info.value) and "= sin a" in str(info.value)


def test_reading_an_unbound_variable_is_rejected():
    jaxpr, a, b, c = _sin_jaxpr()
    jaxpr.eqns[1].invars = [Var(F32_3)]
    with pytest.raises(JaxprTypeError, match=r"operand 0 of sin reads variable c:f32\[3\], which is not bound before it") as info:
        check_jaxpr(jaxpr)
    # Names as str(jaxpr) prints them: the first sin's result is now unused (``_``).
    assert "in equation: b:f32[3] = sin c" in str(info.value)
    assert "_:f32[3] = sin a" in str(jaxpr)


def test_reading_a_variable_before_its_equation_is_rejected():
    jaxpr, a, b, c = _sin_jaxpr()
    jaxpr.eqns.reverse()
    with pytest.raises(JaxprTypeError, match="not bound before it") as info:
        check_jaxpr(jaxpr)
    # Printed, the first equation is "b = sin c": names follow the text order.
    assert "in equation: b:f32[3] = sin c" in str(info.value)


def test_binding_a_variable_twice_is_rejected():
    jaxpr, a, b, c = _sin_jaxpr()
    jaxpr.eqns[1].outvars = [b]
    jaxpr.outvars = [b]
    with pytest.raises(JaxprTypeError, match=r"variable b:f32\[3\] \(result of sin\) is bound more than once"):
        check_jaxpr(jaxpr)
    twice = Jaxpr([], [a, a], [a], [])
    with pytest.raises(JaxprTypeError, match=r"\(input\) is bound more than once"):
        check_jaxpr(twice)


def test_an_unbound_output_is_rejected():
    jaxpr, a, b, c = _sin_jaxpr()
    jaxpr.outvars = [c, Var(F32_3)]
    with pytest.raises(JaxprTypeError, match=r"output 1 reads variable d:f32\[3\], which is not bound"):
        check_jaxpr(jaxpr)


def test_reading_a_dropped_result_is_rejected():
    jaxpr, a, b, c = _sin_jaxpr()
    dropped = DropVar(F32_3)
    jaxpr.eqns[0].outvars = [dropped]
    jaxpr.eqns[1].invars = [dropped]
    with pytest.raises(JaxprTypeError, match="reads a dropped result"):
        check_jaxpr(jaxpr)


def test_binding_too_many_results_is_rejected():
    jaxpr, a, b, c = _sin_jaxpr()
    jaxpr.eqns[1].outvars = [c, Var(F32_3)]
    with pytest.raises(JaxprTypeError, match="sin produces 1 results but the equation binds 2"):
        check_jaxpr(jaxpr)


def test_an_operand_the_rule_rejects_is_reported_with_the_rules_error():
    a, b = Var(F32_3), Var(ShapedArray((3,), np.int32))
    c = Var(F32_3)
    jaxpr = Jaxpr([], [a, b], [c], [JaxprEqn([a, b], [c], add_p, {})])
    with pytest.raises(JaxprTypeError, match=r"add rejects its operands \(f32\[3\], i32\[3\]\): TypeError: ") as info:
        check_jaxpr(jaxpr)
    assert "in equation: c:f32[3] = add a b" in str(info.value)


def test_literals_must_be_scalars_of_their_dtype():
    a, b = Var(F32_3), Var(F32_3)
    big = Literal(np.ones(3, np.float32), F32_3)
    jaxpr = Jaxpr([], [a], [b], [JaxprEqn([a, big], [b], add_p, {})])
    with pytest.raises(JaxprTypeError, match="non-scalar type f32"):
        check_jaxpr(jaxpr)
    wrong = Literal(np.int32(2), ShapedArray((), np.float32))
    jaxpr = Jaxpr([], [a], [b], [JaxprEqn([a, wrong], [b], add_p, {})])
    with pytest.raises(JaxprTypeError, match="holds a int32 value but is typed f32"):
        check_jaxpr(jaxpr)


def test_params_the_rule_needs_are_checked_through_the_rule():
    a, b = Var(F32_3), Var(ShapedArray((3,), np.int32))
    eqn = JaxprEqn([a], [b], convert_element_type_p, {"new_dtype": np.dtype(np.int32), "weak_type": True, "sharding": None})
    with pytest.raises(JaxprTypeError, match=r"declared i32\[3\] but convert_element_type .* gives i32\[3\] \(weakly typed\)"):
        check_jaxpr(Jaxpr([], [a], [b], [eqn]))


def test_nested_jaxprs_are_checked_on_their_own():
    closed = jax.make_jaxpr(lambda x: jax.jit(_pair)(x))(X3)
    inner = closed.eqns[0].params["jaxpr"].jaxpr
    inner.eqns[0].outvars[0].aval = ShapedArray((3,), np.int32)  # corrupt the inner sin's result
    with pytest.raises(JaxprTypeError, match="a jaxpr in the params of jit does not typecheck") as info:
        check_jaxpr(closed)
    message = str(info.value)
    assert "result 0 of sin is declared i32[3]" in message
    assert "in equation: b:f32[3] c:f32[3] = jit[" in message


def test_consts_must_match_their_constvars():
    closed = jax.make_jaxpr(lambda x: lax.add(x, np.arange(3, dtype=np.float32)))(X3)
    bad = ClosedJaxpr(closed.jaxpr, [np.arange(4, dtype=np.float32)])
    with pytest.raises(JaxprTypeError, match=r"constant 0 has type f32\[4\] but its constvar is declared f32\[3\]"):
        check_jaxpr(bad)
