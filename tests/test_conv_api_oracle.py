"""The user-facing convolutions against real JAX 0.10.2 (the oracle).

lax.conv, conv_with_general_padding, conv_transpose, conv_general_dilated_patches,
conv_general_dilated_local, jnp.convolve/correlate, jax.scipy.signal and
jax.scipy.stats.norm: one program per grid point, run under both; values,
dtypes and weak types must agree, and so must the error type and message for
bad input. jnp.convolve/correlate must also print JAX's jaxpr. Run where JAX is
installed:
    .venv-oracle/bin/python -m pytest -m oracle tests/test_conv_api_oracle.py
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import jax.numpy  # noqa: E402, F811
import jax.scipy.signal  # noqa: E402
import jax.scipy.stats  # noqa: E402

import minijax  # noqa: E402
import minijax.numpy  # noqa: E402
import minijax.scipy.signal  # noqa: E402
import minijax.scipy.stats  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")


class Lib(NamedTuple):
    jax: Any
    lax: Any
    jnp: Any
    signal: Any
    stats: Any


JAX = Lib(jax, jax.lax, jax.numpy, jax.scipy.signal, jax.scipy.stats)
MINI = Lib(minijax, minijax.lax, minijax.numpy, minijax.scipy.signal, minijax.scipy.stats)

RNG = np.random.default_rng(1)


def randn(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def run(lib: Lib, program: Callable[..., Any], args: list[Any]) -> tuple[str, Any]:
    """("ok", outputs) or ("error", (type name, message))."""
    try:
        return "ok", program(lib, *args)
    except Exception as exc:  # the error itself is what is compared
        return "error", (type(exc).__name__, str(exc))


def assert_same(program: Callable[..., Any], args: list[Any], rtol: float = 1e-5, atol: float = 1e-5) -> None:
    want_kind, want = run(JAX, program, args)
    got_kind, got = run(MINI, program, args)
    assert got_kind == want_kind, (got, want)
    if want_kind == "error":
        # The same type, and JAX's message within ours (minijax's may name the operation first).
        assert got[0] == want[0] and want[1] in got[1], (got, want)
        return
    want_leaves, got_leaves = jax.tree_util.tree_leaves(want), minijax.tree_util.tree_leaves(got)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        assert getattr(g, "weak_type", False) == getattr(w, "weak_type", False)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------
# lax wrappers over a grid of options

X4 = randn(2, 3, 9, 8)  # NCHW
K4 = randn(4, 3, 3, 2)  # OIHW


@pytest.mark.parametrize("padding", ["SAME", "VALID", "SAME_LOWER", "same", "bogus"])
@pytest.mark.parametrize("strides", [(1, 1), (2, 3)])
@pytest.mark.parametrize("pet", [None, np.float64, np.int32])
def test_conv(padding: str, strides: tuple[int, int], pet: Any) -> None:
    assert_same(lambda m, x, k: m.lax.conv(x, k, strides, padding, preferred_element_type=pet), [X4, K4])


@pytest.mark.parametrize("padding", ["SAME", "VALID", ((1, 2), (0, -1)), ((1, 1),)])
@pytest.mark.parametrize("lhs_dilation", [None, (1, 1), (2, 1)])
@pytest.mark.parametrize("rhs_dilation", [None, (1, 3)])
def test_conv_with_general_padding(padding: Any, lhs_dilation: Any, rhs_dilation: Any) -> None:
    assert_same(
        lambda m, x, k: m.lax.conv_with_general_padding(x, k, (1, 2), padding, lhs_dilation, rhs_dilation),
        [X4, K4],
    )


def test_conv_precisions() -> None:
    # (An unknown precision name is refused by the shared precision parser, tested with dot_general.)
    for precision in [None, "highest", jax.lax.Precision.HIGH, ("default", "highest")]:
        # lax.Precision values are each library's own: pass the name through.
        p = precision.name if isinstance(precision, jax.lax.Precision) else precision
        assert_same(lambda m, x, k, p=p: m.lax.conv(x, k, (1, 1), "SAME", precision=(
            getattr(m.lax.Precision, p) if isinstance(p, str) and p.isupper() else p)), [X4, K4])


TRANSPOSE_CASES = list(itertools.product(
    ["SAME", "VALID", ((1, 2), (0, 1)), ((2, 0), (1, 1)), "SAME_LOWER"],
    [(1, 1), (2, 2), (3, 2)],
    [None, (2, 1)],
    [False, True],
))


@pytest.mark.parametrize(("padding", "strides", "rhs_dilation", "transpose_kernel"), TRANSPOSE_CASES)
def test_conv_transpose(padding: Any, strides: Any, rhs_dilation: Any, transpose_kernel: bool) -> None:
    x, k = randn(2, 5, 6, 3), randn(3, 2, 3, 3)  # NHWC, HWIO (square channels so transpose_kernel fits)
    assert_same(lambda m, x, k: m.lax.conv_transpose(x, k, strides, padding, rhs_dilation=rhs_dilation,
                                                     transpose_kernel=transpose_kernel), [x, k])


@pytest.mark.parametrize("padding", ["SAME", "VALID", ((1, 2),), ((0, 0),)])
@pytest.mark.parametrize("strides", [(1,), (2,)])
def test_conv_transpose_consistent_padding_and_layouts(padding: Any, strides: Any) -> None:
    x, k = randn(2, 3, 7), randn(4, 3, 2)  # NCH, OIH
    dn = ("NCH", "OIH", "NCH")
    assert_same(lambda m, x, k: m.lax.conv_transpose(x, k, strides, padding, dimension_numbers=dn,
                                                     use_consistent_padding=True), [x, k])
    assert_same(lambda m, x, k: m.lax.conv_transpose(x, k, strides, padding, dimension_numbers=dn,
                                                     transpose_kernel=True, preferred_element_type=np.float64),
                [x, k.transpose(1, 0, 2)])


def test_conv_transpose_errors() -> None:
    assert_same(lambda m, x, k: m.lax.conv_transpose(x, k, (1,) * 4, "VALID"), [randn(*[1] * 6), randn(*[1] * 6)])
    assert_same(lambda m, x, k: m.lax.conv_transpose(x, k, (1,), [[0, 0]], use_consistent_padding=True),
                [randn(1, 3, 1), randn(2, 1, 1)])
    assert_same(lambda m, x, k: m.lax.conv_transpose(x, k, (2,), "SAME_LOWER"), [randn(1, 3, 1), randn(2, 1, 1)])
    assert_same(lambda m, x, k: m.lax.conv_transpose(x, k, (2,), "VALID"), [randn(1, 3, 2), randn(2, 3, 1)])


PATCH_DNS = [None, ("NHWC", "HWIO", "NHWC"), ("NCHW", "OIWH", "CNHW"), ("NHWC", "OIHW", "NCHW")]


@pytest.mark.parametrize("dn", PATCH_DNS)
@pytest.mark.parametrize("padding", ["SAME", "VALID", ((1, 0), (2, 1))])
@pytest.mark.parametrize(("strides", "lhs_dilation", "rhs_dilation"), [((1, 1), None, None), ((2, 1), (1, 2), (2, 1))])
def test_conv_general_dilated_patches(dn: Any, padding: Any, strides: Any, lhs_dilation: Any, rhs_dilation: Any) -> None:
    x = randn(2, 3, 7, 6)
    if padding != "VALID" and isinstance(padding, str) and lhs_dilation is not None:
        padding = "VALID"
    assert_same(lambda m, x: m.lax.conv_general_dilated_patches(x, (2, 3), strides, padding, lhs_dilation,
                                                                rhs_dilation, dn), [x])


def test_conv_general_dilated_patches_dtypes_and_precision() -> None:
    xi = np.arange(2 * 7 * 6 * 3, dtype=np.int8).reshape(2, 7, 6, 3)
    dn = ("NHWC", "HWIO", "NHWC")
    assert_same(lambda m, x: m.lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID", dimension_numbers=dn,
                                                                preferred_element_type=np.int32), [xi])
    assert_same(lambda m, x: m.lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID", dimension_numbers=dn,
                                                                precision=m.lax.Precision.HIGHEST), [X4])
    assert_same(lambda m, x: m.lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID",
                                                                dimension_numbers=dn), [xi.astype(np.float16)])


LOCAL_CASES = [
    (("NCHW", "HWIO", "NCHW"), (2, 3, 8, 7), "VALID", (1, 1)),
    (("NHWC", "OIHW", "NHWC"), (2, 8, 7, 3), "SAME", (2, 1)),
    (("NCHW", "IOWH", "NHWC"), (2, 3, 8, 7), ((1, 0), (0, 2)), (1, 2)),
]


@pytest.mark.parametrize(("dn", "shape", "padding", "strides"), LOCAL_CASES)
def test_conv_general_dilated_local(dn: Any, shape: Any, padding: Any, strides: Any) -> None:
    x = randn(*shape)
    filter_shape = (2, 3)
    patches = jax.lax.conv_general_dilated_patches(x, filter_shape, strides, padding, dimension_numbers=dn)
    lhs_spec, rhs_spec, out_spec = jax.lax.conv_dimension_numbers(x.shape, (1, 1, *filter_shape), dn)
    out_spatial = [patches.shape[d] for d in out_spec[2:]]
    sizes = {rhs_spec[0]: 5, rhs_spec[1]: patches.shape[out_spec[1]]}
    sizes.update(zip(rhs_spec[2:], out_spatial))
    k = randn(*[sizes[d] for d in range(4)])
    assert_same(lambda m, x, k: m.lax.conv_general_dilated_local(x, k, strides, padding, filter_shape,
                                                                 dimension_numbers=dn), [x, k], rtol=1e-4, atol=1e-4)
    assert_same(lambda m, x, k: m.lax.conv_general_dilated_local(x, k, strides, padding, filter_shape,
                                                                 dimension_numbers=dn, precision="highest"),
                [x, k], rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------
# jnp.convolve / jnp.correlate


ONE_D = [
    (randn(7), randn(3)),
    (randn(3), randn(7)),
    (randn(4), randn(4)),
    (np.arange(5, dtype=np.int32), np.array([1, -1], np.int32)),
    (randn(5).astype(np.float16), randn(2).astype(np.float16)),
    (np.ones(3, bool), np.ones(2, bool)),
]


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid", "nope"])
@pytest.mark.parametrize("case", range(len(ONE_D)))
def test_jnp_convolve_correlate(name: str, mode: str, case: int) -> None:
    a, v = ONE_D[case]
    assert_same(lambda m, a, v: getattr(m.jnp, name)(a, v, mode=mode), [a, v], rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_jnp_convolve_options_and_errors(name: str) -> None:
    ai, vi = np.arange(6, dtype=np.int16), np.array([1, 2, 3], np.int16)
    assert_same(lambda m, a, v: getattr(m.jnp, name)(a, v, preferred_element_type=np.int32), [ai, vi])
    assert_same(lambda m, a, v: getattr(m.jnp, name)(a, v, precision="highest"), [randn(6), randn(3)])
    assert_same(lambda m, a, v: getattr(m.jnp, name)(a, v), [1.0, 2.0])
    assert_same(lambda m, a, v: getattr(m.jnp, name)(a, v), [randn(2, 2), randn(2)])
    assert_same(lambda m, a, v: getattr(m.jnp, name)(a, v), [np.ones(0, np.float32), randn(2)])
    assert_same(lambda m, a, v: getattr(m.jnp, name)(a, v), [[1.0, 2.0], randn(2)])
    assert_same(lambda m, a, v: getattr(m.jnp, name)(m.jnp.asarray(a), 2.0), [randn(3), None])


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_jnp_convolve_prints_jaxs_jaxpr(name: str, mode: str) -> None:
    a, v = randn(6), randn(3)
    want = str(jax.make_jaxpr(lambda a, v: getattr(jax.numpy, name)(a, v, mode=mode))(a, v))
    got = str(minijax.make_jaxpr(lambda a, v: getattr(minijax.numpy, name)(a, v, mode=mode))(a, v))
    assert got == want


# ---------------------------------------------------------------------------
# jax.scipy.signal and jax.scipy.stats.norm


SIGNAL_SHAPES = [((6, 5), (3, 2)), ((3, 2), (6, 5)), ((4, 4), (4, 4)), ((5, 3), (1, 3)), ((3, 5), (3, 5))]


@pytest.mark.parametrize("name", ["convolve", "correlate", "convolve2d", "correlate2d"])
@pytest.mark.parametrize("mode", ["full", "same", "valid", "nope"])
@pytest.mark.parametrize(("s1", "s2"), SIGNAL_SHAPES)
def test_signal_2d(name: str, mode: str, s1: Any, s2: Any) -> None:
    assert_same(lambda m, a, b: getattr(m.signal, name)(a, b, mode=mode), [randn(*s1), randn(*s2)], rtol=1e-4,
                atol=1e-4)


@pytest.mark.parametrize("name", ["convolve", "correlate", "convolve2d", "correlate2d"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_signal_integer_and_float64_inputs(name: str, mode: str) -> None:
    # (minijax has no complex dtypes yet: the conjugations are checked only where they are no-ops)
    assert_same(lambda m, a, b: getattr(m.signal, name)(a, b, mode=mode), [randn(5, 4, dtype=np.float64),
                                                                            randn(2, 3)], rtol=1e-4, atol=1e-4)
    ints = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert_same(lambda m, a, b: getattr(m.signal, name)(a, b, mode=mode), [ints, ints[:2, :2]])


def test_signal_nd_methods_and_errors() -> None:
    a, b = randn(4, 3, 5), randn(2, 3, 2)
    for mode in ("full", "same", "valid"):
        for method in ("auto", "direct", "bogus"):
            assert_same(lambda m, a, b, mode=mode, method=method: m.signal.convolve(a, b, mode=mode, method=method), [a, b], rtol=1e-4,
                        atol=1e-4)
            assert_same(lambda m, a, b, mode=mode, method=method: m.signal.correlate(a, b, mode=mode, method=method), [a, b], rtol=1e-4,
                        atol=1e-4)
    assert_same(lambda m, a, b: m.signal.convolve(a, b), [randn(3), randn(2, 2)])
    assert_same(lambda m, a, b: m.signal.convolve(a, b), [randn(3, 1), randn(1, 3)])
    assert_same(lambda m, a, b: m.signal.convolve(a, b), [randn(3), np.ones(0, np.float32)])
    for name in ("convolve2d", "correlate2d"):
        assert_same(lambda m, a, b, f=name: getattr(m.signal, f)(a, b, boundary="wrap"), [randn(3, 3), randn(2, 2)])
        assert_same(lambda m, a, b, f=name: getattr(m.signal, f)(a, b, fillvalue=1), [randn(3, 3), randn(2, 2)])
        assert_same(lambda m, a, b, f=name: getattr(m.signal, f)(a, b), [randn(3), randn(2)])
    assert set(minijax.scipy.signal.__all__) <= set(dir(jax.scipy.signal))


@pytest.mark.parametrize("kind", ["linear", "constant", "cubic"])
@pytest.mark.parametrize("bp", [0, [2, 5], [11]])
@pytest.mark.parametrize("axis", [-1, 0])
def test_detrend(kind: str, bp: Any, axis: int) -> None:
    data = randn(8, 9) + np.arange(9, dtype=np.float32)
    assert_same(lambda m, d: m.signal.detrend(d, axis=axis, type=kind, bp=bp), [data], rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", ["logpdf", "pdf", "cdf", "sf"])
def test_norm(name: str) -> None:
    x = np.linspace(-6, 6, 25, dtype=np.float32)
    assert_same(lambda m, x: getattr(m.stats.norm, name)(x), [x], rtol=3e-6, atol=1e-7)
    assert_same(lambda m, x: getattr(m.stats.norm, name)(x, 0.5, 2.0), [x], rtol=3e-6, atol=1e-7)
    assert_same(lambda m, x: getattr(m.stats.norm, name)(x), [1.5])
    assert_same(lambda m, x: getattr(m.stats.norm, name)(x), [np.arange(4)])


# ---------------------------------------------------------------------------
# The wrappers' jaxprs

XN, KN = randn(1, 5, 6, 2), randn(3, 3, 2, 2)  # NHWC, HWIO
WRAPPER_PROGRAMS: dict[str, Callable[..., Any]] = {
    "conv": lambda m, x, k: m.lax.conv(x.transpose(0, 3, 1, 2), k.transpose(3, 2, 0, 1), (1, 1), "SAME"),
    "conv_with_general_padding": lambda m, x, k: m.lax.conv_with_general_padding(
        x.transpose(0, 3, 1, 2), k.transpose(3, 2, 0, 1), (1, 2), ((1, 0), (2, 1)), (2, 1), None),
    "conv_transpose": lambda m, x, k: m.lax.conv_transpose(x, k, (2, 2), "SAME"),
    "conv_transpose_kernel": lambda m, x, k: m.lax.conv_transpose(x, k, (2, 1), "VALID", transpose_kernel=True),
    "patches": lambda m, x, k: m.lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID",
                                                                  dimension_numbers=("NHWC", "HWIO", "NHWC")),
    "local": lambda m, x, k: m.lax.conv_general_dilated_local(x, np.ones((4, 5, 8, 3), np.float32), (1, 1), "VALID",
                                                              (2, 2), dimension_numbers=("NHWC", "HWIO", "NHWC")),
}


@pytest.mark.parametrize("name", WRAPPER_PROGRAMS)
def test_wrappers_print_jaxs_jaxpr(name: str) -> None:
    program = WRAPPER_PROGRAMS[name]
    want = str(jax.make_jaxpr(lambda x, k: program(JAX, x, k))(XN, KN))
    got = str(minijax.make_jaxpr(lambda x, k: program(MINI, x, k))(XN, KN))
    assert got == want
