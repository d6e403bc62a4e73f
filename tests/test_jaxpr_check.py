"""check_jaxpr: accepts what tracing produces, rejects each kind of corruption (spec T1-T6)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import minijax as jax
from minijax import lax
from minijax.core import ShapedArray
from minijax.jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var
from minijax.jaxpr_check import JaxprTypeError, check_jaxpr
from minijax.primitives import reductions as R, sorting as S, structural as P
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


# --- integer params given as bools ----------------------------------------------------------------

_X = np.arange(12, dtype=np.float32).reshape(3, 4)

# (primitive, operands, the params of a valid equation, the integer param to give as a bool).
# A bool is an int to Python, and the rules used to take it as one; the backends did not
# (NumPy: "TypeError: an integer is required", XLA: a module that does not verify).
BOOL_PARAMS: dict[str, tuple[Any, list[Any], dict[str, Any], str, Any]] = {
    "cumsum": (S.cumsum_p, [_X], {"axis": 1, "reverse": False}, "axis", True),
    "cumlogsumexp": (S.cumlogsumexp_p, [_X], {"axis": 1, "reverse": False}, "axis", True),
    "cummax": (S.cummax_p, [_X], {"axis": 0, "reverse": True}, "axis", False),
    "sort": (S.sort_p, [_X], {"dimension": 1, "is_stable": True, "num_keys": 1}, "dimension", True),
    "reduce_sum": (P.reduce_sum_p, [_X], {"axes": (1,), "out_sharding": None}, "axes", (True,)),
    "reduce_max": (R.reduce_max_p, [_X], {"axes": (1,)}, "axes", (True,)),
    "transpose": (P.transpose_p, [_X], {"permutation": (1, 0)}, "permutation", (True, False)),
    "reshape": (P.reshape_p, [_X], {"new_sizes": (1, 12), "dimensions": None, "sharding": None}, "new_sizes", (True, 12)),
    "squeeze": (P.squeeze_p, [_X[:1]], {"dimensions": (0,)}, "dimensions", (False,)),
    "broadcast_in_dim": (
        P.broadcast_in_dim_p, [_X[0]], {"shape": (1, 4), "broadcast_dimensions": (1,), "sharding": None}, "shape", (True, 4)
    ),
    "iota": (P.iota_p, [], {"dtype": np.dtype(np.int32), "shape": (2, 3), "dimension": 1, "sharding": None}, "dimension", True),
}  # fmt: skip


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("name", sorted(BOOL_PARAMS))
def test_an_integer_param_given_as_a_bool_is_refused_naming_the_param(name: str, jit: bool) -> None:
    prim, operands, params, param, value = BOOL_PARAMS[name]

    def run(params: dict[str, Any]) -> Any:
        f = lambda *xs: prim.bind(*xs, **params)  # noqa: E731
        return (jax.jit(f) if jit else f)(*operands)

    run(params)  # the valid equation computes
    with pytest.raises(TypeError, match=rf"{prim.name} {param} must be .*integer.*{re.escape(repr(value))}"):
        run({**params, param: value})


def test_a_parsed_cumlogsumexp_with_a_bool_axis_is_refused_naming_it() -> None:
    # Found by the random fuzz profile (test_fuzz_parsed_jaxprs, a param mutated to True).
    from minijax.jaxpr import eval_jaxpr
    from minijax.jaxpr_parse import parse_jaxpr

    text = "{ lambda ; a:f32[3,4]. let b:f32[3,4] = cumlogsumexp[axis=True reverse=False] a in (b,) }"
    parsed = parse_jaxpr(text)
    jaxpr = parsed.jaxpr if isinstance(parsed, ClosedJaxpr) else parsed
    with pytest.raises(TypeError, match="cumlogsumexp axis must be an integer, got the bool True"):
        eval_jaxpr(jaxpr, [], _X)
    with pytest.raises(JaxprTypeError, match="cumlogsumexp axis must be an integer"):
        check_jaxpr(jaxpr)


# Each lax call with a bool, and the same call with the int it stands for.
LAX_WITH_BOOLS: dict[str, tuple[Any, Any]] = {
    "cumsum": (lambda: lax.cumsum(_X, axis=True), lambda: lax.cumsum(_X, axis=1)),
    "sort": (lambda: lax.sort(_X, dimension=True), lambda: lax.sort(_X, dimension=1)),
    "reduce_sum": (lambda: lax.reduce_sum(_X, (True,)), lambda: lax.reduce_sum(_X, (1,))),
    "rev": (lambda: lax.rev(_X, (True,)), lambda: lax.rev(_X, (1,))),
    "transpose": (lambda: lax.transpose(_X, (True, False)), lambda: lax.transpose(_X, (1, 0))),
    "broadcast_in_dim": (
        lambda: lax.broadcast_in_dim(_X[0], (True, 4), (True,)), lambda: lax.broadcast_in_dim(_X[0], (1, 4), (1,))
    ),
}


@pytest.mark.parametrize("name", sorted(LAX_WITH_BOOLS))
def test_lax_functions_take_bools_as_the_ints_they_are(name: str) -> None:
    # As JAX's do: the lax functions turn a bool into an int before they bind.
    with_bool, with_int = LAX_WITH_BOOLS[name]
    for f in (with_bool, jax.jit(with_bool)):
        np.testing.assert_array_equal(np.asarray(f()), np.asarray(with_int()))
