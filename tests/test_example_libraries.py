"""minijax.example_libraries: stax layers and optimizers against NumPy references.

Every optimizer steps a small quadratic and is compared, step by step, with a
hand-written NumPy version of its update; schedules against their formulas;
the OptimizerState pytree through jit and pack/unpack; each stax layer's
output shape and values; the combinators; BatchNorm and Dropout's modes.
(Bit-for-bit parameters and trajectories against real JAX are in
test_example_libraries_oracle.py.)
"""

from __future__ import annotations

import pickle
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax.example_libraries import optimizers, stax

NDArray = np.ndarray[Any, Any]
KEY = jax.random.PRNGKey(0)


@pytest.mark.single_backend
def test_importing_minijax_leaves_the_example_libraries_alone() -> None:
    # as in JAX: `import jax` and `import jax.example_libraries` import neither library
    code = ("import sys, minijax, minijax.example_libraries as e; "
            "print(sorted(m for m in sys.modules if m.startswith('minijax.example_libraries')), "
            "hasattr(e, 'stax'), hasattr(e, 'optimizers'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["['minijax.example_libraries']", "False", "False"]


# ---------------------------------------------------------------------------
# Optimizers: one reference per optimizer, on float64 NumPy arrays
#   name -> (the optimizer, reference init(x) -> state, reference update(i, g, state) -> state)


def _ref_sm3_update(i: int, g: NDArray, state: Any, lr: float = 0.3, mom: float = 0.9) -> Any:
    x, m, vs = state
    # each axis's vector, broadcast along that axis; the accumulator is their minimum
    shaped = [v.reshape([-1 if d == ax else 1 for d in range(x.ndim)]) for ax, v in enumerate(vs)]
    accum = np.minimum.reduce(np.broadcast_arrays(*shaped)) + g**2
    m = (1 - mom) * g * np.where(accum > 0, 1 / np.sqrt(np.where(accum > 0, accum, 1)), 0) + mom * m
    vs = [accum.max(axis=tuple(d for d in range(x.ndim) if d != ax)) for ax in range(x.ndim)]
    return x - lr * m, m, vs


def _ref_adam(i: int, g: NDArray, s: Any, lr: float = 0.05, b1: float = 0.9, b2: float = 0.999) -> Any:
    x, m, v = s
    m, v = (1 - b1) * g + b1 * m, (1 - b2) * g**2 + b2 * v
    return x - lr * (m / (1 - b1 ** (i + 1))) / (np.sqrt(v / (1 - b2 ** (i + 1))) + 1e-8), m, v


def _ref_adagrad(i: int, g: NDArray, s: Any, lr: float = 0.3, mom: float = 0.9) -> Any:
    x, g_sq, m = s
    g_sq = g_sq + g**2
    m = (1 - mom) * g * np.where(g_sq > 0, 1 / np.sqrt(np.where(g_sq > 0, g_sq, 1)), 0) + mom * m
    return x - lr * m, g_sq, m


def _ref_rmsprop_momentum(i: int, g: NDArray, s: Any, lr: float = 0.01, gamma: float = 0.8,
                          mom: float = 0.5) -> Any:
    x, avg, mo = s
    avg = gamma * avg + (1 - gamma) * g**2
    mo = mom * mo + lr * g / np.sqrt(avg + 1e-8)
    return x - mo, avg, mo


def _zeros2(x: NDArray) -> Any:
    return x, np.zeros_like(x)


def _zeros3(x: NDArray) -> Any:
    return x, np.zeros_like(x), np.zeros_like(x)


OPTIMIZERS: dict[str, tuple[Callable[[], Any], Callable[[NDArray], Any], Callable[..., Any]]] = {
    "sgd": (lambda: optimizers.sgd(0.1), lambda x: (x,), lambda i, g, s: (s[0] - 0.1 * g,)),
    "sgd_schedule": (lambda: optimizers.sgd(lambda i: 0.2 / (i + 1)), lambda x: (x,),
                     lambda i, g, s: (s[0] - 0.2 / (i + 1) * g,)),
    "momentum": (lambda: optimizers.momentum(0.05, 0.9), _zeros2,
                 lambda i, g, s: (s[0] - 0.05 * (0.9 * s[1] + g), 0.9 * s[1] + g)),
    "nesterov": (lambda: optimizers.nesterov(0.05, 0.9), _zeros2,
                 lambda i, g, s: (s[0] - 0.05 * (0.9 * (0.9 * s[1] + g) + g), 0.9 * s[1] + g)),
    "adagrad": (lambda: optimizers.adagrad(0.3), _zeros3, _ref_adagrad),
    "rmsprop": (lambda: optimizers.rmsprop(0.01), _zeros2,
                lambda i, g, s: (s[0] - 0.01 * g / np.sqrt(0.9 * s[1] + 0.1 * g**2 + 1e-8),
                                 0.9 * s[1] + 0.1 * g**2)),
    "rmsprop_momentum": (lambda: optimizers.rmsprop_momentum(0.01, gamma=0.8, momentum=0.5), _zeros3,
                         _ref_rmsprop_momentum),
    "adam": (lambda: optimizers.adam(0.05), _zeros3, _ref_adam),
    "adamax": (lambda: optimizers.adamax(0.05), _zeros3,
               lambda i, g, s: (s[0] - 0.05 / (1 - 0.9 ** (i + 1)) * (0.1 * g + 0.9 * s[1])
                                / (np.maximum(0.999 * s[2], np.abs(g)) + 1e-8),
                                0.1 * g + 0.9 * s[1], np.maximum(0.999 * s[2], np.abs(g)))),
    "sm3": (lambda: optimizers.sm3(0.3), lambda x: (x, np.zeros_like(x), [np.zeros(n) for n in x.shape]),
            _ref_sm3_update),
}

_RNG = np.random.default_rng(0)
TARGET = {"w": _RNG.normal(size=(3, 4)).astype(np.float32), "b": _RNG.normal(size=(4,)).astype(np.float32)}
WEIGHT = {"w": 1 + np.abs(TARGET["w"]), "b": 1 + np.abs(TARGET["b"])}


def _quadratic(params: Any) -> Any:
    return sum(jnp.sum(WEIGHT[k] * (params[k] - TARGET[k]) ** 2) for k in sorted(params))


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_follows_its_numpy_update(name: str, jit: bool) -> None:
    make, ref_init, ref_update = OPTIMIZERS[name]
    opt_init, opt_update, get_params = make()
    update = jax.jit(opt_update) if jit else opt_update
    state = opt_init({k: jnp.zeros_like(v) for k, v in TARGET.items()})
    ref = {k: ref_init(np.zeros(v.shape)) for k, v in TARGET.items()}
    for i in range(6):
        grads = jax.grad(_quadratic)(get_params(state))
        state = update(i, grads, state)
        ref = {k: ref_update(i, 2 * WEIGHT[k] * (ref[k][0] - TARGET[k]), ref[k]) for k in ref}
        for k in ref:
            np.testing.assert_allclose(np.asarray(get_params(state)[k]), ref[k][0], rtol=2e-5, atol=2e-6,
                                       err_msg=f"{name}: step {i}, parameter {k}")
    assert _quadratic(get_params(state)) < _quadratic({k: np.zeros_like(v) for k, v in TARGET.items()})


def test_sm3_keeps_a_scalar_parameter_scalar() -> None:
    opt_init, opt_update, get_params = optimizers.sm3(0.5)
    state = opt_init(jnp.float32(1.0))
    state = opt_update(0, jnp.float32(2.0), state)
    x = get_params(state)
    assert x.shape == ()
    # accumulator 4, m = 0.1 * 2 / 2, step 0.5 * 0.1
    np.testing.assert_allclose(np.asarray(x), 1.0 - 0.5 * 0.1, rtol=1e-6)


@pytest.mark.parametrize(("schedule", "formula"), [
    (optimizers.constant(0.3), lambda i: 0.3),
    (optimizers.exponential_decay(0.3, 4, 0.7), lambda i: 0.3 * 0.7 ** (i / 4)),
    (optimizers.inverse_time_decay(0.3, 4, 0.7), lambda i: 0.3 / (1 + 0.7 * i / 4)),
    (optimizers.inverse_time_decay(0.3, 4, 0.7, staircase=True), lambda i: 0.3 / (1 + 0.7 * (i // 4))),
    # (power 2: XLA computes 6 / 6 as 6 * (1/6), a hair above 1, and a fractional power of
    # the negative 1 - t is nan there, in JAX as here)
    (optimizers.polynomial_decay(0.3, 6, 0.01, power=2.0), lambda i: (1 - min(i, 6) / 6) ** 2 * 0.29 + 0.01),
    (optimizers.piecewise_constant([3, 7], [1.0, 0.5, 0.25]), lambda i: 1.0 if i <= 3 else 0.5 if i <= 7 else 0.25),
], ids=["constant", "exponential", "inverse_time", "staircase", "polynomial", "piecewise"])
def test_schedules_follow_their_formulas(schedule: Callable[[Any], Any], formula: Callable[[int], float]) -> None:
    for i in [0, 1, 3, 4, 5, 7, 8, 9, 20]:
        np.testing.assert_allclose(np.asarray(schedule(i)), formula(i), rtol=1e-6, err_msg=f"step {i}")
        np.testing.assert_allclose(np.asarray(jax.jit(schedule)(i)), formula(i), rtol=1e-6, err_msg=f"step {i}")


def test_schedule_errors() -> None:
    with pytest.raises(ValueError, match="must be sequences"):
        optimizers.piecewise_constant(3, [1.0, 2.0])
    with pytest.raises(ValueError, match="one shorter than values"):
        optimizers.piecewise_constant([1, 2], [1.0, 2.0])
    with pytest.raises(TypeError):
        optimizers.make_schedule(np.ones(3))  # type: ignore[arg-type]
    assert optimizers.make_schedule(0.5)(7) == 0.5


def test_optimizer_state_is_a_pytree() -> None:
    params = {"w": jnp.ones((2, 3)), "b": [jnp.zeros(3), jnp.float32(2.0)]}
    opt_init, opt_update, get_params = optimizers.momentum(0.1, 0.9)
    state = opt_init(params)
    assert isinstance(state, optimizers.OptimizerState)
    leaves, treedef = jax.tree.flatten(state)
    assert len(leaves) == 6  # three parameters, each (x, velocity)
    rebuilt = jax.tree.unflatten(treedef, leaves)
    assert isinstance(rebuilt, optimizers.OptimizerState) and rebuilt.tree_def == state.tree_def
    # the structures are static data: a jitted identity gives the state back unchanged
    same = jax.jit(lambda s: s)(state)
    assert same.tree_def == state.tree_def and same.subtree_defs == state.subtree_defs
    doubled = jax.tree.map(lambda x: 2 * x, state)
    np.testing.assert_array_equal(np.asarray(get_params(doubled)["w"]), 2 * np.ones((2, 3)))


def test_pack_unpack_round_trip() -> None:
    params = {"w": jnp.arange(6.0).reshape(2, 3), "b": (jnp.ones(3),)}
    opt_init, opt_update, get_params = optimizers.adam(0.1)
    state = opt_update(0, params, opt_init(params))
    marked = optimizers.unpack_optimizer_state(state)
    assert isinstance(marked["w"], optimizers.JoinPoint) and len(marked["w"].subtree) == 3
    # the marked tree holds no treedefs: it pickles, and packs back to an equal state
    on_host = jax.tree.map(lambda j: optimizers.JoinPoint(jax.tree.map(np.asarray, j.subtree)), marked)
    restored = optimizers.pack_optimizer_state(pickle.loads(pickle.dumps(on_host)))
    assert restored.tree_def == state.tree_def and restored.subtree_defs == state.subtree_defs
    for a, b in zip(jax.tree.leaves(restored), jax.tree.leaves(state), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    after = opt_update(1, params, restored)
    np.testing.assert_array_equal(np.asarray(get_params(after)["w"]),
                                  np.asarray(get_params(opt_update(1, params, state))["w"]))
    with pytest.raises(TypeError, match="JoinPoint"):
        optimizers.pack_optimizer_state({"w": np.ones(2)})


def test_update_with_a_mismatched_gradient_tree_is_a_type_error() -> None:
    opt_init, opt_update, _ = optimizers.sgd(0.1)
    state = opt_init({"a": jnp.ones(2), "b": jnp.ones(2)})
    with pytest.raises(TypeError, match="did not match the parameter tree structure"):
        opt_update(0, {"a": jnp.ones(2)}, state)


def test_an_update_that_changes_its_state_structure_is_a_type_error() -> None:
    @optimizers.optimizer
    def bad(step_size: float) -> Any:
        return (lambda x: (x, x), lambda i, g, s: (s[0],), lambda s: s[0])

    opt_init, opt_update, _ = bad(0.1)
    with pytest.raises(TypeError, match="did not match its input structure"):
        opt_update(0, jnp.ones(2), opt_init(jnp.ones(2)))


def test_optimizer_decorator_lifts_a_single_array_optimizer() -> None:
    @optimizers.optimizer
    def halve() -> Any:
        return (lambda x: {"x": x, "n": jnp.zeros(())}, lambda i, g, s: {"x": s["x"] / 2, "n": s["n"] + 1},
                lambda s: s["x"])

    opt = halve()
    assert isinstance(opt, optimizers.Optimizer) and halve.__name__ == "halve"
    state = opt.update_fn(0, [1.0, (2.0,)], opt.init_fn([jnp.float32(4.0), (jnp.float32(8.0),)]))
    assert [float(v) for v in jax.tree.leaves(opt.params_fn(state))] == [2.0, 4.0]


def test_l2_norm_and_clip_grads() -> None:
    tree = {"a": jnp.arange(6.0).reshape(2, 3), "b": [jnp.float32(-4.0), jnp.ones(3)]}
    norm = np.sqrt(np.sum(np.arange(6.0) ** 2) + 16 + 3)
    np.testing.assert_allclose(np.asarray(optimizers.l2_norm(tree)), norm, rtol=1e-6)
    clipped = optimizers.clip_grads(tree, 2.0)
    np.testing.assert_allclose(np.asarray(optimizers.l2_norm(clipped)), 2.0, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(clipped["a"]), np.arange(6.0).reshape(2, 3) * 2.0 / norm, rtol=1e-6)
    untouched = optimizers.clip_grads(tree, 100.0)
    np.testing.assert_array_equal(np.asarray(untouched["b"][0]), -4.0)


# ---------------------------------------------------------------------------
# stax


def _x(*shape: int, seed: int = 0) -> NDArray:
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def test_dense() -> None:
    init_fun, apply_fun = stax.Dense(5)
    out_shape, (W, b) = init_fun(KEY, (2, 3, 4))
    assert out_shape == (2, 3, 5) and W.shape == (4, 5) and b.shape == (5,)
    # glorot_normal: std sqrt(2 / (fan_in + fan_out))
    big_W = stax.Dense(400)[0](KEY, (1, 600))[1][0]
    assert 0.8 < np.std(np.asarray(big_W)) / np.sqrt(2 / 1000) < 1.2
    x = _x(2, 3, 4)
    np.testing.assert_allclose(np.asarray(apply_fun((W, b), x)), x @ np.asarray(W) + np.asarray(b), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize(("layer", "reference"), [
    (stax.Tanh, np.tanh),
    (stax.Relu, lambda x: np.maximum(x, 0)),
    (stax.Exp, np.exp),
    (stax.Sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    (stax.Softplus, lambda x: np.logaddexp(x, 0)),
    (stax.Elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    (stax.LeakyRelu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    (stax.Selu, lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))),
    (stax.Gelu, lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))),
    (stax.Softmax, lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    (stax.LogSoftmax, lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
    (stax.Identity, lambda x: x),
], ids=["Tanh", "Relu", "Exp", "Sigmoid", "Softplus", "Elu", "LeakyRelu", "Selu", "Gelu", "Softmax", "LogSoftmax",
        "Identity"])
def test_elementwise_layers(layer: Any, reference: Callable[[NDArray], NDArray]) -> None:
    init_fun, apply_fun = layer
    assert init_fun(KEY, (3, 4)) == ((3, 4), ())
    x = _x(3, 4)
    np.testing.assert_allclose(np.asarray(apply_fun((), x)), reference(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_elementwise_passes_its_keyword_arguments() -> None:
    _, apply_fun = stax.elementwise(jnp.clip, min=-0.5, max=0.5)
    x = _x(10)
    np.testing.assert_array_equal(np.asarray(apply_fun((), x)), np.clip(x, -0.5, 0.5))


def test_flatten() -> None:
    init_fun, apply_fun = stax.Flatten
    assert init_fun(KEY, (2, 3, 4, 5)) == ((2, 60), ())
    x = _x(2, 3, 4, 5)
    np.testing.assert_array_equal(np.asarray(apply_fun((), x)), x.reshape(2, 60))


@pytest.mark.parametrize(("kwargs", "shape"), [
    ({}, (4, 3, 3, 2)),
    ({"axis": 0}, (6, 3)),
    ({"axis": (0, 2), "center": False}, (4, 3, 5)),
    ({"axis": (0, 1), "scale": False}, (4, 3, 5)),
    ({"axis": 1, "center": False, "scale": False, "epsilon": 0.1}, (4, 3)),
], ids=["default", "axis0", "nocenter", "noscale", "neither"])
def test_batchnorm(kwargs: dict[str, Any], shape: tuple[int, ...]) -> None:
    init_fun, apply_fun = stax.BatchNorm(beta_init=jax.nn.initializers.normal(1.0),
                                         gamma_init=jax.nn.initializers.normal(1.0), **kwargs)
    out_shape, (beta, gamma) = init_fun(KEY, shape)
    axis = kwargs.get("axis", (0, 1, 2))
    axes = (axis,) if isinstance(axis, int) else axis
    kept = tuple(n for i, n in enumerate(shape) if i not in axes)
    assert out_shape == shape
    assert (beta == () if kwargs.get("center") is False else beta.shape == kept)
    assert (gamma == () if kwargs.get("scale") is False else gamma.shape == kept)
    x = _x(*shape).astype(np.float64)
    z = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + kwargs.get("epsilon", 1e-5))
    if kwargs.get("scale", True):
        z = np.expand_dims(np.asarray(gamma), axes) * z
    if kwargs.get("center", True):
        z = z + np.expand_dims(np.asarray(beta), axes)
    np.testing.assert_allclose(np.asarray(apply_fun((beta, gamma), x.astype(np.float32))), z, rtol=1e-4, atol=1e-4)


def test_dropout_modes() -> None:
    init_fun, apply_fun = stax.Dropout(0.75)
    assert init_fun(KEY, (50, 40)) == ((50, 40), ())
    x = _x(50, 40) + 5  # no zeros of its own
    y = np.asarray(apply_fun((), x, rng=jax.random.PRNGKey(1)))
    kept = y != 0
    # `rate` is the probability of keeping an element (JAX's convention), kept ones are scaled by 1/rate
    assert 0.68 < kept.mean() < 0.82
    np.testing.assert_allclose(y[kept], x[kept] / 0.75, rtol=1e-6)
    again = np.asarray(apply_fun((), x, rng=jax.random.PRNGKey(1)))
    np.testing.assert_array_equal(y, again)
    np.testing.assert_array_equal(np.asarray(stax.Dropout(0.5, mode="test")[1]((), x, rng=KEY)), x)
    with pytest.raises(ValueError, match="requires apply_fun to be called with a PRNG key"):
        apply_fun((), x)


def test_serial_splits_keys_in_order_and_passes_rng() -> None:
    init_fun, apply_fun = stax.serial(stax.Dense(4), stax.Relu, stax.Dropout(0.5), stax.Dense(2))
    out_shape, params = init_fun(KEY, (3, 5))
    assert out_shape == (3, 2) and len(params) == 4 and params[1] == () and params[2] == ()
    # layer k is initialized with the second half of the k-th split of the running key
    rng = KEY
    for k, layer in [(0, stax.Dense(4))]:
        rng, layer_rng = jax.random.split(rng)
        np.testing.assert_array_equal(np.asarray(layer[0](layer_rng, (3, 5))[1][0]), np.asarray(params[k][0]))
    x = _x(3, 5)
    key = jax.random.PRNGKey(7)
    keys = jax.random.split(key, 4)
    h = np.maximum(x @ np.asarray(params[0][0]) + np.asarray(params[0][1]), 0)
    h = np.asarray(stax.Dropout(0.5)[1]((), h, rng=keys[2]))
    expected = h @ np.asarray(params[3][0]) + np.asarray(params[3][1])
    np.testing.assert_allclose(np.asarray(apply_fun(params, x, rng=key)), expected, rtol=1e-5, atol=1e-5)
    # without an rng, a Dropout inside fails as it does alone
    with pytest.raises(ValueError, match="PRNG key"):
        apply_fun(params, x)


def test_fanout_parallel_faninsum_and_concat() -> None:
    init_fun, apply_fun = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(5), stax.Identity), stax.FanInSum)
    out_shape, params = init_fun(KEY, (3, 5))
    assert out_shape == (3, 5)
    x = _x(3, 5)
    (W, b), () = params[1]
    np.testing.assert_allclose(np.asarray(apply_fun(params, x)), x @ np.asarray(W) + np.asarray(b) + x, rtol=1e-5,
                               atol=1e-5)
    init_fun, apply_fun = stax.serial(stax.FanOut(3), stax.parallel(stax.Dense(2), stax.Tanh, stax.Dense(1)),
                                      stax.FanInConcat(axis=1))
    out_shape, params = init_fun(KEY, (3, 5))
    assert out_shape == (3, 8)
    y = np.asarray(apply_fun(params, x))
    np.testing.assert_allclose(y[:, 2:7], np.tanh(x), rtol=1e-6)
    np.testing.assert_allclose(y[:, :2], x @ np.asarray(params[1][0][0]) + np.asarray(params[1][0][1]), rtol=1e-5,
                               atol=1e-5)
    init_fun, apply_fun = stax.parallel(stax.Dense(2), stax.Relu)
    shapes, params = init_fun(KEY, [(4, 3), (4, 6)])
    assert shapes == ((4, 2), (4, 6)) and len(params) == 2
    outs = apply_fun(params, [_x(4, 3), _x(4, 6)])
    assert [o.shape for o in outs] == [(4, 2), (4, 6)]


def test_shape_dependent() -> None:
    init_fun, apply_fun = stax.shape_dependent(lambda shape: stax.Dense(2 * shape[-1]))
    out_shape, params = init_fun(KEY, (3, 4))
    assert out_shape == (3, 8) and params[0].shape == (4, 8)
    assert apply_fun(params, _x(3, 4)).shape == (3, 8)


def test_a_stax_model_trains_under_jit_with_grad() -> None:
    init_fun, predict = stax.serial(stax.Dense(16), stax.Tanh, stax.Dense(3), stax.LogSoftmax)
    _, params = init_fun(KEY, (-1, 4))
    x = _x(32, 4)
    labels = np.eye(3, dtype=np.float32)[np.argmax(x[:, :3], axis=1)]
    opt_init, opt_update, get_params = optimizers.adam(0.05)

    def loss(p: Any) -> Any:
        return -jnp.mean(jnp.sum(predict(p, x) * labels, axis=1))

    @jax.jit
    def step(i: Any, state: Any) -> Any:
        value, grads = jax.value_and_grad(loss)(get_params(state))
        return value, opt_update(i, grads, state)

    state = opt_init(params)
    losses = []
    for i in range(30):
        value, state = step(i, state)
        losses.append(float(value))
    assert losses[-1] < 0.5 * losses[0]


# ---------------------------------------------------------------------------
# Convolution and pooling layers, against direct NumPy loops (NHWC, HWIO)


def _np_correlate(x: NDArray, w: NDArray, strides: tuple[int, int], pads: list[tuple[int, int]]) -> NDArray:
    xp = np.pad(x.astype(np.float64), [(0, 0), *pads, (0, 0)])
    kh, kw = w.shape[:2]
    oh = (xp.shape[1] - kh) // strides[0] + 1
    ow = (xp.shape[2] - kw) // strides[1] + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw, :]
            out[:, i, j, :] = np.einsum("nhwc,hwco->no", patch, w)
    return out


def _same_pads(size: int, window: int, stride: int) -> tuple[int, int]:
    total = max((-(-size // stride) - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


@pytest.mark.parametrize(("kwargs", "expected_shape"), [
    ({}, (2, 7, 6, 4)),
    ({"strides": (2, 1)}, (2, 4, 6, 4)),
    ({"padding": "SAME"}, (2, 9, 8, 4)),
    ({"strides": (2, 3), "padding": "SAME"}, (2, 5, 3, 4)),
    ({"padding": [(1, 0), (2, 1)]}, (2, 8, 9, 4)),
], ids=["valid", "strided", "same", "same_strided", "explicit"])
def test_conv(kwargs: dict[str, Any], expected_shape: tuple[int, ...]) -> None:
    init_fun, apply_fun = stax.Conv(4, (3, 3), **kwargs)
    out_shape, (W, b) = init_fun(KEY, (2, 9, 8, 3))
    assert tuple(out_shape) == expected_shape and W.shape == (3, 3, 3, 4) and b.shape == (1, 1, 1, 4)
    x = _x(2, 9, 8, 3)
    strides = kwargs.get("strides", (1, 1))
    padding = kwargs.get("padding", "VALID")
    if padding == "VALID":
        pads = [(0, 0), (0, 0)]
    elif padding == "SAME":
        pads = [_same_pads(9, 3, strides[0]), _same_pads(8, 3, strides[1])]
    else:
        pads = padding
    expected = _np_correlate(x, np.asarray(W, np.float64), strides, pads) + np.asarray(b, np.float64)
    y = apply_fun((W, b), x)
    assert y.shape == expected_shape
    np.testing.assert_allclose(np.asarray(y), expected, rtol=1e-4, atol=1e-5)


def test_general_conv_nchw() -> None:
    init_fun, apply_fun = stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 5, (2, 3), strides=(1, 2))
    out_shape, (W, b) = init_fun(KEY, (2, 3, 7, 8))
    assert tuple(out_shape) == (2, 5, 6, 3) and W.shape == (5, 3, 2, 3) and b.shape == (1, 5, 1, 1)
    x = _x(2, 3, 7, 8)
    expected = _np_correlate(x.transpose(0, 2, 3, 1), np.asarray(W, np.float64).transpose(2, 3, 1, 0), (1, 2),
                             [(0, 0), (0, 0)]).transpose(0, 3, 1, 2) + np.asarray(b)
    np.testing.assert_allclose(np.asarray(apply_fun((W, b), x)), expected, rtol=1e-4, atol=1e-5)


def _np_pool(x: NDArray, window: tuple[int, int], strides: tuple[int, int], padding: str, kind: str) -> NDArray:
    pads = [(0, 0), (0, 0)] if padding == "VALID" else [_same_pads(x.shape[1 + d], window[d], strides[d])
                                                        for d in range(2)]
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x.astype(np.float64), [(0, 0), *pads, (0, 0)], constant_values=fill)
    counts = np.pad(np.ones(x.shape[1:3]), pads)
    oh = (xp.shape[1] - window[0]) // strides[0] + 1
    ow = (xp.shape[2] - window[1]) // strides[1] + 1
    out = np.zeros((x.shape[0], oh, ow, x.shape[3]))
    for i in range(oh):
        for j in range(ow):
            rows, cols = slice(i * strides[0], i * strides[0] + window[0]), slice(j * strides[1], j * strides[1] + window[1])
            patch = xp[:, rows, cols, :]
            if kind == "max":
                out[:, i, j, :] = patch.max(axis=(1, 2))
            elif kind == "sum":
                out[:, i, j, :] = patch.sum(axis=(1, 2))
            else:  # the mean over the window's elements inside the input, padding left out
                out[:, i, j, :] = patch.sum(axis=(1, 2)) / counts[rows, cols].sum()
    return out


@pytest.mark.parametrize("kind", ["max", "sum", "avg"])
@pytest.mark.parametrize(("window", "strides", "padding"), [
    ((2, 2), None, "VALID"),
    ((2, 2), (2, 2), "VALID"),
    ((3, 3), (2, 2), "SAME"),
    ((3, 2), (1, 2), "SAME"),
], ids=["valid", "valid_strided", "same_strided", "same_rect"])
def test_pooling(kind: str, window: tuple[int, int], strides: tuple[int, int] | None, padding: str) -> None:
    layer = {"max": stax.MaxPool, "sum": stax.SumPool, "avg": stax.AvgPool}[kind]
    init_fun, apply_fun = layer(window, strides, padding)
    x = _x(2, 7, 6, 3)
    expected = _np_pool(x, window, strides or (1, 1), padding, kind)
    out_shape, params = init_fun(KEY, x.shape)
    assert tuple(out_shape) == expected.shape and params == ()
    np.testing.assert_allclose(np.asarray(apply_fun((), x)), expected, rtol=1e-5, atol=1e-6)


def test_pooling_with_a_spec_pools_the_named_spatial_axes() -> None:
    init_fun, apply_fun = stax.AvgPool((2, 2), (2, 2), "SAME", spec="NCHW")
    x = _x(2, 3, 5, 6)
    out_shape, _ = init_fun(KEY, x.shape)
    assert tuple(out_shape) == (2, 3, 3, 3)
    expected = _np_pool(x.transpose(0, 2, 3, 1), (2, 2), (2, 2), "SAME", "avg").transpose(0, 3, 1, 2)
    np.testing.assert_allclose(np.asarray(apply_fun((), x)), expected, rtol=1e-5, atol=1e-6)


def test_a_cnn_trains_under_jit() -> None:
    init_fun, predict = stax.serial(
        stax.Conv(4, (3, 3), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), strides=(2, 2)),
        stax.Conv(6, (3, 3)), stax.Relu, stax.AvgPool((2, 2), strides=(2, 2)),
        stax.Flatten, stax.Dense(3), stax.LogSoftmax,
    )  # fmt: skip
    # (a batch of -1 would come out as 0: JAX's pooling shape rule computes with it as a size)
    out_shape, params = init_fun(KEY, (16, 12, 12, 1))
    assert tuple(out_shape) == (16, 3)
    x = _x(16, 12, 12, 1)
    labels = np.eye(3, dtype=np.float32)[np.arange(16) % 3]
    x[np.arange(16) % 3 == 0, :6] += 2.0  # something to learn
    opt_init, opt_update, get_params = optimizers.momentum(0.05, 0.9)

    def loss(p: Any) -> Any:
        return -jnp.mean(jnp.sum(predict(p, x) * labels, axis=1))

    def train_step(i: Any, state: Any) -> Any:
        value, grads = jax.value_and_grad(loss)(get_params(state))
        return value, opt_update(i, grads, state)

    step = jax.jit(train_step)
    state = opt_init(params)
    losses = []
    for i in range(8):
        value, state = step(i, state)
        losses.append(float(value))
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]


def _np_conv_transpose(x: NDArray, w: NDArray, strides: tuple[int, ...], padding: str) -> NDArray:
    # JAX's conv_transpose (kernel not flipped): the input spread out by the strides,
    # padded so that VALID gives in * s + max(k - s, 0) and SAME gives in * s, then correlated
    spatial = x.ndim - 2
    dilated_shape = [x.shape[0], *[(n - 1) * s + 1 for n, s in zip(x.shape[1:-1], strides)], x.shape[-1]]
    dilated = np.zeros(dilated_shape)
    dilated[(slice(None), *[slice(None, None, s) for s in strides], slice(None))] = x
    pads = []
    for k, s in zip(w.shape[:spatial], strides):
        if padding == "VALID":
            total = k + s - 2 + max(k - s, 0)
            low = k - 1
        else:
            total = k + s - 2
            low = k - 1 if s > k - 1 else -(-total // 2)
        pads.append((low, total - low))
    if spatial == 1:
        return _np_correlate(dilated[:, :, None, :], w[:, None], (1, 1), [pads[0], (0, 0)])[:, :, 0, :]
    return _np_correlate(dilated, w, (1, 1), pads)


@pytest.mark.parametrize(("layer", "in_shape", "strides", "padding", "expected_shape"), [
    ("2d", (2, 5, 4, 3), (2, 2), "VALID", (2, 11, 9, 4)),
    ("2d", (2, 5, 4, 3), (2, 1), "SAME", (2, 10, 4, 4)),
    ("2d", (2, 5, 4, 3), (1, 1), "VALID", (2, 7, 6, 4)),
    ("1d", (2, 6, 3), (3,), "VALID", (2, 18, 4)),
    ("1d", (2, 6, 3), (2,), "SAME", (2, 12, 4)),
], ids=["valid", "same", "unit_strides", "1d_valid", "1d_same"])
def test_conv_transpose(layer: str, in_shape: tuple[int, ...], strides: tuple[int, ...], padding: str,
                        expected_shape: tuple[int, ...]) -> None:
    make = stax.ConvTranspose if layer == "2d" else stax.Conv1DTranspose
    init_fun, apply_fun = make(4, (3,) * len(strides), strides=strides, padding=padding)
    out_shape, (W, b) = init_fun(KEY, in_shape)
    assert tuple(out_shape) == expected_shape and W.shape == (*(3,) * len(strides), 3, 4)
    x = _x(*in_shape)
    expected = _np_conv_transpose(x, np.asarray(W, np.float64), strides, padding) + np.asarray(b)
    y = apply_fun((W, b), x)
    assert y.shape == expected_shape
    np.testing.assert_allclose(np.asarray(y), expected, rtol=1e-4, atol=1e-5)
