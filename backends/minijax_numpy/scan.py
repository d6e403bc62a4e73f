"""NumPy evaluation of ``scan``: a Python loop over the body, compiled once.

Iteration ``i`` (``length-1-i`` when reversed) reads row ``i`` of each ``xs``
operand and writes row ``i`` of each stacked output; the carries thread
through. ``unroll`` changes nothing here: it is a hint for compilers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minijax_numpy.table import HIGHER_ORDER, JaxprCompiler


def _scan(backend: JaxprCompiler, params: dict[str, Any]) -> Callable[..., Any]:
    closed = params["jaxpr"]
    body = backend.compile_jaxpr(closed.jaxpr, closed.consts)
    length: int = params["length"]
    num_consts: int = params["num_consts"]
    num_carry: int = params["num_carry"]
    order = range(length - 1, -1, -1) if params["reverse"] else range(length)
    y_avals = closed.out_avals[num_carry:]

    def run(*args: Any) -> list[Any]:
        consts, carry, xs = args[:num_consts], list(args[num_consts : num_consts + num_carry]), args[num_consts + num_carry :]
        ys = [np.empty((length, *a.shape), a.dtype) for a in y_avals]
        for i in order:
            outs = body(*consts, *carry, *(x[i] for x in xs))
            carry = outs[:num_carry]
            for y, out in zip(ys, outs[num_carry:]):
                y[i] = out
        return [*carry, *ys]

    return run


HIGHER_ORDER["scan"] = _scan
