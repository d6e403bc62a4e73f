"""Arrays over several devices and SPMD programs (issue 17).

A sharded array is one jaxlib global array: one buffer per device of its
mesh, each holding that device's block, under a ``GSPMDSharding`` (the
mesh's devices, and the ``HloSharding`` that says which block each holds).
A jitted program over sharded arrays is compiled once for all of the mesh's
devices (``num_partitions=N``, XLA's SPMD partitioner) with each argument's
and result's layout as an ``mhlo.sharding`` attribute; it runs on every
device at once, on the arrays' own buffers, and its results come back laid
out as the compiled program says (``get_output_shardings``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from jaxlib import xla_client as xc
from jaxlib.mlir import ir

from minijax.core import ShapedArray
from minijax.jaxpr import ClosedJaxpr
from minijax.mesh import Mesh, NamedSharding, PartitionSpec, candidate_specs
from minijax_xla import jaxlib_api
from minijax_xla.lowering import lower_jaxpr

Buffer = Any


def hlo_sharding(sharding: NamedSharding, ndim: int) -> Any:
    """XLA's form of ``sharding`` for an array of rank ``ndim``, over the mesh's
    devices in their flat order (positions in the executable's device list)."""
    mesh = sharding.mesh
    sizes = dict(mesh.shape)
    names = list(mesh.axis_names)
    tiles: list[int] = []
    order: list[int] = []
    for dim in range(ndim):
        entry = sharding.spec[dim] if dim < len(sharding.spec) else None
        if entry is PartitionSpec.UNCONSTRAINED:  # (the partitioner's choice: laid out whole here)
            entry = None
        axes = () if entry is None else ((entry,) if isinstance(entry, str) else tuple(entry))
        tiles.append(math.prod(sizes[a] for a in axes))
        order += [names.index(a) for a in axes]
    unused = [i for i in range(len(names)) if i not in order]
    replication = math.prod(mesh.axis_sizes[i] for i in unused)
    if math.prod(tiles) == 1:
        return xc.HloSharding.replicate()
    subgroups = []
    if replication > 1:
        tiles.append(replication)
        subgroups = [xc.OpSharding.Type.REPLICATED]
    return xc.HloSharding.iota_tile(tiles, list(mesh.axis_sizes), order + unused, subgroups)


def constraint_sharding(sharding: Any, ndim: int) -> str | None:
    """spmdx: the ``mhlo.sharding`` text of a ``sharding_constraint`` on a rank-``ndim`` value
    (positions in the mesh's flat device order, the SPMD program's device list), or None
    when it constrains nothing XLA reads (a one-device layout)."""
    if not isinstance(sharding, NamedSharding) or not isinstance(sharding.mesh, Mesh) or sharding.mesh.size < 2:
        return None
    return str(hlo_sharding(sharding, ndim))


def spec_for(hlo: Any, mesh: Mesh, ndim: int, hints: Sequence[PartitionSpec] = ()) -> PartitionSpec | None:
    """The PartitionSpec over ``mesh`` whose layout is ``hlo``, or None if no spec gives it.

    XLA reports layouts as HloShardings; JAX's arrays carry NamedShardings.
    The ``hints`` (the arguments' specs) are tried first, then every spec
    that maps each mesh axis to at most one dimension (a mesh has a few axes,
    an array a few dimensions: a small search)."""
    if hlo.is_replicated():
        return PartitionSpec()
    names = list(mesh.axis_names)
    for spec in hints:
        if len(spec) <= ndim and hlo_sharding(NamedSharding(mesh, spec), ndim) == hlo:
            return spec
    for _, spec in candidate_specs(names, ndim):
        if hlo_sharding(NamedSharding(mesh, spec), ndim) == hlo:
            return spec
    return None


def _gspmd(pjrt_devices: Sequence[Any], hlo: Any) -> Any:
    return xc.GSPMDSharding(xc.DeviceList(tuple(pjrt_devices)), hlo)


def put_shards(
    host: np.ndarray[Any, Any], sharding: NamedSharding, pjrt_devices: Sequence[Any], indices: Sequence[Any]
) -> Buffer:
    """``host`` laid out by ``sharding``: each device's block copied to it, as one global array.
    ``pjrt_devices`` and ``indices`` (each device's index into ``host``) are in the mesh's flat order."""
    blocks = [jaxlib_api.put(jaxlib_api.c_contiguous(np.asarray(host[index])), d)
              for d, index in zip(pjrt_devices, indices)]  # fmt: skip
    return assemble(ShapedArray(host.shape, host.dtype), hlo_sharding(sharding, host.ndim), pjrt_devices, blocks)


def assemble(aval: ShapedArray, hlo: Any, pjrt_devices: Sequence[Any], blocks: Sequence[Buffer]) -> Buffer:
    """The global array made of ``blocks`` (one per device, in the device list's order)."""
    return xc.ArrayImpl(ShapedArray(aval.shape, aval.dtype), _gspmd(pjrt_devices, hlo), list(blocks), True,
                        _skip_checks=True)  # fmt: skip


def shard_buffers(buffer: Buffer, pjrt_devices: Sequence[Any], shard_shape: tuple[int, ...]) -> list[Buffer]:
    """The per-device buffers of a global array, in its device list's order, each labelled
    with its own aval and device as ``jaxlib_api.put``'s buffers are (an executable's
    results come without: jaxlib fills those in from jax, which minijax does not import)."""
    blocks = list(buffer._arrays)
    aval = ShapedArray(shard_shape, buffer.aval.dtype)
    return [b if b.aval is not None else b._rewrap_with_aval_and_sharding(aval, jaxlib_api.put_sharding(d))
            for b, d in zip(blocks, pjrt_devices)]  # fmt: skip


def to_host(
    buffer: Buffer, pjrt_devices: Sequence[Any], shape: tuple[int, ...], dtype: Any, indices: Sequence[Any]
) -> np.ndarray[Any, Any]:
    """The whole value of a global array, put together on the host from its blocks."""
    whole = np.empty(shape, dtype)
    shard_shape = tuple(len(range(*s.indices(n))) for s, n in zip(indices[0], shape)) if indices else shape
    # npspmd (issue 17): last to first, so that where replicas differ (make_array_from_single_device_arrays
    # compares none) the first device's block is the value, as in JAX
    for block, index in reversed(list(zip(shard_buffers(buffer, pjrt_devices, shard_shape), indices))):
        whole[index] = jaxlib_api.get(block)
    whole.flags.writeable = False
    return whole


def _annotate(
    module: ir.Module, n_devices: int, arg_hlos: Sequence[Any], out_hlos: Sequence[Any | None],
    aliases: Mapping[int, int] | None = None,
) -> None:
    """Give ``module``'s @main its arguments' and results' layouts and the partition count
    (``aliases``: @main's parameter -> the result that takes its donated buffer)."""
    with jaxlib_api.context_lock, module.context, ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)
        module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, n_devices)
        module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)
        main = next(op for op in module.body.operations if ir.StringAttr(op.attributes["sym_name"]).value == "main")

        def attrs(hlos: Sequence[Any | None], extra: Mapping[int, int]) -> Any:
            dicts = []
            for i, hlo in enumerate(hlos):
                entries: dict[str, ir.Attribute] = {} if hlo is None else {"mhlo.sharding": ir.StringAttr.get(str(hlo))}
                if i in extra:
                    entries["tf.aliasing_output"] = ir.IntegerAttr.get(i32, extra[i])
                dicts.append(ir.DictAttr.get(entries))
            return ir.ArrayAttr.get(dicts)

        main.attributes["arg_attrs"] = attrs(arg_hlos, aliases or {})
        main.attributes["res_attrs"] = attrs(out_hlos, {})


def compile_options(pjrt_devices: Sequence[Any], out_given: Sequence[bool]) -> Any:
    """One replica partitioned over the devices, by XLA's SPMD partitioner; the layouts of
    the results not ``out_given`` are the partitioner's to choose (as in JAX: propagated
    from the arguments' through the program)."""
    options = xc.CompileOptions()
    options.executable_build_options.allow_spmd_sharding_propagation_to_output = [not g for g in out_given]
    options.num_replicas = 1
    options.num_partitions = len(pjrt_devices)
    options.executable_build_options.use_spmd_partitioning = True
    options.device_assignment = xc.DeviceAssignment.create(
        np.array([[d.id for d in pjrt_devices]], dtype=np.int32)
    )
    options.executable_build_options.memory_fitting_level = jaxlib_api.MEMORY_FITTING_O2
    # XLA's CPU collectives abort the process when a device thread waits 40 s for the others;
    # on a loaded machine (a test run on 2 cores with 8 simulated devices) that is a scheduling
    # delay, not a deadlock. Wait longer before calling it one.
    options.env_option_overrides = [("xla_cpu_collective_call_terminate_timeout_seconds", "600")]
    return options


def _result_handler(aval: ShapedArray, pjrt_devices: Sequence[Any], hlo: Any) -> Any:
    sharding = _gspmd(pjrt_devices, hlo)
    try:
        return xc.array_result_handler(ShapedArray(aval.shape, aval.dtype), sharding, True, _skip_checks=True)
    except TypeError:  # jaxlib 0.11+
        return xc.array_result_handler(ShapedArray(aval.shape, aval.dtype), sharding, True)


def _callbacks_on_first_device(module: ir.Module) -> None:
    """spmdx: every host callback of ``module`` runs once, on the program's first device, on
    whole values (``{maximal device=0}``, as JAX lays its callbacks out): the partitioner
    gathers the operands there and lays the results out from there."""
    targets = set(jaxlib_api.HOST_CALLBACK_TARGETS.values())
    with jaxlib_api.context_lock, module.context:

        def visit(op: Any) -> Any:
            if op.name == "stablehlo.custom_call" and ir.StringAttr(op.attributes["call_target_name"]).value in targets:
                n = len(op.results)
                # (a tuple sharding for several results, as a token and values)
                text = "{maximal device=0}" if n <= 1 else "{" + ", ".join(["{maximal device=0}"] * n) + "}"
                op.attributes["mhlo.sharding"] = ir.StringAttr.get(text)
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)


def lower_spmd(
    closed: ClosedJaxpr, pjrt_devices: Sequence[Any], in_hlos: Sequence[Any], out_hlos: Sequence[Any | None],
    name: str | None = None, aliases: Mapping[int, int] | None = None,
    host_callbacks: list[Callable[..., Any]] | None = None,
) -> tuple[ir.Module, list[int]]:
    """The SPMD module of ``closed`` (what ``Lowered.as_text()`` shows, spmdx): ``@main``'s
    arguments (the hoisted constants first, replicated) and results carry their layouts,
    the module its partition count; ``aliases`` (input -> output, positions of the
    jaxpr's) are the donated inputs; the Python functions its host callbacks call are
    appended to ``host_callbacks``. Returns it and the hoisted constants' positions."""
    callbacks: list[Callable[..., Any]] = [] if host_callbacks is None else host_callbacks
    module, hoisted = lower_jaxpr(closed, "main", {}, callbacks, jaxlib_api.device_platform(pjrt_devices[0]), pjrt_devices)
    if callbacks:
        _callbacks_on_first_device(module)
    replicated = xc.HloSharding.replicate()
    shifted = {len(hoisted) + i: o for i, o in (aliases or {}).items()}
    _annotate(module, len(pjrt_devices), [replicated] * len(hoisted) + list(in_hlos), out_hlos, shifted)
    if name is not None:  # (as JAX names it: @jit_f)
        with jaxlib_api.context_lock, module.context:
            module.operation.attributes["sym_name"] = ir.StringAttr.get(name)
    return module, hoisted


class SpmdProgram:
    """A jaxpr compiled for all of a mesh's devices: ``run(global arrays) -> global arrays``,
    and the layout XLA gave each result (``out_hlos``)."""

    def __init__(
        self,
        closed: ClosedJaxpr,
        pjrt_devices: Sequence[Any],
        in_hlos: Sequence[Any],
        out_hlos: Sequence[Any | None],
        put_replicated: Callable[[Any, ShapedArray], Buffer],
        aliases: Mapping[int, int] | None = None,
        name: str | None = None,
    ) -> None:
        host_callbacks: list[Callable[..., Any]] = []
        module, hoisted = lower_spmd(closed, pjrt_devices, in_hlos, out_hlos, name, aliases, host_callbacks)
        const_avals = [closed.jaxpr.constvars[i].aval for i in hoisted]
        self.module = module
        client = jaxlib_api.device_client(pjrt_devices[0])
        jaxlib_api.check_module(module, n_host_callbacks=len(host_callbacks))
        options = compile_options(pjrt_devices, [h is not None for h in out_hlos])
        self.executable = client.compile_and_load(module, xc.DeviceList(tuple(pjrt_devices)), options,
                                                  host_callbacks=host_callbacks)  # fmt: skip
        self.out_hlos = [xc.HloSharding.from_proto(s) for s in self.executable.get_output_shardings()]
        handlers = [_result_handler(a, pjrt_devices, h) for a, h in zip(closed.out_avals, self.out_hlos)]
        consts = [put_replicated(closed.consts[i], a) for i, a in zip(hoisted, const_avals)]
        execute_sharded = self.executable.execute_sharded

        def run(args: list[Buffer]) -> list[Buffer]:
            try:
                outs: list[Buffer] = execute_sharded([*consts, *args]).consume_with_handlers(handlers)
            except Exception as e:
                raise jaxlib_api.runtime_error(e) from e
            jaxlib_api.collect_garbage()
            return outs

        def run_waiting(args: list[Buffer]) -> list[Buffer]:
            # With host callbacks (spmdx): the call returns once every callback has run, as the
            # one-device programs' calls do (jaxlib_api.make_waiting_runner says why).
            try:
                outs = jaxlib_api.execute_and_wait(execute_sharded, [*consts, *args], handlers)
            except Exception as e:
                raise jaxlib_api.runtime_error(e) from e
            jaxlib_api.collect_garbage()
            return outs

        def run_in_turn(args: list[Buffer]) -> list[Buffer]:
            # A program with collectives starts once the previous such execution has finished.
            # XLA's CPU collectives wait for every device's thread at a rendezvous; with several
            # executions queued on fewer cores than devices, threads of a later one can hold the
            # pool while an earlier one waits for its last participant, and XLA aborts the process
            # after 40 s ("Termination timeout for all reduce"; real JAX 0.10.2 aborts so on this
            # machine with a loop of 2000 training steps, minijax did within 40 of them).
            previous = _collectives_in_flight[0]
            if previous is not None:
                previous.block_until_ready()
            try:
                results = execute_sharded([*consts, *args], with_tokens=True)
                _collectives_in_flight[0] = results.consume_token()
                outs: list[Buffer] = results.consume_with_handlers(handlers)
            except Exception as e:
                raise jaxlib_api.runtime_error(e) from e
            jaxlib_api.collect_garbage()
            return outs

        if host_callbacks:
            run = run_waiting
        elif _has_collectives(self.executable):
            run = run_in_turn
        self.run = run


# The completion token of the last execution of a program with collectives (SpmdProgram's run_in_turn).
_collectives_in_flight: list[Any] = [None]
_COLLECTIVE_OPS = ("all-reduce", "all-gather", "reduce-scatter", "collective-permute", "all-to-all",
                   "collective-broadcast")  # fmt: skip


def _has_collectives(executable: Any) -> bool:
    text = "\n".join(m.to_string() for m in executable.hlo_modules())
    return any(f" {op}(" in text or f" {op}-start(" in text for op in _COLLECTIVE_OPS)


__all__ = ["SpmdProgram", "assemble", "constraint_sharding", "hlo_sharding", "lower_spmd", "put_shards", "shard_buffers", "spec_for", "to_host"]
