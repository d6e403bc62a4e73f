"""Random programs: well-typed jaxprs from a primitive vocabulary, and nested transformations.

``random_jaxprs(...)`` is a hypothesis strategy of ``RandomProgram``: a jaxpr
of a few equations, each a primitive drawn from the vocabulary, whose
operands are fresh inputs or earlier results of the same type. A result
feeds later equations only when every conforming backend computes it bit for
bit (integer results, and floating results of the primitives the tolerance
policy calls exact, from such operands): a result allowed an error of a few
ulps ends its chain, because fed into a step function (``floor``, a
comparison) that error could legitimately change the answer. So the
outputs of a random program on any two conforming backends agree within the
program tolerance (``tolerances.compare_program``).

``nested_programs(...)`` is a strategy of ``NestedProgram``: a small smooth
function of one float64 vector wrapped in up to three transformations
drawn from ``jit``, ``vmap``, ``jvp``, ``grad`` and ``cond``, in any order.
``NestedProgram.plain()`` is its meaning without transformations: jit is
the identity, vmap a Python loop, jvp and grad central finite differences
(step 1e-3, in float64), cond a Python ``if``. ``run_nested`` compiles the
staged program on a backend and compares it with the plain meaning computed
eagerly on the reference backend.

``assert_backends_agree(f, *args)`` runs ``jit(f)`` on several backends and
raises AssertionError when one disagrees with the reference.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

import minijax
import minijax.numpy as jnp
from minijax import lax, tree_util
from minijax.backend import Backend, backend_names
from minijax.config import config_context, enable_x64
from minijax.core import ShapedArray, shape_size
from minijax.jaxpr import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Var
from minijax.testing.cases import Case
from minijax.testing.checks import Check, Compiled, Outcome, backend_named, family
from minijax.testing.defaults import TRANSFORMS
from minijax.testing.laws import as_function
from minijax.testing.samplers import SAMPLERS, sampled_primitive_names
from minijax.testing.samplers_elementwise import ACCURACY_NAMES, BINARY_DOMAINS, UNARY_DOMAINS
from minijax.testing.tolerances import BOUND_OF, compare_program, tolerance

NDArray = np.ndarray[Any, Any]
Values = Callable[[np.random.Generator], NDArray]


# ---------------------------------------------------------------------------
# Random well-typed jaxprs


def default_vocabulary() -> tuple[str, ...]:
    """Every sampled primitive except the linalg family (decompositions of arbitrary values are ill-posed)."""
    return tuple(n for n in sampled_primitive_names() if family(n) != "linalg")


@dataclasses.dataclass(frozen=True)
class RandomProgram:
    """A random jaxpr (no constants) and a maker of its input values."""

    closed: ClosedJaxpr
    makers: tuple[Values, ...] = dataclasses.field(repr=False)

    def args(self, rng: np.random.Generator) -> list[NDArray]:
        return [np.asarray(make(rng)) for make in self.makers]

    def __repr__(self) -> str:
        return f"RandomProgram(\n{self.closed}\n)"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # what hypothesis prints for a failing example
        printer.text(repr(self))


def _exact_result(name: str, aval: ShapedArray) -> bool:
    return name not in BOUND_OF and tolerance(name, aval.dtype).exact


class _Builder:
    """The equations drawn so far, and which results later equations may read."""

    def __init__(self) -> None:
        self.invars: list[Var] = []
        self.makers: list[Values] = []
        self.eqns: list[JaxprEqn] = []
        self.reusable: list[Var] = []  # inputs, and results every conforming backend computes exactly
        self.read: set[Var] = set()

    def fresh(self, aval: ShapedArray, make: Values) -> Var:
        v = Var(aval)
        self.invars.append(v)
        self.makers.append(make)
        self.reusable.append(v)
        return v

    def candidates(self, aval: ShapedArray) -> list[Var]:
        return [v for v in self.reusable if v.aval.shape == aval.shape and v.aval.dtype == aval.dtype]

    def operand(self, draw: st.DrawFn, aval: ShapedArray, make: Values) -> Var:
        found = self.candidates(aval)
        if found and draw(st.integers(0, 3)) > 0:  # reuse three times in four
            return found[draw(st.integers(0, len(found) - 1))]
        return self.fresh(aval, make)

    def add(self, name: str, params: dict[str, Any], operands: list[Var]) -> None:
        prim = SAMPLERS[name].prim
        out = prim.abstract_eval(*[v.aval for v in operands], **params)
        outs = [Var(a) for a in (out if prim.multiple_results else [out])]
        atoms: list[Atom] = list(operands)
        self.eqns.append(JaxprEqn(atoms, outs, prim, params))
        self.read.update(operands)
        if all(v in self.reusable for v in operands):
            self.reusable.extend(v for v in outs if _exact_result(name, v.aval))

    def program(self) -> RandomProgram:
        outs = [v for e in self.eqns for v in e.outvars if v not in self.read]
        jaxpr = Jaxpr([], self.invars, outs, self.eqns)
        return RandomProgram(ClosedJaxpr(jaxpr, []), tuple(self.makers))


def _case_values(case: Case, position: int) -> Values:
    return lambda rng: np.asarray(case.args(rng)[position])


def _domain_values(values: Any, aval: ShapedArray) -> Values:
    return lambda rng: np.asarray(values(rng, aval.shape, aval.dtype))


def _add_elementwise(b: _Builder, draw: st.DrawFn, name: str, dtype: np.dtype[Any]) -> bool:
    """Unary and binary elementwise primitives read any earlier exact value of the dtype."""
    pool = [v for v in b.reusable if v.aval.dtype == dtype]
    if not pool:
        return False
    x = pool[draw(st.integers(0, len(pool) - 1), label="operand")]
    params: dict[str, Any] = {"accuracy": None} if name in ACCURACY_NAMES else {}
    if name in UNARY_DOMAINS:
        b.add(name, params, [x])
        return True
    y_values = BINARY_DOMAINS[name][2]
    y = b.operand(draw, x.aval, _domain_values(y_values, x.aval))
    b.add(name, params, [x, y])
    return True


def random_jaxprs(
    vocabulary: Sequence[str] | None = None,
    dtype: Any = None,
    min_eqns: int = 1,
    max_eqns: int = 6,
) -> st.SearchStrategy[RandomProgram]:
    """Random well-typed jaxprs of ``min_eqns`` to ``max_eqns`` equations (see the module doc).

    ``vocabulary``: primitive names with samplers (default ``default_vocabulary()``);
    ``dtype``: the dtype the cases are drawn in (default: float32 or int32).
    Build it inside ``enable_x64`` for 64-bit dtypes.
    """
    names = tuple(vocabulary) if vocabulary is not None else default_vocabulary()
    unknown = [n for n in names if n not in SAMPLERS]
    if unknown:
        raise ValueError(f"random_jaxprs: no sampler for {unknown}; the vocabulary takes sampled primitives")
    if not 1 <= min_eqns <= max_eqns:
        raise ValueError(f"random_jaxprs: need 1 <= min_eqns <= max_eqns, got {min_eqns} and {max_eqns}")

    @st.composite
    def draw_program(draw: st.DrawFn) -> RandomProgram:
        dt = np.dtype(dtype) if dtype is not None else draw(st.sampled_from([np.dtype(np.float32), np.dtype(np.int32)]))
        usable = [n for n in names if SAMPLERS[n].accepts(dt)]
        if not usable:
            raise ValueError(f"random_jaxprs: no primitive of the vocabulary takes {dt.name}")
        b = _Builder()
        for _ in range(draw(st.integers(min_eqns, max_eqns), label="equations")):
            name = draw(st.sampled_from(usable), label="primitive")
            if (name in UNARY_DOMAINS or name in BINARY_DOMAINS) and draw(st.booleans()):
                if _add_elementwise(b, draw, name, dt):
                    continue
            case = draw(SAMPLERS[name].cases(dt), label="case")
            operands = [b.operand(draw, aval, _case_values(case, i)) for i, aval in enumerate(case.avals)]
            b.add(name, dict(case.params), operands)
        return b.program()

    return draw_program()


# ---------------------------------------------------------------------------
# Nested transformations

DERIVATIVES = ("jvp", "grad")
STEP = 1e-3  # the finite-difference step of the plain meaning (float64)
# Normwise tolerance of a nested program by its number of derivative transformations.
NESTED_RTOL = (1e-10, 1e-5, 1e-4, 1e-3)


def finite_difference_noise(transforms: Sequence[str], base: Callable[[NDArray], NDArray], x: NDArray) -> float:
    """A bound on the rounding error of ``plain``'s nested central differences at ``x``.

    Each of d differences divides the rounding errors of the level below by its
    step, so the plain meaning is off by about eps * F / STEP**d whatever the
    true value: F the size of the values differenced (the base function's, times
    the number of elements each grad sums, doubled by cond). Normwise, an exact
    derivative of 0 (the third of a square) met a reference of pure noise
    (-2.8e-8 with STEP 1e-3) and was refused; this absolute term admits it.
    The factor 2**d is the error bound of the 2**d function values each
    nested difference combines.
    """
    depth = sum(t in DERIVATIVES for t in transforms)
    if not depth:
        return 0.0
    rows = np.reshape(x, (-1, x.shape[-1]))
    magnitude = max(float(np.max(np.abs(base(r)), initial=0.0)) for r in rows)
    shape = x.shape
    for t in transforms:
        if t == "vmap":
            shape = shape[1:]
        elif t == "grad":
            magnitude *= shape_size(shape)
        elif t == "cond":
            magnitude *= 2.0
    return float(2**depth * np.finfo(np.float64).eps * magnitude / STEP**depth)


def truncation_error(transforms: Sequence[str], base: Callable[[NDArray], NDArray], x: NDArray, want: NDArray) -> float:
    """A bound on the truncation error of ``plain``'s central differences at ``x``.

    A central difference is off by about STEP**2 times the third derivative over
    6, small next to the derivative unless the derivative itself is near 0: jvp
    of cos(0.5 tanh(x) + 0.25) at -0.539 is -0.0012720, and its difference with
    STEP 1e-3 is 4.8e-8 away (3.7e-5 of it, beyond the relative tolerance). The
    same differences at twice the step are off by four times as much, so their
    distance from ``want`` is about three times ``want``'s error: it bounds it.
    """
    if not any(t in DERIVATIVES for t in transforms):
        return 0.0
    coarse = plain(transforms, base, 2 * STEP)(x)
    return float(np.max(np.abs(np.asarray(coarse, np.float64) - np.asarray(want, np.float64)), initial=0.0))


def _base_ops() -> dict[str, Callable[[Any], Any]]:
    """Smooth maps of a vector to a vector of the same shape, defined on the whole real line."""
    return {
        "sin": lax.sin,
        "cos": lax.cos,
        "tanh": lax.tanh,
        "logistic": lax.logistic,
        "atan": lax.atan,
        "square": lambda x: x * x,
        "affine": lambda x: 0.5 * x + 0.25,
        "sum": lambda x: x + 0.1 * jnp.sum(x * x),
        "rev": lambda x: x * lax.rev(x, (x.ndim - 1,)),
    }


BASE_OPS = tuple(_base_ops())


def base_jaxpr(ops: Sequence[str], n: int) -> ClosedJaxpr:
    """The jaxpr of the composition of ``ops`` (first applied first) on a float64 vector of size ``n``."""
    table = _base_ops()

    def f(x: Any) -> Any:
        for op in ops:
            x = table[op](x)
        return x

    with enable_x64(True):
        closed: ClosedJaxpr = minijax.make_jaxpr(f)(np.zeros(n, np.float64))
    return closed


def _tangent(shape: tuple[int, ...]) -> NDArray:
    size = shape_size(shape)
    return np.asarray(np.cos(np.arange(size) * 1.3 + 0.5).reshape(shape))


def _first(x: Any) -> Any:
    return jnp.reshape(x, (-1,))[0]


def transformed(transforms: Sequence[str], base: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``transforms[0](transforms[1](...(base)))`` with minijax's transformations."""
    if not transforms:
        return base
    t, inner = transforms[0], transformed(transforms[1:], base)
    if t == "jit":
        jitted: Callable[[Any], Any] = minijax.jit(inner)
        return jitted
    if t == "vmap":
        return minijax.vmap(inner)
    if t == "jvp":
        return lambda x: minijax.jvp(inner, (x,), (_tangent(np.shape(x)),))[1]
    if t == "grad":
        return minijax.grad(lambda x: jnp.sum(inner(x)))
    if t == "cond":
        return lambda x: lax.cond(_first(x) > 0, inner, lambda v: inner(v) * 2.0, x)
    raise ValueError(f"unknown transformation {t!r}; the transformations are {list(TRANSFORMS)}")


def plain(transforms: Sequence[str], base: Callable[[NDArray], NDArray], step: float = STEP) -> Callable[[NDArray], NDArray]:
    """The plain meaning of the same nesting: identity, loops, finite differences (of ``step``), ``if``."""
    if not transforms:
        return base
    t, inner = transforms[0], plain(transforms[1:], base, step)
    if t == "jit":
        return inner
    if t == "vmap":
        return lambda x: np.stack([inner(x[i]) for i in range(x.shape[0])])
    if t == "jvp":
        return lambda x: (inner(x + step * _tangent(x.shape)) - inner(x - step * _tangent(x.shape))) / (2 * step)

    if t == "grad":

        def gradient(x: NDArray) -> NDArray:
            g = np.zeros(x.shape)
            for i in np.ndindex(*x.shape):
                e = np.zeros(x.shape)
                e[i] = step
                g[i] = (np.sum(inner(x + e)) - np.sum(inner(x - e))) / (2 * step)
            return g

        return gradient
    if t == "cond":
        return lambda x: inner(x) if x.reshape(-1)[0] > 0 else inner(x) * 2.0
    raise ValueError(f"unknown transformation {t!r}; the transformations are {list(TRANSFORMS)}")


@dataclasses.dataclass(frozen=True)
class NestedProgram:
    """A base function (float64 vector -> vector), transformations (outermost first) and one input."""

    transforms: tuple[str, ...]
    base_ops: tuple[str, ...]
    size: int  # the base function's vector size
    batch_sizes: tuple[int, ...]  # one per vmap, outermost first
    x: NDArray = dataclasses.field(repr=False)

    def base(self) -> ClosedJaxpr:
        return base_jaxpr(self.base_ops, self.size)

    def check(self) -> Check:
        return Check("nested", " ".join(self.transforms) or "identity", "float64", self.base(), [self.x], True,
                     {"transforms": list(self.transforms)})  # fmt: skip

    def __repr__(self) -> str:
        nesting = "(".join(self.transforms) + ("(" if self.transforms else "") + "f" + ")" * len(self.transforms)
        return f"NestedProgram({nesting}, f = {' then '.join(self.base_ops)} on f64[{self.size}], x: {self.x.shape})"


def input_shape(transforms: Sequence[str], size: int, batch_sizes: Sequence[int]) -> tuple[int, ...]:
    """Each vmap (outermost first) adds a leading axis in front of what its inner function takes."""
    return (*batch_sizes, size)


def nested_programs(max_depth: int = 3) -> st.SearchStrategy[NestedProgram]:
    """Nestings of up to ``max_depth`` transformations around a small smooth base function."""

    @st.composite
    def draw_nested(draw: st.DrawFn) -> NestedProgram:
        transforms = tuple(draw(st.lists(st.sampled_from(TRANSFORMS), max_size=max_depth), label="transforms"))
        ops = tuple(draw(st.lists(st.sampled_from(BASE_OPS), min_size=1, max_size=3), label="base"))
        size = draw(st.integers(1, 3), label="size")
        batches = tuple(draw(st.integers(1, 3), label="batch") for t in transforms if t == "vmap")
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
        shape = input_shape(transforms, size, batches)
        # |x| in [0.3, 1.5]: cond's predicate (the first element's sign) is never within a step of flipping.
        x = np.where(rng.random(shape) < 0.5, -1.0, 1.0) * rng.uniform(0.3, 1.5, shape)
        return NestedProgram(transforms, ops, size, batches, x)

    return draw_nested()


def run_nested(check: Check, backend: Backend, reference: Backend) -> Outcome:
    """The nested program staged and compiled on ``backend`` against its plain meaning on ``reference``."""
    transforms = [str(t) for t in check.options["transforms"]]
    f = as_function(check.jaxpr)
    program = transformed(transforms, lambda x: f(x)[0])
    (x,) = check.args
    with enable_x64(True):
        got = Compiled(backend, minijax.make_jaxpr(program)(x))(x)
        with config_context(minijax_backend=reference.name):
            base = lambda v: np.asarray(f(np.asarray(v, np.float64))[0], np.float64)  # noqa: E731
            want = plain(transforms, base)(x)
            noise = finite_difference_noise(transforms, base, x) + truncation_error(transforms, base, x, want)
    depth = sum(t in DERIVATIVES for t in transforms)
    rtol = NESTED_RTOL[min(depth, len(NESTED_RTOL) - 1)]
    same = compare_program(got, [np.asarray(want, np.float64)], rtol=rtol, atol=noise)
    if not same.ok:
        return Outcome("fail", same.worst_ulps, f"{' of '.join(transforms) or 'f'} differs from its plain meaning: {same.detail}")
    return Outcome("pass", same.worst_ulps)


# ---------------------------------------------------------------------------
# Backends against each other


def assert_backends_agree(
    f: Callable[..., Any],
    *args: Any,
    backends: Sequence[str] | None = None,
    reference: str = "numpy",
    rtol: float | None = None,
) -> None:
    """Run ``jit(f, backend=b)(*args)`` on each backend and compare with the reference's outputs.

    ``backends``: names (default: every installed backend that loads).
    Integer and boolean outputs must be equal; floating ones agree within
    ``rtol`` normwise (default: ``tolerances.PROGRAM_RTOL`` by dtype).
    Raises AssertionError naming the backend, the output leaf and the first
    element that disagrees.
    """
    backend_named(reference)
    names = list(backends) if backends is not None else _loadable_backends()
    for name in names:
        backend_named(name)
    want_tree = minijax.jit(f, backend=reference)(*args)
    want, tree = tree_util.tree_flatten(want_tree)
    for name in names:
        if name == reference:
            continue
        got, got_tree = tree_util.tree_flatten(minijax.jit(f, backend=name)(*args))
        if got_tree != tree:
            raise AssertionError(f"assert_backends_agree: on {name!r} the outputs are {got_tree}, on {reference!r} {tree}")
        same = compare_program([np.asarray(g) for g in got], [np.asarray(w) for w in want], rtol)
        if not same.ok:
            raise AssertionError(f"assert_backends_agree: {name!r} disagrees with {reference!r}: {same.detail}")


def _loadable_backends() -> list[str]:
    found = []
    for name in backend_names():
        try:
            backend_named(name)
        except Exception:  # a backend that cannot load here is not compared
            continue
        found.append(name)
    return found


def random_program_check(program: RandomProgram, rng: np.random.Generator, dtype: str, x64: bool) -> Check:
    """A program check of a random jaxpr on inputs drawn with ``rng``."""
    return Check("program", "random jaxpr", dtype, program.closed, program.args(rng), x64)


__all__ = [
    "BASE_OPS",
    "NESTED_RTOL",
    "finite_difference_noise",
    "truncation_error",
    "STEP",
    "TRANSFORMS",
    "NestedProgram",
    "RandomProgram",
    "assert_backends_agree",
    "base_jaxpr",
    "default_vocabulary",
    "nested_programs",
    "plain",
    "random_jaxprs",
    "random_program_check",
    "run_nested",
    "transformed",
]
