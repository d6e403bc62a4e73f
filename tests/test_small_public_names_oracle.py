"""The small public names of test_small_public_names.py against real JAX 0.10.2 (the oracle).
Run where JAX is installed:
    .venv-oracle/bin/python -m pytest -m oracle tests/test_small_public_names_oracle.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import minijax  # noqa: E402
import minijax.numpy  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

HOST_VALUES: list[Any] = [1.0, 1j, np.complex64(1), np.ones(2, np.complex64), [1, 2j], [1, 2], np.ones(2), None, True, 3]


def test_iscomplexobj_and_isrealobj_equal_jaxs() -> None:
    for x in HOST_VALUES:
        assert minijax.numpy.iscomplexobj(x) == jax.numpy.iscomplexobj(x), x
        assert minijax.numpy.isrealobj(x) == jax.numpy.isrealobj(x), x
    for make in (lambda m: m.numpy.ones(2), lambda m: m.numpy.arange(3), lambda m: m.random.key(0), lambda m: m.random.PRNGKey(1)):
        assert minijax.numpy.iscomplexobj(make(minijax)) == jax.numpy.iscomplexobj(make(jax))
        assert minijax.numpy.isrealobj(make(minijax)) == jax.numpy.isrealobj(make(jax))


def _same(a: Any, b: Any) -> None:
    assert a.shape == b.shape and a.dtype == b.dtype and a.weak_type == b.weak_type
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


CASES: dict[str, Callable[[Any], Any]] = {
    "astype_host": lambda m: m.numpy.astype(np.ones(2), "float16"),
    "astype_scalar": lambda m: m.numpy.astype(3, m.numpy.float32),
    "astype_array": lambda m: m.numpy.astype(m.numpy.array([1.5, -2.5]), m.numpy.int32, copy=True),
    "zeros_like_sds": lambda m: m.numpy.zeros_like(m.ShapeDtypeStruct((2, 3), np.int32)),
    "ones_like_sds_dtype": lambda m: m.numpy.ones_like(m.ShapeDtypeStruct((2, 3), np.int32), dtype=np.float32),
    "full_like_sds": lambda m: m.numpy.full_like(m.ShapeDtypeStruct((2,), np.float32), 2.5),
    "zeros_like_sds_shape": lambda m: m.numpy.zeros_like(m.ShapeDtypeStruct((2, 3), np.int32), shape=(4,)),
    "zeros_like_weak_sds": lambda m: m.numpy.zeros_like(m.ShapeDtypeStruct((2,), np.float32, weak_type=True)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_equal_jaxs(name: str) -> None:
    _same(CASES[name](minijax), CASES[name](jax))
    assert minijax.numpy.empty_like(minijax.ShapeDtypeStruct((2, 3), np.int8)).shape == jax.numpy.empty_like(jax.ShapeDtypeStruct((2, 3), np.int8)).shape


def _outcome(f: Callable[[], Any]) -> Any:
    try:
        return f()
    except Exception as e:  # noqa: BLE001  (the error is the outcome compared)
        return type(e), str(e)


def test_broadcast_shapes_and_its_errors_equal_jaxs() -> None:
    for shapes in [((2, 1), (3,)), ((2, 3), (4, 2, 1), (5, 1, 1, 1)), ((1,), ()), ((0,), (1,)), ((3,),), ((2,), (3,)), ((2,), (-1,)), ((2.0,), (2,))]:
        assert _outcome(lambda: minijax.lax.broadcast_shapes(*shapes)) == _outcome(lambda: jax.lax.broadcast_shapes(*shapes))  # noqa: B023


def test_astype_error_equals_jaxs() -> None:
    assert _outcome(lambda: minijax.numpy.astype([1, 2], np.int32)) == _outcome(lambda: jax.numpy.astype([1, 2], np.int32))


def test_disable_jit_runs_op_by_op_as_in_jax() -> None:
    def kinds(m: Any) -> list[bool]:
        concrete: list[bool] = []

        @m.jit
        def f(x: Any) -> Any:
            concrete.append(not isinstance(x, m.core.Tracer))
            return x * 2

        with m.disable_jit():
            f(np.ones(2, np.float32))
            with m.disable_jit(disable=False):
                f(np.ones(3, np.float32))
        f(np.ones(4, np.float32))
        return concrete

    assert kinds(minijax) == kinds(jax) == [True, False, False]


def test_version_info_has_jaxs_form() -> None:
    assert type(minijax.__version_info__) is type(jax.__version_info__) is tuple
    assert all(type(p) is int for p in minijax.__version_info__ + jax.__version_info__)
    assert ".".join(map(str, minijax.__version_info__)) == minijax.__version__
