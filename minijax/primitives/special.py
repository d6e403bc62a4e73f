"""Special-function primitives: the incomplete gamma and beta functions, polygamma,
Hurwitz zeta and the scaled modified Bessel functions.

``spec/primitives/special.md`` is the written specification. Each primitive
has the shape of an elementwise one (``minijax/primitives/elementwise.py``):
float operands of one dtype, broadcast shapes, weak iff every operand is weak
(n-ary C1-C4 there; unary C1-C3 for ``bessel_i0e``/``bessel_i1e``). The
derivatives are JAX's: ``igamma``'s in ``a`` is the primitive ``igamma_grad_a``,
``polygamma``'s and ``regularized_incomplete_beta``'s exist in ``x`` only,
``zeta`` has none (JAX's ``jax.scipy.special.zeta`` adds a custom rule), and
``igamma_grad_a`` has none.

This family also gives ``digamma`` (an elementwise primitive) its derivative,
``polygamma(1, x)``.
"""

from __future__ import annotations

from typing import Any

from minijax import dtypes
from minijax.core import Primitive, get_aval
from minijax.interpreters import ad, batching
from minijax.primitives import elementwise as ew
from minijax.primitives.common import standard_primitive

_FLOATING = ew.FLOATING


def _nary(name: str, arity: int) -> Primitive:
    return standard_primitive(name, ew.naryop_rule(name, _FLOATING, arity=arity))  # n-ary C1-C4


def _unary(name: str) -> Primitive:
    return standard_primitive(name, ew.unop_rule(name, _FLOATING))  # unary C1-C3


igamma_p = _nary("igamma", 2)
igammac_p = _nary("igammac", 2)
igamma_grad_a_p = _nary("igamma_grad_a", 2)
regularized_incomplete_beta_p = _nary("regularized_incomplete_beta", 3)
polygamma_p = _nary("polygamma", 2)
zeta_p = _nary("zeta", 2)
bessel_i0e_p = _unary("bessel_i0e")
bessel_i1e_p = _unary("bessel_i1e")

SPECIAL_PRIMITIVES = (
    igamma_p, igammac_p, igamma_grad_a_p, regularized_incomplete_beta_p, polygamma_p, zeta_p,
    bessel_i0e_p, bessel_i1e_p,
)  # fmt: skip

# ---------------------------------------------------------------------------
# jvp rules (JAX's formulas, in JAX's order of operations)

_add, _sub, _mul, _div, _neg = ew.add_p.bind, ew.sub_p.bind, ew.mul_p.bind, ew.div_p.bind, ew.neg_p.bind
_exp = ew.exp_p.bind
_log = ew.log_p.bind
_const, _scalar_like = ew._const, ew.scalar_like


def _exp_(x: Any) -> Any:
    return _exp(x, accuracy=None)


def _log_(x: Any) -> Any:
    return _log(x, accuracy=None)


def _igamma_jvp_x(g: Any, a: Any, x: Any) -> Any:
    # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a), in log space.
    log_density = _sub(_add(_neg(x), _mul(_sub(a, _scalar_like(a, 1)), _log_(x))), ew.lgamma_p.bind(a))
    return _mul(g, _exp_(log_density))


def _igamma_jvp_a(g: Any, a: Any, x: Any) -> Any:
    return _mul(g, igamma_grad_a_p.bind(a, x))


def _betainc_jvp_ab(g: Any, a: Any, b: Any, x: Any) -> Any:
    raise ValueError("Betainc gradient with respect to a and b not supported.")


def _betainc_jvp_x(g: Any, a: Any, b: Any, x: Any) -> Any:
    # d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b).
    lgamma = ew.lgamma_p.bind
    log_beta = _sub(_add(lgamma(a), lgamma(b)), lgamma(_add(a, b)))
    log_density = _add(
        _mul(_sub(b, _scalar_like(b, 1)), ew.log1p_p.bind(_neg(x), accuracy=None)),
        _mul(_sub(a, _scalar_like(a, 1)), _log_(x)),
    )
    return _mul(_exp_(_sub(log_density, log_beta)), g)


def _polygamma_jvp_m(g: Any, m: Any, x: Any) -> Any:
    raise ValueError("polygamma gradient with respect to m is not supported")


def _polygamma_jvp_x(g: Any, m: Any, x: Any) -> Any:
    return _mul(g, polygamma_p.bind(_add(m, _const(m, 1)), x))


def _bessel_i0e_jvp(g: Any, y: Any, x: Any) -> Any:
    # d/dx e^-|x| I0(x) = e^-|x| I1(x) - sign(x) e^-|x| I0(x)
    return _mul(g, _sub(bessel_i1e_p.bind(x), _mul(ew.sign_p.bind(x), y)))


def _bessel_i1e_jvp(g: Any, y: Any, x: Any) -> Any:
    # d/dx e^-|x| I1(x) = i0e(x) - i1e(x) (sign(x) + 1/x); 1/2 at x = 0 (the limit),
    # and x kept away from 0 so that the unused branch has no NaN.
    eps = float(dtypes.finfo(get_aval(x).dtype).eps)
    not_tiny = ew.gt_p.bind(ew.abs_p.bind(x), _const(x, eps))
    safe_x = ew.select(not_tiny, x, ew.full_like(x, eps))
    slope = _sub(
        bessel_i0e_p.bind(safe_x),
        _mul(y, _add(ew.sign_p.bind(safe_x), _div(_scalar_like(safe_x, 1), safe_x))),
    )
    slope = ew.select(not_tiny, slope, ew.full_like(x, 0.5))
    return _mul(g, slope)


ad.defjvp(igamma_p, _igamma_jvp_a, _igamma_jvp_x)
ad.defjvp(igammac_p, lambda g, a, x: _neg(_igamma_jvp_a(g, a, x)), lambda g, a, x: _neg(_igamma_jvp_x(g, a, x)))
ad.defjvp(regularized_incomplete_beta_p, _betainc_jvp_ab, _betainc_jvp_ab, _betainc_jvp_x)
ad.defjvp(polygamma_p, _polygamma_jvp_m, _polygamma_jvp_x)
ad.defjvp2(bessel_i0e_p, _bessel_i0e_jvp)
ad.defjvp2(bessel_i1e_p, _bessel_i1e_jvp)
# digamma (elementwise family): its derivative is the trigamma function.
ad.non_differentiable.discard(ew.digamma_p)
ad.defjvp(ew.digamma_p, lambda g, x: _mul(g, polygamma_p.bind(_const(x, 1), x)))


def random_gamma_grad(a: Any, x: Any) -> Any:
    """The derivative in a of a Gamma(a, 1) sample x at a fixed quantile (``lax.random_gamma_grad``;
    JAX's is a function too, not a primitive). Differentiating P(a, x) = u implicitly gives
    dx/da = -(dP/da) / (dP/dx), with dP/dx = x^(a-1) e^-x / Gamma(a) taken in log space."""
    log_density = _sub(_sub(_mul(_sub(a, _scalar_like(a, 1)), _log_(x)), x), ew.lgamma_p.bind(a))
    return _neg(_div(igamma_grad_a_p.bind(a, x), _exp_(log_density)))


def _no_jvp(prim: Primitive) -> None:
    def rule(primals: Any, tangents: Any, **params: Any) -> tuple[Any, Any]:
        raise NotImplementedError(f"Differentiation rule for '{prim.name}' not implemented")

    ad.primitive_jvps[prim] = rule
    ad.non_differentiable.add(prim)


# JAX has no rule for these (jax.scipy.special.zeta defines a custom_jvp on top).
_no_jvp(zeta_p)
_no_jvp(igamma_grad_a_p)

# ---------------------------------------------------------------------------
# Batching: elementwise, as the elementwise family batches.

for _prim in (bessel_i0e_p, bessel_i1e_p):
    batching.defvectorized(_prim)
for _prim in (igamma_p, igammac_p, igamma_grad_a_p, regularized_incomplete_beta_p, polygamma_p, zeta_p):
    batching.primitive_batchers[_prim] = ew.broadcasting_batcher(_prim)
del _prim

__all__ = [
    "SPECIAL_PRIMITIVES", "bessel_i0e_p", "bessel_i1e_p", "igamma_grad_a_p", "igamma_p", "igammac_p",
    "polygamma_p", "random_gamma_grad", "regularized_incomplete_beta_p", "zeta_p",
]  # fmt: skip
