"""Inert stand-ins: names that import (and can be tested with ``isinstance``) but raise when used."""

from __future__ import annotations

from typing import Any, NoReturn


class CompatUnsupportedError(NotImplementedError):
    """A JAX feature that ``minijax.compat`` only stands in for was used."""


def _message(qualname: str, why: str) -> str:
    return f"{qualname} is not available on minijax (minijax.compat stands in for it so that imports work): {why}"


def stand_in_class(qualname: str, why: str) -> type:
    """A class named like JAX's that nothing is an instance of, and that raises when instantiated or called."""

    def new(cls: type, *args: Any, **kwargs: Any) -> NoReturn:
        raise CompatUnsupportedError(_message(qualname, why))

    name = qualname.rpartition(".")[2]
    cls = type(name, (), {"__new__": new, "__doc__": _message(qualname, why), "__module__": qualname.rpartition(".")[0]})
    return cls


def stand_in_function(qualname: str, why: str) -> Any:
    """A function named like JAX's that raises when called."""

    def stand_in(*args: Any, **kwargs: Any) -> NoReturn:
        raise CompatUnsupportedError(_message(qualname, why))

    stand_in.__name__ = stand_in.__qualname__ = qualname.rpartition(".")[2]
    stand_in.__doc__ = _message(qualname, why)
    return stand_in
