"""Collectives under a named vmap axis (spec/primitives/collectives.md).

Laws, on random shapes, batch sizes (1 included), batch positions and dtypes:
- each collective inside ``vmap(..., axis_name="i")`` computes its NumPy
  reference over the members (psum = sum over the batch, all_gather = the
  stacked batch, ...), for batched and unbatched (in_axes None) operands;
- nested vmaps with two names: a collective over the outer name inside the
  inner vmap equals stacking it over the inner batch; tuple names reduce both;
- jvp agrees with central finite differences (float32 and float64), for jvp
  outside and inside the vmap;
- the transposition law <ct, L t> = <L^T ct, t> for the linear collectives,
  outside the vmap and inside it (where transposes are collectives again);
- vmap(grad(f)) = grad(sum of vmap(f)), and both compose with jit.
Plus the errors JAX raises (unbound names, bad shapes) and the spec examples.
"""

from __future__ import annotations

import inspect
import pathlib
import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.backend import get_backend
from minijax.config import config
from minijax.core import ShapedArray
from minijax.interpreters import ad, batching
from minijax.lax import parallel
from minijax.primitives import collectives as cp

SPEC = pathlib.Path(__file__).resolve().parent.parent / "spec" / "primitives" / "collectives.md"


def law(**strategies: st.SearchStrategy[Any]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """``@given(**strategies)``, with fewer examples on a compiling backend (each
    random shape compiles afresh on xla); the other arguments are fixtures."""

    def decorate(test: Callable[..., None]) -> Callable[..., None]:
        def run(*args: Any, **fixtures: Any) -> None:
            examples = settings().max_examples
            if get_backend().name != "numpy":
                examples = max(4, examples // 8)

            def example(**drawn: Any) -> None:
                test(*args, **fixtures, **drawn)

            example.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
                [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY) for n in strategies]
            )
            settings(max_examples=examples)(given(**strategies)(example))()

        signature = inspect.signature(test)
        run.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[p for p in signature.parameters.values() if p.name not in strategies]
        )
        run.__name__, run.__doc__ = test.__name__, test.__doc__
        return run

    return decorate


@pytest.fixture(params=["float32", "float64"])
def float_dtype(request: pytest.FixtureRequest) -> Iterator[np.dtype[Any]]:
    """The float dtype under test; float64 runs with jax_enable_x64 on (restored after)."""
    dtype = np.dtype(request.param)
    before = config.read("jax_enable_x64")
    config.update("jax_enable_x64", dtype == np.float64)
    try:
        yield dtype
    finally:
        config.update("jax_enable_x64", before)


def vmap_i(f: Callable[..., Any], in_axes: Any = 0, **kwargs: Any) -> Callable[..., Any]:
    return jax.vmap(f, in_axes=in_axes, axis_name="i", **kwargs)


def assert_close(got: Any, want: Any, dtype: Any = np.float32) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    tol = 1e-5 if np.dtype(dtype) == np.float32 else 1e-12
    if np.issubdtype(want.dtype, np.floating):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------
# Strategies: a batch of members, batched at a random position


@st.composite
def batches(draw: st.DrawFn, max_rank: int = 2, dtypes: tuple[str, ...] = ("float32", "int32")) -> tuple[np.ndarray[Any, Any], int, np.ndarray[Any, Any]]:
    """(xs, batch dim, members): ``members[k]`` is member k's operand; ``xs`` holds
    them stacked at ``batch dim``. Batch sizes 1..4."""
    shape = tuple(draw(st.lists(st.integers(1, 3), max_size=max_rank)))
    n = draw(st.integers(1, 4))
    bdim = draw(st.integers(0, len(shape)))
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    seed = draw(st.integers(0, 2**32 - 1))
    members = np.random.default_rng(seed).integers(-5, 6, size=(n, *shape)).astype(dtype)
    return np.moveaxis(members, 0, bdim), bdim, members


def every_member(value: np.ndarray[Any, Any], n: int) -> np.ndarray[Any, Any]:
    """The result every member holds, stacked over the n members."""
    return np.broadcast_to(value, (n, *value.shape))


# ---------------------------------------------------------------------------
# Semantics: each collective computes its reference over the members


@law(case=batches())
def test_psum_sums_over_the_members(case: Any) -> None:
    xs, bdim, members = case
    out = vmap_i(lambda x: parallel.psum(x, "i"), in_axes=bdim)(xs)
    assert_close(out, every_member(members.sum(0, dtype=members.dtype), len(members)))


@law(case=batches(dtypes=("float32", "int32", "bool", "uint8", "float16")))
def test_pmax_and_pmin_take_the_extremes(case: Any) -> None:
    xs, bdim, members = case
    n = len(members)
    assert_close(vmap_i(lambda x: parallel.pmax(x, "i"), in_axes=bdim)(xs), every_member(members.max(0), n))
    assert_close(vmap_i(lambda x: parallel.pmin(x, "i"), in_axes=bdim)(xs), every_member(members.min(0), n))


@law(case=batches(dtypes=("float32", "int32")))
def test_pmean_is_the_mean(case: Any) -> None:
    xs, bdim, members = case
    out = vmap_i(lambda x: parallel.pmean(x, "i"), in_axes=bdim)(xs)
    assert out.dtype == np.float32  # integers divide to float, as jnp's true division
    assert_close(out, every_member(members.mean(0).astype(np.float32), len(members)))


@law(case=batches(max_rank=3, dtypes=("float32",)), data=st.data())
def test_psum_over_named_and_positional_axes(case: Any, data: st.DataObject) -> None:
    xs, bdim, members = case
    rank = members.ndim - 1
    positional = data.draw(st.lists(st.integers(0, rank - 1), unique=True)) if rank else []
    axes = data.draw(st.permutations(["i", *positional]))
    out = vmap_i(lambda x: parallel.psum(x, tuple(axes)), in_axes=bdim)(xs)
    want = members.sum(axis=(0, *(a + 1 for a in positional)))
    assert_close(out, every_member(want, len(members)))


@law(case=batches(dtypes=("float32", "int32")), n=st.integers(1, 4))
def test_unbatched_operands(case: Any, n: int) -> None:
    """A value every member holds (in_axes None): psum is n * x, pmax/pmin x, all_gather n copies."""
    _, _, members = case
    y = members[0]
    ones = np.zeros(n, np.float32)

    def run(f: Callable[[Any, Any], Any]) -> Any:
        return jax.vmap(f, in_axes=(0, None), axis_name="i")(ones, y)

    assert_close(run(lambda _, y: parallel.psum(y, "i")), every_member(y * n, n))
    assert_close(run(lambda _, y: parallel.pmax(y, "i")), every_member(y, n))
    assert_close(run(lambda _, y: parallel.pmin(y, "i")), every_member(y, n))
    assert_close(run(lambda _, y: parallel.all_gather(y, "i")), every_member(np.stack([y] * n), n))
    assert_close(run(lambda x, _: x + parallel.axis_size("i")), np.full(n, n, np.float32))


@law(case=batches(max_rank=2), data=st.data())
def test_all_gather_stacks_or_concatenates_the_members(case: Any, data: st.DataObject) -> None:
    xs, bdim, members = case
    rank, n = members.ndim - 1, len(members)
    tiled = rank > 0 and data.draw(st.booleans())
    if tiled:
        axis = data.draw(st.integers(-rank, rank - 1))
        want = np.concatenate(list(members), axis=axis)
    else:
        axis = data.draw(st.integers(-rank - 1, rank))
        want = np.stack(list(members), axis=axis)
    out = vmap_i(lambda x: parallel.all_gather(x, "i", axis=axis, tiled=tiled), in_axes=bdim)(xs)
    assert_close(out, every_member(want, n))


@law(
    n=st.integers(1, 4),
    rest=st.lists(st.integers(1, 3), max_size=2),
    chunk=st.integers(1, 2),
    tiled=st.booleans(),
    data=st.data(),
)
def test_psum_scatter_leaves_member_k_chunk_k_of_the_sum(n: int, rest: list[int], chunk: int, tiled: bool, data: st.DataObject) -> None:
    dim = data.draw(st.integers(0, len(rest)))
    shape = list(rest)
    shape.insert(dim, n * chunk if tiled else n)
    members = np.random.default_rng(data.draw(st.integers(0, 99))).normal(size=(n, *shape)).astype(np.float32)
    bdim = data.draw(st.integers(0, len(shape)))
    xs = np.moveaxis(members, 0, bdim)
    out = vmap_i(lambda x: parallel.psum_scatter(x, "i", scatter_dimension=dim, tiled=tiled), in_axes=bdim)(xs)
    total = members.sum(0)
    if tiled:
        want = np.stack(np.split(total, n, axis=dim))
    else:
        want = np.moveaxis(total, dim, 0)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [1, 2, 5])
def test_axis_index_counts_the_members(n: int) -> None:
    out = jax.vmap(lambda _: parallel.axis_index("i"), axis_name="i")(np.zeros(n))
    assert out.dtype == np.int32 and np.asarray(out).tolist() == list(range(n))


def test_pytrees_are_reduced_leaf_by_leaf() -> None:
    xs = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    out = vmap_i(lambda x: parallel.pmean({"a": x, "b": [2 * x, True]}, "i"))(xs)
    assert_close(out["a"], every_member(xs.mean(0), 3))
    assert_close(out["b"][0], every_member(2 * xs.mean(0), 3))
    assert float(np.asarray(out["b"][1])[0]) == 1.0  # booleans are summed as int32


# ---------------------------------------------------------------------------
# Nested vmaps with two names


@law(outer=st.integers(1, 3), inner=st.integers(1, 3), side=st.integers(1, 3), seed=st.integers(0, 99))
def test_two_names(outer: int, inner: int, side: int, seed: int) -> None:
    xs = np.random.default_rng(seed).normal(size=(outer, inner, side)).astype(np.float32)

    def nested(f: Callable[[Any], Any]) -> Any:
        return jax.vmap(jax.vmap(f, axis_name="j"), axis_name="i")(xs)

    want_i = np.broadcast_to(xs.sum(0, keepdims=True), xs.shape)
    want_j = np.broadcast_to(xs.sum(1, keepdims=True), xs.shape)
    want_ij = np.broadcast_to(xs.sum((0, 1), keepdims=True), xs.shape)
    assert_close(nested(lambda x: parallel.psum(x, "i")), want_i)
    assert_close(nested(lambda x: parallel.psum(x, "j")), want_j)
    assert_close(nested(lambda x: parallel.psum(x, ("i", "j"))), want_ij)
    assert_close(nested(lambda x: parallel.psum(x, ("j", "i"))), want_ij)
    assert_close(nested(lambda x: parallel.pmax(x, ("i", "j"))), np.broadcast_to(xs.max((0, 1), keepdims=True), xs.shape))
    assert_close(nested(lambda x: parallel.pmean(x, ("i", "j"))), np.broadcast_to(xs.mean((0, 1), keepdims=True), xs.shape))
    index = nested(lambda x: parallel.axis_index(("i", "j")))
    assert np.asarray(index).tolist() == np.arange(outer * inner).reshape(outer, inner).tolist()
    assert np.asarray(nested(lambda x: parallel.axis_index("i"))).tolist() == [[k] * inner for k in range(outer)]
    gathered = nested(lambda x: parallel.all_gather(x, "i"))  # [outer, inner, outer, side]
    assert_close(gathered, np.broadcast_to(np.moveaxis(xs, 0, 1)[None], (outer, inner, outer, side)))


@law(outer=st.integers(1, 3), inner=st.integers(1, 3), seed=st.integers(0, 99), which=st.sampled_from(["psum", "pmax", "all_gather", "axis_index"]))
def test_outer_collective_inside_inner_vmap_equals_stacking(outer: int, inner: int, seed: int, which: str) -> None:
    """The inner vmap does not reduce over the outer name: it equals a stack of the
    collective over the inner batch (the usual vmap law, with the name bound outside)."""
    xs = np.random.default_rng(seed).normal(size=(outer, inner, 2)).astype(np.float32)
    f: Callable[[Any], Any] = {
        "psum": lambda x: parallel.psum(x, "i"),
        "pmax": lambda x: parallel.pmax(x, "i"),
        "all_gather": lambda x: parallel.all_gather(x, "i", axis=1),
        "axis_index": lambda x: x * parallel.axis_index("i"),
    }[which]
    batched = jax.vmap(jax.vmap(f, in_axes=1, out_axes=1), axis_name="i")(np.moveaxis(xs, 1, 2))
    stacked = jax.vmap(lambda x: jnp.stack([f(x[:, k]) for k in range(inner)], axis=1), axis_name="i")(np.moveaxis(xs, 1, 2))
    assert_close(batched, stacked)


# ---------------------------------------------------------------------------
# Autodiff: jvp against finite differences, transposition, grad orders


def _softmax_across(x: Any) -> Any:
    """A softmax over the members of "i": the normalisation is a psum."""
    shifted = x - parallel.pmax(lax.stop_gradient(x), "i")
    e = jnp.exp(shifted)
    return e / parallel.psum(e, "i")


DIFFERENTIABLE: dict[str, Callable[[Any], Any]] = {
    "psum": lambda x: parallel.psum(x, "i"),
    "pmean": lambda x: parallel.pmean(x, "i"),
    "all_gather": lambda x: parallel.all_gather(x, "i"),
    "all_gather_tiled": lambda x: parallel.all_gather(x, "i", tiled=True),
    "psum_scatter": lambda x: parallel.psum_scatter(x, "i", scatter_dimension=1),
    "psum_positional": lambda x: parallel.psum(x, ("i", 0)),
    "softmax": _softmax_across,
    "sin_times_psum": lambda x: jnp.sin(x) * parallel.psum(x * x, "i"),
    "index_weighted": lambda x: x * x * parallel.axis_index("i"),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
@law(seed=st.integers(0, 2**16))
def test_jvp_matches_central_differences(float_dtype: np.dtype[Any], name: str, seed: int) -> None:
    g = DIFFERENTIABLE[name]
    rng = np.random.default_rng(seed)
    # 3 members of [2, 3] operands (psum_scatter's dimension 1 has the axis size, 3).
    xs, ts = (rng.normal(size=(3, 2, 3)).astype(float_dtype) for _ in range(2))
    f = vmap_i(g)
    _, tangent_out = jax.jvp(f, (xs,), (ts,))
    _, tangent_in = jax.vmap(lambda x, t: jax.jvp(g, (x,), (t,)), axis_name="i")(xs, ts)
    eps = 1e-3 if float_dtype == np.float32 else 1e-6
    fd = (np.asarray(f(xs + eps * ts), np.float64) - np.asarray(f(xs - eps * ts), np.float64)) / (2 * eps)
    tol = 2e-2 if float_dtype == np.float32 else 1e-6
    for t in (tangent_out, tangent_in):
        assert t.dtype == float_dtype
        np.testing.assert_allclose(np.asarray(t), fd, rtol=tol, atol=tol)


LINEAR: dict[str, Callable[[Any], Any]] = {
    "psum": lambda x: parallel.psum(x, "i"),
    "psum_positional": lambda x: parallel.psum(x, (1, "i")),
    "all_gather": lambda x: parallel.all_gather(x, "i", axis=1),
    "all_gather_tiled": lambda x: parallel.all_gather(x, "i", axis=1, tiled=True),
    "psum_scatter": lambda x: parallel.psum_scatter(x, "i"),
    "psum_scatter_tiled": lambda x: parallel.psum_scatter(x, "i", scatter_dimension=1, tiled=True),
}


def _dot(a: Any, b: Any) -> float:
    return float(np.vdot(np.asarray(a, np.float64), np.asarray(b, np.float64)))


@pytest.mark.parametrize("name", sorted(LINEAR))
@law(seed=st.integers(0, 2**16))
def test_transposition_law(float_dtype: np.dtype[Any], name: str, seed: int) -> None:
    g = LINEAR[name]
    rng = np.random.default_rng(seed)
    xs = rng.normal(size=(3, 3, 6)).astype(float_dtype)  # member operands [3, 6]: every case fits
    ts = rng.normal(size=xs.shape).astype(float_dtype)
    f = vmap_i(g)
    ys, lin = jax.linearize(f, xs)
    cts = rng.normal(size=ys.shape).astype(float_dtype)
    # Outside the vmap: the named collectives were batched into positional ones.
    (back,) = jax.vjp(f, xs)[1](cts)
    assert back.shape == xs.shape and back.dtype == float_dtype
    tol = 1e-4 if float_dtype == np.float32 else 1e-10
    assert _dot(cts, lin(ts)) == pytest.approx(_dot(back, ts), rel=tol, abs=tol)
    # Inside the vmap: the transposes are collectives over "i" themselves.
    inner_lin = jax.vmap(lambda x, t: jax.jvp(g, (x,), (t,))[1], axis_name="i")(xs, ts)
    (inner_back,) = jax.vmap(lambda x, ct: jax.vjp(g, x)[1](ct), axis_name="i")(xs, cts)
    assert inner_back.shape == xs.shape and inner_back.dtype == float_dtype
    assert _dot(cts, inner_lin) == pytest.approx(_dot(inner_back, ts), rel=tol, abs=tol)


def _weighted(g: Callable[[Any], Any], w: np.ndarray[Any, Any]) -> Callable[[Any], Any]:
    return lambda x: jnp.sum(g(x) * w)


@pytest.mark.parametrize("name", ["softmax", "sin_times_psum", "psum_positional", "all_gather"])
def test_vmap_of_grad_equals_grad_of_vmap(name: str) -> None:
    """With psum's transpose summing over the axis again, the per-member gradient of a
    function with collectives is the gradient of the members' total, as in JAX."""
    g = DIFFERENTIABLE[name]
    xs = np.random.default_rng(0).normal(size=(3, 2, 3)).astype(np.float32)
    w = np.random.default_rng(1).normal(size=np.shape(vmap_i(g)(xs))[1:]).astype(np.float32)
    per_member = vmap_i(jax.grad(_weighted(g, w)))(xs)
    of_total = jax.grad(lambda xs: jnp.sum(vmap_i(g)(xs) * w))(xs)
    np.testing.assert_allclose(np.asarray(per_member), np.asarray(of_total), rtol=1e-5, atol=1e-6)
    eps = 1e-2

    def total(xs: np.ndarray[Any, Any]) -> float:
        return float(np.sum(np.asarray(vmap_i(g)(xs), np.float64) * w))

    for index in [(0, 0, 0), (1, 1, 2), (2, 0, 1)]:
        e = np.zeros_like(xs)
        e[index] = eps
        fd = (total(xs + e) - total(xs - e)) / (2 * eps)
        assert float(np.asarray(of_total)[index]) == pytest.approx(fd, rel=1e-2, abs=1e-3)


def test_grad_and_vmap_compose_with_jit() -> None:
    xs = np.random.default_rng(2).normal(size=(4, 3)).astype(np.float32)
    f = lambda x: jnp.sum(_softmax_across(x) * jnp.arange(3.0))  # noqa: E731
    eager_inner = vmap_i(jax.grad(f))(xs)
    eager_outer = jax.grad(lambda xs: vmap_i(f)(xs).sum())(xs)
    # (each jitted program compiled once: its result is both checked and compared)
    jit_inner = np.asarray(jax.jit(vmap_i(jax.grad(f)))(xs))
    jit_outer = np.asarray(jax.jit(jax.grad(lambda xs: vmap_i(f)(xs).sum()))(xs))
    for got in (
        jit_inner,
        jit_outer,
        vmap_i(jax.grad(jax.jit(lambda x: jnp.sum(jnp.sin(x)))))(xs),  # jit inside, no collective
    ):
        assert np.all(np.isfinite(np.asarray(got)))
    np.testing.assert_allclose(jit_inner, np.asarray(eager_inner), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jit_outer, np.asarray(eager_outer), rtol=1e-5, atol=1e-6)
    mean = jax.jit(vmap_i(lambda x: parallel.pmean(x, "i")))(xs)
    assert_close(mean, every_member(xs.mean(0), 4))


@pytest.mark.parametrize("which", ["pmax", "pmin"])
def test_pmax_and_pmin_are_not_differentiable_as_in_jax(which: str) -> None:
    op = getattr(parallel, which)
    xs = np.arange(3.0, dtype=np.float32)
    with pytest.raises(NotImplementedError, match=f"Differentiation rule for '{which}' not implemented"):
        vmap_i(jax.grad(lambda x: op(x, "i")))(xs)
    with pytest.raises(NotImplementedError, match=f"Differentiation rule for '{which}' not implemented"):
        jax.grad(lambda xs: vmap_i(lambda x: op(x, "i"))(xs).sum())(xs)
    # Of a stopped value the derivative is not needed:
    grads = vmap_i(jax.grad(lambda x: x * op(lax.stop_gradient(x), "i")))(xs)
    extreme = 2.0 if which == "pmax" else 0.0
    assert np.asarray(grads).tolist() == [extreme] * 3


def test_axis_index_has_a_zero_tangent() -> None:
    xs = np.arange(3.0, dtype=np.float32)
    _, t = jax.jvp(vmap_i(lambda x: x * parallel.axis_index("i")), (xs,), (np.ones(3, np.float32),))
    assert np.asarray(t).tolist() == [0.0, 1.0, 2.0]


# ---------------------------------------------------------------------------
# Jaxprs: the batched program has the unbatched equations, no loop


def _primitives(closed: Any) -> list[str]:
    return [e.primitive.name for e in closed.jaxpr.eqns]


def test_vmapped_collectives_become_single_equations() -> None:
    xs = np.ones((5, 2, 3), np.float32)
    assert _primitives(jax.make_jaxpr(vmap_i(lambda x: parallel.psum(x, "i")))(xs)) == ["psum", "broadcast_in_dim"]
    assert _primitives(jax.make_jaxpr(vmap_i(lambda x: parallel.pmax(x, "i"), in_axes=2))(xs)) == ["transpose", "pmax", "broadcast_in_dim"]
    assert _primitives(jax.make_jaxpr(vmap_i(lambda x: parallel.all_gather(x, "i", axis=1)))(xs)) == ["transpose", "broadcast_in_dim"]
    assert _primitives(jax.make_jaxpr(vmap_i(lambda x: parallel.psum_scatter(x, "i", scatter_dimension=1, tiled=True), in_axes=2, out_axes=1))(np.ones((2, 5, 5), np.float32))) == ["reduce_sum", "reshape"]
    closed = jax.make_jaxpr(vmap_i(lambda x: parallel.psum(x, "i")))(xs)
    assert closed.jaxpr.eqns[0].params == {"axes": (0,), "axis_index_groups": None}


def test_named_equations_print_as_in_jax() -> None:
    with batching.extend_axis_env([("i", 3)]):
        text = str(jax.make_jaxpr(lambda x: parallel.pmean(x, "i"))(np.ones(2, np.float32)))
        gather = str(jax.make_jaxpr(lambda x: parallel.all_gather(x, "i", axis=1, tiled=True))(np.ones((2, 2), np.float32)))
        index = str(jax.make_jaxpr(lambda: parallel.axis_index("i"))())
    assert text == (
        "{ lambda ; a:f32[2]. let\n"
        "    b:f32[2] = psum[axes=('i',) axis_index_groups=None] a\n"
        "    c:f32[2] = div b 3.0:f32[]\n"
        "  in (c,) }"
    )
    assert "all_gather[\n      all_gather_dimension=1\n      axis_index_groups=None\n      axis_name=('i',)\n      axis_size=3\n      tiled=True\n    ] a" in gather
    assert "axis_index[axis_name=i]" in index
    from minijax.jaxpr_parse import parse_jaxpr

    for printed in (text, gather, index):  # print(jaxpr) parses back to the same jaxpr
        assert str(parse_jaxpr(printed)) == printed


# ---------------------------------------------------------------------------
# Unbound names and bad input


UNBOUND: dict[str, Callable[[Any], Any]] = {
    "psum": lambda x: parallel.psum(x, "i"),
    "psum_constant": lambda x: parallel.psum(1.0, "i"),
    "pmean": lambda x: parallel.pmean(x, "i"),
    "pmax": lambda x: parallel.pmax(x, "i"),
    "pmin": lambda x: parallel.pmin(x, "i"),
    "all_gather": lambda x: parallel.all_gather(x, "i"),
    "psum_scatter": lambda x: parallel.psum_scatter(x, "i"),
    "axis_index": lambda x: parallel.axis_index("i"),
    "axis_size": lambda x: parallel.axis_size("i"),
}


@pytest.mark.parametrize("name", sorted(UNBOUND))
def test_unbound_names_raise_name_error(name: str) -> None:
    f = UNBOUND[name]
    x = jnp.ones(3)
    for run in (f, jax.jit(f), jax.make_jaxpr(f)):
        with pytest.raises(NameError, match="unbound axis name: i"):
            run(x)
    # Bound, but to another name:
    with pytest.raises(NameError, match="unbound axis name: i"):
        jax.vmap(f, axis_name="j")(jnp.ones((2, 3)))


def test_a_tuple_with_one_unbound_name_raises() -> None:
    with pytest.raises(NameError, match="unbound axis name: j"):
        vmap_i(lambda x: parallel.psum(x, ("i", "j")))(jnp.ones(3))


def test_the_axis_env_binds_names_for_tracing() -> None:
    with batching.extend_axis_env([("i", 5)]):
        assert parallel.axis_size("i") == 5
        closed = jax.make_jaxpr(lambda x: parallel.psum(x, "i"))(np.ones(2, np.float32))
    assert batching.lookup_axis_size("i") is None
    seen: list[Any] = []

    def record(x: Any) -> Any:
        seen.append(batching.current_axis_env())
        return x

    with batching.extend_axis_env([("k", 4)]):
        jax.vmap(jax.vmap(record, axis_name="j"), axis_name="i")(np.ones((2, 3)))
    assert seen == [(("k", 4), ("i", 2), ("j", 3))] and batching.current_axis_env() == ()
    # The named equation cannot run outside a vmap binding the name: the backend says so.
    from minijax.jaxpr import eval_jaxpr

    with pytest.raises(NameError, match="unbound axis name: i"):
        eval_jaxpr(closed.jaxpr, closed.consts, np.ones(2, np.float32))


@pytest.mark.parametrize("prim", [cp.all_gather_p, cp.reduce_scatter_p, cp.axis_index_p, cp.psum_p, cp.pmax_p])
def test_backends_reject_named_axes(prim: Any) -> None:
    x = jnp.ones((3, 3))
    params: dict[str, Any] = {  # type: ignore[assignment]
        "all_gather": dict(all_gather_dimension=0, axis_name=("i",), axis_index_groups=None, axis_size=3, tiled=False),
        "reduce_scatter": dict(scatter_dimension=0, axis_name=("i",), axis_index_groups=None, axis_size=3, tiled=False),
        "axis_index": dict(axis_name="i"),
        "psum": dict(axes=("i",), axis_index_groups=None),
        "pmax": dict(axes=(0, "i"), axis_index_groups=None),
    }[prim.name]
    args = () if prim is cp.axis_index_p else (x,)
    with pytest.raises(NameError, match="unbound axis name: i"):
        prim.bind(*args, **params)
    with pytest.raises(NameError, match="unbound axis name: i"):
        jax.jit(lambda *a: prim.bind(*a, **params))(*args)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "uint32", "bool"])
def test_backends_run_positional_all_reduces(dtype: str) -> None:
    x = (np.arange(24).reshape(2, 3, 4) % 5).astype(dtype)
    if dtype != "bool":
        assert_close(parallel.psum(jnp.asarray(x), (0, 2)), x.sum((0, 2), dtype=x.dtype))
        assert_close(jax.jit(lambda x: parallel.psum(x, (2, 0)))(x), x.sum((0, 2), dtype=x.dtype))
    assert_close(jax.jit(lambda x: parallel.pmax(x, (1,)))(x), x.max(1))
    assert_close(jax.jit(lambda x: parallel.pmin(x, (0, 1, 2)))(x), x.min())
    assert_close(jax.jit(lambda x: cp.psum_p.bind(x, axes=(), axis_index_groups=None))(x.astype(np.int32)), x.astype(np.int32))


def test_bad_shapes_and_params() -> None:
    x3 = jnp.ones((3, 2))
    with pytest.raises(ValueError, match=r"psum: reduction axes \(1,\) contains out-of-bounds indices for float32\[2\]"):
        vmap_i(lambda x: parallel.psum(x, ("i", 1)))(x3)
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        vmap_i(lambda x: parallel.all_gather(x, "i", axis=2))(x3)
    with pytest.raises(ValueError, match="axis 0 is out of bounds for array of dimension 0"):
        vmap_i(lambda x: parallel.all_gather(x[0], "i", tiled=True))(x3)
    with pytest.raises(ValueError, match="scatter dimension size 2 must match shard count 3"):
        vmap_i(lambda x: parallel.psum_scatter(x, "i"))(x3)
    with pytest.raises(ValueError, match="size 2 must be divisible by shard_count 3"):
        vmap_i(lambda x: parallel.psum_scatter(x, "i", tiled=True))(x3)
    with pytest.raises(NotImplementedError, match="axis_index_groups"):
        vmap_i(lambda x: parallel.psum(x, "i", axis_index_groups=[[0, 1], [2]]))(x3)
    with pytest.raises(NotImplementedError, match="several axes"):
        jax.vmap(jax.vmap(lambda x: parallel.all_gather(x, ("i", "j")), axis_name="j"), axis_name="i")(jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="Got unexpected `to` value"):
        vmap_i(lambda x: parallel.all_gather(x, "i", to="everywhere"))(x3)
    with pytest.raises(NotImplementedError, match="to='varying'"):
        vmap_i(lambda x: parallel.all_gather(x, "i", to="invarying"))(x3)
    with pytest.raises(TypeError, match="psum: every leaf must be an array"):
        vmap_i(lambda x: parallel.psum("text", "i"))(x3)


def test_abstract_eval_constraints() -> None:
    f32 = ShapedArray((3, 2), np.float32, weak_type=True)
    out = cp.psum_p.abstract_eval(f32, axes=("i", 1), axis_index_groups=None)
    assert out == ShapedArray((3,), np.float32)  # psum C5: not weak
    with pytest.raises(ValueError, match="duplicate axis"):  # psum C3
        cp.psum_p.abstract_eval(f32, axes=(0, 0), axis_index_groups=None)
    with pytest.raises(TypeError, match="psum does not accept dtype bool"):  # psum C4
        cp.psum_p.abstract_eval(f32.update(dtype=np.bool_), axes=("i",), axis_index_groups=None)
    with pytest.raises(NotImplementedError, match="axis_index_groups"):  # psum C1
        cp.pmax_p.abstract_eval(f32, axes=("i",), axis_index_groups=((0,),))
    gather = dict(axis_name=("i",), axis_index_groups=None, tiled=False)
    assert cp.all_gather_p.abstract_eval(f32, all_gather_dimension=2, axis_size=4, **gather) == f32.update(shape=(3, 2, 4))
    with pytest.raises(TypeError, match="axis_size must be a positive int"):  # all_gather C2
        cp.all_gather_p.abstract_eval(f32, all_gather_dimension=0, axis_size=0, **gather)
    scatter = dict(axis_name=("i",), axis_index_groups=None, axis_size=3)
    assert cp.reduce_scatter_p.abstract_eval(f32, scatter_dimension=0, tiled=False, **scatter) == f32.update(shape=(2,))
    with pytest.raises(TypeError, match="bool"):  # reduce_scatter C4
        cp.reduce_scatter_p.abstract_eval(f32.update(dtype=np.bool_), scatter_dimension=0, tiled=False, **scatter)
    assert cp.axis_index_p.abstract_eval(axis_name="i") == ShapedArray((), np.int32)


# ---------------------------------------------------------------------------
# Registry and spec


@pytest.mark.parametrize("prim", cp.COLLECTIVE_PRIMITIVES, ids=lambda p: p.name)
def test_every_collective_has_its_rules(prim: Any) -> None:
    assert prim in batching.trace_batch_rules
    assert prim in ad.primitive_jvps or prim in ad.non_differentiable
    linear = {cp.psum_p, cp.all_gather_p, cp.reduce_scatter_p, cp.ppermute_p, cp.all_to_all_p}
    assert (prim in ad.transpose_rules) == (prim in linear)
    assert get_backend().supports(prim)


def test_spec_examples_run() -> None:
    blocks = re.findall(r"^```python\n(.*?)^```", SPEC.read_text(), flags=re.M | re.S)
    assert len(blocks) == len(cp.COLLECTIVE_PRIMITIVES) + 1  # and shard_map's (its other rules are in minijax/shard_map.py)
    for block in blocks:
        exec(compile(block, str(SPEC), "exec"), {"__name__": "spec_example"})
