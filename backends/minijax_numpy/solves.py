"""NumPy evaluation of ``custom_linear_solve``: run its ``solve`` jaxpr.

matvec, vecmat and transpose_solve matter only to the transformations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minijax.primitives.solves import split_linear_solve_args
from minijax_numpy.table import HIGHER_ORDER, JaxprCompiler


def _custom_linear_solve(backend: JaxprCompiler, params: dict[str, Any]) -> Callable[..., Any]:
    const_lengths, solve = params["const_lengths"], params["jaxprs"].solve
    run_solve = backend.compile_jaxpr(solve.jaxpr, solve.consts)  # compiled once, when the equation is prepared

    def run(*operands: Any) -> list[Any]:
        consts, b = split_linear_solve_args(operands, const_lengths)
        return run_solve(*consts.solve, *b)  # type: ignore[no-any-return]

    return run


HIGHER_ORDER["custom_linear_solve"] = _custom_linear_solve
