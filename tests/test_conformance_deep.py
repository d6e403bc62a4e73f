"""Regressions found by the conformance suite at depth (issue 25): each test is the finding's
reproducer, written as `minijax conformance` wrote it and replayed as `minijax replay` does."""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import pytest

from minijax import dtypes
from minijax.config import enable_x64
from minijax.core import ShapedArray, primitive_registry
from minijax.testing import runner
from minijax.testing.checks import Check, Outcome, backend_named, write_reproducer
from minijax.testing.suite import one_equation
from minijax.testing.tolerances import compare_primitive


def replayed(check: Check, directory: pathlib.Path, backend: str) -> tuple[Outcome, str]:
    return runner.replay(write_reproducer(check, Outcome("fail"), directory, backend, "numpy"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("kind", "positions"), [("jvp", [0, 1, 2, 3]), ("vjp", [0, 1, 2, 3]), ("transpose", [3])])
def test_tridiagonal_solve_with_no_right_hand_sides_has_derivatives(
    dtype: Any, kind: str, positions: list[int], backend_name: str, tmp_path: pathlib.Path
) -> None:
    # `--backend numpy --law-examples 20` (the jvp, vjp and transpose laws): b of shape (1, 0) made
    # the reference's perturbed solver reshape an empty array to (-1, 1, 0), which NumPy cannot infer.
    x64 = dtype == np.float64
    with enable_x64(x64):
        vector, rhs = ShapedArray((1,), np.dtype(dtype)), ShapedArray((1, 0), np.dtype(dtype))
        closed = one_equation(primitive_registry["tridiagonal_solve"], {"perturb_singular": True},
                              [vector, vector, vector, rhs])  # fmt: skip
        args = [np.zeros(1, dtype), np.full(1, 2.0, dtype), np.zeros(1, dtype), np.zeros((1, 0), dtype)]
        check = Check(kind, "tridiagonal_solve", np.dtype(dtype).name, closed, args, x64, {"positions": positions})
        outcome, line = replayed(check, tmp_path / kind, backend_name)
    assert outcome.passed, line


def test_tridiagonal_solve_with_no_right_hand_sides_batches(backend_name: str, tmp_path: pathlib.Path) -> None:
    # The same finding under the vmap law (the loop side ran the reference's solver on b: (1, 0)).
    vector, rhs = ShapedArray((1,), np.dtype(np.float32)), ShapedArray((1, 0), np.dtype(np.float32))
    closed = one_equation(primitive_registry["tridiagonal_solve"], {"perturb_singular": True},
                          [vector, vector, vector, rhs])  # fmt: skip
    args = [np.zeros((1, 1), np.float32), np.full(1, 2.0, np.float32), np.zeros(1, np.float32), np.zeros((1, 0), np.float32)]
    options = {"in_axes": [0, None, None, None], "out_axes": 0, "axis_size": 1}
    outcome, line = replayed(Check("vmap", "tridiagonal_solve", "float32", closed, args, False, options), tmp_path, backend_name)
    assert outcome.passed, line


def test_a_bfloat16_broadcast_may_flush_a_subnormal(backend_name: str, tmp_path: pathlib.Path) -> None:
    # `--examples 50 --slice 1/8` on XLA: broadcasting the bfloat16 subnormal 0x0001 to (3, 2) gave
    # zeros (XLA CPU's broadcast fusion converts through float32 with subnormals flushed; JAX too),
    # where the policy held every broadcast bit-exact (spec/tolerances.md, rule 4's exception).
    bf16 = np.dtype(dtypes.bfloat16)
    closed = one_equation(primitive_registry["broadcast_in_dim"],
                          {"shape": (3, 2), "broadcast_dimensions": (), "sharding": None}, [ShapedArray((), bf16)])  # fmt: skip
    args = [np.array(1, np.uint16).view(bf16)]
    outcome, line = replayed(Check("primitive", "broadcast_in_dim", "bfloat16", closed, args, False, {}), tmp_path, backend_name)
    assert outcome.passed, line


def test_the_bfloat16_broadcast_exception_is_that_primitive_and_dtype_only() -> None:
    sub32, sub16 = np.array(1e-40, np.float32), np.array(1, np.uint16).view(dtypes.bfloat16)
    flushed16 = np.zeros((3, 2), dtypes.bfloat16)
    assert compare_primitive("broadcast_in_dim", {}, [sub16], [flushed16], [np.broadcast_to(sub16, (3, 2))]).ok
    assert not compare_primitive("broadcast_in_dim", {}, [sub32], [np.zeros((3, 2), np.float32)], [np.broadcast_to(sub32, (3, 2))]).ok
    assert not compare_primitive("reshape", {}, [sub16.reshape(1)], [flushed16[:1, 0]], [sub16.reshape(1)]).ok


def test_dim_as_value_eagerly_with_x64_off_then_on(backend_name: str) -> None:
    # `--examples 50 --slice 5/8` on XLA: the int32 row (x64 off) ran dim_as_value first, and the
    # int64 rows reused its eager executable (the eager cache's key left out the results' avals,
    # and dim_as_value has no operands to tell them apart): "output 0 is int32[], expected int64[]".
    backend, reference = backend_named(backend_name), backend_named("numpy")
    for x64, dtype in ((False, "int32"), (True, "int64"), (False, "int32")):
        with enable_x64(x64):
            closed = one_equation(primitive_registry["dim_as_value"], {"dim": 0}, [])
            outcome = runner.run_check(Check("primitive", "dim_as_value", dtype, closed, [], x64), backend, reference)
        assert outcome.passed, (x64, outcome)


def test_bessel_i1e_in_float64_past_the_old_series_cut(backend_name: str, tmp_path: pathlib.Path) -> None:
    # `--examples 50 --slice 7/8` on XLA: i1e(-16.54358076) was 87 ulps from XLA's, allowed 16; the
    # reference was the one off (its asymptotic expansion took over at 16, where 24 terms leave ~6e-15).
    with enable_x64(True):
        closed = one_equation(primitive_registry["bessel_i1e"], {}, [ShapedArray((), np.dtype(np.float64))])
        args = [np.array(13848721858546529614, np.uint64).view(np.float64)]
        outcome, line = replayed(Check("primitive", "bessel_i1e", "float64", closed, args, True, {}), tmp_path, backend_name)
    assert outcome.passed, line


@pytest.mark.parametrize("order", [0, 1])
def test_the_reference_bessel_ie_is_accurate_across_the_series_cut(order: int) -> None:
    # SciPy's i0e/i1e (Cephes' Chebyshev fits, a few ulps) as the yardstick: the old cut at 16
    # left the reference up to 200 ulps off just past it.
    special = pytest.importorskip("scipy.special")
    from minijax_numpy.special import _OPS

    from minijax.primitives import special_algorithms as alg

    x = np.linspace(10.0, 40.0, 3001)
    got = (alg.bessel_i0e if order == 0 else alg.bessel_i1e)(_OPS, x)
    expected = (special.i0e if order == 0 else special.i1e)(x)
    assert np.max(np.abs(got - expected) / np.spacing(expected)) <= 16


def test_bessel_i1e_of_the_largest_float64(backend_name: str, tmp_path: pathlib.Path) -> None:
    # `--examples 50 --only bessel_i1e` on XLA after the cut moved: i1e(-1.797e308) is -2.975e-155
    # (XLA's), but the reference computed sqrt(2 pi x) with 2 pi x overflowing, and gave -0.
    with enable_x64(True):
        closed = one_equation(primitive_registry["bessel_i1e"], {}, [ShapedArray((2,), np.dtype(np.float64))])
        args = [np.array([13.0737133, -np.finfo(np.float64).max])]
        outcome, line = replayed(Check("primitive", "bessel_i1e", "float64", closed, args, True, {}), tmp_path, backend_name)
        from minijax_numpy.special import _OPS

        from minijax.primitives import special_algorithms as alg

        assert alg.bessel_i1e(_OPS, args[0])[1] < -2.9e-155
    assert outcome.passed, line
