"""The public ``vmap``: in_axes/out_axes handling on top of ``batching.vmap_flat``."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from minijax import core, tree_util
from minijax.interpreters import batching
from minijax.interpreters.tracing import arg_names_of
from minijax.state import Ref, closed_refs, lent, values_of, write_back


def _is_axis_leaf(x: Any) -> bool:
    return x is None


def _broadcast_axes(what: str, spec: Any, tree: Any) -> list[Any]:
    """One axis per leaf of ``tree``, from a prefix tree ``spec`` of axes (None is a leaf)."""
    spec_leaves, spec_def = tree_util.tree_flatten(spec, is_leaf=_is_axis_leaf)
    try:
        subtrees = spec_def.flatten_up_to(tree)
    except Exception:
        raise ValueError(
            f"{what} specification must be a tree prefix of the corresponding value, got "
            f"specification {spec} for value tree {tree_util.tree_structure(tree)}."
        ) from None
    out: list[Any] = []
    for axis, sub in zip(spec_leaves, subtrees):
        out.extend([axis] * len(tree_util.tree_leaves(sub)))
    return out


def _check_axis_spec(what: str, spec: Any) -> None:
    for leaf in tree_util.tree_leaves(spec, is_leaf=_is_axis_leaf):
        if leaf is not None and (not isinstance(leaf, int) or isinstance(leaf, bool)):
            raise TypeError(
                f"vmap {what} must be an int, None, or (nested) container with those types as leaves, "
                f"but got {leaf}."
            )


def vmap(
    fun: Callable[..., Any],
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name: Any = None,
    axis_size: int | None = None,
    spmd_axis_name: Any = None,
) -> Callable[..., Any]:
    """Vectorize ``fun`` over a new leading (or ``in_axes``) axis of its arguments."""
    # spmd_axis_name says which mesh axes the mapped dimension is laid out over: a layout, which
    # minijax's traces do not carry (docs/parallelism.md), so it changes nothing here.
    del spmd_axis_name
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if any(leaf is not None and (not isinstance(leaf, int) or isinstance(leaf, bool)) for leaf in tree_util.tree_leaves(in_axes, is_leaf=_is_axis_leaf)):
        raise TypeError(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
            f"arguments passed to the function, but got {in_axes}."
        )
    _check_axis_spec("out_axes", out_axes)

    @functools.wraps(fun)
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
                f"arguments passed to the function, but got len(in_axes)={len(in_axes)}, len(args)={len(args)}"
            )
        flat, in_tree = tree_util.tree_flatten((args, kwargs))
        # Keyword arguments are always mapped over their leading axis, as in JAX.
        axes = _broadcast_axes("vmap in_axes", (in_axes, 0), (args, kwargs))
        # refs (issue 24): a Ref argument is discharged: its value is mapped at its axis, the function
        # gets a Ref of one slice, and the final values come back at the same axis and are written back.
        refs = [(i, x) for i, x in enumerate(flat) if isinstance(x, Ref)]
        if refs:
            flat = list(flat)
            for i, ref in refs:
                flat[i] = ref.get(Ellipsis)
        # Refs the function closes over are lent to it unbatched: reading them is fine, writing a
        # batched value into one is JAX's error (which value would the ref hold after the vmap?).
        closed = closed_refs(fun)
        n_args = len(flat)
        if closed:
            flat = [*flat, *values_of(closed)]
            axes = [*axes, *([None] * len(closed))]
        sizes: list[tuple[int, int, Any]] = []
        dims: list[int | None] = []
        for i, (x, axis) in enumerate(zip(flat, axes)):
            if axis is None:
                dims.append(None)
                continue
            if not core.is_array_like(x):
                raise TypeError(f"vmap was requested to map an argument of type {type(x)}, which is not an array")
            aval = core.get_aval(x)
            if not -aval.ndim <= axis < max(aval.ndim, 1) or aval.ndim == 0:
                raise ValueError(
                    f"vmap was requested to map its argument along axis {axis}, which implies that its rank "
                    f"should be at least {axis + 1 if axis >= 0 else -axis}, but is only {aval.ndim} "
                    f"(its shape is {aval.shape})"
                )
            d = axis % aval.ndim
            dims.append(d)
            sizes.append((aval.shape[d], i, d))
        size = axis_size
        if sizes:
            distinct = {s for s, _, _ in sizes}
            if axis_size is not None:
                distinct.add(axis_size)
            if len(distinct) > 1:
                raise ValueError(_inconsistent_sizes_message(fun, args, kwargs, flat, sizes, axis_size))
            size = sizes[0][0]
        if size is None:
            raise ValueError("vmap must have at least one non-None value in in_axes or axis_size must be specified")
        out_tree_box: list[tree_util.PyTreeDef] = []
        out_box: list[Any] = []

        def flat_fun(*leaves: Any) -> list[Any]:
            leaves, lent_values = leaves[:n_args], leaves[n_args:]
            inner = [Ref(leaves[i]) for i, _ in refs]
            if refs:
                leaves = tuple(inner[refs_at[j]] if j in refs_at else x for j, x in enumerate(leaves))
            with lent(closed, lent_values):
                a, k = tree_util.tree_unflatten(in_tree, leaves)
                out = fun(*a, **k)
                finals = values_of(closed)
            for ref, value in zip(closed, finals):
                if isinstance(value, batching.BatchTracer) and value.batch_dim is not None:
                    raise ValueError(
                        "performing a set/swap operation with vmapped value on an unbatched array reference of type "
                        f"{ref.aval}. Move the array reference to be an argument to the vmapped function?"
                    )
            out_leaves, out_tree = tree_util.tree_flatten(out)
            if any(isinstance(leaf, Ref) for leaf in out_leaves):
                raise ValueError("vmap: a function cannot return a mutable array reference (Ref)")
            out_tree_box.append(out_tree)
            out_box.append(out)
            return out_leaves + values_of(inner) + finals

        refs_at = {i: n for n, (i, _) in enumerate(refs)}

        def out_dims(n: int) -> list[Any]:
            n -= len(refs) + len(closed)
            return [*_broadcast_axes("vmap out_axes", out_axes, tree_util.tree_unflatten(out_tree_box[0], [0] * n)),
                    *(dims[i] for i, _ in refs), *([None] * len(closed))]  # fmt: skip

        outs = batching.vmap_flat(flat_fun, flat, dims, size, axis_name, out_dims)
        if refs or closed:
            extra = len(refs) + len(closed)
            write_back([*(ref for _, ref in refs), *closed], outs[len(outs) - extra:])
            outs = outs[: len(outs) - extra]
        return tree_util.tree_unflatten(out_tree_box[0], outs)

    return vmapped


def _inconsistent_sizes_message(fun: Any, args: Sequence[Any], kwargs: dict[str, Any], flat: Sequence[Any], sizes: list[tuple[int, int, Any]], axis_size: int | None) -> str:
    try:
        names = arg_names_of(fun, args, kwargs)
    except Exception:  # noqa: BLE001  (names only decorate the message)
        names = []
    lines = []
    if axis_size is not None:
        lines.append(f"  * axis_size was {axis_size}")
    for s, i, d in sizes:
        name = names[i] if i < len(names) else f"args[{i}]"
        aval = core.get_aval(flat[i])
        lines.append(f"  * one axis had size {s}: axis {d} of argument {name} of type {aval.str_short(short_dtypes=False)}")
    return "vmap got inconsistent sizes for array axes to be mapped:\n" + ";\n".join(lines)


__all__ = ["vmap"]
