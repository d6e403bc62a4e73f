"""Stand-ins for parts of ``jax.extend`` that reach into XLA's C++ internals minijax does not expose."""

from __future__ import annotations

from typing import Any, NoReturn


def unsupported(module: str, name: str, why: str) -> Any:
    """A callable (also usable as a class) that raises NotImplementedError naming ``module.name``."""

    def stand_in(*args: Any, **kwargs: Any) -> NoReturn:
        raise NotImplementedError(f"jax.{module}.{name} is not implemented by minijax: {why}")

    stand_in.__name__ = stand_in.__qualname__ = name
    stand_in.__doc__ = f"Not implemented by minijax: {why}"
    return stand_in
