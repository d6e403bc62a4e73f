"""The structural / creation / index / io names of issue 21 on each backend.

Values are checked against NumPy (which these names mirror), dtypes and weak
types against JAX's rules, and the traceable ones under jit, grad and vmap.
The comparison with real JAX is tests/test_jnp_structural_more_oracle.py.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax.errors import ConcretizationTypeError

A = np.arange(12, dtype=np.float32).reshape(3, 4)


def check(ours: object, expected: object, dtype: object = None, weak: bool = False) -> None:
    got = np.asarray(ours)
    np.testing.assert_allclose(got, np.asarray(expected), rtol=1e-6)
    assert got.shape == np.shape(expected)
    if dtype is not None:
        assert ours.dtype == np.dtype(dtype)  # type: ignore[attr-defined]
        assert ours.weak_type is weak  # type: ignore[attr-defined]


def test_append_insert_delete_match_numpy() -> None:
    check(jnp.append(A, 1.0), np.append(A, 1.0), np.float32)
    check(jnp.insert(A, 1, 9.0, axis=1), np.insert(A, 1, 9.0, axis=1), np.float32)
    obj = np.array([0, 2, 2, -1])
    check(jnp.insert(np.arange(5), obj, np.array([10, 20, 30, 40])), np.insert(np.arange(5), obj, [10, 20, 30, 40]))
    check(jnp.delete(A, 1, axis=0), np.delete(A, 1, axis=0))
    check(jnp.delete(A, np.array([0, 0, 2]), axis=1), np.delete(A, [0, 0, 2], axis=1))
    check(jnp.delete(A, np.array([True, False, True]), axis=0), np.delete(A, [True, False, True], axis=0))


def test_insert_and_delete_trace_with_traced_indices() -> None:
    # Traced insertion points and (unique) deletion points: no concrete values needed.
    ins = jax.jit(lambda x, i: jnp.insert(x, i, -1.0))(np.arange(5.0), np.array([1, 3]))
    check(ins, np.insert(np.arange(5.0), [1, 3], -1.0), np.float32)
    dele = jax.jit(lambda x, i: jnp.delete(x, i, assume_unique_indices=True))(np.arange(6.0), np.array([4, 0]))
    check(dele, np.delete(np.arange(6.0), [4, 0]))
    with pytest.raises(ConcretizationTypeError, match="'obj' array argument of jnp.delete"):
        jax.jit(lambda i: jnp.delete(A, i))(np.array([1]))
    g = jax.grad(lambda x: jnp.sum(jnp.insert(x, 1, 2.0) ** 2))(jnp.arange(3.0))
    check(g, 2 * np.arange(3.0))
    v = jax.vmap(lambda x: jnp.delete(x, 1))(jnp.asarray(A))
    check(v, np.delete(A, 1, axis=1))


def test_resize_trim_zeros() -> None:
    check(jnp.resize(A, (5, 7)), np.resize(A, (5, 7)))
    check(jnp.resize(np.arange(5), 3), np.resize(np.arange(5), 3))
    check(jnp.resize(np.zeros(0, np.int32), (2, 2)), np.zeros((2, 2)))
    f = np.array([0, 0, 1, 2, 0, 3, 0])
    for trim in ("fb", "f", "b", "B"):
        check(jnp.trim_zeros(f, trim), np.trim_zeros(f, trim))
    with pytest.raises(ConcretizationTypeError, match="trim_zeros"):
        jax.jit(jnp.trim_zeros)(f)


def test_choose_compress_extract_place_fill_diagonal() -> None:
    a = np.array([0, 2, 1])
    choices = [np.arange(3), np.arange(3) * 10, np.full(3, 100)]
    check(jnp.choose(a, choices), np.choose(a, choices))
    check(jnp.choose(np.array([0, 5, -1]), choices, mode="wrap"), np.choose([0, 5, -1], choices, mode="wrap"))
    clipped = jax.jit(lambda i: jnp.choose(i, choices, mode="clip"))(np.array([0, 5, -1]))
    check(clipped, np.choose([0, 5, -1], choices, mode="clip"))
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        jnp.choose(np.array([3]), choices)
    cond = np.array([True, False, True])
    check(jnp.compress(cond, A, axis=0), np.compress(cond, A, axis=0))
    padded = jax.jit(lambda c: jnp.compress(c, A, axis=1, size=3, fill_value=-1))(cond)
    check(padded, np.concatenate([np.compress(cond, A, axis=1), np.full((3, 1), -1.0)], axis=1))
    check(jnp.extract(A > 5, A), np.extract(A > 5, A))
    placed = A.copy()
    np.place(placed, A % 3 == 0, [-1.0, -2.0])
    check(jnp.place(A, A % 3 == 0, np.array([-1.0, -2.0]), inplace=False), placed)
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.place(A, A > 0, 1.0)
    filled = A.copy()
    np.fill_diagonal(filled, 5.0)
    check(jnp.fill_diagonal(A, 5.0, inplace=False), filled)
    with pytest.raises(NotImplementedError, match="inplace=False"):
        jnp.fill_diagonal(A, 1.0)
    g = jax.grad(lambda x: jnp.sum(jnp.compress(cond, x, axis=0, size=2) ** 2))(jnp.asarray(A))
    check(g, 2 * A * cond[:, None])


def test_flat_index_helpers() -> None:
    idx = np.array([0, 5, 11])
    for ours, theirs in zip(jnp.unravel_index(idx, (3, 4)), np.unravel_index(idx, (3, 4))):
        check(ours, theirs)
    clamped = jnp.unravel_index(np.array([12, -13]), (3, 4))
    check(clamped[0], [2, 0])
    multi = (np.array([0, 2]), np.array([3, 1]))
    check(jnp.ravel_multi_index(multi, (3, 4)), np.ravel_multi_index(multi, (3, 4)))
    check(jnp.ravel_multi_index(multi, (3, 4), order="F"), np.ravel_multi_index(multi, (3, 4), order="F"))
    wrapped = jax.jit(lambda i, j: jnp.ravel_multi_index((i, j), (3, 4), mode="wrap"))(np.array([-1, 5]), np.array([9]))
    check(wrapped, np.ravel_multi_index((np.array([-1, 5]), np.array([9])), (3, 4), mode="wrap"))
    check(jnp.indices((2, 3)), np.indices((2, 3)), np.int32)
    for ours, theirs in zip(jnp.indices((2, 3), sparse=True), np.indices((2, 3), sparse=True)):
        check(ours, theirs)
    check(jnp.asarray(A)[jnp.ix_(np.array([0, 2]), np.array([1, 3]))], A[np.ix_([0, 2], [1, 3])])
    for ours, theirs in zip(jnp.mask_indices(3, jnp.triu), np.mask_indices(3, np.triu)):
        check(ours, theirs)


def test_joining_and_splitting() -> None:
    blocks = [[np.ones((2, 2)), np.zeros((2, 1))], [np.full((1, 3), 2.0)]]
    check(jnp.block(blocks), np.block(blocks))
    check(jnp.concat([A, A], axis=1), np.concatenate([A, A], axis=1))
    for ours, theirs in zip(jnp.unstack(A, axis=1), np.moveaxis(A, 1, 0)):
        check(ours, theirs)
    x = np.ones((2, 3, 4, 5))
    assert jnp.permute_dims(x, (2, 0, 1, 3)).shape == (4, 2, 3, 5)
    for axis, start in ((3, 1), (0, 4), (1, -1)):
        assert jnp.rollaxis(x, axis, start).shape == np.rollaxis(x, axis, start).shape
    for fn, np_fn, arr, spec in ((jnp.hsplit, np.hsplit, A, 2), (jnp.vsplit, np.vsplit, A, [1]),
                                 (jnp.dsplit, np.dsplit, np.ones((2, 2, 4)), 2)):  # fmt: skip
        for ours, theirs in zip(fn(arr, spec), np_fn(arr, spec)):
            check(ours, theirs)
    stacked = jax.vmap(lambda r: jnp.stack(jnp.unstack(r)[::-1]))(jnp.asarray(A))
    check(stacked, A[:, ::-1])


def test_ranges_and_grids() -> None:
    check(jnp.logspace(0, 3, 4), np.logspace(0, 3, 4), np.float32)
    check(jnp.logspace(0.0, 1.0, 5, endpoint=False, base=2.0), np.logspace(0, 1, 5, endpoint=False, base=2.0))
    check(jnp.geomspace(1, 1000, 4), np.geomspace(1, 1000, 4), np.float32)
    check(jnp.geomspace(-1.0, -100.0, 3), np.geomspace(-1.0, -100.0, 3))
    check(jnp.fromfunction(lambda i, k: i * 10 + k, (3, 4)), np.fromfunction(lambda i, k: i * 10 + k, (3, 4)))
    check(jnp.mgrid[0:3, 0:2], np.mgrid[0:3, 0:2], np.int32)
    check(jnp.mgrid[0:1:5j], np.mgrid[0:1:5j])
    for ours, theirs in zip(jnp.ogrid[0:3, 0:4:2], np.ogrid[0:3, 0:4:2]):
        check(ours, theirs)
    check(jnp.r_[np.array([1, 2]), 0, 0, np.array([4, 6])], np.r_[[1, 2], 0, 0, [4, 6]])
    check(jnp.r_["0,2", np.array([1, 2]), np.array([3, 4])], np.r_["0,2", [1, 2], [3, 4]])
    check(jnp.r_[-1:1:5j, 3], np.r_[-1:1:5j, 3])
    check(jnp.c_[np.array([1, 2, 3]), np.array([4, 5, 6])], np.c_[[1, 2, 3], [4, 5, 6]])
    assert jnp.s_ is np.s_ and jnp.index_exp is np.index_exp
    g = jax.grad(lambda a: jnp.sum(jnp.logspace(a, 2.0, 3)))(0.0)
    assert np.isfinite(float(g)) and float(g) > 0


def test_bits_roundtrip_and_match_numpy() -> None:
    bits = np.array([[1, 0, 1, 1, 0, 0, 0, 1, 1, 1], [0] * 9 + [1]], np.uint8)
    for axis, order in ((None, "big"), (1, "little")):
            packed = jnp.packbits(bits, axis=axis, bitorder=order)
            check(packed, np.packbits(bits, axis=axis, bitorder=order), np.uint8)
            check(jnp.unpackbits(packed, axis=axis, bitorder=order), np.unpackbits(np.asarray(packed), axis=axis,
                                                                                   bitorder=order))  # fmt: skip
    check(jnp.unpackbits(np.array([3], np.uint8), count=11), np.unpackbits(np.array([3], np.uint8), count=11))
    with pytest.raises(TypeError, match="unsigned byte"):
        jnp.unpackbits(np.ones(3, np.int32))


def test_io_print_and_dtype_names(tmp_path: object) -> None:
    buf = io.BytesIO()
    jnp.save(buf, jnp.arange(3.0).astype(jnp.bfloat16))
    buf.seek(0)
    loaded = jnp.load(buf)
    assert isinstance(loaded, jax.Array) and loaded.dtype == jnp.bfloat16
    check(loaded.astype(np.float32), [0.0, 1.0, 2.0])
    check(jnp.frombuffer(np.arange(4, dtype=np.int32).tobytes(), dtype=np.int32), np.arange(4))
    check(jnp.fromstring("1 2 3.5", sep=" "), [1.0, 2.0, 3.5], np.float32)
    for name in ("fromiter", "fromfile"):
        with pytest.raises(NotImplementedError, match="non-pure"):
            getattr(jnp, name)([1])
    with jnp.printoptions(precision=2):
        assert jnp.get_printoptions()["precision"] == 2
        assert "1.23" in jnp.array_str(jnp.asarray([1.23456]))
    assert jnp.iterable(A) and not jnp.iterable(1.0)
    assert jnp.isdtype(jnp.bfloat16, "real floating") and not jnp.isdtype(np.int8, "unsigned integer")
    assert jnp.isdtype(np.uint8, ("integral", np.float32))
    with pytest.raises(ValueError, match="Unrecognized kind"):
        jnp.isdtype(np.float32, "reals")
    check(jnp.copy(A), A, np.float32)
    assert jnp.bool is jnp.bool_ and jnp.single(2).dtype == np.float32 and jnp.object_ is np.object_


def test_dlpack_both_ways() -> None:
    x = jnp.arange(5.0)
    assert x.__dlpack_device__() == (1, 0)
    host = np.from_dlpack(x)
    check(host, np.arange(5.0))
    back = jax.dlpack.from_dlpack(np.arange(4))
    check(back, np.arange(4), np.int32)
    check(jnp.from_dlpack(x), np.arange(5.0), np.float32)
    assert jax.dlpack.is_supported_dtype(jnp.bfloat16) and not jax.dlpack.is_supported_dtype(np.dtype("U3"))
    with pytest.raises(TypeError, match="__dlpack__"):
        jax.dlpack.from_dlpack([1, 2])
    with pytest.raises(ValueError, match="copy=False"):
        jax.dlpack.from_dlpack(np.arange(3.0), copy=False)


def test_frompyfunc_ufunc_methods() -> None:
    u = jnp.frompyfunc(lambda a, b: a * 2 + b, 2, 1, identity=0)
    assert isinstance(u, jnp.ufunc) and (u.nin, u.nout, u.identity) == (2, 1, 0)
    x = np.arange(6.0).reshape(2, 3)
    check(u(x, 1.0), x * 2 + 1, np.float32)
    check(u.reduce(x, axis=1), [(0 * 2 + 1) * 2 + 2, (3 * 2 + 4) * 2 + 5])
    check(u.accumulate(x, axis=1), [[0, 1, 4], [3, 10, 25]])
    check(u.outer(np.arange(2.0), np.arange(3.0)), np.arange(2.0)[:, None] * 2 + np.arange(3.0))
    check(u.at(np.zeros(4), np.array([0, 0, 2]), np.array([1.0, 2.0, 3.0]), inplace=False), [4, 0, 3, 0])
    check(jax.grad(lambda a: u.reduce(a))(jnp.arange(3.0)), [4.0, 2.0, 1.0])
    with pytest.raises(NotImplementedError, match="inplace=False"):
        u.at(np.zeros(3), 0, 1.0)
