"""``jax.extend.source_info_util``: where an operation came from, for error messages and names.

A ``NameStack`` is the path of scopes an operation was traced under
(``outer/vmap(inner)``); ``SourceInfo`` pairs it with the traceback of the
user's call. minijax's equations do not carry source info, so ``current()``
is what the tracer would record now: the name stack in effect and the
caller's frames, and ``summarize`` names the innermost frame outside
minijax's own files (and those registered with ``register_exclusion``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import traceback
from collections.abc import Iterator
from typing import Any

__all__ = [
    "NameStack", "SourceInfo", "current", "current_name_stack", "extend_name_stack", "new_name_stack",
    "new_source_info", "register_exclusion", "reset_name_stack", "set_name_stack", "summarize",
    "transform_name_stack", "user_context",
]  # fmt: skip

_MINIJAX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_exclusions: list[str] = [_MINIJAX_DIR, os.path.dirname(contextlib.__file__)]


@dataclasses.dataclass(frozen=True)
class NameStack:
    """Scopes and transformations, outermost first: ``("scope", "f")`` or ``("transform", "vmap")``.

    Printed, a transformation wraps the component that follows it:
    ``a/b/vmap(c)/jvp()`` for scopes a, b, transform vmap, scope c, transform jvp.
    """

    stack: tuple[tuple[str, str], ...] = ()

    def extend(self, name: str) -> NameStack:
        return NameStack((*self.stack, ("scope", name)))

    def transform(self, transform_name: str) -> NameStack:
        return NameStack((*self.stack, ("transform", transform_name)))

    def __getitem__(self, idx: slice) -> NameStack:
        return NameStack(self.stack[idx])

    def __add__(self, other: NameStack) -> NameStack:
        return NameStack(self.stack + other.stack)

    def __len__(self) -> int:
        return len(self.stack)

    def __str__(self) -> str:
        parts: list[str] = []  # built innermost first
        for kind, name in reversed(self.stack):
            if kind == "scope":
                parts.append(name)
            elif parts:
                parts[-1] = f"{name}({parts[-1]})"
            else:
                parts.append(f"{name}()")
        return "/".join(reversed(parts))


@dataclasses.dataclass(frozen=True)
class SourceInfo:
    traceback: list[traceback.FrameSummary] | None
    name_stack: NameStack

    def replace(self, **changes: Any) -> SourceInfo:
        return dataclasses.replace(self, **changes)


class _State(threading.local):
    def __init__(self) -> None:
        self.name_stack = NameStack()


_state = _State()


def new_name_stack(name: str = "") -> NameStack:
    return NameStack((("scope", name),) if name else ())


def current_name_stack() -> NameStack:
    return _state.name_stack


def new_source_info() -> SourceInfo:
    return SourceInfo(None, NameStack())


def current() -> SourceInfo:
    """The source info an operation made now gets: the caller's frames and the name stack."""
    return SourceInfo(traceback.extract_stack()[:-1], _state.name_stack)


def register_exclusion(path: str) -> None:
    """Frames from files under ``path`` are not the user's: ``summarize`` skips them."""
    _exclusions.append(path)


def _is_user_frame(frame: traceback.FrameSummary) -> bool:
    return not any(frame.filename.startswith(p) for p in _exclusions)


def summarize(source_info: SourceInfo, num_frames: int = 1) -> str:
    """``file:line (function)`` of the innermost user frames, innermost first; ``unknown`` without any."""
    frames = [f for f in reversed(source_info.traceback or []) if _is_user_frame(f)][:num_frames]
    if not frames:
        return "unknown"
    return "\n".join(f"{f.filename}:{f.lineno} ({f.name})" for f in frames)


@contextlib.contextmanager
def set_name_stack(name_stack: NameStack) -> Iterator[None]:
    previous, _state.name_stack = _state.name_stack, name_stack
    try:
        yield
    finally:
        _state.name_stack = previous


@contextlib.contextmanager
def extend_name_stack(name: str) -> Iterator[NameStack]:
    with set_name_stack(_state.name_stack.extend(name)):
        yield _state.name_stack


@contextlib.contextmanager
def reset_name_stack() -> Iterator[None]:
    with set_name_stack(NameStack()):
        yield


@contextlib.contextmanager
def transform_name_stack(name: str) -> Iterator[NameStack]:
    with set_name_stack(_state.name_stack.transform(name)):
        yield _state.name_stack


@contextlib.contextmanager
def user_context(c: Any = None, *, name_stack: NameStack | None = None) -> Iterator[None]:
    """Run the block as if called from traceback ``c`` under ``name_stack``; minijax records no
    tracebacks in equations, so only the name stack applies."""
    del c
    with set_name_stack(_state.name_stack if name_stack is None else name_stack):
        yield
