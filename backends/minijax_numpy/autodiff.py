"""NumPy implementations of the autodiff primitives (add_any, stop_gradient, custom_lin)."""

from __future__ import annotations

from typing import Any

import numpy as np

from minijax_numpy.table import IMPLS


def _add_any(x: np.ndarray[Any, Any], y: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return np.asarray(np.add(x, y), dtype=x.dtype)


def _stop_gradient(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return x


def _custom_lin(*args: Any, **params: Any) -> Any:
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


IMPLS["add_any"] = _add_any
IMPLS["stop_gradient"] = _stop_gradient
IMPLS["name"] = lambda x, *, name: x  # checkpoint_name: the identity when it runs
IMPLS["custom_lin"] = _custom_lin
IMPLS["optimization_barrier"] = lambda *xs: list(xs)  # nothing to keep apart when evaluating one op at a time
# spmdx (issue 17): a layout for the SPMD partitioner; evaluated here, the identity.
IMPLS["sharding_constraint"] = lambda x, **params: x
IMPLS["reshard"] = lambda x, **params: x  # (where the value lives is its type's business)
