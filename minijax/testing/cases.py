"""What a primitive sampler produces: a ``Case`` (a primitive, params, how to make operands, flags).

A sampler draws the *structure* of a case with hypothesis -- dtypes, shapes,
params -- and returns a ``Case`` whose ``make_args(rng)`` produces operand
values from a NumPy generator. Separating the two lets a law ask for several
independent operand values of one structure (vmap stacks them into a batch)
while hypothesis still shrinks the structure of a failing case.

Values are drawn inside the primitive's *differentiable domain*: away from
poles, branch cuts, kinks, ties and discontinuities, by a margin the
finite-difference step cannot cross. Every operand's values are valid on
their own, so operands of different ``make_args`` calls may be mixed.

Flags (per case, as they may depend on the drawn dtypes):

* ``differentiable``: the operand positions the output depends on
  differentiably; derivatives with respect to them are checked against
  finite differences. Empty for primitives whose derivative is zero
  (comparisons, ``stop_gradient``) or that have integer outputs.
* ``linear``: groups of operand positions in which the primitive is jointly
  linear while the other operands are held fixed (``add``: ``((0, 1),)``,
  ``mul``: ``((0,), (1,))``, ``select_n``: the cases). Its transpose rule is
  checked on each group.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

from minijax import dtypes
from minijax.core import Primitive, ShapedArray, primitive_registry, shape_size
from minijax.testing import strategies as mst

Shape = tuple[int, ...]
NDArray = np.ndarray[Any, Any]
Draw = st.DrawFn
# (rng, shape, dtype) -> values of that shape and dtype
Values = Callable[[np.random.Generator, Shape, np.dtype[Any]], NDArray]

# Dtype kinds (see strategies.dtype_list), as the primitives' constraints name them.
FLOAT: tuple[str, ...] = ("float",)
INT: tuple[str, ...] = ("int", "uint")
SIGNED: tuple[str, ...] = ("int", "float")
NUMBER: tuple[str, ...] = ("int", "uint", "float")
INT_BOOL: tuple[str, ...] = ("bool", "int", "uint")
ANY: tuple[str, ...] = ("bool", "int", "uint", "float")


@dataclasses.dataclass(frozen=True)
class Case:
    """One primitive application: params, operand avals, and a maker of operand values."""

    prim: Primitive
    params: Mapping[str, Any]
    avals: tuple[ShapedArray, ...]
    make_args: Callable[[np.random.Generator], list[NDArray]] = dataclasses.field(repr=False)
    differentiable: tuple[int, ...] = ()
    linear: tuple[tuple[int, ...], ...] = ()

    def args(self, rng: np.random.Generator) -> list[NDArray]:
        return self.make_args(rng)

    def apply(self, *args: Any) -> Any:
        """The primitive applied to ``args`` (a list for multiple results)."""
        return self.prim.bind(*args, **self.params)

    def restricted(self, positions: Sequence[int], args: Sequence[Any]) -> Callable[..., Any]:
        """The primitive as a function of the operands at ``positions``, the others fixed to ``args``."""

        def f(*chosen: Any) -> Any:
            full = list(args)
            for i, x in zip(positions, chosen):
                full[i] = x
            return self.apply(*full)

        return f

    def __repr__(self) -> str:
        operands = ", ".join(a.str_short() for a in self.avals)
        flags = f"differentiable={self.differentiable}, linear={self.linear}"
        return f"Case({self.prim.name}({operands}), params={dict(self.params)}, {flags})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # what hypothesis prints for a failing example
        printer.text(repr(self))


@dataclasses.dataclass(frozen=True)
class Sampler:
    """How to draw cases of one primitive.

    ``kinds``: the dtype kinds its data operands take. ``differentiable`` /
    ``linear``: whether its floating cases have differentiable operands /
    linear groups (the laws pick their primitives by these; each case has
    the operand-level flags).
    """

    name: str
    build: Callable[[Draw, np.dtype[Any]], Case]
    kinds: tuple[str, ...]
    differentiable: bool = True
    linear: bool = False

    @property
    def prim(self) -> Primitive:
        return primitive_registry[self.name]

    def accepts(self, dtype: Any) -> bool:
        return _kind(np.dtype(dtype)) in self.kinds

    def cases(self, dtype: Any = None) -> st.SearchStrategy[Case]:
        """Cases whose data operands have ``dtype`` (by default one of ``kinds``, drawn)."""
        if dtype is not None and not self.accepts(dtype):
            raise ValueError(f"sampler {self.name}: dtype {np.dtype(dtype).name} is not one of its kinds {self.kinds}")

        @st.composite
        def draw_case(draw: Draw) -> Case:
            dt = np.dtype(dtype) if dtype is not None else draw(mst.dtypes(self.kinds))
            return self.build(draw, dt)

        return draw_case()


def _kind(dt: np.dtype[Any]) -> str:
    if dt == np.bool_:
        return "bool"
    if dtypes.issubdtype(dt, np.floating):
        return "float"
    return "uint" if dtypes.issubdtype(dt, np.unsignedinteger) else "int"


def is_float(dt: Any) -> bool:
    return dtypes.issubdtype(np.dtype(dt), np.floating)


def is_inexact(dt: Any) -> bool:
    """Floating or complex: a value with a derivative."""
    return dtypes.issubdtype(np.dtype(dt), np.inexact)


# ---------------------------------------------------------------------------
# Building cases


@dataclasses.dataclass(frozen=True)
class Operand:
    shape: Shape
    dtype: np.dtype[Any]
    values: Values

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype)


def case(
    name: str,
    params: Mapping[str, Any],
    operands: Sequence[Operand],
    differentiable: Sequence[int] = (),
    linear: Sequence[Sequence[int]] = (),
    make_args: Callable[[np.random.Generator], list[NDArray]] | None = None,
) -> Case:
    """A case whose operands are drawn independently (or by ``make_args`` when they depend on each other).

    Only floating (or complex) operands of a primitive with floating (or complex)
    outputs count as differentiable or linear; the flags of the others are dropped.
    """
    prim = primitive_registry[name]
    avals = tuple(op.aval for op in operands)
    out = prim.abstract_eval(*avals, **params)
    floats_out = all(is_inexact(a.dtype) for a in (out if prim.multiple_results else [out]))
    smooth = {i for i, op in enumerate(operands) if is_inexact(op.dtype)} if floats_out else set()
    diff = tuple(i for i in differentiable if i in smooth)
    lin = tuple(tuple(g) for g in linear if set(g) <= smooth)

    def independent(rng: np.random.Generator) -> list[NDArray]:
        return [op.values(rng, op.shape, op.dtype) for op in operands]

    return Case(prim, dict(params), avals, make_args or independent, diff, lin)


# ---------------------------------------------------------------------------
# Value domains. Integer dtypes get the integers of the interval (non-negative
# ones for unsigned dtypes); booleans are random.


def _cast(x: NDArray, dtype: np.dtype[Any]) -> NDArray:
    return np.asarray(np.asarray(x).astype(dtype))


def _integers(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any], lo: float, hi: float) -> NDArray:
    info = np.iinfo(dtype)
    low, high = max(int(np.ceil(lo)), int(info.min)), min(int(np.floor(hi)), int(info.max))
    if low > high:  # e.g. negative-only intervals for unsigned dtypes
        low, high = max(0, int(info.min)), min(3, int(info.max))
    return _cast(rng.integers(low, high, size=shape, endpoint=True), dtype)


def uniform(lo: float, hi: float) -> Values:
    """Values in [lo, hi]."""

    def values(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any]) -> NDArray:
        if dtype == np.bool_:
            return np.asarray(rng.random(shape) < 0.5)
        if not is_float(dtype):
            return _integers(rng, shape, dtype, lo, hi)
        return _cast(rng.uniform(lo, hi, shape), dtype)

    return values


def magnitude(lo: float, hi: float) -> Values:
    """Values with |x| in [lo, hi] and a random sign (positive for unsigned dtypes): away from 0."""

    def values(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any]) -> NDArray:
        if dtype == np.bool_:
            return np.ones(shape, np.bool_)
        sign = np.where(rng.random(shape) < 0.5, -1, 1)
        if dtypes.issubdtype(dtype, np.unsignedinteger):
            sign = np.ones(shape, np.int64)
        if not is_float(dtype):
            return _cast(sign * _integers(rng, shape, np.dtype(np.int64), max(lo, 1), max(hi, 1)), dtype)
        return _cast(sign * rng.uniform(lo, hi, shape), dtype)

    return values


def off_integers(lo: float, hi: float) -> Values:
    """Values k + u with k an integer in [-3, 3] and u in [lo, hi]: away from the steps of
    floor/ceil (lo > 0, hi < 1) or round (|u| < 0.5)."""

    def values(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any]) -> NDArray:
        if not is_float(dtype):
            return uniform(-3, 3)(rng, shape, dtype)
        return _cast(rng.integers(-3, 4, shape) + rng.uniform(lo, hi, shape), dtype)

    return values


def distinct(spacing: float = 0.5) -> Values:
    """Pairwise distinct values (a shuffled grid with small jitter): no ties for max/min/argmax."""

    def values(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any]) -> NDArray:
        n = shape_size(shape)
        if dtype == np.bool_:
            return np.asarray(rng.random(shape) < 0.5)
        grid = rng.permutation(n) - n // 2
        if not is_float(dtype):
            if dtypes.issubdtype(dtype, np.unsignedinteger):
                grid = grid + n // 2
            return _cast(grid.reshape(shape), dtype)
        jitter = rng.uniform(-0.1, 0.1, n) * spacing
        return _cast(((grid + jitter) * spacing).reshape(shape), dtype)

    return values


def indices(lo: int, hi: int) -> Values:
    """Integer values in [lo, hi], whatever the dtype asked (start indices, selectors)."""

    def values(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any]) -> NDArray:
        return _integers(rng, shape, dtype, lo, hi)

    return values


def moderate() -> Values:
    return uniform(-3, 3)


# ---------------------------------------------------------------------------
# Shapes

# Sides 1-3, and now and then 0: zero-size operands are legal and cheap to
# get wrong, but say little about a rule when every example has one.
SIDES = st.sampled_from((2, 3, 1, 2, 3, 1, 2, 3, 1, 0))


def shape(draw: Draw, min_rank: int = 0, max_rank: int = 3, sides: st.SearchStrategy[int] = SIDES) -> Shape:
    rank = draw(st.integers(min_rank, max_rank))
    return tuple(draw(sides) for _ in range(rank))


def broadcast_operand_shape(draw: Draw, result: Shape) -> Shape:
    """The shape of an n-ary operand that broadcasts to ``result`` (rank 0, or sides kept or 1)."""
    return draw(mst.broadcastable_shapes(result))


def subset(draw: Draw, ndim: int, ordered: bool = True) -> tuple[int, ...]:
    return draw(mst.axes_subsets(ndim, ordered))


__all__ = [
    "ANY",
    "FLOAT",
    "INT",
    "INT_BOOL",
    "NUMBER",
    "SIGNED",
    "SIDES",
    "Case",
    "Operand",
    "Sampler",
    "broadcast_operand_shape",
    "case",
    "distinct",
    "indices",
    "is_float",
    "is_inexact",
    "magnitude",
    "moderate",
    "off_integers",
    "shape",
    "subset",
    "uniform",
]
