"""Samplers of the complex-number primitives (``minijax/primitives/complex.py``).

The law harness draws real dtypes (kind "float"); a case of ``complex`` takes
two operands of the drawn parts dtype, and ``real``/``imag``/``conj`` take a
complex operand whose parts have that dtype. Only float32 and float64 are the
parts of a complex dtype, so float16/bfloat16 draws use float32 parts.
All four are linear in every operand, and differentiable: the law harness
perturbs complex operands in random complex directions (check_grads).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st

from minijax.testing.cases import (
    FLOAT,
    Case,
    Draw,
    NDArray,
    Operand,
    Sampler,
    Shape,
    broadcast_operand_shape,
    case,
    shape,
)


def parts_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The real dtype of a complex sample's parts: float32 or float64 (the complex dtypes' parts)."""
    return dtype if dtype in (np.dtype(np.float32), np.dtype(np.float64)) else np.dtype(np.float32)


def complex_values(bound: float) -> Callable[[np.random.Generator, Shape, np.dtype[Any]], NDArray]:
    """Values maker: real and imaginary parts uniform in [-bound, bound]."""
    def make(rng: np.random.Generator, s: Shape, dtype: np.dtype[Any]) -> NDArray:
        return np.asarray((rng.uniform(-bound, bound, s) + 1j * rng.uniform(-bound, bound, s)).astype(dtype))

    return make


def real_values(bound: float) -> Callable[[np.random.Generator, Shape, np.dtype[Any]], NDArray]:
    """Values maker: uniform in [-bound, bound]."""
    def make(rng: np.random.Generator, s: Shape, dtype: np.dtype[Any]) -> NDArray:
        return np.asarray(rng.uniform(-bound, bound, s).astype(dtype))

    return make


_parts, _complex_values, _real_values = parts_dtype, complex_values(3.0), real_values(3.0)


def _complex(draw: Draw, dtype: np.dtype[Any]) -> Case:
    parts = _parts(dtype)
    s = shape(draw)
    other = broadcast_operand_shape(draw, s)
    operands = [Operand(s, parts, _real_values), Operand(other, parts, _real_values)]
    return case("complex", {}, operands[::-1] if draw(st.booleans()) else operands, (0, 1), [(0, 1)])


def _unary(name: str, complex_operand: bool) -> Sampler:
    def build(draw: Draw, dtype: np.dtype[Any]) -> Case:
        parts = _parts(dtype)
        s = shape(draw)
        if complex_operand:
            operand = Operand(s, np.result_type(parts, np.complex64), _complex_values)
        else:  # conj of a real operand
            operand = Operand(s, parts, _real_values)
        params = {"input_dtype": operand.dtype} if name == "conj" else {}
        return case(name, params, [operand], (0,), [(0,)])

    return Sampler(name, build, FLOAT, linear=True)


def _conj(draw: Draw, dtype: np.dtype[Any]) -> Case:
    return _unary("conj", draw(st.booleans())).build(draw, dtype)


SAMPLERS: dict[str, Sampler] = {
    "complex": Sampler("complex", _complex, FLOAT, linear=True),
    "real": _unary("real", True),
    "imag": _unary("imag", True),
    "conj": Sampler("conj", _conj, FLOAT, linear=True),
}
