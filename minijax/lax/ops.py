"""Public wrappers over the primitives (``lax.add``, ``lax.sin``, ...)."""

from __future__ import annotations

from typing import Any

from minijax.primitives import elementwise as ew


def add(x: Any, y: Any) -> Any:
    return ew.add_p.bind(x, y)


def mul(x: Any, y: Any) -> Any:
    return ew.mul_p.bind(x, y)


def sin(x: Any) -> Any:
    return ew.sin_p.bind(x)


def gt(x: Any, y: Any) -> Any:
    return ew.gt_p.bind(x, y)


__all__ = ["add", "gt", "mul", "sin"]
