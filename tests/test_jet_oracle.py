"""jax.experimental.jet against real JAX 0.10.2 (the oracle).

The functions are those JAX's own tests/jet_test.py runs jet on, with its
kinds of inputs (2x3 arrays drawn in each test's limits, three or five
terms, Python scalars), plus jit, grad and custom-rule cases: each gives
JAX's primal and terms (values, dtypes, weak types, output structure). A
primitive JAX's jet has no rule for raises JAX's KeyError. Run where JAX is
installed:
    .venv-oracle/bin/python -m pytest -m oracle tests/test_jet_oracle.py
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

jax_jet = pytest.importorskip("jax.experimental.jet")

import minijax  # noqa: E402
import minijax.experimental.jet  # noqa: E402
import minijax.numpy  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

JAX = SimpleNamespace(jax=jax, jnp=jax.numpy, lax=jax.lax, jet=jax_jet.jet)
MINI = SimpleNamespace(jax=minijax, jnp=minijax.numpy, lax=minijax.lax, jet=minijax.experimental.jet.jet)
Lib = SimpleNamespace

DIMS = (2, 3)


def _unary(lims: tuple[float, float] = (-2.0, 2.0), order: int = 3, seed: int = 0) -> tuple[list[Any], list[list[Any]]]:
    rng = np.random.default_rng(seed)
    x = (rng.random(DIMS) * (lims[1] - lims[0]) + lims[0]).astype(np.float32)
    return [x], [[rng.normal(size=DIMS).astype(np.float32) for _ in range(order)]]


def _binary(lims: Any = (-2.0, 2.0), order: int = 3, seed: int = 1) -> tuple[list[Any], list[list[Any]]]:
    rng = np.random.default_rng(seed)
    x_lims, y_lims = lims if isinstance(lims[0], tuple) else (lims, lims)
    primals = [(rng.random(DIMS) * (hi - lo) + lo).astype(np.float32) for lo, hi in (x_lims, y_lims)]
    return primals, [[rng.normal(size=DIMS).astype(np.float32) for _ in range(order)] for _ in range(2)]


def _n_ary(shapes: list[tuple[int, ...]], order: int = 3, seed: int = 2) -> tuple[list[Any], list[list[Any]]]:
    rng = np.random.default_rng(seed)
    primals = [rng.normal(size=s).astype(np.float32) for s in shapes]
    return primals, [[rng.normal(size=s).astype(np.float32) for _ in range(order)] for s in shapes]


def _scatter_add_case(m: Lib) -> Callable[[Any], Any]:
    # JAX's test_scatter_add (its issue 5365).
    def h(eps: Any) -> Any:
        x = m.jnp.array([1.0, 1.0])
        mu = eps * x

        def F(t: Any) -> Any:
            z = x + t * mu
            return (z[0] ** 5 + z[1] ** 5).sum()

        return m.jax.grad(m.jax.jacfwd(F))(0.0)

    return h


def _conv_case(m: Lib) -> Callable[..., Any]:
    def f(w: Any, b: Any, x: Any) -> Any:
        y = m.lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return y + b

    return f


def _select_inputs() -> tuple[list[Any], list[list[Any]]]:
    rng = np.random.default_rng(3)
    b = rng.random(DIMS) < 0.5
    x, y = (rng.normal(size=DIMS).astype(np.float32) for _ in range(2))
    series = [[rng.normal(size=DIMS).astype(np.float32) for _ in range(3)] for _ in range(3)]
    return [b, x, y], series


Case = tuple[Callable[[Lib], Callable[..., Any]], Callable[[], tuple[list[Any], list[list[Any]]]]]

CASES: dict[str, Case] = {
    # unary_check's functions and limits
    "exp": (lambda m: m.jnp.exp, _unary),
    "neg": (lambda m: m.jnp.negative, _unary),
    "floor": (lambda m: m.jnp.floor, _unary),
    "ceil": (lambda m: m.jnp.ceil, _unary),
    "trunc": (lambda m: m.jnp.trunc, _unary),
    "round": (lambda m: m.lax.round, _unary),
    "sign": (lambda m: m.lax.sign, _unary),
    "log": (lambda m: m.jnp.log, partial(_unary, (0.8, 4.0))),
    "gather": (lambda m: lambda x: x[1:], _unary),
    "reduce_max": (lambda m: lambda x: x.max(axis=1), _unary),
    "reduce_min": (lambda m: lambda x: x.min(axis=1), _unary),
    "all_max": (lambda m: m.jnp.max, _unary),
    "all_min": (lambda m: m.jnp.min, _unary),
    "stop_gradient": (lambda m: m.lax.stop_gradient, _unary),
    "abs": (lambda m: m.jnp.abs, _unary),
    "log1p": (lambda m: m.jnp.log1p, partial(_unary, (0.0, 4.0))),
    "expm1": (lambda m: m.jnp.expm1, _unary),
    "sin": (lambda m: m.jnp.sin, _unary),
    "cos": (lambda m: m.jnp.cos, _unary),
    "sinh": (lambda m: m.jnp.sinh, _unary),
    "cosh": (lambda m: m.jnp.cosh, _unary),
    "tanh": (lambda m: m.jnp.tanh, partial(_unary, (-5.0, 5.0), 5)),
    "logistic": (lambda m: m.lax.logistic, partial(_unary, (-10.0, 10.0), 5)),
    "expit": (lambda m: m.jax.scipy.special.expit, partial(_unary, (-5.0, 5.0), 5)),
    "sqrt": (lambda m: m.jnp.sqrt, partial(_unary, (0.1, 5.0))),
    "rsqrt": (lambda m: m.lax.rsqrt, partial(_unary, (0.1, 5000.0))),
    "asinh": (lambda m: m.lax.asinh, partial(_unary, (-100.0, 100.0))),
    "acosh": (lambda m: m.lax.acosh, partial(_unary, (1.5, 100.0))),
    "atanh": (lambda m: m.lax.atanh, partial(_unary, (-0.9, 0.9))),
    "erf": (lambda m: m.lax.erf, _unary),
    "erfc": (lambda m: m.lax.erfc, _unary),
    "erf_inv": (lambda m: m.lax.erf_inv, partial(_unary, (-0.9, 0.9))),
    "cumsum": (lambda m: m.jnp.cumsum, _unary),
    "cumprod": (lambda m: m.jnp.cumprod, _unary),
    "cummax": (lambda m: partial(m.lax.cummax, axis=0), _unary),
    "cummin": (lambda m: partial(m.lax.cummin, axis=0), _unary),
    "dynamic_slice": (lambda m: partial(m.lax.dynamic_slice, start_indices=(1, 2), slice_sizes=(1, 1)), _unary),
    "dynamic_update_slice": (
        lambda m: partial(m.lax.dynamic_update_slice, start_indices=(1, 2), update=np.arange(6.0).reshape(2, 3)),
        _unary,
    ),
    "copy": (lambda m: m.jnp.array, _unary),
    "square": (lambda m: m.jnp.square, _unary),
    "mean_var": (lambda m: lambda x: m.jnp.var(x, axis=0) + m.jnp.mean(x), _unary),
    "softmax": (lambda m: m.jax.nn.softmax, _unary),
    "logsumexp": (lambda m: m.jax.nn.logsumexp, _unary),
    **{f"int_pow_{p}": (lambda m, p=p: lambda x: x**p, _unary) for p in range(6)},  # type: ignore[misc]
    "int_pow_neg": (lambda m: lambda x: x**-3, partial(_unary, (0.5, 2.0))),
    # binary_check's
    "div": (lambda m: lambda x, y: x / y, partial(_binary, (0.8, 4.0))),
    "rem": (lambda m: m.lax.rem, partial(_binary, (0.8, 4.0))),
    "sub": (lambda m: lambda x, y: x - y, _binary),
    "add": (lambda m: lambda x, y: x + y, _binary),
    "mul": (lambda m: lambda x, y: x * y, _binary),
    "max": (lambda m: m.lax.max, _binary),
    "min": (lambda m: m.lax.min, _binary),
    "pow": (lambda m: lambda x, y: x**y, partial(_binary, ((0.2, 5.0), (-5.0, 5.0)))),
    "atan2": (lambda m: m.lax.atan2, partial(_binary, (-40.0, 40.0))),
    # the others
    "dot": (lambda m: m.jnp.dot, partial(_n_ary, [(2, 3), (3, 4)])),
    "conv": (_conv_case, partial(_n_ary, [(2, 2, 1, 3), (3,), (1, 5, 5, 1)])),
    "clamp": (lambda m: m.lax.clamp, partial(_n_ary, [DIMS, DIMS, DIMS])),
    "select": (lambda m: m.jnp.where, _select_inputs),
    "stack": (lambda m: lambda *xs: m.jnp.stack(xs, axis=1), partial(_n_ary, [DIMS, DIMS])),
    "process_call": (lambda m: lambda x: m.jax.jit(lambda y: y * y)(x), _unary),
    "post_process_call": (lambda m: lambda x: m.jax.jit(lambda y: x * y)(2.0), _unary),
    "jit_of_grad": (lambda m: m.jax.jit(m.jax.grad(lambda x: m.jnp.sum(m.jnp.sin(x) * x))), _unary),
    "scatter_add": (_scatter_add_case, lambda: ([0.0], [[1.0, 2.0, 3.0]])),
    "python_scalars": (lambda m: lambda x: x * 2.0 + 1.0, lambda: ([3.0], [[1.0, 2.0]])),
    "pytree_output": (lambda m: lambda x: {"a": x, "b": [x * x, 3.0]}, lambda: ([np.float32(0.5)], [[1.0, 2.0]])),
    "order_zero": (lambda m: m.jnp.sin, lambda: ([np.float32(0.5)], [[]])),
}

# JAX's own tolerances where float32 rounding of long recurrences (or of
# log(x + sqrt(x^2 + 1)) for large |x|) tells the two apart.
TOLERANCES: dict[str, float] = {
    "pow": 1e-3, "tanh": 1e-3, "logistic": 1e-3, "expit": 1e-3, "scatter_add": 1e-3, "asinh": 1e-3, "acosh": 1e-3,
}  # fmt: skip


def _leaves(tree: Any, lib: Lib) -> list[Any]:
    return lib.jax.tree_util.tree_leaves(tree)


def _describe(x: Any) -> tuple[str, bool]:
    if isinstance(x, (float, int)):
        return type(x).__name__, True
    return str(np.asarray(x).dtype), bool(getattr(x, "weak_type", False))


@pytest.mark.parametrize("name", sorted(CASES))
def test_jet_equals_jaxs(name: str) -> None:
    make, inputs = CASES[name]
    primals, series = inputs()
    want_y, want_terms = JAX.jet(make(JAX), tuple(primals), tuple(series))
    got_y, got_terms = MINI.jet(make(MINI), tuple(primals), tuple(series))
    assert str(minijax.tree_util.tree_structure((got_y, got_terms))) == str(
        jax.tree_util.tree_structure((want_y, want_terms))
    )
    tol = TOLERANCES.get(name, 2e-5)
    got, want = _leaves((got_y, got_terms), MINI), _leaves((want_y, want_terms), JAX)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol, err_msg=f"leaf {i}")
        assert _describe(g) == _describe(w), f"leaf {i}"


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("tan", lambda m: m.jnp.tan),
        ("lgamma", lambda m: m.lax.lgamma),
        ("digamma", lambda m: m.lax.digamma),
        ("prod", lambda m: m.jnp.prod),
        ("argmax", lambda m: lambda x: m.jnp.argmax(x) + x[0]),
        ("sort", lambda m: m.jnp.sort),
        ("cond", lambda m: lambda x: m.lax.cond(x[0] > 0, m.jnp.sin, m.jnp.cos, x)),
        ("scan", lambda m: lambda x: m.lax.scan(lambda c, _: (c * 2.0, c), x, None, length=3)[0]),
        ("fori_loop", lambda m: lambda x: m.lax.fori_loop(0, 3, lambda i, c: c * 2.0, x)),
        ("while", lambda m: lambda x: m.lax.while_loop(lambda c: c[0] < 3.0, lambda c: c * 2.0, x)),
        ("checkpoint", lambda m: m.jax.checkpoint(m.jnp.sin)),
        ("reduce_precision", lambda m: lambda x: m.lax.reduce_precision(x, 5, 10)),
    ],
)
def test_missing_rule_raises_jaxs_keyerror(name: str, make: Callable[[Lib], Callable[..., Any]]) -> None:
    x = np.array([0.5, 1.5], np.float32)

    def message(m: Lib) -> str:
        with pytest.raises(KeyError) as info:
            m.jet(make(m), (x,), ([np.ones(2, np.float32)] * 2,))
        return str(info.value)

    assert message(MINI) == message(JAX)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (((0.5, 0.5), ((1.0, 2.0), (1.0,))), "jet terms have inconsistent lengths"),
        ((({"a": 0.5},), (({"a": 1.0},),)), "primal value at position 0 is not an array"),
        (((0.5,), ((1.0, [2.0]),)), "term 1 for argument 0 is not an array"),
    ],
)
def test_bad_arguments_raise_jaxs_errors(args: Any, match: str) -> None:
    def message(m: Lib) -> str:
        with pytest.raises(ValueError) as info:
            m.jet(lambda *xs: xs[0], *args)
        return str(info.value)

    assert message(MINI) == message(JAX)
    assert match in message(JAX)


def _custom(m: Lib, kind: str) -> Callable[[Any], Any]:
    """tanh(x) * x with a wrong rule: its terms tell whether the rule or the body ran."""
    body = lambda x: m.jnp.tanh(x) * x  # noqa: E731
    if kind == "custom_jvp":
        f = m.jax.custom_jvp(body)
        f.defjvp(lambda p, t: (body(p[0]), 100.0 * t[0]))
        return f  # type: ignore[no-any-return]
    g = m.jax.custom_vjp(body)
    g.defvjp(lambda x: (body(x), x), lambda r, c: (100.0 * c,))
    return g  # type: ignore[no-any-return]


@pytest.mark.parametrize("kind", ["custom_jvp", "custom_vjp"])
@pytest.mark.parametrize("wrap", ["plain", "jit"])
def test_custom_rule_functions_diverge_from_jax_on_purpose(kind: str, wrap: str) -> None:
    # JAX 0.10.2's jet means to ignore a custom_jvp / custom_vjp rule and
    # differentiate the body (its process_custom_jvp_call says so), but it runs
    # the body on the parent trace, which leaks the jet tracers: an
    # UnexpectedTracerError. minijax does what JAX's code intends: its answer
    # is JAX's jet of the undecorated body (docs/differences.md).
    x = np.array([-0.5, 0.7], np.float32)
    series = ([np.ones(2, np.float32), np.full(2, 0.5, np.float32), np.full(2, -2.0, np.float32)],)

    def wrapped(m: Lib) -> Callable[[Any], Any]:
        f = _custom(m, kind)
        return m.jax.jit(f) if wrap == "jit" else f

    with pytest.raises(jax.errors.UnexpectedTracerError):
        JAX.jet(wrapped(JAX), (x,), series)
    got_y, got_terms = MINI.jet(wrapped(MINI), (x,), series)
    want_y, want_terms = JAX.jet(lambda x: jax.numpy.tanh(x) * x, (x,), series)
    np.testing.assert_allclose(np.asarray(got_y), np.asarray(want_y), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got_terms), np.asarray(want_terms), rtol=1e-5, atol=1e-6)


def test_the_module_has_jaxs_names_for_users() -> None:
    # What code that registers rules or reads the series uses.
    names = {"jet", "jet2", "fact", "jet_rules", "zero_series", "zero_term", "ZeroSeries", "ZeroTerm", "JetTrace",
             "JetTracer", "deflinear", "defzero", "def_deriv", "def_comp", "linear_prop", "zero_prop", "deriv_prop"}  # fmt: skip
    assert names <= set(dir(jax_jet))
    assert names <= set(dir(minijax.experimental.jet))


@pytest.mark.parametrize(
    "make",
    [
        lambda m: lambda x: x if x > 0 else -x,
        lambda m: lambda x: x if m.jnp.float32(1.0) > 0 else -x,
        lambda m: lambda x: x * float(m.jnp.sum(m.jnp.ones(3))),
        lambda m: lambda x: x * int(m.jnp.argmax(m.jnp.arange(3))),
    ],
)
def test_python_control_flow_on_values_inside_raises_jaxs_error(make: Callable[[Lib], Callable[..., Any]]) -> None:
    def error(m: Lib) -> str:
        with pytest.raises(Exception) as info:
            m.jet(make(m), (np.float32(0.5),), ((1.0, 2.0),))
        return type(info.value).__name__

    assert error(MINI) == error(JAX)
