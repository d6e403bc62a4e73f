"""NumPy evaluation of ``while``: a Python loop over the compiled predicate and body.

With a batched predicate (an array, after ``vmap``) the loop runs while any
element is true, and each carry keeps the body's result only where its
predicate element is true (the predicate's shape is a prefix of the carry's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minijax_numpy.table import HIGHER_ORDER, JaxprCompiler

Array = np.ndarray[Any, Any]


def _while(backend: JaxprCompiler, params: dict[str, Any]) -> Callable[..., list[Any]]:
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    n_cc, n_bc = params["cond_nconsts"], params["body_nconsts"]
    # Both jaxprs are compiled once, when the equation is prepared.
    cond = backend.compile_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts)
    body = backend.compile_jaxpr(body_jaxpr.jaxpr, body_jaxpr.consts)
    batched = bool(cond_jaxpr.out_avals[0].shape)

    def run(*args: Any) -> list[Any]:
        cconsts, bconsts, carry = args[:n_cc], args[n_cc : n_cc + n_bc], list(args[n_cc + n_bc :])
        if not batched:
            while cond(*cconsts, *carry)[0]:
                carry = body(*bconsts, *carry)
            return carry
        pred = cond(*cconsts, *carry)[0]
        while pred.any():
            new = body(*bconsts, *carry)
            carry = [np.where(_expand(pred, old.ndim), n, old) for n, old in zip(new, carry)]
            pred = cond(*cconsts, *carry)[0]
        return carry

    return run


def _expand(pred: Array, ndim: int) -> Array:
    """``pred`` with trailing axes of size 1 so that it broadcasts against a carry of rank ``ndim``."""
    return pred.reshape(pred.shape + (1,) * (ndim - pred.ndim))


HIGHER_ORDER["while"] = _while
