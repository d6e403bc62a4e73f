"""The complex-number primitives: ``complex``, ``real``, ``imag``, ``conj``.

They move between a complex dtype and its real parts (float32 <-> complex64,
float64 <-> complex128). ``spec/primitives/complex.md`` specifies them; the
rules cite its constraint labels. All four are linear; their transposes are
the plain (unconjugated) linear transposes, as in JAX, and grad's conjugate
convention for complex inputs follows from them (see docs/complex.md).

This module also extends ``abs``'s jvp to complex operands (|z| is not
holomorphic: its derivative is ``re(conj(z) / |z| * dz)``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minijax import dtypes
from minijax.core import ShapedArray, get_aval
from minijax.interpreters import ad, batching
from minijax.primitives import elementwise as ew
from minijax.primitives.common import broadcasting_shape, standard_primitive

# The real parts of a complex number: complex() takes them, conj() complex values too.
COMPLEX_PARTS: ew.Classes = (np.float32, np.float64)
CONJ: ew.Classes = (np.float32, np.complexfloating, np.float64)  # the order of JAX's message

real_p = ew._unop("real", ew.COMPLEX, ew.real_dtype)  # real C1-C3
imag_p = ew._unop("imag", ew.COMPLEX, ew.real_dtype)  # imag C1-C3


def _complex_rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    shape = broadcasting_shape("complex", x, y)  # complex C3
    ew.check_classes("complex", [x, y], COMPLEX_PARTS)  # complex C1
    dtype = ew.check_same_dtypes("complex", [x, y])  # complex C2
    return ShapedArray(shape, ew.complex_dtype(dtype), x.weak_type and y.weak_type)  # complex C4


complex_p = standard_primitive("complex", _complex_rule)


def _conj_rule(x: ShapedArray, *, input_dtype: Any) -> ShapedArray:
    # input_dtype records the operand's dtype for the transpose: a real operand's
    # cotangent is the real part of the complex one.
    ew.check_classes("conj", [x], CONJ)  # conj C1
    return ShapedArray(x.shape, ew.complex_dtype(x.dtype), x.weak_type)  # conj C2, C3


conj_p = standard_primitive("conj", _conj_rule)


# ---------------------------------------------------------------------------
# The primitives as functions (the rules below and minijax.lax use them)


def real(x: Any) -> Any:
    return real_p.bind(x)


def imag(x: Any) -> Any:
    return imag_p.bind(x)


def complex(x: Any, y: Any) -> Any:  # noqa: A001  # lax's name
    return complex_p.bind(x, y)


def conj(x: Any) -> Any:
    return conj_p.bind(x, input_dtype=get_aval(x).dtype)


# ---------------------------------------------------------------------------
# jvp and transpose (all four are linear), batching


def _zeros_of(t: Any) -> Any:
    return np.zeros((), get_aval(t).dtype)


def _complex_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    # complex(x, y) = x + i y: x's cotangent is re(ct), y's is im(-ct).
    return ew._linear_operand_cts(ct, [x, y], [real, lambda t: imag(ew._neg(t))])


def _conj_transpose(ct: Any, x: Any, *, input_dtype: Any) -> list[Any]:
    if dtypes.issubdtype(input_dtype, np.complexfloating):
        return [conj(ct)]
    return [real(ct)]  # a real operand was widened to complex: keep the real part


ad.deflinear(real_p, lambda ct, x: [complex(ct, _zeros_of(ct))])
ad.deflinear(imag_p, lambda ct, x: [complex(_zeros_of(ct), ew._neg(ct))])
ad.deflinear(complex_p, _complex_transpose)
ad.deflinear(conj_p, _conj_transpose)

for _prim in (real_p, imag_p, conj_p):
    batching.defvectorized(_prim)
batching.primitive_batchers[complex_p] = ew.broadcasting_batcher(complex_p)
del _prim


def _abs_jvp(g: Any, ans: Any, x: Any) -> Any:
    x_dtype = get_aval(x).dtype
    if x_dtype.kind != "c":
        return ew._abs_jvp(g, ans, x)
    # d|x| = re(dx * conj(x) / |x|), with |x| = 0 read as 1 (a zero derivative there).
    ratio = ew._div(conj(x), ew._replace_zero(ew.convert_element_type(ans, x_dtype)))
    return real(ew._mul(g, ratio))


ad.defjvp2(ew.abs_p, _abs_jvp)
