"""The NumPy backend's ``shard_map``: the body run once per device, in lockstep (issue 17).

This is the executable spec of shard_map's meaning. Each operand is cut into
the blocks its ``in_specs`` give the devices of the mesh's manual axes; the
body's equations then run one at a time, each on every device's values (one
list per variable, a value per device); a collective is the one equation
that looks across that list, as its definition says (``psum`` adds the values
of the devices that differ only along its axes, ``ppermute`` moves them, ...);
and the results are put together as ``out_specs`` say, a replicated one read
from the first device along the axes its spec leaves out.

The XLA backend runs the same equation as one program over the body
vectorized along the mesh axes (minijax/shard_map.py); the shard_map tests
run every program on both backends and compare. A body whose collectives sit
inside a loop or a branch (``scan``, ``while``, ``cond``: their per-device
runs could not meet at the collective in lockstep) runs through that
vectorized program here too.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, subjaxprs
from minijax.primitives.collectives import COLLECTIVE_PRIMITIVES, axis_tuple, is_positional, spec_axes, spec_sizes
from minijax.shard_map import per_device_program
from minijax_numpy.table import IMPLS, JaxprCompiler

Array = np.ndarray[Any, Any]
Coords = dict[str, int]  # a device's position along each manual axis

_COLLECTIVES = frozenset(p.name for p in COLLECTIVE_PRIMITIVES)
# Calls whose jaxpr runs inline, so their collectives too can meet in lockstep.
_INLINED = {"jit": "jaxpr", "remat2": "jaxpr", "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr"}


def compile_shard_map(backend: JaxprCompiler, params: dict[str, Any]) -> Callable[..., list[Array]]:
    """The ``shard_map`` equation as a function of its global operands."""
    body: ClosedJaxpr = params["jaxpr"]
    manual = tuple(a for a in params["mesh"].axis_names if a in params["newly_manual_axes"])
    if not _lockstep_possible(body.jaxpr, set(manual)):
        fallback = per_device_program(params)
        return backend.compile_jaxpr(fallback.jaxpr, fallback.consts)
    sizes = spec_sizes(params["mesh"])
    devices = [dict(zip(manual, c)) for c in itertools.product(*(range(sizes[a]) for a in manual))]
    run_body = _lockstep(backend, body.jaxpr, sizes)

    def run(*args: Array) -> list[Array]:
        blocks = [[_block(np.asarray(x), spec, sizes, d) for d in devices] for x, spec in zip(args, params["in_specs"])]
        consts = [[np.asarray(c)] * len(devices) for c in body.consts]
        outs = run_body(devices, consts + blocks)
        return [_assemble(per_device, spec, sizes, devices) for per_device, spec in zip(outs, params["out_specs"])]

    return run


def _lockstep_possible(jaxpr: Jaxpr, manual: set[str]) -> bool:
    """Whether every collective of ``jaxpr`` can run across the device list: at the top
    level or in inlined calls, and over manual axes only."""
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name in _COLLECTIVES:
            named = [a for a in _axes_of(eqn) if not is_positional(a)]
            if not set(named) <= manual or eqn.params.get("axis_index_groups") is not None:
                return False
        elif name in _INLINED:
            if not _lockstep_possible(_inner(eqn).jaxpr, manual):
                return False
        elif any(_has_collective(sub) for sub in subjaxprs(eqn.params)):
            return False
    return True


def _has_collective(jaxpr: Jaxpr) -> bool:
    return any(e.primitive.name in _COLLECTIVES or any(_has_collective(s) for s in subjaxprs(e.params)) for e in jaxpr.eqns)


def _inner(eqn: JaxprEqn) -> ClosedJaxpr:
    inner: ClosedJaxpr = eqn.params[_INLINED[eqn.primitive.name]]
    return inner


def _axes_of(eqn: JaxprEqn) -> tuple[Any, ...]:
    return tuple(eqn.params["axes"]) if "axes" in eqn.params else axis_tuple(eqn.params["axis_name"])


# ---------------------------------------------------------------------------
# Blocks in, results out


def _block(x: Array, spec: Any, sizes: dict[str, int], device: Coords) -> Array:
    """Device ``device``'s block of ``x`` split as ``spec`` says."""
    index: list[slice] = []
    for d, n in enumerate(x.shape):
        axes = spec_axes(spec[d] if d < len(spec) else None)
        count = math.prod(sizes[a] for a in axes)
        k = _member(device, axes, sizes)
        index.append(slice(k * (n // count), (k + 1) * (n // count)))
    return x[tuple(index)]


def _assemble(per_device: Sequence[Array], spec: Any, sizes: dict[str, int], devices: Sequence[Coords]) -> Array:
    """The global array whose blocks are ``per_device``; along a manual axis the spec
    leaves out, the first device's value."""
    block = np.asarray(per_device[0])
    named = {a for e in spec for a in spec_axes(e)}
    shape = [n * math.prod(sizes[a] for a in spec_axes(spec[d] if d < len(spec) else None)) for d, n in enumerate(block.shape)]
    out = np.empty(shape, block.dtype)
    for device, value in zip(devices, per_device):
        if any(k != 0 for a, k in device.items() if a not in named):
            continue
        index = []
        for d, n in enumerate(block.shape):
            k = _member(device, spec_axes(spec[d] if d < len(spec) else None), sizes)
            index.append(slice(k * n, (k + 1) * n))
        out[tuple(index)] = value
    return out


def _member(device: Coords, axes: Sequence[str], sizes: dict[str, int]) -> int:
    """The device's position among the devices that differ only along ``axes`` (row-major, in that order)."""
    k = 0
    for a in axes:
        k = k * sizes[a] + device[a]
    return k


# ---------------------------------------------------------------------------
# The body, one equation at a time on every device's values


def _lockstep(backend: JaxprCompiler, jaxpr: Jaxpr, sizes: dict[str, int]) -> Callable[[list[Coords], list[list[Array]]], list[list[Array]]]:
    steps: list[Callable[[list[Coords], dict[Var, list[Array]]], None]] = [_step(backend, eqn, sizes) for eqn in jaxpr.eqns]

    def run(devices: list[Coords], inputs: list[list[Array]]) -> list[list[Array]]:
        env: dict[Var, list[Array]] = dict(zip([*jaxpr.constvars, *jaxpr.invars], inputs))
        for step in steps:
            step(devices, env)
        return [_read(env, v, len(devices)) for v in jaxpr.outvars]

    return run


def _read(env: dict[Var, list[Array]], atom: Var | Literal, n: int) -> list[Array]:
    return [np.asarray(atom.val, atom.aval.dtype)] * n if isinstance(atom, Literal) else env[atom]


def _step(backend: JaxprCompiler, eqn: JaxprEqn, sizes: dict[str, int]) -> Callable[[list[Coords], dict[Var, list[Array]]], None]:
    name = eqn.primitive.name
    if name in _COLLECTIVES:
        combine = functools.partial(_COMBINE[name], sizes=sizes, **eqn.params)

        def collective(devices: list[Coords], env: dict[Var, list[Array]]) -> None:
            (x,) = [_read(env, a, len(devices)) for a in eqn.invars] or [[]]  # axis_index reads no operand
            (out,) = eqn.outvars
            env[out] = [np.asarray(v, out.aval.dtype) for v in combine(x, devices)]

        return collective
    if name in _INLINED and _has_collective(_inner(eqn).jaxpr):
        inner = _inner(eqn)
        run_inner = _lockstep(backend, inner.jaxpr, sizes)

        def inlined(devices: list[Coords], env: dict[Var, list[Array]]) -> None:
            consts = [[np.asarray(c)] * len(devices) for c in inner.consts]
            outs = run_inner(devices, consts + [_read(env, a, len(devices)) for a in eqn.invars])
            env.update(zip(eqn.outvars, outs))

        return inlined
    # Any other equation runs on each device alone, as the backend runs it anywhere.
    operands = list(dict.fromkeys(a for a in eqn.invars if isinstance(a, Var)))
    one = backend.compile_jaxpr(Jaxpr([], operands, list(eqn.outvars), [eqn]), [])

    def per_device(devices: list[Coords], env: dict[Var, list[Array]]) -> None:
        results = [one(*vals) for vals in zip(*(env[v] for v in operands))] if operands else [one() for _ in devices]
        for i, out in enumerate(eqn.outvars):
            env[out] = [r[i] for r in results]

    return per_device


# ---------------------------------------------------------------------------
# The collectives, over the device list. ``groups`` lists, for each device, the
# devices it meets: those that differ from it only along the named axes, in
# their row-major order along those axes (a device's member index).


def _groups(devices: list[Coords], axes: Sequence[str]) -> list[list[int]]:
    by_rest: dict[tuple[int, ...], list[tuple[tuple[int, ...], int]]] = {}
    for i, d in enumerate(devices):
        rest = tuple(k for a, k in sorted(d.items()) if a not in axes)
        by_rest.setdefault(rest, []).append((tuple(d[a] for a in axes), i))
    return [[i for _, i in sorted(by_rest[tuple(k for a, k in sorted(d.items()) if a not in axes)])] for d in devices]


_REDUCERS: dict[str, Callable[[Array, Array], Array]] = {"psum": np.add, "pmax": np.maximum, "pmin": np.minimum}
_LOCAL = {"psum": "reduce_sum", "pmax": "reduce_max", "pmin": "reduce_min"}


def _allreduce(name: str) -> Callable[..., list[Array]]:
    def combine(xs: list[Array], devices: list[Coords], *, axes: tuple[Any, ...], sizes: dict[str, int], **_: Any) -> list[Array]:
        positional = tuple(int(a) for a in axes if is_positional(a))
        if positional:  # the positional axes (a vmap's inside the body) reduce each device's own value
            xs = [IMPLS[_LOCAL[name]](x, axes=positional) for x in xs]
        named = [a for a in axes if not is_positional(a)]
        reduce = _REDUCERS[name]
        return [functools.reduce(reduce, [xs[j] for j in group]) for group in _groups(devices, named)]

    return combine


def _all_gather(xs: list[Array], devices: list[Coords], *, axis_name: Any, all_gather_dimension: int, tiled: bool,
                sizes: dict[str, int], **_: Any) -> list[Array]:  # fmt: skip
    join = np.concatenate if tiled else np.stack
    return [join([xs[j] for j in group], axis=all_gather_dimension) for group in _groups(devices, axis_tuple(axis_name))]


def _reduce_scatter(xs: list[Array], devices: list[Coords], *, axis_name: Any, scatter_dimension: int, tiled: bool,
                    axis_size: int, sizes: dict[str, int], **_: Any) -> list[Array]:  # fmt: skip
    out = []
    for i, group in enumerate(_groups(devices, axis_tuple(axis_name))):
        total = functools.reduce(np.add, [xs[j] for j in group])
        k = group.index(i)
        chunks = np.split(total, axis_size, axis=scatter_dimension)
        out.append(chunks[k] if tiled else np.take(total, k, axis=scatter_dimension))
    return out


def _axis_index(xs: list[Any], devices: list[Coords], *, axis_name: Any, sizes: dict[str, int], **_: Any) -> list[Array]:
    return [np.asarray(_member(d, axis_tuple(axis_name), sizes), np.int32) for d in devices]


def _ppermute(xs: list[Array], devices: list[Coords], *, axis_name: Any, perm: tuple[tuple[int, int], ...],
              sizes: dict[str, int], **_: Any) -> list[Array]:  # fmt: skip
    source = {dst: src for src, dst in perm}
    out = []
    for i, group in enumerate(_groups(devices, axis_tuple(axis_name))):
        k = group.index(i)
        out.append(xs[group[source[k]]] if k in source else np.zeros_like(xs[i]))
    return out


def _all_to_all(xs: list[Array], devices: list[Coords], *, axis_name: Any, split_axis: int, concat_axis: int,
                sizes: dict[str, int], **_: Any) -> list[Array]:  # fmt: skip
    # Member i receives chunk i (along split_axis) of every member's operand, joined along
    # concat_axis in member order.
    out = []
    for i, group in enumerate(_groups(devices, axis_tuple(axis_name))):
        k = group.index(i)
        pieces = [np.split(xs[j], len(group), axis=split_axis)[k] for j in group]
        out.append(np.concatenate(pieces, axis=concat_axis))
    return out


_COMBINE: dict[str, Callable[..., list[Array]]] = {
    "psum": _allreduce("psum"), "pmax": _allreduce("pmax"), "pmin": _allreduce("pmin"), "all_gather": _all_gather,
    "reduce_scatter": _reduce_scatter, "axis_index": _axis_index, "ppermute": _ppermute, "all_to_all": _all_to_all,
}  # fmt: skip
