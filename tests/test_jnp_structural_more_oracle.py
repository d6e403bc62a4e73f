"""The structural / creation / index / io names of issue 21 against real JAX.

Each case is a small program written once against a ``(jax, jnp)`` pair and
run with both libraries: every output's values, shape, dtype and weak type
must agree, and so must the type and the gist of each error.

    /work/venv-oracle/bin/python -m pytest -q -m oracle tests/test_jnp_structural_more_oracle.py
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")
import jax.flatten_util  # noqa: E402, F811  (the submodule, for jax.flatten_util.ravel_pytree)
import jax.numpy as jjnp  # noqa: E402

import minijax as mj  # noqa: E402
import minijax.numpy as mjnp  # noqa: E402

pytestmark = pytest.mark.oracle

Case = Callable[[Any, Any], Any]


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in _leaves(item)]
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _leaves(x[k])]
    return [x]


def same(ours: Any, theirs: Any, rtol: float = 1e-6) -> None:
    o_leaves, t_leaves = _leaves(ours), _leaves(theirs)
    assert len(o_leaves) == len(t_leaves)
    for o, t in zip(o_leaves, t_leaves):
        if not hasattr(t, "dtype") or isinstance(t, np.ndarray):
            assert type(o) is type(t) and np.array_equal(np.asarray(o), np.asarray(t)), (o, t)
            continue
        assert (o.shape, o.dtype, o.weak_type) == (t.shape, t.dtype, t.weak_type), (
            (o.shape, o.dtype, o.weak_type), (t.shape, t.dtype, t.weak_type))  # fmt: skip
        np.testing.assert_allclose(np.asarray(o, np.float64), np.asarray(t, np.float64), rtol=rtol, atol=1e-6)


def run_both(case: Case, rtol: float = 1e-6) -> None:
    theirs = case(jax, jjnp)
    ours = case(mj, mjnp)
    same(ours, theirs, rtol)


def raises_both(case: Case) -> None:
    with pytest.raises(Exception) as theirs:
        case(jax, jjnp)
    with pytest.raises(Exception) as ours:
        case(mj, mjnp)
    # minijax has its own error classes under JAX's names (ConcretizationTypeError, ...).
    assert type(ours.value).__name__ == type(theirs.value).__name__, (ours.value, theirs.value)
    # The first words of JAX's message (before any value it quotes) name the problem.
    gist = str(theirs.value).split("{")[0].split("got")[0].split(";")[0][:40]
    assert gist in str(ours.value), (str(ours.value), str(theirs.value))


A = np.arange(12, dtype=np.float32).reshape(3, 4)

CASES: dict[str, Case] = {
    "append_flat": lambda j, n: n.append(A, 1.0),
    "append_axis": lambda j, n: n.append(A, A[:1], axis=0),
    "append_int_float": lambda j, n: n.append(np.arange(3), 2.5),
    "insert_scalar": lambda j, n: n.insert(A, 1, 9.0, axis=1),
    "insert_array_idx": lambda j, n: n.insert(np.arange(5), np.array([0, 2, 2, -1]), np.array([10, 20, 30, 40])),
    "insert_slice": lambda j, n: n.insert(A, slice(0, 3), 5.0),
    "insert_flat": lambda j, n: n.insert(A, 3, np.array([1, 2])),
    "delete_int": lambda j, n: n.delete(A, 1, axis=0),
    "delete_neg": lambda j, n: n.delete(A, -1),
    "delete_slice": lambda j, n: n.delete(A, slice(None, None, 2), axis=1),
    "delete_array": lambda j, n: n.delete(A, np.array([0, 0, 2]), axis=1),
    "delete_bool": lambda j, n: n.delete(A, np.array([True, False, True]), axis=0),
    "delete_unique": lambda j, n: n.delete(A, n.array([2, 0]), axis=1, assume_unique_indices=True),
    "delete_unique_jit": lambda j, n: j.jit(lambda x, i: n.delete(x, i, axis=0, assume_unique_indices=True))(A, np.array([1])),
    "resize_grow": lambda j, n: n.resize(A, (5, 7)),
    "resize_shrink": lambda j, n: n.resize(np.arange(5), 3),
    "resize_empty": lambda j, n: n.resize(np.zeros(0, np.int32), (2, 2)),
    "trim_zeros": lambda j, n: n.trim_zeros(np.array([0, 0, 1, 2, 0, 3, 0])),
    "trim_zeros_f": lambda j, n: n.trim_zeros(np.array([0, 0, 1, 0]), "f"),
    "trim_zeros_b": lambda j, n: n.trim_zeros(np.array([0, 0, 1, 0]), trim="b"),
    "trim_zeros_2d": lambda j, n: n.trim_zeros(np.pad(np.ones((2, 2)), 1), axis=0),
    "trim_zeros_all0": lambda j, n: n.trim_zeros(np.zeros(3)),
    "choose_raise": lambda j, n: n.choose(np.array([0, 2, 1]), [np.arange(3), np.arange(3) * 10, 100.0]),
    "choose_wrap": lambda j, n: n.choose(np.array([0, 5, -1]), [np.arange(3), np.arange(3) * 10], mode="wrap"),
    "choose_clip": lambda j, n: n.choose(np.array([[0], [5]]), [np.arange(3), np.arange(3) * 10], mode="clip"),
    "choose_jit": lambda j, n: j.jit(lambda a: n.choose(a, [np.arange(3.), np.ones(3)], mode="clip"))(np.array([1, 0, 1])),
    "compress": lambda j, n: n.compress(np.array([True, False, True]), A, axis=0),
    "compress_flat": lambda j, n: n.compress(np.array([0, 1, 1, 0, 1]), A),
    "compress_size": lambda j, n: n.compress(np.array([True, False, True]), A, axis=1, size=3, fill_value=-1),
    "compress_size_jit": lambda j, n: j.jit(lambda c: n.compress(c, A, axis=0, size=2))(np.array([False, True, True])),
    "extract": lambda j, n: n.extract(A > 5, A),
    "extract_size": lambda j, n: n.extract(A > 5, A, size=8, fill_value=7),
    "place": lambda j, n: n.place(A, A % 3 == 0, np.array([-1.0, -2.0]), inplace=False),
    "place_int": lambda j, n: n.place(np.arange(6), np.arange(6) > 2, 9, inplace=False),
    "fill_diagonal": lambda j, n: n.fill_diagonal(A, 5.0, inplace=False),
    "fill_diagonal_vec": lambda j, n: n.fill_diagonal(np.zeros((3, 3, 3), np.int32), np.array([1, 2]), inplace=False),
    "unravel_index": lambda j, n: n.unravel_index(np.array([0, 5, 11, 12, -1, -13]), (3, 4)),
    "unravel_index_scalar": lambda j, n: n.unravel_index(7, (2, 2, 2)),
    "ravel_multi_index": lambda j, n: n.ravel_multi_index((np.array([0, 2]), np.array([3, 1])), (3, 4)),
    "ravel_multi_index_F": lambda j, n: n.ravel_multi_index((np.array([0, 2]), np.array([3, 1])), (3, 4), order="F"),
    "ravel_multi_index_clip": lambda j, n: n.ravel_multi_index((np.array([-1, 5]), np.array([3, 9])), (3, 4), mode="clip"),
    "ravel_multi_index_wrap": lambda j, n: n.ravel_multi_index((np.array([-1, 5]), np.array([3, 9])), (3, 4), mode="wrap"),
    "ravel_multi_index_dtype": lambda j, n: n.ravel_multi_index((np.array([1]), np.array([2])), (3, 4), dtype=np.int16),
    "indices": lambda j, n: n.indices((2, 3)),
    "indices_sparse": lambda j, n: n.indices((2, 3, 4), sparse=True),
    "indices_dtype": lambda j, n: n.indices((2,), dtype=np.int16),
    "indices_empty": lambda j, n: n.indices(()),
    "ix_": lambda j, n: n.ix_(np.array([0, 2]), np.array([1, 3, 0])),
    "ix_index": lambda j, n: n.asarray(A)[n.ix_(np.array([0, 2]), np.array([1, 3]))],
    "ix_empty": lambda j, n: n.ix_(np.zeros(0, np.int32), np.array([1])),
    "mask_indices": lambda j, n: n.mask_indices(3, n.triu),
    "mask_indices_k": lambda j, n: n.mask_indices(4, n.tril, -1, size=8),
    "block": lambda j, n: n.block([[np.ones((2, 2)), np.zeros((2, 1))], [np.full((1, 3), 2.0)]]),
    "block_1d": lambda j, n: n.block([np.arange(2), 5, np.arange(3)]),
    "block_scalar": lambda j, n: n.block(1.0),
    "concat": lambda j, n: n.concat([A, A], axis=1),
    "concat_none": lambda j, n: n.concat([A, np.arange(2.0)], axis=None),
    "unstack": lambda j, n: n.unstack(A),
    "unstack_axis": lambda j, n: n.unstack(A, axis=-1),
    "permute_dims": lambda j, n: n.permute_dims(np.ones((2, 3, 4)), (2, 0, 1)),
    "rollaxis": lambda j, n: n.rollaxis(np.ones((2, 3, 4, 5)), 3, 1),
    "rollaxis_end": lambda j, n: n.rollaxis(np.ones((2, 3, 4, 5)), 0, 4),
    "rollaxis_neg": lambda j, n: n.rollaxis(np.ones((2, 3, 4, 5)), 1, -1),
    "hsplit": lambda j, n: n.hsplit(A, 2),
    "hsplit_1d": lambda j, n: n.hsplit(np.arange(6), [1, 4]),
    "vsplit": lambda j, n: n.vsplit(A, 3),
    "vsplit_1d": lambda j, n: n.vsplit(np.arange(4), 2),
    "dsplit": lambda j, n: n.dsplit(np.ones((2, 2, 4)), [1]),
    "logspace": lambda j, n: n.logspace(0, 3, 4),
    "logspace_base": lambda j, n: n.logspace(0.0, 1.0, 5, endpoint=False, base=2.0),
    "logspace_dtype": lambda j, n: n.logspace(0, 2, 3, dtype=np.int32),
    "logspace_axis": lambda j, n: n.logspace(np.array([0.0, 1.0]), np.array([1.0, 2.0]), 3, axis=1),
    "geomspace": lambda j, n: n.geomspace(1, 1000, 4),
    "geomspace_neg": lambda j, n: n.geomspace(-1.0, -100.0, 3, endpoint=True),
    "geomspace_axis": lambda j, n: n.geomspace(np.array([1.0, 2.0]), np.array([8.0, 32.0]), 4, axis=-1),
    "fromfunction": lambda j, n: n.fromfunction(lambda i, k: i * 10 + k, (3, 4)),
    "fromfunction_int": lambda j, n: n.fromfunction(lambda i: i * 2, (4,), dtype=int),
    "mgrid": lambda j, n: n.mgrid[0:3, 0:2],
    "mgrid_complex": lambda j, n: n.mgrid[0:1:5j],
    "mgrid_mixed": lambda j, n: n.mgrid[0:2, 0.0:1.0:0.5],
    "ogrid": lambda j, n: n.ogrid[0:3, 0:4:2],
    "ogrid_1": lambda j, n: n.ogrid[1:4],
    "r_": lambda j, n: n.r_[np.array([1, 2]), 0, 0, np.array([4.0])],
    "r_slice": lambda j, n: n.r_[-1:1:5j, 3, 0:3],
    "r_directive": lambda j, n: n.r_["0,2", np.array([1, 2]), np.array([3, 4])],
    "r_row": lambda j, n: n.r_["r", np.array([1, 2]), np.array([3, 4])],
    "r_col": lambda j, n: n.r_["c", np.array([1, 2]), np.array([3, 4])],
    "r_trans": lambda j, n: n.r_["0,2,0", np.array([1, 2]), np.array([3, 4])],
    "c_": lambda j, n: n.c_[np.array([1, 2, 3]), np.array([4, 5, 6])],
    "c_2d": lambda j, n: n.c_[np.ones((2, 2)), np.zeros((2, 1)), np.array([7.0, 8.0])],
    "s_": lambda j, n: n.asarray(A)[n.s_[1:, ::2]],
    "index_exp": lambda j, n: n.asarray(A)[n.index_exp[..., 1]],
    "packbits": lambda j, n: n.packbits(np.array([1, 0, 1, 1, 0, 0, 0, 1, 1, 1])),
    "packbits_little": lambda j, n: n.packbits(np.eye(3, 10, dtype=bool), axis=1, bitorder="little"),
    "packbits_axis0": lambda j, n: n.packbits(np.arange(18).reshape(9, 2) % 3, axis=0),
    "unpackbits": lambda j, n: n.unpackbits(np.array([[2, 7], [255, 0]], np.uint8)),
    "unpackbits_axis": lambda j, n: n.unpackbits(np.array([[2, 7], [255, 0]], np.uint8), axis=1, bitorder="little"),
    "unpackbits_count": lambda j, n: n.unpackbits(np.array([3, 128], np.uint8), count=5),
    "unpackbits_count_pad": lambda j, n: n.unpackbits(np.array([3], np.uint8), count=11),
    "frombuffer": lambda j, n: n.frombuffer(np.arange(4, dtype=np.int32).tobytes(), dtype=np.int32),
    "frombuffer_offset": lambda j, n: n.frombuffer(b"\x01\x02\x03\x04", dtype=np.uint8, count=2, offset=1),
    "fromstring": lambda j, n: n.fromstring("1 2 3.5", sep=" "),
    "fromstring_int": lambda j, n: n.fromstring("1,2,3", dtype=int, sep=","),
    "copy": lambda j, n: n.copy(A),
    "copy_scalar": lambda j, n: n.copy(1.0),
    "isdtype": lambda j, n: [n.isdtype(d, k) for d in (np.float32, n.bfloat16, np.int8, np.uint32, np.bool_)
                             for k in ("bool", "signed integer", "unsigned integer", "integral", "real floating",
                                       "complex floating", "numeric", np.float32, ("integral", np.bool_))],
    "scalar_aliases": lambda j, n: [n.bool(1), n.single(2), n.double(3)],
    "scalar_alias_dtypes": lambda j, n: [np.dtype(n.bool) == np.bool_, np.dtype(n.single), np.dtype(n.double),
                                         n.character is np.character, n.flexible is np.flexible,
                                         n.object_ is np.object_, n.bool is n.bool_],
    "from_dlpack_np": lambda j, n: n.from_dlpack(np.arange(4.0)),
    "dlpack_np_int64": lambda j, n: j.dlpack.from_dlpack(np.arange(4)),
    "dlpack_roundtrip": lambda j, n: np.from_dlpack(n.arange(5.0)),
    "dlpack_supported": lambda j, n: [j.dlpack.is_supported_dtype(d) for d in (np.float32, np.int64, np.bool_, n.bfloat16, np.float16)],
    "load_save": lambda j, n: _save_load(n, np.arange(6.0).reshape(2, 3)),
    "load_bf16": lambda j, n: _save_load(n, np.arange(3.0).astype(n.bfloat16)),
    # ufunc / frompyfunc
    "ufunc_call": lambda j, n: _u(n)(np.arange(6.0).reshape(2, 3), 1.0),
    "ufunc_call_scalar": lambda j, n: _u(n)(1.0, 2.0),
    "ufunc_reduce": lambda j, n: _u(n).reduce(np.arange(6.0).reshape(2, 3)),
    "ufunc_reduce_keepdims": lambda j, n: _u(n).reduce(np.arange(6.0).reshape(2, 3), axis=1, keepdims=True),
    "ufunc_reduce_none_initial": lambda j, n: _u(n).reduce(np.arange(6.0), axis=None, initial=5.0),
    "ufunc_reduce_where": lambda j, n: _u(n).reduce(np.ones((2, 3)), axis=1, where=np.array([True, False, True])),
    "ufunc_accumulate": lambda j, n: _u(n).accumulate(np.arange(6.0).reshape(2, 3), axis=1),
    "ufunc_outer": lambda j, n: _u(n).outer(np.arange(2.0), np.arange(3.0)),
    "ufunc_reduceat": lambda j, n: _u(n).reduceat(np.arange(8.0), np.array([0, 4, 1, 5])),
    "ufunc_at": lambda j, n: _u(n).at(np.zeros(4), np.array([0, 0, 2]), np.array([1.0, 2.0, 3.0]), inplace=False),
    "ufunc_at_int": lambda j, n: _u(n).at(np.arange(4), 1, 5, inplace=False),
    "ufunc_props": lambda j, n: [_u(n).nin, _u(n).nout, _u(n).nargs, _u(n).identity, repr(_u(n))],
    "ufunc_grad": lambda j, n: j.grad(lambda a: _u(n).reduce(a))(np.arange(3.0)),
    "ufunc_jit": lambda j, n: j.jit(lambda a: _u(n)(a, a))(np.arange(3.0)),
    # jax.ops
    "segment_sum": lambda j, n: j.ops.segment_sum(np.arange(6.0), np.array([0, 0, 1, 2, 2, 2])),
    "segment_sum_n": lambda j, n: j.ops.segment_sum(np.arange(6), np.array([0, 0, 1, 5, 2, -1]), num_segments=4),
    "segment_sum_2d": lambda j, n: j.ops.segment_sum(np.ones((4, 3)), np.array([1, 0, 1, 1]), 2, indices_are_sorted=False),
    "segment_sum_bucket": lambda j, n: j.ops.segment_sum(np.arange(7.0), np.array([0, 0, 1, 1, 1, 2, 2]), 3, bucket_size=2),
    "segment_sum_clip": lambda j, n: j.ops.segment_sum(np.arange(4.0), np.array([0, 9, -3, 1]), 2, mode="clip"),
    "segment_prod": lambda j, n: j.ops.segment_prod(np.arange(1.0, 7.0), np.array([0, 0, 1, 1, 3, 3]), 4),
    "segment_prod_bucket": lambda j, n: j.ops.segment_prod(np.arange(1, 7), np.array([0, 0, 1, 1, 1, 0]), 2, bucket_size=4),
    "segment_max": lambda j, n: j.ops.segment_max(np.array([3.0, -1.0, 2.0, 5.0]), np.array([0, 0, 2, 2]), 3),
    "segment_max_int": lambda j, n: j.ops.segment_max(np.array([3, -1, 2], np.int8), np.array([1, 1, 2]), 4),
    "segment_max_bool": lambda j, n: j.ops.segment_max(np.array([True, False]), np.array([0, 1]), 3),
    "segment_min": lambda j, n: j.ops.segment_min(np.array([3.0, -1.0, 2.0, 5.0]), np.array([0, 0, 2, 2]), 3),
    "segment_min_uint": lambda j, n: j.ops.segment_min(np.array([3, 1, 2], np.uint8), np.array([0, 0, 2]), 4),
    "segment_min_unique": lambda j, n: j.ops.segment_min(np.arange(3.0), np.array([2, 0, 1]), 3, unique_indices=True),
    "segment_sum_jit": lambda j, n: j.jit(lambda d, s: j.ops.segment_sum(d, s, 3))(np.arange(5.0), np.array([0, 1, 1, 2, 0])),
    "segment_sum_weak": lambda j, n: j.ops.segment_sum(2.0, np.array([0]), 2),
    "segment_sum_grad": lambda j, n: j.grad(lambda d: (j.ops.segment_sum(d, np.array([0, 1, 1]), 2) ** 2).sum())(np.arange(3.0)),
    "segment_max_grad": lambda j, n: j.grad(lambda d: j.ops.segment_max(d, np.array([0, 0, 1]), 2).sum())(np.array([1.0, 3.0, 2.0])),
    "segment_prod_grad": lambda j, n: j.grad(lambda d: j.ops.segment_prod(d, np.array([0, 2, 1]), 3, unique_indices=True).sum())(np.array([2.0, 3.0, 4.0])),
    "segment_sum_vmap": lambda j, n: j.vmap(lambda d: j.ops.segment_sum(d, np.array([0, 1, 1]), 2))(np.ones((2, 3))),
    "segment_sum_vmap_ids": lambda j, n: j.vmap(lambda s: j.ops.segment_sum(np.arange(3.0), s, 2))(np.array([[0, 1, 1], [1, 1, 0]])),
    # flatten_util
    "ravel_mixed": lambda j, n: _ravel(j, {"a": 1.0, "b": np.arange(3), "c": (np.ones((2, 2), np.float16),)}),
    "ravel_same": lambda j, n: _ravel(j, [np.ones(2, np.float32), np.zeros((1, 2), np.float32)]),
    "ravel_weak": lambda j, n: _ravel(j, [1.0, 2.0]),
    "ravel_empty": lambda j, n: _ravel(j, {}),
    "ravel_bool_int": lambda j, n: _ravel(j, [np.array([True]), np.array([3], np.int8)]),
    "ravel_grad": lambda j, n: j.grad(lambda t: (j.flatten_util.ravel_pytree(t)[0] ** 2).sum())({"a": 1.0, "b": np.ones(2, np.float32)}),
    "unravel_single_dtype_poly": lambda j, n: j.flatten_util.ravel_pytree([np.ones(2, np.float32)])[1](np.arange(2)),
    # tree_util
    "reduce_associative": lambda j, n: j.tree_util.tree_reduce_associative(lambda a, b: [a, b], [1, 2, 3, 4, 5, 6, 7]),
    "reduce_associative_identity": lambda j, n: j.tree.reduce_associative(lambda a, b: a + b, [], identity=0),
    "flatten_one_level_with_keys": lambda j, n: [str(k) for k, _ in j.tree_util.flatten_one_level_with_keys({"x": 1, "y": [2]})[0]],
}


def _add2(a: Any, b: Any) -> Any:
    return a * 2 + b


def _u(n: Any) -> Any:
    return n.frompyfunc(_add2, 2, 1, identity=0)


def _save_load(n: Any, x: np.ndarray) -> Any:
    buf = io.BytesIO()
    n.save(buf, n.asarray(x))
    buf.seek(0)
    return n.load(buf)


def _ravel(j: Any, tree: Any) -> Any:
    flat, unravel = j.flatten_util.ravel_pytree(tree)
    return flat, unravel(flat)


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name: str) -> None:
    run_both(CASES[name], rtol=2e-6 if "space" not in name else 1e-5)


ERRORS: dict[str, Case] = {
    "insert_2d_obj": lambda j, n: n.insert(A, np.ones((2, 2), np.int32), 1.0),
    "insert_float_obj": lambda j, n: n.insert(A, np.array([1.5]), 1.0),
    "delete_float_obj": lambda j, n: n.delete(A, np.array([1.5])),
    "delete_bool_len": lambda j, n: n.delete(A, np.array([True, False]), axis=0),
    "delete_traced": lambda j, n: j.jit(lambda i: n.delete(A, i))(np.array([1])),
    "resize_negative": lambda j, n: n.resize(A, (-1, 2)),
    "trim_zeros_traced": lambda j, n: j.jit(n.trim_zeros)(np.arange(3)),
    "choose_float_a": lambda j, n: n.choose(np.array([0.0]), [np.arange(1)]),
    "choose_bad_entry": lambda j, n: n.choose(np.array([2]), [np.arange(1)]),
    "choose_raise_jit": lambda j, n: j.jit(lambda a: n.choose(a, [np.arange(3)]))(np.array([0, 0, 0])),
    "choose_bad_mode": lambda j, n: n.choose(np.array([0]), [np.arange(1)], mode="nope"),
    "compress_2d_cond": lambda j, n: n.compress(np.ones((2, 2), bool), A),
    "compress_oob": lambda j, n: n.compress(np.ones(5, bool), A, axis=0),
    "compress_jit_no_size": lambda j, n: j.jit(lambda c: n.compress(c, A, axis=0))(np.ones(3, bool)),
    "compress_bad_size": lambda j, n: n.compress(np.ones(3, bool), A, axis=0, size=5),
    "place_inplace": lambda j, n: n.place(A, A > 0, 1.0),
    "place_size": lambda j, n: n.place(A, np.ones(3, bool), 1.0, inplace=False),
    "place_empty_vals": lambda j, n: n.place(A, A > 0, np.zeros(0), inplace=False),
    "fill_diagonal_inplace": lambda j, n: n.fill_diagonal(A, 1.0),
    "fill_diagonal_wrap": lambda j, n: n.fill_diagonal(A, 1.0, wrap=True, inplace=False),
    "fill_diagonal_1d": lambda j, n: n.fill_diagonal(np.ones(3), 1.0, inplace=False),
    "fill_diagonal_unequal": lambda j, n: n.fill_diagonal(np.ones((2, 2, 3)), 1.0, inplace=False),
    "unravel_bad_shape": lambda j, n: n.unravel_index(1, [(2, 2)]),
    "ravel_multi_bad_entry": lambda j, n: n.ravel_multi_index((np.array([5]),), (3,)),
    "ravel_multi_float": lambda j, n: n.ravel_multi_index((np.array([1.0]),), (3,), mode="clip"),
    "ravel_multi_dtype_small": lambda j, n: n.ravel_multi_index((np.array([1]),), (300,), dtype=np.int8),
    "ravel_multi_float_dtype": lambda j, n: n.ravel_multi_index((np.array([1]),), (3,), dtype=np.float32),
    "ravel_multi_bad_mode": lambda j, n: n.ravel_multi_index((np.array([1]),), (3,), mode="x"),
    "ravel_multi_bad_order": lambda j, n: n.ravel_multi_index((np.array([1]),), (3,), order="K"),
    "ravel_multi_raise_jit": lambda j, n: j.jit(lambda i: n.ravel_multi_index((i,), (3,)))(np.array([1])),
    "ix_2d": lambda j, n: n.ix_(np.ones((2, 2), np.int32)),
    "ix_bool": lambda j, n: n.ix_(np.array([True])),
    "block_tuple": lambda j, n: n.block((1, 2)),
    "block_empty": lambda j, n: n.block([]),
    "block_depth": lambda j, n: n.block([[1], 2]),
    "permute_dims_repeat": lambda j, n: n.permute_dims(A, (0, 0)),
    "permute_dims_neg": lambda j, n: n.permute_dims(A, (-1, 0)),
    "insert_list_values": lambda j, n: n.insert(A, 3, [1, 2]),
    "rollaxis_start": lambda j, n: n.rollaxis(A, 0, 5),
    "hsplit_unequal": lambda j, n: n.hsplit(A, 3),
    "dsplit_2d": lambda j, n: n.dsplit(A, 2),
    "packbits_float": lambda j, n: n.packbits(np.ones(3)),
    "packbits_order": lambda j, n: n.packbits(np.ones(3, bool), bitorder="mid"),
    "unpackbits_int": lambda j, n: n.unpackbits(np.ones(3, np.int32)),
    "ufunc_at_inplace": lambda j, n: _u(n).at(np.zeros(3), 0, 1.0),
    "ufunc_where_no_identity": lambda j, n: n.frompyfunc(_add2, 2, 1).reduce(np.ones(3), where=np.ones(3, bool)),
    "ufunc_unary_reduce": lambda j, n: n.frompyfunc(abs, 1, 1).reduce(np.ones(3)),
    "ufunc_empty_reduce": lambda j, n: n.frompyfunc(_add2, 2, 1).reduce(np.ones(0)),
    "fromiter": lambda j, n: n.fromiter(iter([1, 2]), dtype=float),
    "fromfile": lambda j, n: n.fromfile("nothing"),
    "isdtype_bad_kind": lambda j, n: n.isdtype(np.float32, "reals"),
    "isdtype_bad_type": lambda j, n: n.isdtype(np.float32, 3.5),
    "copy_list": lambda j, n: n.copy([1, 2]),
    "dlpack_no_protocol": lambda j, n: j.dlpack.from_dlpack(3),
    "dlpack_supported_none": lambda j, n: j.dlpack.is_supported_dtype(None),
    "segment_negative_n": lambda j, n: j.ops.segment_sum(np.arange(3.0), np.array([0, 1, 1]), -1),
    "segment_list": lambda j, n: j.ops.segment_sum([1.0, 2.0], np.array([0, 1])),
    "unravel_wrong_dtype": lambda j, n: j.flatten_util.ravel_pytree([1.0, np.arange(2)])[1](np.arange(3)),
    "unravel_wrong_size": lambda j, n: j.flatten_util.ravel_pytree([np.ones(2, np.float32)])[1](np.ones(3, np.float32)),
    "reduce_associative_empty": lambda j, n: j.tree_util.tree_reduce_associative(lambda a, b: a + b, []),
    "flatten_one_level_with_keys_leaf": lambda j, n: j.tree_util.flatten_one_level_with_keys(1),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error(name: str) -> None:
    raises_both(ERRORS[name])


@settings(max_examples=max(1, settings.default.max_examples // 4), deadline=None)
@given(n=st.integers(1, 12), nseg=st.integers(1, 6), cols=st.integers(0, 3), seed=st.integers(0, 2**16),
       op=st.sampled_from(["segment_sum", "segment_prod", "segment_max", "segment_min"]),
       bucket=st.sampled_from([None, 1, 3]), sorted_ids=st.booleans())  # fmt: skip
def test_segment_ops_match(n: int, nseg: int, cols: int, seed: int, op: str, bucket: int | None,
                           sorted_ids: bool) -> None:  # fmt: skip
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((n, cols) if cols else (n,)).astype(np.float32)
    ids = rng.integers(-1, nseg + 1, n).astype(np.int32)
    if sorted_ids:
        ids = np.sort(ids)
    run_both(lambda j, _: getattr(j.ops, op)(data, ids, nseg, indices_are_sorted=sorted_ids, bucket_size=bucket),
             rtol=1e-5)  # fmt: skip


@settings(max_examples=max(1, settings.default.max_examples // 4), deadline=None)
@given(size=st.integers(1, 8), seed=st.integers(0, 2**16), k=st.integers(0, 4), axis=st.sampled_from([None, 0, 1]))
def test_insert_delete_match(size: int, seed: int, k: int, axis: int | None) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(-5, 5, (size, 3)).astype(np.int32)
    length = x.size if axis is None else x.shape[axis]
    obj = rng.integers(-length, length + 1, k).astype(np.int32)
    unique = np.unique(rng.integers(0, length, k)).astype(np.int32)
    run_both(lambda j, n: n.insert(x, obj, 7, axis=axis))
    run_both(lambda j, n: n.delete(x, unique, axis=axis, assume_unique_indices=True))
    run_both(lambda j, n: n.delete(x, unique, axis=axis))
