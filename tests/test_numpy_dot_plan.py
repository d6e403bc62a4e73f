"""The NumPy backend's dot_general plans its work once per (params, shapes,
dtypes) (``_dot_plan``, an optimisation for eager calls): the planned product
must be the plain one, an einsum over the same dimension numbers, for every
layout of batch, contracting and free axes, both forms of dimension numbers
(tuples and lists) and the dtype stages of dot_accumulation_dtypes."""

from __future__ import annotations

import string
from typing import Any

import numpy as np
import pytest
from minijax_numpy.reductions import _dot_general, _dot_plan


def _plain(lhs: Any, rhs: Any, dims: Any, out: Any) -> Any:
    (lc, rc), (lb, rb) = dims
    letters = iter(string.ascii_letters)
    l_sub = [next(letters) for _ in range(lhs.ndim)]
    r_sub = [next(letters) for _ in range(rhs.ndim)]
    for a, b in zip(lc + lb, rc + rb):
        r_sub[b] = l_sub[a]
    l_free = [l_sub[i] for i in range(lhs.ndim) if i not in lb + lc]
    r_free = [r_sub[i] for i in range(rhs.ndim) if i not in rb + rc]
    spec = f"{''.join(l_sub)},{''.join(r_sub)}->{''.join([l_sub[i] for i in lb] + l_free + r_free)}"
    return np.einsum(spec, lhs.astype(np.int64), rhs.astype(np.int64)).astype(out)


# (lhs shape, rhs shape, ((lc, rc), (lb, rb)))
CASES = [
    ((3,), (3,), (((0,), (0,)), ((), ()))),
    ((4, 4), (4, 4), (((1,), (0,)), ((), ()))),
    ((4, 5), (4, 2), (((0,), (0,)), ((), ()))),  # a transposed lhs
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),  # batched
    ((3, 2, 4), (4, 5, 2), (((2,), (0,)), ((1,), (2,)))),  # batch axes in the middle and last
    ((2, 3, 4), (4, 3), (((1, 2), (1, 0)), ((), ()))),  # two contracting axes, in swapped order
    ((2, 0), (0, 3), (((1,), (0,)), ((), ()))),  # an empty contraction
    ((2,), (3,), (((), ()), ((), ()))),  # an outer product
]


@pytest.mark.parametrize("lhs_shape, rhs_shape, dims", CASES)
@pytest.mark.parametrize("dtypes", [(np.float32, np.float32), (np.int8, np.int32), (np.float16, np.float32), (np.bool_, np.bool_)])
def test_planned_dot_general_is_the_plain_contraction(lhs_shape: Any, rhs_shape: Any, dims: Any, dtypes: Any) -> None:
    rng = np.random.default_rng(0)
    lhs = rng.integers(0, 3, lhs_shape).astype(dtypes[0])
    rhs = rng.integers(0, 3, rhs_shape).astype(dtypes[1])
    in_dtype = np.result_type(*dtypes)
    expected = _plain(lhs, rhs, dims, in_dtype if in_dtype != np.bool_ else np.int64)
    if in_dtype == np.bool_:
        expected = expected != 0
    as_lists = [[list(a), list(b)] for a, b in dims]
    for form in (dims, as_lists):
        got = _dot_general(lhs, rhs, dimension_numbers=form, precision=None, preferred_element_type=None)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


def test_preferred_element_type_converts_the_accumulator() -> None:
    lhs = np.array([[1.5, 2.25]], np.float32)
    rhs = np.array([[2.0], [4.0]], np.float32)
    dims = (((1,), (0,)), ((), ()))
    for out in (np.float32, np.float64, np.int32, np.float16):
        got = _dot_general(lhs, rhs, dimension_numbers=dims, precision=None, preferred_element_type=out)
        assert got.dtype == np.dtype(out)
        np.testing.assert_array_equal(got, np.array([[12.0]]).astype(out))


def test_a_plan_is_made_once_per_combination() -> None:
    _dot_plan.cache_clear()
    x = np.ones((2, 3), np.float32)
    dims = (((1,), (1,)), ((), ()))
    for _ in range(3):
        _dot_general(x, x, dimension_numbers=dims, precision=None, preferred_element_type=None)
    info = _dot_plan.cache_info()
    assert (info.misses, info.hits) == (1, 2)
    for shape in [(4, 3), (5, 3)]:
        y = np.ones(shape, np.float32)
        _dot_general(y, y, dimension_numbers=dims, precision=None, preferred_element_type=None)
    assert _dot_plan.cache_info().misses == 3
