"""NumPy implementations of the host-callback primitives (debug_callback,
debug_print, pure_callback, io_callback).

What they do is stated once, in ``minijax.primitives.callbacks``: call the
user's function with the operand values as Arrays (on this backend) and hand
back its results, checked against the primitive's result avals. The
interpreter runs equations in program order, so ordered and unordered
callbacks alike run in the order the program states them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minijax.backend import get_backend
from minijax.core import Primitive
from minijax.primitives.callbacks import CALLBACK_PRIMITIVES, run_on_host_values
from minijax_numpy.table import IMPLS


def _implementation(prim: Primitive) -> Callable[..., list[np.ndarray[Any, Any]]]:
    def impl(*values: np.ndarray[Any, Any], **params: Any) -> list[np.ndarray[Any, Any]]:
        return run_on_host_values(prim, values, params, get_backend("numpy"))

    impl.__name__ = prim.name
    return impl


for _prim in CALLBACK_PRIMITIVES:
    IMPLS[_prim.name] = _implementation(_prim)
del _prim
