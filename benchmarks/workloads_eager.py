"""Eager operations beyond ``x + y`` and ``jnp.sin`` (issue 23), and a jitted call on a pytree.

Each eager workload is one ``jnp`` call on small operands, blocked on, so
that what is timed is the Python between the call and the backend (the
``jnp`` wrapper's promotion and shape checks, binding, dispatch): a matrix
product, a reduction, an einsum and an index, each the kind of call the issue
names. ``jit_pytree`` is a cached ``jit`` call whose arguments are a dict and
a list (the pytree flattening on the call path). The targets are those of the
issue: at most 1.0x JAX on the XLA backend (NumPy column: the same NumPy
call).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _vec(lib: Any, n: int = 3) -> tuple[Any, Any]:
    import numpy as np

    x = np.linspace(0.1, 0.8, n, dtype=np.float32)
    y = np.linspace(1.0, 2.0, n, dtype=np.float32)
    if lib.jax is None:
        return x, y
    return lib.jax.device_put(x), lib.jax.device_put(y)


def _mat(lib: Any) -> Any:
    import numpy as np

    m = np.arange(16, dtype=np.float32).reshape(4, 4) / 16
    return m if lib.jax is None else lib.jax.device_put(m)


def _blocked(fn: Callable[[], Any], lib: Any) -> Callable[[], Any]:
    if lib.jax is None:
        return fn
    return lambda: fn().block_until_ready()


def eager_dot(lib: Any) -> tuple[Callable[[], Any], int]:
    x, y = _vec(lib)
    jnp = lib.jnp
    return _blocked(lambda: jnp.dot(x, y), lib), 1


def eager_matmul(lib: Any) -> tuple[Callable[[], Any], int]:
    m = _mat(lib)
    return _blocked(lambda: m @ m, lib), 1


def eager_einsum(lib: Any) -> tuple[Callable[[], Any], int]:
    m = _mat(lib)
    jnp = lib.jnp
    return _blocked(lambda: jnp.einsum("ij,jk->ik", m, m), lib), 1


def eager_sum(lib: Any) -> tuple[Callable[[], Any], int]:
    x, _ = _vec(lib, 8)
    jnp = lib.jnp
    return _blocked(lambda: jnp.sum(x), lib), 1


def eager_index(lib: Any) -> tuple[Callable[[], Any], int]:
    m = _mat(lib)
    return _blocked(lambda: m[1], lib), 1


def jit_pytree(lib: Any) -> tuple[Callable[[], Any], int]:
    x, y = _vec(lib, 8)
    args = ({"a": x, "b": y}, [x, y])

    def f(d: Any, pair: Any) -> Any:
        return d["a"] * pair[1] + d["b"] * pair[0]

    if lib.jax is None:
        return (lambda: f(*args)), 1
    jitted = lib.jax.jit(f)
    jitted(*args).block_until_ready()
    return (lambda: jitted(*args).block_until_ready()), 1


WORKLOADS: dict[str, tuple[Callable[[Any], Any], str, str]] = {
    "eager_dot": (eager_dot, "eager jnp.dot(x, y), f32[3], blocked", "s"),
    "eager_matmul": (eager_matmul, "eager m @ m, f32[4,4], blocked", "s"),
    "eager_einsum": (eager_einsum, "eager jnp.einsum('ij,jk->ik', m, m), f32[4,4], blocked", "s"),
    "eager_sum": (eager_sum, "eager jnp.sum(x), f32[8], blocked", "s"),
    "eager_index": (eager_index, "eager m[1], f32[4,4], blocked", "s"),
    "jit_pytree": (jit_pytree, "cached jit(f)({'a': x, 'b': y}, [x, y]), f32[8], blocked", "s"),
}
