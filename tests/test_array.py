"""``minijax.Array`` and tracers as values: printing, operators, methods, conversions.

The expected strings and behaviours were taken from JAX 0.10 (the oracle).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import errors

# ---------------------------------------------------------------------------
# repr and str


REPRS = [
    (lambda: jnp.arange(6.0).reshape(2, 3), "Array([[0., 1., 2.],\n       [3., 4., 5.]], dtype=float32)",
     "[[0. 1. 2.]\n [3. 4. 5.]]"),
    (lambda: jnp.add(1.0, 0), "Array(1., dtype=float32, weak_type=True)", "1.0"),
    (lambda: jnp.array(1), "Array(1, dtype=int32, weak_type=True)", "1"),
    (lambda: jnp.array([True, False]), "Array([ True, False], dtype=bool)", "[ True False]"),
    (lambda: jnp.array(True), "Array(True, dtype=bool)", "True"),
    (lambda: jnp.array([1, 2.5], jnp.bfloat16), "Array([1, 2.5], dtype=bfloat16)", "[1 2.5]"),
    (lambda: jnp.array(2.5, jnp.bfloat16), "Array(2.5, dtype=bfloat16)", "2.5"),
    (lambda: jnp.array([1.5, 2.0], jnp.float16), "Array([1.5, 2. ], dtype=float16)", "[1.5 2. ]"),
    (lambda: jnp.float32(1.5), "Array(1.5, dtype=float32)", "1.5"),
    (lambda: jnp.arange(3, dtype=jnp.uint8), "Array([0, 1, 2], dtype=uint8)", "[0 1 2]"),
    (lambda: jnp.array([1e-8, 1e8]), "Array([1.e-08, 1.e+08], dtype=float32)", "[1.e-08 1.e+08]"),
    (lambda: jnp.array([jnp.nan, jnp.inf, -jnp.inf]), "Array([ nan,  inf, -inf], dtype=float32)", "[ nan  inf -inf]"),
    (lambda: jnp.ones((2, 2, 2), jnp.int8),
     "Array([[[1, 1],\n        [1, 1]],\n\n       [[1, 1],\n        [1, 1]]], dtype=int8)",
     "[[[1 1]\n  [1 1]]\n\n [[1 1]\n  [1 1]]]"),
    (lambda: jnp.full((3,), 2.5) * jnp.add(1.0, 0), "Array([2.5, 2.5, 2.5], dtype=float32, weak_type=True)",
     "[2.5 2.5 2.5]"),
]  # fmt: skip


@pytest.mark.parametrize(("make", "expected_repr", "expected_str"), REPRS)
def test_repr_and_str_like_jax(make: Any, expected_repr: str, expected_str: str) -> None:
    x = make()
    assert repr(x) == expected_repr
    assert str(x) == expected_str


def test_repr_of_empty_and_long_arrays_like_jax() -> None:
    # Zero-size arrays show their shape; a long last line moves dtype= after it, as JAX prints.
    assert repr(jnp.zeros((0, 3))) == "Array([], shape=(0, 3), dtype=float32)"
    assert repr(jnp.zeros(0)) == "Array([], shape=(0,), dtype=float32)"
    assert repr(jnp.arange(0.0, 1.0, 0.1)) == (
        "Array([0.        , 0.1       , 0.2       , 0.3       , 0.4       ,\n"
        "       0.5       , 0.6       , 0.7       , 0.8       , 0.90000004],      dtype=float32)"
    )


def test_format_of_scalars() -> None:
    w = jnp.float32(3.14159)
    assert f"{w:<.2f}" == "3.14"
    assert f"{jnp.array(7):>4d}" == "   7"
    assert format(jnp.array(True)) == "True"


# ---------------------------------------------------------------------------
# Operators


def values(x: Any) -> np.ndarray:
    return np.asarray(x)


BINARY_OPERATORS = [
    (operator.add, jnp.add), (operator.sub, jnp.subtract), (operator.mul, jnp.multiply),
    (operator.truediv, jnp.true_divide), (operator.floordiv, jnp.floor_divide), (operator.mod, jnp.remainder),
    (operator.pow, jnp.power), (operator.lt, jnp.less), (operator.le, jnp.less_equal), (operator.gt, jnp.greater),
    (operator.ge, jnp.greater_equal), (operator.eq, jnp.equal), (operator.ne, jnp.not_equal),
]  # fmt: skip
INT_OPERATORS = [
    (operator.and_, jnp.bitwise_and), (operator.or_, jnp.bitwise_or), (operator.xor, jnp.bitwise_xor),
    (operator.lshift, jnp.left_shift), (operator.rshift, jnp.right_shift),
]  # fmt: skip


@pytest.mark.parametrize(("op", "fn"), BINARY_OPERATORS + INT_OPERATORS)
@pytest.mark.parametrize("other", [2, np.int32(3), "array", "numpy"])
def test_binary_operators_are_the_jnp_functions(op: Any, fn: Any, other: Any) -> None:
    x = jnp.array([1, 2, 3], dtype=jnp.int32)
    y = {"array": jnp.array([3, 1, 2]), "numpy": np.array([3, 1, 2], np.int32)}.get(other, other)
    for got, want in ((op(x, y), fn(x, y)), (op(y, x), fn(y, x))):
        assert isinstance(got, jax.Array)
        assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type)
        np.testing.assert_array_equal(values(got), values(want))


def test_reflected_operators_with_python_scalars() -> None:
    x = jnp.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(values(1 - x), [0.0, -1.0, -3.0])
    np.testing.assert_allclose(values(2 / x), [2.0, 1.0, 0.5])
    np.testing.assert_allclose(values(2**x), [2.0, 4.0, 16.0])
    np.testing.assert_allclose(values(7 // x), [7.0, 3.0, 1.0])
    np.testing.assert_allclose(values(7 % x), [0.0, 1.0, 3.0])
    assert (1 - x).dtype == np.float32 and not (1 - x).weak_type
    q, r = divmod(jnp.array([7, -7]), 2)
    np.testing.assert_array_equal(values(q), [3, -4])
    np.testing.assert_array_equal(values(r), [1, 1])
    q, r = divmod(7, jnp.array([2, -2]))
    np.testing.assert_array_equal(values(q), [3, -4])
    np.testing.assert_array_equal(values(r), [1, -1])


def test_numpy_on_the_left_gives_an_array() -> None:
    out = np.ones(3, np.float32) + jnp.arange(3.0)
    assert isinstance(out, jax.Array)
    np.testing.assert_array_equal(values(out), [1.0, 2.0, 3.0])


def test_unary_operators() -> None:
    x = jnp.array([1, -2, 3])
    np.testing.assert_array_equal(values(-x), [-1, 2, -3])
    np.testing.assert_array_equal(values(+x), [1, -2, 3])
    np.testing.assert_array_equal(values(abs(x)), [1, 2, 3])
    np.testing.assert_array_equal(values(~x), [-2, 1, -4])
    np.testing.assert_array_equal(values(~jnp.array([True, False])), [False, True])


def test_python_round() -> None:
    r = round(jnp.float32(2.5))
    assert (r.dtype, r.weak_type, int(r)) == (np.int32, False, 2)
    r1 = round(jnp.float32(2.56), 1)
    assert r1.dtype == np.float32
    np.testing.assert_allclose(float(r1), 2.6, rtol=1e-6)


@pytest.mark.parametrize("other", [[1, 2, 3], (1, 2, 3), "abc", object()])
def test_operators_refuse_non_arrays(other: Any) -> None:
    x = jnp.ones(3)
    with pytest.raises(TypeError, match="unsupported operand"):
        x + other  # noqa: B018
    with pytest.raises(TypeError):  # "unsupported operand", or for sequences an __index__ error
        other * x  # noqa: B018
    assert (x == other) is False
    assert (x != other) is True


def test_contains() -> None:
    assert 2 in jnp.arange(3)
    assert 5 not in jnp.arange(3)


def test_matmul_operator() -> None:
    a = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(values(a @ a.T), values(a) @ values(a).T)
    np.testing.assert_allclose(values(np.ones((1, 2), np.float32) @ a), np.ones((1, 2)) @ values(a))


# ---------------------------------------------------------------------------
# Methods


def test_methods_forward_to_jnp() -> None:
    a = jnp.arange(6.0).reshape(2, 3)
    h = values(a)
    np.testing.assert_allclose(values(a.sum(0)), h.sum(0))
    np.testing.assert_allclose(values(a.mean(axis=1, keepdims=True)), h.mean(axis=1, keepdims=True))
    np.testing.assert_allclose(values(a.max()), h.max())
    np.testing.assert_allclose(values(a.min(axis=0)), h.min(axis=0))
    np.testing.assert_allclose(values(a.prod(1)), h.prod(1))
    np.testing.assert_allclose(values(a.var()), h.var(), rtol=1e-6)
    np.testing.assert_allclose(values(a.std(ddof=1)), h.std(ddof=1), rtol=1e-6)
    assert int(a.argmax()) == 5 and int(a.argmin()) == 0
    assert bool(a.all()) is False and bool(a.any()) is True
    np.testing.assert_allclose(values(a.clip(1, 4)), h.clip(1, 4))
    np.testing.assert_allclose(values((a / 3).round(2)), np.round(h / 3, 2), rtol=1e-6)
    np.testing.assert_allclose(values(a.ptp(axis=1)), np.ptp(h, axis=1))


def test_shape_methods() -> None:
    a = jnp.arange(6).reshape(2, 3)
    assert a.reshape(3, 2).shape == (3, 2)
    assert a.reshape((3, 2)).shape == (3, 2)
    assert a.reshape(-1).shape == (6,)
    assert a.ravel().shape == (6,) and a.flatten().shape == (6,)
    assert a.transpose().shape == (3, 2) and a.transpose(1, 0).shape == (3, 2)
    assert a.transpose((1, 0)).shape == (3, 2)
    assert a.T.shape == (3, 2) and a.mT.shape == (3, 2)
    assert a.swapaxes(0, 1).shape == (3, 2)
    assert jnp.ones((1, 3, 1)).squeeze().shape == (3,)
    assert jnp.ones((1, 3, 1)).squeeze(0).shape == (3, 1)
    np.testing.assert_array_equal(values(a.T), values(a).T)
    with pytest.raises(ValueError, match="at least two-dimensional for matrix_transpose"):
        jnp.ones(3).mT  # noqa: B018


def test_dtype_methods_and_properties() -> None:
    a = jnp.arange(3)
    b = a.astype(jnp.float16)
    assert b.dtype == np.float16 and not b.weak_type
    assert a.astype("bool").dtype == np.bool_
    weak = jnp.add(1.0, 1.0)
    assert weak.weak_type and not weak.astype(jnp.float32).weak_type
    assert a.nbytes == 12 and a.itemsize == 4
    assert a.real is not None and values(a.real).tolist() == [0, 1, 2]
    assert values(a.imag).tolist() == [0, 0, 0] and a.imag.dtype == a.dtype
    assert values(a.conj()).tolist() == [0, 1, 2] and values(a.conjugate()).tolist() == [0, 1, 2]
    c = a.copy()
    assert c is not a and values(c).tolist() == [0, 1, 2]
    assert a.view() is a and a.view(jnp.int32) is a
    with pytest.raises(NotImplementedError, match="view"):
        a.view(jnp.float32)


def test_item_and_tolist() -> None:
    assert jnp.arange(3).item(1) == 1
    assert jnp.float32(1.5).item() == 1.5
    assert jnp.arange(4).reshape(2, 2).tolist() == [[0, 1], [2, 3]]
    assert jnp.array([True]).tolist() == [True]


def test_at_and_indexing() -> None:
    a = jnp.arange(5)
    np.testing.assert_array_equal(values(a.at[1].set(10)), [0, 10, 2, 3, 4])
    np.testing.assert_array_equal(values(a[1:3]), [1, 2])
    assert int(a[-1]) == 4
    assert [int(v) for v in a] == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------------------
# Conversions and immutability


def test_python_conversions() -> None:
    assert bool(jnp.array(True)) is True and bool(jnp.array(0.0)) is False
    assert int(jnp.float32(2.7)) == 2
    assert float(jnp.array(2)) == 2.0
    assert operator.index(jnp.array(3)) == 3
    assert list(range(10))[jnp.array(2)] == 2
    assert complex(jnp.float32(1.5)) == 1.5 + 0j
    with pytest.raises(TypeError, match="integer scalar"):
        operator.index(jnp.float32(2.0))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(jnp.ones(2))
    with pytest.raises(TypeError):
        len(jnp.float32(1))
    assert len(jnp.ones((4, 2))) == 4


def test_arrays_are_immutable() -> None:
    x = jnp.arange(3)
    with pytest.raises(TypeError, match=r"\.at\["):
        x[0] = 1
    with pytest.raises(TypeError, match="unhashable"):
        hash(x)
    host = np.asarray(x)
    with pytest.raises(ValueError, match="read-only"):
        host[0] = 5
    assert values(x).tolist() == [0, 1, 2]


def test_isinstance_ndarray() -> None:
    assert isinstance(jnp.ones(2), jnp.ndarray)
    assert isinstance(jnp.ones(2), jax.Array)
    assert not isinstance(np.ones(2), jnp.ndarray)
    seen: list[bool] = []

    def f(x: Any) -> Any:
        seen.append(isinstance(x, jnp.ndarray))
        return x

    jax.jit(f)(jnp.ones(2))
    assert seen == [True]


# ---------------------------------------------------------------------------
# Tracers


def under_jit(fn: Any, *args: Any) -> Any:
    return jax.jit(fn)(*args)


@pytest.mark.parametrize(
    ("fn", "error", "message"),
    [
        (lambda x: bool(x[0]), errors.TracerBoolConversionError, "boolean conversion"),
        (lambda x: 1 if x[0] > 0 else 0, errors.TracerBoolConversionError, "boolean conversion"),
        (lambda x: int(x[0]), errors.ConcretizationTypeError, "int"),
        (lambda x: float(x[0]), errors.ConcretizationTypeError, "float"),
        (lambda x: x.item(), errors.ConcretizationTypeError, "item()"),
        (lambda x: x.tolist(), errors.ConcretizationTypeError, "tolist()"),
        (lambda x: np.asarray(x), errors.TracerArrayConversionError, "__array__"),
        (lambda x: operator.index(x[0].astype(jnp.int32)), errors.TracerIntegerConversionError, "__index__"),
        (lambda x: hash(x), TypeError, "unhashable"),
        (lambda x: x.__setitem__(0, 1), TypeError, r"\.at\["),
        (lambda x: f"{x:.2f}", TypeError, "format"),
    ],
)
def test_tracer_conversions_raise(fn: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        under_jit(fn, jnp.ones(3))


def test_tracers_have_the_array_methods() -> None:
    def f(x: Any) -> Any:
        rows = list(x)
        return (x.T @ x).sum(0) + rows[0].mean() + abs(-x).max() + x.at[0, 0].set(5.0).reshape(-1)[0] + len(x)

    x = jnp.arange(4.0).reshape(2, 2)
    np.testing.assert_allclose(values(under_jit(f, x)), values(f(x)))
    assert under_jit(lambda x: x.nbytes + x.itemsize + x.ndim + x.size, x) == 16 + 4 + 2 + 4


def test_method_and_function_jaxprs_agree() -> None:
    x = jnp.ones((2, 3))
    pairs = [
        (lambda x: x.sum(axis=0), lambda x: jnp.sum(x, axis=0)),
        (lambda x: x + 1, lambda x: jnp.add(x, 1)),
        (lambda x: 2**x, lambda x: jnp.power(2, x)),
        (lambda x: x.astype(jnp.int8), lambda x: x.astype("int8")),
        (lambda x: -x < x, lambda x: jnp.less(jnp.negative(x), x)),
    ]
    for method, function in pairs:
        assert str(jax.make_jaxpr(method)(x)) == str(jax.make_jaxpr(function)(x))


def test_iterating_gives_the_rows_that_indexing_gives_with_one_program_for_all_rows(backend_name: str) -> None:
    # issue 23: a concrete array's rows are taken at an index passed as an operand, so that
    # iterating over many rows compiles one program on XLA, not one slice per row.
    from minijax.backend import get_backend

    for value in [np.arange(12.0, dtype=np.float32).reshape(4, 3), np.arange(5, dtype=np.uint8), np.zeros((0, 2), bool),
                  (np.arange(6) + 1j).astype(np.complex64).reshape(3, 2)]:
        a = jnp.asarray(value)
        rows, indexed = list(a), [a[i] for i in range(a.shape[0])]
        assert [r.aval for r in rows] == [r.aval for r in indexed]
        assert all(np.array_equal(np.asarray(r), np.asarray(s)) for r, s in zip(rows, indexed))
    weak = jnp.asarray(np.arange(3.0, dtype=np.float32)) * 2.0 + jnp.ones(3)
    assert [r.aval for r in jnp.array([1, 2]) * 1.5] == [s.aval for s in [(jnp.array([1, 2]) * 1.5)[i] for i in range(2)]]
    assert [float(r) for r in weak] == [1.0, 3.0, 5.0]
    keys = jax.random.split(jax.random.key(0), 3)  # key arrays: row by row, as before
    assert [str(k) for k in keys] == [str(keys[i]) for i in range(3)]
    if backend_name == "xla":
        backend = get_backend("xla")
        many = jnp.asarray(np.arange(3 * 137, dtype=np.float32).reshape(137, 3))
        before = backend.stats["compiles"]
        assert [float(r[1]) for r in many] == [3.0 * i + 1 for i in range(137)]
        assert backend.stats["compiles"] - before < 10  # one per row would be 137
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(jnp.asarray(1.0)).__next__()
