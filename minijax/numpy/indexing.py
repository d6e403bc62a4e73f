"""NumPy's basic indexing, ``x[idx]``, and the ``x.at[idx]`` update helper.

Supported indices: integers (static, or traced/array scalars), slices with
static entries and any step, ``None``, ``Ellipsis``, scalar booleans, and
tuples of these. Advanced indexing (integer or boolean arrays) lowers to
gather/scatter, which minijax does not have yet: it raises NotImplementedError.

The lowering is JAX's, so jaxprs match:

* every integer static and in bounds: one ``slice`` (omitted when it keeps
  everything), then ``rev`` for negative steps, ``squeeze`` for the integer
  indices and ``expand_dims`` (a ``broadcast_in_dim``) for ``None``;
* otherwise (a traced integer, or a static one out of bounds, which JAX
  clamps rather than rejects): a ``dynamic_slice`` reading the same region,
  whose start indices ``lax.dynamic_slice`` wraps when negative, then the same
  ``rev``/``squeeze``/``expand_dims``.

A step other than +-1 next to a traced integer (JAX uses gather there) is a
``dynamic_slice`` of the covering region followed by a strided ``slice``.
"""

from __future__ import annotations

import enum
import operator
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minijax import core, dtypes, lax as lax
from minijax.array import Array
from minijax.dispatch import device_put_value
from minijax.errors import JAXIndexError
from minijax.numpy import util

__all__ = ["NonConcreteBooleanIndexError", "at_helper", "getitem"]

_ADVANCED_MSG = "advanced (integer or boolean array) indexing is not supported by minijax yet"


class NonConcreteBooleanIndexError(JAXIndexError):
    """A boolean index whose value is not known while tracing (JAX's error of the same name)."""

    def __init__(self, aval: core.ShapedArray) -> None:
        super().__init__(
            f"Array boolean indices must be concrete; got {aval.str_short()}\n\n"
            "See https://docs.jax.dev/en/latest/errors.html#jax.errors.NonConcreteBooleanIndexError"
        )


# ---------------------------------------------------------------------------
# Parsing: each entry of the index gets a kind


class _Kind(enum.Enum):
    NONE = "None"
    ELLIPSIS = "Ellipsis"
    SLICE = "slice"
    INT = "static integer"  # a Python or NumPy integer
    SCALAR = "integer scalar array"  # a 0-d integer array or tracer: read at run time
    BOOL = "boolean scalar"  # a concrete True/False: a new axis of length 1 or 0


@dataclass(frozen=True)
class _Entry:
    kind: _Kind
    value: Any
    axis: int = -1  # the input axis it consumes (slices and integers)


def _classify(entry: Any) -> tuple[_Kind, Any]:
    """The kind of one index entry; TypeError/IndexError/NotImplementedError as JAX would refuse it."""
    if entry is None:
        return _Kind.NONE, None
    if entry is Ellipsis:
        return _Kind.ELLIPSIS, None
    if isinstance(entry, slice):
        return _Kind.SLICE, entry
    if isinstance(entry, (bool, np.bool_)):
        return _Kind.BOOL, bool(entry)
    if isinstance(entry, (int, np.integer)):
        return _Kind.INT, entry
    if isinstance(entry, str):
        raise TypeError(f"JAX does not support string indexing; got idx={entry!r}")
    if isinstance(entry, (list, tuple)):  # a sequence inside the index tuple is an index array
        entry = np.asarray(entry) if entry else np.zeros((0,), np.int32)
    if isinstance(entry, (Array, core.Tracer, np.ndarray)):
        aval = core.get_aval(entry)
        if not (dtypes.issubdtype(aval.dtype, np.integer) or aval.dtype == np.bool_):
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {aval.dtype.name}")
        if aval.ndim:
            raise NotImplementedError(f"{_ADVANCED_MSG}; got an index of shape {aval.shape}.")
        if aval.dtype != np.bool_:
            return _Kind.SCALAR, entry
        value = entry.to_concrete_value() if isinstance(entry, core.Tracer) else np.asarray(entry)
        if value is None:
            raise NonConcreteBooleanIndexError(aval)
        return _Kind.BOOL, bool(value)
    if isinstance(entry, (float, complex, np.generic)):
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {np.dtype(type(entry)).name}")
    raise IndexError(
        "only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and integer or boolean arrays "
        f"are valid indices. Got {entry}"
    )


def _entries(idx: Any, shape: Sequence[int]) -> list[_Entry]:
    """The index as one entry per consumed or created axis, the Ellipsis and trailing ``:`` expanded."""
    if isinstance(idx, list):
        raise TypeError(
            "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
            "`arr[array(seq)]` instead of `arr[seq]`. See https://github.com/jax-ml/jax/issues/4564 "
            "for more information."
        )
    raw = idx if isinstance(idx, tuple) else (idx,)
    kinds = [_classify(e) for e in raw]
    if sum(k is _Kind.ELLIPSIS for k, _ in kinds) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(k in (_Kind.SLICE, _Kind.INT, _Kind.SCALAR) for k, _ in kinds)
    if consumed > len(shape):
        raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but {consumed} were indexed")
    out: list[_Entry] = []
    axis = 0
    for kind, value in kinds:
        if kind is _Kind.ELLIPSIS:
            for _ in range(len(shape) - consumed):
                out.append(_Entry(_Kind.SLICE, slice(None), axis))
                axis += 1
        elif kind in (_Kind.SLICE, _Kind.INT, _Kind.SCALAR):
            out.append(_Entry(kind, value, axis))
            axis += 1
        else:
            out.append(_Entry(kind, value))
    out.extend(_Entry(_Kind.SLICE, slice(None), a) for a in range(axis, len(shape)))
    return out


# ---------------------------------------------------------------------------
# Planning: which region to read, and how to reshape it


@dataclass
class _Plan:
    """How to compute ``x[idx]``: read a region, stride it, reverse, squeeze, add axes."""

    starts: list[Any] = field(default_factory=list)  # per input axis: int, or a scalar array
    sizes: list[int] = field(default_factory=list)  # extent of the region read, per axis
    strides: list[int] = field(default_factory=list)
    rev_axes: list[int] = field(default_factory=list)
    squeeze_axes: list[int] = field(default_factory=list)
    new_axes: list[int] = field(default_factory=list)  # output positions of inserted axes
    empty_axis: int | None = None  # an inserted axis of length 0 (a False boolean index)
    dynamic: bool = False  # the region's start depends on run-time values

    def counts(self) -> list[int]:
        """Elements selected along each input axis."""
        return [-(-n // s) if n > 0 else 0 for n, s in zip(self.sizes, self.strides)]

    def out_shape(self) -> tuple[int, ...]:
        dims = [c for i, c in enumerate(self.counts()) if i not in self.squeeze_axes]
        for pos in self.new_axes:
            dims.insert(pos, 0 if pos == self.empty_axis else 1)
        return tuple(dims)


def _slice_entry(s: slice, size: int, axis: int) -> tuple[int, int, int, bool]:
    """(first element, extent read, stride, reversed) for a slice of an axis of ``size``."""
    if any(isinstance(v, core.Tracer) and v.to_concrete_value() is None for v in (s.start, s.stop, s.step)):
        raise IndexError(f"Slice entries must be static integers. Got {s} for axis {axis}")
    # operator.index raises TypeError for floats, as JAX does.
    bounds = [None if v is None else operator.index(core.concrete_or_error(v)) for v in (s.start, s.stop, s.step)]
    start, stop, step = slice(*bounds).indices(size)
    if step > 0:
        return start, max(start, stop) - start, step, False
    # A negative step reads the same elements as a positive one from the
    # lowest selected element, and reverses them afterwards.
    first = min(size, stop + 1 + abs(start - stop - 1) % -step)
    return first, max(first, start + 1) - first, -step, True


def _in_bounds(i: int, size: int) -> bool:
    return -size <= i < size


def _plan(entries: list[_Entry], shape: Sequence[int]) -> _Plan:
    """The plan for the parsed index: static when every integer is static and in bounds."""
    plan = _Plan()
    plan.dynamic = any(
        e.kind is _Kind.SCALAR or (e.kind is _Kind.INT and not _in_bounds(int(e.value), shape[e.axis]))
        for e in entries
    )
    out_pos = 0  # output axes produced so far
    bool_positions: list[int] = []  # entry positions of boolean scalars
    for position, e in enumerate(entries):
        if e.kind is _Kind.NONE:
            plan.new_axes.append(out_pos)
            out_pos += 1
        elif e.kind is _Kind.BOOL:
            bool_positions.append(position)
        elif e.kind is _Kind.SLICE:
            first, extent, stride, reverse = _slice_entry(e.value, shape[e.axis], e.axis)
            plan.starts.append(first)
            plan.sizes.append(extent)
            plan.strides.append(stride)
            if reverse:
                plan.rev_axes.append(e.axis)
            out_pos += 1
        else:  # an integer: a region of one element, squeezed away
            if shape[e.axis] == 0:
                raise IndexError(f"index is out of bounds for axis {e.axis} with size 0")
            start = e.value if plan.dynamic else operator.index(e.value) % shape[e.axis]
            plan.starts.append(start)
            plan.sizes.append(1)
            plan.strides.append(1)
            plan.squeeze_axes.append(e.axis)
    if bool_positions:
        _place_boolean_axis(plan, entries, bool_positions)
    return plan


def _place_boolean_axis(plan: _Plan, entries: list[_Entry], bool_positions: list[int]) -> None:
    """Insert the one axis all scalar booleans make together (NumPy's advanced-index rule).

    Booleans and integers are NumPy's advanced indices here: when they are
    adjacent the new axis sits where they are, otherwise it goes first.
    """
    advanced = [i for i, e in enumerate(entries) if e.kind in (_Kind.BOOL, _Kind.INT, _Kind.SCALAR)]
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1))
    pos = sum(e.kind in (_Kind.SLICE, _Kind.NONE) for e in entries[: advanced[0]]) if adjacent else 0
    plan.new_axes = sorted([p + (p >= pos) for p in plan.new_axes] + [pos])
    if not all(entries[i].value for i in bool_positions):
        plan.empty_axis = pos


def _index_dtype(shape: Sequence[int]) -> np.dtype[Any]:
    """The dtype of dynamic_slice start indices: int32 unless an axis is too long for it."""
    return np.dtype(np.int32) if max(shape, default=0) < 2**31 else dtypes.default_int_dtype()


def _dynamic_starts(starts: list[Any], shape: Sequence[int]) -> list[Any]:
    """dynamic_slice's start indices, all as arrays (of one dtype when there are several).

    Like JAX, static starts become array constants too, so lax.dynamic_slice
    stages its negative-index wrap-around for every axis the same way.
    """
    if len(starts) == 1:
        (s,) = starts
        return [s if isinstance(s, (Array, core.Tracer)) else device_put_value(s)]
    dtype = _index_dtype(shape)
    return [
        util.convert_element_type(s, dtype) if isinstance(s, (Array, core.Tracer))
        else device_put_value(np.asarray(s).astype(dtype))
        for s in starts
    ]


def _read(x: Any, plan: _Plan, shape: Sequence[int]) -> Any:
    """Apply a plan to ``x``: the region, then its strides, reversals, squeezes and new axes."""
    nd = len(shape)
    out = x
    if plan.dynamic:
        out = lax.dynamic_slice(out, _dynamic_starts(plan.starts, shape), plan.sizes)
        if any(s != 1 for s in plan.strides):
            out = lax.slice(out, [0] * nd, plan.sizes, plan.strides)
    elif plan.starts != [0] * nd or plan.sizes != list(shape) or any(s != 1 for s in plan.strides):
        limits = [s + n for s, n in zip(plan.starts, plan.sizes)]
        strides = None if all(s == 1 for s in plan.strides) else plan.strides
        out = lax.slice(out, plan.starts, limits, strides)
    if plan.rev_axes:
        out = lax.rev(out, plan.rev_axes)
    if plan.squeeze_axes:
        out = lax.squeeze(out, plan.squeeze_axes)
    if plan.new_axes:
        out = lax.expand_dims(out, plan.new_axes)
    if plan.empty_axis is not None:
        out_shape = core.get_aval(out).shape
        limits = [0 if i == plan.empty_axis else d for i, d in enumerate(out_shape)]
        out = lax.slice(out, [0] * len(out_shape), limits)
    return out


def getitem(x: Any, idx: Any) -> Any:
    """``x[idx]`` for basic indices (what ``Array.__getitem__`` and tracers call)."""
    shape = core.get_aval(x).shape
    return _read(x, _plan(_entries(idx, shape), shape), shape)


# ---------------------------------------------------------------------------
# x.at[idx]: functional updates


_MODES = (None, "clip", "fill", "drop", "promise_in_bounds")


def _check_mode(mode: Any) -> str | None:
    if mode not in _MODES:
        raise ValueError(f'Unknown gather mode "{mode}"')
    return mode  # type: ignore[no-any-return]


def _default_fill(dtype: np.dtype[Any]) -> Any:
    """JAX's fill for out-of-bounds reads: NaN, the lowest signed / highest unsigned integer, True."""
    if dtype == np.bool_:
        return True
    if dtypes.issubdtype(dtype, np.signedinteger):
        return dtypes.iinfo(dtype).min
    if dtypes.issubdtype(dtype, np.unsignedinteger):
        return dtypes.iinfo(dtype).max
    return np.nan


class _IndexUpdateHelper:
    """What ``x.at`` returns: indexing it gives an ``_IndexUpdateRef``."""

    __slots__ = ("array",)

    def __init__(self, array: Any) -> None:
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


def at_helper(x: Any) -> _IndexUpdateHelper:
    """The value of ``x.at``."""
    return _IndexUpdateHelper(x)


# combine(old region, values) -> new region; None means "replace the region".
_Combine = Callable[[Any, Any], Any] | None


class _IndexUpdateRef:
    """``x.at[idx]``: read with ``.get()``, or build an updated copy with ``.set(y)``, ``.add(y)``, ...

    Updates work for static basic indices (integers, slices, None, Ellipsis,
    scalar booleans). Traced integers and array indices need scatter, which
    arrives with a later issue.
    """

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any) -> None:
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    # --- reading -------------------------------------------------------------
    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | None = None,
            fill_value: Any = None, out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        mode = _check_mode(mode)
        _check_wrap(wrap_negative_indices, "get")
        shape = core.get_aval(self.array).shape
        entries = _entries(self.index, shape)
        if mode in ("fill", "drop") and any(e.kind is _Kind.SCALAR for e in entries):
            raise NotImplementedError(
                f"x.at[...].get(mode={mode!r}) with traced integer indices needs gather, which minijax "
                "does not support yet; the default mode (clamping) works."
            )
        out_of_bounds = any(e.kind is _Kind.INT and not _in_bounds(int(e.value), shape[e.axis]) for e in entries)
        if mode in ("fill", "drop") and out_of_bounds:
            dtype = core.get_aval(self.array).dtype
            fill = _default_fill(dtype) if fill_value is None else fill_value
            out_shape = _plan(entries, shape).out_shape()
            return lax.broadcast_in_dim(util.convert_element_type(fill, dtype), out_shape, ())
        return _read(self.array, _plan(entries, shape), shape)

    # --- updating ------------------------------------------------------------
    def _update(self, method: str, values: Any, combine: _Combine, mode: str | None, wrap: bool) -> Any:
        mode = _check_mode(mode)
        _check_wrap(wrap, method)
        x = self.array
        aval = core.get_aval(x)
        entries = self._static_entries(method, aval.shape)
        resolved = _resolve_out_of_bounds(entries, aval.shape, clamp=mode in ("clip", "promise_in_bounds"))
        values = _update_values(x, values)
        plan = _plan(resolved if resolved is not None else entries, aval.shape)
        values = _broadcast_update(values, plan.out_shape())
        if resolved is None or 0 in plan.out_shape():
            return x  # every update falls outside the array, or none is selected: JAX drops them
        return _write(x, plan, values, combine)

    def _static_entries(self, method: str, shape: tuple[int, ...]) -> list[_Entry]:
        try:
            entries = _entries(self.index, shape)
        except NotImplementedError:
            raise _scatter_needed(method, "array (advanced) indices") from None
        static = []
        for e in entries:
            if e.kind is _Kind.SCALAR:
                value = e.value.to_concrete_value() if isinstance(e.value, core.Tracer) else core.concrete_or_error(e.value)
                if value is None:
                    raise _scatter_needed(method, "traced integer indices")
                e = _Entry(_Kind.INT, int(value), e.axis)
            static.append(e)
        return static

    def set(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | None = None, out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        return self._update("set", values, None, mode, wrap_negative_indices)

    def add(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | None = None, out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        return self._update("add", values, lax.add, mode, wrap_negative_indices)

    def subtract(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
                 mode: str | None = None, out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        return self._update("subtract", values, lax.sub, mode, wrap_negative_indices)

    def multiply(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
                 mode: str | None = None, out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        return self._update("multiply", values, lax.mul, mode, wrap_negative_indices)

    mul = multiply

    def divide(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
               mode: str | None = None, out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        # Like JAX: true division, so an integer array comes back as floats.
        dtype = util.to_inexact_dtype(dtypes.result_type(self.array, values))
        x = util.convert_element_type(self.array, dtype, core.get_aval(self.array).weak_type)
        return _IndexUpdateRef(x, self.index)._update("divide", values, lax.div, mode, wrap_negative_indices)

    def power(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
              mode: str | None = None, out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        return self._update("power", values, _power, mode, wrap_negative_indices)

    def min(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | None = None, out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        return self._update("min", values, lax.min, mode, wrap_negative_indices)

    def max(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | None = None, out_sharding: Any = None, wrap_negative_indices: bool = True) -> Any:
        return self._update("max", values, lax.max, mode, wrap_negative_indices)

    def apply(self, func: Callable[[Any], Any], *, indices_are_sorted: bool = False, unique_indices: bool = False,
              mode: str | None = None, wrap_negative_indices: bool = True) -> Any:
        zero = np.zeros((), core.get_aval(self.array).dtype)
        return self._update("apply", zero, lambda old, _: func(old), mode, wrap_negative_indices)


def _power(x: Any, y: Any) -> Any:
    import minijax.numpy as jnp  # the ufunc, for NumPy's integer-power semantics

    return jnp.power(x, y)


def _check_wrap(wrap: bool, method: str) -> None:
    if not wrap:
        raise NotImplementedError(f"x.at[...].{method}(wrap_negative_indices=False) is not supported by minijax yet.")


def _scatter_needed(method: str, what: str) -> NotImplementedError:
    return NotImplementedError(
        f"x.at[...].{method} with {what} is not supported by minijax yet: it needs scatter, and "
        "scatter-based updates arrive with a later issue. Static integers, slices, None and "
        "Ellipsis work today."
    )


def _resolve_out_of_bounds(entries: list[_Entry], shape: Sequence[int], clamp: bool) -> list[_Entry] | None:
    """Static integer entries made in-bounds by clamping, or None when an update would be dropped."""
    out = []
    for e in entries:
        if e.kind is _Kind.INT and not _in_bounds(int(e.value), shape[e.axis]):
            if not clamp:
                return None
            size = shape[e.axis]
            e = _Entry(_Kind.INT, 0 if int(e.value) < 0 else size - 1, e.axis)
        out.append(e)
    return out


def _update_values(x: Any, values: Any) -> Any:
    """The update as an operand of ``x``'s dtype (JAX warns when the cast may lose information)."""
    if isinstance(values, (list, tuple)):
        values = np.asarray(values)
    util.check_arraylike("scatter", values)
    aval = core.get_aval(x)
    value_dtype = dtypes.dtype(values, canonicalize=True)
    if dtypes.result_type(aval.strip_weak_type(), values) != aval.dtype:
        warnings.warn(
            f"scatter inputs have incompatible types: cannot safely cast value from dtype={value_dtype.name} "
            f"to dtype={aval.dtype.name} with jax_numpy_dtype_promotion=standard. In future JAX releases "
            "this will result in an error.",
            FutureWarning,
            stacklevel=4,
        )
    return util.convert_element_type(values, aval.dtype, aval.weak_type)


def _broadcast_update(values: Any, shape: tuple[int, ...]) -> Any:
    from minijax.numpy.shape_ops import broadcast_to

    return broadcast_to(values, shape)


def _write(x: Any, plan: _Plan, values: Any, combine: _Combine) -> Any:
    """``x`` with the region a static plan reads replaced by ``combine(region, values)``."""
    # Undo the view so the values line up with the region of x: drop the
    # inserted axes, restore the integer-indexed ones, undo the reversals.
    if plan.new_axes:
        values = lax.squeeze(values, plan.new_axes)
    if plan.squeeze_axes:
        values = lax.expand_dims(values, plan.squeeze_axes)
    if plan.rev_axes:
        values = lax.rev(values, plan.rev_axes)
    counts = plan.counts()
    limits = [s + (c - 1) * st + 1 for s, c, st in zip(plan.starts, counts, plan.strides)]
    unit = all(st == 1 for st in plan.strides)
    if combine is not None:
        old = lax.slice(x, plan.starts, limits, None if unit else plan.strides)
        values = combine(old, values)
    if unit:
        return lax.dynamic_update_slice(x, values, plan.starts)
    # Strided: spread the values out with interior padding, and select them.
    shape = core.get_aval(x).shape
    config = [(s, n - lim, st - 1) for s, lim, st, n in zip(plan.starts, limits, plan.strides, shape)]
    dtype = core.get_aval(x).dtype
    spread = lax.pad(values, np.zeros((), dtype), config)
    mask = lax.pad(lax.broadcast_in_dim(np.bool_(True), tuple(counts), ()), np.bool_(False), config)
    return lax.select_n(mask, x, spread)
