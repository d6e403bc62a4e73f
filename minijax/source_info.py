"""Where in the user's program an equation came from, as JAX's ``source_info_util`` records it.

A traced equation remembers the innermost frame outside minijax that bound its
primitive (file, line, column, function). ``summarize`` prints it as JAX does,
``file:line:col (function)``: ``print_saved_residuals`` shows it. The frame is
captured as (code object, instruction offset), and read into a position only
when printed, so recording costs a walk up the stack and no string work.

An equation replayed from a jaxpr (``eval_jaxpr``: a checkpointed function
evaluated on the primal side, a jaxpr differentiated or batched) keeps its
original position: ``user_context`` makes the replayed equations inherit it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from types import CodeType
from typing import NamedTuple

__all__ = ["SourceInfo", "current", "is_internal_file", "override_stack", "summarize", "user_context"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# minijax's own files and the backends' are not the user's program.
_EXCLUDED = (_PACKAGE_DIR + os.sep, os.path.join(os.path.dirname(_PACKAGE_DIR), "backends") + os.sep)


class SourceInfo(NamedTuple):
    code: CodeType
    lasti: int


_override: list[SourceInfo | None] = [None]
# Code object -> is it minijax's own (decided once per code object: tracing asks for every equation).
_EXCLUDED_CODE: dict[CodeType, bool] = {}


def override_stack() -> list[SourceInfo | None]:
    """The stack ``user_context`` pushes on (an interpreter loop pushes and pops it directly)."""
    return _override


def is_internal_file(filename: str) -> bool:
    """Whether code in ``filename`` is minijax's own (or Python's frozen importlib), not the user's."""
    return filename.startswith(_EXCLUDED) or filename.startswith("<frozen ")



def current() -> SourceInfo | None:
    """The source position of the user's code now binding a primitive (None: none found)."""
    if _override[-1] is not None:
        return _override[-1]
    frame = sys._getframe(1)
    known = _EXCLUDED_CODE
    while frame is not None:
        code = frame.f_code
        excluded = known.get(code)
        if excluded is None:
            excluded = known[code] = is_internal_file(code.co_filename)
        if not excluded:
            break
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return None
    return SourceInfo(frame.f_code, frame.f_lasti)


@contextlib.contextmanager
def user_context(info: SourceInfo | None) -> Iterator[None]:
    """Equations bound inside take ``info`` as their position (none given: unchanged)."""
    if info is None:
        yield
        return
    _override.append(info)
    try:
        yield
    finally:
        _override.pop()


def summarize(info: SourceInfo | None) -> str:
    """``file:line:col (function)``, JAX's short form; ``unknown`` without a position."""
    if info is None:
        return "unknown"
    code, lasti = info
    line, col = code.co_firstlineno, 0
    for i, (start_line, _, start_col, _) in enumerate(code.co_positions()):
        if i == lasti // 2:
            line = start_line if start_line is not None else line
            col = start_col if start_col is not None else 0
            break
    return f"{code.co_filename}:{line}:{col} ({code.co_qualname})"
