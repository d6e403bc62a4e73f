"""Mutable array references (``jax.Ref``, ``jax.new_ref``): the reference type itself.

JAX stages every read and write of a ``Ref`` as a state primitive (``get``, ``swap``,
``addupdate``) and, under ``jit``, discharges them: the refs become inputs and outputs of
the compiled program. minijax discharges at trace time instead: a ``Ref`` holds its current
value (an Array, or a tracer of the trace that created it), a read indexes that value and a
write replaces it with an indexed update (``value.at[idx].set(v)``). A program that uses
refs therefore traces to the pure operations they stand for, and both backends run it
unchanged. Its jaxpr shows those operations, not JAX's state primitives.

A ref belongs to the trace that was current when it was made. Reading or writing it under
another one (a function closing over a ref made outside ``jit``, ``vmap``, ``scan``, ...)
would have to thread the ref's value through that transformation, which minijax does only
for refs passed to ``jit`` as arguments (``stages.Jitted``); any other such use raises
``NotImplementedError`` naming the ref, rather than leaking a tracer or baking in a stale value.
"""

from __future__ import annotations

import contextlib
import functools
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from minijax import core
from minijax.array import Array
from minijax.core import ShapedArray
from minijax.primitives.elementwise import convert_element_type_p

REFS_ISSUE = "issue 24"
functools_partial = functools.partial


class AbstractRef:
    """The type of a ``Ref``: printed ``Ref{float32[3]}`` as JAX prints it."""

    __slots__ = ("inner_aval",)

    def __init__(self, inner_aval: ShapedArray) -> None:
        self.inner_aval = inner_aval

    @property
    def shape(self) -> tuple[int, ...]:
        return self.inner_aval.shape

    @property
    def dtype(self) -> Any:
        return self.inner_aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.inner_aval.shape)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbstractRef) and other.inner_aval == self.inner_aval

    def __hash__(self) -> int:
        return hash(("Ref", self.inner_aval))

    def __str__(self) -> str:
        # JAX prints a ref's type without its value's weak-type mark.
        return f"Ref{{{str(self.inner_aval).lstrip('~')}}}"

    __repr__ = __str__


def _whole(idx: Any) -> bool:
    return idx is Ellipsis or (isinstance(idx, tuple) and (idx == () or idx == (Ellipsis,)))


class Ref:
    """A mutable array: ``ref[idx]`` reads, ``ref[idx] = v`` writes (NumPy indexing).

    Not an array: arithmetic and ``jnp`` functions reject it; read it first (``ref[...]``).
    """

    __slots__ = ("_value", "_home", "__weakref__")

    def __init__(self, value: Any) -> None:
        self._value = value
        self._home = core.current_trace()

    # --- what it is -----------------------------------------------------------------
    @property
    def aval(self) -> AbstractRef:
        return AbstractRef(core.get_aval(self._value))

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._value.shape)

    @property
    def dtype(self) -> Any:
        return self._value.dtype

    @property
    def ndim(self) -> int:
        return len(self._value.shape)

    @property
    def size(self) -> int:
        size = 1
        for d in self._value.shape:
            size *= d
        return size

    def __len__(self) -> int:
        if not self._value.shape:
            raise TypeError("len() of unsized object")
        return int(self._value.shape[0])

    def __repr__(self) -> str:
        self._check_trace("print")
        text = repr(self._value)
        # Array(...) -> Ref(...): JAX keeps the continuation lines' indentation as it is.
        return "Ref" + text[text.index("("):] if text.startswith("Array(") else f"Ref({text})"

    __str__ = __repr__

    def unsafe_buffer_pointer(self) -> int:
        """The address of the buffer holding the ref's value now. A write gives the ref a new
        Array (refs are discharged), so unlike JAX's the address changes."""
        self._check_trace("unsafe_buffer_pointer")
        buf = getattr(self._value, "_buf", None)
        pointer = getattr(buf, "unsafe_buffer_pointer", None)
        if callable(pointer):
            return int(pointer())
        if isinstance(buf, np.ndarray):  # the NumPy backend's buffer
            return int(buf.ctypes.data)
        raise NotImplementedError(f"unsafe_buffer_pointer: the backend's buffers ({type(buf).__name__}) give no address")

    # --- reading and writing --------------------------------------------------------------
    def _check_trace(self, what: str) -> None:
        if core.current_trace() is not self._home:
            raise NotImplementedError(
                f"minijax cannot {what} the Ref of type {self.aval} here: it was created outside the "
                "transformation being traced (a function that closes over a Ref, under jit, vmap, grad, "
                "scan, ...). JAX discharges such refs into the transformation's inputs and outputs; minijax "
                f"does that only for Refs passed to jit as arguments ({REFS_ISSUE}). Pass the Ref to the "
                "jitted function as an argument, or create it inside the function."
            )

    def get(self, idx: Any = Ellipsis) -> Any:
        self._check_trace("read")
        if _whole(idx):
            return self._value
        _check_int_bounds(idx, self.shape)
        return self._value[idx]

    def swap(self, idx: Any, value: Any) -> Any:
        """``old, self[idx] = self[idx], value``; returns ``old``."""
        self._check_trace("write")
        old = self.get(idx)
        value = _checked_value(self, old, value)
        self._value = value if _whole(idx) else self._value.at[idx].set(value)
        return old

    def __getitem__(self, idx: Any) -> Any:
        return self.get(idx)

    def __setitem__(self, idx: Any, value: Any) -> None:
        self.swap(idx, value)

    def addupdate(self, idx: Any, value: Any) -> None:
        """``self[idx] += value``."""
        self._check_trace("write")
        old = self.get(idx)
        value = _checked_value(self, old, value)
        self._value = old + value if _whole(idx) else self._value.at[idx].add(value)

    def freeze(self) -> Any:
        """The ref's final value (``jax.freeze``)."""
        return self.get(Ellipsis)


def _check_int_bounds(idx: Any, shape: tuple[int, ...]) -> None:
    """JAX's rule for a ref's static integer indices: in bounds, or a ValueError (an Array's
    out-of-bounds index would be clamped; a ref's is refused)."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    if any(p is Ellipsis or p is None for p in parts):
        return  # the dimensions an integer indexes are not simply its position
    for i, dim in zip(parts, shape):
        if isinstance(i, (int, np.integer)) and not isinstance(i, bool) and not -dim <= int(i) < dim:
            raise ValueError(f"Out of bound indexer: idx={i}, dim={dim}.")


def _checked_value(ref: Ref, old: Any, value: Any) -> Any:
    """``value`` as what ``ref[idx]`` holds: JAX's rules for ``swap``. The shape must be the
    indexed part's exactly (no broadcasting); the dtype its dtype, a weakly typed value
    (a Python scalar) taking the ref's dtype."""
    aval = core.get_aval(value)  # raises TypeError for what is not an array
    if aval.dtype != old.dtype and not aval.weak_type:
        raise ValueError(f"Invalid dtype for `swap`. Ref dtype: {ref.dtype}. Value dtype: {aval.dtype}. ")
    if tuple(aval.shape) != tuple(old.shape):
        raise ValueError(
            f"Invalid shape for `swap`. Ref shape: {ref.shape}. Expected shape: {tuple(old.shape)}. "
            f"Value shape: {tuple(aval.shape)}. Transforms: (). "
        )
    # A ref's type is strong (JAX's ``Ref{int32[]}``): what is written loses its weak type, so that a ref
    # made of a Python scalar prints weak_type=True only until its first write, as in JAX.
    if isinstance(value, (Array, core.Tracer)) and aval.dtype == old.dtype and not aval.weak_type:
        return value
    return convert_element_type_p.bind(value, new_dtype=np.dtype(old.dtype), weak_type=False, sharding=None)


# --- refs reached by a function: lent to the transformation that traces it ----------------


def closed_refs(fun: Callable[..., Any], depth: int = 3) -> list[Ref]:
    """The Refs ``fun`` reaches as a global of its code or a closure cell, and through the
    functions it reaches that way (a helper it calls; a wrapper that closes over the user's
    function, as ``fori_loop``'s does), ``depth`` levels down; minijax's own functions hold
    no refs and are not searched. Refs reached any other way (an object's attribute, a
    method) are not found: their first use under the transformation raises
    NotImplementedError (``Ref._check_trace``)."""
    found: list[Ref] = []
    seen: set[int] = set()

    def visit(f: Any, level: int) -> None:
        while isinstance(f, functools_partial):
            for arg in (*f.args, *f.keywords.values()):
                if isinstance(arg, Ref) and arg not in found:
                    found.append(arg)
            f = f.func
        if getattr(f, LENDS_REFS, False):  # a wrapper that lends them already (``lending``)
            return
        f = getattr(f, "__wrapped__", f)
        code = getattr(f, "__code__", None)
        if code is None or id(f) in seen:
            return
        seen.add(id(f))
        for cell in getattr(f, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if isinstance(value, Ref):
                if value not in found:
                    found.append(value)
            elif level > 0 and isinstance(value, (types.FunctionType, functools_partial)):
                visit(value, level - 1)
        # minijax's own modules hold no refs: only the closures of its functions (wrappers of
        # the user's) are searched.
        module_globals = {} if _is_minijax(f) else getattr(f, "__globals__", None) or {}
        for name in _global_names(code) if module_globals else ():
            value = module_globals.get(name)
            if isinstance(value, Ref):
                if value not in found:
                    found.append(value)
            elif level > 0 and isinstance(value, types.FunctionType):
                visit(value, level - 1)

    visit(fun, depth)
    return found


def _global_names(code: types.CodeType) -> Iterator[str]:
    """The names ``code`` and the functions defined in it (a loop body written inside the
    jitted function) may read as globals."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _global_names(const)


def _is_minijax(f: Any) -> bool:
    module = getattr(f, "__module__", None) or ""
    return module == "minijax" or module.startswith(("minijax.", "minijax_"))


@contextlib.contextmanager
def lent(refs: Sequence[Ref], values: Sequence[Any]) -> Iterator[None]:
    """Inside: each ref holds the given value (a tracer of the transformation tracing now) and
    belongs to the current trace; after, it holds what it held before (the caller writes the
    final values back at its own level)."""
    saved = [(ref._value, ref._home) for ref in refs]
    here = core.current_trace()
    for ref, value in zip(refs, values):
        ref._value, ref._home = value, here
    try:
        yield
    finally:
        for ref, (value, home) in zip(refs, saved):
            ref._value, ref._home = value, home


LENDS_REFS = "_minijax_lends_refs"


def lending(wrapper: Callable[..., Any], name_from: Any = None) -> Callable[..., Any]:
    """Mark ``wrapper`` as a function that lends refs itself: ``closed_refs`` of it is empty,
    so that the transformation tracing it threads no ref twice. Named as ``name_from`` (for
    errors and jaxprs)."""
    setattr(wrapper, LENDS_REFS, True)
    if name_from is not None:
        for attr in ("__name__", "__qualname__", "__module__"):
            value = getattr(name_from, attr, None)
            if value is not None:
                setattr(wrapper, attr, value)
    return wrapper


def values_of(refs: Sequence[Ref]) -> list[Any]:
    return [ref.get(Ellipsis) for ref in refs]


def write_back(refs: Sequence[Ref], values: Sequence[Any]) -> None:
    for ref, value in zip(refs, values):
        ref._check_trace("write")
        ref._value = value
