"""The series and continued fractions behind the ``special`` primitives, written once.

Both backends evaluate these same formulas: the NumPy reference in float64
(``backends/minijax_numpy/special.py``), the XLA backend in the operand's
dtype as a function of lax ops (``backends/minijax_xla/special.py``), as JAX
lowers the primitives that XLA has no op for. Each function takes ``ops``, a
small namespace that gives the elementwise functions and a ``loop`` (a Python
``while`` for NumPy, ``lax.while_loop`` for XLA); arithmetic and comparisons
are the operands' own operators.

``ops`` provides: ``where, exp, log, log1p, abs, sqrt, isnan, lgamma,
digamma, full_like(x, value), any(mask)`` and ``loop(cond, body, state)``.
"""

from __future__ import annotations

from typing import Any

# The largest number of terms any loop below takes. The series and fractions
# converge in O(sqrt(a)) steps where they are used, so this bounds only inputs
# far outside float32's useful range (a ~ 1e6).
MAX_ITERATIONS = 2000


def _active_loop(ops: Any, enabled: Any, state: tuple[Any, ...], step: Any, eps: float) -> tuple[Any, ...]:
    """Run ``step(n, state) -> (state, change)`` while some enabled element's relative change
    exceeds ``eps``; an element stops updating once its change is small (or it is not enabled)."""

    def cond(carry: tuple[Any, ...]) -> Any:
        n, active, *_ = carry
        return ops.any(active) & (n < MAX_ITERATIONS)

    def body(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        n, active, *old = carry
        new, change = step(n + 1, tuple(old))
        kept = tuple(ops.where(active, v, o) for v, o in zip(new, old))
        return (n + 1, active & (change > eps), *kept)

    _, _, *final = ops.loop(cond, body, (0, enabled, *state))
    return tuple(final)


def _lower_series(ops: Any, a: Any, x: Any, enabled: Any, eps: float) -> tuple[Any, Any]:
    """S = sum_n x^n / ((a+1)...(a+n)) and dS/da, so that P(a, x) = x^a e^-x / Gamma(a+1) * S."""
    one = ops.full_like(a, 1.0)
    zero = ops.full_like(a, 0.0)

    def step(n: Any, state: tuple[Any, ...]) -> tuple[tuple[Any, ...], Any]:
        term, dterm, total, dtotal = state
        ratio = x / (a + n)
        # d/da of term * x/(a+n): the product rule, with d(x/(a+n))/da = -ratio/(a+n).
        dterm = dterm * ratio - term * ratio / (a + n)
        term = term * ratio
        total, dtotal = total + term, dtotal + dterm
        change = ops.where(total > 0, term / total, zero)
        dchange = ops.where(dtotal != 0, ops.abs(dterm / dtotal), zero)
        return (term, dterm, total, dtotal), ops.where(dchange > change, dchange, change)

    _, _, total, dtotal = _active_loop(ops, enabled, (one, zero, one, zero), step, eps)
    return total, dtotal


def _upper_fraction(ops: Any, a: Any, x: Any, enabled: Any, eps: float) -> tuple[Any, Any]:
    """F and dF/da, F = 1/(x+1-a - 1(1-a)/(x+3-a - 2(2-a)/(x+5-a - ...))), so that
    Q(a, x) = x^a e^-x / Gamma(a) * F (Legendre's continued fraction, DLMF 8.9.2).

    Evaluated by the forward recurrences of the convergents p/q, carrying their
    derivatives in a; all four are rescaled by |q| each step to stay in range."""
    zero, one = ops.full_like(a, 0.0), ops.full_like(a, 1.0)
    # Convergents after the first partial fraction 1/b0: p1 = 1, q1 = b0 (p0, q0 = 0, 1), with
    # their derivatives (dq1 = -1); all divided by b0 (> 0 where the fraction is used), so
    # that a huge x cannot overflow the first step.
    b0 = x + 1.0 - a
    r = one / b0
    state = (r, one, zero, r, zero, -r, zero, zero, r, r * r)

    def step(n: Any, state: tuple[Any, ...]) -> tuple[tuple[Any, ...], Any]:
        p, q, p_prev, q_prev, dp, dq, dp_prev, dq_prev, f, df = state
        an = -n * (n - a)  # partial numerator, d/da = n
        bn = x + (2.0 * n + 1.0) - a  # partial denominator, d/da = -1
        p_new = bn * p + an * p_prev
        q_new = bn * q + an * q_prev
        dp_new = -p + bn * dp + n * p_prev + an * dp_prev
        dq_new = -q + bn * dq + n * q_prev + an * dq_prev
        scale = ops.where(q_new != 0, 1.0 / ops.abs(q_new), one)
        p_new, q_new, dp_new, dq_new = (v * scale for v in (p_new, q_new, dp_new, dq_new))
        p, q, dp, dq = (v * scale for v in (p, q, dp, dq))
        f_new = p_new / q_new
        df_new = (dp_new * q_new - p_new * dq_new) / (q_new * q_new)
        change = ops.abs(f_new - f) / ops.abs(f_new)
        dchange = ops.where(df_new != 0, ops.abs((df_new - df) / df_new), zero)
        return (p_new, q_new, p, q, dp_new, dq_new, dp, dq, f_new, df_new), ops.where(dchange > change, dchange, change)

    *_, f, df = _active_loop(ops, enabled, state, step, eps)
    return f, df


def _incomplete_gamma(ops: Any, a: Any, x: Any, eps: float, want: str) -> Any:
    """P(a, x), Q(a, x) or dP/da (``want`` = "p", "q", "dp_da") for arrays of one shape."""
    nan = ops.full_like(a, float("nan"))
    zero, one = ops.full_like(a, 0.0), ops.full_like(a, 1.0)
    is_nan = ops.isnan(a) | ops.isnan(x)
    # The series where it converges fast (x < a + 1), the fraction elsewhere (Numerical Recipes' split).
    use_series = x < a + 1.0
    safe_x = ops.where((x > 0) & (x < float("inf")), x, one)
    safe_a = ops.where(a > 0, a, one)
    enabled = (x > 0) & (a > 0) & (x < float("inf")) & ~is_nan
    log_x = ops.log(safe_x)
    log_prefix = safe_a * log_x - safe_x - ops.lgamma(safe_a)  # log(x^a e^-x / Gamma(a))
    prefix = ops.exp(log_prefix)
    s, ds = _lower_series(ops, safe_a, safe_x, enabled & use_series, eps)
    f, df = _upper_fraction(ops, safe_a, safe_x, enabled & ~use_series, eps)
    p_series = prefix * s / safe_a
    q_fraction = prefix * f
    if want == "dp_da":
        # d/da log(x^a e^-x / Gamma(a+1)) = log x - digamma(a+1); likewise with Gamma(a).
        dp_series = p_series * (log_x - ops.digamma(safe_a + 1.0)) + prefix * ds / safe_a
        dq_fraction = q_fraction * (log_x - ops.digamma(safe_a)) + prefix * df
        out = ops.where(use_series, dp_series, -dq_fraction)
        out = ops.where(x == 0, zero, out)
        return ops.where((x < 0) | (a <= 0) | (x == float("inf")) | (a == float("inf")) | is_nan, nan, out)
    # At a == 0 the limits are P = 1, Q = 0 for x > 0; JAX's P there is NaN below x = 1
    # (its series divides 0 by a), which is kept so that the values agree.
    a_zero = a == 0
    if want == "p":
        out = ops.where(use_series, p_series, 1.0 - q_fraction)
        out = ops.where(x == 0, zero, out)
        out = ops.where((x == float("inf")) | (a_zero & (x >= 1)), one, out)
        undefined = a_zero & (x < 1)
    else:
        out = ops.where(use_series, 1.0 - p_series, q_fraction)
        out = ops.where(x == 0, one, out)
        out = ops.where((x == float("inf")) | (a_zero & (x > 0)), zero, out)
        undefined = a_zero & (x == 0)
    return ops.where((x < 0) | (a < 0) | (a == float("inf")) | undefined | is_nan, nan, out)


def igamma(ops: Any, a: Any, x: Any, eps: float) -> Any:
    """The regularized lower incomplete gamma function P(a, x)."""
    return _incomplete_gamma(ops, a, x, eps, "p")


def igammac(ops: Any, a: Any, x: Any, eps: float) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _incomplete_gamma(ops, a, x, eps, "q")


def igamma_grad_a(ops: Any, a: Any, x: Any, eps: float) -> Any:
    """dP(a, x)/da."""
    return _incomplete_gamma(ops, a, x, eps, "dp_da")


def betainc(ops: Any, a: Any, b: Any, x: Any, eps: float, tiny: float) -> Any:
    """The regularized incomplete beta function I_x(a, b).

    The continued fraction of DLMF 8.17.22 (modified Lentz), on I_x(a, b) where
    x < (a+1)/(a+b+2) and on 1 - I_{1-x}(b, a) elsewhere, where it converges fast."""
    nan, zero, one = ops.full_like(a, float("nan")), ops.full_like(a, 0.0), ops.full_like(a, 1.0)
    swap = x >= (a + 1.0) / (a + b + 2.0)
    aa, bb, xx = ops.where(swap, b, a), ops.where(swap, a, b), ops.where(swap, 1.0 - x, x)
    inside = (x > 0) & (x < 1) & (a > 0) & (b > 0) & (a < float("inf")) & (b < float("inf"))
    aa, bb, xx = ops.where(inside, aa, one), ops.where(inside, bb, one), ops.where(inside, xx, 0.5 * one)

    def clamp(v: Any) -> Any:  # Lentz's guard against a zero denominator
        return ops.where(ops.abs(v) < tiny, tiny * one, v)

    d0 = 1.0 / clamp(1.0 - (aa + bb) * xx / (aa + 1.0))

    def step(n: Any, state: tuple[Any, ...]) -> tuple[tuple[Any, ...], Any]:
        c, d, h = state
        m = n * 1.0
        # The two partial numerators of the m-th pair: d_{2m} and d_{2m+1}.
        even = m * (bb - m) * xx / ((aa + 2.0 * m - 1.0) * (aa + 2.0 * m))
        odd = -(aa + m) * (aa + bb + m) * xx / ((aa + 2.0 * m) * (aa + 2.0 * m + 1.0))
        d = 1.0 / clamp(1.0 + even * d)
        c = clamp(1.0 + even / c)
        h = h * d * c
        d = 1.0 / clamp(1.0 + odd * d)
        c = clamp(1.0 + odd / c)
        delta = d * c
        return (c, d, h * delta), ops.abs(delta - 1.0)

    _, _, h = _active_loop(ops, inside, (one, d0, d0), step, eps)
    log_front = aa * ops.log(xx) + bb * ops.log1p(-xx) - (ops.lgamma(aa) + ops.lgamma(bb) - ops.lgamma(aa + bb))
    value = ops.exp(log_front) * h / aa
    value = ops.where(swap, 1.0 - value, value)
    # The limits at the edges of the domain, as JAX's lowering gives them.
    a_zero = (a == 0) | (b == float("inf"))
    b_zero = (b == 0) | (a == float("inf"))
    value = ops.where((b_zero & (x != 1)) | (a_zero & (x == 0)), zero, value)
    value = ops.where((a_zero & (x != 0)) | (b_zero & (x == 1)), one, value)
    value = ops.where(~(inside | a_zero | b_zero) & (x == 0), zero, value)
    value = ops.where(~(inside | a_zero | b_zero) & (x == 1), one, value)
    bad = (a < 0) | (b < 0) | (x < 0) | (x > 1) | (a_zero & b_zero) | ops.isnan(a) | ops.isnan(b) | ops.isnan(x)
    return ops.where(bad, nan, value)


def bessel_i0e(ops: Any, x: Any) -> Any:
    """exp(-|x|) I0(x): the power series sum (x^2/4)^k / (k!)^2 for |x| <= 25, the
    asymptotic expansion e^-x I0(x) ~ (2 pi x)^-1/2 sum_k ((2k-1)!!)^2 / (k! (8x)^k) beyond."""
    return _bessel_ie(ops, x, 0)


def bessel_i1e(ops: Any, x: Any) -> Any:
    """exp(-|x|) I1(x), odd in x: the series (x/2) sum (x^2/4)^k / (k! (k+1)!), and the
    asymptotic expansion with the coefficients of order 1."""
    return _bessel_ie(ops, x, 1)


_BESSEL_SERIES_TERMS = 60
_BESSEL_ASYMPTOTIC_TERMS = 24
# Where the series hands over to the asymptotic expansion. The expansion's last (24th) term, about
# its truncation error, is 6e-15 relative at 16 (float64's i1e(-16.54) came out 87 ulps off,
# `--examples 50 --slice 7/8`) and 1e-19 at 25; the series' 60 positive terms still converge there.
_BESSEL_CUT = 25.0


def _bessel_ie(ops: Any, x: Any, order: int) -> Any:
    ax = ops.abs(x)
    small = ops.where(ax <= _BESSEL_CUT, ax, ops.full_like(ax, 1.0))
    large = ops.where(ax > _BESSEL_CUT, ax, ops.full_like(ax, 2 * _BESSEL_CUT))
    # Power series: term_k = (x/2)^(2k+order) / (k! (k+order)!), all positive. A loop rather
    # than unrolled terms: XLA compiles a long chain of operations slowly.
    quarter_sq = small * small / 4.0

    def series_step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        k, term, total = state
        term = term * quarter_sq / (k * (k + order))
        return k + 1, term, total + term

    first = ops.full_like(ax, 1.0) if order == 0 else small / 2.0
    _, _, total = ops.loop(lambda s: s[0] < _BESSEL_SERIES_TERMS, series_step, (1, first, first))
    series = total * ops.exp(-small)
    # Asymptotic: coefficient_j = prod_{i<=j} -(4 order^2 - (2i-1)^2) / (i 8x).
    mu = 4.0 * order * order

    def asymptotic_step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        j, coef, acc = state
        coef = -coef * (mu - (2 * j - 1) * (2 * j - 1)) / (j * 8.0 * large)
        return j + 1, coef, acc + coef

    one = ops.full_like(ax, 1.0)
    _, _, acc = ops.loop(lambda s: s[0] < _BESSEL_ASYMPTOTIC_TERMS, asymptotic_step, (1, one, one))
    # sqrt(2 pi) apart: 2 pi x overflows for x near float64's largest, where the result is ~3e-155.
    asymptotic = acc / (ops.sqrt(large) * 2.5066282746310002)
    out = ops.where(ax <= _BESSEL_CUT, series, asymptotic)
    if order == 1:
        out = ops.where(x < 0, -out, out)
    return ops.where(ops.isnan(x), x, out)
