"""``pmap``: map a function over a leading axis, one slice per device, as ``jax.pmap``.

On a backend that holds arrays as per-device buffers (XLA over several
devices, the NumPy backend's simulated ones) the mapped arguments are laid out
one slice per device and the function is compiled as JAX 0.10 compiles it:
``jit`` of a ``shard_map`` over the one-axis mesh of the devices, whose body
takes its device's slice, so slice ``i`` is computed on device ``i`` and the
collectives over ``axis_name`` (``psum``, ``all_gather``, ...) are XLA's
cross-device ones. The plain form, for what that one does not take (pytree
``in_axes``, donated or keyword arguments, one device), is
``jit(vmap(fun, axis_name=...))``: the same values. As in JAX, the mapped axis may not be longer
than the number of devices: ``XLA_FLAGS=--xla_force_host_platform_device_count=N``
(or the ``jax_num_cpu_devices`` flag) gives the XLA backend N CPU devices.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from minijax import api, core, tree_util
from minijax.lax.structural import expand_dims, squeeze
from minijax.mesh import Mesh, NamedSharding, PartitionSpec
from minijax.placement import put_sharded
from minijax.shard_map import shard_map
from minijax.stages import jit
from minijax.vectorization import vmap


def _argnums(value: int | Iterable[int]) -> tuple[int, ...]:
    # operator.index: a string or float is a TypeError here, not a number.
    return (operator.index(value),) if isinstance(value, int) else tuple(operator.index(v) for v in value)


def pmap(
    fun: Callable[..., Any],
    axis_name: Any = None,
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    static_broadcasted_argnums: int | Iterable[int] = (),
    devices: Sequence[Any] | None = None,
    backend: str | None = None,
    axis_size: int | None = None,
    donate_argnums: int | Iterable[int] = (),
) -> Callable[..., Any]:
    """Map ``fun`` over the leading axis (``in_axes``) of its arguments, with ``axis_name`` bound."""
    static = _argnums(static_broadcasted_argnums)
    donated = _argnums(donate_argnums)
    if set(static) & set(donated):
        raise ValueError(f"pmap: an argument cannot be both static and donated, got static_broadcasted_argnums={static} and donate_argnums={donated}")
    compiled: dict[tuple[Any, ...], Any] = {}

    @functools.wraps(fun)
    def pmapped(*args: Any, **kwargs: Any) -> Any:
        for i in static:
            if not -len(args) <= i < len(args):
                raise ValueError(
                    f"pmapped function has static_broadcasted_argnums={static} but was called with only "
                    f"{len(args)} positional argument{'s' if len(args) != 1 else ''}. All static broadcasted "
                    "arguments must be passed positionally."
                )
        static_positions = {i % len(args) for i in static}
        static_values = tuple((i, args[i]) for i in sorted(static_positions))
        dynamic = [a for i, a in enumerate(args) if i not in static_positions]
        axes = in_axes
        if isinstance(in_axes, (tuple, list)):
            if len(in_axes) != len(args):
                raise ValueError(
                    f"pmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
                    f"arguments passed to the function, but got len(in_axes)={len(in_axes)}, len(args)={len(args)}"
                )
            axes = tuple(a for i, a in enumerate(in_axes) if i not in static_positions)
        size = _mapped_size(dynamic, kwargs, axes, axis_size)
        available = list(devices) if devices is not None else api.local_devices(backend=backend)
        if size is not None and size > len(available):
            raise ValueError(
                f"pmap: the mapped axis has size {size}, but only {len(available)} device(s) are available "
                f"({available}). A pmapped axis may not be longer than the device count; give the XLA backend more "
                "CPU devices with XLA_FLAGS=--xla_force_host_platform_device_count=N, or use vmap."
            )
        laid_out = size is not None and size > 1 and not kwargs and not donated
        mesh = _pmap_mesh(available[:size], axis_name) if laid_out and size is not None else None
        # spmdx: the results stacked along out_axes are laid out over the devices, one slice each (as
        # JAX lays pmap's out), not as the partitioner would lay the vectorized program's out.
        out_shardings = None
        if mesh is not None and (out_axes is None or (isinstance(out_axes, int) and out_axes >= 0)):
            spec = PartitionSpec() if out_axes is None else PartitionSpec(*([None] * out_axes), mesh.axis_names[0])
            out_shardings = NamedSharding(mesh, spec)
        key = (len(args), static_values, out_shardings)
        run = compiled.get(key)
        if run is None:

            def body(*dyn: Any, **kw: Any) -> Any:
                full = list(dyn)
                for i, value in static_values:
                    full.insert(i, value)
                return fun(*full, **kw)

            # Donated positions are renumbered over the dynamic arguments; as in
            # JAX, arguments passed by keyword are never donated.
            positions = [d % len(args) for d in donated if -len(args) <= d < len(args)]
            dyn_donated = tuple(i - sum(1 for s in static_positions if s < i) for i in positions)
            if mesh is not None and _per_device_axes(axes, out_axes):
                run = jit(_per_device(body, axes, out_axes, mesh), donate_argnums=dyn_donated, backend=backend,
                          out_shardings=out_shardings)  # fmt: skip
            else:
                run = jit(vmap(body, in_axes=axes, out_axes=out_axes, axis_name=axis_name, axis_size=axis_size),
                          donate_argnums=dyn_donated, backend=backend, out_shardings=out_shardings)
            compiled[key] = run
        if mesh is not None:
            dynamic = _one_slice_per_device(dynamic, axes, mesh)
        return run(*dynamic, **kwargs)

    return pmapped


def _per_device_axes(in_axes: Any, out_axes: Any) -> bool:
    """Whether the axes are plain enough for the shard_map form: an int or None per argument, and
    the results stacked along a non-negative axis (or not at all)."""
    per_arg = in_axes if isinstance(in_axes, (tuple, list)) else [in_axes]
    plain = all(a is None or (isinstance(a, int) and not isinstance(a, bool)) for a in per_arg)
    return plain and (out_axes is None or (isinstance(out_axes, int) and not isinstance(out_axes, bool) and out_axes >= 0))


def _per_device(body: Callable[..., Any], in_axes: Any, out_axes: int | None, mesh: Mesh) -> Callable[..., Any]:
    """pmap as JAX 0.10 runs it: a shard_map over the one-axis mesh of its devices whose body takes
    its device's slice (the mapped dimension, of size 1 in the block, squeezed out), calls ``body``
    and stacks the results along ``out_axes``. So the collectives over the axis name are the mesh
    axis's: on XLA the cross-device operations of a manual region."""
    name = mesh.axis_names[0]

    def _fun(*dyn: Any) -> Any:  # (named as JAX's: make_jaxpr prints jit[name=_fun])
        per_arg = in_axes if isinstance(in_axes, (tuple, list)) else [in_axes] * len(dyn)

        def spec(leaf: Any, axis: int | None) -> PartitionSpec:
            ndim = core.get_aval(leaf).ndim
            return PartitionSpec() if axis is None else PartitionSpec(*([None] * (axis % ndim)), name)

        in_specs = tuple(tree_util.tree_map(lambda leaf, a=a: spec(leaf, a), x) for x, a in zip(dyn, per_arg))

        def per_device(*blocks: Any) -> Any:
            sliced = [x if a is None else tree_util.tree_map(lambda b, a=a: squeeze(b, (a % core.get_aval(b).ndim,)), x)
                      for x, a in zip(blocks, per_arg)]  # fmt: skip
            out = body(*sliced)
            return out if out_axes is None else tree_util.tree_map(lambda o: expand_dims(o, (out_axes,)), out)

        out_specs = PartitionSpec() if out_axes is None else PartitionSpec(*([None] * out_axes), name)
        return shard_map(per_device, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=False)(*dyn)

    return _fun


def _pmap_mesh(devices: Sequence[Any], axis_name: Any) -> Mesh | None:
    """The mesh pmap lays its arguments and results out over, where the devices' backend holds
    per-device buffers: one axis, named ``axis_name`` or JAX's ``_internal_pmap_axis_name``
    without one (spmdx: so the results' NamedShardings are JAX 0.10's, which has no PmapSharding)."""
    if not devices[0].backend.holds_shards(devices):
        return None
    name = axis_name if isinstance(axis_name, str) else "_internal_pmap_axis_name"
    return Mesh(np.array(devices, dtype=object), (name,))


def _one_slice_per_device(args: list[Any], axes: Any, mesh: Mesh) -> list[Any]:
    """``args`` with each mapped array laid out one slice of its mapped axis per device of
    ``mesh`` (the others replicated)."""
    name = mesh.axis_names[0]
    per_arg = axes if isinstance(axes, (tuple, list)) else [axes] * len(args)
    if not all(a is None or isinstance(a, int) for a in per_arg):
        return args  # (pytree in_axes: left to the one-device path)
    out = []
    for x, axis in zip(args, per_arg):
        leaves = tree_util.tree_leaves(x)
        if any(isinstance(leaf, core.Tracer) for leaf in leaves):
            return args

        def lay_out(leaf: Any, axis: int | None = axis) -> Any:
            ndim = core.get_aval(leaf).ndim
            if axis is not None and not -ndim <= axis < ndim:
                return leaf  # (vmap reports the bad axis)
            spec = PartitionSpec() if axis is None else PartitionSpec(*([None] * (axis % ndim)), name)
            return put_sharded(leaf, NamedSharding(mesh, spec))

        out.append(tree_util.tree_map(lay_out, x))
    return out


def _mapped_size(args: Sequence[Any], kwargs: dict[str, Any], in_axes: Any, axis_size: int | None) -> int | None:
    """The length of the mapped axis, where plain int axes show it (vmap reports inconsistent sizes)."""
    if not isinstance(in_axes, tuple):
        in_axes = (in_axes,) * len(args)
    for arg, axis in zip(args, in_axes):
        if axis is None:
            continue
        leaves = tree_util.tree_leaves(arg)
        for leaf in leaves:
            if core.is_array_like(leaf):
                shape = core.get_aval(leaf).shape
                if isinstance(axis, int) and shape and -len(shape) <= axis < len(shape):
                    return int(shape[axis])
    for leaf in tree_util.tree_leaves(kwargs):
        if core.is_array_like(leaf) and core.get_aval(leaf).shape:
            return int(core.get_aval(leaf).shape[0])
    return axis_size
