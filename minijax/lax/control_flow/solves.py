"""``lax.custom_linear_solve`` and ``lax.custom_root``: solves differentiated implicitly.

Both take a solver that need not be differentiable (typically a
``while_loop``) and give its result the derivative the mathematics implies:

- ``custom_linear_solve(matvec, b, solve, transpose_solve)``: x = A⁻¹ b for
  the linear map ``matvec``; derivatives come from A x = b
  (minijax/primitives/solves.py has the primitive and its rules).
- ``custom_root(f, initial_guess, solve, tangent_solve)``: x with f(x) = 0;
  derivatives with respect to what ``f`` closes over come from the implicit
  function theorem, ẋ = -(∂f/∂x)⁻¹ (∂f/∂θ) θ̇, the inverse applied by
  ``tangent_solve`` (a ``custom_jvp`` function, as in JAX).

Every function is traced to a jaxpr once; all the constants the jaxprs close
over become operands (what JAX's ``separate_consts`` does).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import tree_util
from minijax.autodiff import linearize
from minijax.core import ShapedArray, get_aval
from minijax.custom_derivatives import custom_jvp
from minijax.interpreters import ad
from minijax.interpreters.tracing import trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, eval_closed_jaxpr, literal_operand
from minijax.jaxpr_passes import consts_as_inputs
from minijax.lax.control_flow.common import operand_aval
from minijax.primitives.solves import LinearSolveTuple, linear_solve_p

__all__ = ["custom_linear_solve", "custom_root"]


def _trace(fun: Callable[[Any], Any], in_tree: tree_util.PyTreeDef, avals: Sequence[ShapedArray]) -> tuple[ClosedJaxpr, list[Any], tree_util.PyTreeDef]:
    """``fun`` (one pytree in, a pytree out) as a jaxpr with its constants as
    leading inputs; returns (jaxpr, constants, output tree)."""
    box: list[tree_util.PyTreeDef] = []

    def flat(*leaves: Any) -> list[Any]:
        out = fun(tree_util.tree_unflatten(in_tree, list(leaves)))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        box.append(out_tree)
        return out_leaves

    closed, _ = trace_to_jaxpr(flat, list(avals))
    moved, consts = consts_as_inputs(closed)
    return moved, consts, box[0]


def _as_function(closed: ClosedJaxpr, consts: Sequence[Any], out_tree: tree_util.PyTreeDef) -> Callable[[Any], Any]:
    def fun(x: Any) -> Any:
        return tree_util.tree_unflatten(out_tree, eval_closed_jaxpr(closed, *consts, *tree_util.tree_leaves(x)))

    return fun


def _check_tree(func_name: str, expected_name: str, actual: tree_util.PyTreeDef, expected: tree_util.PyTreeDef, has_aux: bool = False) -> None:
    if has_aux:
        children = actual.children()
        if len(children) != 2:
            raise ValueError(f"{func_name}() produced a pytree with structure {actual}, but a pytree tuple with auxiliary output was expected because has_aux was set to True.")
        actual = children[0]
    if actual != expected:
        raise TypeError(f"{func_name}() output pytree structure must match {expected_name}, got {actual} and {expected}.")


def _check_shapes(func_name: str, expected_name: str, actual: Sequence[Any], expected: Sequence[Any]) -> None:
    actual_shapes = [np.shape(x) for x in actual]
    expected_shapes = [np.shape(x) for x in expected]
    if actual_shapes != expected_shapes:
        raise ValueError(f"{func_name}() output shapes must match {expected_name}, got {actual_shapes} and {expected_shapes}")


def _shape_checked(fun: Callable[[Any], Any], name: str, b_leaves: Sequence[Any], has_aux: bool) -> Callable[[Any], Any]:
    def checked(x: Any) -> Any:
        y = fun(x)
        if has_aux:
            x_part, _ = y  # unpacked as JAX does: an output that is not a pair fails here
        else:
            x_part = y
        _check_shapes(name, "b", tree_util.tree_leaves(x_part), b_leaves)
        return y

    return checked


def custom_linear_solve(
    matvec: Callable[[Any], Any],
    b: Any,
    solve: Callable[[Callable[[Any], Any], Any], Any],
    transpose_solve: Callable[[Callable[[Any], Any], Any], Any] | None = None,
    symmetric: bool = False,
    has_aux: bool = False,
) -> Any:
    """``solve(matvec, b)``, differentiated as the solution x of ``matvec(x) == b``.

    ``solve`` need not be differentiable: jvp of the result is a second
    solve, ẋ = A⁻¹ (ḃ - Ȧ x); reverse mode needs ``transpose_solve`` (which
    receives the transposed map, found by autodiff), or ``symmetric=True``
    to reuse ``solve``. With ``has_aux`` both solvers return ``(x, aux)``.
    """
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_leaves, tree = tree_util.tree_flatten(b)
    b_avals = [operand_aval(x) for x in b_leaves]

    matvec_jaxpr, matvec_consts, out_tree = _trace(_shape_checked(matvec, "matvec", b_avals, False), tree, b_avals)
    _check_tree("matvec", "b", out_tree, tree)
    solve_jaxpr, solve_consts, solve_tree = _trace(
        _shape_checked(functools.partial(solve, matvec), "solve", b_avals, has_aux), tree, b_avals
    )
    _check_tree("solve", "b", solve_tree, tree, has_aux)

    vecmat_jaxpr: ClosedJaxpr | None = None
    tr_solve_jaxpr: ClosedJaxpr | None = None
    vecmat_consts: list[Any] = []
    tr_solve_consts: list[Any] = []
    if transpose_solve is not None:
        if symmetric:
            vecmat: Callable[[Any], Any] = matvec
            vecmat_jaxpr, vecmat_consts = matvec_jaxpr, matvec_consts
        else:
            vecmat = _transpose_of(matvec_jaxpr, matvec_consts, tree, b_avals)
            vecmat_jaxpr, vecmat_consts, _ = _trace(vecmat, tree, b_avals)
        tr_solve_jaxpr, tr_solve_consts, out_tree = _trace(
            _shape_checked(functools.partial(transpose_solve, vecmat), "transpose_solve", b_avals, has_aux), tree, b_avals
        )
        _check_tree("transpose_solve", "b", out_tree, tree, has_aux)

    all_consts = [matvec_consts, vecmat_consts, solve_consts, tr_solve_consts]
    const_lengths = LinearSolveTuple(*(len(c) for c in all_consts))
    jaxprs = LinearSolveTuple(matvec_jaxpr, vecmat_jaxpr, solve_jaxpr, tr_solve_jaxpr)
    outs = linear_solve_p.bind(*(c for cs in all_consts for c in cs), *b_leaves, const_lengths=const_lengths, jaxprs=jaxprs)
    x = tree_util.tree_unflatten(tree, list(outs[: len(b_leaves)]))
    if has_aux:
        return tree_util.tree_unflatten(solve_tree, list(outs))
    return x


def _transpose_of(matvec_jaxpr: ClosedJaxpr, consts: Sequence[Any], tree: tree_util.PyTreeDef, b_avals: Sequence[ShapedArray]) -> Callable[[Any], Any]:
    """The transpose of the linear map ``matvec`` (JAX's ``linear_transpose``): cotangents of x from those of b.

    As in JAX, what matvec computes from its constants alone (a dtype
    conversion of a closed-over scalar, say) is computed here, once, and the
    transposed map closes over the results.
    """
    jaxpr = matvec_jaxpr.jaxpr
    n_consts = len(consts)
    known: dict[Var, Any] = dict(zip(jaxpr.invars[:n_consts], consts))
    linear = set(jaxpr.invars[n_consts:])
    linear_eqns: list[JaxprEqn] = []

    def read(atom: Any) -> Any:
        return literal_operand(atom) if isinstance(atom, Literal) else known[atom]

    for eqn in jaxpr.eqns:
        if any(isinstance(a, Var) and a in linear for a in eqn.invars):
            linear_eqns.append(eqn)
            linear.update(eqn.outvars)
        else:
            outs = eqn.primitive.bind(*(read(a) for a in eqn.invars), **eqn.params)
            known.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))
    residuals = list(dict.fromkeys(a for e in linear_eqns for a in e.invars if isinstance(a, Var) and a not in linear))
    residuals += [a for a in jaxpr.outvars if isinstance(a, Var) and a not in linear and a not in residuals]
    linear_jaxpr = Jaxpr(residuals, jaxpr.invars[n_consts:], jaxpr.outvars, linear_eqns)
    residual_values = [known[v] for v in residuals]

    def vecmat(ct: Any) -> Any:
        cts = tree_util.tree_leaves(ct)
        grads = ad.backward_pass(linear_jaxpr, residual_values, [ad.UndefinedPrimal(a) for a in b_avals], cts)
        return tree_util.tree_unflatten(tree, [ad.instantiate_zeros(g) for g in grads])

    return vecmat


# ---------------------------------------------------------------------------
# custom_root


def _custom_root(const_lengths: tuple[int, int, int], jaxprs: tuple[ClosedJaxpr, ClosedJaxpr, ClosedJaxpr], *args: Any) -> list[Any]:
    n_f, n_solve, _ = const_lengths
    solve_consts = args[n_f : n_f + n_solve]
    guess = args[sum(const_lengths) :]
    return eval_closed_jaxpr(jaxprs[1], *solve_consts, *guess)


_root = custom_jvp(_custom_root, nondiff_argnums=(0, 1))  # named as JAX's, which a jaxpr shows


def _root_jvp(const_lengths: tuple[int, int, int], jaxprs: tuple[ClosedJaxpr, ClosedJaxpr, ClosedJaxpr], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    # F(θ, x*(θ)) = 0  =>  ∂θF θ̇ + ∂xF ẋ = 0  =>  ẋ = -(∂xF)⁻¹ (∂θF θ̇)
    f_jaxpr, _, l_and_s_jaxpr = jaxprs
    n_f, n_solve, n_ls = const_lengths
    sol = _root(const_lengths, jaxprs, *primals)
    n_x = len(f_jaxpr.out_avals)
    solution, aux = list(sol[:n_x]), list(sol[n_x:])
    f_consts = list(primals[:n_f])
    f_consts_dot = [ad.instantiate_zeros(t) if type(t) is ad.Zero else t for t in tangents[:n_f]]
    ls_consts = list(primals[n_f + n_solve : n_f + n_solve + n_ls])
    _, rhs = ad.jvp_flat(lambda *ps: eval_closed_jaxpr(f_jaxpr, *ps, *solution), f_consts, f_consts_dot)
    rhs = [ad.instantiate_zeros(r) for r in rhs]
    solved = eval_closed_jaxpr(l_and_s_jaxpr, *ls_consts, *solution, *rhs)
    solution_dot = [-s for s in solved]
    return solution + aux, solution_dot + [ad.zeros_like_aval(ad.tangent_aval(get_aval(a))) for a in aux]


_root.defjvp(_root_jvp)


def custom_root(
    f: Callable[[Any], Any],
    initial_guess: Any,
    solve: Callable[[Callable[[Any], Any], Any], Any],
    tangent_solve: Callable[[Callable[[Any], Any], Any], Any],
    has_aux: bool = False,
) -> Any:
    """``solve(f, initial_guess)``, differentiated as the root x of ``f(x) == 0``.

    Derivatives with respect to what ``f`` closes over follow from the
    implicit function theorem; ``tangent_solve(g, y)`` must solve ``g(x) = y``
    for the linear map ``g`` (f linearized at the root), e.g.
    ``lambda g, y: y / g(1.0)`` for a scalar. With ``has_aux`` ``solve``
    returns ``(x, aux)``.
    """
    guess_leaves, guess_tree = tree_util.tree_flatten(initial_guess)
    guess_avals = [operand_aval(x) for x in guess_leaves]
    f_jaxpr, f_consts, out_tree = _trace(f, guess_tree, guess_avals)
    _check_tree("f", "initial_guess", out_tree, guess_tree)
    solve_jaxpr, solve_consts, solution_tree = _trace(functools.partial(solve, f), guess_tree, guess_avals)
    _check_tree("solve", "initial_guess", solution_tree, guess_tree, has_aux)

    def linearize_and_solve(xb: Any) -> Any:
        x, b = xb
        _, f_jvp = linearize(f, x)
        return tangent_solve(f_jvp, b)

    pair_tree = tree_util.tree_structure((initial_guess, initial_guess))
    ls_jaxpr, ls_consts, ls_tree = _trace(linearize_and_solve, pair_tree, guess_avals * 2)
    _check_tree("tangent_solve", "x", ls_tree, guess_tree)
    const_lengths = (len(f_consts), len(solve_consts), len(ls_consts))
    jaxprs = (f_jaxpr, solve_jaxpr, ls_jaxpr)
    outs = _root(const_lengths, jaxprs, *f_consts, *solve_consts, *ls_consts, *guess_leaves)
    return tree_util.tree_unflatten(solution_tree, list(outs))
