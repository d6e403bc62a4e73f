"""NumPy evaluation of ``cond`` (run the selected branch's jaxpr) and ``empty2``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minijax_numpy.table import HIGHER_ORDER, IMPLS, JaxprCompiler


def _cond(backend: JaxprCompiler, params: dict[str, Any]) -> Callable[..., Any]:
    # Every branch is compiled once, when the equation is prepared.
    runs = [backend.compile_jaxpr(b.jaxpr, b.consts) for b in params["branches"]]
    last = len(runs) - 1

    def run(index: np.ndarray[Any, Any], *operands: Any) -> list[Any]:
        i = int(index)
        # As XLA's case: an index out of range selects the last branch.
        return runs[i if 0 <= i <= last else last](*operands)

    return run


def _empty2(*, dtype: Any, memory_space: Any) -> np.ndarray[Any, Any]:
    # The contents of an empty2 value are unspecified; zeros, as on XLA.
    return np.zeros((), dtype)


HIGHER_ORDER["cond"] = _cond
IMPLS["empty2"] = _empty2
