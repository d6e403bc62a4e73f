"""The core: abstract values, primitives, traces and tracers.

Tracing design ("stackless", like JAX today): there is always exactly one
*current trace*, held per thread. ``Primitive.bind`` hands the operation to it.
A transform's trace handles the operation and, to compute on the values it
wraps, makes its *parent* trace current while it binds again. Values that do
not belong to the current trace (constants, or tracers of an enclosing
transform) are treated by it as constants. ``spec/transforms.md`` explains why
this design was chosen over an explicit trace stack.
"""

from __future__ import annotations

import functools
import math
import operator
import re
import threading
import types
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar, SupportsIndex

import numpy as np

from minijax import dtypes
from minijax.config import trace_context, x64_enabled
from minijax.errors import (
    ConcretizationTypeError,
    InconclusiveDimensionOperation,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from minijax.shape_poly import DimExpr

Shape = tuple[int, ...]


def shape_size(shape: Iterable[SupportsIndex]) -> int:
    """The number of elements of an array of this shape, exactly.

    Every size and byte count of a shape is formed here. The product is taken
    on Python ints, which do not wrap: ``np.prod((2**32, 2**32), dtype=np.int64)``
    is 0, and a size that wraps to 0 lets a huge shape pass a reshape check.
    """
    shape = shape if isinstance(shape, tuple) else tuple(shape)
    try:
        return math.prod(operator.index(d) for d in shape)
    except InconclusiveDimensionOperation:  # a symbolic shape's size is a DimExpr (it counts as an int here)
        size: Any = 1
        for d in shape:
            size = size * d
        return size  # type: ignore[no-any-return]


def dim_index(d: Any) -> Any:
    """A shape entry as a Python int, or as itself when it is a symbolic dimension (``jax.export``)."""
    return d if isinstance(d, DimExpr) else operator.index(d)


# ---------------------------------------------------------------------------
# Abstract values


class ShapedArray:
    """The abstract value of an array: shape, dtype and weak type flag."""

    __slots__ = ("shape", "dtype", "weak_type", "_hash", "fast_key")

    def __init__(self, shape: Sequence[int], dtype: Any, weak_type: bool = False) -> None:
        try:
            self.shape: Shape = tuple(int(d) for d in shape)
        except InconclusiveDimensionOperation:  # a symbolic dimension (jax.export's shape polymorphism) stays one
            self.shape = tuple(d if isinstance(d, DimExpr) else int(d) for d in shape)
        # An extended dtype (a PRNG key type, minijax.prng) is kept as it is:
        # np.dtype() would turn it into its physical dtype.
        self.dtype: np.dtype[Any] = dtype if isinstance(dtype, (np.dtype, dtypes.ExtendedDType)) else np.dtype(dtype)  # type: ignore[assignment]
        self.weak_type: bool = bool(weak_type)
        self._hash = hash((self.shape, self.dtype, self.weak_type))
        # Filled by the fast paths' cache keys (``minijax.dispatch.aval_key``).
        self.fast_key: int | None = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return shape_size(self.shape)

    def update(
        self,
        shape: Sequence[int] | None = None,
        dtype: Any = None,
        weak_type: bool | None = None,
    ) -> ShapedArray:
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
        )

    def strip_weak_type(self) -> ShapedArray:
        return self.update(weak_type=False) if self.weak_type else self

    def str_short(self, short_dtypes: bool = True) -> str:
        if short_dtypes:
            name = dtypes.short_dtype_name(self.dtype)
        else:  # float0 is a NumPy record type whose own name is "void"
            name = "float0" if self.dtype == dtypes.float0 else self.dtype.name
        return f"{name}[{','.join(str(d) for d in self.shape)}]"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ShapedArray)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
        )

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt through __init__: ``fast_key`` is this process's name for the triple.
        return (type(self), (self.shape, self.dtype, self.weak_type))

    # Printed alone, an aval names its dtype in full, as JAX's does
    # (``ShapedArray(float32[3])``); jaxprs ask str_short() for short names.
    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short(short_dtypes=False)}{weak})"

    def __str__(self) -> str:  # "~" marks a weak type, as in JAX
        return ("~" if self.weak_type else "") + self.str_short(short_dtypes=False)


# Python scalars and NumPy values become avals here; Array and Tracer carry one.
_SCALAR_TYPES = (bool, int, float, complex)


# (Python type, x64 flag) -> aval: Python scalars are looked up on every
# traced `x * 2.0`, so their avals are computed once.
_python_scalar_avals: dict[tuple[type, bool], ShapedArray] = {}


def get_aval(x: Any) -> ShapedArray:
    """The abstract value of anything minijax accepts as an array."""
    aval = getattr(x, "aval", None)
    if isinstance(aval, ShapedArray):
        return aval
    t = type(x)
    if t is float or t is int or t is bool or t is complex:
        key = (t, x64_enabled())
        cached = _python_scalar_avals.get(key)
        if cached is None:
            dtype = dtypes.dtype(x, canonicalize=True)
            cached = _python_scalar_avals[key] = ShapedArray((), dtype, weak_type=t is not bool)
        if t is int and not -(2**31) <= x < 2**31:
            info = np.iinfo(cached.dtype)
            if not info.min <= x <= info.max:
                raise OverflowError(f"Python int {x} too large to convert to {cached.dtype.name}")
        return cached
    # NumPy first: np.float64 subclasses float, but a NumPy scalar has a
    # definite dtype and so is never weakly typed.
    if isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(np.shape(x), dtypes.canonicalize_dtype(x.dtype))
    if isinstance(x, _SCALAR_TYPES):
        dtype = dtypes.dtype(x, canonicalize=True)
        return ShapedArray((), dtype, weak_type=type(x) is not bool)
    raise TypeError(
        f"Value {x!r} of type {type(x).__name__} is not a valid minijax type: "
        "minijax works on arrays (minijax.Array, numpy.ndarray) and Python scalars. "
        "Convert lists and tuples with jnp.asarray first."
    )


def is_array_like(x: Any) -> bool:
    return isinstance(x, (Tracer, np.ndarray, np.generic) + _SCALAR_TYPES) or (
        isinstance(getattr(x, "aval", None), ShapedArray)
    )


# ---------------------------------------------------------------------------
# Primitives

AbstractEvalRule = Callable[..., Any]

# prim -> rule(*avals, **params) returning one ShapedArray, or a list of them
# when the primitive has multiple results. Each primitive family module fills
# this table next to its other rules.
abstract_eval_rules: dict[Primitive, AbstractEvalRule] = {}

_abstract_eval_cache: dict[tuple[Any, ...], Any] = {}

# shtypes (issue 17, sharding in types): minijax.mesh, a layer up, installs these. ``arg_aval``
# gives a traced argument's aval (a ShardedAval for an array laid out over Explicit mesh axes);
# ``propagate`` gives a staged primitive's result avals their sharding from the operands'.
sharding_in_types: dict[str, Callable[..., Any]] = {}


class _PartialSumProducts(threading.local):
    # Set while a transpose rule binds a product whose contracting dimensions both sides split:
    # JAX gives that product the operand's sharding (out_sharding=), which minijax's primitives
    # do not take yet, so its result is left unsharded instead of raising the user-facing error.
    allowed = False


partial_sum_products = _PartialSumProducts()

# prim -> impl(*args, **params): the eager evaluation of a primitive defined
# out of other operations (Primitive.def_impl). minijax.dispatch, a layer up,
# installs a hook that makes each one an eager rule.
impl_rules: dict[Primitive, Callable[..., Any]] = {}
_impl_hooks: list[Callable[[Primitive], None]] = []


def install_impl_hook(hook: Callable[[Primitive], None]) -> None:
    """Call ``hook(prim)`` for every primitive given an impl, now and later."""
    _impl_hooks.append(hook)
    for prim in impl_rules:
        hook(prim)

# Param types that hash by identity and refer to user data: jaxprs (their
# consts are the arrays a function captured; minijax.jaxpr registers them)
# and Python functions (callbacks, custom rules). A memo key holding one
# would keep it alive for good, and it never matches a later trace anyway
# (which makes new ones), so such signatures are not memoised (issue 22).
_unmemoised_param_types: tuple[type, ...] = (types.FunctionType, types.MethodType, functools.partial)


def register_unmemoised_param_type(cls: type) -> None:
    """Signatures with a param of type ``cls`` (or a tuple or list holding one) are not memoised."""
    global _unmemoised_param_types
    _unmemoised_param_types = (*_unmemoised_param_types, cls)


def _memoisable(values: Any) -> bool:
    unmemoised = _unmemoised_param_types
    for v in values:
        if isinstance(v, unmemoised):
            return False
        if type(v) in (tuple, list) and not _memoisable(v):
            return False
    return True

def param_type_key(value: Any) -> Any:
    """The types of ``value`` and, in a tuple or list, of its elements (for cache keys)."""
    t = type(value)
    return (t, *map(param_type_key, value)) if t is tuple or t is list else t


# Every primitive ever created, by name: the registry tests walk it.
primitive_registry: dict[str, Primitive] = {}


class Primitive:
    """A named operation. Its meaning lives in rule tables keyed by it."""

    __slots__ = ("name", "multiple_results")

    def __init__(self, name: str, multiple_results: bool = False) -> None:
        self.name = name
        self.multiple_results = multiple_results
        primitive_registry[name] = self

    # What JAX's Primitive says of itself; minijax's call-like primitives are
    # told apart by tables (``dispatch.call_primitives``), not by these flags.
    call_primitive = False
    map_primitive = False

    def __repr__(self) -> str:
        return self.name

    # JAX's way to give a new primitive (jax.extend.core.Primitive) its rules;
    # they fill the same tables minijax's own primitives use.
    def def_abstract_eval(self, rule: AbstractEvalRule) -> AbstractEvalRule:
        """``rule(*avals, **params)`` gives the output aval (a list of them with multiple results)."""
        abstract_eval_rules[self] = rule
        return rule

    def def_impl(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        """``impl(*arrays, **params)`` computes the primitive eagerly, out of other operations."""
        impl_rules[self] = impl
        for hook in _impl_hooks:
            hook(self)
        return impl

    def impl(self, *args: Any, **params: Any) -> Any:
        try:
            rule = impl_rules[self]
        except KeyError:
            raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented") from None
        return rule(*args, **params)

    def bind(self, *args: Any, **params: Any) -> Any:
        return trace_state.trace.process_primitive(self, args, params)

    def abstract_eval(self, *avals: ShapedArray, **params: Any) -> Any:
        try:
            rule = abstract_eval_rules[self]
        except KeyError:
            raise NotImplementedError(f"no abstract evaluation rule for primitive {self.name}") from None
        try:
            return rule(*avals, **params)
        except (TypeError, ValueError, IndexError, NotImplementedError) as e:
            named = _naming_primitive(self, e, avals, params)
            if named is e:
                raise
            raise named.with_traceback(e.__traceback__) from None

    def abstract_eval_cached(self, avals: Sequence[ShapedArray], params: dict[str, Any]) -> Any:
        """``abstract_eval`` memoised on (avals, params): tracing repeats signatures a lot."""
        if params and not _memoisable(params.values()):
            return self.abstract_eval(*avals, **params)
        try:
            # A param's type is part of the key, its elements' types too: 1 == True and
            # (1, 0) == (True, False) hash alike, but a rule may accept one and reject the other.
            # The flags that change tracing are too: a rule may read one (jax_allow_f16_reductions).
            # The avals' classes too: a rule may hand back its operand's aval, and a ShardedAval
            # (equal to the plain aval of its shape) must not come back for a plain operand.
            key = (self, trace_context(), *avals, *map(type, avals), *params.items(),
                   *map(param_type_key, params.values()))
            out = _abstract_eval_cache.get(key)
        except TypeError:  # unhashable param value
            return self.abstract_eval(*avals, **params)
        if out is None:
            out = self.abstract_eval(*avals, **params)
            if len(_abstract_eval_cache) > 100_000:
                _abstract_eval_cache.clear()
            _abstract_eval_cache[key] = out
        return out


# Exception types whose message can be rewritten: a plain message and nothing else.
_PLAIN_ERRORS = (TypeError, ValueError, IndexError, NotImplementedError, np.exceptions.AxisError)


def _naming_primitive(prim: Primitive, e: Exception, avals: Sequence[Any], params: dict[str, Any]) -> Exception:
    """``e`` with a message that names ``prim`` (bad input must say which operation refused it)."""
    message = str(e)
    if type(e) not in _PLAIN_ERRORS or re.search(rf"\b{re.escape(prim.name)}\b", message):
        return e
    if e.__traceback__ is not None and e.__traceback__.tb_next is None:
        # Raised binding the rule's arguments: the operands or params do not fit the primitive.
        operands = ", ".join(a.str_short() if isinstance(a, ShapedArray) else repr(a) for a in avals)
        message = f"{prim.name} cannot take operands ({operands}) with params {sorted(params)}: {message}"
    else:
        message = f"{prim.name}: {message}"
    try:
        return type(e)(message)
    except Exception:
        return e


def primitive_named(name: str) -> Primitive:
    """The primitive registered as ``name``.

    How the transformation machinery (minijax/interpreters/) stages the few
    primitives it emits itself -- ``add_any`` to sum tangents, a
    ``broadcast_in_dim`` to make zeros, a ``transpose`` to move a batch axis:
    those are defined, with all their rules, in minijax/primitives/, a layer
    above the machinery (they register their rules in its tables), so the
    machinery names them instead of importing them.
    """
    try:
        return primitive_registry[name]
    except KeyError:
        raise LookupError(
            f"no primitive named {name!r} is registered: import minijax, which registers every primitive"
        ) from None


# ---------------------------------------------------------------------------
# Traces and tracers


class Trace:
    """Interprets primitives applied to its tracers. Subclasses are the transforms."""

    # Set to False when the trace's transformation has finished: its tracers
    # are then leaked and using one raises UnexpectedTracerError.
    is_alive: bool = True
    transform_name: ClassVar[str] = "trace"
    # How this trace's tracers print: ``JitTracer(float32[3])``.
    tracer_kind: ClassVar[str] = "Tracer"

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        raise NotImplementedError

    # A call of a custom_jvp / custom_vjp function (minijax/custom_derivatives.py;
    # the primitives are in minijax/primitives/calls.py). By default it is staged as its primitive, holding the function's jaxpr and
    # the rule; the eval trace runs the function and the JVP trace the rule.
    def process_custom_jvp_call(self, call: Any, args: Sequence[Any]) -> list[Any]:
        return call.bind(args)  # type: ignore[no-any-return]

    def process_custom_vjp_call(self, call: Any, args: Sequence[Any]) -> list[Any]:
        return call.bind(args)  # type: ignore[no-any-return]

    def invalidate(self) -> None:
        self.is_alive = False

    def describe(self) -> str:
        """The transformation as error messages name it ("vmap", "jit of f")."""
        return self.transform_name


class EvalTrace(Trace):
    """The trace at the bottom: primitives run on the backend right away.

    ``minijax.dispatch`` installs the evaluation function as this trace's
    ``process_primitive`` (core.py knows no backend); a tracer reaching it
    has leaked out of its transformation and is reported as such.
    """

    transform_name = "eval"

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        raise RuntimeError("minijax.dispatch was not imported")

    def process_custom_jvp_call(self, call: Any, args: Sequence[Any]) -> list[Any]:
        return call.run(args)  # type: ignore[no-any-return]

    def process_custom_vjp_call(self, call: Any, args: Sequence[Any]) -> list[Any]:
        return call.run(args)  # type: ignore[no-any-return]


def raise_leaked_tracer(tracer: Tracer) -> None:
    trace = tracer._trace
    when = (
        "outside that transformation (from another thread, or where it is not the current transformation)"
        if trace.is_alive
        else "after that transformation ended (it leaked)"
    )
    raise UnexpectedTracerError(
        f"A {type(tracer).__name__} with type {tracer.aval.str_short(short_dtypes=False)} "
        f"created by {trace.describe()} was used {when}."
    )


def install_eval(apply: Callable[[Primitive, Sequence[Any], dict[str, Any]], Any]) -> None:
    """Make ``apply(prim, args, params)`` what binding with no transform active does."""
    # An instance attribute: bind's method lookup then finds the function
    # itself, one call fewer on the eager hot path.
    eval_trace.process_primitive = apply  # type: ignore[method-assign,assignment]


eval_trace = EvalTrace()


class _TraceState(threading.local):
    """This thread's current trace. Every thread starts with the eval trace;
    a transformation makes its trace current while it runs the function."""

    trace: Trace = eval_trace


trace_state = _TraceState()


def current_trace() -> Trace:
    return trace_state.trace


@contextmanager
def set_current_trace(trace: Trace) -> Iterator[None]:
    prev = trace_state.trace
    trace_state.trace = trace
    try:
        yield
    finally:
        trace_state.trace = prev


IMMUTABLE_MESSAGE = (
    "JAX arrays are immutable and do not support in-place item assignment. "
    "Instead of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
    "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html"
)


class HasAval:
    """Array metadata read off ``self.aval``: shared by Array and every Tracer."""

    __slots__ = ()

    if TYPE_CHECKING:  # an attribute of Array, a property of tracers

        @property
        def aval(self) -> ShapedArray: ...

    @property
    def shape(self) -> Shape:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return self.aval.ndim

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    @property
    def nbytes(self) -> int:
        return self.aval.size * self.aval.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return int(self.aval.dtype.itemsize)


class Tracer(HasAval):
    """A value being traced by a transform. Behaves like an array (see array_methods)."""

    __array_priority__ = 1000
    __slots__ = ("_trace", "__weakref__")
    _trace: Trace

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    def to_concrete_value(self) -> Any:
        """The concrete value behind this tracer, if its trace knows one (JVP of a constant)."""
        return None

    def _origin_msg(self) -> str:
        return ""

    def __len__(self) -> int:
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    # Conversions to Python/NumPy values. As in JAX, only the ones that feed
    # Python control flow and indexing (bool, int, index) may read the
    # concrete value a tracer knows (a JVP tracer of a concrete primal, under
    # grad without jit); float, complex and NumPy conversions always refuse,
    # so that a value taken out of the trace is never silently cut off from
    # its derivative.
    def __bool__(self) -> bool:
        value = self.to_concrete_value()
        if value is not None:
            return bool(value)
        size = self.aval.size
        if size != 1:
            raise ValueError(
                "The truth value of an empty array is ambiguous. Use `array.size > 0` to check that an array is not empty."
                if size == 0
                else "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()"
            )
        raise TracerBoolConversionError(self)

    def __index__(self) -> int:
        value = self.to_concrete_value()
        if value is not None:
            return operator.index(value)
        if self.aval.shape or not dtypes.issubdtype(self.aval.dtype, np.integer):
            raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
        raise TracerIntegerConversionError(self)

    def __int__(self) -> int:
        value = self.to_concrete_value()
        if value is not None:
            return int(value)
        self._check_scalar_conversion()
        raise ConcretizationTypeError(self, _conversion_context("int"))

    def __float__(self) -> float:
        self._check_scalar_conversion()
        raise ConcretizationTypeError(self, _conversion_context("float"))

    def __complex__(self) -> complex:
        self._check_scalar_conversion()
        raise ConcretizationTypeError(self, _conversion_context("complex"))

    def _check_scalar_conversion(self) -> None:
        if self.aval.shape:
            raise TypeError(f"Only scalar arrays can be converted to Python scalars; got arr.ndim={len(self.aval.shape)}")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        raise TracerArrayConversionError(self)

    def __hash__(self) -> int:
        raise TypeError(f"unhashable type: {type(self).__name__}. Traced arrays cannot be dict keys or set members.")

    def __setitem__(self, idx: Any, value: Any) -> None:
        raise TypeError(IMMUTABLE_MESSAGE)

    def __repr__(self) -> str:
        # JAX's form: the trace's kind, then the aval with ~ marking a weak type.
        aval = self.aval
        weak = "~" if aval.weak_type else ""
        return f"{self._trace.tracer_kind}({weak}{aval.str_short(short_dtypes=False)})"


def _conversion_context(name: str) -> str:
    return (
        f"The problem arose with the `{name}` function. If trying to convert the data type "
        f"of a value, try using `x.astype({name})` or `jnp.array(x, {name})` instead."
    )


def concrete_or_error(x: Any, context: str = "") -> Any:
    """Return ``x`` as a concrete value, or raise ConcretizationTypeError."""
    if isinstance(x, Tracer):
        value = x.to_concrete_value()
        if value is None:
            raise ConcretizationTypeError(x, context)
        return value
    return x


def typecheck_avals(expected: Sequence[ShapedArray], got: Sequence[ShapedArray], what: str) -> None:
    """Raise TypeError when two lists of avals disagree (ignoring weak types)."""
    if len(expected) != len(got):
        raise TypeError(f"{what}: expected {len(expected)} values, got {len(got)}")
    for i, (e, g) in enumerate(zip(expected, got)):
        if e.shape != g.shape or e.dtype != g.dtype:
            raise TypeError(f"{what}: value {i} has type {g.str_short()} but {e.str_short()} was expected")
