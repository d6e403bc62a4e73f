"""``jax.example_libraries.optimizers``: first-order optimizers as function triples.

An optimizer is an ``(init_fun, update_fun, get_params)`` triple:

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    opt_state = opt_init(params)                       # params: any pytree of arrays
    opt_state = opt_update(step, grads, opt_state)     # grads: the same tree structure
    params = get_params(opt_state)

Each optimizer here is written for one array (its ``init`` turns an array
into a small state pytree, its ``update`` steps that state); the
:func:`optimizer` decorator lifts it to parameter pytrees by flattening the
parameters and keeping one inner state per leaf. The resulting
:class:`OptimizerState` is a registered pytree node, so it goes through
``jit``, ``grad`` and ``lax.scan`` like any tuple of arrays.

The update formulas apply the same operations in the same order as JAX's,
so a trajectory matches JAX's bit for bit on the same backend.

Step sizes are either a number or a *schedule*, a function of the step index
(:func:`constant`, :func:`exponential_decay`, :func:`inverse_time_decay`,
:func:`polynomial_decay`, :func:`piecewise_constant`).
"""

from __future__ import annotations

import functools
from collections import namedtuple
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from minijax import numpy as jnp, tree_util

Array = Any
Params = Any  # any pytree of arrays
State = Any  # the state one leaf's optimizer keeps: a pytree of arrays
Updates = Params  # gradients: the parameters' tree structure
Step = int
Schedule = Callable[[Step], float]

# Three fields, as JAX's: the inner states flattened leaf by leaf, the
# parameters' tree structure, and each inner state's tree structure.
OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])

InitFn = Callable[[Params], OptimizerState]
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]


def _state_children(state: Any) -> tuple[tuple[Any], tuple[Any, Any]]:
    # Only the packed states are children: the two tree structures are static
    # data, so a jitted step's input and output trees compare equal.
    return (state.packed_state,), (state.tree_def, state.subtree_defs)


def _state_from_children(aux: tuple[Any, Any], children: Iterable[Any]) -> OptimizerState:
    (packed,) = children
    return OptimizerState(packed, aux[0], aux[1])


tree_util.register_pytree_node(OptimizerState, _state_children, _state_from_children)


class Optimizer(NamedTuple):
    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def _flatten_each(trees: list[Any]) -> tuple[list[list[Any]], list[Any]]:
    leaves, defs = [], []
    for t in trees:
        flat, treedef = tree_util.tree_flatten(t)
        leaves.append(flat)
        defs.append(treedef)
    return leaves, defs


def optimizer(opt_maker: Callable[..., Any]) -> Callable[..., Optimizer]:
    """Lift an optimizer written for single arrays to parameter pytrees.

    ``opt_maker(*args, **kwargs)`` returns ``(init, update, get_params)`` on one
    array: ``init(x0) -> state``, ``update(i, g, state) -> state`` (the state's
    tree structure must not change), ``get_params(state) -> x``. The decorated
    maker returns an :class:`Optimizer` whose functions take and give pytrees
    of parameters and an :class:`OptimizerState`.
    """

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree: Params) -> OptimizerState:
            x0_flat, treedef = tree_util.tree_flatten(x0_tree)
            states_flat, subtrees = _flatten_each([init(x0) for x0 in x0_flat])
            return OptimizerState(states_flat, treedef, subtrees)

        @functools.wraps(update)
        def tree_update(i: Step, grad_tree: Updates, opt_state: OptimizerState) -> OptimizerState:
            states_flat, treedef, subtrees = opt_state
            grad_flat, grad_def = tree_util.tree_flatten(grad_tree)
            if grad_def != treedef:
                raise TypeError("optimizer update function was passed a gradient tree that did not match the "
                                f"parameter tree structure with which it was initialized: parameter tree {treedef} "
                                f"and grad tree {grad_def}.")
            states = _unflatten_each(subtrees, states_flat)
            new_flat, new_subtrees = _flatten_each([update(i, g, s) for g, s in zip(grad_flat, states, strict=True)])
            for before, after in zip(subtrees, new_subtrees, strict=True):
                if before != after:
                    raise TypeError("optimizer update function produced an output structure that did not match "
                                    f"its input structure: input {before} and output {after}.")
            return OptimizerState(new_flat, treedef, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state: OptimizerState) -> Params:
            states_flat, treedef, subtrees = opt_state
            return tree_util.tree_unflatten(treedef, [get_params(s) for s in _unflatten_each(subtrees, states_flat)])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


def _unflatten_each(treedefs: Any, leaves: Any) -> list[Any]:
    return [tree_util.tree_unflatten(d, flat) for d, flat in zip(treedefs, leaves, strict=True)]


# ---------------------------------------------------------------------------
# Optimizers (each written for one array; the decorator lifts it to pytrees)


@optimizer
def sgd(step_size: float | Schedule) -> Optimizer:
    """Stochastic gradient descent: ``x <- x - step_size(i) * g``.

    Args:
      step_size: a positive number, or a schedule mapping the step index to one.
    """
    lr = make_schedule(step_size)

    def init(x0: Array) -> Array:
        return x0

    def update(i: Step, g: Array, x: Array) -> Array:
        return x - lr(i) * g

    def get_params(x: Array) -> Array:
        return x

    return Optimizer(init, update, get_params)


@optimizer
def momentum(step_size: float | Schedule, mass: float) -> tuple[Any, Any, Any]:
    """SGD with (heavy-ball) momentum: ``v <- mass * v + g``, ``x <- x - step_size(i) * v``."""
    lr = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array]:
        return x0, jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array]) -> tuple[Array, Array]:
        x, v = state
        v = mass * v + g
        return x - lr(i) * v, v

    return init, update, _first


@optimizer
def nesterov(step_size: float | Schedule, mass: float) -> tuple[Any, Any, Any]:
    """SGD with Nesterov momentum: the step looks ahead along the new velocity."""
    lr = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array]:
        return x0, jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array]) -> tuple[Array, Array]:
        x, v = state
        v = mass * v + g
        return x - lr(i) * (mass * v + g), v

    return init, update, _first


@optimizer
def adagrad(step_size: float | Schedule, momentum: float = 0.9) -> tuple[Any, Any, Any]:
    """Adagrad (Duchi, Hazan and Singer 2011), with momentum on the scaled gradient.

    The accumulated squared gradient scales each coordinate by its inverse
    square root; a coordinate that has only seen zero gradients is not moved.
    """
    lr = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, Array]:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        scale = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * scale) + momentum * m
        return x - lr(i) * m, g_sq, m

    return init, update, _first


@optimizer
def rmsprop(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8) -> tuple[Any, Any, Any]:
    """RMSProp: divide the step by a running root-mean-square of the gradients.

    Args:
      step_size: a positive number, or a schedule.
      gamma: the decay of the running mean of squared gradients.
      eps: added under the square root.
    """
    lr = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array]:
        return x0, jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array]) -> tuple[Array, Array]:
        x, avg_sq = state
        avg_sq = avg_sq * gamma + jnp.square(g) * (1.0 - gamma)
        return x - lr(i) * g / jnp.sqrt(avg_sq + eps), avg_sq

    return init, update, _first


@optimizer
def rmsprop_momentum(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8,
                     momentum: float = 0.9) -> tuple[Any, Any, Any]:
    """RMSProp whose scaled steps are accumulated with momentum (one more state array)."""
    lr = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, Array]:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        x, avg_sq, mom = state
        avg_sq = avg_sq * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + lr(i) * g / jnp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom

    return init, update, _first


@optimizer
def adam(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> tuple[Any, Any, Any]:
    """Adam (Kingma and Ba 2015).

    Args:
      step_size: a positive number, or a schedule.
      b1: the decay of the first-moment (mean) estimate.
      b2: the decay of the second-moment (uncentred variance) estimate.
      eps: added to the denominator's square root.
    """
    lr = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, Array]:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        # The bias corrections raise b1, b2 in the moments' dtype, not in Python
        # floats: step i is often a traced integer.
        m_hat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - lr(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v

    return init, update, _first


@optimizer
def adamax(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> tuple[Any, Any, Any]:
    """AdaMax, Adam's variant with an exponentially weighted infinity norm for the second moment."""
    lr = make_schedule(step_size)

    def init(x0: Array) -> tuple[Array, Array, Array]:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Step, g: Array, state: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        corrected_lr = lr(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        return x - corrected_lr * m / (u + eps), m, u

    return init, update, _first


@optimizer
def sm3(step_size: float | Schedule, momentum: float = 0.9) -> tuple[Any, Any, Any]:
    """SM3 (Anil et al. 2019): Adagrad whose accumulator costs one vector per axis.

    The state keeps, for each axis of the parameter, the maximum of the
    accumulated squared gradient over the other axes; a coordinate's
    accumulator is the minimum of its axes' entries.
    """
    lr = make_schedule(step_size)

    def along(ndim: int, v: Array, axis: int) -> Array:
        # v (one entry per index of `axis`) shaped to broadcast against an ndim array
        # (a slice assignment, not an item one: a scalar parameter's gradient has
        # ndim 0 while its state was made 1-d)
        index: list[Any] = [None] * ndim
        index[axis:axis + 1] = [slice(None)]
        return v[tuple(index)]

    def init(x0: Array) -> tuple[Array, Array, list[Array], tuple[int, ...]]:
        x_shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        return x0, jnp.zeros_like(x0), [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape], x_shape

    def update(i: Step, g: Array, state: Any) -> Any:
        x, m, vs, x_shape = state
        accum = functools.reduce(jnp.minimum, [along(g.ndim, v, ax) for ax, v in enumerate(vs)]) + jnp.square(g)
        scale = jnp.where(accum > 0, 1.0 / jnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * scale) + momentum * m
        x = x - lr(i) * m
        vs = [accum.max(tuple(d for d in range(x.ndim) if d != ax)) for ax in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state: Any) -> Array:
        x, _, _, x_shape = state
        return x.reshape(x_shape)

    return init, update, get_params


def _first(state: Any) -> Array:
    return state[0]


# ---------------------------------------------------------------------------
# Step-size schedules: functions of the step index


def constant(step_size: Any) -> Schedule:
    """The same step size at every step."""

    def schedule(i: Any) -> Any:
        return step_size

    return schedule


def exponential_decay(step_size: Any, decay_steps: Any, decay_rate: Any) -> Schedule:
    """``step_size * decay_rate ** (i / decay_steps)``."""

    def schedule(i: Any) -> Any:
        return step_size * decay_rate ** (i / decay_steps)

    return schedule


def inverse_time_decay(step_size: Any, decay_steps: Any, decay_rate: Any, staircase: bool = False) -> Schedule:
    """``step_size / (1 + decay_rate * i / decay_steps)``; with ``staircase``, ``i / decay_steps`` is floored."""
    if staircase:

        def schedule(i: Any) -> Any:
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    else:

        def schedule(i: Any) -> Any:
            return step_size / (1 + decay_rate * i / decay_steps)

    return schedule


def polynomial_decay(step_size: Any, decay_steps: Any, final_step_size: Any, power: float = 1.0) -> Schedule:
    """From ``step_size`` to ``final_step_size`` over ``decay_steps`` steps along ``(1 - t) ** power``; then constant."""

    def schedule(step_num: Any) -> Any:
        t = jnp.minimum(step_num, decay_steps) / decay_steps
        return (1 - t) ** power * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """``values[0]`` up to step ``boundaries[0]``, then ``values[1]`` up to ``boundaries[1]``, ...

    A step equal to a boundary still takes the value before it.
    """
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i: Any) -> Any:
        return values[jnp.sum(i > boundaries)]

    return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule as is; a scalar as the :func:`constant` schedule; anything else is a TypeError."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ---------------------------------------------------------------------------
# Utilities


def l2_norm(tree: Any) -> Array:
    """The Euclidean norm of all the leaves of ``tree`` taken as one vector."""
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in tree_util.tree_leaves(tree)))


def clip_grads(grad_tree: Any, max_norm: Any) -> Any:
    """Scale ``grad_tree`` down so that its :func:`l2_norm` is at most ``max_norm``."""
    norm = l2_norm(grad_tree)
    return tree_util.tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


# ---------------------------------------------------------------------------
# Serialization: an OptimizerState as a plain (nested) pytree and back


class JoinPoint:
    """A leaf of the parameters' tree that holds that leaf's optimizer state (a pytree)."""

    def __init__(self, subtree: Any) -> None:
        self.subtree = subtree

    # iterable, so that code walking containers of arrays walks into it
    def __iter__(self) -> Iterator[Any]:
        yield self.subtree


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """The parameters' tree with each leaf replaced by a :class:`JoinPoint` holding its state.

    Unlike the ``OptimizerState`` itself, the result holds no tree structures,
    only containers and arrays, so it can be pickled or saved.
    """
    states_flat, treedef, subtree_defs = opt_state
    return tree_util.tree_unflatten(treedef, [JoinPoint(s) for s in _unflatten_each(subtree_defs, states_flat)])


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The inverse of :func:`unpack_optimizer_state`."""
    sentinels, treedef = tree_util.tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state: every leaf must be a JoinPoint, as unpack_optimizer_state makes them; "
                        f"got leaves of types {sorted({type(s).__name__ for s in sentinels})}")
    states_flat, subtree_defs = _flatten_each([s.subtree for s in sentinels])
    return OptimizerState(states_flat, treedef, subtree_defs)
