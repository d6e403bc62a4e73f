"""``jax.ref``: mutable array references (``Ref``) and the operations on them.

How minijax runs them (at trace time, without state primitives) is in minijax/state.py;
docs/stateful_refs.md is the user's page.
"""

from __future__ import annotations

from typing import Any

from minijax import numpy as jnp
from minijax.state import AbstractRef, Ref

__all__ = ["AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get", "new_ref", "set", "swap"]


def _idx(idx: Any) -> Any:
    return Ellipsis if idx is None else idx


def _ref(ref: Any, what: str) -> Ref:
    if not isinstance(ref, Ref):
        raise TypeError(f"{what} expects a Ref as its first argument, got {type(ref).__name__}")
    return ref


def new_ref(init_val: Any, *, memory_space: Any = None, kind: str | None = None) -> Ref:
    """A new ``Ref`` holding ``init_val`` (copied: later writes never change ``init_val``)."""
    if memory_space is not None or kind is not None:
        raise NotImplementedError("new_ref(memory_space=..., kind=...) is not supported by minijax (issue 24)")
    if isinstance(init_val, Ref):
        raise TypeError("new_ref: no higher-order refs: the initial value of a Ref cannot be a Ref")
    return Ref(jnp.asarray(init_val))


def empty_ref(ty: Any, memory_space: Any = None) -> Ref:
    """A new ``Ref`` of type ``ty`` (anything with ``shape`` and ``dtype``), its contents zeros.

    JAX leaves them undefined: read only what was written."""
    if memory_space is not None:
        raise NotImplementedError("empty_ref(memory_space=...) is not supported by minijax (issue 24)")
    return Ref(jnp.zeros(ty.shape, ty.dtype))


def freeze(ref: Ref) -> Any:
    """The final value of ``ref`` (``jax.freeze``)."""
    return _ref(ref, "freeze").freeze()


def free_ref(ref: Ref) -> None:
    """Release ``ref``: minijax's refs are values, nothing to release but checking its use."""
    _ref(ref, "free_ref").get(Ellipsis)


def get(ref: Ref, idx: Any = None) -> Any:
    """``ref[idx]`` (the whole value when ``idx`` is None)."""
    return _ref(ref, "get").get(_idx(idx))


def swap(ref: Ref, idx: Any, value: Any) -> Any:
    """``old, ref[idx] = ref[idx], value``; returns ``old``."""
    return _ref(ref, "swap").swap(_idx(idx), value)


def set(ref: Ref, idx: Any, value: Any) -> None:  # noqa: A001 (JAX's name)
    """``ref[idx] = value``."""
    _ref(ref, "set").swap(_idx(idx), value)


def addupdate(ref: Ref, idx: Any, x: Any) -> None:
    """``ref[idx] += x``."""
    _ref(ref, "addupdate").addupdate(_idx(idx), x)
