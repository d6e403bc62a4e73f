"""The ``check`` primitive: a run-time assertion that ``checkify`` functionalizes.

``minijax.experimental.checkify`` (built in ``minijax/_src/checkify.py``)
binds ``check`` from ``checkify.check`` and ``checkify.check_error``. Its
operands are the leaves of an error value (the library's ``Error`` pytree)
and its ``err_tree`` param is that value's structure; ``debug=True`` marks a
``debug_check``, which does nothing unless ``checkify`` discharges it.

What the primitive does by itself, as JAX 0.10.2 defines it:

* eagerly, it rebuilds the error value and raises ``JaxRuntimeError`` with
  the error's message when it holds a failure (a ``debug_check`` does
  nothing);
* under ``jvp``/``grad`` it checks the primal values and has no tangents;
* under ``vmap`` the batched error is reduced to one (per kind of error, the
  last batch element that failed: JAX picks it with a stable ``argsort`` of
  the predicates) and checked;
* it cannot be compiled: a staged ``check`` that ``checkify`` did not
  discharge makes compilation fail with ``functionalization_error()`` (both
  backends), which is what JAX says when its lowering meets one.

The error value's data model belongs to the library, a layer up; this module
only relies on what ``CheckedError`` states.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from minijax import tree_util
from minijax.backend import Backend
from minijax.core import ShapedArray
from minijax.dispatch import eager_rules
from minijax.interpreters import ad, batching
from minijax.jaxpr import Jaxpr, param_filters, subjaxprs
from minijax.jaxpr_passes import effectful_primitives
from minijax.primitives.common import standard_primitive

__all__ = [
    "CheckedError", "JaxRuntimeError", "check_p", "functionalization_error", "raise_if_failed", "refuse_staged_checks",
]  # fmt: skip


class JaxRuntimeError(ValueError):
    """What a failed ``check`` raises (a ValueError, as in JAX); its cause is the error's own exception."""


class CheckedError(Protocol):
    """What the value ``err_tree`` rebuilds must offer (``minijax._src.checkify.Error`` does)."""

    def get_exception(self) -> BaseException | None: ...

    def _reduce_any_error(self) -> Any: ...


def functionalization_error() -> ValueError:
    """The error of compiling a ``check`` that ``checkify`` did not discharge (JAX's text)."""
    error = ValueError(
        "Cannot abstractly evaluate a checkify.check which was not functionalized. This probably means "
        "you tried to stage (jit/scan/pmap/...) a `check` without functionalizing it through "
        "`checkify.checkify`."
    )
    error.exact_message = True  # type: ignore[attr-defined]  # the backends add context in a note, not the message
    return error


def _has_staged_check(jaxpr: Jaxpr) -> bool:
    return any(
        (eqn.primitive is check_p and not eqn.params["debug"]) or any(map(_has_staged_check, subjaxprs(eqn.params)))
        for eqn in jaxpr.eqns
    )


def refuse_staged_checks(jaxprs: Iterable[Jaxpr]) -> None:
    """Raise ``functionalization_error()`` if a (non-debug) ``check`` is staged in ``jaxprs``.

    For the primitives that run their jaxprs op by op when called eagerly
    (``cond``, ``custom_linear_solve``): JAX compiles them, which fails on
    such a check, whichever branch would run.
    """
    if any(map(_has_staged_check, jaxprs)):
        raise functionalization_error()


def _rebuild(err_tree: tree_util.PyTreeDef, args: Sequence[Any]) -> CheckedError:
    error: CheckedError = tree_util.tree_unflatten(err_tree, args)
    return error


def raise_if_failed(err_tree: tree_util.PyTreeDef, args: Sequence[Any]) -> None:
    """Raise ``JaxRuntimeError`` when the error value (concrete leaves) holds a failure."""
    exc = _rebuild(err_tree, args).get_exception()
    if exc is not None:
        raise JaxRuntimeError(str(exc)) from exc


def _check_abstract_eval(*avals: ShapedArray, err_tree: Any, debug: Any) -> list[ShapedArray]:
    if not isinstance(err_tree, tree_util.PyTreeDef):  # check C1
        raise TypeError(f"check: err_tree must be a PyTreeDef, got {type(err_tree).__name__}.")
    if err_tree.num_leaves != len(avals):  # check C1
        raise TypeError(f"check: err_tree has {err_tree.num_leaves} leaves but the check got {len(avals)} operands.")
    if type(debug) is not bool:  # check C2
        raise TypeError(f"check: debug must be a bool, got {debug!r}.")
    return []


check_p = standard_primitive("check", _check_abstract_eval, multiple_results=True)
# JAX prints a check without its err_tree: ``check[debug=False] a b``.
param_filters["check"] = lambda params: [("debug", params["debug"])]
# Never removed as dead code: it has no results, only its effect.
effectful_primitives.add(check_p)


def _check_eager(backend: Backend, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    check_p.abstract_eval(*[x.aval for x in args], **params)
    if not params["debug"]:  # a debug_check does nothing until checkify discharges it
        raise_if_failed(params["err_tree"], args)
    return []


eager_rules[check_p] = _check_eager


def _check_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[list[Any], list[Any]]:
    # The primal values are checked; the check has no tangents.
    check_p.bind(*primals, **params)
    return [], []


def _check_transpose(cts: Any, *args: Any, **params: Any) -> list[None]:
    return [None for _ in args]


ad.primitive_jvps[check_p] = _check_jvp
ad.transpose_rules[check_p] = _check_transpose


def _check_batch(
    vals: Sequence[Any], dims: Sequence[batching.BatchDim], *, err_tree: tree_util.PyTreeDef, debug: bool
) -> tuple[list[Any], list[Any]]:
    size = batching.batch_size(vals, dims)
    at_front = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    reduced = _rebuild(err_tree, at_front)._reduce_any_error()
    leaves, tree = tree_util.tree_flatten(reduced)
    check_p.bind(*leaves, err_tree=tree, debug=debug)
    return [], []


batching.primitive_batchers[check_p] = _check_batch
