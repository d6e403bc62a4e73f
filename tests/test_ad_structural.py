"""Autodiff of the structural primitives: jvp, linearize, vjp and their laws.

Every structural primitive is linear in its array operands, so three laws
pin its rules down: the jvp agrees with central finite differences, the vjp
is the transpose of the linearized map (<ct, L t> = <L^T ct, t>, with
cotangents of exactly the operands' types), and both compose with jit. The
cases (``CASES``: one hypothesis strategy per primitive, shapes and params
random) are shared with ``test_batching_structural.py``. The rules are
bound directly (``prim.bind``) so that each test reaches exactly one rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import minijax as jax
import minijax.primitives.slicing as sl
import minijax.primitives.structural as sp
from minijax import dtypes, lax
from minijax.config import config
from minijax.core import primitive_named
from minijax.interpreters import ad
from minijax.primitives.elementwise import convert_element_type_p, mul_p
from minijax.testing import check_grads
from minijax.testing.checks import families

Shape = tuple[int, ...]
NDArray = np.ndarray[Any, Any]


# ---------------------------------------------------------------------------
# The cases: one strategy per primitive


@dataclasses.dataclass
class Case:
    """``fun(*args)`` applies one structural primitive; ``args`` are NumPy arrays.

    ``linear[i]`` says whether operand i is one the primitive is linear in
    (the start indices of the dynamic slices are not).
    """

    name: str
    fun: Callable[..., Any]
    args: list[NDArray]
    linear: list[bool]

    def __repr__(self) -> str:
        return f"Case({self.name}, {[(a.shape, a.dtype.name) for a in self.args]})"


def values(rng: np.random.Generator, shape: Shape, dtype: np.dtype[Any]) -> NDArray:
    """Random values of ``dtype``: moderate numbers, so finite differences are meaningful."""
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        return np.asarray(rng.integers(0, 100, size=shape)).astype(dtype)
    return np.asarray(rng.standard_normal(shape)).astype(dtype)


def _shape(draw: st.DrawFn, min_rank: int = 0, max_rank: int = 3, min_side: int = 0) -> Shape:
    rank = draw(st.integers(min_rank, max_rank))
    return tuple(draw(st.integers(min_side, 3)) for _ in range(rank))


@st.composite
def broadcast_in_dim_cases(draw: st.DrawFn, dtype: np.dtype[Any]) -> Case:
    x_shape = tuple(draw(st.sampled_from([1, 2, 3])) for _ in range(draw(st.integers(0, 3))))
    # Each operand axis keeps its size (a size-1 one may grow); new axes go in between.
    out: list[int] = []
    dims: list[int] = []
    for n in x_shape:
        out.extend(draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 1))))
        dims.append(len(out))
        out.append(draw(st.integers(0, 3)) if n == 1 else n)
    out.extend(draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 1))))
    fun = lambda x: sp.broadcast_in_dim_p.bind(x, shape=tuple(out), broadcast_dimensions=tuple(dims), sharding=None)  # noqa: E731
    return Case("broadcast_in_dim", fun, [values(draw(_rngs), x_shape, dtype)], [True])


@st.composite
def reshape_cases(draw: st.DrawFn, dtype: np.dtype[Any]) -> Case:
    shape = _shape(draw)
    size = int(np.prod(shape))
    candidates = [(size,), shape[::-1], (1, *shape, 1)]
    candidates += [(size // k, k) for k in (2, 3) if size % k == 0]
    new_sizes = draw(st.sampled_from(candidates))
    dims = draw(st.one_of(st.none(), st.permutations(range(len(shape))).map(tuple)))
    fun = lambda x: sp.reshape_p.bind(x, new_sizes=tuple(new_sizes), dimensions=dims, sharding=None)  # noqa: E731
    return Case("reshape", fun, [values(draw(_rngs), shape, dtype)], [True])


@st.composite
def transpose_cases(draw: st.DrawFn, dtype: np.dtype[Any]) -> Case:
    shape = _shape(draw)
    perm = tuple(draw(st.permutations(range(len(shape)))))
    fun = lambda x: sp.transpose_p.bind(x, permutation=perm)  # noqa: E731
    return Case("transpose", fun, [values(draw(_rngs), shape, dtype)], [True])


@st.composite
def squeeze_cases(draw: st.DrawFn, dtype: np.dtype[Any]) -> Case:
    shape = tuple(draw(st.sampled_from([1, 1, 2, 3])) for _ in range(draw(st.integers(1, 4))))
    ones = [i for i, n in enumerate(shape) if n == 1]
    dims = tuple(i for i in ones if draw(st.booleans()))
    fun = lambda x: sp.squeeze_p.bind(x, dimensions=dims)  # noqa: E731
    return Case("squeeze", fun, [values(draw(_rngs), shape, dtype)], [True])


@st.composite
def rev_cases(draw: st.DrawFn, dtype: np.dtype[Any]) -> Case:
    shape = _shape(draw)
    dims = tuple(i for i in range(len(shape)) if draw(st.booleans()))
    fun = lambda x: sp.rev_p.bind(x, dimensions=dims)  # noqa: E731
    return Case("rev", fun, [values(draw(_rngs), shape, dtype)], [True])


@st.composite
def reduce_sum_cases(draw: st.DrawFn, dtype: np.dtype[Any]) -> Case:
    shape = _shape(draw)
    axes = tuple(i for i in range(len(shape)) if draw(st.booleans()))
    sum_dtype = dtype if dtype != np.bool_ else np.dtype(np.int32)  # sums of booleans are not defined
    fun = lambda x: sp.reduce_sum_p.bind(x, axes=axes, out_sharding=None)  # noqa: E731
    return Case("reduce_sum", fun, [values(draw(_rngs), shape, sum_dtype)], [True])


@st.composite
def slice_cases(draw: st.DrawFn, dtype: np.dtype[Any]) -> Case:
    shape = _shape(draw, min_rank=1)
    starts, limits = [], []
    for n in shape:
        a, b = sorted(draw(st.integers(0, n)) for _ in range(2))
        starts.append(a)
        limits.append(b)
    strides = draw(st.one_of(st.none(), st.tuples(*[st.integers(1, 3)] * len(shape))))
    fun = lambda x: sl.slice_p.bind(x, start_indices=tuple(starts), limit_indices=tuple(limits), strides=strides)  # noqa: E731
    return Case("slice", fun, [values(draw(_rngs), shape, dtype)], [True])


def _start_index(draw: st.DrawFn, n: int) -> NDArray:
    # Out-of-range starts included: the primitive clamps them into range.
    return np.asarray(draw(st.integers(-2, n + 2)), np.int32)


@st.composite
def dynamic_slice_cases(draw: st.DrawFn, dtype: np.dtype[Any]) -> Case:
    shape = _shape(draw)
    sizes = tuple(draw(st.integers(0, n)) for n in shape)
    starts = [_start_index(draw, n) for n in shape]
    fun = lambda x, *i: sl.dynamic_slice_p.bind(x, *i, slice_sizes=sizes)  # noqa: E731
    return Case("dynamic_slice", fun, [values(draw(_rngs), shape, dtype), *starts], [True] + [False] * len(starts))


@st.composite
def dynamic_update_slice_cases(draw: st.DrawFn, dtype: np.dtype[Any]) -> Case:
    shape = _shape(draw)
    u_shape = tuple(draw(st.integers(0, n)) for n in shape)
    starts = [_start_index(draw, n) for n in shape]
    rng = draw(_rngs)
    args = [values(rng, shape, dtype), values(rng, u_shape, dtype), *starts]
    return Case("dynamic_update_slice", sl.dynamic_update_slice_p.bind, args, [True, True] + [False] * len(starts))


@st.composite
def concatenate_cases(draw: st.DrawFn, dtype: np.dtype[Any]) -> Case:
    shape = _shape(draw, min_rank=1)
    dim = draw(st.integers(0, len(shape) - 1))
    rng = draw(_rngs)
    args = []
    for _ in range(draw(st.integers(1, 3))):
        piece = list(shape)
        piece[dim] = draw(st.integers(0, 3))
        args.append(values(rng, tuple(piece), dtype))
    fun = lambda *xs: sp.concatenate_p.bind(*xs, dimension=dim)  # noqa: E731
    return Case("concatenate", fun, args, [True] * len(args))


@st.composite
def pad_cases(draw: st.DrawFn, dtype: np.dtype[Any]) -> Case:
    shape = _shape(draw)
    config = []
    for n in shape:
        interior = draw(st.integers(0, 2))
        full = n + max(n - 1, 0) * interior
        lo = draw(st.integers(-min(full, 2), 2))
        hi = draw(st.integers(-min(full + lo, 2), 2))  # negative padding crops, but not below size 0
        config.append((lo, hi, interior))
    rng = draw(_rngs)
    fun = lambda x, v: sl.pad_p.bind(x, v, padding_config=tuple(config))  # noqa: E731
    return Case("pad", fun, [values(rng, shape, dtype), values(rng, (), dtype)], [True, True])


@st.composite
def split_cases(draw: st.DrawFn, dtype: np.dtype[Any]) -> Case:
    shape = _shape(draw, min_rank=1)
    axis = draw(st.integers(0, len(shape) - 1))
    cuts = sorted(draw(st.integers(0, shape[axis])) for _ in range(draw(st.integers(0, 2))))
    sizes = tuple(np.diff([0, *cuts, shape[axis]]).tolist())
    fun = lambda x: sp.split_p.bind(x, sizes=sizes, axis=axis)  # noqa: E731
    return Case("split", fun, [values(draw(_rngs), shape, dtype)], [True])


@st.composite
def tile_cases(draw: st.DrawFn, dtype: np.dtype[Any]) -> Case:
    shape = _shape(draw)
    reps = tuple(draw(st.integers(0, 3)) for _ in shape)
    fun = lambda x: sp.tile_p.bind(x, reps=reps)  # noqa: E731
    return Case("tile", fun, [values(draw(_rngs), shape, dtype)], [True])


@st.composite
def stack_cases(draw: st.DrawFn, dtype: np.dtype[Any]) -> Case:
    shape = _shape(draw)
    axis = draw(st.integers(0, len(shape)))
    rng = draw(_rngs)
    args = [values(rng, shape, dtype) for _ in range(draw(st.integers(1, 3)))]
    fun = lambda *xs: sp.stack_p.bind(*xs, axis=axis)  # noqa: E731
    return Case("stack", fun, args, [True] * len(args))


@st.composite
def iota_cases(draw: st.DrawFn, dtype: np.dtype[Any]) -> Case:
    # iota has no operands: it is combined with one, whose derivative or batch goes through.
    shape = _shape(draw, min_rank=1)
    dim = draw(st.integers(0, len(shape) - 1))
    iota_dtype = dtype if dtype != np.bool_ else np.dtype(np.int32)

    def fun(x: Any) -> Any:
        return sp.concatenate_p.bind(x, sp.iota_p.bind(dtype=iota_dtype, shape=shape, dimension=dim, sharding=None), dimension=dim)

    return Case("iota", fun, [values(draw(_rngs), shape, iota_dtype)], [True])


@st.composite
def dim_as_value_cases(draw: st.DrawFn, dtype: np.dtype[Any]) -> Case:
    # dim_as_value has no operands (and no derivative: an integer): scaled into an operand's.
    shape = _shape(draw)
    size = draw(st.integers(0, 6))
    target = dtype if dtype != np.bool_ else np.dtype(np.int32)

    def fun(x: Any) -> Any:
        n = convert_element_type_p.bind(sp.dim_as_value_p.bind(dim=size), new_dtype=target, weak_type=False,
                                        sharding=None)
        return mul_p.bind(x, sp.broadcast_in_dim_p.bind(n, shape=shape, broadcast_dimensions=(), sharding=None))

    return Case("dim_as_value", fun, [values(draw(_rngs), shape, target)], [True])


_rngs = st.integers(0, 2**32 - 1).map(np.random.default_rng)

CASES: dict[str, Callable[[np.dtype[Any]], st.SearchStrategy[Case]]] = {
    "broadcast_in_dim": broadcast_in_dim_cases,
    "reshape": reshape_cases,
    "transpose": transpose_cases,
    "squeeze": squeeze_cases,
    "rev": rev_cases,
    "reduce_sum": reduce_sum_cases,
    "slice": slice_cases,
    "dynamic_slice": dynamic_slice_cases,
    "dynamic_update_slice": dynamic_update_slice_cases,
    "concatenate": concatenate_cases,
    "pad": pad_cases,
    "iota": iota_cases,
    "dim_as_value": dim_as_value_cases,  # polyexp (issue 20)
    "split": split_cases,
    "tile": tile_cases,
    "stack": stack_cases,
}


def test_every_structural_and_slicing_primitive_has_a_case() -> None:
    assert {name for name, module in families().items() if module in ("structural", "slicing")} == set(CASES)


# ---------------------------------------------------------------------------
# Helpers


@pytest.fixture(params=["float32", "float64"])
def float_dtype(request: pytest.FixtureRequest) -> Iterator[np.dtype[Any]]:
    """float32, and float64 with x64 on (restored afterwards)."""
    if request.param == "float32":
        yield np.dtype(np.float32)
        return
    previous = config.read("jax_enable_x64")
    config.update("jax_enable_x64", True)
    try:
        yield np.dtype(np.float64)
    finally:
        config.update("jax_enable_x64", previous)


def split_args(case: Case) -> tuple[list[NDArray], Callable[..., Any]]:
    """The linear operands, and ``case.fun`` as a function of them only (the others closed over)."""
    linear = [a for a, lin in zip(case.args, case.linear) if lin]

    def fun(*xs: Any) -> Any:
        it = iter(xs)
        return case.fun(*[next(it) if lin else a for a, lin in zip(case.args, case.linear)])

    return linear, fun


def leaves(tree: Any) -> list[Any]:
    return jax.tree_util.tree_leaves(tree)


def inner(xs: Any, ys: Any) -> float:
    return float(sum(np.vdot(np.asarray(x, np.float64), np.asarray(y, np.float64)) for x, y in zip(leaves(xs), leaves(ys))))


def random_like(rng: np.random.Generator, tree: Any) -> Any:
    return jax.tree_util.tree_map(lambda x: values(rng, np.shape(x), np.asarray(x).dtype), tree)


def case_strategy(name: str, dtype: np.dtype[Any]) -> st.SearchStrategy[Case]:
    return CASES[name](dtype)


# ---------------------------------------------------------------------------
# The laws, for every primitive

NAMES = sorted(CASES)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=10, suppress_health_check=[HealthCheck.function_scoped_fixture])  # x64 stays on for all examples
@given(data=st.data())
def test_jvp_and_vjp_match_finite_differences(name: str, float_dtype: np.dtype[Any], data: st.DataObject) -> None:
    case = data.draw(case_strategy(name, float_dtype))
    args, fun = split_args(case)
    check_grads(fun, args, order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=10, suppress_health_check=[HealthCheck.function_scoped_fixture])  # x64 stays on for all examples
@given(data=st.data(), rng=_rngs)
def test_transposition_law(name: str, float_dtype: np.dtype[Any], data: st.DataObject, rng: np.random.Generator) -> None:
    # <ct, L t> = <L^T ct, t>, L from linearize and L^T from vjp; cotangents have the operands' types.
    case = data.draw(case_strategy(name, float_dtype))
    args, fun = split_args(case)
    out, f_lin = jax.linearize(fun, *args)
    _, f_vjp = jax.vjp(fun, *args)
    t = random_like(rng, args)
    ct = random_like(rng, out)
    cts = f_vjp(ct)
    for c, a in zip(cts, args):
        assert (np.shape(c), np.asarray(c).dtype) == (a.shape, a.dtype)
    lhs, rhs = inner(ct, f_lin(*t)), inner(cts, t)
    assert abs(lhs - rhs) <= 1e-4 * (1 + abs(lhs)), (lhs, rhs)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=4)
@given(data=st.data(), rng=_rngs)
def test_derivatives_compose_with_jit(name: str, data: st.DataObject, rng: np.random.Generator) -> None:
    case = data.draw(case_strategy(name, np.dtype(np.float32)))
    args, fun = split_args(case)
    t, ct = random_like(rng, args), random_like(rng, fun(*args))
    want_jvp = jax.jvp(fun, args, t)[1]
    want_vjp = jax.vjp(fun, *args)[1](ct)
    assert_trees_equal(jax.jvp(jax.jit(fun), args, t)[1], want_jvp)
    assert_trees_equal(jax.jit(lambda a, t: jax.jvp(fun, a, t)[1])(args, t), want_jvp)
    assert_trees_equal(jax.vjp(jax.jit(fun), *args)[1](ct), want_vjp)
    assert_trees_equal(jax.jit(lambda a, c: jax.vjp(fun, *a)[1](c))(args, ct), want_vjp)


def assert_trees_equal(actual: Any, desired: Any) -> None:
    a, d = leaves(actual), leaves(desired)
    assert len(a) == len(d)
    for x, y in zip(a, d):
        # Structural ops only move values; the sums in transposes may round differently.
        np.testing.assert_allclose(np.asarray(x, np.float64), np.asarray(y, np.float64), rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------
# Rules in particular


def test_linear_primitives_have_transpose_rules() -> None:
    operandless = ("iota", "dim_as_value")
    linear = [primitive_named(n) for n in NAMES if n not in operandless]
    assert all(p in ad.primitive_jvps and p in ad.transpose_rules for p in linear)
    # Never called (no operands), listed all the same.
    assert sp.iota_p in ad.primitive_jvps and sp.dim_as_value_p in ad.primitive_jvps


def test_dynamic_slice_indices_get_float0_cotangents() -> None:
    x = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    out, f_vjp = jax.vjp(lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 2)), x, np.int32(1))
    ct_x, ct_i = f_vjp(np.ones((2, 2), np.float32))
    np.testing.assert_array_equal(ct_x, [[0, 0, 0], [0, 1, 1], [0, 1, 1], [0, 0, 0]])
    assert ct_i.dtype == dtypes.float0 and ct_i.shape == ()


def test_dynamic_slice_cotangent_lands_where_the_clamped_window_was() -> None:
    # Start 3 with size 2 on an axis of 4 clamps to 2.
    x = np.zeros(4, np.float32)
    (ct,) = jax.vjp(lambda x: sl.dynamic_slice_p.bind(x, np.int32(3), slice_sizes=(2,)), x)[1](np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(ct, [0, 0, 1, 2])


def test_dynamic_update_slice_splits_the_cotangent_between_operand_and_update() -> None:
    x, u = np.zeros((3, 4), np.float32), np.zeros((2, 2), np.float32)
    ct = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    ct_x, ct_u = jax.vjp(lambda x, u: lax.dynamic_update_slice(x, u, (1, 5)), x, u)[1](ct)  # 5 clamps to 2
    np.testing.assert_array_equal(ct_u, [[6, 7], [10, 11]])
    want = ct.copy()
    want[1:3, 2:4] = 0
    np.testing.assert_array_equal(ct_x, want)


def test_dynamic_update_slice_with_respect_to_the_update_alone() -> None:
    x = np.ones((3, 4), np.float32)
    (ct_u,) = jax.vjp(lambda u: lax.dynamic_update_slice(x, u, (0, 1)), np.zeros((1, 2), np.float32))[1](np.full((3, 4), 2.0, np.float32))
    np.testing.assert_array_equal(ct_u, [[2, 2]])
    t = jax.jvp(lambda x: lax.dynamic_update_slice(x, np.zeros((1, 2), np.float32), (0, 1)), (x,), (np.ones((3, 4), np.float32),))[1]
    np.testing.assert_array_equal(t, [[1, 0, 0, 1], [1, 1, 1, 1], [1, 1, 1, 1]])


def test_pad_cotangent_of_the_padding_value_is_the_sum_over_the_padding() -> None:
    x = np.ones((2, 3), np.float32)
    config = [(1, -1, 1), (2, 0, 0)]
    out, f_vjp = jax.vjp(lambda x, v: lax.pad(x, v, config), x, np.float32(0))
    ct = np.arange(np.size(out), dtype=np.float32).reshape(np.shape(out))
    ct_x, ct_v = f_vjp(ct)
    # Operand element (i, j) went to (1 + 2i, 2 + j), but row 1 went to row 3, which was cropped
    # off: its cotangent is 0. The padding got the rest.
    want_x = np.zeros((2, 3), np.float32)
    want_x[0] = ct[1, 2:]
    np.testing.assert_array_equal(ct_x, want_x)
    assert float(ct_v) == ct.sum() - want_x.sum()


def test_pad_with_a_constant_padding_value() -> None:
    x = np.ones(3, np.float32)
    (ct,) = jax.vjp(lambda x: lax.pad(x, np.float32(7), [(1, 1, 1)]), x)[1](np.arange(7.0, dtype=np.float32))
    np.testing.assert_array_equal(ct, [1, 3, 5])


def test_split_with_unused_pieces_transposes_symbolic_zeros() -> None:
    x = np.arange(6.0, dtype=np.float32)
    f = lambda x: lax.split(x, (2, 1, 3))[1]  # noqa: E731
    (ct,) = jax.vjp(f, x)[1](np.array([5.0], np.float32))
    np.testing.assert_array_equal(ct, [0, 0, 5, 0, 0, 0])
    out, f_lin = jax.linearize(f, x)
    np.testing.assert_array_equal(f_lin(np.ones(6, np.float32)), [1.0])


def test_concatenate_with_a_constant_operand() -> None:
    x = np.ones(2, np.float32)
    (ct,) = jax.vjp(lambda x: lax.concatenate([np.zeros(3, np.float32), x], 0), x)[1](np.arange(5.0, dtype=np.float32))
    np.testing.assert_array_equal(ct, [3, 4])


def test_stack_transpose_unstacks() -> None:
    x, y = np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)
    ct = np.arange(12.0, dtype=np.float32).reshape(2, 2, 3)
    ct_x, ct_y = jax.vjp(lambda x, y: sp.stack_p.bind(x, y, axis=1), x, y)[1](ct)
    np.testing.assert_array_equal(ct_x, ct[:, 0])
    np.testing.assert_array_equal(ct_y, ct[:, 1])


def test_broadcast_cotangent_sums_over_broadcast_and_grown_axes() -> None:
    x = np.ones((3, 1), np.float32)
    f = lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2))  # noqa: E731
    ct = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    (ct_x,) = jax.vjp(f, x)[1](ct)
    np.testing.assert_array_equal(ct_x, ct.sum(axis=(0, 2))[:, None])
    text = str(jax.make_jaxpr(lambda c: jax.vjp(f, x)[1](c))(ct))
    assert "reduce_sum[axes=(0, 2)" in text and "broadcast_dimensions=(0,)" in text


def test_integer_operands_have_float0_tangents() -> None:
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    out, t = jax.jvp(lambda x: lax.rev(lax.transpose(x, (1, 0)), (0,)), (x,), (np.zeros((2, 3), dtypes.float0),))
    np.testing.assert_array_equal(out, x.T[::-1])
    assert t.dtype == dtypes.float0 and t.shape == (3, 2)


def test_second_order_through_a_transpose_rule() -> None:
    # The vjp of a vjp transposes the transpose rules' own equations (slice -> pad -> slice).
    x = np.arange(5.0, dtype=np.float32)

    def every_other(x: Any) -> Any:
        return lax.slice(x, (1,), (4,), (2,))

    def pullback(c: Any) -> Any:
        return jax.vjp(every_other, x)[1](c)[0]

    spread, pullback_vjp = jax.vjp(pullback, np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(spread, [0, 1, 0, 2, 0])
    (back,) = pullback_vjp(np.arange(5.0, dtype=np.float32))
    np.testing.assert_array_equal(back, [1, 3])
