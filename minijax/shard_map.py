"""``shard_map``: run a function once per device block of its inputs, as ``jax.shard_map``.

``shard_map(f, mesh=mesh, in_specs=P('x', 'y'), out_specs=P('x', None))(a)``
splits ``a`` into ``mesh.size`` blocks as the spec says, runs ``f`` on each
block with the mesh axes bound as named axes (so ``psum(v, 'y')``,
``axis_index('x')`` ... combine the blocks), and assembles the results as
``out_specs`` says.

Called on concrete arrays, the body runs eagerly, one primitive at a time
over every device's block (minijax/shard_map_eager.py), as JAX's does. Under
``jit`` or a transformation it is staged: ``f`` is traced once on one
device's blocks, and the call is one ``shard_map`` equation holding that
jaxpr and JAX's params (``mesh``, ``in_specs``, ``out_specs``,
``newly_manual_axes``, ``check_vma``), as ``jax.make_jaxpr`` shows it. How
the backends run the equation: the NumPy backend runs the body once per
device in lockstep; the XLA backend, in a program over the mesh's devices,
lowers it as a manual region with XLA's collectives
(backends/minijax_xla/collectives.py); elsewhere it is expanded into its
per-device program, one nested ``vmap`` per mesh axis with that axis's name
over the blocks stacked along a leading dimension (``_ShardMap.run_flat``,
which grad and transpose also go through). An output whose spec leaves out
a mesh axis must not vary along it: with ``check_vma=True`` the body is run
over every device's blocks as an eager call runs it, whose values know the
axes they vary over (JAX checks it from the types).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

from minijax import core, tree_util
from minijax.array import Array
from minijax.dispatch import eager_rules, run_compiled
from minijax.interpreters import ad, batching
from minijax.interpreters.impl_inline import register_lowering_fun
from minijax.interpreters.tracing import arg_names_of, fun_name, trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, eval_jaxpr, param_filters
from minijax.jaxpr_check import nested_context
from minijax.lax.structural import index_in_dim, reshape, transpose
from minijax.mesh import AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec, get_abstract_mesh, get_mesh
from minijax.placement import holds_shards, put_sharded
from minijax.primitives.autodiff import MESH_OF_EQUATION, reshard_p
from minijax.primitives.collectives import (
    block_shape as _block_shape,
    shard_map_p,
    spec_axes as _spec_axes,
    spec_sizes as _spec_sizes,
)
from minijax.shard_map_eager import ShardMapTrace, ShardMapTracer
from minijax.sharding_rules import explicit_spec, shard_map_out_sharding
from minijax.stages import jit

__all__ = ["per_device_program", "shard_map", "shard_map_p"]


def shard_map(
    f: Callable[..., Any] | None = None,
    /,
    *,
    out_specs: Any,
    in_specs: Any = None,
    mesh: Mesh | AbstractMesh | None = None,
    axis_names: Any = frozenset(),
    check_vma: bool = True,
) -> Any:
    """Map ``f`` over the device blocks of its arguments (``jax.shard_map``); usable as a decorator."""
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                 axis_names=axis_names, check_vma=check_vma)  # fmt: skip
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, but got {f} of type {type(f)}.")

    # (mesh, in_specs when inferred) -> the jitted SPMD program of this shard_map over it
    # (see _laid_out_per_device).
    programs: dict[tuple[Any, ...], Any] = {}

    @functools.wraps(f)
    def mapped(*args: Any) -> Any:
        the_mesh = _current_mesh(mesh)
        manual = tuple(n for n in the_mesh.axis_names if not axis_names or n in axis_names)
        unknown = sorted(set(axis_names) - set(the_mesh.axis_names))
        if unknown:
            raise ValueError(f"shard_map axis_names {unknown} are not axes of the mesh {the_mesh.axis_names}")
        smap = _ShardMap(f, the_mesh, manual, check_vma)
        specs = in_specs
        key: tuple[Any, ...] = (the_mesh,)
        flat, in_tree = tree_util.tree_flatten(args)
        if in_specs is None:  # the arguments' own layouts over this mesh, when they all have one
            inferred = [x._sharding.spec for x in flat
                        if type(x) is Array and isinstance(x._sharding, NamedSharding) and x._sharding.mesh == the_mesh]  # fmt: skip
            if flat and len(inferred) == len(flat):
                specs, key = tree_util.tree_unflatten(in_tree, inferred), (the_mesh, in_tree, *inferred)
        if _runs_eagerly(the_mesh, manual, flat):
            return smap.run_eagerly(args, specs, out_specs)
        if not any(isinstance(x, core.Tracer) for x in flat):
            # Concrete arguments: the equation runs as a jitted program (JAX also stages the
            # body first), laid out per device where the mesh's backend holds shards (a
            # wrong spec leaves the arguments where they are, for the staging to report).
            if in_specs is not None:  # the arguments' layouts over Explicit axes (traced values carry none)
                try:
                    given = _broadcast_specs("shard_map in_specs", in_specs, args)
                except (TypeError, ValueError):
                    given = []  # the staging reports it
                for x, spec in zip(flat, given):
                    smap._check_explicit(x, spec)
            laid_out = _laid_out_per_device(smap, the_mesh, args, specs) if isinstance(the_mesh, Mesh) else None
            program = programs.get((laid_out is not None, *key))
            if program is None:
                def staged(*a: Any, specs: Any = specs) -> Any:
                    return _ShardMap(f, the_mesh, manual, check_vma).bind(a, specs, out_specs)

                out_shardings = None
                if laid_out is not None:
                    out_shardings = tree_util.tree_map(
                        lambda s: NamedSharding(the_mesh, PartitionSpec() if s is None else s), out_specs,
                        is_leaf=lambda s: s is None or isinstance(s, PartitionSpec))  # fmt: skip
                program = programs[(laid_out is not None, *key)] = jit(staged, out_shardings=out_shardings)
            result = program(*(args if laid_out is None else laid_out))
            if laid_out is None and isinstance(the_mesh, Mesh):
                leaves, out_tree = tree_util.tree_flatten(result)
                ospecs = _broadcast_specs("shard_map out_specs", out_specs, result)
                placed = [put_sharded(v, NamedSharding(the_mesh, spec)) for v, spec in zip(leaves, ospecs)]
                result = tree_util.tree_unflatten(out_tree, placed)
            return result
        return smap.bind(args, specs, out_specs)

    return mapped


def _runs_eagerly(mesh: Mesh | AbstractMesh, manual: tuple[str, ...], flat: Sequence[Any]) -> bool:
    """Whether a call runs its body eagerly, one primitive at a time (as JAX does): on concrete
    arguments, over a concrete mesh every axis of which is manual, within this process. (Else:
    one staged equation; a partly manual or multi-process one is not built eagerly.)"""
    return (isinstance(mesh, Mesh) and len(manual) == len(mesh.axis_names)
            and len({d.process_index for d in mesh.devices.flat}) == 1
            and not any(isinstance(x, core.Tracer) for x in flat))  # fmt: skip


@functools.lru_cache(maxsize=256)
def _collective_program(mesh: Mesh, prim: Any, params: tuple[tuple[str, Any], ...], in_vma: tuple[str, ...],
                        out_vma: tuple[str, ...]) -> Any:  # fmt: skip
    """A collective applied in an eager body, as JAX runs it: one jitted shard_map over the mesh
    (so the backends run it across the devices: XLA's cross-device operation, the NumPy backend's
    lockstep). Its operand and result are stacked blocks (one leading dimension per axis they vary
    over, each split over its axis)."""

    def body(block: Any) -> Any:
        local = reshape(block, core.get_aval(block).shape[len(in_vma):])
        out = prim.bind(local, **dict(params))
        return reshape(out, (1,) * len(out_vma) + core.get_aval(out).shape)

    return jit(shard_map(body, mesh=mesh, in_specs=PartitionSpec(*in_vma), out_specs=PartitionSpec(*out_vma), check_vma=False))


def _run_collective(mesh: Mesh, prim: Any, params: dict[str, Any], stacked: Any, in_vma: tuple[str, ...],
                    out_vma: tuple[str, ...]) -> Any:  # fmt: skip
    """ShardMapTrace's way to apply a collective to concrete stacked blocks; None where its params
    cannot key a program (it then runs vectorized)."""
    try:
        program = _collective_program(mesh, prim, tuple(sorted(params.items())), in_vma, out_vma)
    except TypeError:  # (an unhashable param)
        return None
    return program(stacked)


def _laid_out_per_device(smap: _ShardMap, mesh: Mesh, args: tuple[Any, ...], in_specs: Any) -> tuple[Any, ...] | None:
    """``args`` laid out over ``mesh`` by ``in_specs`` as per-device buffers, when the mesh's
    backend holds them (XLA over several devices), no argument is traced and every spec
    divides its argument: then the shard_map runs as one SPMD program, each device computing
    its blocks and the collectives crossing devices. None otherwise (and where a spec is
    wrong, so that ``run`` reports it)."""
    devices = tuple(mesh.devices.flat)
    if len(set(devices)) < 2 or not devices[0].backend.holds_shards(devices):
        return None
    flat, in_tree = tree_util.tree_flatten(args)
    if not flat or any(isinstance(x, core.Tracer) or not core.is_array_like(x) for x in flat):
        return None
    try:
        specs = _broadcast_specs("shard_map in_specs", in_specs, args)
    except (TypeError, ValueError):
        return None
    placed = []
    for x, spec in zip(flat, specs):
        aval = core.get_aval(x)
        if len(spec) > aval.ndim or any(name not in mesh.axis_names for name in spec.axis_names()):
            return None
        try:
            sharding = NamedSharding(mesh, spec)
        except Exception:
            return None
        if not holds_shards(sharding, aval):
            return None
        smap._check_explicit(x, spec)
        placed.append(put_sharded(x, sharding))
    return tuple(tree_util.tree_unflatten(in_tree, placed))


def _current_mesh(mesh: Mesh | AbstractMesh | None) -> Mesh | AbstractMesh:
    if mesh is not None:
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(f"shard_map requires a `jax.sharding.Mesh` or `AbstractMesh` instance for its mesh= argument, but got {mesh} of type {type(mesh)}.")
        return mesh
    concrete = get_mesh()
    found: Mesh | AbstractMesh = concrete if not concrete.empty else get_abstract_mesh()
    if found.empty:
        raise ValueError(
            "The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter into a mesh context, "
            "or pass mesh= to shard_map."
        )
    return found


class _ShardMap:
    def __init__(self, f: Callable[..., Any], mesh: Mesh | AbstractMesh, manual: tuple[str, ...], check_vma: bool) -> None:
        self.f = f
        self.mesh = mesh
        self.manual = manual
        self.check_vma = check_vma
        self.sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))

    # --- errors, in JAX's words ----------------------------------------------------------
    def _mesh_line(self) -> str:
        return (f"The mesh given has shape {tuple(self.mesh.axis_sizes)} with corresponding axis names "
                f"{tuple(self.mesh.axis_names)}.")  # fmt: skip

    def _check_spec(self, spec: PartitionSpec, shape: Sequence[int], what: str, describe: Callable[[], str]) -> None:
        for axis in spec.axis_names():
            if axis not in self.manual:
                raise ValueError(
                    f"shard_map {what} argument must refer to an axis marked as manual "
                    f"({frozenset(self.manual)}), but:\n\n  {what} refers to {axis!r}\n\nCheck the {what} values passed to shard_map."
                )
        name = fun_name(self.f)
        if len(spec) > len(shape):
            raise ValueError(
                f"shard_map applied to the function '{name}' was given an {what} entry which is too long to be "
                f"compatible with the corresponding {'input' if what == 'in_specs' else 'output'} value from the function:\n\n"
                f"{what} is {spec!r} which has length {len(spec)}, but {describe()}, which has rank {len(shape)} "
                f"(and {len(shape)} < {len(spec)})\n\n"
                f"Entries in {what} must be of length no greater than the number of axes in the corresponding "
                f"{'input' if what == 'in_specs' else 'output'} value.\n\n"
                f"Either revise the spec to be shorter, or modify '{name}' so that its "
                f"{'inputs' if what == 'in_specs' else 'outputs'} have sufficient rank."
            )

    def _check_divisible(self, spec: PartitionSpec, shape: Sequence[int], describe: Callable[[], str]) -> None:
        for dim, entry in enumerate(spec):
            axes = _spec_axes(entry)
            parts = math.prod(self.sizes[a] for a in axes)
            if axes and shape[dim] % parts:
                named = f"mesh axis {axes[0]!r}" if len(axes) == 1 else f"mesh axes {axes}"
                name = fun_name(self.f)
                raise ValueError(
                    f"shard_map applied to the function '{name}' was given argument arrays with axis sizes that are "
                    f"not evenly divisible by the corresponding mesh axis sizes:\n\n{self._mesh_line()}\n\n"
                    f"{describe()}, corresponds to in_specs of value {spec!r}, which maps array axis {dim} "
                    f"(of size {shape[dim]}) to {named} (of size {parts}), but {parts} does not evenly divide {shape[dim]}\n\n"
                    "Array arguments' axis sizes must be evenly divisible by the mesh axis or axes indicated by the "
                    "corresponding elements of the argument's in_specs entry. Consider checking that in_specs are "
                    f"correct, and if so consider changing the mesh axis sizes or else padding the input and adapting '{name}' appropriately."
                )

    def _replication_error(self, spec: PartitionSpec, axis: str) -> ValueError:
        return ValueError(
            f"shard_map applied to the function '{fun_name(self.f)}' was given out_specs which require replication which "
            f"can't be statically inferred given the mesh:\n\n{self._mesh_line()}\n\n"
            f"out_specs is {spec!r} which implies that the corresponding output value is replicated across mesh axis "
            f"{axis!r}, but could not infer replication over any axes\n\n"
            "Check if these output values are meant to be replicated over those mesh axes. If not, consider revising "
            "the corresponding out_specs entries. If so, consider disabling the check by passing the check_vma=False "
            "argument to `jax.shard_map`."
        )

    def _check_inferrable(self) -> None:
        """Traced arguments' layouts are known from their types over Explicit mesh axes only (JAX's TypeError)."""
        kinds = dict(zip(self.mesh.axis_names, self.mesh.axis_types))
        if not all(kinds[a] is AxisType.Explicit for a in self.manual):
            axis_types = ", ".join(str(kinds[a]) for a in self.manual)
            raise TypeError(
                "shard_map in_specs argument must be a pytree of `jax.sharding.PartitionSpec` instances, but it was "
                f"`None` when axis_names={frozenset(self.manual)} are of type {axis_types}"
            )

    def _check_explicit(self, x: Any, spec: PartitionSpec) -> None:
        """Over Explicit mesh axes the argument's own layout must be the spec's (JAX checks the types)."""
        explicit = {n for n, t in zip(self.mesh.axis_names, self.mesh.axis_types) if t is AxisType.Explicit and n in self.manual}
        if not explicit or isinstance(x, core.Tracer):
            return  # traced values carry no sharding in minijax: nothing to compare
        ndim = core.get_aval(x).ndim
        have = x._sharding.spec if type(x) is Array and isinstance(x._sharding, NamedSharding) else PartitionSpec()

        def over_explicit(p: PartitionSpec) -> tuple[tuple[str, ...], ...]:
            return tuple(tuple(a for a in _spec_axes(p[d] if d < len(p) else None) if a in explicit) for d in range(ndim))

        if over_explicit(have) != over_explicit(spec):
            shown = PartitionSpec(*(tuple(have)[:ndim] + (None,) * (ndim - len(have))))
            raise ValueError(
                f"in_specs passed to shard_map: {spec!r} does not match the specs of the input: {shown!r} for arg: "
                f"{core.get_aval(x).str_short(short_dtypes=False)}. `in_specs` is an optional argument so you can omit "
                "specifying it and shard_map will infer the in_specs from the arguments. If you want to reshard your "
                "inputs, you can use `jax.reshard` on the arguments and then pass those args to shard_map."
            )

    # --- staging: the body's jaxpr and the equation -----------------------------------------
    def stage(self, args: tuple[Any, ...], in_specs: Any, out_specs: Any) -> tuple[ClosedJaxpr, dict[str, Any], Any]:
        """The body traced on one device's blocks, the equation's params, and the output tree.

        Checks the specs against the arguments and the body's outputs (JAX's errors)."""
        flat, in_tree = tree_util.tree_flatten(args)
        specs, block_avals = self.checked_specs(args, flat, in_specs)
        out_tree_box: list[tree_util.PyTreeDef] = []
        out_specs_box: list[list[PartitionSpec]] = []

        def body(*blocks: Any) -> list[Any]:
            out = self.f(*tree_util.tree_unflatten(in_tree, blocks))
            leaves, tree = tree_util.tree_flatten(out)
            ospecs = _broadcast_specs("shard_map out_specs", out_specs, out)
            for leaf, spec in zip(leaves, ospecs):
                aval = core.get_aval(leaf)
                self._check_spec(spec, aval.shape, "out_specs", functools.partial(self._describe_output, aval))
            out_tree_box.append(tree)
            out_specs_box.append(ospecs)
            return leaves

        with batching.extend_axis_env([(a, self.sizes[a]) for a in self.manual]):
            closed, _ = trace_to_jaxpr(body, block_avals)
        params = {
            "jaxpr": closed, "mesh": self.mesh, "in_specs": tuple(specs), "out_specs": tuple(out_specs_box[0]),
            "newly_manual_axes": frozenset(self.manual), "check_vma": self.check_vma,
        }  # fmt: skip
        if self.check_vma:
            # An output whose spec leaves out a manual axis must not vary along it: the body run
            # over every device's blocks (as an eager call runs it) finds out, as JAX's types do.
            def call(tracers: list[Any]) -> tuple[list[Any], list[PartitionSpec], Any]:
                return list(eval_jaxpr(closed.jaxpr, closed.consts, *tracers)), out_specs_box[0], None

            def per_device(*xs: Any) -> list[Any]:
                return self.per_device_eagerly(call, xs, specs)[0]

            # (over plain types: the block stacking's reshapes are no user's, so no sharding rule's)
            plain = [core.ShapedArray(a.shape, a.dtype, a.weak_type) for a in map(core.get_aval, flat)]
            trace_to_jaxpr(per_device, plain)
        return closed, params, out_tree_box[0]

    def run_eagerly(self, args: tuple[Any, ...], in_specs: Any, out_specs: Any) -> Any:
        """The body on concrete arguments, one primitive at a time over every device's blocks
        (minijax/shard_map_eager.py), the results laid out over the mesh by ``out_specs``."""
        flat, in_tree = tree_util.tree_flatten(args)
        specs, _ = self.checked_specs(args, flat, in_specs)
        # (The blocks' stacking reshapes values in ways no sharding rule follows: over values whose
        # types carry no layout, as the staged program's, minijax/shard_map.py's _run_per_device.)
        plain = [put_sharded(x, NamedSharding(x._sharding.mesh, PartitionSpec())) if _explicitly_laid_out(x) else x
                 for x in flat]  # fmt: skip

        def call(tracers: list[Any]) -> tuple[list[Any], list[PartitionSpec], Any]:
            out = self.f(*tree_util.tree_unflatten(in_tree, tracers))
            leaves, out_tree = tree_util.tree_flatten(out)
            return leaves, _broadcast_specs("shard_map out_specs", out_specs, out), out_tree

        results, out_tree = self.per_device_eagerly(call, plain, specs)
        return tree_util.tree_unflatten(out_tree, results)

    def per_device_eagerly(
        self, call: Callable[[list[Any]], tuple[list[Any], list[PartitionSpec], Any]], flat: Sequence[Any],
        specs: Sequence[PartitionSpec],
    ) -> tuple[list[Any], Any]:  # fmt: skip
        """``call`` (tracers -> result leaves, their out_specs, anything) on every device's blocks of
        ``flat`` under a ShardMapTrace; the results put together by their specs (JAX's error for a
        result varying along an axis its spec leaves out, with ``check_vma``), and the anything."""
        across = _run_collective if all(not isinstance(x, core.Tracer) for x in flat) else None
        trace = ShardMapTrace(core.current_trace(), self.mesh, self.manual, across)
        tracers = [ShardMapTracer(trace, self._stack(x, spec), trace.ordered(set(spec.axis_names())))
                   for x, spec in zip(flat, specs)]  # fmt: skip
        try:
            with core.set_current_trace(trace), batching.extend_axis_env([(a, self.sizes[a]) for a in self.manual]):
                leaves, ospecs, extra = call(tracers)
            results = [self._eager_result(trace, leaf, spec) for leaf, spec in zip(leaves, ospecs)]
        finally:
            trace.invalidate()
        return results, extra

    def _eager_result(self, trace: ShardMapTrace, leaf: Any, spec: PartitionSpec) -> Any:
        """A result of the eager body put together as its out_specs entry says."""
        val, vma = trace.lift(leaf)
        aval = core.get_aval(leaf)
        block = core.ShapedArray(aval.shape, aval.dtype, aval.weak_type)
        self._check_spec(spec, block.shape, "out_specs", functools.partial(self._describe_output, block))
        named = set(spec.axis_names())
        extra = [a for a in vma if a not in named]
        if self.check_vma and extra:
            raise self._replication_error(spec, extra[0])
        with core.set_current_trace(trace.parent):
            for a in reversed(extra):  # (check_vma=False: the first device's value along it)
                val = index_in_dim(val, 0, axis=vma.index(a), keepdims=False)
            kept = tuple(a for a in vma if a in named)
            whole = self._unstack_used(trace.varying(val, kept, trace.ordered(named)), spec)
        if isinstance(whole, core.Tracer) or not isinstance(self.mesh, Mesh):
            return whole  # (the staged check's run)
        return put_sharded(whole, NamedSharding(self.mesh, spec))

    def checked_specs(self, args: tuple[Any, ...], flat: list[Any], in_specs: Any) -> tuple[list[PartitionSpec], list[core.ShapedArray]]:
        """Each argument leaf's spec (given, or inferred from its layout) and its block's type;
        JAX's errors for a spec that does not fit its argument."""
        for x in flat:
            if not core.is_array_like(x):
                raise TypeError(f"shard_map: every argument leaf must be an array, got {type(x).__name__}")
        if in_specs is None:  # inferred from the arguments' own layouts (a traced one's: its type's)
            if any(isinstance(x, core.Tracer) for x in flat):
                self._check_inferrable()
            specs = [_own_spec(x) for x in flat]
        else:
            specs = _broadcast_specs("shard_map in_specs", in_specs, args)
        names = arg_names_of(self.f, args, {})
        block_avals = []
        for i, (x, spec) in enumerate(zip(flat, specs)):
            aval = core.get_aval(x)

            def describe(i: int = i, aval: core.ShapedArray = aval) -> str:
                bound = f", where args[{i}] is bound to {fun_name(self.f)}'s parameter '{names[i]}'" if i < len(names) and names[i] else ""
                return f"the passed args[{i}]{bound}, has shape {aval.str_short(short_dtypes=False)}"

            self._check_spec(spec, aval.shape, "in_specs", describe)
            self._check_divisible(spec, aval.shape, functools.partial(_reworded, describe))
            if in_specs is not None:
                self._check_explicit(x, spec)
            block_avals.append(core.ShapedArray(_block_shape(aval.shape, spec, self.sizes), aval.dtype, aval.weak_type))
        return specs, block_avals

    def bind(self, args: tuple[Any, ...], in_specs: Any, out_specs: Any) -> Any:
        """The shard_map equation on ``args`` (the body staged first)."""
        _, params, out_tree = self.stage(args, in_specs, out_specs)
        outs = shard_map_p.bind(*tree_util.tree_leaves(args), **params)
        return tree_util.tree_unflatten(out_tree, outs)

    def run_flat(self, body: Callable[..., list[Any]], flat: Sequence[Any], specs: Sequence[PartitionSpec],
                 out_specs: Sequence[PartitionSpec]) -> list[Any]:  # fmt: skip
        """``body`` once per device block, as one vectorized program: each manual mesh axis is a
        nested ``vmap`` with that axis's name over the blocks stacked along a leading dimension."""
        stacked = [self._stack(x, spec) for x, spec in zip(flat, specs)]
        outs = self._nest(0, body, stacked, list(specs), [list(out_specs)])
        return [self._unstack(v, spec) for v, spec in zip(outs, out_specs)]

    def _describe_output(self, aval: core.ShapedArray) -> str:
        return f"{fun_name(self.f)}(*args) has shape {aval.str_short(short_dtypes=False)}"

    def _nest(self, level: int, body: Callable[..., list[Any]], args: list[Any], specs: list[PartitionSpec],
              out_specs_box: list[list[PartitionSpec]]) -> list[Any]:  # fmt: skip
        """One vmap per manual mesh axis, the first axis outermost; the body innermost."""
        if level == len(self.manual):
            return body(*args)
        axis = self.manual[level]
        in_dims = [0 if axis in spec.axis_names() else None for spec in specs]

        def inner(*xs: Any) -> list[Any]:
            return self._nest(level + 1, body, list(xs), specs, out_specs_box)

        def out_dims(n: int) -> list[int | None]:
            if not self.check_vma:
                return [0] * n  # every output stacked; the unmentioned axes are read at index 0 below
            return [0 if axis in spec.axis_names() else None for spec in out_specs_box[0]]

        try:
            return batching.vmap_flat(inner, args, in_dims, self.sizes[axis], axis, out_dims)
        except batching.BatchedOutputError as e:
            raise self._replication_error(out_specs_box[0][e.index], axis) from None

    # --- between an array and its stack of blocks -------------------------------------------
    def _stack(self, x: Any, spec: PartitionSpec) -> Any:
        """``x`` with one leading dimension per manual mesh axis its spec uses (in mesh order), then the block."""
        shape = core.get_aval(x).shape
        split_shape: list[int] = []
        where: dict[str, int] = {}
        block_dims: list[int] = []
        for dim, n in enumerate(shape):
            axes = _spec_axes(spec[dim]) if dim < len(spec) else ()
            for a in axes:
                where[a] = len(split_shape)
                split_shape.append(self.sizes[a])
            block_dims.append(len(split_shape))
            split_shape.append(n // math.prod(self.sizes[a] for a in axes))
        order = [where[a] for a in self.manual if a in where] + block_dims
        if not where:
            return x
        return transpose(reshape(x, tuple(split_shape)), tuple(order))

    def _unstack(self, v: Any, spec: PartitionSpec) -> Any:
        """The inverse of ``_stack`` for an output: its stacked mesh dimensions merged back into the array."""
        used = [a for a in self.manual if a in spec.axis_names()]
        if not self.check_vma:
            # Every manual axis was stacked; an axis the spec leaves out is taken at member 0.
            for k in reversed(range(len(self.manual))):
                if self.manual[k] not in used:
                    v = index_in_dim(v, 0, axis=k, keepdims=False)
        return self._unstack_used(v, spec)

    def _unstack_used(self, v: Any, spec: PartitionSpec) -> Any:
        """``v`` stacked along the manual axes its spec names (in mesh order), merged into the array."""
        used = [a for a in self.manual if a in spec.axis_names()]
        lead = len(used)
        aval = core.get_aval(v)
        block = aval.shape[lead:]
        order: list[int] = []
        merged: list[int] = []
        for dim, n in enumerate(block):
            axes = _spec_axes(spec[dim]) if dim < len(spec) else ()
            order.extend(used.index(a) for a in axes)
            order.append(lead + dim)
            merged.append(n * math.prod(self.sizes[a] for a in axes))
        if not used:
            return v
        return reshape(transpose(v, tuple(order)), tuple(merged))


def _explicitly_laid_out(x: Any) -> bool:
    """Whether ``x`` is an Array whose type names Explicit mesh axes (``float32[8@x]``)."""
    if type(x) is not Array or not isinstance(x._sharding, NamedSharding):
        return False
    kinds = dict(zip(x._sharding.mesh.axis_names, x._sharding.mesh.axis_types))
    return any(kinds.get(a) is AxisType.Explicit for a in x._sharding.spec.axis_names())


def _own_spec(x: Any) -> PartitionSpec:
    """The PartitionSpec ``x`` is laid out by: an Array's sharding, a traced value's type's
    (over Explicit axes; unsplit when its type carries none)."""
    if type(x) is Array and isinstance(x._sharding, NamedSharding):
        return x._sharding.spec
    sharding = getattr(core.get_aval(x), "sharding", None) if isinstance(x, core.Tracer) else None
    return sharding.spec if isinstance(sharding, NamedSharding) else PartitionSpec()


def _reworded(describe: Callable[[], str]) -> str:
    """JAX's divisibility message puts the shape right after ``args[i]``, before the binding."""
    head, _, shape = describe().rpartition(", has shape ")
    arg, sep, bound = head.partition(", where ")
    return f"{arg} of shape {shape}{sep}{bound}"


def _broadcast_specs(what: str, specs: Any, tree: Any) -> list[PartitionSpec]:
    """One PartitionSpec per leaf of ``tree``, from ``specs``, a prefix of it (a PartitionSpec is a leaf)."""
    def is_leaf(x: Any) -> bool:
        return x is None or isinstance(x, PartitionSpec)

    spec_leaves, spec_def = tree_util.tree_flatten(specs, is_leaf=is_leaf)
    try:
        subtrees = spec_def.flatten_up_to(tree)
    except Exception:
        raise ValueError(
            f"pytree structure error: {what} is not a prefix of the structure of the values it describes: "
            f"{spec_def} against {tree_util.tree_structure(tree)}"
        ) from None
    out: list[PartitionSpec] = []
    for spec, sub in zip(spec_leaves, subtrees):
        if spec is None:
            spec = PartitionSpec()
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"{what}: every spec must be a jax.sharding.PartitionSpec (jax.P(...)), got {spec!r}")
        out.extend([spec] * len(tree_util.tree_leaves(sub)))
    return out


# ---------------------------------------------------------------------------
# The shard_map primitive: one equation holding the body's jaxpr (typed on one
# device's blocks) and JAX's params. Its operands and results are the global
# arrays. How the XLA backend runs it (eagerly and under jit): the equation
# is expanded before compilation into the per-device program of ``_ShardMap``
# (one nested vmap per manual axis), whose collectives are array operations.
# The NumPy backend runs the body once per device in lockstep instead
# (backends/minijax_numpy/shard_map.py), the readable meaning both must give.


def _run_per_device(
    *args: Any, jaxpr: ClosedJaxpr, mesh: Mesh | AbstractMesh, in_specs: tuple[PartitionSpec, ...],
    out_specs: tuple[PartitionSpec, ...], newly_manual_axes: frozenset[str], check_vma: bool,
) -> list[Any]:  # fmt: skip
    """The equation as ordinary operations: the body once per device block (``_ShardMap.run_flat``)."""
    manual = tuple(a for a in mesh.axis_names if a in newly_manual_axes)

    def body(*blocks: Any) -> list[Any]:
        return list(eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *blocks))

    smap = _ShardMap(body, mesh, manual, check_vma)
    # The blocks' stacking reshapes a value split over Explicit axes in ways no sharding rule
    # follows: the program runs on values whose types carry no layout, and its results get the
    # types the equation gives them (the partitioner places the values either way).
    outs = smap.run_flat(body, [_without_layout(x) for x in args], in_specs, out_specs)
    return [_with_layout(v, mesh, spec) for v, spec in zip(outs, out_specs)]


def _without_layout(x: Any) -> Any:
    sharding = getattr(core.get_aval(x), "sharding", None)
    if not isinstance(x, core.Tracer) or not isinstance(sharding, NamedSharding) or explicit_spec(core.get_aval(x)) is None:
        return x
    return reshard_p.bind(x, dst_sharding=NamedSharding(sharding.mesh, PartitionSpec()), concrete_mesh=None)


def _with_layout(v: Any, mesh: Mesh | AbstractMesh, spec: PartitionSpec) -> Any:
    sharding = shard_map_out_sharding(mesh, spec, core.get_aval(v).ndim)
    if sharding is None or not isinstance(v, core.Tracer):
        return v
    return reshard_p.bind(v, dst_sharding=sharding, concrete_mesh=mesh if isinstance(mesh, Mesh) else None)


register_lowering_fun(shard_map_p, _run_per_device)


def per_device_program(params: dict[str, Any]) -> ClosedJaxpr:
    """The equation's per-device program as a jaxpr of its global operands (what the
    backends run for a ``shard_map`` equation)."""
    sizes = _spec_sizes(params["mesh"])
    avals = []
    for block, spec in zip(params["jaxpr"].in_avals, params["in_specs"]):
        shape = list(block.shape)
        for d, e in enumerate(spec):
            shape[d] *= math.prod(sizes[a] for a in _spec_axes(e))
        avals.append(block.update(shape=tuple(shape)))
    closed, _ = trace_to_jaxpr(lambda *xs: _run_per_device(*xs, **params), avals)
    return closed


def _shard_map_eager(backend: Any, arrays: Sequence[Array], params: dict[str, Any]) -> list[Array]:
    closed, _ = trace_to_jaxpr(lambda *xs: shard_map_p.bind(*xs, **params), [a.aval for a in arrays])
    return run_compiled(backend, closed, arrays)


eager_rules[shard_map_p] = _shard_map_eager


def _shard_map_jvp(trace: ad.JVPTrace, primals: Sequence[Any], tangents: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    if trace.linearizing:
        # grad and vjp: the per-device program is differentiated in place (its transposes
        # are those of the vmapped body), so the cotangent of an input every device reads
        # is the sum of the devices' cotangents, as JAX's transpose makes it.
        tracers = [trace.wrap(p, t) for p, t in zip(primals, tangents)]
        with core.set_current_trace(trace):
            return _run_per_device(*tracers, **params)
    closed: ClosedJaxpr = params["jaxpr"]
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    mesh = params["mesh"]
    with batching.extend_axis_env([(a, s) for a, s in _spec_sizes(mesh).items() if a in params["newly_manual_axes"]]):
        jvp_closed, out_nonzeros = ad.jvp_jaxpr(closed, nonzeros)
    in_specs = params["in_specs"] + tuple(s for s, nz in zip(params["in_specs"], nonzeros) if nz)
    out_specs = params["out_specs"] + tuple(s for s, nz in zip(params["out_specs"], out_nonzeros) if nz)
    n_out = len(closed.out_avals)
    with core.set_current_trace(trace.parent):
        outs = shard_map_p.bind(*primals, *(t for t in tangents if type(t) is not ad.Zero),
                                **{**params, "jaxpr": jvp_closed, "in_specs": in_specs, "out_specs": out_specs})  # fmt: skip
    primal_outs, tangent_outs = outs[:n_out], iter(outs[n_out:])
    return [trace.wrap(p, next(tangent_outs) if nz else ad.Zero(ad.tangent_aval(core.get_aval(p))))
            for p, nz in zip(primal_outs, out_nonzeros)]  # fmt: skip


def _shard_map_transpose(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
    # The per-device program transposed: the vmaps' transposes sum the cotangents of an
    # input over the mesh axes its spec leaves out (JAX's psum over the unmentioned axes).
    avals = [a.aval if ad.is_undefined_primal(a) else core.get_aval(a) for a in args]
    lowered, _ = trace_to_jaxpr(lambda *xs: _run_per_device(*xs, **params), avals)
    return ad.backward_pass(lowered.jaxpr, lowered.consts, args, cts)


def _shard_map_batch(
    trace: batching.BatchTrace, vals: Sequence[Any], dims: Sequence[batching.BatchDim], params: dict[str, Any]
) -> tuple[list[Any], list[batching.BatchDim]]:
    # The batch dimension goes to the front of every block, unsplit (a None leads each spec).
    vals = [v if d is None else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    in_dims = [None if d is None else 0 for d in dims]
    closed: ClosedJaxpr = params["jaxpr"]
    with _body_axis_env(params):
        batched, _ = batching.batch_jaxpr(closed, trace.axis_size, in_dims, [0] * len(closed.out_avals), axis_name=trace.axis_name)
    in_specs = tuple(s if d is None else PartitionSpec(None, *s) for s, d in zip(params["in_specs"], in_dims))
    out_specs = tuple(PartitionSpec(None, *s) for s in params["out_specs"])
    outs = shard_map_p.bind(*vals, **{**params, "jaxpr": batched, "in_specs": in_specs, "out_specs": out_specs})
    return outs, [0] * len(outs)


ad.trace_jvp_rules[shard_map_p] = _shard_map_jvp
ad.transpose_rules[shard_map_p] = _shard_map_transpose
batching.trace_batch_rules[shard_map_p] = _shard_map_batch
param_filters["shard_map"] = lambda params: sorted(params.items())
# jit of a program holding a shard_map compiles it over the shard_map's mesh (as JAX does):
# the XLA backend then lowers the equation as a manual region with real collectives.
MESH_OF_EQUATION[shard_map_p] = lambda params: params["mesh"]


def _body_axis_env(params: dict[str, Any]) -> Any:
    """The names the body's collectives see bound: the manual mesh axes."""
    return batching.extend_axis_env([(a, s) for a, s in _spec_sizes(params["mesh"]).items() if a in params["newly_manual_axes"]])


nested_context["shard_map"] = _body_axis_env
