"""vmap of the structural primitives: the batching rules and their law.

The law: ``vmap(f, in_axes)(*xs)`` equals stacking ``f`` over the batch,
for random batch axes (None for some operands), batch sizes 0, 1 and more,
and every kind of dtype. The primitives only move values, so the results
must be equal bit for bit (-0.0 and NaN included). A vmapped jaxpr has the
unbatched equations plus only the moves the rules need, except that, as in
JAX, a batched dynamic_slice (dynamic_update_slice) becomes one gather
(scatter) whose start indices are joined into an index array, so every
start may differ per batch element with no loop over the batch. The cases
are those of ``test_ad_structural.py``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from test_ad_structural import CASES, Case, values

import minijax as jax
from minijax import lax
from minijax.core import primitive_named
from minijax.interpreters import batching

NDArray = np.ndarray[Any, Any]
Axes = list[int | None]
NAMES = sorted(CASES)
DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.uint32, np.int32, np.float16, np.float32)]
# The equations a batching rule may add: moving a batch axis, or broadcasting an unbatched operand.
MOVES = {"transpose", "broadcast_in_dim"}
# As in JAX, these batch as the primitive on the right, their start indices joined by one concatenate.
BATCHED_AS = {"dynamic_slice": "gather", "dynamic_update_slice": "scatter"}


# ---------------------------------------------------------------------------
# Helpers


def leaves(tree: Any) -> list[Any]:
    return jax.tree_util.tree_leaves(tree)


def assert_exactly_equal(actual: Any, desired: Any) -> None:
    """Same shape, dtype and values, bit for bit (-0.0 is not 0.0; NaN equals NaN)."""
    a, d = np.asarray(actual), np.asarray(desired)
    assert (a.shape, a.dtype) == (d.shape, d.dtype)
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        a, d = a.view(f"u{a.dtype.itemsize}"), d.view(f"u{d.dtype.itemsize}")
    np.testing.assert_array_equal(a, d)


def another(rng: np.random.Generator, a: NDArray, linear: bool) -> NDArray:
    """Another batch element like operand ``a``; start indices stay near the range (they clamp)."""
    if linear:
        return values(rng, a.shape, a.dtype)
    return np.asarray(rng.integers(-2, 6, size=a.shape), a.dtype)


def batch_of(case: Case, rng: np.random.Generator, size: int, in_axes: Axes) -> list[NDArray]:
    """The operands, a batch of ``size`` along each one's in_axis (the first element is ``case.args``)."""
    out = []
    for a, lin, axis in zip(case.args, case.linear, in_axes):
        if axis is None:
            out.append(a)
        else:
            elems = [a] + [another(rng, a, lin) for _ in range(size - 1)]
            out.append(np.stack(elems[:size], axis=axis) if size else np.moveaxis(np.zeros((0, *a.shape), a.dtype), 0, axis))
    return out


def element(xs: list[NDArray], in_axes: Axes, b: int) -> list[NDArray]:
    return [x if axis is None else np.take(x, b, axis=axis) for x, axis in zip(xs, in_axes)]


def stacked(fun: Callable[..., Any], xs: list[NDArray], in_axes: Axes, size: int, like: Any) -> list[NDArray]:
    """``fun`` over the batch, each output stacked along axis 0 (``like``: an unbatched output, for size 0)."""
    if size == 0:
        return [np.zeros((0, *np.shape(o)), np.asarray(o).dtype) for o in leaves(like)]
    per = [[np.asarray(o) for o in leaves(fun(*element(xs, in_axes, b)))] for b in range(size)]
    return [np.stack(outs) for outs in zip(*per)]


@st.composite
def in_axes_for(draw: st.DrawFn, case: Case) -> Axes:
    """A batch axis or None per operand, at least one batched; negative axes sometimes."""
    forced = draw(st.integers(0, len(case.args) - 1))
    axes: Axes = []
    for i, a in enumerate(case.args):
        axis = draw(st.integers(0, a.ndim) if i == forced else st.one_of(st.none(), st.integers(0, a.ndim)))
        if axis is not None and draw(st.booleans()):
            axis -= a.ndim + 1
        axes.append(axis)
    return axes


def positive(axes: Axes, case: Case) -> Axes:
    return [None if ax is None else ax % (a.ndim + 1) for ax, a in zip(axes, case.args)]


# ---------------------------------------------------------------------------
# The law, for every primitive


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=10)
@given(data=st.data(), dtype=st.sampled_from(DTYPES), size=st.sampled_from([0, 1, 2, 3]), seed=st.integers(0, 2**32 - 1))
def test_vmap_matches_stacking(name: str, data: st.DataObject, dtype: np.dtype[Any], size: int, seed: int) -> None:
    case = data.draw(CASES[name](dtype))
    in_axes = data.draw(in_axes_for(case))
    xs = batch_of(case, np.random.default_rng(seed), size, positive(in_axes, case))
    out = jax.vmap(case.fun, in_axes=tuple(in_axes))(*xs)
    want = stacked(case.fun, xs, positive(in_axes, case), size, case.fun(*case.args))
    assert len(leaves(out)) == len(want)
    for o, w in zip(leaves(out), want):
        assert_exactly_equal(o, w)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=8)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_vmapped_jaxpr_adds_only_moves(name: str, data: st.DataObject, seed: int) -> None:
    # Start indices and padding values unbatched: the rules add only transposes and broadcasts.
    case = data.draw(CASES[name](np.dtype(np.float32)))
    in_axes = [ax if lin and np.ndim(a) else None for ax, lin, a in zip(data.draw(in_axes_for(case)), case.linear, case.args)]
    if all(ax is None for ax in in_axes):
        in_axes[0] = 0
    xs = batch_of(case, np.random.default_rng(seed), 3, positive(in_axes, case))
    plain_eqns = [e for e in jax.make_jaxpr(case.fun)(*case.args).jaxpr.eqns if not is_identity(e)]
    plain = Counter(BATCHED_AS.get(e.primitive.name, e.primitive.name) for e in plain_eqns)
    batched = Counter(e.primitive.name for e in jax.make_jaxpr(jax.vmap(case.fun, in_axes=tuple(in_axes)))(*xs).jaxpr.eqns)
    joins = sum(e.primitive.name in BATCHED_AS for e in plain_eqns)
    for prim in set(plain) | set(batched):
        # At most one move per operand, and one per result (to out_axes=0).
        extra = len(case.args) + len(leaves(case.fun(*case.args))) if prim in MOVES else 0
        extra += joins if prim == "concatenate" else 0
        assert plain[prim] <= batched[prim] <= plain[prim] + extra, (prim, plain, batched)


def is_identity(eqn: Any) -> bool:
    """An equation that returns its operand (bound directly): batched, it is no equation at all."""
    name, params = eqn.primitive.name, eqn.params
    same = eqn.invars[0].aval.shape == eqn.outvars[0].aval.shape if eqn.invars else False
    if name == "transpose":
        return list(params["permutation"]) == list(range(len(params["permutation"])))
    if name == "reshape":
        dims = params["dimensions"]
        return same and (dims is None or list(dims) == list(range(len(dims))))
    return same and name == "broadcast_in_dim"


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=4)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_nested_vmap_and_jit(name: str, data: st.DataObject, seed: int) -> None:
    case = data.draw(CASES[name](np.dtype(np.float32)))
    inner_axes = positive(data.draw(in_axes_for(case)), case)
    rng = np.random.default_rng(seed)
    inner = jax.vmap(case.fun, in_axes=tuple(inner_axes))
    xs = batch_of(case, rng, 2, inner_axes)
    # The outer batch: along axis 0 of every operand the inner vmap batches.
    outer_case = Case(case.name, inner, xs, case.linear)
    outer_axes: Axes = [0 if ax is not None else None for ax in inner_axes]
    xss = batch_of(outer_case, rng, 3, outer_axes)
    want = stacked(inner, xss, outer_axes, 3, None)
    for fun in (jax.vmap(inner, in_axes=tuple(outer_axes)), jax.jit(jax.vmap(inner, in_axes=tuple(outer_axes))), jax.vmap(jax.jit(inner), in_axes=tuple(outer_axes))):
        for o, w in zip(leaves(fun(*xss)), want):
            assert_exactly_equal(o, w)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=4)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_vmap_of_vjp(name: str, data: st.DataObject, seed: int) -> None:
    # The transpose rules' equations batch too.
    case = data.draw(CASES[name](np.dtype(np.float32)))
    rng = np.random.default_rng(seed)
    lin = [i for i, linear in enumerate(case.linear) if linear]

    def pullback(*args_and_ct: Any) -> Any:
        *args, ct = args_and_ct

        def of_linear(*xs: Any) -> Any:
            full = list(args)
            for i, x in zip(lin, xs):
                full[i] = x
            return case.fun(*full)

        return jax.vjp(of_linear, *[args[i] for i in lin])[1](ct)

    out = case.fun(*case.args)
    ct_case = Case(name, pullback, [*case.args, out], [*case.linear, True]) if not isinstance(out, list) else None
    if ct_case is None:  # split: a list of cotangents, one operand of the pullback
        ct_case = Case(name, lambda *a: pullback(*a[:-len(out)], list(a[-len(out):])), [*case.args, *out], [*case.linear] + [True] * len(out))
    in_axes = positive(data.draw(in_axes_for(ct_case)), ct_case)
    xs = batch_of(ct_case, rng, 2, in_axes)
    for o, w in zip(leaves(jax.vmap(ct_case.fun, in_axes=tuple(in_axes))(*xs)), stacked(ct_case.fun, xs, in_axes, 2, None)):
        np.testing.assert_allclose(np.asarray(o), w, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=4)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_vjp_of_vmap(name: str, data: st.DataObject, seed: int) -> None:
    # The batching rules' equations transpose: per element the cotangents are those of f;
    # an operand shared by the batch (in_axis None) gets their sum.
    case = data.draw(CASES[name](np.dtype(np.float32)))
    rng = np.random.default_rng(seed)
    in_axes = positive(data.draw(in_axes_for(case)), case)
    xs = batch_of(case, rng, 3, in_axes)
    lin = [i for i, linear in enumerate(case.linear) if linear]

    def linear_part(fun: Callable[..., Any], args: list[Any]) -> Callable[..., Any]:
        def of_linear(*ys: Any) -> Any:
            full = list(args)
            for i, y in zip(lin, ys):
                full[i] = y
            return fun(*full)

        return of_linear

    batched = jax.vmap(case.fun, in_axes=tuple(in_axes))
    out, f_vjp = jax.vjp(linear_part(batched, xs), *[xs[i] for i in lin])
    ct = jax.tree_util.tree_map(lambda o: values(rng, np.shape(o), np.asarray(o).dtype), out)
    cts = f_vjp(ct)
    for k, i in enumerate(lin):
        per = []
        for b in range(3):
            x_b = element(xs, in_axes, b)
            ct_b = jax.tree_util.tree_map(lambda c, b=b: np.asarray(c)[b], ct)
            per.append(np.asarray(jax.vjp(linear_part(case.fun, x_b), *[x_b[j] for j in lin])[1](ct_b)[k]))
        axis = in_axes[i]
        want = np.sum(per, axis=0) if axis is None else np.stack(per, axis=axis)
        np.testing.assert_allclose(np.asarray(cts[k]), want, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# Rules in particular


def test_every_structural_and_slicing_primitive_has_a_batching_rule() -> None:
    prims = [primitive_named(n) for n in NAMES]
    assert all(p in batching.primitive_batchers for p in prims)


def window(x: Any, i: Any, j: Any) -> Any:
    return lax.dynamic_slice(x, (i, j), (2, 3))


def write_window(x: Any, u: Any, i: Any, j: Any) -> Any:
    return lax.dynamic_update_slice(x, u, (i, j))


@pytest.mark.parametrize("size", [1, 4])
def test_dynamic_slice_with_per_element_starts(size: int) -> None:
    x = np.arange(5 * 6 * 7, dtype=np.float32).reshape(5, 6, 7)
    starts = np.array([0, 3, -1, 10, 2][:size], np.int32)
    out = jax.jit(jax.vmap(window, in_axes=(None, 0, None)))(x[0], starts, np.int32(3))
    assert_exactly_equal(out, np.stack([np.asarray(window(x[0], i, np.int32(3))) for i in starts]))
    # Both starts per element, the operand batched too; and the update of such windows.
    j = np.array([1, 0, 6, 3, 2][:size], np.int32)
    out = jax.jit(jax.vmap(window))(x[:size], starts, j)
    assert_exactly_equal(out, np.stack([np.asarray(window(x[b], starts[b], j[b])) for b in range(size)]))
    u = -np.arange(size * 6, dtype=np.float32).reshape(size, 2, 3)
    out = jax.jit(jax.vmap(write_window, in_axes=(None, 0, 0, 0)))(x[0], u, starts, j)
    assert_exactly_equal(out, np.stack([np.asarray(write_window(x[0], u[b], starts[b], j[b])) for b in range(size)]))


def test_per_element_starts_need_no_loop_over_the_batch() -> None:
    f = lambda x, i: lax.dynamic_update_slice(x, lax.dynamic_slice(x, (i, 0), (2, 2)) * 2, (0, i))  # noqa: E731
    sizes = []
    for size in (2, 7):
        xs, idx = np.ones((size, 4, 3), np.float32), np.arange(size, dtype=np.int32)
        sizes.append(len(jax.make_jaxpr(jax.vmap(f))(xs, idx).jaxpr.eqns))
    assert sizes[0] == sizes[1]


def test_dynamic_slice_keeps_negative_zero_and_nan() -> None:
    x = np.array([[-0.0, np.nan, 1.0], [np.inf, -0.0, -np.inf]], np.float32)
    out = jax.vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,)))(x, np.array([1, 0], np.int32))
    assert_exactly_equal(out, np.array([[np.nan, 1.0], [np.inf, -0.0]], np.float32))


# Batched starts, any mix: (operand in_axis, start in_axes) over an f32[5, 6] operand
# (f32[6, 5] batched along axis 1), the starts out of range and negative (they clamp).
START_AXES = [(0, (0, 0)), (0, (0, None)), (1, (None, 0)), (None, (0, 0)), (None, (None, 0)), (1, (None, None))]


def batch_for(x_axis: int | None, start_axes: tuple[int | None, int | None], dtype: Any) -> list[NDArray]:
    x = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6) - 50.0
    x = x[0] if x_axis is None else np.moveaxis(x, 0, x_axis)
    i = np.array([-1, 3, 0, 9], dtype) if np.dtype(dtype).kind == "i" else np.array([0, 3, 255, 9], dtype)
    j = np.array([4, 0, 200, 1], dtype)
    starts = [s if ax is not None else s[1] for s, ax in zip((i, j), start_axes)]
    return [x, *starts]


@pytest.mark.parametrize("dtype", [np.int32, np.int16, np.uint8])
@pytest.mark.parametrize(("x_axis", "start_axes"), START_AXES)
def test_batched_dynamic_slices_match_stacking(x_axis: int | None, start_axes: tuple[int | None, int | None], dtype: Any) -> None:
    x, i, j = batch_for(x_axis, start_axes, dtype)
    in_axes: Axes = [x_axis, *start_axes]
    u = -np.arange(4 * 6, dtype=np.float32).reshape(4, 2, 3)
    for fun, args, axes in ((window, [x, i, j], in_axes), (write_window, [x, u, i, j], [x_axis, 0, *start_axes])):
        want = stacked(fun, args, axes, 4, None)
        for f in (jax.vmap(fun, in_axes=tuple(axes)), jax.jit(jax.vmap(fun, in_axes=tuple(axes)))):
            assert_exactly_equal(f(*args), want[0])


@pytest.mark.parametrize(("x_axis", "start_axes"), START_AXES)
def test_grad_of_batched_dynamic_slices(x_axis: int | None, start_axes: tuple[int | None, int | None]) -> None:
    x, i, j = batch_for(x_axis, start_axes, np.int32)
    u = np.arange(4 * 6, dtype=np.float32).reshape(4, 2, 3) / 7
    in_axes: Axes = [x_axis, *start_axes]
    # d/dx of sum(window * w): w placed at each (clamped) window, summed over the batch if x is shared.
    w = np.arange(4 * 6, dtype=np.float32).reshape(4, 2, 3) + 1

    def loss(x: Any, u: Any) -> Any:
        windows = jax.vmap(window, in_axes=tuple(in_axes))(x, i, j)
        written = jax.vmap(write_window, in_axes=(x_axis, 0, *start_axes))(x, u, i, j)
        return (windows * w).sum() + (written * written).sum()

    def loss_one(x: Any, u: Any, i: Any, j: Any, w: Any) -> Any:
        return (window(x, i, j) * w).sum() + (write_window(x, u, i, j) ** 2).sum()

    gx, gu = jax.grad(loss, argnums=(0, 1))(x, u)
    per_x, per_u = [], []
    for b in range(4):
        x_b, i_b, j_b = element([x, i, j], in_axes, b)
        g = jax.grad(loss_one, argnums=(0, 1))(x_b, u[b], i_b, j_b, w[b])
        per_x.append(np.asarray(g[0]))
        per_u.append(np.asarray(g[1]))
    want_x = np.sum(per_x, axis=0) if x_axis is None else np.stack(per_x, axis=x_axis)
    np.testing.assert_allclose(np.asarray(gx), want_x, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gu), np.stack(per_u), rtol=1e-6)


# JAX 0.10.2's jaxprs (printed by the oracle), which minijax's must equal: as in
# JAX, batched dynamic slices become a gather and a scatter with mode CLIP.
JAX_TEXTS = {
    "shared start": """\
{ lambda ; a:f32[4,10]. let
    b:i32[1] = broadcast_in_dim 1:i32[]
    c:f32[4,2] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(0, np.int64(1)), collapsed_slice_dims=(), start_index_map=(np.int64(1),), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=True
      mode=GatherScatterMode.CLIP
      slice_sizes=(4, 2)
      unique_indices=True
    ] a b
  in (c,) }""",
    "batched start": """\
{ lambda ; a:f32[4,10] b:i32[4]. let
    c:bool[4] = lt b 0:i32[]
    d:i32[4] = add b 10:i32[]
    e:i32[4] = select_n c b d
    f:i32[4,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    g:f32[4,2] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(np.int64(1),), collapsed_slice_dims=(), start_index_map=(np.int64(1),), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
      fill_value=None
      indices_are_sorted=True
      mode=GatherScatterMode.CLIP
      slice_sizes=(1, 2)
      unique_indices=True
    ] a f
  in (g,) }""",
    "update": """\
{ lambda ; a:f32[4,10] b:i32[4]. let
    c:f32[2] = broadcast_in_dim 1.0:f32[]
    d:bool[4] = lt b 0:i32[]
    e:i32[4] = add b 10:i32[]
    f:i32[4] = select_n d b e
    g:i32[4,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f
    h:f32[4,2] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] c
    i:f32[4,10] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(np.int64(1),), inserted_window_dims=(), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=True
      mode=GatherScatterMode.CLIP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] a g h
  in (i,) }""",
    "mixed starts, operand along axis 1": """\
{ lambda ; a:f32[5,4,6] b:i32[4] c:i32[]. let
    d:bool[4] = lt b 0:i32[]
    e:i32[4] = add b 5:i32[]
    f:i32[4] = select_n d b e
    g:bool[] = lt c 0:i32[]
    h:i32[] = add c 6:i32[]
    i:i32[] = select_n g c h
    j:i32[4,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f
    k:i32[4,1] = broadcast_in_dim i
    l:i32[4,2] = concatenate[dimension=1] j k
    m:f32[4,5,6] = transpose[permutation=(1, 0, 2)] a
    n:f32[4,2,3] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(np.int64(1), np.int64(2)), collapsed_slice_dims=(), start_index_map=(np.int64(1), np.int64(2)), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
      fill_value=None
      indices_are_sorted=True
      mode=GatherScatterMode.CLIP
      slice_sizes=(1, 2, 3)
      unique_indices=True
    ] m l
  in (n,) }""",
    "shared operand": """\
{ lambda ; a:f32[10] b:u8[4]. let
    c:u8[4,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b
    d:f32[4,2] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.CLIP
      slice_sizes=(2,)
      unique_indices=False
    ] a c
  in (d,) }""",
}


def test_batched_dynamic_slice_jaxprs_are_jaxs() -> None:
    x, starts = np.zeros((4, 10), np.float32), np.array([1, -3, 20, 0], np.int32)
    texts = {
        "shared start": jax.make_jaxpr(jax.vmap(lambda x: lax.dynamic_slice(x, (1,), (2,))))(x),
        "batched start": jax.make_jaxpr(jax.vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,))))(x, starts),
        "update": jax.make_jaxpr(jax.vmap(lambda x, i: lax.dynamic_update_slice(x, jax.numpy.ones(2), (i,))))(x, starts),
        "mixed starts, operand along axis 1": jax.make_jaxpr(jax.vmap(window, in_axes=(1, 0, None)))(
            np.zeros((5, 4, 6), np.float32), starts, np.int32(2)),
        "shared operand": jax.make_jaxpr(jax.vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,)), in_axes=(None, 0)))(
            x[0], starts.astype(np.uint8)),
    }  # fmt: skip
    for name, jaxpr in texts.items():
        assert str(jaxpr) == JAX_TEXTS[name], name


def test_pad_with_per_element_padding_values() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = jax.vmap(lambda x, v: lax.pad(x, v, [(1, 0, 1)]), in_axes=(None, 0))(x[0], np.array([7.0, 8.0], np.float32))
    assert_exactly_equal(out, np.array([[7, 0, 7, 1, 7, 2], [8, 0, 8, 1, 8, 2]], np.float32))


def test_iota_inside_vmap() -> None:
    out = jax.vmap(lambda x: x + lax.iota(np.int32, 3))(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert_exactly_equal(out, np.array([[0, 2, 4], [3, 5, 7]], np.int32))


def test_split_and_stack_move_their_axis_past_the_batch() -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    a, b = jax.vmap(lambda x: lax.split(x, (1, 1), axis=0), in_axes=1, out_axes=1)(x)
    assert_exactly_equal(a, x[:1])
    assert_exactly_equal(b, x[1:])
    s = jax.vmap(lambda x, y: lax.stack([x, y], 0), in_axes=(2, None))(x, x[..., 0])
    assert np.shape(s) == (4, 2, 2, 3)
    assert_exactly_equal(s[:, 0], np.moveaxis(x, 2, 0))
    assert_exactly_equal(s[:, 1], np.broadcast_to(x[..., 0], (4, 2, 3)))
