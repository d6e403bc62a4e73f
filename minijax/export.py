"""``jax.export``: a jitted function as a self-contained program that outlives the process.

``export(jit(f))(*specs)`` traces ``f`` for the argument types and returns an
``Exported``: its types and pytree structures, the jaxpr, and on the ``xla``
backend the StableHLO module. ``serialize()`` writes all of it to bytes in
minijax's own format (below; JAX's flatbuffer is not read or written), and
``deserialize`` reads them back, in this process or another one.

``Exported.call`` runs the program: the stored StableHLO, compiled by XLA, where
the default backend compiles StableHLO (``xla``); the stored jaxpr elsewhere
(``numpy``) and under a transformation (``jit``, ``grad``, ``vmap`` of
``call``), so an exported function stays differentiable.

Captured constants become the program's leading parameters: the StableHLO
module takes them first and the payload carries their values.

The serialized format (version 1)::

    b"minijax.export\\n"              magic
    8 bytes, little-endian           length H of the header
    H bytes                          the header: UTF-8 JSON (fun_name, platforms,
                                     in_tree, out_tree, in_avals, out_avals,
                                     jaxpr text, stablehlo text or null, const_sizes)
    the constants                    one .npy file each, of the sizes const_sizes lists

Pytree structures are written as JSON of tuples, lists, dicts (string or int
keys) and None; another node type cannot be exported.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import core, dtypes, tree_util
from minijax.api import ShapeDtypeStruct
from minijax.array import Array
from minijax.backend import Device, Executable, default_device
from minijax.core import ShapedArray
from minijax.dispatch import compiled_for
from minijax.interpreters.tracing import trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, Jaxpr, Literal, eval_jaxpr
from minijax.jaxpr_parse import parse_jaxpr
from minijax.placement import to_device
from minijax.shape_poly import DimExpr, evaluate_shape, is_symbolic_shape, parse_dim, split_dims
from minijax.stages import Jitted

__all__ = [
    "DisabledSafetyCheck",
    "Exported",
    "default_export_platform",
    "deserialize",
    "export",
    "is_symbolic_dim",
    "maximum_supported_calling_convention_version",
    "minimum_supported_calling_convention_version",
    "symbolic_args_specs",
    "symbolic_shape",
]

_MAGIC = b"minijax.export\n"
_FORMAT_VERSION = 1
# JAX's calling convention versions; minijax's programs take (constants, arguments), no tokens.
minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10
_CALLING_CONVENTION = 10


class DisabledSafetyCheck:
    """A check ``export`` or ``Exported.call`` would make, turned off (``export(disabled_checks=[...])``).

    ``platform()``: the program may run on a platform it was not exported for.
    ``custom_call(target)``: the program may call that custom-call target (minijax lowers no
    custom call whose stability is unknown, so nothing refuses one; the directive is kept).
    Its text (``str``) is what the serialized program records.
    """

    def __init__(self, _impl: str) -> None:
        self._impl = _impl  # use platform() or custom_call(...)

    @classmethod
    def platform(cls) -> DisabledSafetyCheck:
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> DisabledSafetyCheck:
        return cls(f"custom_call:{target_name}")

    def is_custom_call(self) -> str | None:
        """The custom-call target this directive allows, or None."""
        kind, _, target = self._impl.partition(":")
        return target if kind == "custom_call" and target else None

    def __str__(self) -> str:
        return self._impl

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DisabledSafetyCheck) and self._impl == other._impl

    def __hash__(self) -> int:
        return hash(self._impl)


# JAX's platform names for minijax's device platforms (an exported program names JAX's).
_EXPORT_PLATFORM = {"cpu": "cpu", "gpu": "cuda"}


def _listed(platform: str, platforms: Sequence[str]) -> bool:
    """Whether a device of ``platform`` is among the export ``platforms`` (case aside; 'gpu' is 'cuda' or 'rocm')."""
    names = {p.lower() for p in platforms}
    return platform in names or (platform == "gpu" and bool(names & {"cuda", "rocm", "gpu"}))


# --- symbolic shapes -------------------------------------------------------------------------


def symbolic_shape(shape_spec: str | None, *, constraints: Sequence[str] = (), scope: Any = None,
                   like: Sequence[int | None] | None = None) -> tuple[Any, ...]:
    """A shape from its spec (``"b, 3"``, ``"2*b + 1, c"``): integers and expressions over
    dimension variables, ``_`` for the matching entry of ``like``, ``...`` for the rest of it."""
    if constraints:
        raise NotImplementedError("symbolic_shape(constraints=...) is not supported by minijax")
    if shape_spec is None:
        shape_spec = "..."
    parts = split_dims(shape_spec)
    dims: list[Any] = []
    for i, part in enumerate(parts):
        if part in ("_", "..."):
            if like is None:
                raise ValueError(f"symbolic_shape {shape_spec!r}: '{part}' needs the 'like' shape")
            if part == "...":
                dims.extend(like[i:])
                break
            dims.append(like[i])
            continue
        try:
            d = parse_dim(part)
        except ValueError as e:
            raise ValueError(f"syntax error in symbolic shape {shape_spec!r} in dimension {i}: {e}") from None
        dims.append(d)
        if like is not None and i < len(like) and like[i] is not None and isinstance(d, int) and d != like[i]:
            raise ValueError(
                f"syntax error in symbolic shape {shape_spec!r} in dimension {i}: different size {d} for known "
                f"dimension; like={tuple(like)}. Parsed '', remaining ''."
            )
    return tuple(dims)


def is_symbolic_dim(p: Any) -> bool:
    return isinstance(p, DimExpr)


def symbolic_args_specs(args: Any, shapes_specs: Any, constraints: Sequence[str] = (), scope: Any = None) -> Any:
    """``ShapeDtypeStruct``s like ``args`` (a pytree of arrays) with the shapes ``shapes_specs`` spells
    (one spec for every array, or a pytree of specs matching ``args``)."""
    leaves, tree = tree_util.tree_flatten(args)
    if isinstance(shapes_specs, str) or shapes_specs is None:
        specs = [shapes_specs] * len(leaves)
    else:
        specs = tree.flatten_up_to(shapes_specs)
    out = []
    for leaf, spec in zip(leaves, specs):
        shape = symbolic_shape(spec, constraints=constraints, like=np.shape(leaf))
        out.append(ShapeDtypeStruct(shape, dtypes.canonicalize_dtype(np.result_type(leaf))))
    return tree_util.tree_unflatten(tree, out)


def _dim_vars(avals: Sequence[ShapedArray]) -> list[str]:
    """The dimension variables of the arguments' shapes, sorted by name (as JAX orders them)."""
    names: set[str] = set()
    for a in avals:
        for d in a.shape:
            if isinstance(d, DimExpr):
                names |= d.variables()
    return sorted(names)


def _bind_dims(avals: Sequence[ShapedArray], shapes: Sequence[tuple[int, ...]]) -> dict[str, int]:
    """The values of the dimension variables that make ``avals`` the ``shapes`` of the arguments, solved
    from the dimensions ``k*v + c`` in order; ValueError with JAX's message where the shapes contradict
    the specification (a variable with two values, a remainder, a value below 1)."""
    env: dict[str, int] = {}
    obtained: list[str] = []

    def fail(detail: str) -> ValueError:
        specs = ",".join(f"args[{i}].shape = {a.shape}" for i, a in enumerate(avals))
        return ValueError(
            f"Input shapes do not match the polymorphic shapes specification. {detail}. Using the following "
            f"polymorphic shapes specifications: {specs}. Obtained dimension variables: {''.join(obtained)}. "
            "Please see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for more details."
        )

    for i, (aval, shape) in enumerate(zip(avals, shapes)):
        for axis, (d, n) in enumerate(zip(aval.shape, shape)):
            solved = d.linear_in_one_variable() if isinstance(d, DimExpr) else None
            if solved is None or solved[0] in env:
                continue
            name, k, c = solved
            value, rem = divmod(n - c, k)
            if rem:
                raise fail(f"Division had remainder {rem} when computing the value of '{name}'")
            env[name] = value
            obtained.append(f"'{name}' = {value} from specification '{d}' for dimension args[{i}].shape[{axis}] (= {n}), ")
    for i, (aval, shape) in enumerate(zip(avals, shapes)):
        for axis, (d, n) in enumerate(zip(aval.shape, shape)):
            if not isinstance(d, DimExpr):
                continue
            missing = d.variables() - set(env)
            if missing:
                raise ValueError(
                    f"Cannot solve for values of dimension variables {sorted(missing)}: minijax solves a variable only "
                    f"from a dimension k*v + c (args[{i}].shape[{axis}] = {d})"
                )
            if d.evaluate(env) != n:
                raise fail(
                    f"Found inconsistency between dimension size args[{i}].shape[{axis}] (= {n}) and the "
                    f"specification '{d}' (= {d.evaluate(env)})"
                )
    for name, value in env.items():
        if value < 1:
            raise fail(f"Expected value >= 1 for dimension variable '{name}'")
    return env


def _specialize(closed: ClosedJaxpr, env: dict[str, int]) -> ClosedJaxpr:
    """The program with its symbolic dimensions replaced by their values: every aval and every
    shape-valued param (re-traced through the primitives' own rules, so the shapes are checked)."""
    jaxpr = closed.jaxpr
    new_in = [ShapedArray(evaluate_shape(v.aval.shape, env), v.aval.dtype, v.aval.weak_type) for v in jaxpr.invars]
    consts = list(closed.consts)

    def run(*args: Any) -> Any:
        return _eval_specialized(jaxpr, consts, env, args)

    return trace_to_jaxpr(run, new_in)[0]


def _concrete_params(params: Any, env: dict[str, int]) -> Any:
    if isinstance(params, DimExpr):
        return params.evaluate(env)
    if isinstance(params, tuple):
        return tuple(_concrete_params(p, env) for p in params)
    if isinstance(params, list):
        return [_concrete_params(p, env) for p in params]
    if isinstance(params, dict):
        return {k: _concrete_params(v, env) for k, v in params.items()}
    if isinstance(params, ClosedJaxpr) and _jaxpr_is_symbolic(params.jaxpr):
        return _specialize(params, env)
    if isinstance(params, Jaxpr) and _jaxpr_is_symbolic(params):
        return _specialize(ClosedJaxpr(params, []), env).jaxpr
    return params


def _jaxpr_is_symbolic(jaxpr: Jaxpr) -> bool:
    return any(is_symbolic_shape(v.aval.shape) for v in jaxpr.invars) or any(
        is_symbolic_shape(getattr(v, "aval", ShapedArray((), np.float32)).shape) for e in jaxpr.eqns for v in e.outvars
    )


def _eval_specialized(jaxpr: Jaxpr, consts: Sequence[Any], env: dict[str, int], args: Sequence[Any]) -> list[Any]:
    values: dict[Any, Any] = {}

    def read(a: Any) -> Any:
        return a.val if isinstance(a, Literal) else values[a]

    for v, c in zip(jaxpr.constvars, consts):
        values[v] = c
    for v, x in zip(jaxpr.invars, args):
        values[v] = x
    for eqn in jaxpr.eqns:
        params = _concrete_params(dict(eqn.params), env)
        outs = eqn.primitive.bind(*[read(a) for a in eqn.invars], **params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        for v, o in zip(eqn.outvars, outs):
            values[v] = o
    return [read(v) for v in jaxpr.outvars]


# --- pytree structures as JSON ---------------------------------------------------------------

_LEAF = object()


def _tree_to_json(tree: tree_util.PyTreeDef) -> Any:
    def enc(node: Any) -> Any:
        if node is _LEAF:
            return "*"
        if node is None:
            return None
        if type(node) is tuple:
            return {"tuple": [enc(c) for c in node]}
        if type(node) is list:
            return {"list": [enc(c) for c in node]}
        if type(node) is dict:
            if not all(isinstance(k, (str, int)) for k in node):
                raise ValueError(f"Cannot serialize a PyTreeDef whose dict keys are not str or int: {tree}")
            return {"dict": [[k, enc(v)] for k, v in node.items()]}
        raise ValueError(
            f"Cannot serialize PyTreeDef containing an unregistered type {type(node).__name__}: minijax's export "
            f"format holds tuples, lists, dicts and None ({tree})"
        )

    return enc(tree_util.tree_unflatten(tree, [_LEAF] * tree.num_leaves))


def _tree_from_json(data: Any) -> tree_util.PyTreeDef:
    def dec(node: Any) -> Any:
        if node == "*":
            return 0
        if node is None:
            return None
        if "tuple" in node:
            return tuple(dec(c) for c in node["tuple"])
        if "list" in node:
            return [dec(c) for c in node["list"]]
        return {k: dec(v) for k, v in node["dict"]}

    return tree_util.tree_structure(dec(data))


def _aval_to_json(a: ShapedArray) -> list[Any]:
    # a symbolic dimension is written as its text ("2*b + 1")
    return [[d if isinstance(d, int) else str(d) for d in a.shape], dtypes.short_dtype_name(a.dtype), a.weak_type]


def _aval_from_json(data: list[Any]) -> ShapedArray:
    shape: tuple[Any, ...] = tuple(d if isinstance(d, int) else parse_dim(d) for d in data[0])
    return ShapedArray(shape, dtypes.dtype_from_short_name(data[1]), bool(data[2]))


# --- Exported --------------------------------------------------------------------------------


class Exported:
    """A program exported by ``export``: types, structures, and the code to run (jaxpr, StableHLO)."""

    def __init__(
        self,
        fun_name: str,
        in_tree: tree_util.PyTreeDef,
        in_avals: tuple[ShapedArray, ...],
        out_tree: tree_util.PyTreeDef,
        out_avals: tuple[ShapedArray, ...],
        platforms: tuple[str, ...],
        jaxpr_text: str,
        stablehlo: str | None,
        consts: Sequence[np.ndarray[Any, Any]],
    ) -> None:
        self.fun_name = fun_name
        self.in_tree = in_tree
        self.in_avals = in_avals
        self.out_tree = out_tree
        self.out_avals = out_avals
        self.platforms = platforms
        self.nr_devices = 1
        self.ordered_effects: tuple[Any, ...] = ()
        self.unordered_effects: tuple[Any, ...] = ()
        self.disabled_safety_checks: tuple[Any, ...] = ()
        self.calling_convention_version = _CALLING_CONVENTION
        self.module_kept_var_idx = tuple(range(len(in_avals)))
        self.uses_global_constants = False
        self._jaxpr_text = jaxpr_text
        self._stablehlo = stablehlo
        self._consts = list(consts)
        self._closed: ClosedJaxpr | None = None
        self._runners: dict[tuple[Device, tuple[tuple[str, int], ...]], Executable] = {}
        self._symbolic = any(is_symbolic_shape(a.shape) for a in in_avals)

    def __repr__(self) -> str:
        return (
            f"Exported(fun_name={self.fun_name!r}, in_tree={self.in_tree}, in_avals={self.in_avals}, "
            f"out_tree={self.out_tree}, out_avals={self.out_avals}, platforms={self.platforms})"
        )

    def mlir_module(self) -> str:
        """The StableHLO module's text (the program's parameters: the constants, then the arguments)."""
        if self._stablehlo is None:
            raise NotImplementedError(
                f"{self.fun_name} was exported on a backend that does not lower to StableHLO (numpy): "
                "it carries its jaxpr only (export on the xla backend for StableHLO)"
            )
        return self._stablehlo

    def jaxpr(self) -> ClosedJaxpr:
        """The exported program as a jaxpr (minijax's own addition: what ``call`` runs where no
        backend takes StableHLO)."""
        if self._closed is None:
            parsed = parse_jaxpr(self._jaxpr_text, self._consts)
            assert isinstance(parsed, ClosedJaxpr)
            self._closed = parsed
        return self._closed

    def has_vjp(self) -> bool:
        return False

    # --- running -----------------------------------------------------------------------------
    def call(self, *args: Any, **kwargs: Any) -> Any:
        flat, in_tree = tree_util.tree_flatten((args, kwargs))
        if in_tree != self.in_tree:
            raise ValueError(
                "The invocation args and kwargs must have the same pytree structure as the args and kwargs "
                f"at export time, but they are {in_tree} and {self.in_tree}"
            )
        shapes = self._check_types(flat)
        here = default_device().platform
        if not _listed(here, self.platforms) and DisabledSafetyCheck.platform() not in self.disabled_safety_checks:
            raise ValueError(
                f"Function '{self.fun_name}' was exported for platforms '{self.platforms}' but it is used on "
                f"'{(_EXPORT_PLATFORM.get(here, here),)}'."
            )
        env: dict[str, int] = {}
        if self._symbolic:
            env = _bind_dims(self.in_avals, shapes)
        if core.current_trace() is not core.eval_trace:
            closed = self.jaxpr()
            outs = _eval_specialized(closed.jaxpr, closed.consts, env, flat) if env else eval_jaxpr(closed.jaxpr, closed.consts, *flat)
            return tree_util.tree_unflatten(self.out_tree, outs)
        device = default_device()
        key = (device, tuple(sorted(env.items())))
        runner = self._runners.get(key)
        if runner is None:
            runner = self._runners[key] = self._compile(device, env)
        out_avals = self.out_avals
        if env:
            out_avals = tuple(a.update(shape=evaluate_shape(a.shape, env)) for a in out_avals)
        consts = [to_device(c, device) for c in self._consts]
        arrays = [to_device(x, device) for x in flat]
        bufs = runner([a._buf for a in [*consts, *arrays]])
        outs = [Array(b, aval, device.backend, device, False) for b, aval in zip(bufs, out_avals)]
        return tree_util.tree_unflatten(self.out_tree, outs)

    def _compile(self, device: Device, env: dict[str, int]) -> Executable:
        backend = device.backend
        const_avals = [ShapedArray(np.shape(c), np.asarray(c).dtype) for c in self._consts]
        in_avals = [a.update(shape=evaluate_shape(a.shape, env)) for a in self.in_avals]
        out_avals = [a.update(shape=evaluate_shape(a.shape, env)) for a in self.out_avals]
        # The StableHLO where it was lowered for this platform; elsewhere (a disabled platform check) the jaxpr.
        if self._stablehlo is not None and _listed(device.platform, self.platforms) and backend.compiles_stablehlo:
            text = self._stablehlo
            if env:  # shape refinement: the module specialized to the arguments' shapes, as JAX does before compiling
                text = backend.refine_exported(text, [*const_avals, *in_avals], out_avals)
            return backend.compile_exported(text, [*const_avals, *in_avals], out_avals)
        closed = self.jaxpr()
        if env:
            closed = _specialize(closed, env)
        return compiled_for(_consts_as_params(closed), device, (), self.fun_name)

    def _check_types(self, flat: Sequence[Any]) -> list[tuple[int, ...]]:
        shapes = []
        for i, (x, aval) in enumerate(zip(flat, self.in_avals)):
            shape, dtype = tuple(np.shape(x)), getattr(x, "dtype", None)
            shapes.append(shape)
            if dtype is None:  # a Python scalar: its weak type fits any float or int parameter
                continue
            if len(shape) != len(aval.shape):
                raise ValueError(f"Rank mismatch for args[{i}]: expected {aval.shape} and called with {shape}")
            if np.dtype(dtype) != aval.dtype:
                raise ValueError(f"Dtype mismatch for args[{i}]: expected {aval.dtype} and called with {np.dtype(dtype)}")
            for d in range(len(shape)):
                if not isinstance(aval.shape[d], DimExpr) and shape[d] != aval.shape[d]:
                    raise ValueError(
                        f"Shape mismatch for args[{i}].shape[{d}] (expected same constant): "
                        f"expected {aval.shape} and called with {shape}"
                    )
        return shapes

    # --- bytes -------------------------------------------------------------------------------
    def serialize(self, vjp_order: int = 0) -> bytearray:
        """The program as bytes in minijax's export format (the module docstring)."""
        if vjp_order:
            raise NotImplementedError("serialize(vjp_order=...): minijax does not export derivatives")
        blobs = []
        for c in self._consts:
            buf = io.BytesIO()
            np.save(buf, np.asarray(c), allow_pickle=False)
            blobs.append(buf.getvalue())
        header = {
            "format_version": _FORMAT_VERSION,
            "fun_name": self.fun_name,
            "platforms": list(self.platforms),
            "disabled_checks": [str(c) for c in self.disabled_safety_checks],
            "in_tree": _tree_to_json(self.in_tree),
            "out_tree": _tree_to_json(self.out_tree),
            "in_avals": [_aval_to_json(a) for a in self.in_avals],
            "out_avals": [_aval_to_json(a) for a in self.out_avals],
            "jaxpr": self._jaxpr_text,
            "stablehlo": self._stablehlo,
            "const_sizes": [len(b) for b in blobs],
        }
        head = json.dumps(header).encode()
        return bytearray(_MAGIC + len(head).to_bytes(8, "little") + head + b"".join(blobs))


def deserialize(blob: bytes | bytearray) -> Exported:
    """An ``Exported`` from ``Exported.serialize()``'s bytes (this process or another)."""
    data = bytes(blob)
    if not data.startswith(_MAGIC):
        raise ValueError(
            "deserialize: the bytes are not a program serialized by minijax's jax.export (they do not start "
            f"with {_MAGIC!r}); JAX's own flatbuffer format is not read"
        )
    pos = len(_MAGIC)
    size = int.from_bytes(data[pos : pos + 8], "little")
    header = json.loads(data[pos + 8 : pos + 8 + size].decode())
    if header.get("format_version") != _FORMAT_VERSION:
        raise ValueError(
            f"deserialize: minijax export format version {header.get('format_version')} is not supported "
            f"(this minijax reads version {_FORMAT_VERSION})"
        )
    pos += 8 + size
    consts = []
    for n in header["const_sizes"]:
        consts.append(np.load(io.BytesIO(data[pos : pos + n]), allow_pickle=False))
        pos += n
    exported = Exported(
        header["fun_name"],
        _tree_from_json(header["in_tree"]),
        tuple(_aval_from_json(a) for a in header["in_avals"]),
        _tree_from_json(header["out_tree"]),
        tuple(_aval_from_json(a) for a in header["out_avals"]),
        tuple(header["platforms"]),
        header["jaxpr"],
        header["stablehlo"],
        consts,
    )
    exported.disabled_safety_checks = tuple(DisabledSafetyCheck(c) for c in header.get("disabled_checks", ()))
    return exported


def _shape_str(shape: Sequence[Any]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _consts_as_params(closed: ClosedJaxpr) -> ClosedJaxpr:
    """The program with its constants as leading parameters: what StableHLO and ``call`` run."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([], [*j.constvars, *j.invars], j.outvars, j.eqns), [])


def default_export_platform() -> str:
    """JAX's name of the platform the default device is on ('cpu', 'cuda')."""
    platform = default_device().platform
    return _EXPORT_PLATFORM.get(platform, platform)


def export(fun_jit: Any, *, platforms: Sequence[str] | None = None, disabled_checks: Sequence[Any] = ()) -> Callable[..., Exported]:
    """``export(jit(f))(*specs, **kwspecs)``: ``f`` traced for the specs (``ShapeDtypeStruct``s or
    arrays) and packaged as an ``Exported``."""
    if not isinstance(fun_jit, Jitted):
        raise ValueError(f"Function to be exported must be the result of `jit` but is: {fun_jit}")
    checks = tuple(disabled_checks)
    for check in checks:
        if not isinstance(check, DisabledSafetyCheck):
            raise TypeError(f"export: disabled_checks takes DisabledSafetyCheck values, got {check!r}")

    def do_export(*args: Any, **kwargs: Any) -> Exported:
        traced = fun_jit.trace(*args, **kwargs)
        entry = traced._entry
        if entry.tracer_consts:
            raise ValueError(f"export of {traced.fun_name}: the function closes over values of an enclosing transformation")
        device = traced._device
        here = _EXPORT_PLATFORM.get(device.platform, device.platform)
        targets = tuple(platforms) if platforms else (here,)
        closed = entry.closed
        consts = [np.asarray(c) for c in closed.consts]
        stablehlo = None
        if device.backend.compiles_stablehlo:
            stablehlo = device.backend.lower_text(_consts_as_params(closed))
            # The lowering is this platform's; it serves others as long as it calls no kernel of this
            # platform's own (the LAPACK custom calls the decompositions lower to on the CPU).
            foreign = [p for p in targets if not _listed(device.platform, (p,))]
            if foreign and "stablehlo.custom_call" in stablehlo:
                raise NotImplementedError(
                    f"export of {traced.fun_name} for platforms {tuple(foreign)}: the program calls {here} kernels "
                    "(custom calls) that minijax cannot lower for another platform; export it on that platform"
                )
        flat_avals = tuple(closed.in_avals)
        exported = Exported(
            traced.fun_name,
            traced.in_tree,
            flat_avals,
            entry.out_tree,
            tuple(entry.out_avals),
            targets,
            str(ClosedJaxpr(closed.jaxpr, closed.consts)),
            stablehlo,
            consts,
        )
        exported.disabled_safety_checks = checks
        exported._closed = ClosedJaxpr(closed.jaxpr, closed.consts)
        return exported

    return do_export
