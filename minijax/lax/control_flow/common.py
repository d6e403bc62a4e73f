"""What the control-flow functions share: operand checks, and JAX's errors for
functions whose outputs disagree (branches of a cond, a loop body and its carry)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import dtypes, tree_util
from minijax.array import Array, device_put_value
from minijax.core import ShapedArray, Tracer, get_aval, is_array_like
from minijax.jaxpr import Jaxpr
from minijax.jaxpr_passes import typematch

__all__ = ["asarray", "check_carry_type", "is_concrete", "keep_outputs", "listed", "mismatch", "operand_aval"]


def operand_aval(x: Any) -> ShapedArray:
    """The aval of an operand (a carry, a branch operand), or JAX's TypeError for a non-array."""
    if not is_array_like(x):
        raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")
    return get_aval(x)


def asarray(x: Any) -> Any:
    """An operand returned as it was given (a forwarded output), as an array; a
    Python scalar keeps its weak type."""
    if isinstance(x, (Array, Tracer)):
        return x
    return device_put_value(np.asarray(x, dtype=get_aval(x).dtype), weak_type=dtypes.is_weakly_typed(x))


def is_concrete(x: Any) -> bool:
    return not isinstance(x, Tracer) or x.to_concrete_value() is not None


def keep_outputs(jaxpr: Jaxpr, keep: Sequence[bool]) -> Jaxpr:
    """``jaxpr`` returning only the outputs ``keep`` marks."""
    if all(keep):
        return jaxpr
    return Jaxpr(jaxpr.constvars, jaxpr.invars, [v for v, k in zip(jaxpr.outvars, keep) if k], jaxpr.eqns)


# ---------------------------------------------------------------------------
# JAX's messages


def listed(diffs: Sequence[str], capitalize: bool = True) -> str:
    """One difference as a sentence, several as a bulleted list (JAX's layout)."""
    if len(diffs) == 1:
        return f"{diffs[0][0].upper() if capitalize else diffs[0][0]}{diffs[0][1:]}.\n"
    return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"


def mismatch(a: ShapedArray, b: ShapedArray) -> str:
    """``, so the dtypes do not match`` (and/or the shapes): why two avals differ."""
    checks = (("the dtypes do not match", a.dtype != b.dtype), ("the shapes do not match", a.shape != b.shape))
    found = [what for what, differs in checks if differs]
    if not found:
        return ""
    return ", so " + (found[0] if len(found) == 1 else ", ".join(found[:-1]) + ", and " + found[-1])


def check_carry_type(
    name: str,
    body_fun: Callable[..., Any],
    in_tree: tree_util.PyTreeDef,
    in_avals: Sequence[ShapedArray],
    out_tree: tree_util.PyTreeDef,
    out_avals: Sequence[ShapedArray],
) -> None:
    """Raise JAX's TypeError when a loop body changes its carry's structure or types.

    ``name`` is the loop's body as JAX names it ("while_loop body", "scan
    body"); components are named after the body's first parameter.
    """
    try:
        params = list(inspect.signature(body_fun).parameters)
    except (TypeError, ValueError):
        params = []
    carry_name = params[0] if params else None

    def component(path: tuple[Any, ...]) -> str:
        where = tree_util.keystr(path)
        if carry_name:
            return f"the input carry component {carry_name}{where}" if path else f"the input carry {carry_name}"
        return f"the input carry at path {where}" if path else "the input carry"

    if in_tree != out_tree:
        in_carry = tree_util.tree_unflatten(in_tree, in_avals)
        out_carry = tree_util.tree_unflatten(out_tree, out_avals)
        diffs = [
            f"{component(path)} is a {thing1} but the corresponding component of the carry output is a {thing2}, so {why}"
            for path, thing1, thing2, why in tree_util.equality_errors(in_carry, out_carry)
        ]
        if not diffs:
            return  # same structure up to node metadata JAX does not compare
        raise TypeError(
            f"{name} function carry input and carry output must have the same pytree structure, but they differ:\n\n"
            f"{listed(diffs)}\n"
            "Revise the function so that the carry output has the same pytree structure as the carry input."
        )
    paths = [p for p, _ in tree_util.tree_flatten_with_path(tree_util.tree_unflatten(in_tree, in_avals))[0]]
    diffs = [
        f"{component(path)} has type {a.str_short(short_dtypes=False)} but the corresponding output carry "
        f"component has type {b.str_short(short_dtypes=False)}{mismatch(a, b)}"
        for path, a, b in zip(paths, in_avals, out_avals)
        if not typematch(a, b)
    ]
    if diffs:
        raise TypeError(
            f"{name} function carry input and carry output must have equal types, but they differ:\n\n"
            f"{listed(diffs)}\n"
            "Revise the function so that all output types match the corresponding input types."
        )
