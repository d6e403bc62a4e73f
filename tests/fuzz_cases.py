"""Generators of fuzz cases: valid cases drawn by minijax.testing's samplers, then broken on purpose.

Each strategy returns a ``FuzzCase``: a callable, its arguments, the names an
error message may use for the operation, and (optionally) a NumPy reference.
tests/test_fuzz.py runs them with ``fuzz_support.run_case``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
from hypothesis import assume, strategies as st

import minijax.numpy as jnp
from minijax import dtypes, lax
from minijax.core import Primitive
from minijax.testing import strategies as mst
from minijax.testing.checks import family
from minijax.testing.samplers import SAMPLERS, sampled_primitive_names

NDArray = np.ndarray[Any, Any]
Draw = st.DrawFn


@dataclasses.dataclass
class FuzzCase:
    label: str
    fn: Callable[..., Any]
    args: list[Any]
    names: tuple[str, ...]
    key: Hashable | None = None  # cache key of the jit wrapper (same key, same function)
    reference: Callable[..., Any] | None = None
    require_name: bool = True
    may_be_large: bool = False  # its parameters may ask for a result of gigabytes
    prim: Primitive | None = None
    params: dict[str, Any] = dataclasses.field(default_factory=dict)
    # Only the results' shapes and dtypes are specified (a float outside an integer
    # dtype's range converted to it: JAX too gives one value eagerly, another under jit).
    values_unspecified: bool = False
    program: Any = None  # the ClosedJaxpr the case evaluates, when it is one (fuzz_support.run_case)

    def __repr__(self) -> str:
        shown = ", ".join(_short(a) for a in self.args)
        return f"FuzzCase({self.label}({shown}))"


def _short(x: Any) -> str:
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        return f"{np.asarray(x).dtype}{list(np.shape(x))}={np.array2string(np.asarray(x), threshold=6)}"
    if isinstance(x, (list, tuple)):
        inner = ", ".join(_short(v) for v in x)
        return f"[{inner}]" if isinstance(x, list) else f"({inner})"
    return repr(x)


# 32-bit dtypes (x64 is off in the fuzz) and the small ones.
DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint32, np.float16, np.float32)] + [
    np.dtype(dtypes.bfloat16)
]
SHAPES: list[tuple[int, ...]] = [(), (0,), (1,), (3,), (2, 3), (3, 1), (1, 3), (0, 3), (2, 1, 3), (2, 0)]


def arrays(draw: Draw, dtype: Any = None, shape: tuple[int, ...] | None = None, edges: bool = True) -> NDArray:
    dt = np.dtype(dtype) if dtype is not None else draw(st.sampled_from(DTYPES))
    sh = shape if shape is not None else draw(st.sampled_from(SHAPES))
    return draw(mst.arrays(dt, sh, edges=edges))


# --- primitives: a sampler's valid case, maybe broken ----------------------------------------

# Random primitives keep their own (key) dtypes; linalg decompositions are
# ill-posed on arbitrary values: both are left to their own suites.
_SKIP = {"random_bits", "random_seed", "random_wrap", "random_unwrap", "random_split", "random_fold_in"}
PRIMITIVES = [n for n in sampled_primitive_names() if n not in _SKIP]

LINALG = {n for n in PRIMITIVES if family(n) == "linalg"}
MUTATIONS = ("none", "edges", "edges", "dtype", "shape", "rank0", "empty", "param", "param", "param", "arity")


def _mutate_param(draw: Draw, value: Any) -> Any:
    """A plausible wrong value for a param: off by a little or a lot, the wrong type, or None."""
    if isinstance(value, bool):
        return draw(st.sampled_from([not value, 1, None, "yes"]))
    if isinstance(value, int):
        return draw(st.sampled_from([value + 1, value - 1, -1, -value - 1, value + 7, 2**40, float(value) + 0.5, None, "1"]))
    if isinstance(value, float):
        return draw(st.sampled_from([-value, np.nan, np.inf, 0.0, None, int(value) if np.isfinite(value) else 1]))
    if isinstance(value, tuple) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        options: list[Any] = [value + (0,), value[:-1], tuple(reversed(value)), (), None, tuple(v + 5 for v in value),
                              tuple(-v - 1 for v in value), value + value, tuple(float(v) for v in value)]  # fmt: skip
        if value:
            i = draw(st.integers(0, len(value) - 1))
            options.append(value[:i] + (value[i] + draw(st.sampled_from([1, -1, 3, -10])),) + value[i + 1 :])
        return draw(st.sampled_from(options))
    if isinstance(value, tuple):
        return draw(st.sampled_from([value[:-1], value + value[-1:] if value else (1,), None, ()]))
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return draw(st.sampled_from([*DTYPES, np.dtype(np.float64), np.dtype(np.complex64), "float32", None]))
    if value is None:
        return draw(st.sampled_from([0, -1, (), "x", 1.5]))
    return draw(st.sampled_from([None, 0, -1, "bogus"]))


# Bugs this fuzzing found in primitives other engineers are rewriting (indexing,
# linalg), reported to the lead: their cases are left out until fixed. Each
# entry says what fails; delete it with the fix.
KNOWN_ISSUES: dict[str, Callable[[str, str, dict[str, Any], list[NDArray]], bool]] = {
    # svd's abstract eval and backends disagree on U/V's shapes (RuntimeError from a backend).
    "svd: subset_by_index with full_matrices": lambda name, mutation, params, args: (
        name == "svd" and params.get("subset_by_index") is not None and bool(params.get("compute_uv"))
        and bool(params.get("full_matrices"))),
    # gather accepts slice_sizes larger than the operand (NumPy IndexError, XLA MLIRError);
    # scatter accepts dimension numbers that do not fit its operands (XLA TypeError in lowering).
    "gather/scatter: operands or dimension numbers that do not fit": lambda name, mutation, params, args: (
        (name == "gather" or name.startswith("scatter")) and mutation in ("param", "shape", "empty", "rank0", "arity")),
    # (The random primitives are left out of the primitive cases; in hand-built jaxprs their
    # params are not mutated: random_seed's abstract eval raises AttributeError for impl=None.)
}  # fmt: skip


@st.composite
def primitive_cases(draw: Draw) -> FuzzCase:
    name = draw(st.sampled_from(PRIMITIVES))
    sampler = SAMPLERS[name]
    case = draw(sampler.cases())
    rng = draw(mst.seeds())
    args = [np.asarray(a) for a in case.args(rng)]
    params = dict(case.params)
    mutation = draw(st.sampled_from(MUTATIONS))
    if mutation == "edges" and name in LINALG:
        # Decompositions of NaN/inf/huge matrices are unspecified (in JAX too): values may differ.
        mutation = "none"
    note = mutation
    if mutation == "edges":
        args = [draw(mst.arrays(a.dtype, a.shape)) for a in args]
    elif mutation in ("dtype", "shape", "rank0", "empty") and args:
        i = draw(st.integers(0, len(args) - 1))
        a = args[i]
        if mutation == "dtype":
            new_dtype = draw(st.sampled_from(DTYPES))
            with np.errstate(all="ignore"):
                args[i] = a.astype(new_dtype)
            note = f"operand {i} as {new_dtype.name}"
        elif mutation == "shape":
            new_shape = draw(st.sampled_from(SHAPES))
            args[i] = draw(mst.arrays(a.dtype, new_shape))
            note = f"operand {i} of shape {new_shape}"
        elif mutation == "rank0":
            args[i] = draw(mst.arrays(a.dtype, ()))
            note = f"operand {i} rank 0"
        else:
            shape = list(a.shape) or [0]
            shape[draw(st.integers(0, len(shape) - 1))] = 0
            args[i] = np.zeros(shape, a.dtype)
            note = f"operand {i} of shape {tuple(shape)}"
    elif mutation == "param" and params:
        key = draw(st.sampled_from(sorted(params)))
        params[key] = _mutate_param(draw, params[key])
        note = f"param {key}={params[key]!r}"
    elif mutation == "arity":
        fewer: bool = bool(args) and draw(st.booleans())
        if fewer:
            args = args[:-1]
            note = "one operand fewer"
        else:
            args = [*args, args[-1] if args else np.asarray(1.0, np.float32)]
            note = "one operand more"
    prim = sampler.prim
    assume(not any(is_known(name, mutation, params, args) for is_known in KNOWN_ISSUES.values()))

    def apply(*xs: Any) -> Any:
        return prim.bind(*xs, **params)

    label = f"{name}[{', '.join(f'{k}={v!r}' for k, v in params.items())}] ({note})"
    # Messages name the primitive, possibly with spaces for underscores, or its lax function.
    names = (name, name.replace("_", " "), "scatter" if name.startswith("scatter") else name)
    return FuzzCase(label, apply, args, names, key=(name, repr(params)), prim=prim, params=params)


# --- the public API: jnp and lax functions with ill-typed and edge arguments ---------------------


def axis_values() -> st.SearchStrategy[Any]:
    return st.sampled_from([0, 1, -1, 2, -3, 3, None, (0,), (0, 1), (1, 1), (), 1.5, "0", (0, 5)])


def shape_values() -> st.SearchStrategy[Any]:
    return st.sampled_from([(3,), (1, 3), (3, 1), (-1,), (-1, 3), (-1, -1), (0,), (2, 0), (), (4,), (2, 2), (1.5,), (-2,), 3, None])


def dtype_values() -> st.SearchStrategy[Any]:
    return st.sampled_from([*DTYPES, np.float64, np.int64, "float32", "int8", "complex64", "bogus", None, bool, int, float])


def int_values() -> st.SearchStrategy[Any]:
    return st.sampled_from([0, 1, 2, 3, -1, -4, 7, 2**31, 1.5, None, True])


def scalar_values() -> st.SearchStrategy[Any]:
    return st.sampled_from([0, 1, -1, 2.5, -0.0, float("nan"), float("inf"), True, 2**31 - 1, 2**31, 2**63, 1e300])


SLOTS: dict[str, Callable[[Draw], Any]] = {
    "array": lambda draw: arrays(draw),
    "float": lambda draw: arrays(draw, np.float32),
    "axis": lambda draw: draw(axis_values()),
    "shape": lambda draw: draw(shape_values()),
    "dtype": lambda draw: draw(dtype_values()),
    "int": lambda draw: draw(int_values()),
    "scalar": lambda draw: draw(scalar_values()),
    "value": lambda draw: draw(st.one_of(scalar_values(), st.builds(lambda: None))) if draw(st.booleans()) else arrays(draw),
}


def _np_axis_ok(a: NDArray, axis: Any) -> bool:
    return axis is None or (isinstance(axis, int) and not isinstance(axis, bool) and -a.ndim <= axis < max(a.ndim, 1))


@dataclasses.dataclass(frozen=True)
class Api:
    name: str
    fn: Callable[..., Any]
    slots: tuple[str, ...]
    names: tuple[str, ...] = ()
    # A NumPy computation of the same thing, used on float32 inputs (None: no reference).
    reference: Callable[..., Any] | None = None


def _float_only(*args: Any) -> bool:
    arrays_ = [a for a in args if isinstance(a, np.ndarray)]
    return bool(arrays_) and all(a.dtype == np.float32 for a in arrays_)


def api_table(jnp: Any, lax: Any) -> list[Api]:
    """The API cases, written against ``jnp`` and ``lax`` (minijax's, or JAX's for the oracle test)."""
    return [
        Api("jnp.sum", lambda a, axis: jnp.sum(a, axis=axis), ("array", "axis"), ("sum", "axis"), lambda a, axis: np.sum(a, axis=axis)),
        Api("jnp.max", lambda a, axis: jnp.max(a, axis=axis), ("array", "axis"), ("max", "axis")),
        Api("jnp.mean", lambda a, axis: jnp.mean(a, axis=axis), ("array", "axis"), ("mean", "axis")),
        Api("jnp.argmax", lambda a, axis: jnp.argmax(a, axis=axis), ("array", "axis"), ("argmax", "axis")),
        Api("jnp.cumsum", lambda a, axis: jnp.cumsum(a, axis=axis), ("array", "axis"), ("cumsum", "axis")),
        Api("jnp.sort", lambda a, axis: jnp.sort(a, axis=axis), ("array", "axis"), ("sort", "axis")),
        Api("jnp.reshape", lambda a, s: jnp.reshape(a, s), ("array", "shape"), ("reshape", "shape")),
        Api("jnp.transpose", lambda a, ax: jnp.transpose(a, ax), ("array", "axis"), ("transpose", "axes", "permutation")),
        Api("jnp.broadcast_to", lambda a, s: jnp.broadcast_to(a, s), ("array", "shape"), ("broadcast",)),
        Api("jnp.expand_dims", lambda a, ax: jnp.expand_dims(a, ax), ("array", "axis"), ("expand_dims", "axis")),
        Api("jnp.squeeze", lambda a, ax: jnp.squeeze(a, ax), ("array", "axis"), ("squeeze", "axis")),
        Api("jnp.concatenate", lambda a, b, ax: jnp.concatenate([a, b], axis=ax), ("array", "array", "axis"), ("concatenate", "axis")),
        Api("jnp.stack", lambda a, b, ax: jnp.stack([a, b], axis=ax), ("array", "array", "axis"), ("stack", "axis", "shape")),
        Api("jnp.where", lambda c, a, b: jnp.where(c, a, b), ("array", "array", "array"), ("where", "broadcast", "select")),
        Api("jnp.clip", lambda a, lo, hi: jnp.clip(a, lo, hi), ("array", "value", "value"), ("clip",)),
        Api("jnp.tile", lambda a, r: jnp.tile(a, r), ("array", "int"), ("tile", "reps")),
        Api("jnp.repeat", lambda a, r, ax: jnp.repeat(a, r, axis=ax), ("array", "int", "axis"), ("repeat", "axis")),
        Api("jnp.zeros", lambda s, dt: jnp.zeros(s, dt), ("shape", "dtype"), ("zeros", "shape", "dtype")),
        Api("jnp.full", lambda s, v, dt: jnp.full(s, v, dt), ("shape", "value", "dtype"), ("full", "shape", "dtype")),
        Api("jnp.arange", lambda a, b, c: jnp.arange(a, b, c), ("scalar", "scalar", "scalar"), ("arange",)),
        Api("jnp.linspace", lambda a, b, n: jnp.linspace(a, b, n), ("scalar", "scalar", "int"), ("linspace", "num")),
        Api("jnp.eye", lambda n, m: jnp.eye(n, m), ("int", "int"), ("eye",)),
        Api("jnp.dot", jnp.dot, ("array", "array"), ("dot",)),
        Api("jnp.matmul", jnp.matmul, ("array", "array"), ("matmul",)),
        Api("jnp.add", jnp.add, ("array", "value"), ("add",)),
        Api("jnp.floor_divide", jnp.floor_divide, ("array", "array"), ("floor_divide", "div")),
        Api("jnp.power", jnp.power, ("array", "value"), ("power", "pow")),
        Api("astype", lambda a, dt: jnp.asarray(a).astype(dt), ("array", "dtype"), ("astype", "dtype", "convert")),
        Api("jnp.asarray", lambda a, dt: jnp.asarray(a, dt), ("value", "dtype"), ("asarray", "dtype")),
        Api("getitem", lambda a, i: jnp.asarray(a)[i], ("array", "axis"), ("index",)),
        Api("jnp.split", lambda a, n, ax: jnp.split(a, n, axis=ax), ("array", "int", "axis"), ("split", "axis")),
        Api("jnp.flip", lambda a, ax: jnp.flip(a, ax), ("array", "axis"), ("flip", "axis"), lambda a, ax: np.flip(a, ax)),
        Api("jnp.roll", lambda a, s, ax: jnp.roll(a, s, ax), ("array", "int", "axis"), ("roll", "axis")),
        Api("jnp.moveaxis", lambda a, s, d: jnp.moveaxis(a, s, d), ("array", "axis", "axis"), ("moveaxis", "axis")),
        Api("jnp.swapaxes", lambda a, s, d: jnp.swapaxes(a, s, d), ("array", "axis", "axis"), ("swapaxes", "axis")),
        Api("lax.slice", lambda a, s, e: lax.slice(a, s, e), ("array", "shape", "shape"), ("slice",)),
        Api("lax.dynamic_slice", lambda a, i, s: lax.dynamic_slice(a, i, s), ("array", "shape", "shape"), ("dynamic_slice",)),
        Api("lax.dynamic_update_slice", lambda a, u, i: lax.dynamic_update_slice(a, u, i), ("array", "array", "shape"), ("dynamic_update_slice",)),
        Api("lax.broadcast_in_dim", lambda a, s, d: lax.broadcast_in_dim(a, s, d), ("array", "shape", "axis"), ("broadcast_in_dim",)),
        Api("lax.transpose", lambda a, p: lax.transpose(a, p), ("array", "axis"), ("transpose",)),
        Api("lax.reshape", lambda a, s: lax.reshape(a, s), ("array", "shape"), ("reshape",)),
        Api("lax.rev", lambda a, d: lax.rev(a, d), ("array", "axis"), ("rev",)),
        Api("lax.squeeze", lambda a, d: lax.squeeze(a, d), ("array", "axis"), ("squeeze",)),
        Api("lax.convert_element_type", lambda a, dt: lax.convert_element_type(a, dt), ("array", "dtype"), ("convert_element_type", "dtype")),
        Api("lax.iota", lambda dt, n: lax.iota(dt, n), ("dtype", "int"), ("iota",)),
        Api("lax.select", lambda p, a, b: lax.select(p, a, b), ("array", "array", "array"), ("select",)),
        Api("lax.clamp", lambda lo, a, hi: lax.clamp(lo, a, hi), ("array", "array", "array"), ("clamp",)),
        Api("lax.integer_pow", lambda a, n: lax.integer_pow(a, n), ("array", "int"), ("integer_pow",)),
        Api("lax.argmax", lambda a, ax, dt: lax.argmax(a, ax, dt), ("array", "int", "dtype"), ("argmax",)),
        Api("lax.cumsum", lambda a, ax: lax.cumsum(a, ax), ("array", "int"), ("cumsum",)),
        Api("lax.sort", lambda a, d: lax.sort(a, dimension=d), ("array", "int"), ("sort",)),
        Api("lax.add", lax.add, ("array", "array"), ("add",)),
        Api("lax.div", lax.div, ("array", "array"), ("div",)),
        Api("lax.shift_left", lax.shift_left, ("array", "array"), ("shift_left",)),
        Api("lax.atan2", lax.atan2, ("array", "array"), ("atan2",)),
        Api("lax.pad", lambda a, v, lo, hi: lax.pad(a, v, [(lo, hi, 0)] * np.ndim(a)), ("array", "array", "int", "int"), ("pad",)),
        Api("lax.concatenate", lambda a, b, d: lax.concatenate([a, b], d), ("array", "array", "int"), ("concatenate",)),
    ]


API: list[Api] = api_table(jnp, lax)


@st.composite
def api_draws(draw: Draw) -> tuple[int, list[Any]]:
    """Which entry of the API table, and its argument values."""
    index = draw(st.integers(0, len(API) - 1))
    values = [SLOTS[slot](draw) for slot in API[index].slots]
    # Some of the time, make the array arguments agree in dtype and shape: valid cases too.
    arrays_at = [i for i, v in enumerate(values) if isinstance(v, np.ndarray)]
    if len(arrays_at) > 1 and draw(st.booleans()):
        first = values[arrays_at[0]]
        for i in arrays_at[1:]:
            values[i] = draw(mst.arrays(first.dtype, first.shape))
    return index, values


def api_case(api: Api, values: list[Any]) -> FuzzCase:
    """The case: arrays are the arguments (traced under jit); everything else is
    fixed, as a static argument would be."""
    statics = {i: v for i, v in enumerate(values) if not isinstance(values[i], np.ndarray)}

    def call(*arrays_: Any) -> Any:
        it = iter(arrays_)
        return api.fn(*[statics[i] if i in statics else next(it) for i in range(len(values))])

    reference = None
    if api.reference is not None and _float_only(*values) and _np_axis_ok(values[0], values[1]):
        ref = api.reference

        def reference(*arrays_: Any) -> Any:
            it = iter(arrays_)
            return ref(*[statics[i] if i in statics else next(it) for i in range(len(values))])

    label = f"{api.name}({', '.join(_short(v) for v in values)})"
    unspecified = api.name in _CONVERSIONS and _out_of_integer_range(values[0], values[1])
    key = (api.name, repr(sorted(statics.items())))
    args = [values[i] for i in range(len(values)) if i not in statics]
    large = api.name in ("jnp.arange", "jnp.linspace", "jnp.eye", "jnp.zeros", "jnp.full", "jnp.tile", "jnp.repeat",
                         "jnp.broadcast_to", "lax.iota", "lax.pad", "lax.broadcast_in_dim")  # fmt: skip
    return FuzzCase(label, call, args, api.names, key=key, reference=reference, require_name=False, may_be_large=large,
                    values_unspecified=unspecified)  # fmt: skip


_CONVERSIONS = ("astype", "jnp.asarray", "lax.convert_element_type")


def _out_of_integer_range(value: Any, dtype: Any) -> bool:
    """Whether converting ``value`` (floats) to ``dtype`` (an integer type) meets a NaN,
    an infinity or a number the integer type cannot hold: the result is unspecified."""
    try:
        target = np.dtype(dtype)
        v = np.asarray(value)
    except TypeError:
        return False
    if target.kind not in "iu" or v.dtype.kind not in "fc" and v.dtype != np.dtype(jnp.bfloat16):
        return False
    wide = v.real.astype(np.float64) if v.dtype.kind == "c" else v.astype(np.float64)
    info = np.iinfo(target)
    return bool(np.any(~np.isfinite(wide) | (wide < info.min) | (wide > info.max)))


@st.composite
def api_cases(draw: Draw) -> FuzzCase:
    index, values = draw(api_draws())
    return api_case(API[index], values)


# --- control flow -------------------------------------------------------------------------------

# Branch bodies: (minijax function, NumPy function or None when the branch is ill-formed).
BRANCHES: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any] | None]] = {
    "double": (lambda x: x * 2, lambda x: x * 2),
    "negate": (lambda x: -x, lambda x: -x),
    "sin": (lambda x: jnp.sin(x), np.sin),
    "to_int": (lambda x: jnp.asarray(x).astype(jnp.int32), None),
    "first": (lambda x: jnp.asarray(x)[:1], None),
    "pair": (lambda x: (x, x), None),
    "constant": (lambda x: 1.5, None),
}
# What the branch bodies do (an error inside a branch names that).
BRANCH_OPS = ("mul", "neg", "sin", "convert_element_type", "index", "indices", "slice")
PREDICATES: list[Any] = [True, False, np.bool_(True), np.bool_(False), np.int32(3), np.int32(0), np.float32(1.5),
                         np.array([True, False]), np.array(True), np.uint8(0)]  # fmt: skip
INDICES: list[Any] = [-2, -1, 0, 1, 2, 5, np.int32(1), np.int32(-3), np.int32(7), np.uint8(1), np.float32(1.0), True, np.array([0, 1])]


def _split_traced(values: list[Any]) -> tuple[list[Any], Callable[[Callable[..., Any]], Callable[..., Any]]]:
    """NumPy values become the case's (traced) arguments; Python values stay fixed."""
    traced = [i for i, v in enumerate(values) if isinstance(v, (np.ndarray, np.generic))]

    def bind(body: Callable[..., Any]) -> Callable[..., Any]:
        def call(*xs: Any) -> Any:
            full = list(values)
            for i, x in zip(traced, xs):
                full[i] = x
            return body(*full)

        return call

    return [values[i] for i in traced], bind


@st.composite
def control_flow_cases(draw: Draw) -> FuzzCase:
    kind = draw(st.sampled_from(["cond", "switch", "scan", "while_loop", "fori_loop"]))
    x = arrays(draw, draw(st.sampled_from([np.float32, np.float32, np.int32, np.bool_, np.float16])), draw(st.sampled_from([(), (3,), (2, 3), (0,)])))
    if kind == "cond":
        pred = draw(st.sampled_from(PREDICATES))
        (t_name, (t_fn, t_np)), (f_name, (f_fn, f_np)) = (draw(st.sampled_from(sorted(BRANCHES.items()))) for _ in range(2))
        args, bind = _split_traced([pred, x])
        fn = bind(lambda p, v: lax.cond(p, t_fn, f_fn, jnp.asarray(v)))
        reference = None
        if t_np is not None and f_np is not None and t_name == f_name and np.ndim(pred) == 0 and x.dtype.kind == "f":
            reference = bind(lambda p, v: (t_np if bool(p) else f_np)(v))
        return FuzzCase(f"cond({pred!r}, {t_name}, {f_name}, {_short(x)})", fn, args, ("cond", "pred", "branch", "true_fun", "false_fun", *BRANCH_OPS),
                        key=("cond", repr(pred) if not isinstance(pred, np.ndarray) else "array", t_name, f_name), reference=reference)  # fmt: skip
    if kind == "switch":
        index = draw(st.sampled_from(INDICES))
        names = draw(st.lists(st.sampled_from(sorted(BRANCHES)), min_size=0, max_size=3))
        branches = [BRANCHES[n][0] for n in names]
        args, bind = _split_traced([index, x])
        # Operands as Arrays: JAX calls a lone branch directly, and a NumPy operand would compute in NumPy.
        fn = bind(lambda i, v: lax.switch(i, branches, jnp.asarray(v)))
        reference = None
        if names and len(set(names)) == 1 and BRANCHES[names[0]][1] is not None and x.dtype.kind == "f":
            reference = bind(lambda i, v: BRANCHES[names[0]][1](v))  # type: ignore[misc]
        return FuzzCase(f"switch({index!r}, {names}, {_short(x)})", fn, args, ("switch", "index", "branch", "cond", *BRANCH_OPS),
                        key=("switch", type(index).__name__, tuple(names)), reference=reference)  # fmt: skip
    if kind == "scan":
        length = draw(st.sampled_from([0, 1, 3]))
        xs = arrays(draw, np.float32, draw(st.sampled_from([(length,), (length, 2), (length + 1,), ()])))
        init = arrays(draw, np.float32, draw(st.sampled_from([(), (2,)])))
        body_name = draw(st.sampled_from(["sum", "sum", "carry_dtype", "carry_shape", "no_ys", "not_a_pair"]))
        bodies: dict[str, Callable[[Any, Any], Any]] = {
            "sum": lambda c, e: (c + e, c * e),
            "carry_dtype": lambda c, e: (jnp.asarray(c + e).astype(jnp.int32), e),
            "carry_shape": lambda c, e: (jnp.stack([c, c]), e),
            "no_ys": lambda c, e: (c - e, None),
            "not_a_pair": lambda c, e: c + e,
        }
        body = bodies[body_name]
        length_param = draw(st.sampled_from([None, None, length, length + 1, -1]))
        reverse = draw(st.booleans())
        unroll = draw(st.sampled_from([1, 1, 2, True, 0, -1]))

        def scan(c: Any, e: Any) -> Any:
            return lax.scan(body, c, e, length=length_param, reverse=reverse, unroll=unroll)

        reference = None
        if body_name == "sum" and length_param in (None, xs.shape[0] if xs.ndim else None) and xs.ndim and xs.shape[1:] in ((), init.shape) or (
            body_name == "sum" and xs.ndim == 2 and init.shape == (2,) and length_param in (None, xs.shape[0])
        ):

            def reference(c: Any, e: Any) -> Any:
                ys = []
                order = range(e.shape[0] - 1, -1, -1) if reverse else range(e.shape[0])
                for i in order:
                    c, y = c + e[i], c * e[i]
                    ys.append(y)
                if reverse:
                    ys.reverse()
                return c, np.stack(ys) if ys else np.zeros((0, *np.broadcast_shapes(np.shape(c), e.shape[1:])), np.float32)

        label = f"scan({body_name}, init={_short(init)}, xs={_short(xs)}, length={length_param}, reverse={reverse}, unroll={unroll})"
        return FuzzCase(label, scan, [init, xs], ("scan", "carry", "length", "unroll", "leading axis"),
                        key=("scan", body_name, length_param, reverse, unroll), reference=reference)  # fmt: skip
    if kind == "while_loop":
        n = draw(st.sampled_from([0, 1, 4]))
        cond_name = draw(st.sampled_from(["ok", "ok", "int", "array", "float"]))
        body_name = draw(st.sampled_from(["ok", "ok", "dtype", "shape"]))
        conds: dict[str, Callable[[Any], Any]] = {
            "ok": lambda s: s[0] < n,
            "int": lambda s: (s[0] < n).astype(jnp.int32),
            "array": lambda s: jnp.stack([s[0] < n]),
            "float": lambda s: jnp.where(s[0] < n, 1.0, 0.0),
        }
        whiles: dict[str, Callable[[Any], Any]] = {
            "ok": lambda s: (s[0] + 1, s[1] * 2 - 1),
            "dtype": lambda s: (s[0] + 1, jnp.asarray(s[1]).astype(jnp.int8)),
            "shape": lambda s: (s[0] + 1, jnp.stack([s[1], s[1]])),
        }
        cond_f, body_f = conds[cond_name], whiles[body_name]

        def loop(v: Any) -> Any:
            return lax.while_loop(cond_f, body_f, (0, v))

        reference = None
        if cond_name == "ok" and body_name == "ok" and x.dtype.kind == "f":

            def reference(v: Any) -> Any:
                i = 0
                while i < n:
                    i, v = i + 1, v * 2 - 1
                return np.int32(i), v

        return FuzzCase(f"while_loop({cond_name}, {body_name}, n={n}, {_short(x)})", loop, [x], ("while", "while_loop", "cond_fun", "body_fun", "carry"),
                        key=("while", n, cond_name, body_name), reference=reference)  # fmt: skip
    lower = draw(st.sampled_from([0, 2, -1, 2.5, np.int32(1), np.float32(0.0), np.int8(0)]))
    upper = draw(st.sampled_from([0, 3, 5, -2, 3.5, np.int32(3), np.uint8(2)]))
    args, bind = _split_traced([lower, upper, x])
    fn = bind(lambda lo, hi, v: lax.fori_loop(lo, hi, lambda i, c: c + i, v))
    return FuzzCase(f"fori_loop({lower!r}, {upper!r}, {_short(x)})", fn, args, ("fori_loop", "lower", "upper", "while", "while_loop", "scan"),
                    key=("fori", repr(lower) if not isinstance(lower, np.generic) else type(lower).__name__,
                         repr(upper) if not isinstance(upper, np.generic) else type(upper).__name__))  # fmt: skip


# --- transformations ----------------------------------------------------------------------------------

FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sum_sin": lambda x: jnp.sum(jnp.sin(x) * x),
    "square": lambda x: x * x,
    "first": lambda x: jnp.asarray(x)[0],
    "two_args": lambda x, y: jnp.sum(x * y),
    "aux": lambda x: (jnp.sum(x), {"x": x}),
    "to_int": lambda x: jnp.asarray(x).astype(jnp.int32),
}


@st.composite
def transform_cases(draw: Draw) -> FuzzCase:
    transform = draw(st.sampled_from(["grad", "value_and_grad", "vmap", "jvp", "jacfwd", "jacrev", "hessian", "linearize", "checkpoint"]))
    f_name = draw(st.sampled_from(sorted(FUNCTIONS)))
    f = FUNCTIONS[f_name]
    n_args = 2 if f_name == "two_args" else 1
    dtype = draw(st.sampled_from([np.float32, np.float32, np.float16, np.int32, np.bool_]))
    shape = draw(st.sampled_from([(3,), (2, 3), (), (0,), (1,)]))
    xs = [arrays(draw, dtype, shape, edges=draw(st.booleans())) for _ in range(n_args)]
    if transform in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian"):
        argnums = draw(st.sampled_from([0, 0, 1, -1, (0,), (0, 1), 5]))
        has_aux = draw(st.booleans()) if transform != "hessian" else False
        kwargs: dict[str, Any] = {"argnums": argnums} if transform != "hessian" else {"argnums": argnums}
        if transform in ("grad", "value_and_grad", "jacfwd", "jacrev"):
            kwargs["has_aux"] = has_aux
        api = getattr(__import__("minijax"), transform)
        fn = api(f, **kwargs)
        label = f"{transform}({f_name}, {kwargs})"
        key: Hashable = (transform, f_name, repr(kwargs))
    elif transform == "vmap":
        in_axes = draw(st.sampled_from([0, 0, 1, -1, None, (0,), (1, 0), (0, None), 2]))
        out_axes = draw(st.sampled_from([0, 0, 1, -1, None, 2]))
        fn = __import__("minijax").vmap(f, in_axes=in_axes, out_axes=out_axes)
        label = f"vmap({f_name}, in_axes={in_axes}, out_axes={out_axes})"
        key = ("vmap", f_name, repr(in_axes), repr(out_axes))
    elif transform in ("jvp", "linearize"):
        t_dtype = draw(st.sampled_from([dtype, dtype, np.float32, np.int32]))
        t_shape = draw(st.sampled_from([shape, shape, (4,)]))
        tangents = [arrays(draw, t_dtype, t_shape, edges=False) for _ in range(n_args)]
        mj = __import__("minijax")
        if transform == "jvp":

            def fn(*a: Any) -> Any:
                return mj.jvp(f, tuple(a[:n_args]), tuple(a[n_args:]))

            xs = xs + tangents
        else:

            def fn(*a: Any) -> Any:
                out, lin = mj.linearize(f, *a)
                return out, lin(*a)

        label = f"{transform}({f_name}, tangents {np.dtype(t_dtype).name}{list(t_shape)})"
        key = (transform, f_name)
    else:
        fn = __import__("minijax").checkpoint(f)
        label = f"checkpoint({f_name})"
        key = ("checkpoint", f_name)
    names = (transform, "grad", "vmap", "jvp", "in_axes", "out_axes", "argnums", "tangent", "axis", f_name)
    return FuzzCase(f"{label}({', '.join(_short(v) for v in xs)})", fn, xs, names, key=key, require_name=False)


# --- jaxprs: printed, parsed back, mutated; built by hand with wrong types ----------------------------


def _mutate_text(draw: Draw, text: str) -> tuple[str, str]:
    import re

    mutation = draw(st.sampled_from(["none", "none", "dtype", "shape", "param", "drop_line", "rename_prim", "truncate", "swap_vars"]))
    if mutation == "dtype":
        found = list(re.finditer(r"\b(f32|i32|bool|u8|f16)\[", text))
        if found:
            m = draw(st.sampled_from(found))
            new = draw(st.sampled_from(["f32[", "i32[", "bool[", "u8[", "f64[", "bf16[", "c64["]))
            return text[: m.start()] + new + text[m.end() :], f"dtype {m.group(0)} -> {new}"
    if mutation == "shape":
        found = list(re.finditer(r"\[(\d+(,\d+)*)?\]", text))
        if found:
            m = draw(st.sampled_from(found))
            new = draw(st.sampled_from(["[]", "[0]", "[1]", "[4]", "[3,3]", "[-1]"]))
            return text[: m.start()] + new + text[m.end() :], f"shape {m.group(0)} -> {new}"
    if mutation == "param":
        found = list(re.finditer(r"(\w+)=([^ \]\n]+)", text))
        if found:
            m = draw(st.sampled_from(found))
            new = draw(st.sampled_from(["0", "-1", "7", "(0,)", "(5,)", "()", "None", "True", "float32", "1.5", "(0, 0)"]))
            return text[: m.start(2)] + new + text[m.end(2) :], f"param {m.group(1)}={new}"
    lines = text.split("\n")
    if mutation == "drop_line" and len(lines) > 3:
        i = draw(st.integers(1, len(lines) - 2))
        return "\n".join(lines[:i] + lines[i + 1 :]), f"line {i} dropped"
    if mutation == "rename_prim":
        found = list(re.finditer(r"= (\w+)", text))
        if found:
            m = draw(st.sampled_from(found))
            new = draw(st.sampled_from(["sin", "add", "no_such_op", "reduce_sum", "cos"]))
            return text[: m.start(1)] + new + text[m.end(1) :], f"primitive {m.group(1)} -> {new}"
    if mutation == "truncate" and len(text) > 10:
        cut = draw(st.integers(1, len(text) - 1))
        return text[:cut], f"truncated at {cut}"
    if mutation == "swap_vars":
        names: list[str] = sorted(set(re.findall(r"\b([a-z]{1,2}):", text)))
        if len(names) >= 2:
            old, new = draw(st.sampled_from(names)), draw(st.sampled_from(names))
            return re.sub(rf"\b{old}\b(?!:)", new, text, count=1), f"a use of {old} -> {new}"
    return text, "unchanged"


@st.composite
def jaxpr_text_cases(draw: Draw) -> FuzzCase:
    import re

    from minijax.core import primitive_registry
    from minijax.jaxpr import ClosedJaxpr, eval_jaxpr
    from minijax.jaxpr_parse import parse_jaxpr
    from minijax.testing.programs import random_jaxprs

    program = draw(random_jaxprs(max_eqns=4))
    rng = draw(mst.seeds())
    args = program.args(rng)
    text, note = _mutate_text(draw, str(program.closed))
    # KNOWN_ISSUES: scatter and gather do not check the kinds of their params (update_consts=0
    # computes on NumPy and fails lowering on XLA); left out until the indexing rewrite lands.
    assume(not (note.startswith("param") and re.search(r"\b(scatter|gather)", text)))
    original = program.closed
    prim_names = tuple({e.primitive.name for e in original.eqns})

    def run(*xs: Any) -> Any:
        parsed = parse_jaxpr(text)
        closed = parsed if isinstance(parsed, ClosedJaxpr) else ClosedJaxpr(parsed, [])
        return eval_jaxpr(closed.jaxpr, closed.consts, *xs)

    reference = None
    if note == "unchanged":

        def reference(*xs: Any) -> Any:
            from minijax.config import config_context

            with config_context(minijax_backend="numpy"):
                return [np.asarray(v) for v in eval_jaxpr(original.jaxpr, original.consts, *xs)]

    # Messages may name any primitive the (mutated) text names.
    named = {w for w in re.findall(r"[\w-]+", text) if w in primitive_registry}
    names = (*prim_names, *named, "jaxpr", "line", "column", "eval_jaxpr", "expected", "takes", "arguments", "dtype", "prng")
    try:
        parsed = parse_jaxpr(text)
        program: Any = parsed if isinstance(parsed, ClosedJaxpr) else ClosedJaxpr(parsed, [])
    except Exception:  # the case checks the error
        program = None
    return FuzzCase(f"parse+eval ({note}) of\n{text}\n", run, list(args), names, key=("text", text), reference=reference,
                    program=program)  # fmt: skip


@st.composite
def hand_built_cases(draw: Draw) -> FuzzCase:
    """A random program with one equation's declared type or params made wrong, run as a jit call."""
    from minijax.core import ShapedArray
    from minijax.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var
    from minijax.primitives.calls import jit_p
    from minijax.primitives.cond import cond_p
    from minijax.testing.programs import random_jaxprs

    program = draw(random_jaxprs(max_eqns=4))
    rng = draw(mst.seeds())
    args = program.args(rng)
    jaxpr = program.closed.jaxpr
    subst: dict[Var, Var] = {}
    eqns = []
    target = draw(st.integers(0, len(jaxpr.eqns) - 1))
    mutation = draw(st.sampled_from(["out_dtype", "out_shape", "param", "operand", "none"]))
    note = mutation
    for k, eqn in enumerate(jaxpr.eqns):
        invars = [subst.get(v, v) if isinstance(v, Var) else v for v in eqn.invars]
        outvars = list(eqn.outvars)
        params = dict(eqn.params)
        if k == target:
            if mutation in ("out_dtype", "out_shape"):
                old = outvars[0].aval
                aval = (ShapedArray(old.shape, draw(st.sampled_from(DTYPES)), old.weak_type) if mutation == "out_dtype"
                        else ShapedArray(draw(st.sampled_from(SHAPES)), old.dtype, old.weak_type))  # fmt: skip
                new = Var(aval)
                subst[outvars[0]] = new
                outvars[0] = new
                note = f"{eqn.primitive.name} declared to give {aval.str_short()} instead of {old.str_short()}"
            elif mutation == "param" and params and eqn.primitive.name not in _SKIP:  # (random: KNOWN_ISSUES)
                key = draw(st.sampled_from(sorted(params)))
                params[key] = _mutate_param(draw, params[key])
                note = f"{eqn.primitive.name} with {key}={params[key]!r}"
            elif mutation == "operand" and invars:
                pool = [v for v in jaxpr.invars if v not in invars] or list(jaxpr.invars)
                invars[0] = draw(st.sampled_from(pool))
                note = f"{eqn.primitive.name} reading another input"
        eqns.append(JaxprEqn(invars, outvars, eqn.primitive, params))
    outs = [subst.get(v, v) if isinstance(v, Var) else v for v in jaxpr.outvars]
    closed = ClosedJaxpr(Jaxpr([], list(jaxpr.invars), outs, eqns), [])

    wrapper = draw(st.sampled_from(["jit", "cond"]))

    def run(*xs: Any) -> Any:
        if wrapper == "cond":  # both branches the hand-built jaxpr: run by the eager cond rule or compiled
            return cond_p.bind(np.int32(1), *xs, branches=(closed, closed))
        return jit_p.bind(*xs, jaxpr=closed, name="hand_built")

    names = (*{e.primitive.name for e in eqns}, "jaxpr", "jit", "cond")
    return FuzzCase(f"hand-built {wrapper} ({note}):\n{closed}\n", run, list(args), names, key=("hand", id(closed)), require_name=True)
