"""The primitives of differentiation itself: ``add_any``, ``custom_lin`` and ``stop_gradient``,
and the identities that only a compiler or a checkpoint reads: ``name``, ``optimization_barrier`` and
``sharding_constraint``.

``add_any`` is the sum of two tangents (or cotangents) of one type, and
``custom_lin`` the tangent side of a ``custom_vjp`` function under
linearize: the autodiff machinery (minijax/interpreters/ad.py) stages both
itself. ``stop_gradient`` is the identity whose derivative is zero.
``spec/primitives/autodiff.md`` is the written specification.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax.array import device_put_value
from minijax.backend import Backend
from minijax.core import ShapedArray, get_aval
from minijax.dispatch import eager_rules
from minijax.interpreters import ad, batching
from minijax.jaxpr import Jaxpr, param_filters, subjaxprs
from minijax.mesh import Mesh, NamedSharding, PartitionSpec
from minijax.placement import put_sharded
from minijax.primitives.common import standard_primitive

# ---------------------------------------------------------------------------
# add_any


def _add_any_abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    if x.shape != y.shape or x.dtype != y.dtype:  # add_any C1
        raise TypeError(f"add_any: both operands must have one type, got {x.str_short()} and {y.str_short()}")
    return x  # typed like its first operand, weak type included, as in JAX


add_any_p = standard_primitive("add_any", _add_any_abstract_eval)


def _add_any_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    return [ct, ct]


def _add_any_batcher(vals: Sequence[Any], dims: Sequence[batching.BatchDim]) -> tuple[Any, batching.BatchDim]:
    # Both operands have one type, so an unbatched one only needs the batch axis
    # (inserted where the other operand has it: no transpose).
    (x, y), (dx, dy) = vals, dims
    if dx == dy:
        return add_any_p.bind(x, y), dx
    if dx is None:
        assert dy is not None
        return add_any_p.bind(batching.broadcast(x, get_aval(y).shape[dy], dy), y), dy
    if dy is None:
        return add_any_p.bind(x, batching.broadcast(y, get_aval(x).shape[dx], dx)), dx
    return add_any_p.bind(batching.moveaxis(x, dx, dy), y), dy


ad.deflinear(add_any_p, _add_any_transpose)
batching.primitive_batchers[add_any_p] = _add_any_batcher


# ---------------------------------------------------------------------------
# custom_lin: (residuals, tangents) -> tangents of a custom_vjp function.
# It is only ever transposed (which calls the function's bwd), never evaluated.


def _custom_lin_abstract_eval(*avals: ShapedArray, out_avals: Sequence[ShapedArray], **_: Any) -> list[ShapedArray]:
    return list(out_avals)


custom_lin_p = standard_primitive("custom_lin", _custom_lin_abstract_eval, multiple_results=True)
param_filters["custom_lin"] = lambda params: [(k, params[k]) for k in ("bwd", "in_zeros", "num_res", "symbolic_zeros")]

_NO_FORWARD_MODE = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."


def _custom_lin_transpose(
    cts: Sequence[Any], *args: Any, bwd: Any, in_zeros: Sequence[bool], num_res: int, symbolic_zeros: bool,
    res_is_array: Sequence[bool] = (), **_: Any,
) -> list[Any]:
    # A scalar Array residual is inlined into the linear jaxpr as a literal and
    # comes back here as a Python scalar; bwd must see the Array fwd returned.
    residuals = [
        device_put_value(r) if is_arr and isinstance(r, (bool, int, float, complex, np.generic)) else r
        for r, is_arr in zip(args[:num_res], res_is_array or [False] * num_res)
    ]
    if not symbolic_zeros:
        cts = [ad.instantiate_zeros(ct) for ct in cts]
    cts_in = list(bwd(list(residuals), list(cts)))
    linear_args = args[num_res:]
    # Inputs whose tangent was a symbolic zero were not passed when symbolic_zeros is on.
    if symbolic_zeros:
        cts_in = [ct for ct, z in zip(cts_in, in_zeros) if not z]
    return [None] * num_res + cts_in[: len(linear_args)]


def _custom_lin_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    raise TypeError(_NO_FORWARD_MODE)


def _custom_lin_batcher(vals: Sequence[Any], dims: Sequence[batching.BatchDim], **params: Any) -> tuple[Any, Any]:
    # Batching custom_lin means evaluating the tangent map of a custom_vjp
    # function, which is forward mode.
    raise TypeError(_NO_FORWARD_MODE)


ad.primitive_jvps[custom_lin_p] = _custom_lin_jvp
ad.transpose_rules[custom_lin_p] = _custom_lin_transpose
batching.primitive_batchers[custom_lin_p] = _custom_lin_batcher


# ---------------------------------------------------------------------------
# stop_gradient


def _stop_gradient_rule(x: ShapedArray) -> ShapedArray:
    return x


stop_gradient_p = standard_primitive("stop_gradient", _stop_gradient_rule)
ad.defjvp_zero(stop_gradient_p)
batching.defvectorized(stop_gradient_p)


# ---------------------------------------------------------------------------
# name (jax.ad_checkpoint.checkpoint_name)


def _name_rule(x: ShapedArray, *, name: str) -> ShapedArray:
    # name C1: the name is a string (JAX takes any hashable; its printer shows str()).
    return x


name_p = standard_primitive("name", _name_rule)


def _name_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, name: str) -> tuple[Any, Any]:
    # Only the primal carries the name: a checkpoint policy asks about primal values, and the
    # tangent is then linear (no name equation ever needs transposing).
    return name_p.bind(primals[0], name=name), tangents[0]


ad.primitive_jvps[name_p] = _name_jvp
batching.defvectorized(name_p)


# ---------------------------------------------------------------------------
# optimization_barrier: the identity on any number of operands, which XLA may
# not look through (no fusion, no common-subexpression elimination across it).


def _optimization_barrier_rule(*avals: ShapedArray) -> list[ShapedArray]:
    return list(avals)


optimization_barrier_p = standard_primitive("optimization_barrier", _optimization_barrier_rule, multiple_results=True)


def _optimization_barrier_transpose(cts: Sequence[Any], *operands: Any) -> list[Any]:
    # The identity's transpose, behind a barrier of its own (as JAX's is).
    return list(optimization_barrier_p.bind(*(ad.instantiate_zeros(ct) for ct in cts)))


def _optimization_barrier_batcher(vals: Sequence[Any], dims: Sequence[batching.BatchDim]) -> tuple[Any, Any]:
    return optimization_barrier_p.bind(*vals), list(dims)


# Linear in every operand: the tangents pass through a barrier of their own.
ad.deflinear(optimization_barrier_p, _optimization_barrier_transpose)
batching.primitive_batchers[optimization_barrier_p] = _optimization_barrier_batcher


# ---------------------------------------------------------------------------
# sharding_constraint (spmdx, issue 17): the identity that tells the SPMD
# partitioner how its operand must be laid out there (lax.with_sharding_constraint
# of a traced value). Only a compiler partitioning the program over several
# devices reads it; everywhere else it is the identity.


class _Text:
    """A param value that prints as the given text (JAX's forms of a frozenset and a mesh)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


def _frozenset_text(dims: frozenset[int]) -> str:
    return "frozenset({" + ", ".join(map(str, sorted(dims))) + "})"


def _sharding_constraint_rule(aval: ShapedArray, *, sharding: Any, layout: Any, context_mesh: Any,
                              unconstrained_dims: frozenset[int]) -> ShapedArray:  # fmt: skip
    spec = getattr(sharding, "spec", None)
    if spec is not None and len(spec) > len(aval.shape):  # sharding_constraint C1
        raise ValueError(
            f"One of with_sharding_constraint arguments was given the sharding {sharding!r}, which implies that "
            f"it has a rank of at least {len(spec)}, but it is {len(aval.shape)}"
        )
    return aval


sharding_constraint_p = standard_primitive("sharding_constraint", _sharding_constraint_rule)
param_filters["sharding_constraint"] = lambda params: [
    # (an empty context mesh prints as JAX prints it: Mesh())
    ("context_mesh", _Text("Mesh()") if getattr(params["context_mesh"], "empty", False) else params["context_mesh"]),
    ("layout", params["layout"]), ("sharding", params["sharding"]),
    ("unconstrained_dims", _Text(_frozenset_text(params["unconstrained_dims"]))),
]  # fmt: skip


def _sharding_constraint_eager(backend: Backend, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    # Outside a trace the value is laid out now, as with_sharding_constraint lays out concrete values.
    return [put_sharded(args[0], params["sharding"])]


def _sharding_constraint_batcher(vals: Sequence[Any], dims: Sequence[batching.BatchDim], *, sharding: Any,
                                 **params: Any) -> tuple[Any, Any]:  # fmt: skip
    (x,), (d,) = vals, dims
    spec = getattr(sharding, "spec", None)
    if d is batching.not_mapped or spec is None:
        return sharding_constraint_p.bind(x, sharding=sharding, **params), d
    # The mapped dimension is the partitioner's to lay out (JAX: P.UNCONSTRAINED there).
    entries = list(spec) + [None] * (len(x.shape) - 1 - len(spec))
    entries.insert(d, PartitionSpec.UNCONSTRAINED)
    dims_out = frozenset({d} | {u + (u >= d) for u in params.pop("unconstrained_dims")})
    new = NamedSharding(sharding.mesh, PartitionSpec(*entries))
    return sharding_constraint_p.bind(x, sharding=new, unconstrained_dims=dims_out, **params), d


eager_rules[sharding_constraint_p] = _sharding_constraint_eager
# Linear: the tangent and the cotangent are laid out as the primal is (as in JAX).
ad.deflinear(sharding_constraint_p, lambda ct, x, **params: [sharding_constraint_p.bind(ad.instantiate_zeros(ct), **params)])
batching.primitive_batchers[sharding_constraint_p] = _sharding_constraint_batcher


# primitive -> the mesh one of its equations lays values out over (from its params), for
# ``partitioning_mesh``: with_sharding_constraint's here, shard_map's in collectives.py.
MESH_OF_EQUATION: dict[Any, Callable[[dict[str, Any]], Any]] = {
    sharding_constraint_p: lambda params: getattr(params["sharding"], "mesh", None),
}


def partitioning_mesh(jaxpr: Jaxpr) -> Any:
    """The mesh of the first equation in ``jaxpr`` (or a jaxpr in its params) that lays values
    out over several devices (a ``sharding_constraint``, a ``shard_map``), or None: jit runs
    such a program partitioned over that mesh, as JAX does."""
    for eqn in jaxpr.eqns:
        mesh_of = MESH_OF_EQUATION.get(eqn.primitive)
        if mesh_of is not None:
            mesh = mesh_of(eqn.params)
            if isinstance(mesh, Mesh) and mesh.size > 1:
                return mesh
        for sub in subjaxprs(eqn.params):
            found = partitioning_mesh(sub)
            if found is not None:
                return found
    return None


__all__ = ["add_any_p", "custom_lin_p", "name_p", "optimization_barrier_p", "MESH_OF_EQUATION", "partitioning_mesh",
           "sharding_constraint_p", "stop_gradient_p"]  # fmt: skip


# ---- reshard: a traced value's layout changed by its type (jax.reshard inside a trace) ----
#
# ``dst_sharding`` is the layout the result's type carries (over a concrete or an abstract
# mesh); ``concrete_mesh`` the concrete mesh it was given over, or None. The value passes
# unchanged on every backend: where it lives is the type's business (a program's results are
# laid out as their types say). JAX prints the equation with no params.


def _reshard_rule(aval: ShapedArray, *, dst_sharding: Any, concrete_mesh: Any) -> ShapedArray:
    spec = getattr(dst_sharding, "spec", None)
    if spec is not None and len(spec) > len(aval.shape):
        raise ValueError(
            f"reshard: the sharding {dst_sharding!r} has {len(spec)} entries, more than the rank {len(aval.shape)} "
            f"of the value {aval.str_short()}; give one entry per dimension at most."
        )
    return aval


reshard_p = standard_primitive("reshard", _reshard_rule)
param_filters["reshard"] = lambda params: []


def _reshard_eager(backend: Backend, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    return [put_sharded(args[0], params["dst_sharding"])]


def _reshard_transpose(ct: Any, x: Any, *, dst_sharding: Any, concrete_mesh: Any) -> list[Any]:
    # The cotangent goes back to the operand's layout (its type's, or none).
    source = getattr(x.aval, "sharding", None)
    ct = ad.instantiate_zeros(ct)
    if not isinstance(source, NamedSharding):
        return [ct]
    return [reshard_p.bind(ct, dst_sharding=source, concrete_mesh=None)]


def _reshard_batcher(vals: Sequence[Any], dims: Sequence[batching.BatchDim], *, dst_sharding: Any,
                     concrete_mesh: Any) -> tuple[Any, Any]:  # fmt: skip
    (x,), (d,) = vals, dims
    spec = getattr(dst_sharding, "spec", None)
    if d is batching.not_mapped or spec is None:
        return reshard_p.bind(x, dst_sharding=dst_sharding, concrete_mesh=concrete_mesh), d
    entries = list(spec) + [None] * (len(x.shape) - 1 - len(spec))
    # The mapped dimension keeps the layout the operand's type gives it (as JAX's vmap does).
    operand = getattr(get_aval(x), "sharding", None)
    given = tuple(operand.spec) if isinstance(operand, NamedSharding) else ()
    entries.insert(d, given[d] if d < len(given) else None)
    new = NamedSharding(dst_sharding.mesh, PartitionSpec(*entries))
    return reshard_p.bind(x, dst_sharding=new, concrete_mesh=concrete_mesh), d


eager_rules[reshard_p] = _reshard_eager
ad.deflinear(reshard_p, _reshard_transpose)
batching.primitive_batchers[reshard_p] = _reshard_batcher
