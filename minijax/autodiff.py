"""The public autodiff API: ``jvp``, ``linearize``, ``vjp``, ``grad``, ``value_and_grad``.

Each flattens the user's pytrees, calls the flat machinery of
``minijax/interpreters/ad.py`` and unflattens the results.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import core, dtypes, tree_util
from minijax.array import Array, device_put_value
from minijax.core import ShapedArray, get_aval
from minijax.interpreters import ad
from minijax.interpreters.ad import Zero
from minijax.interpreters.tracing import abstractify, fun_name, trace_to_jaxpr
from minijax.jaxpr import ClosedJaxpr, Jaxpr
from minijax.primitives import elementwise, slicing, structural
from minijax.vectorization import vmap


def _flat_fun(fun: Callable[..., Any], in_tree: tree_util.PyTreeDef, out_tree_box: list[Any], has_aux: bool = False) -> Callable[..., list[Any]]:
    """``fun`` on flat leaves; its output structure (and aux) land in ``out_tree_box``."""

    def flat(*leaves: Any) -> list[Any]:
        args = tree_util.tree_unflatten(in_tree, leaves)
        out = fun(*args)
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError(
                    "expected function with aux output to return a two-element tuple, but got "
                    f"type {type(out)} with value {out!r}"
                )
            out, aux = out
            out_tree_box.append(aux)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_tree_box.insert(0, out_tree)
        for leaf in out_leaves:
            _check_value(leaf, "output of the differentiated function")
        return out_leaves

    return flat


def _check_value(x: Any, where: str) -> None:
    if not core.is_array_like(x):
        raise TypeError(f"{where}: value {x!r} of type {type(x)} is not a valid JAX type")


def _unpack_aux(box: list[Any]) -> Any:
    """The aux output, with the tracers of the finished transformation replaced by their primals."""
    aux = box[1]
    return tree_util.tree_map(_strip_tracer, aux)


def _strip_tracer(x: Any) -> Any:
    while isinstance(x, ad.JVPTracer) and not x._trace.is_alive:
        x = x.primal
    return x


def _zeros_for(t: Any) -> Any:
    return ad.instantiate_zeros(t)


# ---------------------------------------------------------------------------
# jvp and linearize


def jvp(fun: Callable[..., Any], primals: Any, tangents: Any, has_aux: bool = False) -> Any:
    """(fun(*primals), the directional derivative of fun at primals along tangents)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            "primal and tangent arguments to jax.jvp must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}."
        )
    p_leaves, p_tree = tree_util.tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(
            "primal and tangent arguments to jax.jvp must have the same tree structure; primals have "
            f"tree structure {p_tree} whereas tangents have tree structure {t_tree}."
        )
    for p, t in zip(p_leaves, t_leaves):
        _check_value(p, "jvp primal")
        ad.check_tangent(p, t)
    box: list[Any] = []
    outs, out_tangents = ad.jvp_flat(_flat_fun(fun, p_tree, box, has_aux), p_leaves, t_leaves)
    out_tree = box[0]
    out_tangents = [_zeros_for(t) for t in out_tangents]
    result = (tree_util.tree_unflatten(out_tree, outs), tree_util.tree_unflatten(out_tree, out_tangents))
    if has_aux:
        return (*result, _unpack_aux(box))
    return result


def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """(fun(*primals), the linear map tangents -> output tangents), evaluated once."""
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    for p in p_leaves:
        _check_value(p, "linearize primal")
    box: list[Any] = []
    outs, lin = ad.linearize_flat(_flat_fun(fun, p_tree, box, has_aux), p_leaves)
    out_tree = box[0]
    in_avals = [get_aval(p) for p in p_leaves]

    def f_jvp(*tangents: Any) -> Any:
        t_leaves, t_tree = tree_util.tree_flatten(tangents)
        if t_tree != p_tree:
            raise TypeError(
                "linearized function called with tangent arguments of a different tree structure than "
                f"the primals: expected {p_tree}, got {t_tree}."
            )
        for a, t in zip(in_avals, t_leaves):
            got = get_aval(t)
            expected = ad.tangent_aval(a)
            if got.shape != expected.shape or got.dtype != expected.dtype:
                raise ValueError(
                    "linearized function called on tangent values inconsistent with the original primal values:\n"
                    f"Got tangent aval {got.str_short(short_dtypes=False)} for primal aval "
                    f"{_aval_str(a)} but expected {_aval_str(expected)}."
                )
        outs_t = [_zeros_for(t) for t in lin(*t_leaves)]
        return tree_util.tree_unflatten(out_tree, outs_t)

    result = (tree_util.tree_unflatten(out_tree, outs), f_jvp)
    if has_aux:
        return (*result, _unpack_aux(box))
    return result


def _aval_str(a: ShapedArray) -> str:
    return ("~" if a.weak_type else "") + a.str_short(short_dtypes=False)


# ---------------------------------------------------------------------------
# vjp, grad, value_and_grad


class VJPFunction:
    """The pullback's body: (residuals, output cotangents) -> input cotangents (a tuple).

    ``vjp`` returns it inside a ``VJP``, which holds the residuals.
    """

    def __init__(self, lin: ad.LinearFunction, in_tree: tree_util.PyTreeDef, out_tree: tree_util.PyTreeDef, out_avals: Sequence[ShapedArray], fun: Callable[..., Any]) -> None:
        self._lin = lin
        self._in_tree = in_tree
        self._out_tree = out_tree
        self._out_avals = list(out_avals)
        self._fun = fun

    def __call__(self, residuals: Sequence[Any], *cts: Any) -> Any:
        if len(cts) != 1:
            raise TypeError(f"The function returned by `jax.vjp` takes a single argument (the cotangent), got {len(cts)}.")
        ct_leaves, ct_tree = tree_util.tree_flatten(cts[0])
        if ct_tree != self._out_tree:
            raise ValueError(
                "unexpected tree structure.\n\nThe argument to a VJP function returned by `jax.vjp` must "
                f"match the pytree structure of the differentiated function {fun_name(self._fun)}.\n\n"
                f"Expected structure {self._out_tree}, got {ct_tree}."
            )
        checked: list[Any] = []
        for ct, a in zip(ct_leaves, self._out_avals):
            expected = ad.tangent_aval(a)
            got = _ct_aval(ct)
            if got.shape != expected.shape or got.dtype != expected.dtype:
                raise ValueError(
                    "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
                    f"{got.str_short(short_dtypes=False)}, but expected {expected.str_short(short_dtypes=False)} "
                    "because the corresponding output of the differentiated function had JAX type "
                    f"{a.str_short(short_dtypes=False)}"
                )
            checked.append(Zero(expected) if expected.dtype == dtypes.float0 else ct)
        lin = self._lin
        with_residuals = ad.LinearFunction(ClosedJaxpr(lin.jaxpr.jaxpr, list(residuals)), lin.in_avals, lin.in_linear,
                                           lin.out_avals, lin.out_zeros)
        cts_in = [ad.instantiate_zeros(c) for c in with_residuals.transpose(checked)]
        return tuple(tree_util.tree_unflatten(self._in_tree, cts_in))


class VJP:
    """The pullback ``vjp`` returns, a pytree whose leaves are the saved residuals, as JAX's ``VJP``.

    The residuals that are inputs of the differentiated function come first,
    in argument order, then the values it computed (JAX's order): the
    gradient-checkpointing page flattens a pullback to look at them, and
    ``tree_unflatten`` with other residuals of the same types gives a working
    pullback again.
    """

    __slots__ = ("fun", "residuals")

    def __init__(self, fun: VJPFunction, residuals: Sequence[Any]) -> None:
        self.fun = fun
        self.residuals = list(residuals)

    def __call__(self, *cts: Any) -> Any:
        return self.fun(self.residuals, *cts)


tree_util.register_pytree_node(VJP, lambda v: ((v.residuals,), v.fun), lambda fun, kids: VJP(fun, next(iter(kids))))


def _inputs_first(lin: ad.LinearFunction, inputs: Sequence[Any]) -> ad.LinearFunction:
    """``lin`` with its residuals reordered: those that are ``inputs`` first, in their order."""
    jaxpr = lin.jaxpr.jaxpr
    position = {id(x): i for i, x in reversed(list(enumerate(inputs)))}
    order = sorted(range(len(jaxpr.constvars)),
                   key=lambda k: (0, position[id(lin.jaxpr.consts[k])]) if id(lin.jaxpr.consts[k]) in position else (1, k))
    reordered = Jaxpr([jaxpr.constvars[k] for k in order], jaxpr.invars, jaxpr.outvars, jaxpr.eqns)
    return ad.LinearFunction(ClosedJaxpr(reordered, [lin.jaxpr.consts[k] for k in order]), lin.in_avals,
                             lin.in_linear, lin.out_avals, lin.out_zeros)


def _ct_aval(ct: Any) -> ShapedArray:
    dt = getattr(ct, "dtype", None)
    if dt == dtypes.float0:
        return ShapedArray(np.shape(ct), dtypes.float0)
    return get_aval(ct)


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False, reduce_axes: Sequence[Any] = ()) -> Any:
    """(fun(*primals), the pullback of fun at primals)."""
    if reduce_axes:
        raise NotImplementedError("vjp(reduce_axes=...) is not supported (JAX removed it too)")
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    for p in p_leaves:
        _check_value(p, "vjp primal")
    box: list[Any] = []
    outs, lin = ad.linearize_flat(_flat_fun(fun, p_tree, box, has_aux), p_leaves)
    lin = _inputs_first(lin, p_leaves)
    out_tree = box[0]
    body = VJPFunction(lin, p_tree, out_tree, [get_aval(o) for o in outs], fun)
    pullback = VJP(body, lin.jaxpr.consts)
    result = (tree_util.tree_unflatten(out_tree, outs), pullback)
    if has_aux:
        return (*result, _unpack_aux(box))
    return result


def _normalize_argnums(argnums: int | Sequence[int], nargs: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -nargs <= i < nargs:
            raise TypeError(
                f"differentiating with respect to argnums={argnums} requires at least {max(nums) + 1} "
                f"positional arguments to be passed by the caller, but got only {nargs} positional arguments."
            )
    return tuple(i % nargs for i in nums)


def _check_holomorphic(name: str, dt: np.dtype[Any], where: str) -> None:
    """holomorphic=True promises a complex function of complex inputs (JAX's check)."""
    if not dtypes.issubdtype(dt, np.complexfloating):
        raise TypeError(f"{name} with holomorphic=True requires {where} with complex dtype, but got {dt.name}.")


def _check_input_dtype(x: Any, allow_int: bool, holomorphic: bool, name: str = "grad") -> None:
    dt = get_aval(x).dtype
    if holomorphic:
        _check_holomorphic(name, dt, "inputs")
    if not allow_int and not dtypes.issubdtype(dt, np.inexact):
        raise TypeError(
            f"{name} requires real- or complex-valued inputs (input dtype that is a sub-dtype of np.inexact), "
            f"but got {dt.name}. If you want to use Boolean- or integer-valued inputs, use vjp or set "
            "allow_int to True."
        )


def _check_output_dtype(name: str, dt: np.dtype[Any], holomorphic: bool) -> None:
    if holomorphic:
        _check_holomorphic(name, dt, "outputs")
    elif dtypes.issubdtype(dt, np.complexfloating):
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but got "
            f"{dt.name}. For holomorphic differentiation, pass holomorphic=True. For differentiation of "
            "non-holomorphic functions involving complex outputs, use jax.vjp directly."
        )
    elif not dtypes.issubdtype(dt, np.floating):
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but got "
            f"{dt.name}. For differentiation of functions with integer outputs, use jax.vjp directly."
        )


def _check_scalar_output(out: Any, holomorphic: bool) -> ShapedArray:
    if not core.is_array_like(out):
        raise TypeError(f"Gradient only defined for scalar-output functions. Output was {out!r}.")
    aval = get_aval(out)
    if aval.shape != ():
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: {aval.shape}.")
    _check_output_dtype("grad", aval.dtype, holomorphic)
    return aval


def value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[..., Any]:
    """A function returning (fun(*args), the gradient of fun with respect to args[argnums])."""
    if reduce_axes:
        raise NotImplementedError("value_and_grad(reduce_axes=...) is not supported (JAX removed it too)")

    @functools.wraps(fun)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> Any:
        nums = _normalize_argnums(argnums, len(args))
        diff_args = tuple(args[i] for i in nums)
        leaves, d_tree = tree_util.tree_flatten(diff_args)
        for x in leaves:
            if not core.is_array_like(x):
                raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type.")
            _check_input_dtype(x, allow_int, holomorphic)

        def fun_of_diff(*d: Any) -> Any:
            full = list(args)
            for i, v in zip(nums, d):
                full[i] = v
            return fun(*full, **kwargs)

        box: list[Any] = []
        outs, lin = ad.linearize_flat(_flat_fun(fun_of_diff, d_tree, box, has_aux), leaves)
        if len(outs) != 1 or box[0] != tree_util.tree_structure(0):
            out = tree_util.tree_unflatten(box[0], outs)
            raise TypeError(
                "Gradient only defined for scalar-output functions. Output "
                + (f"had shape: {get_aval(out).shape}." if core.is_array_like(out) else f"was {out!r}.")
            )
        aval = _check_scalar_output(outs[0], holomorphic)
        # The seed is a one of the output's type, weak type included, as an
        # Array: a gradient that is the seed passed straight through (the
        # identity, a sum, a custom rule returning its cotangent) must be an
        # Array like every other gradient, never a Python or NumPy scalar.
        seed = device_put_value(np.ones((), aval.dtype), weak_type=aval.weak_type)
        cts = [ad.instantiate_zeros(c) for c in lin.transpose([seed])]
        grads = tree_util.tree_unflatten(d_tree, cts)
        g = grads[0] if isinstance(argnums, int) else grads
        value = outs[0]
        if has_aux:
            return (value, _unpack_aux(box)), g
        return value, g

    return value_and_grad_f


def grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[..., Any]:
    """A function returning the gradient of the scalar ``fun`` with respect to args[argnums]."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, reduce_axes)

    @functools.wraps(fun)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        (value, g) = vg(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return grad_f


# ---------------------------------------------------------------------------
# Jacobians: jacfwd pushes a basis of input tangents forward with vmap(jvp);
# jacrev pulls a basis of output cotangents back with vmap(vjp).


def _std_basis(leaves: Sequence[Any]) -> list[np.ndarray[Any, Any]]:
    """For each leaf, its rows of the identity matrix over all leaves' elements, shaped (N, *leaf.shape)."""
    avals = [get_aval(x) for x in leaves]
    total = sum(a.size for a in avals)
    eye = np.eye(total)
    out, start = [], 0
    for a in avals:
        block = eye[:, start:start + a.size].reshape((total, *a.shape))
        out.append(block.astype(a.dtype))
        start += a.size
    return out


def _split_last(x: Any, sizes: Sequence[int], shapes: Sequence[tuple[int, ...]], lead: tuple[int, ...]) -> list[Any]:
    """Split the last axis of ``x`` into pieces of ``sizes``, each reshaped to ``lead + shape``."""
    pieces, start = [], 0
    for size, shape in zip(sizes, shapes):
        piece = slicing.slice_in_dim(x, start, start + size, axis=np.ndim(x) - 1)
        pieces.append(structural.reshape(piece, (*lead, *shape)))
        start += size
    return pieces


def _typed_like(block: Any, example: ShapedArray) -> Any:
    """``block`` with ``example``'s dtype and weak type (JAX's Jacobian blocks take them
    from the leaf on the side the basis does not run over)."""
    aval = get_aval(block)
    if example.dtype == dtypes.float0 or (aval.dtype == example.dtype and aval.weak_type == example.weak_type):
        return block
    if aval.dtype == dtypes.float0:
        # The derivative of an integer output: zeros of the output's type, as JAX gives.
        return ad.zeros_like_aval(ShapedArray(aval.shape, example.dtype, example.weak_type))
    return elementwise.convert_element_type_p.bind(
        block, new_dtype=example.dtype, weak_type=example.weak_type, sharding=None
    )


def _check_jacfwd_inputs(leaves: Sequence[Any], holomorphic: bool) -> None:
    for x in leaves:
        dt = get_aval(x).dtype
        if holomorphic:
            _check_holomorphic("jacfwd", dt, "inputs")
        elif not dtypes.issubdtype(dt, np.floating):
            raise TypeError(
                f"jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), but "
                f"got {dt.name}. For holomorphic differentiation, pass holomorphic=True. For differentiation "
                "of non-holomorphic functions involving complex inputs or integer inputs, use jax.jvp directly."
            )


def _partial_fun(fun: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], nums: tuple[int, ...]) -> Callable[..., Any]:
    def f(*dyn: Any) -> Any:
        full = list(args)
        for i, v in zip(nums, dyn):
            full[i] = v
        return fun(*full, **kwargs)

    return f


def jacfwd(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by forward mode: one jvp per input element, vectorized."""
    @functools.wraps(fun)
    def jacfun(*args: Any, **kwargs: Any) -> Any:
        nums = _normalize_argnums(argnums, len(args))
        dyn = tuple(args[i] for i in nums)
        in_leaves, in_tree = tree_util.tree_flatten(dyn)
        # The checks map over the arguments' trees, as JAX's do: rebuilding them with None leaves, which
        # a custom pytree whose constructor refuses None turns into its own error (JAX's custom-pytrees page).
        tree_util.tree_map(lambda x: _check_jacfwd_inputs([x], holomorphic), dyn)
        f = _partial_fun(fun, args, kwargs, nums)

        def push(*basis: Any) -> Any:
            tangents = tree_util.tree_unflatten(in_tree, basis)
            return jvp(f, dyn, tangents, has_aux=has_aux)

        results = vmap(push, out_axes=(None, -1, None) if has_aux else (None, -1))(*_std_basis(in_leaves))
        y, jac = results[0], results[1]
        if holomorphic:
            for o in tree_util.tree_leaves(y):
                _check_holomorphic("jacfwd", get_aval(o).dtype, "outputs")
        in_avals = [get_aval(x) for x in in_leaves]
        sizes, shapes = [a.size for a in in_avals], [a.shape for a in in_avals]
        out_leaves, out_tree = tree_util.tree_flatten(y)
        jac_leaves = tree_util.tree_leaves(jac)
        blocks = []
        for o, jl in zip(out_leaves, jac_leaves):
            # Forward mode: each block has the type of its output (dtype and weak type).
            pieces = [_typed_like(p, get_aval(o)) for p in _split_last(jl, sizes, shapes, get_aval(o).shape)]
            inner = tree_util.tree_unflatten(in_tree, pieces)
            blocks.append(inner[0] if isinstance(argnums, int) else inner)
        out = tree_util.tree_unflatten(out_tree, blocks)
        return (out, results[2]) if has_aux else out

    return jacfun


def jacrev(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by reverse mode: one vjp per output element, vectorized."""
    @functools.wraps(fun)
    def jacfun(*args: Any, **kwargs: Any) -> Any:
        nums = _normalize_argnums(argnums, len(args))
        dyn = tuple(args[i] for i in nums)
        in_leaves, in_tree = tree_util.tree_flatten(dyn)
        tree_util.tree_map(lambda x: _check_input_dtype(x, allow_int, holomorphic, "jacrev"), dyn)
        f = _partial_fun(fun, args, kwargs, nums)
        if has_aux:
            y, pullback, aux = vjp(f, *dyn, has_aux=True)
        else:
            y, pullback = vjp(f, *dyn)
        out_leaves, out_tree = tree_util.tree_flatten(y)
        for o in out_leaves:
            _check_output_dtype("jacrev", get_aval(o).dtype, holomorphic)
        basis = _std_basis(out_leaves)
        cts = vmap(lambda *b: pullback(tree_util.tree_unflatten(out_tree, b)))(*basis)
        ct_leaves = tree_util.tree_leaves(cts)
        blocks = []
        start = 0
        for o in out_leaves:
            oa = get_aval(o)
            pieces = []
            for c, x in zip(ct_leaves, in_leaves):
                rows = slicing.slice_in_dim(c, start, start + oa.size, axis=0)
                # Reverse mode: each block has the type of its input (dtype and weak type).
                pieces.append(_typed_like(structural.reshape(rows, (*oa.shape, *get_aval(x).shape)), get_aval(x)))
            start += oa.size
            inner = tree_util.tree_unflatten(in_tree, pieces)
            blocks.append(inner[0] if isinstance(argnums, int) else inner)
        out = tree_util.tree_unflatten(out_tree, blocks)
        return (out, aux) if has_aux else out

    return jacfun


jacobian = jacrev


def hessian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False) -> Callable[..., Any]:
    """The Hessian of a scalar ``fun``: forward-over-reverse, as in JAX."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums, has_aux=has_aux, holomorphic=holomorphic)


__all__ = ["grad", "hessian", "jacfwd", "jacobian", "jacrev", "jvp", "linearize", "value_and_grad", "vjp"]


def linear_transpose(fun: Callable[..., Any], *primals: Any, reduce_axes: Sequence[Any] = ()) -> Any:
    """The transpose of ``fun``, promised to be linear, at inputs shaped like ``primals``.

    Returns ``f_t`` (a ``Partial``, so a pytree) with ``f_t(ct)`` the tuple of
    input cotangents. Only float/complex -> float/complex or integer -> integer
    functions are accepted, as in JAX; linearity is not checked beyond the
    transpose rules (an equation that is not linear in its input has none).
    """
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    flat, in_tree = tree_util.tree_flatten(primals)
    in_avals = [abstractify(x) for x in flat]
    out_box: list[Any] = []

    def flat_fun(*xs: Any) -> list[Any]:
        leaves, tree = tree_util.tree_flatten(fun(*tree_util.tree_unflatten(in_tree, xs)))
        out_box.append(tree)
        return leaves

    closed, _ = trace_to_jaxpr(flat_fun, in_avals)
    out_tree = out_box[0]
    out_avals = [v.aval for v in closed.jaxpr.outvars]
    in_dtypes = [a.dtype for a in in_avals]
    out_dtypes = [a.dtype for a in out_avals]
    if not (all(dtypes.issubdtype(d, np.inexact) for d in in_dtypes + out_dtypes)
            or all(dtypes.issubdtype(d, np.integer) for d in in_dtypes + out_dtypes)):
        raise TypeError("linear_transpose only supports [float or complex] -> "
                        "[float or complex], and integer -> integer functions, "
                        f"but got {in_dtypes} -> {out_dtypes}.")

    def transposed_fun(consts: list[Any], out_cotangent: Any) -> Any:
        out_cts, out_tree2 = tree_util.tree_flatten(out_cotangent)
        if out_tree != out_tree2:
            raise TypeError(f"cotangent tree does not match function output, expected {out_tree} but got {out_tree2}")
        if not all(_typematch(a, ct) for a, ct in zip(out_avals, out_cts)):
            raise TypeError(f"cotangent type does not match function output, expected {tuple(out_avals)} but got {out_cts}")
        dummies = [ad.UndefinedPrimal(ad.tangent_aval(a)) for a in in_avals]
        in_cts = ad.backward_pass(closed.jaxpr, consts, dummies, out_cts)
        # A cotangent passed straight through (``lambda x: x``) may be a Python scalar: JAX returns Arrays.
        in_cts = [ad.instantiate_zeros(c) for c in in_cts]
        in_cts = [c if isinstance(c, (core.Tracer, Array)) else device_put_value(c) for c in in_cts]
        return tree_util.tree_unflatten(in_tree, in_cts)

    return tree_util.Partial(transposed_fun, list(closed.consts))


def _typematch(aval: ShapedArray, x: Any) -> bool:
    got = get_aval(x)
    return bool(got.shape == aval.shape and got.dtype == aval.dtype)
