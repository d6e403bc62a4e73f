"""conv_general_dilated against real JAX 0.10.2 (the oracle).

The same program, written once against a (jax, lax) pair, runs under JAX and
under minijax, over a grid of configurations (1-D, 2-D, 3-D; strides,
explicit/negative/string padding, lhs and rhs dilation, feature and batch
groups, layouts, dtypes): values, the gradient with respect to both
operands, vmap over either or both operands, and the printed jaxprs of the
forward, gradient and vmapped programs must agree; bad input must raise
JAX's error type with JAX's message. Run where JAX is installed:
    .venv-oracle/bin/python -m pytest tests/test_convolution_oracle.py
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")


class Lib(NamedTuple):
    jax: Any
    lax: Any


JAX = Lib(jax, jax.lax)
MINI = Lib(minijax, minijax.lax)
F32 = np.float32

# name -> (lhs shape, rhs shape, keyword arguments of conv_general_dilated)
CONFIGS: dict[str, tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]] = {
    "2d_same": ((2, 3, 6, 5), (4, 3, 3, 2), dict(window_strides=(1, 1), padding="SAME")),
    "2d_same_lower_strided": ((1, 2, 7, 6), (3, 2, 2, 3), dict(window_strides=(2, 3), padding="SAME_LOWER")),
    "2d_valid_nhwc": ((2, 6, 5, 3), (3, 2, 3, 4), dict(window_strides=(1, 2), padding="VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "2d_dilated": (
        (2, 7, 6, 4), (2, 3, 2, 6),
        dict(window_strides=(2, 1), padding=[(1, 0), (2, 2)], lhs_dilation=(1, 2), rhs_dilation=(2, 1),
             dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=2),
    ),
    "2d_same_dilated_strided": ((2, 3, 9, 8), (6, 1, 3, 3), dict(window_strides=(2, 2), padding="SAME", rhs_dilation=(2, 3), feature_group_count=3)),
    "2d_kernel_order_wh": ((1, 2, 5, 7), (2, 2, 3, 2), dict(window_strides=(1, 2), padding="SAME", dimension_numbers=("NCHW", "OIWH", "NCHW"))),
    "1d_negative_pad": ((3, 2, 8), (2, 2, 3), dict(window_strides=(1,), padding=[(-2, 1)])),
    "1d_feature_groups": ((2, 4, 7), (6, 2, 3), dict(window_strides=(2,), padding="VALID", feature_group_count=2)),
    "1d_depthwise": ((2, 3, 5), (3, 1, 2), dict(window_strides=(1,), padding=[(1, 1)], feature_group_count=3)),
    "1d_batch_groups": ((4, 3, 7), (6, 3, 3), dict(window_strides=(1,), padding=[(2, -1)], batch_group_count=2)),
    "1d_batch_groups_dilated": ((6, 2, 5), (3, 2, 2), dict(window_strides=(2,), padding=[(0, 1)], batch_group_count=3, rhs_dilation=(2,), lhs_dilation=(2,))),
    "1d_odd_layout": ((3, 5, 4), (2, 3, 4), dict(window_strides=(3,), padding=[(-1, 2)], lhs_dilation=(3,), dimension_numbers=("NWC", "OWI", "CWN"))),
    "3d_grouped": (
        (1, 4, 5, 4, 4), (2, 3, 2, 2, 4),
        dict(window_strides=(1, 2, 1), padding="SAME", rhs_dilation=(1, 1, 2), dimension_numbers=("NDHWC", "DHWIO", "NDHWC"), feature_group_count=2),
    ),
    "3d_canonical": ((2, 2, 3, 4, 3), (2, 2, 2, 2, 2), dict(window_strides=(1, 1, 2), padding=[(0, 1), (1, 0), (0, 0)], lhs_dilation=(2, 1, 1))),
    "0d": ((2, 3), (4, 3), dict(window_strides=(), padding=[])),
    "window_larger_than_input": ((1, 1, 2), (1, 1, 4), dict(window_strides=(1,), padding="VALID")),
    "numpy_integer_params": (
        (2, 3, 7, 6), (4, 3, 2, 2),
        dict(window_strides=np.array([1, 2]), padding=[(np.int32(1), 0), (0, 1)], rhs_dilation=[np.int64(2), 1], lhs_dilation=(1, np.int64(2))),
    ),
    "precision_and_preferred": ((2, 3, 6), (4, 3, 2), dict(window_strides=(1,), padding="SAME", precision="highest", preferred_element_type=np.float32)),
}  # fmt: skip


def _operands(name: str, dtype: Any = F32) -> tuple[np.ndarray, np.ndarray]:
    lhs_shape, rhs_shape, _ = CONFIGS[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    return rng.standard_normal(lhs_shape).astype(dtype), rng.standard_normal(rhs_shape).astype(dtype)


def _conv(m: Lib, name: str) -> Callable[[Any, Any], Any]:
    kw = CONFIGS[name][2]
    return lambda a, b: m.lax.conv_general_dilated(a, b, **kw)


def _close(got: Any, want: Any, tol: float = 2e-5) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert (g.dtype, g.shape) == (w.dtype, w.shape)
    np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_values_equal_jax(name: str) -> None:
    lhs, rhs = _operands(name)
    _close(minijax.jit(_conv(MINI, name))(lhs, rhs), jax.jit(_conv(JAX, name))(lhs, rhs))
    _close(_conv(MINI, name)(lhs, rhs), _conv(JAX, name)(lhs, rhs))


def _loss(m: Lib, name: str) -> Callable[[Any, Any], Any]:
    conv = _conv(m, name)
    lhs, rhs = _operands(name)
    weights = np.random.default_rng(7).standard_normal(np.shape(jax.eval_shape(_conv(JAX, name), lhs, rhs))).astype(F32)
    return lambda a, b: (conv(a, b) * weights).sum()


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_gradients_equal_jax(name: str) -> None:
    lhs, rhs = _operands(name)
    want = jax.jit(jax.grad(_loss(JAX, name), (0, 1)))(lhs, rhs)
    got = minijax.jit(minijax.grad(_loss(MINI, name), (0, 1)))(lhs, rhs)
    for g, w in zip(got, want):
        _close(g, w, 1e-4)


@pytest.mark.parametrize("name", ["2d_dilated", "1d_feature_groups", "1d_batch_groups", "1d_odd_layout", "3d_grouped", "0d"])
@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (1, 2)])
def test_vmap_equals_jax(name: str, in_axes: tuple[int | None, int | None]) -> None:
    lhs, rhs = _operands(name)
    size = 3
    lhs_b = np.stack([lhs * (i + 1) for i in range(size)], in_axes[0]) if in_axes[0] is not None else lhs
    rhs_b = np.stack([rhs - i for i in range(size)], in_axes[1]) if in_axes[1] is not None else rhs
    _close(minijax.vmap(_conv(MINI, name), in_axes)(lhs_b, rhs_b), jax.vmap(_conv(JAX, name), in_axes)(lhs_b, rhs_b))
    want = str(jax.make_jaxpr(jax.vmap(_conv(JAX, name), in_axes))(lhs_b, rhs_b))
    assert str(minijax.make_jaxpr(minijax.vmap(_conv(MINI, name), in_axes))(lhs_b, rhs_b)) == want


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_printed_jaxprs_equal_jax(name: str) -> None:
    lhs, rhs = _operands(name)
    assert str(minijax.make_jaxpr(_conv(MINI, name))(lhs, rhs)) == str(jax.make_jaxpr(_conv(JAX, name))(lhs, rhs))
    grad_m, grad_j = minijax.grad(_loss(MINI, name), (0, 1)), jax.grad(_loss(JAX, name), (0, 1))
    assert str(minijax.make_jaxpr(grad_m)(lhs, rhs)) == str(jax.make_jaxpr(grad_j)(lhs, rhs))


DTYPE_CASES = [
    (np.float16, None), (ml_dtypes.bfloat16, None), (np.int8, None), (np.int8, np.int32), (np.int8, np.float32),
    (np.int32, None), (np.uint8, None), (np.uint8, np.uint16), (np.bool_, None), (np.float16, np.float32),
]  # fmt: skip


@pytest.mark.parametrize(("dtype", "preferred"), DTYPE_CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_dtypes_equal_jax(dtype: Any, preferred: Any) -> None:
    rng = np.random.default_rng(3)
    lhs = rng.integers(0, 3, (2, 4, 7, 6)).astype(dtype)
    rhs = rng.integers(0, 3, (6, 2, 3, 3)).astype(dtype)

    def f(m: Lib) -> Any:
        return m.lax.conv_general_dilated(lhs, rhs, (1, 2), "SAME", rhs_dilation=(2, 1), feature_group_count=2, preferred_element_type=preferred)

    want, got = f(JAX), f(MINI)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(np.asarray(got).astype(np.float64), np.asarray(want).astype(np.float64))
    text = lambda m: str(m.jax.make_jaxpr(lambda a, b: f(m))(lhs, rhs))  # noqa: E731
    assert text(MINI) == text(JAX)


def test_weak_types_equal_jax() -> None:
    def f(m: Lib) -> Any:
        x = m.lax.broadcast_in_dim(1.0, (1, 1, 3), ())
        return m.jax.make_jaxpr(lambda a: m.lax.conv_general_dilated(a, a[..., :2], (1,), "VALID"))(x)

    assert str(f(MINI)) == str(f(JAX))


# ---------------------------------------------------------------------------
# The lax helpers


HELPER_CALLS: list[Callable[[Lib], Any]] = [
    lambda m: m.lax.conv_dimension_numbers((2, 8, 8, 3), (3, 3, 3, 4), ("NHWC", "HWIO", "NHWC")),
    lambda m: m.lax.conv_dimension_numbers((2, 8, 8, 3), (3, 3, 3, 4), ["NWHC", "OWHI", "CHWN"]),
    lambda m: m.lax.conv_dimension_numbers((2, 8, 8), (3, 3, 3), None),
    lambda m: m.lax.conv_general_permutations(("NCHW", "OIWH", "NCHW")),
    lambda m: m.lax.conv_general_permutations(("NDHWC", "DHWIO", "NCDHW")),
    lambda m: m.lax.conv_shape_tuple((2, 3, 8, 8), (4, 3, 3, 3), (1, 1), "SAME"),
    lambda m: m.lax.conv_shape_tuple((2, 3, 8, 9), (4, 3, 3, 2), (2, 3), "SAME_LOWER"),
    lambda m: m.lax.conv_shape_tuple((2, 3, 8, 8), (4, 3, 3, 3), (2, 1), [(0, 0), (1, 1)]),
    lambda m: m.lax.conv_shape_tuple((4, 3, 8), (6, 3, 3), (1,), "VALID", 2),
    lambda m: m.lax.conv_general_shape_tuple((2, 8, 9, 3), (3, 3, 3, 5), (2, 2), "SAME", ("NHWC", "HWIO", "NHWC")),
    lambda m: m.lax.conv_general_shape_tuple((2, 3, 8, 9), (5, 3, 3, 2), (1, 2), [(1, 0), (0, 2)], ("NCHW", "OIHW", "NHWC")),
    lambda m: m.lax.conv_transpose_shape_tuple((2, 8, 9, 3), (3, 3, 3, 5), (2, 2), "SAME", ("NHWC", "HWIO", "NHWC")),
    lambda m: m.lax.conv_transpose_shape_tuple((2, 8, 9, 3), (3, 3, 3, 5), (2, 2), "VALID", ("NHWC", "HWIO", "NHWC")),
    lambda m: m.lax.conv_transpose_shape_tuple((2, 8, 9, 3), (3, 3, 3, 5), (1, 3), [(1, 1), (0, 2)], ("NHWC", "HWIO", "NHWC")),
    lambda m: m.lax.ConvDimensionNumbers((0, 1, 2), (1, 0, 2), (0, 2, 1)),
]


@pytest.mark.parametrize("index", range(len(HELPER_CALLS)))
def test_helpers_equal_jax(index: int) -> None:
    want, got = HELPER_CALLS[index](JAX), HELPER_CALLS[index](MINI)
    # JAX's shape helpers return some sizes as NumPy integers; minijax's are Python ints.
    assert _plain(repr(got)) == _plain(repr(want))
    assert type(got).__name__ == type(want).__name__


# ---------------------------------------------------------------------------
# Errors

X4, W4 = np.ones((2, 3, 8, 8), F32), np.ones((4, 3, 3, 3), F32)


def _plain(text: str) -> str:
    """``text`` with NumPy integer reprs (``np.int64(8)``) written as Python's (``8``)."""
    return re.sub(r"np\.u?int\d+\((-?\d+)\)", r"\1", text)

ERRORS: list[Callable[[Lib], Any]] = [
    lambda m: m.lax.conv_general_dilated(X4, W4.astype(np.int32), (1, 1), "SAME"),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), "VALID", feature_group_count=2),
    lambda m: m.lax.conv_general_dilated(X4, np.ones((4, 2, 3, 3), F32), (1, 1), "VALID"),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), [(0, 0), (0, 0)], feature_group_count=0),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), [(0, 0), (0, 0)], batch_group_count=0),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), "VALID", batch_group_count=3),
    lambda m: m.lax.conv_general_dilated(np.ones((4, 3, 5), F32), np.ones((3, 3, 2), F32), (1,), "VALID", batch_group_count=2),
    lambda m: m.lax.conv_general_dilated(np.ones((4, 4, 5), F32), np.ones((4, 2, 2), F32), (1,), "VALID", batch_group_count=2, feature_group_count=2),
    lambda m: m.lax.conv_general_dilated(np.ones((4, 4, 5), F32), np.ones((3, 2, 2), F32), (1,), "VALID", feature_group_count=2),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1,), "VALID"),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), [(0, 0)]),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), [(-9, 0), (0, 0)]),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), "FOO"),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), [(0, 0, 1), (0, 0)]),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), "VALID", rhs_dilation=(0, 1)),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), [(0, 0), (0, 0)], lhs_dilation=(1, -1)),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), "SAME", lhs_dilation=(2, 1)),
    lambda m: m.lax.conv_general_dilated(X4, W4[0], (1, 1), "SAME"),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW")),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCH")),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCXW")),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), "SAME", dimension_numbers=("NCHH", "OIHW", "NCHW")),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), "SAME", dimension_numbers=("NXHW", "OIHW", "NCHW")),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHX")),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), "SAME", dimension_numbers=("NCHW", 1, "NCHW")),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), "SAME", dimension_numbers="NCHW"),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), "VALID", preferred_element_type=np.float16),
    lambda m: m.lax.conv_general_dilated(X4.astype(np.int32), W4.astype(np.int32), (1, 1), "VALID", preferred_element_type=np.int8),
    lambda m: m.lax.conv_general_dilated(X4.astype(np.int32), W4.astype(np.int32), (1, 1), "VALID", preferred_element_type=np.uint32),
    lambda m: m.lax.conv_general_dilated(X4, W4, (1, 1), "VALID", preferred_element_type=np.int32),
    lambda m: m.lax.conv_shape_tuple((2, 3, 8, 8), (4, 3, 3, 3), (1, 1), [(0, 0)]),
    lambda m: m.lax.conv_transpose_shape_tuple((2, 8, 9, 3), (3, 3, 3, 5), (1, 1), "FULL", ("NHWC", "HWIO", "NHWC")),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_equal_jax(index: int) -> None:
    with pytest.raises(Exception) as want:
        ERRORS[index](JAX)
    with pytest.raises(Exception) as got:
        ERRORS[index](MINI)
    assert type(got.value).__name__ == type(want.value).__name__
    # Where JAX's message does not name the operation, minijax puts its name in
    # front ("conv_general_dilated: All dilations must be positive, ..."); the rest is JAX's text.
    mine, theirs = _plain(str(got.value).split("\n")[0]), _plain(str(want.value).split("\n")[0])
    assert theirs in (mine, mine.removeprefix("conv_general_dilated: "))


def test_a_window_larger_than_the_input_gives_an_empty_result_as_in_jax() -> None:
    x, w = np.ones((2, 3, 4, 4), F32), np.ones((5, 3, 6, 2), F32)
    want = jax.lax.conv_general_dilated(x, w, (1, 1), "VALID")
    got = minijax.lax.conv_general_dilated(x, w, (1, 1), "VALID")
    assert got.shape == want.shape == (2, 5, 0, 3)
