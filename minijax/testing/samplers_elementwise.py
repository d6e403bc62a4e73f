"""Samplers of the elementwise primitives (``minijax/primitives/elementwise.py``) and of
``add_any`` / ``stop_gradient`` (``minijax/primitives/autodiff.py``).

Most are rows of two tables: unary primitives (dtype kinds, value domain,
differentiable?, linear?) and binary ones (dtype kinds, the two operands'
domains, differentiable operands, linear groups). The domains keep values
where the primitive is smooth: ``log`` on [0.5, 4], ``acos`` on [-0.8, 0.8],
``floor`` away from the integers, divisors away from 0. The primitives whose
operands constrain each other (``max``, ``rem``, ``clamp``, ``pow``,
``select_n``, ...) have builders of their own below the tables.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from minijax import dtypes
from minijax.primitives.elementwise import ACCURACY_PRIMITIVES, RoundingMethod
from minijax.testing import strategies as mst
from minijax.testing.cases import (
    ANY,
    FLOAT,
    INT,
    INT_BOOL,
    NUMBER,
    SIGNED,
    Case,
    Draw,
    NDArray,
    Operand,
    Sampler,
    Values,
    broadcast_operand_shape,
    case,
    indices,
    is_float,
    magnitude,
    moderate,
    off_integers,
    shape,
    uniform,
)

_ACCURACY = {p.name for p in ACCURACY_PRIMITIVES}

# name -> (kinds, values, differentiable, linear)
_UNARY: dict[str, tuple[tuple[str, ...], Values, bool, bool]] = {
    "neg": (NUMBER, moderate(), True, True),
    "copy": (ANY, moderate(), True, True),
    "sign": (NUMBER, magnitude(0.2, 3), True, False),  # derivative 0 away from 0
    "floor": (FLOAT, off_integers(0.15, 0.85), True, False),  # derivative 0 between the steps
    "ceil": (FLOAT, off_integers(0.15, 0.85), True, False),
    "is_finite": (FLOAT, moderate(), False, False),
    "exp": (FLOAT, uniform(-3, 3), True, False),
    "exp2": (FLOAT, uniform(-3, 3), True, False),
    "expm1": (FLOAT, uniform(-3, 3), True, False),
    "log": (FLOAT, uniform(0.5, 4), True, False),
    "log1p": (FLOAT, uniform(-0.5, 3), True, False),
    "tanh": (FLOAT, uniform(-3, 3), True, False),
    "logistic": (FLOAT, uniform(-4, 4), True, False),
    "sin": (FLOAT, uniform(-3, 3), True, False),
    "cos": (FLOAT, uniform(-3, 3), True, False),
    "tan": (FLOAT, uniform(-1.2, 1.2), True, False),
    "asin": (FLOAT, uniform(-0.8, 0.8), True, False),
    "acos": (FLOAT, uniform(-0.8, 0.8), True, False),
    "atan": (FLOAT, uniform(-3, 3), True, False),
    "sinh": (FLOAT, uniform(-2, 2), True, False),
    "cosh": (FLOAT, uniform(-2, 2), True, False),
    "asinh": (FLOAT, uniform(-3, 3), True, False),
    "acosh": (FLOAT, uniform(1.2, 4), True, False),
    "atanh": (FLOAT, uniform(-0.8, 0.8), True, False),
    "sqrt": (FLOAT, uniform(0.5, 4), True, False),
    "rsqrt": (FLOAT, uniform(0.5, 4), True, False),
    "cbrt": (FLOAT, magnitude(0.5, 4), True, False),
    "abs": (SIGNED, magnitude(0.2, 3), True, False),
    "erf": (FLOAT, uniform(-2, 2), True, False),
    "erfc": (FLOAT, uniform(-2, 2), True, False),
    "erf_inv": (FLOAT, uniform(-0.8, 0.8), True, False),
    "lgamma": (FLOAT, uniform(0.5, 4), True, False),
    "digamma": (FLOAT, uniform(0.5, 4), True, False),
    "square": (NUMBER, moderate(), True, False),
    "not": (INT_BOOL, moderate(), False, False),
    "population_count": (INT, uniform(-100, 100), False, False),
    "clz": (INT, uniform(-100, 100), False, False),
    "stop_gradient": (ANY, moderate(), False, False),  # derivative 0 by definition
}


def _unary(name: str) -> Sampler:
    kinds, values, differentiable, linear = _UNARY[name]

    def build(draw: Draw, dtype: np.dtype[Any]) -> Case:
        params = {"accuracy": None} if name in _ACCURACY else {}
        return case(name, params, [Operand(shape(draw), dtype, values)], (0,) if differentiable else (),
                    [(0,)] if linear else [])  # fmt: skip

    return Sampler(name, build, kinds, differentiable, linear)


# name -> (kinds, values of x, values of y, differentiable, linear groups)
_BINARY: dict[str, tuple[tuple[str, ...], Values, Values, tuple[int, ...], tuple[tuple[int, ...], ...]]] = {
    "add": (NUMBER, moderate(), moderate(), (0, 1), ((0, 1),)),
    "sub": (NUMBER, moderate(), moderate(), (0, 1), ((0, 1),)),
    "mul": (NUMBER, moderate(), moderate(), (0, 1), ((0,), (1,))),
    "div": (NUMBER, moderate(), magnitude(0.5, 3), (0, 1), ((0,),)),
    # atan2(x, y) jumps where x = 0 and y < 0: x is kept away from 0.
    "atan2": (FLOAT, magnitude(0.3, 3), moderate(), (0, 1), ()),
    "nextafter": (FLOAT, moderate(), moderate(), (), ()),
    "and": (INT_BOOL, uniform(-100, 100), uniform(-100, 100), (), ()),
    "or": (INT_BOOL, uniform(-100, 100), uniform(-100, 100), (), ()),
    "xor": (INT_BOOL, uniform(-100, 100), uniform(-100, 100), (), ()),
    "eq": (ANY, uniform(-2, 2), uniform(-2, 2), (), ()),
    "ne": (ANY, uniform(-2, 2), uniform(-2, 2), (), ()),
    "lt": (ANY, uniform(-2, 2), uniform(-2, 2), (), ()),
    "le": (ANY, uniform(-2, 2), uniform(-2, 2), (), ()),
    "gt": (ANY, uniform(-2, 2), uniform(-2, 2), (), ()),
    "ge": (ANY, uniform(-2, 2), uniform(-2, 2), (), ()),
}


def _binary_shapes(draw: Draw) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two operand shapes that broadcast together (rank 0 or sides of 1 included)."""
    result = shape(draw)
    return broadcast_operand_shape(draw, result), broadcast_operand_shape(draw, result)


def _binary(name: str) -> Sampler:
    kinds, x_values, y_values, differentiable, linear = _BINARY[name]

    def build(draw: Draw, dtype: np.dtype[Any]) -> Case:
        xs, ys = _binary_shapes(draw)
        return case(name, {}, [Operand(xs, dtype, x_values), Operand(ys, dtype, y_values)], differentiable, linear)

    return Sampler(name, build, kinds, bool(differentiable), bool(linear))


def _shift(name: str) -> Sampler:
    def build(draw: Draw, dtype: np.dtype[Any]) -> Case:
        xs, ys = _binary_shapes(draw)
        bits = 8 * dtype.itemsize
        return case(name, {}, [Operand(xs, dtype, uniform(-100, 100)), Operand(ys, dtype, indices(0, bits - 1))])

    return Sampler(name, build, INT, differentiable=False)


# ---------------------------------------------------------------------------
# Operands that constrain each other


def _broadcast(x: NDArray, shape: tuple[int, ...]) -> NDArray:
    return np.asarray(np.broadcast_to(x, shape))


def _max_min(name: str) -> Sampler:
    """Operands on interleaved grids (k + 1/4 and k + 3/4): never within 0.3 of each other."""

    def build(draw: Draw, dtype: np.dtype[Any]) -> Case:
        xs, ys = _binary_shapes(draw)
        ops = [Operand(xs, dtype, moderate()), Operand(ys, dtype, moderate())]

        def make_args(rng: np.random.Generator) -> list[NDArray]:
            if not is_float(dtype):
                return [op.values(rng, op.shape, dtype) for op in ops]
            return [
                (rng.integers(-3, 3, op.shape) + offset + rng.uniform(-0.1, 0.1, op.shape)).astype(dtype)
                for op, offset in zip(ops, (0.25, 0.75))
            ]

        return case(name, {}, ops, (0, 1), (), make_args)

    return Sampler(name, build, ANY)


def _rem(draw: Draw, dtype: np.dtype[Any]) -> Case:
    """rem(x, y) = x - y·trunc(x / y) jumps where x / y is an integer: x / y = ±(k + u), u in [0.2, 0.8]."""
    result = shape(draw)
    ys = broadcast_operand_shape(draw, result)
    ops = [Operand(result, dtype, moderate()), Operand(ys, dtype, magnitude(0.5, 3))]

    def make_args(rng: np.random.Generator) -> list[NDArray]:
        y = ops[1].values(rng, ys, dtype)
        if not is_float(dtype):
            return [ops[0].values(rng, result, dtype), y]
        quotient = rng.integers(0, 3, result) + rng.uniform(0.2, 0.8, result)
        sign = np.where(rng.random(result) < 0.5, -1.0, 1.0)
        x = sign * quotient * _broadcast(y.astype(np.float64), result)
        return [x.astype(dtype), y]

    return case("rem", {}, ops, (0, 1), (), make_args)


def _pow(draw: Draw, dtype: np.dtype[Any]) -> Case:
    xs, ys = _binary_shapes(draw)
    if draw(st.booleans()):  # a floating exponent of the same dtype
        y = Operand(ys, dtype, uniform(-2, 2))
    else:  # an integer exponent: pow is then differentiable in x only
        y = Operand(ys, np.dtype(np.int32), indices(-3, 3))
    return case("pow", {}, [Operand(xs, dtype, uniform(0.5, 3)), y], (0, 1))


def _integer_pow(draw: Draw, dtype: np.dtype[Any]) -> Case:
    exponents = range(-3, 6) if is_float(dtype) else range(0, 4)
    y = draw(st.sampled_from(list(exponents)))
    values = magnitude(0.5, 2) if y < 0 else uniform(-2, 2)
    return case("integer_pow", {"y": y}, [Operand(shape(draw), dtype, values)], (0,))


def _round(draw: Draw, dtype: np.dtype[Any]) -> Case:
    method = draw(st.sampled_from(list(RoundingMethod)))
    # Away from the half-integers where round steps.
    return case("round", {"rounding_method": method}, [Operand(shape(draw), dtype, off_integers(-0.35, 0.35))], (0,))


def _clamp(draw: Draw, dtype: np.dtype[Any]) -> Case:
    """lo < hi, and x at least 0.15 from both: x on the grid (k + 1/2)/2, the bounds on k/2, jittered."""
    xs = shape(draw)
    los, his = (draw(st.sampled_from([(), xs])) for _ in range(2))
    ops = [Operand(los, dtype, uniform(-2, -1)), Operand(xs, dtype, moderate()), Operand(his, dtype, uniform(1, 2))]

    def make_args(rng: np.random.Generator) -> list[NDArray]:
        if not is_float(dtype):
            return [op.values(rng, op.shape, dtype) for op in ops]

        def jitter(s: tuple[int, ...]) -> NDArray:
            return rng.uniform(-0.05, 0.05, s)

        lo = rng.integers(-4, 0, los) / 2 + jitter(los)
        hi = rng.integers(1, 5, his) / 2 + jitter(his)
        x = (rng.integers(-6, 6, xs) + 0.5) / 2 + jitter(xs)
        return [lo.astype(dtype), x.astype(dtype), hi.astype(dtype)]

    return case("clamp", {}, ops, (0, 1, 2), (), make_args)


def _select_n(draw: Draw, dtype: np.dtype[Any]) -> Case:
    cases_shape = shape(draw)
    which_shape = draw(st.sampled_from([(), cases_shape]))
    if draw(st.booleans()):
        n, which = 2, Operand(which_shape, np.dtype(np.bool_), uniform(0, 1))
    else:
        n = draw(st.integers(1, 3))
        which = Operand(which_shape, np.dtype(np.int32), indices(0, n - 1))
    branches = [Operand(cases_shape, dtype, moderate()) for _ in range(n)]
    positions = tuple(range(1, n + 1))
    return case("select_n", {}, [which, *branches], positions, [positions])


def _add_any(draw: Draw, dtype: np.dtype[Any]) -> Case:
    s = shape(draw)  # add_any adds tangents of one type: no broadcasting
    return case("add_any", {}, [Operand(s, dtype, moderate()), Operand(s, dtype, moderate())], (0, 1), [(0, 1)])


def _name(draw: Draw, dtype: np.dtype[Any]) -> Case:
    # checkpoint_name's primitive (remat, issue 20): the identity, differentiable in its operand.
    return case("name", {"name": "h"}, [Operand(shape(draw), dtype, moderate())], (0,), [])


def _optimization_barrier(draw: Draw, dtype: np.dtype[Any]) -> Case:
    # The identity on 1-3 operands of their own shapes: linear in all of them together.
    operands = [Operand(shape(draw), dtype, moderate()) for _ in range(draw(st.integers(1, 3)))]
    positions = tuple(range(len(operands)))
    return case("optimization_barrier", {}, operands, positions, [positions])


def _convert_element_type(draw: Draw, dtype: np.dtype[Any]) -> Case:
    # Floating targets at least as precise as the operand (a narrowing conversion
    # rounds away what finite differences measure), or int32 / bool.
    floats = [d for d in mst.dtype_list(["float"]) if not is_float(dtype) or _precision(d) >= _precision(dtype)]
    new_dtype = draw(st.sampled_from([*floats, np.dtype(np.int32), np.dtype(np.bool_)]))
    weak = draw(st.booleans()) and new_dtype != np.bool_
    params = {"new_dtype": new_dtype, "weak_type": weak, "sharding": None}
    return case("convert_element_type", params, [Operand(shape(draw), dtype, moderate())], (0,), [(0,)])


def _precision(dt: np.dtype[Any]) -> int:
    return int(dtypes.finfo(dt).nmant)


def _bitcast_convert_type(draw: Draw, dtype: np.dtype[Any]) -> Case:
    targets = [d for d in mst.dtype_list(NUMBER)]
    new_dtype = draw(st.sampled_from(targets))
    s = shape(draw)
    if new_dtype.itemsize > dtype.itemsize:  # the last dimension holds the pieces of one element
        s = (*s[:-1], new_dtype.itemsize // dtype.itemsize)
    return case("bitcast_convert_type", {"new_dtype": new_dtype}, [Operand(s, dtype, uniform(-100, 100))])


def _reduce_precision(draw: Draw, dtype: np.dtype[Any]) -> Case:
    # At least the operand's own bits: the identity, so finite differences see
    # what the jvp rule (reduce_precision of the tangent) gives.
    info = dtypes.finfo(dtype)
    params = {
        "exponent_bits": int(info.nexp) + draw(st.integers(0, 2)),
        "mantissa_bits": int(info.nmant) + draw(st.integers(0, 3)),
    }
    return case("reduce_precision", params, [Operand(shape(draw), dtype, moderate())], (0,), [(0,)])


# The two tables, for builders of programs (``minijax.testing.programs``).
UNARY_DOMAINS = _UNARY
BINARY_DOMAINS = _BINARY
ACCURACY_NAMES = frozenset(_ACCURACY)

SAMPLERS: dict[str, Sampler] = {
    **{name: _unary(name) for name in _UNARY},
    **{name: _binary(name) for name in _BINARY},
    **{name: _shift(name) for name in ("shift_left", "shift_right_logical", "shift_right_arithmetic")},
    "max": _max_min("max"),
    "min": _max_min("min"),
    "rem": Sampler("rem", _rem, NUMBER),
    "pow": Sampler("pow", _pow, FLOAT),
    "integer_pow": Sampler("integer_pow", _integer_pow, NUMBER),
    "round": Sampler("round", _round, FLOAT),
    "clamp": Sampler("clamp", _clamp, NUMBER),
    "select_n": Sampler("select_n", _select_n, ANY, linear=True),
    "add_any": Sampler("add_any", _add_any, FLOAT, linear=True),
    "name": Sampler("name", _name, ANY),
    "optimization_barrier": Sampler("optimization_barrier", _optimization_barrier, ANY, linear=True),
    "convert_element_type": Sampler("convert_element_type", _convert_element_type, ANY, linear=True),
    "bitcast_convert_type": Sampler("bitcast_convert_type", _bitcast_convert_type, NUMBER, differentiable=False),
    "reduce_precision": Sampler("reduce_precision", _reduce_precision, FLOAT, linear=True),
}
