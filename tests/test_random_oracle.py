"""minijax.random against real JAX 0.10.2 (the oracle): values bit for bit, and jaxpr texts.

Every sampler is called with the same hypothesis-drawn seed, shape, dtype and
parameters under JAX and under minijax: the results must have the same dtype
and shape and the same bits. On the XLA backend every sampler matches bit for
bit (the same primitives, lowered to the same XLA ops); on the NumPy
reference backend the samplers built from integer and exact float operations
do too (``EXACT``). The others go through erf_inv, log, ... (evaluated in
float64 by the NumPy backend), or through ``u * (maxval - minval) + minval``,
which XLA on CPU contracts into a fused multiply-add.
Run where JAX is installed:
    .venv-oracle/bin/python -m pytest tests/test_random_oracle.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import jax.numpy as jjnp  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

import minijax  # noqa: E402
import minijax.numpy as mjnp  # noqa: E402
from minijax.config import config_context  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

LIBS = {"jax": (jax, jax.random, jjnp), "minijax": (minijax, minijax.random, mjnp)}


def _bits(x: Any) -> np.ndarray[Any, Any]:
    a = np.asarray(x)
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        return a.view(np.dtype(f"uint{a.dtype.itemsize * 8}"))
    return a


def _same(got: Any, want: Any, bitwise: bool, what: str) -> None:
    assert (str(got.dtype), tuple(got.shape)) == (str(want.dtype), tuple(want.shape)), what
    if bitwise or np.asarray(want).dtype.kind in "biu":
        np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=what)
    else:
        g, w = np.asarray(got).astype(np.float64), np.asarray(want).astype(np.float64)
        rtol = {2: 1e-2, 4: 4e-6, 8: 1e-13}[np.asarray(want).dtype.itemsize]
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, err_msg=what)


# ---------------------------------------------------------------------------
# Values: one entry per sampler, drawing its own arguments


Sample = Callable[[Any, Any, Any, Any], Any]  # (random module, jnp, key, drawn params) -> array

SHAPES = st.sampled_from([(), (1,), (3,), (2, 3), (4, 1)])
FLOATS = st.sampled_from(["float32", "float16", "bfloat16"])
UINTS = st.sampled_from(["uint8", "uint16", "uint32"])
INTS = st.sampled_from(["int8", "int16", "int32", "uint8", "uint32"])


def _params(**strategies: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(strategies)


# name -> (params strategy, call, exact on every backend)
SAMPLERS: dict[str, tuple[st.SearchStrategy[dict[str, Any]], Sample, bool]] = {
    "split": (_params(num=st.sampled_from([2, 3, (2, 2)])), lambda r, np_, k, p: r.key_data(r.split(k, p["num"])), True),
    "fold_in": (_params(data=st.integers(0, 2**32 - 1)), lambda r, np_, k, p: r.key_data(r.fold_in(k, p["data"])), True),
    "bits": (_params(shape=SHAPES, dtype=UINTS), lambda r, j, k, p: r.bits(k, p["shape"], getattr(j, p["dtype"])), True),
    "uniform": (
        _params(shape=SHAPES, dtype=FLOATS, lo=st.floats(-4, 0, width=16), span=st.floats(0.5, 4, width=16)),
        lambda r, j, k, p: r.uniform(k, p["shape"], getattr(j, p["dtype"]), p["lo"], p["lo"] + p["span"]),
        False,  # XLA contracts ``u * (maxval - minval) + minval`` into a fused multiply-add
    ),
    "uniform_array_bounds": (
        _params(lo=st.lists(st.floats(-2, 0, width=16), min_size=3, max_size=3)),
        lambda r, j, k, p: r.uniform(k, (2, 3), minval=j.array(p["lo"]), maxval=j.array([[1.0], [3.0]])),
        False,
    ),
    "randint": (
        _params(shape=SHAPES, dtype=INTS, lo=st.integers(-100, 100), span=st.integers(-3, 300)),
        lambda r, j, k, p: r.randint(k, p["shape"], p["lo"], p["lo"] + p["span"], getattr(j, p["dtype"])),
        True,
    ),
    "bernoulli": (
        _params(shape=SHAPES, p=st.floats(0, 1, width=32), mode=st.sampled_from(["low", "high"])),
        lambda r, j, k, p: r.bernoulli(k, p["p"], p["shape"], mode=p["mode"]),
        True,
    ),
    "permutation": (_params(n=st.integers(1, 20)), lambda r, j, k, p: r.permutation(k, p["n"]), True),
    "permutation_independent": (
        _params(axis=st.sampled_from([0, 1, -1])),
        lambda r, j, k, p: r.permutation(k, j.arange(12).reshape(3, 4), axis=p["axis"], independent=True),
        True,
    ),
    "permutation_rows": (
        _params(axis=st.sampled_from([0, 1])),
        lambda r, j, k, p: r.permutation(k, j.arange(12).reshape(4, 3), axis=p["axis"]),
        True,
    ),
    "choice": (_params(n=st.integers(1, 10), shape=SHAPES), lambda r, j, k, p: r.choice(k, p["n"], p["shape"]), True),
    "choice_axis": (
        _params(replace=st.booleans()),
        lambda r, j, k, p: r.choice(k, j.arange(12).reshape(3, 4), (2,), replace=p["replace"], axis=1),
        True,
    ),
    "rademacher": (_params(shape=SHAPES), lambda r, j, k, p: r.rademacher(k, p["shape"]), True),
    "normal": (_params(shape=SHAPES, dtype=FLOATS), lambda r, j, k, p: r.normal(k, p["shape"], getattr(j, p["dtype"])), False),
    "truncated_normal": (
        _params(lo=st.floats(-3, 0, width=16), span=st.floats(0.25, 3, width=16), shape=SHAPES),
        lambda r, j, k, p: r.truncated_normal(k, p["lo"], p["lo"] + p["span"], p["shape"]),
        False,
    ),
    "exponential": (_params(shape=SHAPES), lambda r, j, k, p: r.exponential(k, p["shape"]), False),
    "gumbel": (
        _params(shape=SHAPES, mode=st.sampled_from(["low", "high", "highest"])),
        lambda r, j, k, p: r.gumbel(k, p["shape"], mode=p["mode"]),
        False,
    ),
    "laplace": (_params(shape=SHAPES), lambda r, j, k, p: r.laplace(k, p["shape"]), False),
    "logistic": (_params(shape=SHAPES), lambda r, j, k, p: r.logistic(k, p["shape"]), False),
    "cauchy": (_params(shape=SHAPES), lambda r, j, k, p: r.cauchy(k, p["shape"]), False),
    "categorical": (
        _params(axis=st.sampled_from([0, 1, -1]), replace=st.booleans()),
        lambda r, j, k, p: r.categorical(k, j.array([[0.5, 1.0, 2.0], [0.0, 3.0, 0.1]]), axis=p["axis"], replace=p["replace"]),
        False,
    ),
    "choice_p": (
        _params(replace=st.booleans()),
        lambda r, j, k, p: r.choice(k, 4, (3,), replace=p["replace"], p=j.array([0.1, 0.2, 0.3, 0.4])),
        False,
    ),
    "multivariate_normal": (
        _params(method=st.sampled_from(["cholesky", "eigh", "svd"]), shape=st.sampled_from([None, (3,), (2, 1)])),
        lambda r, j, k, p: r.multivariate_normal(k, j.array([1.0, -1.0]), j.array([[2.0, 0.5], [0.5, 1.0]]), p["shape"], method=p["method"]),
        False,
    ),
    "maxwell": (_params(shape=SHAPES), lambda r, j, k, p: r.maxwell(k, p["shape"]), False),
    "gamma": (_params(a=st.floats(0.125, 5, width=16)), lambda r, j, k, p: r.gamma(k, p["a"], (2,)), False),
    "beta": (_params(a=st.floats(0.5, 3, width=16)), lambda r, j, k, p: r.beta(k, p["a"], 2.0, (2,)), False),
    "dirichlet": (_params(), lambda r, j, k, p: r.dirichlet(k, j.array([0.5, 1.0, 2.0])), False),
    "poisson": (_params(lam=st.sampled_from([0.0, 0.5, 4.0, 30.0])), lambda r, j, k, p: r.poisson(k, p["lam"], (3,)), False),
}

SEEDS = st.one_of(st.integers(0, 2**31 - 1), st.integers(-(2**31), -1))


def _run(name: str, seed: int, params: dict[str, Any], lib: str, typed: bool) -> Any:
    _, r, j = LIBS[lib]
    key = r.key(seed) if typed else r.PRNGKey(seed)
    return SAMPLERS[name][1](r, j, key, params)


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_values_are_jax_values(name: str) -> None:
    slow = name in ("gamma", "beta", "dirichlet", "poisson")

    @settings(max_examples=1 if slow else 4)
    @given(seed=SEEDS, params=SAMPLERS[name][0], typed=st.booleans())
    def check(seed: int, params: dict[str, Any], typed: bool) -> None:
        want = _run(name, seed, params, "jax", typed)
        got = _run(name, seed, params, "minijax", typed)
        _same(got, want, bitwise=True, what=f"{name} seed={seed} {params}")

    check()


EXACT = sorted(n for n, (_, _, exact) in SAMPLERS.items() if exact)


@pytest.mark.parametrize("name", EXACT)
def test_exact_samplers_are_bit_for_bit_on_the_numpy_backend(name: str) -> None:
    @settings(max_examples=3)
    @given(seed=SEEDS, params=SAMPLERS[name][0])
    def check(seed: int, params: dict[str, Any]) -> None:
        want = _run(name, seed, params, "jax", True)
        with config_context(minijax_backend="numpy"):
            got = _run(name, seed, params, "minijax", True)
        _same(got, want, bitwise=True, what=f"{name} seed={seed} {params} (numpy backend)")

    check()


WORDS = st.integers(0, 2**32 - 1)


@settings(max_examples=10)
@given(words=st.lists(WORDS, min_size=4, max_size=4), counts=st.lists(WORDS, min_size=1, max_size=5))
def test_threefry2x32_is_jax_threefry2x32(words: list[int], counts: list[int]) -> None:
    from jax.extend.random import threefry2x32_p

    from minijax.primitives.random import threefry2x32

    k1, k2 = np.uint32(words[0]), np.uint32(words[1])
    x1, x2 = np.array(counts, np.uint32), np.full(len(counts), words[2], np.uint32)
    want = threefry2x32_p.bind(k1, k2, x1, x2)
    for backend in ("xla", "numpy"):
        with config_context(minijax_backend=backend):
            got = threefry2x32(k1, k2, x1, x2)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w), err_msg=backend)


def test_seeds_and_keys_are_jax_keys() -> None:
    for seed in (0, 1, -1, 2**31 - 1, 2**32 + 5, -(2**40), np.int8(-3), np.uint32(2**32 - 1)):
        np.testing.assert_array_equal(np.asarray(minijax.random.PRNGKey(seed)), np.asarray(jax.random.PRNGKey(seed)))
        assert repr(minijax.random.key(seed)) == repr(jax.random.key(seed))
    keys_j, keys_m = jax.random.split(jax.random.key(3), (2, 3)), minijax.random.split(minijax.random.key(3), (2, 3))
    assert repr(keys_m) == repr(keys_j) and repr(keys_m[1, 2]) == repr(keys_j[1, 2])


def test_values_with_x64() -> None:
    jax.config.update("jax_enable_x64", True)
    try:
        with config_context(jax_enable_x64=True):
            for name, params in [
                ("bits", {"shape": (3,), "dtype": "uint64"}),
                ("uniform", {"shape": (3,), "dtype": "float64", "lo": -1.0, "span": 2.0}),
                ("randint", {"shape": (4,), "dtype": "int64", "lo": -(2**40), "span": 2**41}),
                ("normal", {"shape": (2, 2), "dtype": "float64"}),
                ("permutation", {"n": 9}),
            ]:
                for seed in (0, 2**40 + 7, -5):
                    want = _run(name, seed, params, "jax", False)
                    got = _run(name, seed, params, "minijax", False)
                    _same(got, want, bitwise=True, what=f"{name} x64 seed={seed}")
    finally:
        jax.config.update("jax_enable_x64", False)


# ---------------------------------------------------------------------------
# Errors: the same exception type as JAX's


ERROR_CALLS: list[Callable[[Any, Any], Any]] = [
    lambda r, j: r.normal(r.key(0), (3,), dtype=j.int32),
    lambda r, j: r.uniform(r.key(0), dtype=j.int32),
    lambda r, j: r.randint(r.key(0), (3,), 0, 10, dtype=j.float32),
    lambda r, j: r.bits(r.key(0), (3,), dtype=j.int32),
    lambda r, j: r.normal(j.zeros(3, j.uint32)),
    lambda r, j: r.normal(j.zeros(2, j.float32)),
    lambda r, j: r.normal(0),
    lambda r, j: r.normal([0, 0]),
    lambda r, j: r.normal(r.split(r.key(0))),
    lambda r, j: r.split(r.split(r.PRNGKey(0))),
    lambda r, j: r.fold_in(r.key(0), j.arange(2)),
    lambda r, j: r.bernoulli(r.key(0), 1),
    lambda r, j: r.key(r.key(0)),
    lambda r, j: r.PRNGKey(j.zeros(2, j.int32)),
    lambda r, j: r.wrap_key_data(j.zeros((3, 2), j.int32)),
    lambda r, j: r.gumbel(r.key(0), mode="x"),
    lambda r, j: r.bernoulli(r.key(0), mode="x"),
    lambda r, j: r.fold_in(r.key(0), 2**40),
    lambda r, j: r.choice(r.key(0), 3, (4,), replace=False),
    lambda r, j: r.choice(r.key(0), 3, 4),
    lambda r, j: r.key(0, impl="nope"),
    lambda r, j: r.categorical(r.key(0), j.zeros(3), shape=(5,), replace=False),
]


def _error_of(call: Callable[[Any, Any], Any], lib: str) -> tuple[type[BaseException], str]:
    _, r, j = LIBS[lib]
    try:
        call(r, j)
    except Exception as e:
        return type(e), str(e)
    raise AssertionError(f"{lib}: no error")


@pytest.mark.parametrize("i", range(len(ERROR_CALLS)))
def test_errors_are_jax_errors(i: int) -> None:
    want_type, want = _error_of(ERROR_CALLS[i], "jax")
    got_type, got = _error_of(ERROR_CALLS[i], "minijax")
    assert got_type is want_type, (got, want)
    assert got.split(" for impl=")[0] == want.split(" for impl=")[0]  # JAX adds the impl's repr, with addresses


# ---------------------------------------------------------------------------
# jaxprs


def _grad(lib: Any) -> Callable[..., Any]:
    return lib.grad  # type: ignore[no-any-return]


# name -> (program(lib, random, jnp, key), key kind)
PROGRAMS: dict[str, tuple[Callable[..., Any], str]] = {
    "normal": (lambda lib, r, j, k: r.normal(k, (3,)), "raw"),
    "normal_scalar": (lambda lib, r, j, k: r.normal(k), "typed"),
    "uniform_2x3": (lambda lib, r, j, k: r.uniform(k, (2, 3)), "typed"),
    "uniform_bounds": (lambda lib, r, j, k: r.uniform(k, (3,), minval=-1, maxval=j.array([1.0, 2.0, 3.0])), "typed"),
    "uniform_f16": (lambda lib, r, j, k: r.uniform(k, (2,), j.float16), "typed"),
    "uniform_bf16": (lambda lib, r, j, k: r.uniform(k, (2,), j.bfloat16), "typed"),
    "split_raw": (lambda lib, r, j, k: r.split(k), "raw"),
    "split_typed": (lambda lib, r, j, k: r.split(k, 3), "typed"),
    "split_shape": (lambda lib, r, j, k: r.split(k, (2, 3)), "typed"),
    "fold_in": (lambda lib, r, j, k: r.fold_in(k, 3), "raw"),
    "bits": (lambda lib, r, j, k: r.bits(k, (3,)), "raw"),
    "bits_u8": (lambda lib, r, j, k: r.bits(k, (3,), j.uint8), "typed"),
    "key_data": (lambda lib, r, j, k: r.key_data(k), "typed"),
    "wrap_key_data": (lambda lib, r, j, k: r.wrap_key_data(k), "raw"),
    "clone": (lambda lib, r, j, k: r.clone(k), "typed"),
    "bernoulli": (lambda lib, r, j, k: r.bernoulli(k, 0.3, (4,)), "raw"),
    "bernoulli_high": (lambda lib, r, j, k: r.bernoulli(k, 0.3, (4,), mode="high"), "typed"),
    "permutation": (lambda lib, r, j, k: r.permutation(k, 5), "raw"),
    "permutation_array": (lambda lib, r, j, k: r.permutation(k, j.arange(4.0)), "typed"),
    "exponential": (lambda lib, r, j, k: r.exponential(k, (2,)), "typed"),
    "gumbel": (lambda lib, r, j, k: r.gumbel(k, (2,)), "typed"),
    "gumbel_high": (lambda lib, r, j, k: r.gumbel(k, (2,), mode="high"), "typed"),
    "laplace": (lambda lib, r, j, k: r.laplace(k, (2,)), "typed"),
    "logistic": (lambda lib, r, j, k: r.logistic(k, (2,)), "typed"),
    "cauchy": (lambda lib, r, j, k: r.cauchy(k, (2,)), "typed"),
    "truncated_normal": (lambda lib, r, j, k: r.truncated_normal(k, -1.0, 1.0, (2,)), "typed"),
    "rademacher": (lambda lib, r, j, k: r.rademacher(k, (2,)), "typed"),
    "categorical": (lambda lib, r, j, k: r.categorical(k, j.zeros((2, 3))), "typed"),
    "gamma": (lambda lib, r, j, k: r.gamma(k, 2.0, (2,)), "typed"),
    "multivariate_normal": (lambda lib, r, j, k: r.multivariate_normal(k, j.zeros(2), j.eye(2)), "typed"),
    "vmap_normal": (lambda lib, r, j, k: lib.vmap(lambda kk: r.normal(kk, (2,)))(r.split(k, 3)), "typed"),
    "vmap_split": (lambda lib, r, j, k: lib.vmap(lambda kk: r.split(kk))(r.split(k, 3)), "typed"),
    "vmap_fold_in": (lambda lib, r, j, k: lib.vmap(r.fold_in, in_axes=(None, 0))(k, j.arange(3)), "typed"),
    "jit_normal": (lambda lib, r, j, k: lib.jit(lambda kk: r.normal(kk, (2,)))(k), "typed"),
}


def _jaxpr_text(lib_name: str, name: str) -> str:
    lib, r, j = LIBS[lib_name]
    program, kind = PROGRAMS[name]
    key = r.PRNGKey(0) if kind == "raw" else r.key(0)
    return str(lib.make_jaxpr(lambda k: program(lib, r, j, k))(key))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_printed_jaxpr_equals_jax(name: str) -> None:
    assert _jaxpr_text("minijax", name) == _jaxpr_text("jax", name)


def test_seeding_jaxprs_equal_jax() -> None:
    for seed in (3, np.uint8(3), np.int16(-2)):
        want = str(jax.make_jaxpr(lambda s: jax.random.PRNGKey(s))(seed))
        got = str(minijax.make_jaxpr(lambda s: minijax.random.PRNGKey(s))(seed))
        assert got == want
    assert str(minijax.make_jaxpr(lambda: minijax.random.key(0))()) == str(jax.make_jaxpr(lambda: jax.random.key(0))())
