"""``jax.interpreters.xla``: a primitive's eager evaluation."""

from __future__ import annotations

from typing import Any

canonicalize_dtype_handlers: dict[type, Any] = {}


def apply_primitive(prim: Any, *args: Any, **params: Any) -> Any:
    """Evaluate ``prim`` on concrete arguments (its ``bind`` outside any transformation)."""
    return prim.bind(*args, **params)
