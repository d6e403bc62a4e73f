"""jax.export with symbolic shapes against real JAX: the printed dimension expressions and avals, the
results for several batch sizes, and the errors for arguments that contradict the specification."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402  (after the importorskip)
from minijax.config import config_context  # noqa: E402

pytestmark = pytest.mark.oracle

_EXPRESSIONS = [
    lambda b, c: 2 * b, lambda b, c: b + 1, lambda b, c: b - 1, lambda b, c: b // 2, lambda b, c: b % 2,
    lambda b, c: b * b, lambda b, c: -b, lambda b, c: (b + 1) * (b - 1), lambda b, c: 4 * b // 2,
    lambda b, c: 3 * b + 2 * c + 1, lambda b, c: (2 * b + 2) // 2, lambda b, c: b * c, lambda b, c: b + c + b * c,
    lambda b, c: b * b + b * c + c * c, lambda b, c: b // 2 + b, lambda b, c: b * c * c + b * b * c, lambda b, c: b * (b // 2),
]


@pytest.mark.parametrize("i", range(len(_EXPRESSIONS)))
def test_dimension_expressions_print_as_jaxs(i: int) -> None:
    mine = _EXPRESSIONS[i](*minijax.export.symbolic_shape("b, c"))
    theirs = _EXPRESSIONS[i](*jax.export.symbolic_shape("b, c"))
    assert str(mine) == str(theirs)


def test_comparisons_decide_as_jaxs() -> None:
    def answers(lib: Any) -> list[Any]:
        b, c = lib.export.symbolic_shape("b, c")
        out: list[Any] = []
        for f in (lambda: b == 3, lambda: b == b, lambda: b + c == c + b, lambda: b >= 1, lambda: b > 0,
                  lambda: b + 1 > b, lambda: b >= 2, lambda: b < 3, lambda: int(b), lambda: b >= c):
            try:
                out.append(f())
            except Exception as e:
                out.append((type(e).__name__, str(e).splitlines()[0]))
        return out

    assert answers(minijax) == answers(jax)


def _poly_of(lib: Any) -> Any:
    jnp = lib.numpy

    def f(x: Any) -> Any:
        return (jnp.sin(x).sum(axis=1) * 2, jnp.concatenate([x, x]).reshape(-1), x @ jnp.ones((4, 2), jnp.float32),
                x.T + jnp.zeros(x.shape[::-1]), x.mean(0), x.reshape(x.shape[0], 2, 2), jnp.var(x))

    return f


def _exported(lib: Any, spec: str = "b, 4") -> Any:
    return lib.export.export(lib.jit(_poly_of(lib)))(lib.ShapeDtypeStruct(lib.export.symbolic_shape(spec), np.float32))


@pytest.mark.parametrize("backend", ["xla", "numpy"])
def test_exported_avals_and_results_match_jax(backend: str) -> None:
    with config_context(minijax_backend=backend):
        mine = _exported(minijax)
        theirs = _exported(jax)
        assert [repr(a) for a in mine.in_avals] == [repr(a) for a in theirs.in_avals]
        assert [repr(a) for a in mine.out_avals] == [repr(a) for a in theirs.out_avals]
        for n in (1, 3, 6):
            x = np.random.RandomState(n).randn(n, 4).astype(np.float32)
            for m, t in zip(mine.call(x), theirs.call(x)):
                assert m.shape == t.shape
                np.testing.assert_allclose(np.asarray(m), np.asarray(t), rtol=2e-5, atol=1e-6)
        if backend == "xla":
            assert "tensor<?x4xf32>" in mine.mlir_module() and "tensor<?x4xf32>" in theirs.mlir_module()


def _errors(lib: Any) -> list[tuple[str, str]]:
    two = lib.export.export(lib.jit(lambda x, y: x + y))(
        *lib.export.symbolic_args_specs((np.ones((2, 4)), np.ones((2, 4))), "b, 4"))
    square = lib.export.export(lib.jit(lambda x: x.sum()))(lib.ShapeDtypeStruct(lib.export.symbolic_shape("b, b"), np.float32))
    even = lib.export.export(lib.jit(lambda x: x.sum()))(lib.ShapeDtypeStruct(lib.export.symbolic_shape("2*b"), np.float32))
    one = lib.export.export(lib.jit(lambda x: x.sum()))(lib.ShapeDtypeStruct(lib.export.symbolic_shape("b"), np.float32))
    f32 = np.float32
    cases = [
        lambda: two.call(np.ones((3, 5), f32), np.ones((3, 5), f32)),
        lambda: two.call(np.ones((3,), f32), np.ones((3,), f32)),
        lambda: two.call(np.ones((3, 4), np.int32), np.ones((3, 4), np.int32)),
        lambda: two.call(np.ones((3, 4), f32), np.ones((2, 4), f32)),
        lambda: square.call(np.ones((3, 4), f32)),
        lambda: even.call(np.ones((3,), f32)),
        lambda: one.call(np.ones((0,), f32)),
        lambda: lib.export.symbolic_shape("b, 3", like=(2, 4)),
        lambda: lib.export.export(lib.jit(lambda x: x.reshape(3, -1)))(
            lib.ShapeDtypeStruct(lib.export.symbolic_shape("b, 4"), np.float32)),
    ]
    out = []
    for case in cases:
        with pytest.raises(Exception) as info:
            case()
        out.append((type(info.value).__name__, str(info.value).split("\n")[0]))
    return out


def test_errors_match_jax() -> None:
    mine, theirs = _errors(minijax), _errors(jax)
    for m, t in zip(mine, theirs):
        assert m[0] == t[0]
        if "remainder" in t[1] and "Cannot divide" in t[1]:  # JAX prints the remainder as mod(4*b, - 3)
            assert m[1].split(". The remainder")[0] == t[1].split(". The remainder")[0]
        else:
            assert m[1] == t[1]


def test_even_batch_size_solves_the_variable_as_jax() -> None:
    for lib in (minijax, jax):
        exp = lib.export.export(lib.jit(lambda x: x.reshape(-1, 2).sum(1)))(
            lib.ShapeDtypeStruct(lib.export.symbolic_shape("2*b"), np.float32))
        assert repr(exp.out_avals[0]) == "ShapedArray(float32[b])"
        np.testing.assert_allclose(np.asarray(exp.call(np.arange(6, dtype=np.float32))), [1, 5, 9])
