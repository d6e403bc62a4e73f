"""Windowed reductions (pooling): reduce_window, reduce_window_sum/max/min and the
derivatives of max pooling, select_and_gather_add and select_and_scatter_add.

Runs on every backend (tests/conftest.py). Values are checked against a
loop-by-loop reading of spec/primitives/windowed.md (``naive`` below: it walks
every window tap and maps it back to the operand, independently of the
backends' sliding-window views), over every option (padding names and
explicit/negative pads, strides, base and window dilation, 1-D to 3-D);
gradients against finite differences (check_grads) and, for max pooling with
ties, against the choice JAX makes (the first maximum in the window); vmap
against a loop; the jaxpr text against its parse; the constraint errors. The
generic laws run in test_ad_laws/test_vmap_laws through the samplers.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import minijax
import minijax.numpy as jnp
from minijax import lax
from minijax.jaxpr import eval_jaxpr
from minijax.jaxpr_parse import parse_jaxpr
from minijax.primitives.elementwise import ge_p, le_p
from minijax.primitives.windowed import (
    reduce_window_max_p,
    reduce_window_p,
    reduce_window_sum_p,
    select_and_gather_add_p,
    select_and_scatter_add_p,
)
from minijax.test_util import check_grads

F32 = np.float32


def arr(x: Any) -> np.ndarray:
    return np.asarray(x)


def naive(x: np.ndarray, init: Any, op: Callable[[Any, Any], Any], window: tuple[int, ...], strides: tuple[int, ...],
          padding: Any, base: tuple[int, ...] | None = None, wdil: tuple[int, ...] | None = None) -> np.ndarray:
    """The spec's semantics, one tap at a time: a tap maps back to an operand element, or is a hole or padding
    and is skipped (the accumulator starts at ``init``)."""
    nd = x.ndim
    base = base or (1,) * nd
    wdil = wdil or (1,) * nd
    if isinstance(padding, str):
        extent = [(w - 1) * d + 1 for w, d in zip(window, wdil)]
        padding = lax.padtype_to_pads(x.shape, extent, strides, padding)
    out_shape = lax.reduce_window_shape_tuple(x.shape, window, strides, padding, base, wdil)
    out = np.empty(out_shape, x.dtype)
    for idx in itertools.product(*map(range, out_shape)):
        acc = np.asarray(init, x.dtype)
        for tap in itertools.product(*map(range, window)):
            src = []
            for d in range(nd):
                pos = idx[d] * strides[d] + tap[d] * wdil[d] - padding[d][0]  # position in the base-dilated operand
                q, r = divmod(pos, base[d])
                src.append(q if r == 0 and 0 <= q < x.shape[d] else None)
            if None not in src:
                acc = np.asarray(op(acc, x[tuple(src)]), x.dtype)
        out[idx] = acc
    return out


OPTIONS = [
    # (shape, window, strides, padding, base_dilation, window_dilation)
    ((7,), (3,), (1,), "VALID", None, None),
    ((7,), (2,), (2,), "SAME", None, None),
    ((6,), (3,), (2,), "SAME_LOWER", None, (2,)),
    ((5,), (2,), (1,), ((2, -1),), (3,), None),
    ((2, 6, 5, 3), (1, 2, 2, 1), (1, 2, 2, 1), "VALID", None, None),  # NHWC 2x2 pooling
    ((2, 5, 5, 3), (1, 3, 3, 1), (1, 2, 2, 1), "SAME", None, None),
    ((1, 5, 6, 2), (1, 2, 3, 1), (1, 1, 2, 1), ((0, 0), (1, 2), (2, 0), (0, 0)), (1, 2, 1, 1), (1, 1, 2, 1)),
    ((2, 4, 4, 4, 1), (1, 2, 2, 2, 1), (1, 2, 2, 2, 1), "VALID", None, None),  # 3-D
    ((3, 4, 3), (2, 2, 2), (1, 2, 1), "SAME", (1, 2, 1), (2, 1, 1)),
    ((3, 2), (4, 3), (1, 1), "VALID", None, None),  # the window is larger than the input: size 0
]


def _call(x: Any, init: Any, op: Any, opts: Any) -> Any:
    _, window, strides, padding, base, wdil = opts
    return lax.reduce_window(x, init, op, window, strides, padding, base, wdil)


@pytest.mark.parametrize("opts", OPTIONS, ids=[str(i) for i in range(len(OPTIONS))])
def test_monoid_and_generic_reductions_match_the_spec(opts):
    rng = np.random.default_rng(0)
    x = rng.normal(size=opts[0]).astype(F32)
    for init, op, ref in [(0.0, lax.add, np.add), (-np.inf, lax.max, np.maximum), (np.inf, lax.min, np.minimum),
                          (1.0, lax.mul, np.multiply), (0.5, lax.add, np.add)]:
        want = naive(x, init, ref, *opts[1:])
        np.testing.assert_allclose(arr(_call(x, init, op, opts)), want, rtol=1e-5, atol=1e-6)
        jitted = minijax.jit(lambda x, init=init, op=op: _call(x, init, op, opts))
        np.testing.assert_allclose(arr(jitted(x)), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_random_params_with_negative_pads_match_the_spec(seed):
    # Negative pads crop the base-dilated operand (a crop longer than it eats into the other end's padding);
    # XLA's CPU reduce_window aborts on negative pads, so the lowering crops first.
    rng = np.random.default_rng(seed)
    for _ in range(12):
        nd = int(rng.integers(1, 3))
        shape = tuple(int(v) for v in rng.integers(0, 5, nd))
        window = tuple(int(v) for v in rng.integers(1, 4, nd))
        strides = tuple(int(v) for v in rng.integers(1, 3, nd))
        pads = tuple((int(lo), int(hi)) for lo, hi in rng.integers(-3, 4, (nd, 2)))
        base, wdil = tuple(int(v) for v in rng.integers(1, 3, nd)), tuple(int(v) for v in rng.integers(1, 3, nd))
        x = rng.normal(size=shape).astype(F32)
        for init, op, ref in [(0.0, lax.add, np.add), (-np.inf, lax.max, np.maximum), (0.5, lax.add, np.add)]:
            got = lax.reduce_window(x, init, op, window, strides, pads, base, wdil)
            np.testing.assert_allclose(arr(got), naive(x, init, ref, window, strides, pads, base, wdil), rtol=1e-5,
                                       atol=1e-6, err_msg=f"{shape} {window} {strides} {pads} {base} {wdil} {init}")


def test_reduce_window_binds_the_specialised_primitive_only_for_a_monoid_with_its_identity():
    x = np.ones((4, 4), F32)

    def prims(init: Any, op: Any, dtype: Any = F32) -> list[str]:
        jaxpr = minijax.make_jaxpr(lambda x: lax.reduce_window(x.astype(dtype), init, op, (2, 2), (1, 1), "VALID"))(x)
        return [e.primitive.name for e in jaxpr.jaxpr.eqns if e.primitive.name.startswith("reduce_window")]

    assert prims(0.0, lax.add) == ["reduce_window_sum"]
    assert prims(-np.inf, lax.max) == ["reduce_window_max"]
    assert prims(np.inf, lax.min) == ["reduce_window_min"]
    assert prims(np.iinfo(np.int32).min, lax.max, np.int32) == ["reduce_window_max"]
    assert prims(False, lax.max, np.bool_) == ["reduce_window_max"]
    assert prims(0, lax.add, np.int32) == ["reduce_window_sum"]
    assert prims(1.0, lax.add) == ["reduce_window"]  # not the identity: the init value counts
    assert prims(-1.0, lax.max) == ["reduce_window"]
    assert prims(1.0, lax.mul) == ["reduce_window"]
    assert prims(0.0, lambda a, b: a + b) == ["reduce_window"]  # not lax.add itself
    traced = minijax.make_jaxpr(lambda x, i: lax.reduce_window(x, i, lax.add, (2, 2), (1, 1), "VALID"))(x, F32(0))
    assert traced.jaxpr.eqns[-1].primitive is reduce_window_p  # a traced init value is not concrete


def test_pytree_operands_and_a_variadic_computation():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(5, 4)).astype(F32), rng.normal(size=(5, 4)).astype(F32)

    def argmax_like(a: Any, b: Any) -> Any:
        take = a["v"] >= b["v"]
        return {"v": lax.select(take, a["v"], b["v"]), "t": lax.select(take, a["t"], b["t"])}

    out = lax.reduce_window({"v": x, "t": y}, {"v": -np.inf, "t": 0.0}, argmax_like, (2, 2), (1, 1), "SAME")
    assert set(out) == {"v", "t"}
    np.testing.assert_array_equal(arr(out["v"]), naive(x, -np.inf, np.maximum, (2, 2), (1, 1), "SAME"))
    # The carried value is the one at the first maximum of each window (or the padding's 0).
    vals = naive(x, -np.inf, np.maximum, (2, 2), (1, 1), "SAME")
    for i, j in itertools.product(range(5), range(4)):
        cands = [(x[a, b], y[a, b]) for a in (i, i + 1) for b in (j, j + 1) if a < 5 and b < 4]
        assert arr(out["t"])[i, j] == next(t for v, t in cands if v == vals[i, j])


def test_integer_sums_wrap_and_half_floats_accumulate_in_float32():
    x = np.full((4,), 100, np.int8)
    assert arr(lax.reduce_window(x, np.int8(0), lax.add, (2,), (1,), "VALID")).tolist() == [-56, -56, -56]
    h = np.array([2048.0, 1.0, 1.0, 0.0], np.float16)  # 2048 + 1 rounds back to 2048 in float16
    assert arr(lax.reduce_window(h, np.float16(0), lax.add, (3,), (1,), "VALID")).tolist() == [2050.0, 2.0]
    b = np.array([2048.0, 1.0, 1.0], ml_dtypes.bfloat16)
    assert arr(lax.reduce_window(b, ml_dtypes.bfloat16(0), lax.add, (3,), (1,), "VALID")).dtype == b.dtype


def test_max_propagates_nan_and_orders_signed_zeros():
    x = np.array([-0.0, 0.0, np.nan, 1.0, -0.0, -0.0], F32)
    mx = arr(lax.reduce_window(x, -np.inf, lax.max, (2,), (1,), "VALID"))
    mn = arr(lax.reduce_window(x, np.inf, lax.min, (2,), (1,), "VALID"))
    assert np.isnan(mx[1]) and np.isnan(mx[2]) and np.isnan(mn[1])
    assert mx[0] == 0 and not np.signbit(mx[0]) and mn[0] == 0 and np.signbit(mn[0])
    assert np.signbit(mx[4]) and mx[3] == 1.0


def test_weak_types_are_kept():
    out = minijax.make_jaxpr(lambda x: lax.reduce_window(x * 2.0, 0.0, lax.add, (2,), (1,), "VALID"))(2.0 * jnp.ones(3))
    assert out.out_avals[0].weak_type is False
    weak = reduce_window_sum_p.abstract_eval(
        minijax.core.ShapedArray((3,), np.dtype(F32), weak_type=True), window_dimensions=(2,), window_strides=(1,),
        padding=((0, 0),), base_dilation=(1,), window_dilation=(1,))
    assert weak.weak_type and weak.shape == (2,)


def test_reduce_window_shape_tuple():
    assert lax.reduce_window_shape_tuple((5, 6), (2, 3), (2, 1), ((0, 1), (1, 1))) == (3, 6)
    assert lax.reduce_window_shape_tuple((5,), (2,), (1,), ((0, 0),), base_dilation=(2,), window_dilation=(3,)) == (6,)
    assert lax.reduce_window_shape_tuple((2,), (3,), (1,), ((0, 0),)) == (0,)


# ===========================================================================
# Derivatives


@pytest.mark.parametrize("opts", [o for o in OPTIONS if 0 not in lax.reduce_window_shape_tuple(
    o[0], o[1], o[2], lax.padtype_to_pads(o[0], o[1], o[2], o[3]) if isinstance(o[3], str) else o[3])][:7])
def test_average_pooling_gradients_match_finite_differences(opts):
    x = np.random.default_rng(2).normal(size=opts[0])
    check_grads(lambda x: _call(x, 0.0, lax.add, opts) / 4.0, (x,), order=2, modes=("fwd", "rev"))


def _distinct(shape: tuple[int, ...], seed: int = 3) -> np.ndarray:
    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n) * 0.37 - n / 7).reshape(shape)


@pytest.mark.parametrize("init,op", [(-np.inf, lax.max), (np.inf, lax.min)])
@pytest.mark.parametrize("opts", [
    ((7,), (3,), (2,), "SAME", None, None),
    ((2, 6, 5, 3), (1, 2, 2, 1), (1, 2, 2, 1), "SAME", None, None),
    ((1, 5, 6, 2), (1, 2, 3, 1), (1, 1, 2, 1), ((0, 0), (1, 1), (2, 0), (0, 0)), (1, 2, 1, 1), None),
    ((2, 4, 4, 4, 1), (1, 2, 2, 2, 1), (1, 2, 2, 2, 1), "VALID", None, None),
])
def test_max_and_min_pooling_gradients_match_finite_differences(opts, init, op):
    x = _distinct(opts[0])
    check_grads(lambda x: _call(x, init, op, opts), (x,), order=2, modes=("fwd", "rev"))


def test_max_pooling_gradient_goes_to_the_first_maximum_of_each_window():
    # Overlapping windows (stride 1) over ties: each window sends its cotangent to its first maximum.
    x = np.array([[1.0, 3.0, 3.0], [3.0, 0.0, 3.0]], F32)
    ct = np.array([[1.0, 10.0]], F32)
    _, pullback = minijax.vjp(lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), "VALID"), x)
    (g,) = pullback(ct)
    assert arr(g).tolist() == [[0.0, 11.0, 0.0], [0.0, 0.0, 0.0]]
    (t,) = [minijax.jvp(lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), "VALID"), (x,),
                        (np.arange(6, dtype=F32).reshape(2, 3),))[1]]
    assert arr(t).tolist() == [[1.0, 1.0]]  # the tangent at the first maximum, x[0, 1], in both windows
    # min pooling: the first minimum; padding never takes the cotangent from a real element.
    (gmin,) = minijax.grad(lambda x: lax.reduce_window(x, np.inf, lax.min, (2,), (1,), "SAME").sum(), argnums=(0,))(
        np.array([2.0, 2.0, 5.0], F32))
    assert arr(gmin).tolist() == [1.0, 1.0, 1.0]  # windows [2, 2], [2, 5], [5, pad]: the first minimum each


def test_dilated_window_max_pooling_has_a_jvp_but_no_vjp_as_in_jax():
    x = _distinct((7,))
    f = lambda x: lax.reduce_window(x, -np.inf, lax.max, (2,), (1,), "VALID", window_dilation=(3,))  # noqa: E731
    check_grads(f, (x,), order=1, modes=("fwd",))
    with pytest.raises(NotImplementedError, match="VJP not implemented for select_and_gather .MaxPool. with window dilation"):
        minijax.grad(lambda x: f(x).sum())(x)


def test_generic_reduce_window_has_a_jvp_from_its_body():
    x = np.random.default_rng(4).uniform(0.5, 1.5, (4, 5))
    f = lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 2), "SAME")  # noqa: E731
    check_grads(f, (x,), order=1, modes=("fwd",))
    with pytest.raises(TypeError, match="non-zero init_value_tangent"):
        minijax.jvp(lambda i: lax.reduce_window(x, i, lax.mul, (2, 2), (1, 1), "VALID"), (1.0,), (1.0,))


def test_select_and_gather_add_and_select_and_scatter_add_are_each_others_transpose():
    rng = np.random.default_rng(5)
    x = _distinct((5, 6))
    params = dict(window_dimensions=(2, 3), window_strides=(2, 1), padding=((1, 0), (1, 1)))
    ones = (1, 1)
    t = rng.normal(size=(5, 6))
    s = rng.normal(size=lax.reduce_window_shape_tuple((5, 6), (2, 3), (2, 1), ((1, 0), (1, 1))))
    gathered = select_and_gather_add_p.bind(t, x, select_prim=ge_p, base_dilation=ones, window_dilation=ones, **params)
    scattered = select_and_scatter_add_p.bind(s, x, select_prim=ge_p, **params)
    np.testing.assert_allclose(np.sum(arr(gathered) * s), np.sum(t * arr(scattered)), rtol=1e-5)
    # and the transpose rules say so
    _, pullback = minijax.vjp(
        lambda t: select_and_gather_add_p.bind(t, x, select_prim=le_p, base_dilation=ones, window_dilation=ones,
                                               **params), t)
    (back,) = pullback(s.astype(F32))
    np.testing.assert_allclose(arr(back), arr(select_and_scatter_add_p.bind(s.astype(F32), x, select_prim=le_p, **params)))


def test_select_and_gather_add_skips_padding_so_a_nan_keeps_its_tangent():
    # Found by the deep conformance run (the reproducer's column): under the keeping
    # rule a NaN loses to any following tap, so taking the padding's identity in
    # would gather 0; XLA (and JAX) skip the padding and gather the NaN's tangent.
    operand = np.array([[0.5], [1.797e308], [np.nan]])
    tangents = np.array([[0.01334298080826457], [-0.0], [1.2157575830612988]])
    ones = (1, 1)
    with minijax.enable_x64(True):
        out = arr(select_and_gather_add_p.bind(tangents, operand, select_prim=le_p, window_dimensions=(2, 1),
                                               window_strides=(1, 1), padding=((0, 1), (0, 0)),
                                               base_dilation=ones, window_dilation=ones))
    # windows [0.5, big] -> 0.5; [big, nan] -> nan (big <= nan fails); [nan, padding] -> nan
    np.testing.assert_array_equal(out, tangents[[0, 2, 2]])


def test_second_derivatives_of_max_pooling_use_select_and_gather_add():
    x = _distinct((2, 4, 4, 1))
    f = lambda x: jnp.sum(jnp.sin(lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")))  # noqa: E731
    check_grads(minijax.grad(f), (x,), order=1, modes=("fwd", "rev"))
    jaxpr = str(minijax.make_jaxpr(minijax.grad(lambda x: minijax.grad(f)(x).sum()))(x))
    assert "select_and_gather_add" in jaxpr and "select_and_scatter_add" in jaxpr


# ===========================================================================
# vmap, jaxpr text


VMAP_CASES: list[tuple[str, Callable[..., Any]]] = [
    ("sum", lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 2), "SAME", base_dilation=(2, 1))),
    ("max", lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (2, 1), ((1, 0), (0, 1)))),
    ("min", lambda x: lax.reduce_window(x, np.inf, lax.min, (3, 1), (1, 1), "VALID", window_dilation=(1, 1))),
    ("generic", lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 1), "SAME")),
    ("max_grad", minijax.grad(lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (2, 2), "SAME").sum())),
    ("max_jvp", lambda x: minijax.jvp(lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), "VALID"),
                                      (x,), (jnp.cos(x),))[1]),
]


@pytest.mark.parametrize("name,f", VMAP_CASES, ids=[n for n, _ in VMAP_CASES])
@pytest.mark.parametrize("axis", [0, 2])
def test_vmap_equals_a_loop_and_stages_one_equation(name, f, axis):
    xs = np.moveaxis(_distinct((3, 4, 5)), 0, axis)
    want = np.stack([arr(f(np.take(xs, b, axis))) for b in range(3)])
    np.testing.assert_allclose(arr(minijax.vmap(f, in_axes=axis)(xs)), want, rtol=1e-6)
    plain = minijax.make_jaxpr(f)(xs.take(0, axis)).jaxpr
    batched = minijax.make_jaxpr(minijax.vmap(f, in_axes=axis))(xs).jaxpr
    windowed = [e for e in batched.eqns if "window" in e.primitive.name or "select_and" in e.primitive.name]
    assert len(windowed) == len([e for e in plain.eqns if "window" in e.primitive.name or "select_and" in e.primitive.name])


def test_vmap_of_select_primitives_with_one_unbatched_operand():
    x = _distinct((4, 6))
    params = dict(select_prim=ge_p, window_dimensions=(2,), window_strides=(2,), padding=((0, 0),))
    sources = np.random.default_rng(6).normal(size=(4, 3))
    got = minijax.vmap(lambda s: select_and_scatter_add_p.bind(s, x[0], **params))(sources)
    want = np.stack([arr(select_and_scatter_add_p.bind(s, x[0], **params)) for s in sources])
    np.testing.assert_allclose(arr(got), want)
    ones = (1,)
    got = minijax.vmap(lambda o: select_and_gather_add_p.bind(x[0], o, base_dilation=ones, window_dilation=ones,
                                                              **params), in_axes=0)(x)
    want = np.stack([arr(select_and_gather_add_p.bind(x[0], o, base_dilation=ones, window_dilation=ones, **params))
                     for o in x])
    np.testing.assert_allclose(arr(got), want)


def test_generic_reduce_window_refuses_batched_init_values_as_jax_does():
    with pytest.raises(NotImplementedError, match="reduce_window batching is not implemented for initial values"):
        minijax.vmap(lambda i: lax.reduce_window(np.ones(3, F32), i, lax.mul, (2,), (1,), "VALID"))(np.ones(2, F32))


@pytest.mark.parametrize("f", [
    lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 2), "SAME", base_dilation=(1, 2)),
    minijax.grad(lambda x: lax.reduce_window(x, np.inf, lax.min, (2, 2), (1, 1), ((1, 0), (0, 1))).sum()),
    minijax.grad(lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 3), (2, 1), "SAME", window_dilation=(1, 2)).sum()),
    lambda x: minijax.jvp(lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), "VALID"), (x,), (x,)),
], ids=["generic", "min_grad", "sum_grad", "max_jvp"])
def test_jaxpr_text_round_trips(f):
    x = _distinct((4, 5)).astype(F32)
    closed = minijax.make_jaxpr(f)(x)
    text = str(closed)
    parsed = parse_jaxpr(text)
    assert str(parsed) == text
    got = eval_jaxpr(parsed.jaxpr, parsed.consts, x)
    want = eval_jaxpr(closed.jaxpr, closed.consts, x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(arr(g), arr(w))


# ===========================================================================
# Errors


X = np.ones((4, 4), F32)


@pytest.mark.parametrize("call,error,match", [
    (lambda: lax.reduce_window(X, 0.0, lax.add, (2,), (1,), "VALID"), TypeError,
     r"reduce_window got the wrong number of window_dimensions for operand: got operand shape \(4, 4\) with window_dimensions \(2,\)\."),
    (lambda: lax.reduce_window(X, 0.0, lax.add, (2, 2), (0, 1), "VALID"), TypeError,
     r"reduce_window window_strides must have every element be strictly positive, got \(0, 1\)\."),
    (lambda: lax.reduce_window(X, 0.0, lax.add, (0, 2), (1, 1), "VALID"), TypeError,
     r"reduce_window window_dimensions must have every element be strictly positive, got \(0, 2\)\."),
    (lambda: lax.reduce_window(X, 0.0, lax.add, (2, 2), (1,), "VALID"), TypeError,
     r"reduce_window got inconsistent window_strides and window_dimensions: got window_strides \(1,\) and window_dimensions \(2, 2\)\."),
    (lambda: lax.reduce_window(X, 0.0, lax.add, (2, 2), (1, 1), "VALID", base_dilation=(0, 1)), TypeError,
     r"All dilations must be positive, got \(0, 1\)\."),
    (lambda: lax.reduce_window(X, 0.0, lax.add, (2, 2), (1, 1), "VALID", window_dilation=(1,)), TypeError,
     r"reduce_window got inconsistent window_dilation and window_dimensions"),
    (lambda: lax.reduce_window(X, 0.0, lax.add, (2, 2), (1.5, 1), "VALID"), TypeError,
     r"reduce_window window_strides must have every element be an integer type"),
    (lambda: lax.reduce_window(X, 0.0, lax.add, (2, 2), (1, 1), "FOO"), RuntimeError,
     r"Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got FOO\."),
    (lambda: lax.reduce_window(X, 0.0, lax.add, (2, 2), (1, 1), ((0, 0),)), TypeError,
     r"reduce_window got 1 \(low, high\) padding pairs for an operand of rank 2"),
    (lambda: lax.reduce_window(X, np.ones(2, F32), lax.max, (2, 2), (1, 1), "VALID"), TypeError,
     r"reduce_window expected init_values to be scalars but init_values have shapes \[\(2,\)\]\."),
    (lambda: lax.reduce_window((X, X), (0.0,), lax.max, (2, 2), (1, 1), "VALID"), ValueError,
     r"Operands must have the same tree structure as init_values"),
    (lambda: lax.reduce_window(np.ones((4, 4), bool), False, lax.add, (2, 2), (1, 1), "VALID"), TypeError,
     r"operand to reduce_window_sum must have a number dtype, got bool"),
    (lambda: lax.reduce_window(X, np.int32(1), lax.mul, (2, 2), (1, 1), "VALID"), TypeError,
     r"reduce_window got inconsistent dtypes for operands and init_values"),
    (lambda: lax.reduce_window(X, 0.0, lambda a, b: (a + b, a), (2, 2), (1, 1), "VALID"), ValueError,
     r"reduce_window output must have the same tree structure as the operands"),
    (lambda: lax.reduce_window((), (), lax.add, (2, 2), (1, 1), "VALID"), ValueError,
     r"reduce_window must have at least one operand\."),
    (lambda: select_and_gather_add_p.bind(np.ones(3, F32), np.ones(2, F32), select_prim=ge_p, window_dimensions=(1,),
                                          window_strides=(1,), padding=((0, 0),), base_dilation=(1,), window_dilation=(1,)),
     TypeError, r"select_and_gather_add tangents and operand shapes must match, got \(3,\) and \(2,\)\."),
    (lambda: select_and_scatter_add_p.bind(np.ones(3, F32), np.ones(4, F32), select_prim=ge_p, window_dimensions=(2,),
                                           window_strides=(2,), padding=((0, 0),)),
     TypeError, r"select_and_scatter_add source shape must be the shape of the operand's windows \(2,\), got \(3,\)\."),
    (lambda: select_and_scatter_add_p.bind(np.ones(2, F32), np.ones(4, F32), select_prim=reduce_window_max_p,
                                           window_dimensions=(2,), window_strides=(2,), padding=((0, 0),)),
     TypeError, r"select_prim must be lax.ge_p or lax.le_p"),
])
def test_bad_input_raises_jaxs_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("pad", [((-5, 0),), ((-1, -1),), ((0, -3),), ((2, -2),), ((-4, 3),)])
def test_negative_padding_crops_and_max_pooling_differentiates_through_it(pad):
    # (JAX's own rules accept negative pads; its lax.reduce_window then fails in NumPy broadcasting.)
    x = np.array([3.0, 1.0, 2.0], F32)
    for init, op, ref in [(0.0, lax.add, np.add), (-np.inf, lax.max, np.maximum), (1.0, lax.mul, np.multiply)]:
        np.testing.assert_array_equal(arr(lax.reduce_window(x, init, op, (1,), (1,), pad)), naive(x, init, ref, (1,), (1,), pad))
    g = minijax.grad(lambda x: lax.reduce_window(x, -np.inf, lax.max, (2,), (1,), pad).sum())(x)
    # Each window's cotangent goes to its maximum among the operand elements it covers.
    want = np.zeros(3, F32)
    for start in range(lax.reduce_window_shape_tuple((3,), (2,), (1,), pad)[0]):
        covered = [i for i in (start - pad[0][0], start + 1 - pad[0][0]) if 0 <= i < 3]
        if covered:
            want[max(covered, key=lambda i: (x[i], -i))] += 1
    np.testing.assert_array_equal(arr(g), want)


def test_a_window_larger_than_the_padded_input_gives_an_empty_result_as_in_jax():
    out = lax.reduce_window(X, 0.0, lax.add, (5, 5), (1, 1), "VALID")
    assert arr(out).shape == (0, 0)
    g = minijax.grad(lambda x: lax.reduce_window(x, -np.inf, lax.max, (5, 2), (1, 1), "VALID").sum())(X)
    assert arr(g).tolist() == np.zeros((4, 4)).tolist()
