r"""Taylor-mode automatic differentiation: ``jax.experimental.jet``.

``jvp`` pushes a first-order perturbation through a function. ``jet`` pushes a
whole truncated Taylor polynomial: given the coefficients of an input curve

    x(t) = x_0 + x_1 t + x_2 t^2 + ... + x_K t^K,

it returns the coefficients of f(x(t)) up to t^K, computed in one pass, each
primitive mapping input coefficients to output coefficients with its own
rule (its *Taylor rule*). Nested ``jvp``\ s get the same numbers, but their
cost grows exponentially with the order; a Taylor rule's grows quadratically.

Conventions, as in JAX:

- ``jet(fun, primals, series)``: ``primals`` one array per positional
  argument, ``series[i]`` the list of the K higher terms of argument i. By
  default (``factorial_scaled=True``) term k is the k-th *derivative* of the
  curve, ``k! x_k``; the answer's terms are derivatives too. ``jet2`` (that
  is, ``factorial_scaled=False``) takes and returns the coefficients ``x_k``
  themselves; every rule below works on coefficients.
- Inside, an input without a series (a constant, or a value of an enclosing
  transformation) has ``zero_series``: a rule only runs when some operand has
  a series; otherwise the primitive simply runs on the primals. Series the
  function's outputs do not depend on come back as zeros.
- The rules live in ``jet_rules``, keyed by primitive: ``rule(primals_in,
  series_in, **params) -> (primal_out, series_out)``. The table holds the
  primitives JAX 0.10.2's jet has rules for, no more: a primitive without one
  (``tan``, ``lgamma``, ``cond``, ``scan``, ``while``, ...) raises JAX's
  ``KeyError`` naming it. A ``jit`` is jet-transformed inside and stays a
  ``jit``; a ``custom_jvp`` / ``custom_vjp`` function's own rule is ignored
  and its body differentiated (what JAX's jet means to do; JAX 0.10.2 raises
  an UnexpectedTracerError there instead, see docs/differences.md).

The rules are the standard recurrences for Taylor coefficients (Griewank and
Walther, *Evaluating Derivatives*, chapter 13): for y = g(x) with a known
derivative series c = g'(x(t)), ``y_k = (1/k) sum_{j=1..k} j c_{k-j} x_j``
(``_chain``), which exp, sin/cos, logistic and erf_inv solve together with
their own derivative's series.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import core, lax, numpy as jnp, tree_util
from minijax.core import Primitive, Trace, Tracer, get_aval, raise_leaked_tracer, set_current_trace
from minijax.debug_checks import check_for_leaks, leak_checks_enabled
from minijax.interpreters.tracing import hoist_tracer_consts, trace_to_jaxpr
from minijax.jaxpr import eval_closed_jaxpr
from minijax.primitives import calls, elementwise, indexing, reductions, slicing, sorting

__all__ = [
    "JetTrace",
    "JetTracer",
    "ZeroSeries",
    "ZeroTerm",
    "def_comp",
    "def_deriv",
    "deflinear",
    "defzero",
    "deriv_prop",
    "fact",
    "jet",
    "jet2",
    "jet_rules",
    "linear_prop",
    "zero_prop",
    "zero_series",
    "zero_term",
]

Series = list[Any]
JetRule = Callable[..., tuple[Any, Any]]


# ---------------------------------------------------------------------------
# Symbolic zeros


class ZeroSeries:
    """The series of a value that does not depend on the inputs' series (all terms zero)."""

    def __repr__(self) -> str:
        return "zero_series"


class ZeroTerm:
    """One zero term (JAX's name, kept for code that imports it; rules see instantiated zeros)."""

    def __repr__(self) -> str:
        return "zero_term"


zero_series = ZeroSeries()
zero_term = ZeroTerm()
# Empty pytrees, as in JAX: a tree_map over a rule's output passes them through.
tree_util.register_pytree_node(ZeroSeries, lambda z: ((), None), lambda _, xs: zero_series)
tree_util.register_pytree_node(ZeroTerm, lambda z: ((), None), lambda _, xs: zero_term)


def fact(n: Any) -> Any:
    """n!, as JAX's jet computes it (exp of lgamma, in float32 unless x64): the
    scaling of factorial-scaled series, so that its rounding is JAX's too."""
    return lax.exp(lax.lgamma(n + 1.0))


# ---------------------------------------------------------------------------
# The trace


class JetTracer(Tracer):
    """A value on the Taylor curve: its primal and its ``order`` higher coefficients."""

    __slots__ = ("primal", "terms")

    def __init__(self, trace: JetTrace, primal: Any, terms: Series | ZeroSeries) -> None:
        self._trace = trace
        self.primal = primal
        self.terms = terms

    @property
    def aval(self) -> core.ShapedArray:
        return get_aval(self.primal)


class JetTrace(Trace):
    """Runs each primitive's Taylor rule on the parent trace (the stackless design of minijax/core.py)."""

    transform_name = "jet"
    tracer_kind = "JetTracer"

    def __init__(self, parent: Trace, order: int) -> None:
        self.parent = parent
        self.order = order

    def to_primal_terms(self, x: Any) -> tuple[Any, Any]:
        if isinstance(x, JetTracer) and x._trace is self:
            return x.primal, x.terms
        if isinstance(x, Tracer) and not x._trace.is_alive:
            raise_leaked_tracer(x)
        return x, zero_series

    def wrap(self, primal: Any, terms: Any) -> JetTracer:
        # Every value computed inside stays a tracer, a constant too (zero_series),
        # as in JAX: Python control flow on one is an error, as under jit.
        return JetTracer(self, primal, zero_series if terms is zero_series else list(terms))

    def wrap_all(self, outs: Any, multiple_results: bool) -> Any:
        if multiple_results:
            return [self.wrap(o, zero_series) for o in outs]
        return self.wrap(outs, zero_series)

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        pairs = [self.to_primal_terms(x) for x in args]
        primals = [p for p, _ in pairs]
        if all(s is zero_series for _, s in pairs):
            with set_current_trace(self.parent):
                return self.wrap_all(prim.bind(*primals, **params), prim.multiple_results)
        trace_rule = _trace_rules.get(prim)
        if trace_rule is not None:
            return trace_rule(self, args, params)
        # JAX's error, a KeyError naming the primitive; the note says what to do.
        rule = jet_rules.get(prim)
        if rule is None:
            error = KeyError(prim)
            error.add_note(
                f"jet has no Taylor rule for the primitive '{prim.name}' (neither has JAX's jet). "
                "Rewrite the function with primitives that have one, or register a rule in "
                "minijax.experimental.jet.jet_rules."
            )
            raise error
        with set_current_trace(self.parent):
            series = [_zeros_of(p, self.order) if s is zero_series else s for p, s in pairs]
            primal_out, series_out = rule(primals, series, **params)
        if not prim.multiple_results:
            return self.wrap(primal_out, series_out)
        if series_out is zero_series:
            return self.wrap_all(primal_out, multiple_results=True)
        return [self.wrap(p, s) for p, s in zip(primal_out, series_out)]

    # A custom_jvp / custom_vjp function: its rule is ignored, its body traced
    # through (the current trace is this one when the call reaches it).
    def process_custom_jvp_call(self, call: Any, args: Sequence[Any]) -> list[Any]:
        if all(self.to_primal_terms(x)[1] is zero_series for x in args):
            with set_current_trace(self.parent):
                outs = self.parent.process_custom_jvp_call(call, [self.to_primal_terms(x)[0] for x in args])
            return self.wrap_all(outs, multiple_results=True)  # type: ignore[no-any-return]
        return call.run(args)  # type: ignore[no-any-return]

    def process_custom_vjp_call(self, call: Any, args: Sequence[Any]) -> list[Any]:
        if all(self.to_primal_terms(x)[1] is zero_series for x in args):
            with set_current_trace(self.parent):
                outs = self.parent.process_custom_vjp_call(call, [self.to_primal_terms(x)[0] for x in args])
            return self.wrap_all(outs, multiple_results=True)  # type: ignore[no-any-return]
        return call.run(args)  # type: ignore[no-any-return]


def _zeros_of(x: Any, order: int) -> Series:
    # Strongly typed zeros of x's dtype, as JAX instantiates a missing series
    # (so x * 2.0 of a weakly typed x has strongly typed terms, as in JAX).
    zero = lax.full_like(x, 0, dtype=get_aval(x).dtype)
    return [zero] * order


def jet_flat(
    fun: Callable[..., Sequence[Any]], primals: Sequence[Any], series: Sequence[Series], order: int
) -> tuple[list[Any], list[Series]]:
    """Push coefficient series through ``fun`` (flat lists in and out); outputs
    that do not depend on the series get zero terms."""
    trace = JetTrace(core.current_trace(), order)
    tracers = [JetTracer(trace, p, list(s)) for p, s in zip(primals, series)]
    try:
        with set_current_trace(trace):
            outs = fun(*tracers)
        pairs = [trace.to_primal_terms(o) for o in outs]
    finally:
        trace.invalidate()
    if leak_checks_enabled():
        check_for_leaks(trace, tracers, outs)
    out_primals = [p for p, _ in pairs]
    out_series = [[jnp.zeros_like(p)] * order if s is zero_series else list(s) for p, s in pairs]
    return out_primals, out_series


# ---------------------------------------------------------------------------
# The public functions


def jet(
    fun: Callable[..., Any],
    primals: Sequence[Any],
    series: Sequence[Sequence[Any]],
    factorial_scaled: bool = True,
    **_: Any,
) -> tuple[Any, Any]:
    """Taylor-mode higher-order differentiation of ``fun`` at ``primals`` along ``series``.

    Returns ``(primals_out, series_out)``: ``fun(*primals)``, and for each output
    leaf the list of its higher terms (the output's pytree structure with each
    leaf replaced by that list). ``factorial_scaled=False`` takes and gives
    plain Taylor coefficients instead of derivatives.
    """
    try:
        (order,) = set(map(len, series))
    except ValueError:
        raise ValueError("jet terms have inconsistent lengths for different arguments") from None
    for i, (x, terms) in enumerate(zip(primals, series)):
        if not tree_util.treedef_is_leaf(tree_util.tree_structure(x)):
            raise ValueError(f"primal value at position {i} is not an array")
        for j, t in enumerate(terms):
            if not tree_util.treedef_is_leaf(tree_util.tree_structure(t)):
                raise ValueError(f"term {j} for argument {i} is not an array")
    scaled = [list(terms) for terms in series]
    if factorial_scaled:
        scaled = [[t / fact(k + 1) for k, t in enumerate(terms)] for terms in scaled]
    out_tree_box: list[tree_util.PyTreeDef] = []

    def flat_fun(*args: Any) -> list[Any]:
        leaves, tree = tree_util.tree_flatten(fun(*args))
        out_tree_box.append(tree)
        return leaves

    out_primals, out_series = jet_flat(flat_fun, list(primals), scaled, order)
    if factorial_scaled:
        out_series = [[t * fact(k + 1) for k, t in enumerate(terms)] for terms in out_series]
    out_tree = out_tree_box[0]
    return tree_util.tree_unflatten(out_tree, out_primals), tree_util.tree_unflatten(out_tree, out_series)


def jet2(fun: Callable[..., Any], primals: Sequence[Any], series: Sequence[Sequence[Any]]) -> tuple[Any, Any]:
    """``jet`` on plain Taylor coefficients (``factorial_scaled=False``)."""
    return jet(fun, primals, series, factorial_scaled=False)


# ---------------------------------------------------------------------------
# Rules

jet_rules: dict[Primitive, JetRule] = {}
# Rules that need the trace (call-like primitives): rule(trace, args, params) -> outputs.
_trace_rules: dict[Primitive, Callable[[JetTrace, Sequence[Any], dict[str, Any]], Any]] = {}


def _registered(names: str) -> list[Primitive]:
    """The primitives of these names that minijax has (the complex ones, fft...
    get their rules once they exist)."""
    return [core.primitive_registry[n] for n in names.split() if n in core.primitive_registry]


# The rule makers JAX's module offers for registering rules (same names and meaning).


def zero_prop(prim: Primitive, primals: Sequence[Any], series: Sequence[Series], **params: Any) -> tuple[Any, Any]:
    """The rule of a piecewise constant primitive: no higher terms."""
    return prim.bind(*primals, **params), zero_series


def defzero(prim: Primitive) -> None:
    jet_rules[prim] = functools.partial(zero_prop, prim)


def linear_prop(prim: Primitive, primals: Sequence[Any], series: Sequence[Series], **params: Any) -> tuple[Any, Any]:
    """The rule of a primitive linear in all its operands together."""
    # Linear in all operands together: each coefficient maps on its own.
    out = prim.bind(*primals, **params)
    terms = [prim.bind(*column, **params) for column in zip(*series)]
    if prim.multiple_results:
        n_out = len(out)
        return out, [[t[i] for t in terms] for i in range(n_out)]
    return out, terms


def deflinear(prim: Primitive) -> None:
    jet_rules[prim] = functools.partial(linear_prop, prim)


# Piecewise constant or discrete: every higher coefficient is zero.
for _p in _registered(
    "le lt gt ge eq ne not and or xor floor ceil round sign stop_gradient is_finite "
    "shift_left shift_right_arithmetic shift_right_logical bitcast_convert_type"
):
    defzero(_p)

for _p in _registered(
    "neg real complex conj imag add add_any sub convert_element_type broadcast_in_dim concatenate split stack "
    "unstack pad reshape squeeze rev transpose slice reduce_sum reduce_window_sum fft copy device_put reshard cumsum"
):
    deflinear(_p)


def _with_indices(prim: Primitive, n_linear: int) -> JetRule:
    """A primitive linear in its first ``n_linear`` operands, the rest indices (read from the primals)."""

    def rule(primals: Sequence[Any], series: Sequence[Series], **params: Any) -> tuple[Any, Any]:
        indices = primals[n_linear:]
        out = prim.bind(*primals, **params)
        terms = [prim.bind(*column[:n_linear], *indices, **params) for column in zip(*series)]
        return out, terms

    return rule


jet_rules[slicing.dynamic_slice_p] = _with_indices(slicing.dynamic_slice_p, 1)
jet_rules[slicing.dynamic_update_slice_p] = _with_indices(slicing.dynamic_update_slice_p, 2)
jet_rules[indexing.gather_p] = _with_indices(indexing.gather_p, 1)


def _scatter_add_rule(primals: Sequence[Any], series: Sequence[Series], **params: Any) -> tuple[Any, Any]:
    # Linear in the operand and the updates; the indices sit between them.
    operand, indices, updates = primals
    prim = indexing.scatter_add_p
    out = prim.bind(operand, indices, updates, **params)
    return out, [prim.bind(t_op, indices, t_up, **params) for t_op, _, t_up in zip(*series)]


jet_rules[indexing.scatter_add_p] = _scatter_add_rule


def _chain(k: int, c: Sequence[Any], u: Sequence[Any]) -> Any:
    """Coefficient k of y where y' = c x' (c: the derivative series, u: x's series)."""
    return sum(j * c[k - j] * u[j] for j in range(1, k + 1)) / k


def _exp_rule(primals: Sequence[Any], series: Sequence[Series], **params: Any) -> tuple[Any, Any]:
    (x,), (terms,) = primals, series
    u = [x, *terms]
    v = [elementwise.exp_p.bind(x, **params)]
    for k in range(1, len(u)):
        v.append(_chain(k, v, u))  # exp' = exp
    return v[0], v[1:]


def _log_rule(primals: Sequence[Any], series: Sequence[Series], **params: Any) -> tuple[Any, Any]:
    # x = exp(v): solve the exp recurrence for v's coefficients.
    (x,), (terms,) = primals, series
    u = [x, *terms]
    v = [elementwise.log_p.bind(x, **params)]
    for k in range(1, len(u)):
        known = sum(j * v[j] * u[k - j] for j in range(1, k))
        v.append((u[k] - known / k) / u[0])
    return v[0], v[1:]


def _div_rule(primals: Sequence[Any], series: Sequence[Series]) -> tuple[Any, Any]:
    # u = v w: coefficient k of the product, solved for v_k.
    x, y = primals
    u, w = [x, *series[0]], [y, *series[1]]
    v = [elementwise.div_p.bind(x, y)]
    for k in range(1, len(u)):
        known = sum(v[j] * w[k - j] for j in range(k))
        v.append((u[k] - known) / w[0])
    return v[0], v[1:]


jet_rules[elementwise.exp_p] = _exp_rule
jet_rules[elementwise.log_p] = _log_rule
jet_rules[elementwise.div_p] = _div_rule


def _bilinear_rule(prim: Primitive, primals: Sequence[Any], series: Sequence[Series], **params: Any) -> tuple[Any, Any]:
    # The Cauchy product of the two series.
    x, y = primals
    u, w = [x, *series[0]], [y, *series[1]]
    v = [sum(prim.bind(u[j], w[k - j], **params) for j in range(k + 1)) for k in range(len(u))]
    return v[0], v[1:]


for _p in _registered("mul dot_general conv_general_dilated"):
    jet_rules[_p] = functools.partial(_bilinear_rule, _p)


def _sin_cos_series(sign: int, s0: Any, c0: Any, u: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """The series of s and c with s' = c x' and c' = sign s x' (sin/cos: -1, sinh/cosh: +1)."""
    s, c = [s0], [c0]
    for k in range(1, len(u)):
        s.append(_chain(k, c, u))
        c.append(sign * _chain(k, s, u))
    return s, c


def _trig_rule(sign: int, fs: Callable[[Any], Any], fc: Callable[[Any], Any], want_sin: bool) -> JetRule:
    def rule(primals: Sequence[Any], series: Sequence[Series], **_: Any) -> tuple[Any, Any]:
        (x,), (terms,) = primals, series
        s, c = _sin_cos_series(sign, fs(x), fc(x), [x, *terms])
        out = s if want_sin else c
        return out[0], out[1:]

    return rule


jet_rules[elementwise.sin_p] = _trig_rule(-1, lax.sin, lax.cos, True)
jet_rules[elementwise.cos_p] = _trig_rule(-1, lax.sin, lax.cos, False)
jet_rules[elementwise.sinh_p] = _trig_rule(1, lax.sinh, lax.cosh, True)
jet_rules[elementwise.cosh_p] = _trig_rule(1, lax.sinh, lax.cosh, False)


def _logistic_series(x: Any, terms: Series) -> list[Any]:
    # v' = e x' with e = v (1 - v), whose coefficients follow from v's.
    u = [x, *terms]
    v = [lax.logistic(x)]
    e = [v[0] * (1 - v[0])]
    for k in range(1, len(u)):
        v.append(_chain(k, e, u))
        e.append((1 - v[0]) * v[k] - sum(v[j] * v[k - j] for j in range(1, k + 1)))
    return v


def _logistic_rule(primals: Sequence[Any], series: Sequence[Series], **_: Any) -> tuple[Any, Any]:
    v = _logistic_series(primals[0], series[0])
    return v[0], v[1:]


def _tanh_rule(primals: Sequence[Any], series: Sequence[Series], **_: Any) -> tuple[Any, Any]:
    # tanh(x) = 2 logistic(2x) - 1
    v = _logistic_series(2 * primals[0], [2 * t for t in series[0]])
    return 2 * v[0] - 1, [2 * t for t in v[1:]]


jet_rules[elementwise.logistic_p] = _logistic_rule
jet_rules[elementwise.tanh_p] = _tanh_rule


def _pow_rule(primals: Sequence[Any], series: Sequence[Series]) -> tuple[Any, Any]:
    # x ** y = exp(y log x): the exp recurrence on the series of y log x.
    x, y = primals
    z0, z_terms = jet2(lambda a, b: lax.mul(b, lax.log(a)), primals, series)
    u = [z0, *z_terms]
    v = [elementwise.pow_p.bind(x, y)]
    for k in range(1, len(u)):
        v.append(_chain(k, v, u))
    return v[0], v[1:]


def _pow_by_squaring(x: Any, n: int) -> Any:
    if n < 0:
        return _pow_by_squaring(1 / x, -n)
    if n == 0:
        return 1
    half = _pow_by_squaring(x * x, n // 2)
    return half if n % 2 == 0 else x * half


def _integer_pow_rule(primals: Sequence[Any], series: Sequence[Series], *, y: int) -> tuple[Any, Any]:
    if y == 0:
        return jet2(jnp.ones_like, primals, series)
    return jet2(lambda x: _pow_by_squaring(x, y), primals, series)


jet_rules[elementwise.pow_p] = _pow_rule
jet_rules[elementwise.integer_pow_p] = _integer_pow_rule


def deriv_prop(
    prim: Primitive, deriv: Callable[[Any], Any], primals: Sequence[Any], series: Sequence[Series], **params: Any
) -> tuple[Any, Any]:
    """The rule of a unary primitive from its derivative ``deriv``, a function with rules of its own."""
    (x,), (terms,) = primals, series
    c0, c_terms = jet2(deriv, primals, series)
    c, u = [c0, *c_terms], [x, *terms]
    v = [prim.bind(x, **params)] + [_chain(k, c, u) for k in range(1, len(u))]
    return v[0], v[1:]


def def_deriv(prim: Primitive, deriv: Callable[[Any], Any]) -> None:
    jet_rules[prim] = functools.partial(deriv_prop, prim, deriv)


def_deriv(elementwise.erf_p, lambda x: (2 / math.sqrt(math.pi)) * lax.exp(-lax.square(x)))


def def_comp(prim: Primitive, comp: Callable[..., Any]) -> None:
    """The rule of a primitive as the composition ``comp`` of primitives with rules."""
    jet_rules[prim] = lambda primals, series, **_: jet2(comp, primals, series)


_compositions: dict[str, Callable[..., Any]] = {
    "expm1": lambda x: lax.exp(x) - 1,
    "log1p": lambda x: lax.log(1 + x),
    "sqrt": lambda x: x**0.5,
    "square": lambda x: x * x,
    "rsqrt": lambda x: x**-0.5,
    "asinh": lambda x: lax.log(x + lax.sqrt(lax.square(x) + 1)),
    "acosh": lambda x: lax.log(x + lax.sqrt(lax.square(x) - 1)),
    "atanh": lambda x: 0.5 * lax.log(lax.div(1 + x, 1 - x)),
    "erfc": lambda x: 1 - lax.erf(x),
    # (JAX's: floored, where rem truncates; for x, y of one sign they agree.)
    "rem": lambda x, y: x - y * lax.floor(x / y),
    "clamp": lambda lo, x, hi: lax.min(lax.max(lo, x), hi),
}
for _name, _comp in _compositions.items():
    def_comp(core.primitive_registry[_name], _comp)


def _erf_inv_rule(primals: Sequence[Any], series: Sequence[Series], **_: Any) -> tuple[Any, Any]:
    # y = erf_inv(x) has y' = c x' with c = (sqrt(pi)/2) exp(y^2): c's
    # coefficient k needs y's up to k, so the two series grow together.
    (x,), (terms,) = primals, series
    u = [x, *terms]
    scale = math.sqrt(math.pi) / 2
    v = [lax.erf_inv(x)]
    square = [v[0] * v[0]]
    expo = [lax.exp(square[0])]
    c = [scale * expo[0]]
    for k in range(1, len(u)):
        v.append(_chain(k, c, u))
        square.append(sum(v[j] * v[k - j] for j in range(k + 1)))
        expo.append(_chain(k, expo, square))
        c.append(scale * expo[k])
    return v[0], v[1:]


jet_rules[elementwise.erf_inv_p] = _erf_inv_rule


def _atan2_rule(primals: Sequence[Any], series: Sequence[Series]) -> tuple[Any, Any]:
    # atan2(x, y) = atan(x / y) where defined, and atan' = 1 / (1 + z^2).
    z0, z_terms = jet2(lax.div, primals, series)
    c0, c_terms = jet2(lambda z: 1 / (1 + lax.square(z)), [z0], [z_terms])
    c, u = [c0, *c_terms], [z0, *z_terms]
    v = [elementwise.atan2_p.bind(*primals)] + [_chain(k, c, u) for k in range(1, len(u))]
    return v[0], v[1:]


jet_rules[elementwise.atan2_p] = _atan2_rule


def _cumulative_rule(combine: Callable[[Any, Any], Any]) -> JetRule:
    # As a parallel prefix scan of `combine`, whose primitives have rules.
    def rule(primals: Sequence[Any], series: Sequence[Series], *, axis: int, reverse: bool) -> tuple[Any, Any]:
        return jet2(functools.partial(lax.associative_scan, combine, axis=axis, reverse=reverse), primals, series)

    return rule


jet_rules[sorting.cumprod_p] = _cumulative_rule(lax.mul)
jet_rules[sorting.cummax_p] = _cumulative_rule(lax.max)
jet_rules[sorting.cummin_p] = _cumulative_rule(lax.min)


def _reduce_chooser_rule(prim: Primitive) -> JetRule:
    # The terms of the chosen elements, averaged over ties (as JAX's jvp does).
    def rule(primals: Sequence[Any], series: Sequence[Series], **params: Any) -> tuple[Any, Any]:
        (operand,), (terms,) = primals, series
        out = prim.bind(operand, **params)
        axes = params["axes"]
        kept = [1 if i in axes else d for i, d in enumerate(np.shape(operand))]
        dtype = get_aval(terms[0]).dtype
        chosen = lax.convert_element_type(lax.eq(operand, lax.reshape(out, kept)), dtype)
        counts = lax.reduce_sum(chosen, axes)
        return out, [lax.div(lax.reduce_sum(lax.mul(t, chosen), axes), counts) for t in terms]

    return rule


jet_rules[reductions.reduce_max_p] = _reduce_chooser_rule(reductions.reduce_max_p)
jet_rules[reductions.reduce_min_p] = _reduce_chooser_rule(reductions.reduce_min_p)


def _abs_rule(primals: Sequence[Any], series: Sequence[Series]) -> tuple[Any, Any]:
    (x,), (terms,) = primals, series
    signs = lax.select(lax.lt(x, lax.full_like(x, 0)), lax.full_like(x, -1), lax.full_like(x, 1))
    return elementwise.abs_p.bind(x), [signs * t for t in terms]


jet_rules[elementwise.abs_p] = _abs_rule


def _select_n_rule(primals: Sequence[Any], series: Sequence[Series]) -> tuple[Any, Any]:
    # The predicate only chooses: its own series plays no part.
    which, *cases = primals
    terms = [lax.select_n(which, *column[1:]) for column in zip(*series)]
    return lax.select_n(which, *cases), terms


jet_rules[elementwise.select_n_p] = _select_n_rule


def _max_min_rule(greater: bool) -> JetRule:
    # The chosen operand's terms; where the two tie, their average (JAX's convention).
    def rule(primals: Sequence[Any], series: Sequence[Series]) -> tuple[Any, Any]:
        x, y = jnp.broadcast_arrays(*primals)
        wins = lax.gt(x, y) if greater else lax.lt(x, y)
        ties = lax.eq(x, y)

        def pick(a: Any, b: Any) -> Any:
            a, b = jnp.broadcast_arrays(a, b)
            return lax.select(ties, (a + b) / 2, lax.select(wins, a, b))

        return lax.select(wins, x, y), [pick(a, b) for a, b in zip(*series)]

    return rule


jet_rules[elementwise.max_p] = _max_min_rule(True)
jet_rules[elementwise.min_p] = _max_min_rule(False)


# ---------------------------------------------------------------------------
# Call-like primitives


def _jit_rule(trace: JetTrace, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    """A jit stays a jit, of the jet of its jaxpr (all series passed in and out, zeros included)."""
    order = trace.order
    pairs = [trace.to_primal_terms(x) for x in args]
    primals = [p for p, _ in pairs]
    closed = params["jaxpr"]
    n = len(primals)

    def jet_of_body(*flat: Any) -> list[Any]:
        ps = flat[:n]
        ss = [list(flat[n + i * order : n + (i + 1) * order]) for i in range(n)]
        outs, out_series = jet_flat(functools.partial(eval_closed_jaxpr, closed), ps, ss, order)
        return [*outs, *itertools.chain.from_iterable(out_series)]

    with set_current_trace(trace.parent):
        series = [_zeros_of(p, order) if s is zero_series else s for p, s in pairs]
        flat_in = [*primals, *itertools.chain.from_iterable(series)]
        jet_closed, _ = trace_to_jaxpr(jet_of_body, [get_aval(x) for x in flat_in])
        jet_closed, consts = hoist_tracer_consts(jet_closed)
        outs = calls.jit_p.bind(*consts, *flat_in, **{**params, "jaxpr": jet_closed})
    n_out = len(closed.out_avals)
    out_series = [list(outs[n_out + i * order : n_out + (i + 1) * order]) for i in range(n_out)]
    return [trace.wrap(p, s) for p, s in zip(outs[:n_out], out_series)]


def _custom_call_rule(trace: JetTrace, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    # A staged custom_jvp / custom_vjp call (in a jit's jaxpr): its body, as for a direct call.
    with set_current_trace(trace):
        return eval_closed_jaxpr(params["call_jaxpr"], *args)


_trace_rules[calls.jit_p] = _jit_rule
_trace_rules[calls.custom_jvp_call_p] = _custom_call_rule
_trace_rules[calls.custom_vjp_call_p] = _custom_call_rule
del _p, _name, _comp
