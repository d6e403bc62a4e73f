"""minijax.example_libraries against real JAX's stax and optimizers, in one process.

The same key gives bit-for-bit the same parameters for every layer; every
optimizer follows JAX's trajectory for 10 steps; a LeNet-style CNN trained
for 20 steps with adam (and with momentum) under jit has JAX's losses.

Run with the oracle environment (README.md, "More"):
    .venv-oracle/bin/python -m pytest -m oracle tests/test_example_libraries_oracle.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")
from jax.example_libraries import optimizers as j_opt, stax as j_stax  # noqa: E402

import minijax as mj  # noqa: E402
from minijax.example_libraries import optimizers as m_opt, stax as m_stax  # noqa: E402

pytestmark = pytest.mark.oracle

LIBS = {"jax": (jax, j_stax, j_opt), "minijax": (mj, m_stax, m_opt)}

# What a module imports for its own use is not its API.
_NOT_API = {"annotations", "functools", "math", "jax", "jnp", "lax", "random", "Any", "Callable", "NamedTuple",
            "namedtuple", "partial", "map", "zip", "safe_map", "safe_zip", "unzip2", "Iterator", "Sequence",
            "Iterable", "tree_util", "InitFun", "ApplyFun", "Layer"}


def _api(module: Any) -> set[str]:
    return {n for n in dir(module) if n.isidentifier() and not n.startswith("_") and n not in _NOT_API}


@pytest.mark.parametrize("name", ["stax", "optimizers"])
def test_public_names_are_jaxs(name: str) -> None:
    assert _api(m_stax if name == "stax" else m_opt) == _api(j_stax if name == "stax" else j_opt)


def _host(tree: Any, jax_module: Any) -> Any:
    return jax_module.tree.map(np.asarray, tree)


def assert_trees_equal(ours: Any, theirs: Any, rtol: float = 0.0, atol: float = 0.0) -> None:
    ours_leaves, ours_def = mj.tree.flatten(_host(ours, mj))
    theirs_leaves, theirs_def = jax.tree.flatten(_host(theirs, jax))
    assert str(ours_def).replace("PyTreeDef", "") == str(theirs_def).replace("PyTreeDef", "")
    for o, t in zip(ours_leaves, theirs_leaves, strict=True):
        assert o.shape == t.shape and o.dtype == t.dtype
        if rtol == atol == 0.0:
            np.testing.assert_array_equal(o, t)
        else:
            np.testing.assert_allclose(o, t, rtol=rtol, atol=atol)


# name -> (layer builder from a stax module, input shape)
LAYERS: dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]] = {
    "Dense": (lambda s: s.Dense(7), (3, 5)),
    "Dense_inits": (lambda s: s.Dense(4, W_init=s.randn(0.5), b_init=s.zeros), (2, 6)),
    "BatchNorm": (lambda s: s.BatchNorm(), (2, 3, 4, 5)),
    "BatchNorm_axis": (lambda s: s.BatchNorm(axis=0, beta_init=s.normal(), gamma_init=s.normal()), (4, 3)),
    "BatchNorm_noscale": (lambda s: s.BatchNorm(axis=(0, 1), scale=False, beta_init=s.normal()), (2, 3, 4)),
    "Conv": (lambda s: s.Conv(6, (3, 3)), (2, 9, 9, 3)),
    "Conv_strided_same": (lambda s: s.Conv(4, (3, 2), strides=(2, 1), padding="SAME"), (2, 8, 7, 3)),
    "GeneralConv_NCHW": (lambda s: s.GeneralConv(("NCHW", "OIHW", "NCHW"), 5, (2, 3)), (2, 3, 7, 8)),
    "ConvTranspose": (lambda s: s.ConvTranspose(4, (3, 3), strides=(2, 2)), (2, 5, 5, 3)),
    "ConvTranspose_same": (lambda s: s.ConvTranspose(4, (3, 3), strides=(2, 2), padding="SAME"), (2, 5, 5, 3)),
    "Conv1DTranspose": (lambda s: s.Conv1DTranspose(3, (4,), strides=(2,)), (2, 6, 2)),
    "MaxPool": (lambda s: s.MaxPool((2, 2)), (2, 6, 6, 3)),
    "MaxPool_same": (lambda s: s.MaxPool((3, 3), strides=(2, 2), padding="SAME"), (2, 7, 7, 3)),
    "AvgPool_same": (lambda s: s.AvgPool((3, 3), strides=(2, 2), padding="SAME"), (2, 7, 7, 3)),
    "AvgPool_spec": (lambda s: s.AvgPool((2, 2), spec="NCHW"), (2, 3, 6, 6)),
    "SumPool": (lambda s: s.SumPool((2, 3), strides=(1, 2)), (2, 6, 7, 3)),
    "Flatten": (lambda s: s.Flatten, (2, 3, 4)),
    "Tanh": (lambda s: s.Tanh, (3, 4)),
    "Gelu": (lambda s: s.Gelu, (3, 4)),
    "LogSoftmax": (lambda s: s.LogSoftmax, (3, 4)),
    "serial": (lambda s: s.serial(s.Dense(8), s.Relu, s.Dense(8), s.Selu, s.Dense(2), s.Softmax), (4, 5)),
    "residual": (lambda s: s.serial(s.FanOut(2), s.parallel(s.Dense(5), s.Identity), s.FanInSum), (3, 5)),
    "concat": (lambda s: s.serial(s.FanOut(3), s.parallel(s.Dense(2), s.Dense(3), s.Sigmoid), s.FanInConcat()),
               (3, 5)),
    "shape_dependent": (lambda s: s.shape_dependent(lambda shape: s.Dense(shape[-1] * 2)), (3, 4)),
}


def _init_and_apply(lib: str, name: str, seed: int) -> tuple[Any, Any, Any]:
    jax_module, stax, _ = LIBS[lib]
    build, shape = LAYERS[name]
    init_fun, apply_fun = build(stax)
    out_shape, params = init_fun(jax_module.random.PRNGKey(seed), shape)
    x = jax_module.numpy.asarray(np.random.default_rng(seed).normal(size=shape).astype(np.float32))
    return out_shape, params, apply_fun(params, x)


@pytest.mark.parametrize("name", LAYERS)
def test_layer_params_and_outputs_are_jaxs(name: str) -> None:
    ours, theirs = _init_and_apply("minijax", name, 3), _init_and_apply("jax", name, 3)
    assert ours[0] == theirs[0] or list(map(tuple, ours[0])) == list(map(tuple, theirs[0]))  # output shape(s)
    assert_trees_equal(ours[1], theirs[1])  # the same key gives the same parameters, bit for bit
    assert_trees_equal(ours[2], theirs[2], rtol=2e-6, atol=2e-6)


def test_parallel_init_returns_a_zip_like_jax() -> None:
    for lib in LIBS:
        jax_module, stax, _ = LIBS[lib]
        out = stax.parallel(stax.Dense(2), stax.Tanh)[0](jax_module.random.PRNGKey(0), [(3, 4), (3, 4)])
        shapes, params = out
        assert shapes == ((3, 2), (3, 4)) and len(params) == 2


def test_dropout_is_jaxs() -> None:
    results = {}
    for lib in LIBS:
        jax_module, stax, _ = LIBS[lib]
        _, apply_fun = stax.serial(stax.Dropout(0.7), stax.Dense(3))[0:2]
        params = stax.serial(stax.Dropout(0.7), stax.Dense(3))[0](jax_module.random.PRNGKey(1), (4, 6))[1]
        x = jax_module.numpy.ones((4, 6))
        results[lib] = (apply_fun(params, x, rng=jax_module.random.PRNGKey(2)),
                        stax.Dropout(0.5, mode="test")[1]((), x, rng=jax_module.random.PRNGKey(2)))
        with pytest.raises(ValueError, match="requires apply_fun to be called with a PRNG key"):
            stax.Dropout(0.5)[1]((), x)
    assert_trees_equal(results["minijax"], results["jax"], rtol=1e-6, atol=1e-6)


# name -> an optimizer triple from an optimizers module
OPTIMIZERS: dict[str, Callable[[Any], Any]] = {
    "sgd": lambda o: o.sgd(0.1),
    "sgd_exponential_decay": lambda o: o.sgd(o.exponential_decay(0.1, 3, 0.5)),
    "sgd_piecewise": lambda o: o.sgd(o.piecewise_constant([2, 5], [0.1, 0.05, 0.01])),
    "momentum": lambda o: o.momentum(0.05, 0.9),
    "momentum_inverse_time": lambda o: o.momentum(o.inverse_time_decay(0.05, 2, 0.5, staircase=True), 0.8),
    "nesterov": lambda o: o.nesterov(0.05, 0.9),
    "adagrad": lambda o: o.adagrad(0.3),
    "rmsprop": lambda o: o.rmsprop(0.01),
    "rmsprop_momentum": lambda o: o.rmsprop_momentum(0.01, gamma=0.8, momentum=0.5),
    "adam": lambda o: o.adam(0.05),
    "adam_polynomial": lambda o: o.adam(o.polynomial_decay(0.05, 5, 0.001, power=2.0)),
    "adamax": lambda o: o.adamax(0.05),
    "sm3": lambda o: o.sm3(0.3),
}


def _trajectory(lib: str, name: str, jit: bool) -> list[Any]:
    jax_module, _, optimizers = LIBS[lib]
    jnp = jax_module.numpy
    rng = np.random.default_rng(0)
    target = {"w": jnp.asarray(rng.normal(size=(3, 4)).astype(np.float32)),
              "b": jnp.asarray(rng.normal(size=(4,)).astype(np.float32)), "s": jnp.asarray(np.float32(2.0))}
    params = jax_module.tree.map(jnp.zeros_like, target)

    def loss(p: Any) -> Any:
        sq = jax_module.tree.map(lambda a, t: jnp.sum((a - t) ** 2 * (1.0 + jnp.abs(t))), p, target)
        return sum(jax_module.tree.leaves(sq))

    opt_init, opt_update, get_params = OPTIMIZERS[name](optimizers)

    # get_params stays outside jit: sm3 keeps the parameter's shape in its state
    # as int leaves, which jit would trace (JAX fails there too).
    grad, update = (jax_module.jit(jax_module.grad(loss)), jax_module.jit(opt_update)) if jit else \
        (jax_module.grad(loss), opt_update)
    state = opt_init(params)
    out = []
    for i in range(10):
        state = update(i, grad(get_params(state)), state)
        out.append(get_params(state))
    return out


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_trajectory_is_jaxs(name: str, jit: bool) -> None:
    ours, theirs = _trajectory("minijax", name, jit), _trajectory("jax", name, jit)
    for o, t in zip(ours, theirs, strict=True):
        assert_trees_equal(o, t, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("schedule", [
    lambda o: o.constant(0.3),
    lambda o: o.exponential_decay(0.3, 4, 0.7),
    lambda o: o.inverse_time_decay(0.3, 4, 0.7),
    lambda o: o.inverse_time_decay(0.3, 4, 0.7, staircase=True),
    lambda o: o.polynomial_decay(0.3, 6, 0.01, power=0.5),
    lambda o: o.piecewise_constant([3, 7], [1.0, 0.5, 0.25]),
], ids=["constant", "exponential", "inverse_time", "staircase", "polynomial", "piecewise"])
def test_schedules_are_jaxs(schedule: Callable[[Any], Any]) -> None:
    for i in [0, 1, 3, 4, 7, 9, 20]:
        ours, theirs = schedule(m_opt)(i), schedule(j_opt)(i)
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
        assert np.asarray(ours).dtype == np.asarray(theirs).dtype


def test_clip_grads_and_l2_norm_are_jaxs() -> None:
    tree = {"a": np.arange(6.0, dtype=np.float32).reshape(2, 3), "b": [np.float32(-4.0), np.ones(3, np.float32)]}
    for max_norm in (1.0, 100.0):
        ours = m_opt.clip_grads(mj.tree.map(mj.numpy.asarray, tree), max_norm)
        theirs = j_opt.clip_grads(jax.tree.map(jax.numpy.asarray, tree), max_norm)
        assert_trees_equal(ours, theirs, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(m_opt.l2_norm(tree)), np.asarray(j_opt.l2_norm(tree)), rtol=1e-6)


def _lenet(stax: Any, pool: str) -> Any:
    second_pool = stax.AvgPool((2, 2), strides=(2, 2)) if pool == "avg" else stax.MaxPool((2, 2), strides=(2, 2))
    return stax.serial(
        stax.Conv(8, (5, 5), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), strides=(2, 2)),
        stax.Conv(16, (5, 5)), stax.Relu, second_pool,
        stax.Flatten, stax.Dense(32), stax.Relu, stax.Dense(10), stax.LogSoftmax,
    )  # fmt: skip


def _train_lenet(lib: str, optimizer: str, pool: str, steps: int = 20, batch: int = 32) -> list[float]:
    jax_module, stax, optimizers = LIBS[lib]
    jnp = jax_module.numpy
    rng = np.random.default_rng(0)
    images = jnp.asarray(rng.normal(size=(batch, 28, 28, 1)).astype(np.float32))
    labels = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, size=batch)])
    init_fun, predict = _lenet(stax, pool)
    _, params = init_fun(jax_module.random.PRNGKey(0), (-1, 28, 28, 1))
    opt_init, opt_update, get_params = optimizers.adam(1e-3) if optimizer == "adam" else optimizers.momentum(1e-2, 0.9)

    def loss(p: Any) -> Any:
        return -jnp.mean(jnp.sum(predict(p, images) * labels, axis=1))

    def train_step(i: Any, state: Any) -> Any:
        value, grads = jax_module.value_and_grad(loss)(get_params(state))
        return value, opt_update(i, grads, state)

    step = jax_module.jit(train_step)

    state = opt_init(params)
    losses = []
    for i in range(steps):
        value, state = step(i, state)
        losses.append(float(value))
    return losses


@pytest.mark.parametrize(("optimizer", "pool"), [("adam", "avg"), ("momentum", "max")])
def test_lenet_training_losses_are_jaxs(optimizer: str, pool: str) -> None:
    ours, theirs = _train_lenet("minijax", optimizer, pool), _train_lenet("jax", optimizer, pool)
    assert theirs[-1] < theirs[0]  # the run trains: a comparison of flat curves would prove little
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
