"""Complex numbers: dtypes and promotion, creation and printing, the complex
primitives and complex operands of the others, and differentiation with JAX's
conventions. Runs on each backend (the ``backend_name`` fixture);
``test_complex_oracle.py`` compares the same things with real JAX.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.config import enable_x64
from minijax.jaxpr_parse import parse_jaxpr
from minijax.testing import check_grads

C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
Z = np.array([1 + 2j, -0.5 + 1j, 2 - 0.25j], np.complex64)


# ---------------------------------------------------------------------------
# Dtypes, creation, printing


def test_python_complex_is_weak_and_follows_x64() -> None:
    a = jnp.array(1 + 2j)
    assert a.dtype == C64 and a.aval.weak_type
    assert (jnp.float16(1) * 1j).dtype == C64  # a weak complex meets a float: the float's width, complex
    with enable_x64(True):
        assert jnp.array(1j).dtype == C128
        assert (jnp.float32(1) * 1j).dtype == C64
        assert (jnp.float64(1) + jnp.complex64(1j)).dtype == C128
    with pytest.warns(UserWarning, match="complex128 requested in result_type is not available"):
        assert jnp.result_type(jnp.complex128) == C64  # canonicalised with x64 off


def test_scalar_types_and_creation() -> None:
    assert jnp.complex_ is jnp.complex128 and jnp.cdouble is jnp.complex128 and jnp.csingle is jnp.complex64
    assert jnp.ComplexWarning is np.exceptions.ComplexWarning
    assert jnp.complex64(1 + 2j).dtype == C64
    z = jnp.zeros((2,), jnp.complex64)
    assert z.dtype == C64 and z.tolist() == [0j, 0j]
    assert jnp.ones(3, "complex64").sum() == 3
    assert jnp.arange(3).astype(jnp.complex64).tolist() == [0j, 1 + 0j, 2 + 0j]


def test_repr_and_str() -> None:
    assert repr(jnp.array([1 + 2j, -3.25j], jnp.complex64)) == "Array([ 1.+2.j  , -0.-3.25j], dtype=complex64)"
    assert repr(jnp.array(1j)) == "Array(0.+1.j, dtype=complex64, weak_type=True)"
    assert str(jnp.array([1.5 - 2j, 3j], jnp.complex64)) == "[1.5-2.j 0. +3.j]"


def test_jaxpr_text_and_parser() -> None:
    text = str(jax.make_jaxpr(lambda z: jnp.conj(z) * 2 + (1 - 0.5j))(np.complex64(1)))
    assert text == (
        "{ lambda ; a:c64[]. let\n"
        "    b:c64[] = conj[input_dtype=complex64] a\n"
        "    c:c64[] = mul b (2+0j):c64[]\n"
        "    d:c64[] = add c (1-0.5j):c64[]\n"
        "  in (d,) }"
    )
    assert str(parse_jaxpr(text)) == text
    for v in (1j, complex(np.nan, 1), complex(np.inf, -np.inf), complex(-0.0, 0.0), complex(1e20, 3)):
        t = str(jax.make_jaxpr(lambda z, v=v: z + np.complex128(v))(np.complex128(1)))
        assert str(parse_jaxpr(t)) == t
    with enable_x64(True):
        assert "c128[2]" in str(jax.make_jaxpr(lambda z: z)(np.zeros(2, C128)))


def test_casting_complex_to_real_warns_and_keeps_the_real_part() -> None:
    with pytest.warns(np.exceptions.ComplexWarning, match="discards the imaginary part"):
        out = lax.convert_element_type(jnp.array([1.5 + 2j, 1j]), np.float32)
    assert out.tolist() == [1.5, 0.0]
    with pytest.warns(np.exceptions.ComplexWarning):
        assert lax.convert_element_type(jnp.array([1j, 2 + 0j]), np.bool_).tolist() == [False, True]
    assert jnp.array([1j, 0j]).astype(bool).tolist() == [True, False]  # jnp compares with 0, as JAX's astype
    with pytest.warns(DeprecationWarning, match="Casting from complex to real dtypes will soon raise"):
        assert jnp.array([1.5 + 1j]).astype(jnp.int32).tolist() == [1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert lax.convert_element_type(np.float32(2), np.complex64).tolist() == 2 + 0j


# ---------------------------------------------------------------------------
# The complex primitives and complex operands of the others


def test_complex_real_imag_conj() -> None:
    x, y = np.float32([1, -2]), np.float32([0.5, np.inf])
    z = lax.complex(x, y)
    assert z.dtype == C64 and z.tolist() == [1 + 0.5j, complex(-2, np.inf)]  # no NaN from inf * 1j
    assert lax.real(z).tolist() == [1, -2] and lax.imag(z).tolist() == [0.5, np.inf]
    assert lax.conj(z).tolist() == [1 - 0.5j, complex(-2, -np.inf)]
    c = lax.conj(np.float32([2.0]))
    assert c.dtype == C64 and np.signbit(np.asarray(c).imag).tolist() == [False]  # +0 imaginary part
    with enable_x64(True):
        assert lax.complex(np.float64(1), np.float64(2)).dtype == C128


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: lax.real(np.float32(1)), "real does not accept dtype float32. Accepted dtypes are subtypes of complexfloating."),
        (lambda: lax.conj(np.int32(1)), "conj does not accept dtype int32. Accepted dtypes are subtypes of float32, complexfloating, float64."),
        (lambda: lax.complex(np.int32(1), np.int32(2)), "complex does not accept dtype int32 at position 0. Accepted dtypes at position 0 are subtypes of float32, float64."),
        (lambda: lax.complex(Z, Z), "complex does not accept dtype complex64 at position 0"),
        (lambda: lax.lt(Z, Z), "lt does not accept dtype complex64 at position 0. Accepted dtypes at position 0 are subtypes of integer, floating, bool."),
        (lambda: lax.floor(Z), "floor does not accept dtype complex64. Accepted dtypes are subtypes of floating."),
        (lambda: lax.is_finite(Z), "is_finite does not accept dtype complex64"),
        (lambda: lax.rem(Z, Z), "rem does not accept dtype complex64 at position 0"),
        (lambda: lax.cbrt(Z), "cbrt does not accept dtype complex64"),
        (lambda: lax.erf(Z), "erf does not accept dtype complex64"),
        (lambda: lax.pow(np.float32(2), Z), "two inexact dtypes must match, but got float32 and complex64"),
        (lambda: lax.bitcast_convert_type(Z, np.float32), "does not support bool or complex values"),
    ],
)
def test_complex_refused_where_jax_refuses_it(call: Callable[[], Any], message: str) -> None:
    with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(".", r"\.")):
        call()


def _z() -> np.ndarray[Any, Any]:
    return np.array([1 + 2j, -0.5 + 1j, 2 - 0.25j, -1.5 - 0.75j], np.complex64)


MATH: dict[str, Callable[[Any], Any]] = {
    "exp": jnp.exp, "log": jnp.log, "sqrt": jnp.sqrt, "sin": jnp.sin, "cos": jnp.cos, "tan": jnp.tan,
    "tanh": jnp.tanh, "sinh": jnp.sinh, "cosh": jnp.cosh, "arcsin": jnp.arcsin, "arccos": jnp.arccos,
    "arctan": jnp.arctan, "arcsinh": jnp.arcsinh, "arccosh": jnp.arccosh, "arctanh": jnp.arctanh,
    "expm1": jnp.expm1, "log1p": jnp.log1p, "reciprocal": lambda z: 1 / z, "square": jnp.square,
}  # fmt: skip
NUMPY_MATH = {"reciprocal": lambda z: 1 / z}


@pytest.mark.parametrize("name", sorted(MATH))
def test_complex_math_matches_numpy(name: str) -> None:
    z = _z()
    want = NUMPY_MATH.get(name, getattr(np, name))(z.astype(C128))
    got = np.asarray(MATH[name](z))
    assert got.dtype == C64
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def test_complex_arithmetic_reductions_and_structure() -> None:
    z = _z()
    z128 = z.astype(C128)
    np.testing.assert_allclose(np.asarray(jnp.abs(z)), np.abs(z128), rtol=1e-6)
    assert jnp.abs(z).dtype == np.float32
    np.testing.assert_allclose(np.asarray(jnp.sign(z)), z128 / np.abs(z128), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(z ** 3), z128**3, rtol=1e-5)  # integer_pow
    np.testing.assert_allclose(np.asarray(jnp.power(z, np.complex64(0.5 + 1j))), z128 ** (0.5 + 1j), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.cumsum(z)), np.cumsum(z128), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.prod(z)), np.prod(z128), rtol=1e-5)
    m = z.reshape(2, 2)
    np.testing.assert_allclose(np.asarray(m @ m.conj().T), m.astype(C128) @ m.astype(C128).conj().T, rtol=1e-6)
    assert (jnp.asarray(z) == z).tolist() == [True] * 4 and (jnp.asarray(z) != z[::-1]).all()
    # max/min and sort: lexicographic on (real, imag), as JAX
    w = np.array([1 + 2j, 1 - 1j, -3 + 0.5j, 1 + 1j], np.complex64)
    assert jnp.max(w) == 1 + 2j and jnp.min(w) == -3 + 0.5j
    assert jnp.maximum(w, w[::-1]).tolist() == [1 + 2j, 1 - 1j, 1 - 1j, 1 + 2j]
    assert jnp.minimum(w, w[::-1]).tolist() == [1 + 1j, -3 + 0.5j, -3 + 0.5j, 1 + 1j]
    assert jnp.sort(w).tolist() == [-3 + 0.5j, 1 - 1j, 1 + 1j, 1 + 2j]
    assert jnp.where(jnp.real(w) > 0, w, 0).tolist() == [1 + 2j, 1 - 1j, 0j, 1 + 1j]


def test_jnp_complex_functions() -> None:
    w = np.array([1 + 0j, 1j, -2 - 2j], np.complex64)
    assert jnp.real(w).tolist() == [1, 0, -2] and jnp.imag(w).tolist() == [0, 1, -2]
    assert jnp.conjugate(w).tolist() == [1 - 0j, -1j, -2 + 2j] and jnp.conj is jnp.conjugate
    np.testing.assert_allclose(np.asarray(jnp.angle(w)), np.angle(w), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.angle(w, deg=True)), np.angle(w, deg=True), rtol=1e-6)
    assert jnp.angle(np.int32([1, -1])).dtype == np.float32
    assert jnp.iscomplex(w).tolist() == [False, True, True] and jnp.isreal(w).tolist() == [True, False, False]
    assert jnp.iscomplex(np.float32([1])).tolist() == [False]
    assert jnp.iscomplexobj(w) and not jnp.isrealobj(w) and jnp.isrealobj(np.float32(1))
    assert jnp.sort_complex(np.int32([3, 1, 2])).tolist() == [1 + 0j, 2 + 0j, 3 + 0j]
    assert jnp.sort_complex(np.int32([3])).dtype == C64
    a = jnp.asarray(w)
    assert a.real.tolist() == [1, 0, -2] and a.imag.tolist() == [0, 1, -2] and a.conj().tolist() == [1 - 0j, -1j, -2 + 2j]
    assert jnp.real(np.float32([2.5])).tolist() == [2.5] and jnp.imag(np.float32([2.5])).tolist() == [0.0]


def test_vmap_and_jit_of_the_complex_primitives() -> None:
    x, y = np.float32([[1, 2], [3, 4]]), np.float32([0.5, -1])
    got = jax.vmap(lax.complex, in_axes=(1, None))(x, y)
    want = np.stack([x[:, b] + 1j * y for b in range(2)]).astype(C64)  # stacking the unbatched calls
    np.testing.assert_array_equal(np.asarray(got), want)
    z = _z()
    f = jax.jit(lambda z: lax.real(z) + lax.imag(lax.conj(z)))
    np.testing.assert_array_equal(np.asarray(jax.vmap(f)(z.reshape(2, 2))), (z.real - z.imag).reshape(2, 2))


def test_random_normal_of_a_complex_dtype() -> None:
    z = jax.random.normal(jax.random.key(0), (20000,), jnp.complex64)
    assert z.dtype == C64
    # Real and imaginary parts independent, each of variance 1/2: E|z|^2 = 1.
    assert abs(float(jnp.mean(jnp.abs(z) ** 2)) - 1) < 0.05
    assert abs(float(jnp.mean(jnp.real(z) * jnp.imag(z)))) < 0.02


# ---------------------------------------------------------------------------
# Differentiation


# Functions whose derivatives check_grads compares with finite differences, on complex inputs.
# (sign and arccosh are left out on purpose: JAX's sign has a zero derivative, and JAX's
# arccosh derivative, 1/sqrt(z^2 - 1), is on the other branch where Re(z) < 0.)
DIFFERENTIABLE: dict[str, Callable[..., Any]] = {
    **{k: v for k, v in MATH.items() if k != "arccosh"},
    "abs": jnp.abs, "real": jnp.real, "imag": jnp.imag, "conj": jnp.conj, "angle": jnp.angle,
    "cube": lambda z: z**3, "cpow": lambda z: z ** np.complex64(1.5 + 0.5j), "zpowz": lambda z: z**z,
    "rsqrt": lax.rsqrt, "zzbar": lambda z: z * jnp.conj(z), "cumsum": jnp.cumsum, "prod": jnp.prod,
    "outer_matmul": lambda z: jnp.outer(z, z) @ z, "sort": jnp.sort, "exp2": jnp.exp2,
    "logistic": lax.logistic, "to_real": lambda z: lax.convert_element_type(z, np.float32),
}  # fmt: skip


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_complex_derivatives_match_finite_differences(name: str) -> None:
    check_grads(DIFFERENTIABLE[name], (_z(),), order=2)


def test_complex_primitive_derivatives_match_finite_differences() -> None:
    x, y = np.float32([1, 2]), np.float32([3, -1])
    check_grads(lax.complex, (x, y), order=2)
    check_grads(lax.conj, (x,), order=2)
    check_grads(lambda x: jnp.abs(jnp.exp(1j * x) * (x + 2j)), (x,), order=2)


def test_grad_of_a_real_function_of_complex_input_is_the_conjugate_convention() -> None:
    z = np.complex64(3 + 4j)
    # f(x + iy) = x^2 + y^2: JAX's grad is df/dx - i df/dy = 2 conj(z).
    g = jax.grad(lambda z: jnp.real(z) ** 2 + jnp.imag(z) ** 2)(z)
    assert g.dtype == C64 and complex(g) == 2 * np.conj(z)
    np.testing.assert_allclose(complex(jax.grad(jnp.abs)(z)), np.conj(z) / abs(z), rtol=1e-6)
    # Re(z^2) = x^2 - y^2: 2x + 2iy = 2z
    assert complex(jax.grad(lambda z: jnp.real(z * z))(z)) == 2 * z


def test_holomorphic_grad_jacfwd_jacrev() -> None:
    z = np.complex64(0.5 + 1j)
    np.testing.assert_allclose(complex(jax.grad(jnp.sin, holomorphic=True)(z)), np.cos(np.complex128(z)), rtol=1e-6)
    zs = _z()
    want = np.diag(3 * zs.astype(C128) ** 2)
    for jac in (jax.jacfwd, jax.jacrev):
        got = jac(lambda z: z**3, holomorphic=True)(zs)
        assert got.dtype == C64
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
    # Not holomorphic: jacrev of a real function of complex inputs, jacfwd of a complex function of real ones.
    np.testing.assert_allclose(np.asarray(jax.jacrev(lambda z: jnp.abs(z) ** 2)(zs)), np.diag(2 * np.conj(zs)), rtol=1e-5)
    x = np.float32([0.5, 1.0])
    np.testing.assert_allclose(np.asarray(jax.jacfwd(lambda x: jnp.exp(1j * x))(x)), np.diag(1j * np.exp(1j * x)), rtol=1e-6)
    h = jax.hessian(lambda z: jnp.sum(z**3), holomorphic=True)(zs)
    np.testing.assert_allclose(np.asarray(h), np.diag(6 * zs), rtol=1e-5)


def test_a_weak_complex_stays_weak_through_vjp() -> None:
    # A weak complex literal binds as a Python complex, so the cotangent keeps the weak type (as JAX's).
    (ct,) = jax.vjp(jnp.sin, 1 + 2j)[1](1 + 0j)
    assert ct.dtype == C64 and ct.aval.weak_type


def test_vjp_and_jvp_with_complex_cotangents() -> None:
    zs = _z()
    u = (np.arange(4) + 1j).astype(C64)
    f = lambda z: jnp.sin(z) * jnp.conj(z)  # noqa: E731
    _, pullback = jax.vjp(f, zs)
    (ct,) = pullback(u)
    # The plain transpose of the R-linear jvp: <ct, v> = <u, jvp(v)> for the pairing Re(sum(a * b)).
    v = (np.ones(4) - 2j).astype(C64)
    _, tangent = jax.jvp(f, (zs,), (v,))
    np.testing.assert_allclose(np.real(np.sum(np.asarray(ct) * v)), np.real(np.sum(u * np.asarray(tangent))), rtol=1e-5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: jax.grad(jnp.sin)(np.complex64(1j)), "grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but got complex64. For holomorphic differentiation, pass holomorphic=True."),
        (lambda: jax.grad(jnp.sin, holomorphic=True)(np.float32(1)), "grad with holomorphic=True requires inputs with complex dtype, but got float32."),
        (lambda: jax.grad(jnp.abs, holomorphic=True)(np.complex64(1j)), "grad with holomorphic=True requires outputs with complex dtype, but got float32."),
        (lambda: jax.jacfwd(jnp.sin)(Z), "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), but got complex64."),
        (lambda: jax.jacfwd(jnp.abs, holomorphic=True)(Z), "jacfwd with holomorphic=True requires outputs with complex dtype, but got float32."),
        (lambda: jax.jacrev(jnp.sin)(Z), "jacrev requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but got complex64."),
        (lambda: jax.jacrev(jnp.sin, holomorphic=True)(np.float32([1])), "jacrev with holomorphic=True requires inputs with complex dtype, but got float32."),
    ],
)
def test_differentiation_errors_are_jaxs(call: Callable[[], Any], message: str) -> None:
    with pytest.raises(TypeError) as info:
        call()
    assert str(info.value).startswith(message)
