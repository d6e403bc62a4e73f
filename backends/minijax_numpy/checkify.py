"""The NumPy backend's ``check``: a ``debug_check`` does nothing; any other
cannot be compiled (``checkify.checkify`` must discharge it first), which is
found when the program is prepared, before anything runs, as JAX finds it
when lowering."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minijax.primitives.checkify import functionalization_error
from minijax_numpy.table import HIGHER_ORDER, JaxprCompiler


def _check(backend: JaxprCompiler, params: dict[str, Any]) -> Callable[..., list[Any]]:
    if not params["debug"]:
        raise functionalization_error()
    return lambda *values: []


HIGHER_ORDER["check"] = _check
