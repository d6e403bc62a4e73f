"""Samplers for the special-function primitives (``minijax/primitives/special.py``).

Values stay where each function is smooth and well conditioned in float16:
shape parameters in [0.5, 4], incomplete-gamma arguments in [0.2, 6] (both
sides of the series/fraction split at x = a + 1), incomplete-beta arguments
in [0.1, 0.9], the Hurwitz zeta function at x in [1.5, 5] and q in [0.5, 3].
``polygamma``'s order is an integer 0..3 held in a float (its derivative in
the order does not exist, so only x is differentiable).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minijax.testing.cases import (
    FLOAT,
    Case,
    Draw,
    NDArray,
    Operand,
    Sampler,
    broadcast_operand_shape,
    case,
    shape,
    uniform,
)


def _orders(rng: np.random.Generator, s: tuple[int, ...], dtype: np.dtype[Any]) -> NDArray:
    return np.asarray(rng.integers(0, 4, s)).astype(dtype)


def _nary(name: str, domains: tuple[Any, ...], differentiable: tuple[int, ...]) -> Sampler:
    def build(draw: Draw, dtype: np.dtype[Any]) -> Case:
        result = shape(draw)
        operands = [Operand(broadcast_operand_shape(draw, result), dtype, v) for v in domains]
        return case(name, {}, operands, differentiable)

    return Sampler(name, build, FLOAT, bool(differentiable))


def _unary(name: str, values: Any) -> Sampler:
    def build(draw: Draw, dtype: np.dtype[Any]) -> Case:
        return case(name, {}, [Operand(shape(draw), dtype, values)], (0,))

    return Sampler(name, build, FLOAT, True)


SAMPLERS: dict[str, Sampler] = {
    "igamma": _nary("igamma", (uniform(0.5, 4), uniform(0.2, 6)), (0, 1)),
    "igammac": _nary("igammac", (uniform(0.5, 4), uniform(0.2, 6)), (0, 1)),
    # Its own derivative is not defined (as in JAX): values only.
    "igamma_grad_a": _nary("igamma_grad_a", (uniform(0.5, 4), uniform(0.2, 6)), ()),
    "regularized_incomplete_beta": _nary(
        "regularized_incomplete_beta", (uniform(0.5, 4), uniform(0.5, 4), uniform(0.1, 0.9)), (2,)
    ),
    "polygamma": _nary("polygamma", (_orders, uniform(0.5, 4)), (1,)),
    "zeta": _nary("zeta", (uniform(1.5, 5), uniform(0.5, 3)), ()),
    "bessel_i0e": _unary("bessel_i0e", uniform(-20, 20)),
    "bessel_i1e": _unary("bessel_i1e", uniform(-20, 20)),
}
