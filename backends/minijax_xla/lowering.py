"""Lowering jaxprs to StableHLO: the rule table and the context rules receive.

Every primitive's lowering rule is registered in ``LOWERINGS`` (one table for
this backend) by the family modules, one per primitive family and named as in
``minijax/primitives/`` (``minijax.primitives.FAMILIES`` lists them). A rule has the signature

    rule(ctx: LoweringRuleContext, *operands: ir.Value, **params) -> Sequence[ir.Value]

and returns one ``ir.Value`` per result of the primitive (a list even for a
single result). It runs with an active MLIR context, location and insertion
point. ``ctx.avals_in`` / ``ctx.avals_out`` are the equation's abstract values.

Rules build ops with the helpers below (``ir_type``, ``constant``,
``broadcast_to_shape``); ``lower_jaxpr`` turns a whole ClosedJaxpr into a
module, one ``func.func`` per jaxpr (nested jits become private functions).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func, stablehlo as hlo

from minijax.core import ShapedArray
from minijax.jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var
from minijax.shape_poly import DimExpr
from minijax_xla import jaxlib_api

LoweringRule = Callable[..., Sequence[Any]]
# combine(accumulators, elements) -> new accumulators, all 0-d: a reduction's body.
Combiner = Callable[[list[ir.Value[Any]], list[ir.Value[Any]]], list[ir.Value[Any]]]

LOWERINGS: dict[str, LoweringRule] = {}


def register(name: str) -> Callable[[LoweringRule], LoweringRule]:
    """Decorator: ``fn`` lowers the primitive called ``name``."""

    def add(fn: LoweringRule) -> LoweringRule:
        LOWERINGS[name] = fn
        return fn

    return add


class LoweringRuleContext:
    """What a rule knows besides its operands: the equation's avals, and the module being built."""

    __slots__ = ("avals_in", "avals_out", "module_context")

    def __init__(self, avals_in: Sequence[ShapedArray], avals_out: Sequence[ShapedArray], module_context: Any) -> None:
        self.avals_in = list(avals_in)
        self.avals_out = list(avals_out)
        # The module under construction (for rules that add functions, e.g. jit
        # or reductions' bodies); set by lower_jaxpr.
        self.module_context = module_context


# --- types and constants (for rules) ---------------------------------------------


def element_type(dtype: Any) -> ir.Type:
    """The MLIR element type of ``dtype`` (i1 for bool, ui32 for uint32, bf16, ...)."""
    return jaxlib_api.element_type(dtype)


def ir_type(aval: ShapedArray) -> ir.RankedTensorType:
    """The tensor type of an aval: ``f32[2,3]`` -> ``tensor<2x3xf32>``."""
    return jaxlib_api.tensor_type(aval.shape, aval.dtype)


def constant(value: Any, dtype: Any) -> ir.Value[Any]:
    """A ``stablehlo.constant`` of ``value`` (scalar or array) cast to ``dtype``."""
    return jaxlib_api.dense_constant(np.asarray(value, dtype=dtype))


def build_combiner(region: ir.Region, dtypes: Sequence[Any], combine: Combiner) -> None:
    """Fill the body region of a (variadic) reduce or reduce_window over operands of ``dtypes``.

    XLA passes the accumulators first, then the elements, one 0-d value each.
    """
    scalars = [jaxlib_api.tensor_type((), dt) for dt in dtypes]
    block = region.blocks.append(*scalars, *scalars)
    n = len(scalars)
    with ir.InsertionPoint(block):
        args: list[ir.Value[Any]] = list(block.arguments)
        hlo.return_(combine(args[:n], args[n:]))


def broadcast_to_shape(value: ir.Value[Any], from_aval: ShapedArray, to_shape: Sequence[int]) -> ir.Value[Any]:
    """Broadcast ``value`` (of ``from_aval``) to ``to_shape`` by NumPy's rule
    (trailing dimensions aligned). Returns ``value`` itself when the shapes match."""
    to_shape = tuple(to_shape)
    if from_aval.shape == to_shape:
        return value
    offset = len(to_shape) - from_aval.ndim
    if offset < 0 or any(d not in (1, to_shape[offset + i]) for i, d in enumerate(from_aval.shape)):
        raise ValueError(f"cannot broadcast {from_aval.str_short()} to shape {to_shape}")
    out_type = jaxlib_api.tensor_type(to_shape, from_aval.dtype)
    result: ir.Value[Any] = hlo.broadcast_in_dim(out_type, value, list(range(offset, len(to_shape))))
    return result


def broadcast_to(value: ir.Value[Any], aval_from: ShapedArray, aval_to: ShapedArray) -> ir.Value[Any]:
    """``broadcast_to_shape`` with the target given as an aval (its dtype is ignored)."""
    return broadcast_to_shape(value, aval_from, aval_to.shape)


# --- lowering a jaxpr ------------------------------------------------------------------

# Closed-over constants up to this many elements are embedded in the module
# (XLA can fold them); larger ones become parameters of main, passed as
# buffers at each call, so big data is neither copied into IR text nor kept
# alive in the shared MLIR context.
INLINE_CONST_MAX_SIZE = 16


class ModuleContext:
    """The module under construction: its symbol names and nested functions."""

    def __init__(
        self, module: ir.Module, host_callbacks: list[Callable[..., Any]] | None = None, platform: str = "cpu",
        spmd_devices: Sequence[Any] | None = None,
    ) -> None:
        self.module = module
        # The values of the symbolic dimensions (jax.export) in the function being built, by name.
        self.dim_values: dict[str, ir.Value[Any]] = {}
        # "cpu" or "gpu": the kernels a custom call may name differ (LAPACK or
        # cuSOLVER, the host-callback target), so some rules ask.
        self.platform = platform
        # Python functions the module's host-callback custom calls name by
        # index (callbacks.py adds them); the backend hands them to XLA.
        self.host_callbacks: list[Callable[..., Any]] = [] if host_callbacks is None else host_callbacks
        # The devices of an SPMD program, in partition order (None: one device). A shard_map
        # over them lowers as a manual region (collectives.py), which ``manual`` describes
        # while its body is lowered.
        self.spmd_devices = None if spmd_devices is None else tuple(spmd_devices)
        self.manual: Any = None
        self._channels = 0
        self._names: set[str] = set()
        # (id(ClosedJaxpr), manual region) -> (the jaxpr, kept alive so the id stays unique;
        # func name; the depth of its deepest output, see MAX_FUSED_DEPTH). Inside a manual
        # region the collectives lower differently: a function is lowered once per region.
        self._lowered: dict[tuple[int, Any], tuple[ClosedJaxpr, str, int]] = {}
        # the types passed -> the identity function that ``fusion_break`` calls
        self._identities: dict[tuple[str, ...], str] = {}

    def fresh_name(self, base: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base) or "fn"
        name, i = base, 0
        while name in self._names:
            i += 1
            name = f"{base}_{i}"
        self._names.add(name)
        return name

    def lower_nested(self, closed: ClosedJaxpr, name: str) -> str:
        """A private ``func.func`` computing ``closed``; returns its symbol name.

        The same ClosedJaxpr called twice is lowered once. Its consts are
        embedded as constants (nested functions take only the call's operands).
        """
        key = (id(closed), self.manual)
        entry = self._lowered.get(key)
        if entry is not None and entry[0] is closed:
            return entry[1]
        sym = self.fresh_name(name)
        self._lowered[key] = (closed, sym, 0)  # (a call of itself is never lowered)
        with ir.InsertionPoint(self.module.body):
            _, depth = _build_func(self, sym, closed, private=True, hoist_consts=False, aliases={})
        self._lowered[key] = (closed, sym, depth)
        return sym

    def new_channel(self) -> int:
        """A fresh channel id for a cross-device collective (XLA pairs the devices' ops by it)."""
        self._channels += 1
        return self._channels

    def fusion_break(self, values: Sequence[ir.Value[Any]]) -> list[ir.Value[Any]]:
        """``values`` passed through a call that XLA keeps (``inlineable="false"``):
        no fusion reaches across it. (An optimization_barrier does not do: XLA's
        CPU pipeline removes those before it fuses.)"""
        types = [v.type for v in values]
        key = tuple(str(t) for t in types)
        sym = self._identities.get(key)
        if sym is None:
            sym = self._identities[key] = self.fresh_name("fusion_break")
            with ir.InsertionPoint(self.module.body):
                fn = func.FuncOp(sym, ir.FunctionType.get(types, types))
                fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
                block = fn.body.blocks.append(*types)
                with ir.InsertionPoint(block):
                    func.ReturnOp(list(block.arguments))
        call = func.CallOp(types, ir.FlatSymbolRefAttr.get(sym), list(values))
        call.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get({"inlineable": ir.StringAttr.get("false")})
        return list(call.results)

    def call_depth(self, eqn: JaxprEqn) -> int:
        """How deep a chain the function an equation calls adds (0 unless it was
        lowered by ``lower_nested``): XLA inlines the call, continuing the chain."""
        deepest = 0
        for value in eqn.params.values():
            if isinstance(value, ClosedJaxpr):
                entry = self._lowered.get((id(value), self.manual))
                if entry is not None and entry[0] is value:
                    deepest = max(deepest, entry[2])
        return deepest


# The longest chain of dependent equations XLA is given without a break. XLA
# fuses a chain of elementwise operations into one loop and analyses that
# fusion recursively, one stack frame per operation, on a compiler thread with
# a 2 MiB stack: a chain of ~21,000 sin, exp or tanh segfaults the process
# (jaxlib 0.10.2, measured). At this depth the chain's values go through a
# call that XLA keeps (``ModuleContext.fusion_break``), so no fusion is deeper.
# One more write and read of the values per MAX_FUSED_DEPTH operations costs
# nothing measurable; the margin covers operations that XLA expands into tens
# of operations of its own (erf_inv, lgamma).
MAX_FUSED_DEPTH = 500


def emit_jaxpr(mctx: ModuleContext, jaxpr: Jaxpr, consts: Sequence[ir.Value[Any]], args: Sequence[ir.Value[Any]]) -> list[ir.Value[Any]]:
    """Emit ``jaxpr``'s equations at the current insertion point.

    ``consts`` and ``args`` are the values of its constvars and invars; the
    result is one value per outvar. Rules of higher-order primitives (cond,
    while) use this to fill their regions.
    """
    return _emit(mctx, jaxpr, consts, args)[0]


def _emit(
    mctx: ModuleContext, jaxpr: Jaxpr, consts: Sequence[ir.Value[Any]], args: Sequence[ir.Value[Any]]
) -> tuple[list[ir.Value[Any]], int]:
    """``emit_jaxpr``, and the depth of its deepest output: how many equations
    in a row (through nested calls, which XLA inlines) since an input or a barrier."""
    env: dict[Var, ir.Value[Any]] = {}
    depth: dict[Var, int] = {}

    def read(atom: Var | Literal) -> ir.Value[Any]:
        if isinstance(atom, Literal):
            return constant(atom.val, atom.aval.dtype)
        return env[atom]

    for v, c in zip(jaxpr.constvars, consts):
        env[v] = c
    for v, a in zip(jaxpr.invars, args):
        env[v] = a
    for eqn in jaxpr.eqns:
        outs = _lower_eqn(mctx, eqn, [read(a) for a in eqn.invars])
        d = 1 + mctx.call_depth(eqn) + max((depth.get(a, 0) for a in eqn.invars if isinstance(a, Var)), default=0)
        if d >= MAX_FUSED_DEPTH and outs:
            outs = mctx.fusion_break(outs)
            d = 0
        for v, out in zip(eqn.outvars, outs):
            if not isinstance(v, DropVar):
                env[v] = out
                depth[v] = d
    out_depth = max((depth.get(v, 0) for v in jaxpr.outvars if isinstance(v, Var)), default=0)
    return [read(v) for v in jaxpr.outvars], out_depth


def _lower_eqn(mctx: ModuleContext, eqn: JaxprEqn, operands: list[ir.Value[Any]]) -> list[ir.Value[Any]]:
    name = eqn.primitive.name
    rule = LOWERINGS.get(name)
    if rule is None:
        raise NotImplementedError(f"the xla backend has no lowering rule for primitive '{name}' (in equation: {eqn})")
    avals_out = [v.aval for v in eqn.outvars]
    ctx = LoweringRuleContext([a.aval for a in eqn.invars], avals_out, mctx)
    try:
        outs = list(rule(ctx, *operands, **eqn.params))
    except Exception as e:
        raise _with_equation(e, eqn) from e
    if len(outs) != len(avals_out):
        raise RuntimeError(
            f"xla lowering rule for '{name}' returned {len(outs)} values, expected {len(avals_out)} (equation: {eqn})"
        )
    for out, aval in zip(outs, avals_out):
        if out.type != ir_type(aval):
            raise RuntimeError(
                f"xla lowering rule for '{name}' produced {out.type}, expected {ir_type(aval)} "
                f"for {aval.str_short()} (equation: {eqn})"
            )
    return outs


def _with_equation(e: Exception, eqn: JaxprEqn) -> Exception:
    """``e`` with the equation appended to its message, keeping its type when possible."""
    if getattr(e, "exact_message", False):  # JAX's text word for word (checkify's): the equation goes in a note
        e.add_note(f"while lowering equation: {eqn}")
        return e
    message = f"{e}\n  while lowering equation: {eqn}"
    try:
        new = type(e)(message)
    except Exception:
        e.add_note(f"while lowering equation: {eqn}")
        return e
    return new


def _build_func(
    mctx: ModuleContext, name: str, closed: ClosedJaxpr, private: bool, hoist_consts: bool, aliases: Mapping[int, int]
) -> tuple[list[int], int]:
    """Add ``func.func @name`` computing ``closed`` at the current insertion
    point; returns the positions (in ``closed.consts``) of the consts that
    became its leading parameters, and the depth of the deepest output
    (``_emit``)."""
    jaxpr = closed.jaxpr
    # Only the embedded consts are read here: a hoisted one is passed by the
    # caller as it is (a captured Array's own buffer), never copied to the host.
    hoisted = [hoist_consts and math.prod(v.aval.shape) > INLINE_CONST_MAX_SIZE for v in jaxpr.constvars]
    param_avals = [v.aval for v, h in zip(jaxpr.constvars, hoisted) if h] + jaxpr.in_avals
    n_hoisted = sum(hoisted)
    fn_type = ir.FunctionType.get([ir_type(a) for a in param_avals], [ir_type(a) for a in jaxpr.out_avals])
    fn = func.FuncOp(name, fn_type)
    if private:
        fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
    if aliases:
        i32 = ir.IntegerType.get_signless(32)
        attrs = [ir.DictAttr.get({}) for _ in param_avals]
        for arg, out in aliases.items():
            attrs[n_hoisted + arg] = ir.DictAttr.get({"tf.aliasing_output": ir.IntegerAttr.get(i32, out)})
        fn.arg_attrs = ir.ArrayAttr.get(attrs)
    block = fn.body.blocks.append(*[ir_type(a) for a in param_avals])
    with ir.InsertionPoint(block):
        params = list(block.arguments)
        saved_dims, saved_active = mctx.dim_values, _ACTIVE[0]
        mctx.dim_values = _dimension_values(param_avals, params)
        _ACTIVE[0] = mctx
        const_params = iter(params[:n_hoisted])
        consts = [
            next(const_params) if h else jaxlib_api.dense_constant(np.asarray(c, dtype=v.aval.dtype))
            for v, c, h in zip(jaxpr.constvars, closed.consts, hoisted)
        ]
        outs, depth = _emit(mctx, jaxpr, consts, params[n_hoisted:])
        func.ReturnOp(outs)
        mctx.dim_values, _ACTIVE[0] = saved_dims, saved_active
    return [i for i, h in enumerate(hoisted) if h], depth


# --- symbolic dimensions (jax.export's shape polymorphism) ---------------------------------


# The module being built (lowering holds jaxlib_api.context_lock): helpers without a rule context
# (a scalar broadcast to a result's shape) read the symbolic dimensions' values from it.
_ACTIVE: list[ModuleContext | None] = [None]


def broadcast_dynamic(value: ir.Value[Any], out_type: ir.RankedTensorType, shape: Sequence[Any], dims: Sequence[int]) -> ir.Value[Any]:
    """``broadcast_in_dim`` to a shape holding symbolic dimensions (``dynamic_broadcast_in_dim``)."""
    mctx = _ACTIVE[0]
    assert mctx is not None, "a symbolic shape outside lower_jaxpr"
    result: ir.Value[Any] = hlo.dynamic_broadcast_in_dim(out_type, value, shape_value(mctx, shape), list(dims))
    return result


def iota(out_type: ir.RankedTensorType, shape: Sequence[Any], dimension: int) -> ir.Value[Any]:
    """``stablehlo.iota`` of ``out_type``; ``dynamic_iota`` where ``shape`` holds symbolic dimensions."""
    mctx = _ACTIVE[0]
    if mctx is not None and any(isinstance(d, DimExpr) for d in shape):
        dynamic: ir.Value[Any] = hlo.dynamic_iota(out_type, shape_value(mctx, shape), dimension)
        return dynamic
    static: ir.Value[Any] = hlo.iota(out_type, dimension)
    return static


def _dimension_values(avals: Sequence[ShapedArray], params: Sequence[ir.Value[Any]]) -> dict[str, ir.Value[Any]]:
    """Each dimension variable a function's parameters carry as a whole dimension, read from the first
    parameter that does (``stablehlo.get_dimension_size``, an i32 scalar)."""
    values: dict[str, ir.Value[Any]] = {}
    for aval, param in zip(avals, params):
        for axis, d in enumerate(aval.shape):
            solved = d.linear_in_one_variable() if isinstance(d, DimExpr) else None
            if solved is not None and solved[0] not in values:
                name, k, c = solved  # the size is k*name + c (the call checked it divides)
                size: ir.Value[Any] = hlo.get_dimension_size(param, axis)
                if c:
                    size = hlo.subtract(size, constant(c, np.int32))
                if k != 1:
                    size = hlo.divide(size, constant(k, np.int32))
                values[name] = size
    return values


def dimension_value(mctx: ModuleContext, d: Any) -> ir.Value[Any]:
    """A dimension (an int or a ``DimExpr``) as an i32 scalar computed in the module."""
    if not isinstance(d, DimExpr):
        return constant(int(d), np.int32)
    missing = d.variables() - set(mctx.dim_values)
    if missing:
        raise NotImplementedError(
            f"xla backend: the dimension {d} needs the variables {sorted(missing)}, which no parameter of the "
            "function being lowered carries as a whole dimension"
        )
    return _emit_dim(mctx, d)


def _emit_dim(mctx: ModuleContext, d: Any) -> ir.Value[Any]:
    if not isinstance(d, DimExpr):
        return constant(int(d), np.int32)
    total: ir.Value[Any] | None = None
    for mono, coeff in d._terms.items():
        term: ir.Value[Any] | None = None if coeff == 1 and mono else constant(coeff, np.int32)
        for atom, power in mono:
            if len(atom) == 1:
                a = mctx.dim_values[atom[0]]
            else:
                num, den = _emit_dim(mctx, atom[1]), _emit_dim(mctx, atom[2])
                # floor division and modulo on non-negative numerators, positive divisors: XLA's truncation agrees
                a = hlo.divide(num, den) if atom[0] == "floordiv" else hlo.remainder(num, den)
            for _ in range(power):
                term = a if term is None else hlo.multiply(term, a)
        assert term is not None
        total = term if total is None else hlo.add(total, term)
    assert total is not None
    return total


def shape_value(mctx: ModuleContext, shape: Sequence[Any]) -> ir.Value[Any]:
    """A shape as a 1-d i32 tensor (the operand of ``dynamic_broadcast_in_dim``, ``dynamic_reshape``...)."""
    if not shape:
        return constant(np.zeros((0,), np.int32), np.int32)
    one = jaxlib_api.tensor_type((1,), np.int32)
    parts = [hlo.reshape(one, dimension_value(mctx, d)) for d in shape]
    return parts[0] if len(parts) == 1 else hlo.concatenate(parts, 0)


def lower_jaxpr(
    closed: ClosedJaxpr,
    name: str = "main",
    aliases: Mapping[int, int] | None = None,
    host_callbacks: list[Callable[..., Any]] | None = None,
    platform: str = "cpu",
    spmd_devices: Sequence[Any] | None = None,
) -> tuple[ir.Module, list[int]]:
    """Lower ``closed`` to a StableHLO module with a public ``func.func @name``.

    Returns the module and the positions in ``closed.consts`` of the consts
    that became its leading parameters (the caller passes their buffers, in
    that order, before the jaxpr's inputs).
    ``aliases`` maps an input position (of the jaxpr's invars) to the output
    that may reuse its buffer (donation). The Python functions the module
    calls back (debug.print, pure_callback, ...) are appended to ``host_callbacks``.
    ``platform`` ("cpu" or "gpu") is where the module will run; ``spmd_devices``, the
    devices of an SPMD program (in partition order), when it runs on several.
    """
    # A context keeps every attribute built in it: a module embedding large
    # constants gets one of its own, which goes with the module.
    context = jaxlib_api.new_mlir_context() if _embeds_large_consts(closed.jaxpr, set()) else jaxlib_api.mlir_context()
    with jaxlib_api.context_lock, context, ir.Location.unknown():
        module = ir.Module.create()
        mctx = ModuleContext(module, host_callbacks, platform, spmd_devices)
        sym = mctx.fresh_name(name)
        with ir.InsertionPoint(module.body):
            hoisted, _ = _build_func(mctx, sym, closed, private=False, hoist_consts=True, aliases=aliases or {})
        try:
            module.operation.verify()
        except ir.MLIRError as e:
            if _is_symbolic(closed.jaxpr):  # a rule that builds a static-shape op for a symbolic dimension
                raise NotImplementedError(
                    "xla backend: a primitive of this shape-polymorphic program (jax.export with symbolic "
                    f"dimensions) has no lowering for symbolic dimensions: {e}"
                ) from e
            raise RuntimeError(f"xla backend: the lowered module does not verify: {e}\n{module}") from e
    return module, hoisted


def _is_symbolic(jaxpr: Jaxpr) -> bool:
    return any(isinstance(d, DimExpr) for v in jaxpr.invars for d in v.aval.shape)


def module_text(module: ir.Module) -> str:
    with jaxlib_api.context_lock, module.context:
        return str(module)


# Constants embedded in a module above this many bytes make lower_jaxpr build
# it in a context of its own (the shared one would keep them for good).
PRIVATE_CONTEXT_MIN_BYTES = 1 << 16


def _embeds_large_consts(jaxpr: Jaxpr, seen: set[int]) -> bool:
    """Does lowering ``jaxpr`` (whose own consts are hoisted) embed a const of
    more than PRIVATE_CONTEXT_MIN_BYTES: one of a nested jaxpr's (a call's,
    a branch's, a loop body's)?"""
    for eqn in jaxpr.eqns:
        for sub in _param_jaxprs(eqn.params):
            if id(sub) in seen:
                continue
            seen.add(id(sub))
            inner = sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub
            if isinstance(sub, ClosedJaxpr) and any(
                math.prod(v.aval.shape) * np.dtype(v.aval.dtype).itemsize > PRIVATE_CONTEXT_MIN_BYTES
                for v in inner.constvars
                if isinstance(v.aval.dtype, np.dtype)
            ):
                return True
            if _embeds_large_consts(inner, seen):
                return True
    return False


def _param_jaxprs(params: Mapping[str, Any]) -> list[ClosedJaxpr | Jaxpr]:
    found: list[ClosedJaxpr | Jaxpr] = []
    for value in params.values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(item, (ClosedJaxpr, Jaxpr)):
                found.append(item)
    return found
