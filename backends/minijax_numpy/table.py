"""The numpy backend's one table: primitive name -> NumPy implementation.

The entries are written in the family modules next door (one per primitive
family, mirroring ``minijax/primitives/``); ``load_all`` imports them.
An implementation takes NumPy arrays and the primitive's params and returns
a NumPy array (or a list, for primitives with multiple results).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from minijax.core import ShapedArray
from minijax.jaxpr import Jaxpr
from minijax.primitives import FAMILIES


class JaxprCompiler(Protocol):
    """What an implementation that carries jaxprs needs of the backend.

    A protocol rather than ``NumpyBackend`` itself: the backend imports this
    table, so the table (and the family modules) must not import the backend.
    """

    def compile_jaxpr(self, jaxpr: Jaxpr, consts: Sequence[Any]) -> Callable[..., list[Any]]: ...


IMPLS: dict[str, Callable[..., Any]] = {}

# Primitives that carry jaxprs (jit, control flow): name -> (backend, params)
# -> callable on arrays. They compile their jaxprs once, when resolved.
HIGHER_ORDER: dict[str, Callable[[JaxprCompiler, dict[str, Any]], Callable[..., Any]]] = {}

# Optional fast paths: name -> (in_avals) -> an implementation specialised to
# those operand dtypes (taking only the arrays), or None for the general one.
# Used only by eager execution, which prepares one runner per signature; a
# specialisation must compute exactly what IMPLS[name] computes.
SPECIALIZERS: dict[str, Callable[[Sequence[ShapedArray]], Callable[..., Any] | None]] = {}

# One module per primitive family, named as the module of minijax/primitives/
# that defines its primitives (minijax.primitives.FAMILIES).

_loaded = False


def load_all() -> None:
    global _loaded
    if not _loaded:
        for family in FAMILIES:
            importlib.import_module(f"minijax_numpy.{family}")
        _loaded = True


def impl(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: register ``fn`` as the implementation of primitive ``name``."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        IMPLS[name] = fn
        return fn

    return register
