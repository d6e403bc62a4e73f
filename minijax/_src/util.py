"""``safe_map`` and ``safe_zip``: ``map`` and ``zip`` that refuse arguments of different lengths.

This module exists because JAX's "Writing custom Jaxpr interpreters" page
imports ``from jax._src.util import safe_map``, and JAX's pages must run
unchanged on minijax. The errors are JAX's (``ValueError`` naming the argument
that is too short).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

__all__ = ["safe_map", "safe_zip"]

T = TypeVar("T")


def safe_map(f: Callable[..., T], *args: Iterable[Any]) -> list[T]:
    """``list(map(f, *args))``, after checking that every argument has the first one's length."""
    lists = [list(a) for a in args]
    n = len(lists[0])
    for i, values in enumerate(lists[1:], start=1):
        if len(values) != n:
            raise ValueError(f"safe_map() argument {i + 1} is {'shorter' if len(values) < n else 'longer'} than argument 1")
    return list(map(f, *lists))


def safe_zip(*args: Sequence[Any]) -> list[tuple[Any, ...]]:
    """``list(zip(*args))``, after checking that the arguments have one length."""
    lists = [list(a) for a in args]
    lengths = tuple(len(values) for values in lists)
    for i, n in enumerate(lengths[1:], start=1):
        if n != lengths[0]:
            raise ValueError(
                f"safe_zip() argument {i} has length {n} but argument 0 has length {lengths[0]}. All lengths: {lengths}"
            )
    return list(zip(*lists))
