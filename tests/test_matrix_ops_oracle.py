"""minijax.numpy's matrix helpers against real JAX: values, dtypes, weak types and jaxprs.

einsum is compared over random subscripts (hypothesis draws the operands'
labels, sizes, dtypes, the output and the ``optimize`` choice): same values,
same dtype and weak type, and the same ``make_jaxpr`` text (opt_einsum picks
the same path for both). Every other function is compared on a table of
programs; the jaxprs match JAX's except where the docs say they differ
(a square ``diagonal`` has no TPU ``platform_dependent`` branch).

Run with the oracle environment (README.md, "More"):
    .venv-oracle/bin/python -m pytest tests/test_matrix_ops_oracle.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")
import jax.numpy as jjnp  # noqa: E402

import minijax as mj  # noqa: E402
import minijax.numpy as mjnp  # noqa: E402

pytestmark = pytest.mark.oracle

NDArray = np.ndarray[Any, Any]
EXAMPLES = settings().max_examples  # the active profile's


def host(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> NDArray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    return np.asarray(rng.integers(-4, 5, shape)).astype(dtype)


def convert(x: Any, jnp_module: Any) -> Any:
    if isinstance(x, np.ndarray):
        return jnp_module.asarray(x)
    if isinstance(x, (list, tuple)):
        return type(x)(convert(v, jnp_module) for v in x)
    return x


def same(ours: Any, theirs: Any, rtol: float = 1e-5) -> None:
    if isinstance(theirs, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            same(o, t, rtol)
        return
    assert (ours.shape, ours.dtype, ours.weak_type) == (theirs.shape, theirs.dtype, theirs.weak_type), (
        (ours.shape, ours.dtype, ours.weak_type), (theirs.shape, theirs.dtype, theirs.weak_type))  # fmt: skip
    np.testing.assert_allclose(np.asarray(ours, np.float64), np.asarray(theirs, np.float64), rtol=rtol, atol=1e-5)


def both(program: Callable[..., Any], *args: Any, jaxpr: bool = True) -> None:
    """Run ``program(jnp, *args)`` in both libraries: the same results (or error type), and jaxprs."""
    try:
        ours = program(mjnp, *convert(args, mjnp))
    except Exception as e:
        with pytest.raises(type(e)):
            program(jjnp, *convert(args, jjnp))
        return
    same(ours, program(jjnp, *convert(args, jjnp)))
    if jaxpr:
        assert _traced(program, args, mjnp, mj) == _traced(program, args, jjnp, jax)


def _traced(program: Callable[..., Any], args: tuple[Any, ...], module: Any, lib: Any) -> str:
    """The jaxpr of ``program`` with its array arguments as inputs (the others stay constants)."""
    positions = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

    def fun(*xs: Any) -> Any:
        full = list(args)
        for i, x in zip(positions, xs):
            full[i] = x
        return program(module, *full)

    return str(lib.make_jaxpr(fun)(*[module.asarray(args[i]) for i in positions]))


# ---------------------------------------------------------------------------
# einsum over random subscripts


@st.composite
def einsum_calls(draw: st.DrawFn) -> tuple[str, list[NDArray], Any, Any]:
    labels = "abcdef"
    sizes = {c: draw(st.sampled_from([1, 2, 3, 4])) for c in labels}
    n_ops = draw(st.integers(1, 4))
    terms = [draw(st.text(alphabet=labels, min_size=0, max_size=4)) for _ in range(n_ops)]
    used = sorted(set("".join(terms)))
    spec = ",".join(terms)
    if draw(st.booleans()):
        perm = draw(st.permutations(used))
        spec += "->" + "".join(perm[: draw(st.integers(0, len(perm)))])
    dtype_pool = [np.float32] * 4 + [np.int32, np.float16, np.bool_, np.int8]
    ops = [host(tuple(sizes[c] for c in t), draw(st.sampled_from(dtype_pool)), seed=i) for i, t in enumerate(terms)]
    optimize = draw(st.sampled_from(["auto", True, False, "greedy", "optimal"]))
    preferred = draw(st.sampled_from([None, None, None, np.float32]))
    return spec, ops, optimize, preferred


@settings(max_examples=max(1, EXAMPLES * 3 // 4))
@given(call=einsum_calls())
def test_einsum_random_subscripts(call: tuple[str, list[NDArray], Any, Any]) -> None:
    spec, ops, optimize, preferred = call
    both(lambda n, *xs: n.einsum(spec, *xs, optimize=optimize, preferred_element_type=preferred), *ops)


@settings(max_examples=max(1, EXAMPLES // 4))
@given(call=einsum_calls())
def test_einsum_interleaved_form(call: tuple[str, list[NDArray], Any, Any]) -> None:
    spec, ops, optimize, _ = call
    terms, _, out = spec.partition("->")
    label_lists = [[ord(c) - ord("a") for c in t] for t in terms.split(",")]
    output = [[ord(c) - ord("a") for c in out]] if "->" in spec else []

    def program(n: Any, *xs: Any) -> Any:
        interleaved = [item for x, labels in zip(xs, label_lists) for item in (x, labels)]
        return n.einsum(*interleaved, *output, optimize=optimize)

    both(program, *ops)


def test_einsum_special_cases() -> None:
    a, b = host((3, 4), np.float32), host((4, 5), np.float32)
    both(lambda n, x, y: n.einsum("ij,jk", x, y, precision="highest"), a, b)
    both(lambda n, x, y: n.einsum("ij,jk", x, y, precision=("bfloat16", "highest")), a, b)
    both(lambda n, x, y: n.einsum("ij,jk->", x, y, preferred_element_type=n.int32), a.astype(np.int8), b.astype(np.int8))
    both(lambda n, x: n.einsum("...ij->...ji", x), host((2, 3, 4), np.float32))
    both(lambda n, x: n.einsum(x, (..., 0), (...,)), host((4, 4), np.int32))
    both(lambda n, x: n.einsum("ij,", x, 2.0), a)
    both(lambda n: n.einsum(",", 2.0, 3))
    both(lambda n, x, y: n.einsum("ij,jk", x, y), a, host((5, 2), np.float32), jaxpr=False)  # size mismatch
    both(lambda n, x: n.einsum("ij,jk", x), a, jaxpr=False)
    for path in ([(1, 2), (0, 1)], [(0, 1), (0, 1)], ["einsum_path", (0, 2), (0, 1)]):
        both(lambda n, x, y, z, path=path: n.einsum("ij,jk,kl", x, y, z, optimize=path), a, b, host((5, 2), np.float32))


def test_einsum_path() -> None:
    x, y, z = host((2, 3), np.float32), host((3, 100), np.float32), host((100, 5), np.float32)
    for optimize in ("optimal", "greedy", True, False, "auto"):
        ours = mjnp.einsum_path("ij,jk,kl", x, y, z, optimize=optimize)
        theirs = jjnp.einsum_path("ij,jk,kl", x, y, z, optimize=optimize)
        assert ours[0] == theirs[0]
        assert str(ours[1]) == str(theirs[1])


def test_einsum_transforms_jaxprs() -> None:
    a, b = host((3, 4), np.float32), host((4, 2), np.float32)
    ours = mj.make_jaxpr(mj.grad(lambda x, y: mjnp.einsum("ij,jk->", x, y), (0, 1)))(a, b)
    theirs = jax.make_jaxpr(jax.grad(lambda x, y: jjnp.einsum("ij,jk->", x, y), (0, 1)))(a, b)
    assert str(ours) == str(theirs)
    ours = mj.make_jaxpr(mj.vmap(lambda x: mjnp.einsum("ij,jk", x, b)))(np.stack([a, a]))
    theirs = jax.make_jaxpr(jax.vmap(lambda x: jjnp.einsum("ij,jk", x, b)))(np.stack([a, a]))
    assert str(ours) == str(theirs)


# ---------------------------------------------------------------------------
# The other functions: a table of programs


F32 = host((3, 4), np.float32)
SQ = host((3, 3), np.float32)
I32 = host((3, 4), np.int32)
V3 = host((3,), np.float32)

PROGRAMS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "kron": (lambda n, a, b: n.kron(a, b), (F32, host((2, 2), np.int32))),
    "kron rank": (lambda n, a, b: n.kron(a, b), (V3, host((2, 2, 2), np.float16))),
    "kron bool": (lambda n, a, b: n.kron(a, b), (host((2,), np.bool_), host((2,), np.bool_))),
    "trace": (lambda n, a: n.trace(a), (F32,)),
    "trace offset": (lambda n, a: n.trace(a, -1), (I32,)),
    "trace axes dtype": (lambda n, a: n.trace(a, 1, 2, 0, n.float32), (host((3, 2, 4), np.int8),)),
    "trace bool": (lambda n, a: n.trace(a), (host((3, 3), np.bool_),)),
    "diagonal": (lambda n, a: n.diagonal(a), (F32,)),
    "diagonal square": (lambda n, a: n.diagonal(a), (SQ,)),
    "diagonal offset": (lambda n, a: n.diagonal(a, 2), (F32,)),
    "diagonal negative": (lambda n, a: n.diagonal(a, -1, 2, 1), (host((2, 3, 4), np.int32),)),
    "diagonal past the end": (lambda n, a: n.diagonal(a, 9), (F32,)),
    "diagonal bool square": (lambda n, a: n.diagonal(a), (host((3, 3), np.bool_),)),
    "diag vector": (lambda n, v: n.diag(v), (V3,)),
    "diag vector k": (lambda n, v: n.diag(v, -2), (host((3,), np.int32),)),
    "diag matrix k": (lambda n, a: n.diag(a, 1), (F32,)),
    "diagflat": (lambda n, a: n.diagflat(a), (host((2, 2), np.float32),)),
    "diagflat k": (lambda n, a: n.diagflat(a, -2), (V3,)),
    "tril": (lambda n, a: n.tril(a), (F32,)),
    "tril k": (lambda n, a: n.tril(a, -1), (host((2, 3, 4), np.int32),)),
    "triu k": (lambda n, a: n.triu(a, 2), (F32,)),
    "triu bool": (lambda n, a: n.triu(a), (host((3, 3), np.bool_),)),
    "tri": (lambda n: n.tri(3), ()),
    "tri args": (lambda n: n.tri(3, 5, -1, n.int32), ()),
    "diag_indices": (lambda n: n.diag_indices(4, 3), ()),
    "diag_indices_from": (lambda n, a: n.diag_indices_from(a), (SQ,)),
    "meshgrid": (lambda n, a, b: n.meshgrid(a, b), (V3, host((2,), np.int32))),
    "meshgrid ij sparse": (lambda n, a, b, c: n.meshgrid(a, b, c, indexing="ij", sparse=True), (V3, V3, host((2,), np.float32))),
    "roll": (lambda n, a: n.roll(a, 2), (F32,)),
    "roll axes": (lambda n, a: n.roll(a, (1, -2), (0, 1)), (F32,)),
    "roll one shift many axes": (lambda n, a: n.roll(a, 5, (1, 0)), (I32,)),
    "roll traced": (lambda n, a, s: n.roll(a, s, 1), (F32, np.array(3, np.int32))),
    "roll traced pair": (lambda n, a, s: n.roll(a, s, (0, 1)), (F32, np.array([1, -1], np.int32))),
    "vander": (lambda n, x: n.vander(x), (V3,)),
    "vander N increasing": (lambda n, x: n.vander(x, 4, True), (host((3,), np.int32),)),
    "cross": (lambda n, a, b: n.cross(a, b), (host((4, 3), np.float32), host((4, 3), np.float32, 1))),
    "cross 2d": (lambda n, a, b: n.cross(a, b), (host((4, 2), np.float32), host((4, 2), np.int32, 1))),
    "cross 2 and 3": (lambda n, a, b: n.cross(a, b, axisa=0, axisc=0), (host((2, 4), np.float32), host((4, 3), np.float32))),
    "polyval": (lambda n, p, x: n.polyval(p, x), (V3, F32)),
    "polyval int": (lambda n, p, x: n.polyval(p, x), (host((3,), np.int32), host((2,), np.int32))),
    "matvec": (lambda n, a, v: n.matvec(a, v), (host((2, 3, 4), np.float32), host((4,), np.float32))),
    "vecmat": (lambda n, v, a: n.vecmat(v, a), (host((3,), np.float32), host((2, 3, 4), np.float32))),
    "vecdot": (lambda n, a, b: n.vecdot(a, b), (F32, host((4,), np.float32))),
    "vecdot axis": (lambda n, a, b: n.vecdot(a, b, axis=0), (F32, host((3, 1), np.float32))),
    "matrix_transpose": (lambda n, a: n.matrix_transpose(a), (host((2, 3, 4), np.float32),)),
}  # fmt: skip

# Jaxprs that differ from JAX's on purpose (the docs' differences page) or through code another module owns.
JAXPR_DIFFERENCES = {
    "diagonal square": "JAX adds a platform_dependent branch for TPU (Mosaic) kernels",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_function_matches_jax(name: str) -> None:
    program, args = PROGRAMS[name]
    both(program, *args, jaxpr=name not in JAXPR_DIFFERENCES)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize(("n", "m"), [(5, 3), (2, 6), (4, 4), (1, 1)])
def test_convolve_and_correlate_values(mode: str, n: int, m: int) -> None:
    a = np.linspace(-1, 2, n).astype(np.float32)
    v = (np.linspace(3, -2, m) ** 2).astype(np.float32)
    both(lambda jnp_, x, y: jnp_.convolve(x, y, mode), a, v)
    both(lambda jnp_, x, y: jnp_.correlate(x, y, mode), a, v)


def test_convolve_dtypes_and_errors() -> None:
    i = np.arange(4, dtype=np.int32)
    both(lambda n, x, y: n.convolve(x, y), i, i)
    both(lambda n, x, y: n.convolve(x, y, preferred_element_type=n.int32), i.astype(np.int8), i.astype(np.int8))
    both(lambda n, x, y: n.correlate(x, y, "full"), np.ones(3, np.float16), np.ones(2, np.float16))
    both(lambda n, x, y: n.convolve(x, y), np.ones((2, 2), np.float32), V3)
    both(lambda n, x, y: n.convolve(x, y, "wide"), V3, V3)
    both(lambda n, x, y: n.convolve(x, y), np.ones(0, np.float32), V3)


def test_convolve_gradients_match_jax() -> None:
    a, v = host((6,), np.float32), host((3,), np.float32, 2)
    for mode in ("full", "same", "valid"):
        for fn in ("convolve", "correlate"):
            ours = mj.grad(lambda x, y, fn=fn, mode=mode: (getattr(mjnp, fn)(x, y, mode) ** 2).sum(), (0, 1))(a, v)
            theirs = jax.grad(lambda x, y, fn=fn, mode=mode: (getattr(jjnp, fn)(x, y, mode) ** 2).sum(), (0, 1))(a, v)
            same(list(ours), list(theirs))


@pytest.mark.parametrize(
    "call",
    [
        lambda n: n.trace(n.ones((3, 3)), axis1=1, axis2=-1),
        lambda n: n.diagonal(n.ones(3)),
        lambda n: n.diag(n.ones((2, 2, 2))),
        lambda n: n.tril(n.ones(3)),
        lambda n: n.cross(n.ones(4), n.ones(3)),
        lambda n: n.vander(n.ones((2, 2))),
        lambda n: n.vander(n.ones(2), -1),
        lambda n: n.meshgrid(n.ones((2, 2))),
        lambda n: n.meshgrid(n.ones(2), copy=False),
        lambda n: n.meshgrid(n.ones(2), indexing="xx"),
        lambda n: n.diag_indices(-1),
        lambda n: n.diag_indices_from(n.ones((2, 3))),
        lambda n: n.tril_indices_from(n.ones(3)),
        lambda n: n.einsum("i,i,i", n.ones(2), n.ones(2), n.ones(2), optimize=[(0, 1, 2)]),
        lambda n: n.einsum("ij", n.ones((2, 2)), out=n.ones((2, 2))),
        lambda n: n.kron([1, 2], n.ones(2)),
        lambda n: n.matrix_transpose(n.ones(3)),
    ],
)
def test_errors_match_jax(call: Callable[[Any], Any]) -> None:
    try:
        call(mjnp)
    except Exception as e:
        with pytest.raises(type(e)):
            call(jjnp)
    else:
        pytest.fail("minijax accepted bad input")


@pytest.mark.parametrize(("n", "k", "m"), [(3, 0, None), (4, -1, 6)])
def test_triangle_indices(n: int, k: int, m: int | None) -> None:
    for fn in ("tril_indices", "triu_indices"):
        ours, theirs = getattr(mjnp, fn)(n, k, m), getattr(jjnp, fn)(n, k, m)
        same(list(ours), list(theirs))
    same(list(mjnp.tril_indices_from(F32, 1)), list(jjnp.tril_indices_from(F32, 1)))
    same(list(mjnp.triu_indices_from(F32, -1)), list(jjnp.triu_indices_from(F32, -1)))


def test_weak_types() -> None:
    both(lambda n: n.kron(2.0, 3.0), jaxpr=False)
    both(lambda n: n.polyval(n.array([1.0, 2.0]), 3.0), jaxpr=False)
    both(lambda n: n.einsum("i,", n.ones(2), 2.0), jaxpr=False)
    both(lambda n: n.roll(2.0, 1), jaxpr=False)
    both(lambda n: n.meshgrid(n.arange(2.0) * 0 + 1.0), jaxpr=False)
