"""``jax.random``: counter-based pseudo-random numbers, bit for bit JAX's.

Keys: ``key(seed)`` makes a *typed* key (dtype ``key<fry>``); ``PRNGKey(seed)``
a *raw* key, the uint32[2] data of one. Every function takes either; raw keys
are wrapped on the way in and results that are keys are unwrapped again, as
JAX does. A key is never reused: ``split`` and ``fold_in`` derive new ones.

The samplers are JAX's algorithms, step for step (the same primitives on the
same bits), so the values are JAX's: ``uniform`` puts 23 random bits in the
mantissa of a float in [1, 2); ``normal`` is ``sqrt(2) erfinv(u)``;
``randint`` combines two draws modulo the span; ``permutation`` sorts by
random keys; ``categorical`` and ``choice`` use the Gumbel-max and Gumbel-top-k
tricks; ``gamma`` is Marsaglia and Tsang's rejection sampler. Each sampler
body is a ``jit`` named as JAX names it (``_uniform``, ``_normal``, ...), so
``make_jaxpr`` of a program using them prints as JAX's does.

See docs/random.md for a guide and minijax/prng.py for the key types.
"""

from __future__ import annotations

import functools
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import numpy as np

from minijax import config, core, dtypes, lax, numpy as jnp, prng
from minijax.array import Array
from minijax.interpreters.tracing import trace_to_jaxpr
from minijax.nn.functions import softmax
from minijax.numpy.creation import canonicalize_shape
from minijax.numpy.util import canonicalize_axis, check_arraylike, is_arraylike, promote_dtypes_inexact
from minijax.primitives import random as random_prims
from minijax.primitives.random import UINT_DTYPES
from minijax.primitives.structural import reshape_p
from minijax.prng import KeyTy
from minijax.sharding import reshard
from minijax.sharding_rules import out_sharding_param
from minijax.stages import jit
from minijax.vectorization import vmap

__all__ = [
    "PRNGKey",
    "bernoulli",
    "beta",
    "bits",
    "categorical",
    "cauchy",
    "chisquare",
    "choice",
    "clone",
    "dirichlet",
    "double_sided_maxwell",
    "exponential",
    "fold_in",
    "gamma",
    "geometric",
    "gumbel",
    "key",
    "key_data",
    "key_dtype",
    "key_impl",
    "laplace",
    "loggamma",
    "logistic",
    "lognormal",
    "maxwell",
    "multivariate_normal",
    "normal",
    "pareto",
    "permutation",
    "poisson",
    "rademacher",
    "randint",
    "rayleigh",
    "split",
    "t",
    "triangular",
    "truncated_normal",
    "uniform",
    "wald",
    "weibull_min",
    "wrap_key_data",
    # issue 21 (sciother): the remaining samplers
    "ball",
    "binomial",
    "f",
    "generalized_normal",
    "multinomial",
    "orthogonal",
]

Shape = Sequence[int]
KeyArray = Any


# ---------------------------------------------------------------------------
# Argument checks shared by every function


def _no_sharding(name: str, out_sharding: Any) -> None:
    # (``_laid_out`` takes each public function's out_sharding and lays its result out: the
    # bodies compute unsharded values, and see None here)
    del name, out_sharding


_F = TypeVar("_F", bound=Callable[..., Any])


def _laid_out(f: _F) -> _F:
    """``f`` whose ``out_sharding=`` lays its result out: computed unsharded, then resharded (as
    JAX's samplers do under auto_axes). A sharding over a mesh with no axes (what
    ``jax.typeof(x).sharding`` is for an unplaced value) places nothing: the same as none."""

    @functools.wraps(f)
    def wrapper(*args: Any, out_sharding: Any = None, **kwargs: Any) -> Any:
        if out_sharding is not None and getattr(getattr(out_sharding, "mesh", None), "axis_names", None) == ():
            out_sharding = None
        if out_sharding is not None:
            out_sharding_param(out_sharding, f.__name__)  # (its TypeError, as JAX words it)
        out = f(*args, **kwargs)
        return out if out_sharding is None else reshard(out, out_sharding)

    return cast(_F, wrapper)


def _canonicalize_shape(shape: Any) -> tuple[int, ...]:
    return canonicalize_shape(shape)


def _is_key(x: Any) -> bool:
    return isinstance(x, (Array, core.Tracer)) and prng.is_key_dtype(x.dtype)


def _check_prng_key(name: str, key: Any, *, allow_batched: bool = False) -> tuple[Any, bool]:
    """``key`` as a typed key array, and whether it was a raw key (so results are unwrapped)."""
    # Checked on every call (jit caches do not see flags): every function starts here.
    random_prims.check_partitionable()
    if _is_key(key):
        typed, wrapped = key, False
    elif is_arraylike(key):
        if not all(hasattr(key, a) for a in ("ndim", "shape", "dtype")):
            raise TypeError(
                "JAX encountered invalid PRNG key data: expected key_data to have ndim, shape, "
                f"and dtype attributes. Got {key}"
            )
        typed, wrapped = random_prims.random_wrap(key, prng.default_prng_impl()), True
        mode = prng.legacy_prng_key.value
        message = (
            "Legacy uint32 key array passed as key to jax.random function. Please create keys "
            'using jax.random.key(). If use of a raw key array was intended, set jax_legacy_prng_key="allow".'
        )
        if mode == "error":
            raise ValueError(message)
        if mode == "warn":
            warnings.warn(message, stacklevel=3)
        elif prng.enable_custom_prng.value:
            warnings.warn(
                "Raw arrays as random keys to jax.random functions are deprecated. "
                "Assuming valid threefry2x32 key for now.",
                FutureWarning,
                stacklevel=3,
            )
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and typed.ndim:
        raise ValueError(
            f"{name} accepts a single key, but was given a key array of shape {np.shape(key)} != (). "
            "Use jax.vmap for batching."
        )
    return typed, wrapped


def _return_prng_keys(was_wrapped: bool, keys: Any) -> Any:
    # With jax_enable_custom_prng, keys made from raw keys stay typed.
    if not was_wrapped or prng.enable_custom_prng.value:
        return keys
    return random_prims.random_unwrap(keys)


def _user_float_dtype(name: str, dtype: Any, kind: Any = np.floating, what: str = "a float dtype") -> np.dtype[Any]:
    dt = dtypes.check_user_dtype_supported(float if dtype is None else dtype, name)
    if not dtypes.issubdtype(dt, kind):
        raise ValueError(f"dtype argument to `{name}` must be {what}, got {dt}")
    return dt


def _check_shape(name: str, shape: tuple[int, ...], *param_shapes: Sequence[int]) -> None:
    if param_shapes:
        broadcast = jnp.broadcast_shapes(shape, *param_shapes)
        if shape != broadcast:
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape argument, and the "
                "result of broadcasting the shapes must equal the shape argument, but got result "
                f"{broadcast} for shape argument {shape}."
            )


def _check_broadcast_shapes(name: str, shape: Any, *args: Any) -> tuple[int, ...]:
    arg_shapes = [np.shape(a) for a in args]
    if shape is None:
        return tuple(jnp.broadcast_shapes(*arg_shapes)) if arg_shapes else ()
    dims = _canonicalize_shape(shape)
    _check_shape(name, dims, *arg_shapes)
    return dims


def _const(x: Any, value: Any) -> Any:
    """A host scalar of ``x``'s dtype (a literal in jaxprs), as JAX's ``lax._const``."""
    return np.array(value, dtypes.dtype(x))


def _random_bits(key: Any, bit_width: int, shape: Sequence[int]) -> Any:
    return random_prims.random_bits(key, bit_width, tuple(shape))


def _split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """``split`` on a typed key, inside the samplers."""
    if key.ndim:
        raise TypeError(
            f"split accepts a single key, but was given a key array of shape {key.shape} != (). "
            "Use jax.vmap for batching."
        )
    shape = tuple(num) if isinstance(num, Sequence) else (num,)
    return random_prims.random_split(key, shape)


# ---------------------------------------------------------------------------
# Keys


def key_dtype(impl: Any = None) -> KeyTy:
    """The dtype of keys of a PRNG implementation (``key<fry>`` for threefry2x32)."""
    return KeyTy(prng.resolve_prng_impl(impl))


def _key(ctor_name: str, seed: Any, impl_spec: Any) -> Any:
    impl = prng.resolve_prng_impl(impl_spec)
    if _is_key(seed):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(
            f"{ctor_name} accepts a scalar seed, but was given an array of shape {np.shape(seed)} != (). "
            "Use jax.vmap for batching"
        )
    # A Python int goes through int64 so that a large seed (a hash) wraps
    # instead of overflowing with x64 off, as in JAX.
    seeds = jnp.asarray(np.int64(seed)) if isinstance(seed, int) else jnp.asarray(seed)
    return random_prims.random_seed(seeds, impl)


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> KeyArray:
    """A typed PRNG key (dtype ``key<fry>``, shape ``()``) from an integer seed."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
        impl = dtype
    return _key("key", seed, impl)


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:
    """A raw (legacy) PRNG key: the uint32[2] data of a key, from an integer seed
    (a typed key with ``jax_enable_custom_prng``)."""
    return _return_prng_keys(True, _key("PRNGKey", seed, impl))


def key_data(keys: Any) -> Any:
    """The uint32 data under an array of keys (shape ``keys.shape + (2,)``)."""
    typed, _ = _check_prng_key("key_data", keys, allow_batched=True)
    return random_prims.random_unwrap(typed)


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> KeyArray:
    """Typed keys from uint32 key data whose last axis is one key's data (``(..., 2)``)."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.wrap_key_data")
        impl = dtype
    return random_prims.random_wrap(key_bits_array, prng.resolve_prng_impl(impl))


def key_impl(keys: Any) -> str:
    """The name of the keys' PRNG implementation (``'threefry2x32'``)."""
    typed, _ = _check_prng_key("key_impl", keys, allow_batched=True)
    dtype = typed.dtype
    assert isinstance(dtype, KeyTy)
    return dtype.impl.name


def fold_in(key: Any, data: Any) -> Any:
    """A new key from ``key`` and a 32-bit integer ``data``."""
    typed, wrapped = _check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError(
            f"fold_in accepts a scalar, but was given an array ofshape {np.shape(data)} != (). "
            "Use jax.vmap for batching."
        )
    out = random_prims.random_fold_in(typed, jnp.asarray(data, dtype="uint32"))
    return _return_prng_keys(wrapped, out)


def split(key: Any, num: int | tuple[int, ...] = 2) -> Any:
    """``num`` new keys (or an array of keys of shape ``num``) from ``key``."""
    typed, wrapped = _check_prng_key("split", key)
    return _return_prng_keys(wrapped, _split(typed, num))


def clone(key: Any) -> Any:
    """The same key (JAX's key-reuse checker treats it as a fresh one; minijax has no checker)."""
    return random_prims.random_clone(key)


# ---------------------------------------------------------------------------
# Bits and uniform floats


@_laid_out
def bits(key: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Uniform random unsigned integers (all bits random) of ``dtype`` (default uint32/uint64)."""
    typed, _ = _check_prng_key("bits", key)
    _no_sharding("bits", out_sharding)
    dt = dtypes.default_uint_dtype() if dtype is None else dtypes.check_user_dtype_supported(dtype, "bits")
    if not dtypes.issubdtype(dt, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dt}")
    return _random_bits(typed, dt.itemsize * 8, _canonicalize_shape(shape))


@_laid_out
def uniform(
    key: Any, shape: Shape = (), dtype: Any = None, minval: Any = 0.0, maxval: Any = 1.0, *, out_sharding: Any = None
) -> Any:
    """Uniform floats in ``[minval, maxval)``; minval/maxval broadcast against ``shape``."""
    typed, _ = _check_prng_key("uniform", key)
    dt = dtypes.check_user_dtype_supported(float if dtype is None else dtype, "uniform")
    shape = _canonicalize_shape(shape)
    _no_sharding("uniform", out_sharding)
    if not dtypes.issubdtype(dt, np.floating):
        raise ValueError(f"dtype argument to `uniform` must be a float dtype, got {dt}")
    return _uniform(typed, minval, maxval, shape, dt)


@functools.partial(jit, static_argnums=(3, 4))
def _uniform(key: Any, minval: Any, maxval: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    _check_shape("uniform", shape)
    minval = lax.convert_element_type(minval, dtype)
    maxval = lax.convert_element_type(maxval, dtype)
    minval = lax.broadcast_to_rank(minval, len(shape))
    maxval = lax.broadcast_to_rank(maxval, len(shape))
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot {dtype}.")
    # Random mantissa bits under the exponent of 1.0: a float in [1, 2), minus 1.
    rng_bits = 8 if nmant < 8 else nbits
    random_bits = _random_bits(key, rng_bits, shape)
    uint_dtype = UINT_DTYPES[nbits]
    if rng_bits != nbits:
        random_bits = lax.convert_element_type(random_bits, uint_dtype)
    float_bits = lax.shift_right_logical(random_bits, jnp.array(rng_bits - nmant, uint_dtype))
    one_bits = np.array(1.0, dtype).view(uint_dtype)
    float_bits = lax.bitwise_or(float_bits, jnp.asarray(one_bits, dtype=uint_dtype))
    floats = lax.bitcast_convert_type(float_bits, dtype) - jnp.array(1.0, dtype)
    return lax.max(minval, _reshape(floats * (maxval - minval) + minval, shape))


def _reshape(x: Any, shape: tuple[int, ...]) -> Any:
    """``lax.reshape`` as JAX's: only an operand of rank > 0 already of ``shape`` is returned as is
    (a scalar is reshaped to ``()``, an equation in the jaxpr)."""
    if not shape and not np.shape(x):
        return reshape_p.bind(x, new_sizes=(), dimensions=None, sharding=None)
    return lax.reshape(x, shape)


def _convert(x: Any, dtype: np.dtype[Any]) -> Any:
    """``lax.convert_element_type`` as JAX traces it: a constant scalar (not a traced value) is
    converted on the host, so a jaxpr shows the converted literal instead of an equation."""
    if not isinstance(x, core.Tracer) and not np.shape(x):
        return np.asarray(x, dtype)
    return lax.convert_element_type(x, dtype)


# ---------------------------------------------------------------------------
# Integers


def _convert_and_clip_integer(val: Any, dtype: Any) -> Any:
    """``val`` (integer) converted to integer ``dtype``, clipped to its range rather than wrapped."""
    dtype = np.dtype(dtype)
    val_dtype = dtypes.dtype(val)
    min_val = _const(val, max(int(dtypes.iinfo(dtype).min), int(dtypes.iinfo(val_dtype).min)))
    max_val = _const(val, min(int(dtypes.iinfo(dtype).max), int(dtypes.iinfo(val_dtype).max)))
    return jnp.clip(val, min_val, max_val).astype(dtype)


@_laid_out
def randint(key: Any, shape: Shape, minval: Any, maxval: Any, dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Uniform integers in ``[minval, maxval)`` (slightly biased when the span is not a power of 2, as JAX's)."""
    typed, _ = _check_prng_key("randint", key)
    dt = dtypes.check_user_dtype_supported(int if dtype is None else dtype, "randint")
    shape = _canonicalize_shape(shape)
    _no_sharding("randint", out_sharding)
    if not dtypes.issubdtype(dt, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dt}")
    info = dtypes.iinfo(dt)
    dtype_for_sampling = dt
    if info.bits < 32:
        # Narrow integers are sampled in 32 bits: less bias.
        dtype_for_sampling = np.dtype("int32")
        minval = jnp.asarray(minval).astype("int32").clip(int(info.min), int(info.max))
        maxval = jnp.asarray(maxval).astype("int32").clip(int(info.min), int(info.max) + 1)
    return _randint(typed, minval, maxval, shape, dtype_for_sampling).astype(dt)


@functools.partial(jit, static_argnums=(3, 4))
def _randint(key: Any, minval: Any, maxval: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    _check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    check_arraylike("randint", minval, maxval)
    minval = jnp.asarray(minval)
    maxval = jnp.asarray(maxval)
    if not dtypes.issubdtype(minval.dtype, np.integer):
        minval = minval.astype(int)
    if not dtypes.issubdtype(maxval.dtype, np.integer):
        maxval = maxval.astype(int)
    # maxval above the dtype's range (randint(k, s, 0, 256, uint8)) widens the span by one.
    maxval_out_of_range = lax.gt(
        maxval, _convert_and_clip_integer(jnp.array(dtypes.iinfo(dtype).max, dtype), maxval.dtype)
    )
    minval = _convert_and_clip_integer(minval, dtype)
    maxval = _convert_and_clip_integer(maxval, dtype)
    minval = lax.broadcast_to_rank(minval, len(shape))
    maxval = lax.broadcast_to_rank(maxval, len(shape))
    nbits = dtypes.iinfo(dtype).bits
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"randint only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}")
    # Twice the bits the dtype needs, combined modulo the span: less bias.
    k1, k2 = _split(key)
    higher_bits = _random_bits(k1, nbits, shape)
    lower_bits = _random_bits(k2, nbits, shape)
    unsigned_dtype = UINT_DTYPES[nbits]
    span = lax.convert_element_type(maxval - minval, unsigned_dtype)
    # maxval <= minval gives minval (span 1).
    span = lax.select(maxval <= minval, lax.full_like(span, 1), span)
    span = lax.select(maxval_out_of_range & (maxval > minval), lax.add(span, _const(span, 1)), span)
    # (hi * 2**nbits + lo) % span, without overflow: (a * b) % n == ((a % n) * (b % n)) % n.
    multiplier = lax.rem(_const(span, 2 ** (nbits // 2)), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    random_offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier), lax.rem(lower_bits, span))
    random_offset = lax.rem(random_offset, span)
    return lax.add(minval, lax.convert_element_type(random_offset, dtype))


# ---------------------------------------------------------------------------
# Permutations and choice


@_laid_out
def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False, *, out_sharding: Any = None) -> Any:
    """A random permutation of ``arange(x)`` (an int) or of ``x`` along ``axis``.

    ``independent=True`` shuffles each slice along ``axis`` separately.
    """
    typed, _ = _check_prng_key("permutation", key)
    check_arraylike("permutation", x)
    _no_sharding("permutation", out_sharding)
    axis = canonicalize_axis(axis, np.ndim(x) or 1)
    if not np.ndim(x):
        if not dtypes.issubdtype(dtypes.dtype(x), np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        r = int(core.concrete_or_error(x, "argument x of jax.random.permutation()"))
        return _shuffle(typed, jnp.arange(r), axis)
    if independent or np.ndim(x) == 1:
        return _shuffle(typed, x, axis)
    ind = _shuffle(typed, jnp.arange(np.shape(x)[axis]), 0)
    return _take(x, ind, axis, unique_indices=True)


def _take(x: Any, indices: Any, axis: int, **kwargs: Any) -> Any:
    """``jnp.take(x, indices, axis)`` (indices always in bounds here)."""
    take = getattr(jnp, "take", None)
    if take is not None:
        return take(x, indices, axis, **kwargs)
    return jnp.asarray(x)[(slice(None),) * axis + (indices,)]  # the same gather, by indexing


@functools.partial(jit, static_argnums=(2,))
def _shuffle(key: Any, x: Any, axis: int) -> Any:
    # Sort by random 32-bit keys, repeating with fresh keys enough times that
    # ties (which would bias the result) are unlikely: JAX's schedule.
    exponent = 3
    uint32max = int(np.iinfo(np.uint32).max)
    size = int(np.size(x)) if not hasattr(x, "aval") else core.get_aval(x).size
    num_rounds = int(np.ceil(exponent * np.log(max(1, size)) / np.log(uint32max)))
    for _ in range(num_rounds):
        key, subkey = _split(key)
        sort_keys = _random_bits(subkey, 32, np.shape(x))
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


def choice(
    key: Any, a: Any, shape: Shape = (), replace: bool = True, p: Any = None, axis: int = 0, mode: str | None = None
) -> Any:
    """Random samples from ``a`` (an array, or ``arange(a)`` for an int), with or without replacement."""
    typed, _ = _check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    check_arraylike("choice", a)
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(core.concrete_or_error(a, "The error occurred in jax.random.choice()"))
    else:
        axis = canonicalize_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = core.shape_size(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"Cannot take a larger sample (size {n_draws}) than population (size {n_inputs}) when 'replace=False'"
        )
    if p is None:
        if replace:
            ind = randint(typed, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else _take(arr, ind, axis)
        else:
            slices = (slice(None),) * axis + (slice(n_draws),)
            result = permutation(typed, n_inputs if arr.ndim == 0 else arr, axis)[slices]
    else:
        check_arraylike("choice", p)
        (p_arr,) = promote_dtypes_inexact(p)
        if p_arr.shape != (n_inputs,):
            raise ValueError(
                "p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}."
            )
        if replace:
            p_cuml = jnp.cumsum(p_arr)  # type: ignore[attr-defined]
            r = p_cuml[-1] * (1 - uniform(typed, shape, dtype=p_cuml.dtype))
            ind = jnp.searchsorted(p_cuml, r).astype(int)  # type: ignore[attr-defined]
        else:
            # Gumbel top-k: the k largest of log p + Gumbel noise are a sample without replacement.
            g = gumbel(typed, (n_inputs,), dtype=p_arr.dtype, mode=mode) + jnp.log(p_arr)
            ind = lax.top_k(g, k=n_draws)[1].astype(int)
        result = ind if arr.ndim == 0 else _take(arr, ind, axis)
    return result.reshape(shape if arr.ndim == 0 else arr.shape[0:axis] + tuple(shape) + arr.shape[axis + 1 :])


# ---------------------------------------------------------------------------
# Normal and friends


@_laid_out
def normal(key: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Standard normal floats."""
    typed, _ = _check_prng_key("normal", key)
    shape = _canonicalize_shape(shape)
    _no_sharding("normal", out_sharding)
    dt = dtypes.check_user_dtype_supported(float if dtype is None else dtype, "normal")
    if not dtypes.issubdtype(dt, np.inexact):
        raise ValueError(f"dtype argument to `normal` must be a float or complex dtype, got {dt}")
    return _normal(typed, shape, dt)


@functools.partial(jit, static_argnums=(1, 2))
def _normal(key: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    if dtypes.issubdtype(dtype, np.complexfloating):
        # Real and imaginary parts from two keys of a split, each of variance 1/2 (JAX's samples).
        key_re, key_im = _split(key)
        parts = np.dtype(np.finfo(dtype).dtype)
        re = lax.convert_element_type(_normal_real(key_re, shape, parts), dtype)
        im = lax.convert_element_type(_normal_real(key_im, shape, parts), dtype)
        return lax.div(lax.add(re, lax.mul(np.array(1j, dtype), im)), np.array(np.sqrt(2), dtype))
    return _normal_real(key, shape, dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _normal_real(key: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    _check_shape("normal", shape)
    # u in (-1, 1): the lower end is the float just above -1, where erfinv is finite.
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    hi = np.array(1.0, dtype)
    u = uniform(key, shape, dtype, lo, hi)
    return lax.mul(np.array(np.sqrt(2), dtype), lax.erf_inv(u))


@_laid_out
def multivariate_normal(
    key: Any,
    mean: Any,
    cov: Any,
    shape: Shape | None = None,
    dtype: Any = None,
    method: str = "cholesky",
    *,
    out_sharding: Any = None,
) -> Any:
    """Samples of a multivariate normal of mean ``(..., n)`` and covariance ``(..., n, n)``.

    ``method``: the factor of ``cov`` ('cholesky', 'eigh' or 'svd'; the last two
    for singular covariances).
    """
    typed, _ = _check_prng_key("multivariate_normal", key)
    mean, cov = promote_dtypes_inexact(mean, cov)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dt = mean.dtype if dtype is None else dtypes.check_user_dtype_supported(dtype, "multivariate_normal")
    if not dtypes.issubdtype(dt, np.floating):
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, got {dt}")
    if shape is not None:
        shape = _canonicalize_shape(shape)
    _no_sharding("multivariate_normal", out_sharding)
    return _multivariate_normal(typed, mean, cov, shape, dt, method)


@functools.partial(jit, static_argnums=(3, 4, 5))
def _multivariate_normal(key: Any, mean: Any, cov: Any, shape: Any, dtype: np.dtype[Any], method: str) -> Any:
    if not np.ndim(mean) >= 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {np.ndim(mean)}")
    if not np.ndim(cov) >= 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {np.ndim(cov)}")
    n = mean.shape[-1]
    if np.shape(cov)[-2:] != (n, n):
        raise ValueError(
            f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got cov.shape == {np.shape(cov)}."
        )
    if shape is None:
        shape = jnp.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    else:
        _check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    linalg = jnp.linalg
    needed = {"svd": "svd", "eigh": "eigh", "cholesky": "cholesky"}[method]
    if not hasattr(linalg, needed):
        raise NotImplementedError(
            f"random.multivariate_normal(method={method!r}) needs jnp.linalg.{needed}, which minijax does not have yet"
        )
    if method == "svd":
        (u, s, _) = linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        (w, v) = linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = linalg.cholesky(cov)
    normal_samples = normal(key, shape + mean.shape[-1:], dtype)
    einsum = getattr(jnp, "einsum", None)
    if einsum is None:
        raise NotImplementedError("random.multivariate_normal needs jnp.einsum, which minijax does not have yet")
    return mean + einsum("...ij,...j->...i", factor, normal_samples)


@_laid_out
def truncated_normal(
    key: Any, lower: Any, upper: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Standard normal floats conditioned on the open interval ``(lower, upper)``."""
    if shape is not None:
        shape = _canonicalize_shape(shape)
    typed, _ = _check_prng_key("truncated_normal", key)
    _no_sharding("truncated_normal", out_sharding)
    dt = _user_float_dtype("truncated_normal", dtype)
    return _truncated_normal(typed, lower, upper, shape, dt)


@functools.partial(jit, static_argnums=(3, 4))
def _truncated_normal(key: Any, lower: Any, upper: Any, shape: Any, dtype: np.dtype[Any]) -> Any:
    if shape is None:
        shape = jnp.broadcast_shapes(np.shape(lower), np.shape(upper))
    else:
        _check_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(lower / sqrt2)
    b = lax.erf(upper / sqrt2)
    u = uniform(key, shape, dtype, minval=a, maxval=b)
    out = sqrt2 * lax.erf_inv(u)
    # Rounding (or drawing exactly a) could leave the open interval: clamp just inside it.
    return jnp.clip(
        out,
        lax.nextafter(lax.stop_gradient(lower), np.array(np.inf, dtype=dtype)),
        lax.nextafter(lax.stop_gradient(upper), np.array(-np.inf, dtype=dtype)),
    )


@_laid_out
def lognormal(key: Any, sigma: Any = 1.0, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """``exp(sigma * normal)``."""
    typed, _ = _check_prng_key("lognormal", key)
    _no_sharding("lognormal", out_sharding)
    dt = _user_float_dtype("lognormal", dtype)
    if shape is not None:
        shape = _canonicalize_shape(shape)
    return _lognormal(typed, sigma, shape, dt)


@functools.partial(jit, static_argnums=(2, 3))
def _lognormal(key: Any, sigma: Any, shape: Any, dtype: np.dtype[Any]) -> Any:
    if shape is None:
        shape = np.shape(sigma)
    else:
        _check_shape("lognormal", shape, np.shape(sigma))
    sigma = lax.convert_element_type(sigma, dtype)
    scaled_norm = normal(key, shape, dtype) * sigma
    return lax.exp(scaled_norm)


# ---------------------------------------------------------------------------
# Bernoulli


@_laid_out
def bernoulli(key: Any, p: Any = 0.5, shape: Shape | None = None, mode: str = "low", *, out_sharding: Any = None) -> Any:
    """Booleans that are True with probability ``p`` (``mode='high'`` resolves tiny p)."""
    if shape is not None:
        shape = _canonicalize_shape(shape)
    if mode not in ["high", "low"]:
        raise ValueError(f"got {mode=}, expected 'high' or 'low'")
    typed, _ = _check_prng_key("bernoulli", key)
    _no_sharding("bernoulli", out_sharding)
    dt = dtypes.dtype(p, canonicalize=True)
    if not dtypes.issubdtype(dt, np.floating):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dt}.")
    p = _convert(p, dt)
    return _bernoulli(typed, p, shape=shape, mode=mode)


@functools.partial(jit, static_argnames=["shape", "mode"])
def _bernoulli(key: Any, p: Any, shape: Any, mode: str) -> Any:
    if shape is None:
        shape = np.shape(p)
    else:
        _check_shape("bernoulli", shape, np.shape(p))
    dtype = dtypes.dtype(p)
    if mode == "high":
        u1, u2 = uniform(key, (2, *shape), dtype)
        # Uniform samples resolve 2 ** -nmant: a second draw fills in below that.
        u2 *= 2 ** -dtypes.finfo(dtype).nmant
        return u2 < p - u1
    return uniform(key, shape, dtype) < p


@_laid_out
def rademacher(key: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """-1 or 1 with equal probability."""
    typed, _ = _check_prng_key("rademacher", key)
    dt = dtypes.check_user_dtype_supported(int if dtype is None else dtype, "rademacher")
    shape = _canonicalize_shape(shape)
    _no_sharding("rademacher", out_sharding)
    return _rademacher(typed, shape, dt, None)


@functools.partial(jit, static_argnums=(1, 2, 3))
def _rademacher(key: Any, shape: tuple[int, ...], dtype: np.dtype[Any], out_sharding: Any) -> Any:
    bernoulli_samples = bernoulli(key=key, p=0.5, shape=shape).astype(dtype)
    return (2 * bernoulli_samples - 1).astype(dtype)


# ---------------------------------------------------------------------------
# Samplers from one uniform draw


def _float_sampler(name: str) -> Callable[..., Any]:
    """The public entry of a sampler whose only parameters are shape and dtype."""

    def check(key: Any, shape: Shape, dtype: Any, out_sharding: Any) -> tuple[Any, tuple[int, ...], np.dtype[Any]]:
        typed, _ = _check_prng_key(name, key)
        dt = _user_float_dtype(name, dtype)
        shape = _canonicalize_shape(shape)
        _no_sharding(name, out_sharding)
        return typed, shape, dt

    return check


@_laid_out
def exponential(key: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Exponential floats of rate 1."""
    return _exponential(*_float_sampler("exponential")(key, shape, dtype, out_sharding))


@functools.partial(jit, static_argnums=(1, 2))
def _exponential(key: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    _check_shape("exponential", shape)
    u = uniform(key, shape, dtype)
    # -log(1 - u): 1 - u is in (0, 1], where log is finite.
    return lax.neg(lax.log1p(lax.neg(u)))


@_laid_out
def laplace(key: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Laplace floats (density exp(-|x|) / 2)."""
    return _laplace(*_float_sampler("laplace")(key, shape, dtype, out_sharding))


@functools.partial(jit, static_argnums=(1, 2))
def _laplace(key: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    _check_shape("laplace", shape)
    u = uniform(key, shape, dtype, minval=-1.0 + dtypes.finfo(dtype).epsneg, maxval=1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


@_laid_out
def logistic(key: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Logistic floats (density e^-x / (1 + e^-x)^2)."""
    return _logistic(*_float_sampler("logistic")(key, shape, dtype, out_sharding))


@functools.partial(jit, static_argnums=(1, 2))
def _logistic(key: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    _check_shape("logistic", shape)
    x = uniform(key, shape, dtype, minval=dtypes.finfo(dtype).tiny, maxval=1.0)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


@_laid_out
def cauchy(key: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Cauchy floats (density 1 / (pi (1 + x^2)))."""
    return _cauchy(*_float_sampler("cauchy")(key, shape, dtype, out_sharding))


@functools.partial(jit, static_argnums=(1, 2))
def _cauchy(key: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    _check_shape("cauchy", shape)
    u = uniform(key, shape, dtype, minval=dtypes.finfo(dtype).eps, maxval=1.0)
    pi = _const(u, np.pi)
    return lax.tan(lax.mul(pi, lax.sub(u, _const(u, 0.5))))


@_laid_out
def maxwell(key: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Maxwell floats: the norm of a 3-d standard normal vector."""
    typed, shape, dt = _float_sampler("maxwell")(key, shape, dtype, out_sharding)
    return _maxwell(typed, shape, dt, None)


@functools.partial(jit, static_argnums=(1, 2, 3))
def _maxwell(key: Any, shape: tuple[int, ...], dtype: np.dtype[Any], out_sharding: Any) -> Any:
    shape = shape + (3,)
    norm_rvs = normal(key=key, shape=shape, dtype=dtype)
    return jnp.linalg.norm(norm_rvs, axis=-1)


@_laid_out
def double_sided_maxwell(
    key: Any, loc: Any, scale: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """A Maxwell magnitude with a random sign, scaled and shifted."""
    typed, shape, dt = _float_sampler("double_sided_maxwell")(key, shape, dtype, out_sharding)
    return _double_sided_maxwell(typed, loc, scale, shape, dt)


@functools.partial(jit, static_argnums=(3, 4))
def _double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    params_shapes = jnp.broadcast_shapes(np.shape(loc), np.shape(scale))
    if not shape:
        shape = params_shapes
    shape = shape + params_shapes
    maxwell_key, rademacher_key = _split(key)
    maxwell_rvs = maxwell(maxwell_key, shape=shape, dtype=dtype)
    random_sign = rademacher(rademacher_key, shape=shape, dtype=dtype)
    return random_sign * maxwell_rvs * scale + loc


@_laid_out
def weibull_min(
    key: Any, scale: Any, concentration: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Weibull floats of the given scale and concentration."""
    typed, shape, dt = _float_sampler("weibull_min")(key, shape, dtype, out_sharding)
    return _weibull_min(typed, scale, concentration, shape, dt)


@functools.partial(jit, static_argnums=(3, 4))
def _weibull_min(key: Any, scale: Any, concentration: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    random_uniform = uniform(key=key, shape=shape, minval=0, maxval=1, dtype=dtype)
    # Inverse CDF of the Weibull distribution.
    return jnp.power(-jnp.log1p(-random_uniform), 1.0 / concentration) * scale


@_laid_out
def pareto(key: Any, b: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Pareto floats of shape parameter ``b`` (support [1, inf))."""
    typed, _ = _check_prng_key("pareto", key)
    dt = _user_float_dtype("pareto", dtype)
    shape = _check_broadcast_shapes("pareto", shape, b)
    _check_all_safe_to_cast("pareto", dt, b)
    _no_sharding("pareto", out_sharding)
    return _pareto(typed, b, shape, dt)


@functools.partial(jit, static_argnums=(2, 3))
def _pareto(key: Any, b: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    b = lax.convert_element_type(b, dtype)
    e = exponential(key, shape, dtype)
    return lax.exp(e / b)


def _check_all_safe_to_cast(name: str, dtype: np.dtype[Any], *args: Any) -> None:
    for arg in args:
        arg_dtype, weak = dtypes.result_type(arg, return_weak_type_flag=True)
        if weak:
            continue  # a Python scalar adopts the target dtype
        if dtypes.issubdtype(arg_dtype, np.floating) and not dtypes.issubdtype(dtype, np.floating):
            unsafe = True
        else:
            unsafe = dtypes.promote_types(arg_dtype, dtype) != dtype
        if unsafe:
            raise dtypes.TypePromotionError(
                f"In arguments to {name}, cannot safely cast argument of type {arg_dtype} to {dtype}"
            )


@_laid_out
def rayleigh(key: Any, scale: Any = 1.0, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Rayleigh floats of the given scale."""
    typed, _ = _check_prng_key("rayleigh", key)
    dt = _user_float_dtype("rayleigh", dtype)
    shape = _check_broadcast_shapes("rayleigh", shape, scale)
    _no_sharding("rayleigh", out_sharding)
    return _rayleigh(typed, scale, shape, dt)


@functools.partial(jit, static_argnums=(2, 3))
def _rayleigh(key: Any, scale: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    if shape is None:
        shape = np.shape(scale)
    else:
        _check_shape("rayleigh", shape, np.shape(scale))
    u = uniform(key, shape, dtype)
    scale = scale.astype(dtype) if hasattr(scale, "astype") else np.asarray(scale, dtype)
    scale = jnp.broadcast_to(scale, shape)
    log_u = lax.log(u)
    n_two = _const(scale, -2)
    sqrt_u = lax.sqrt(lax.mul(log_u, n_two))
    return lax.mul(scale, sqrt_u)


@_laid_out
def wald(key: Any, mean: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Wald (inverse Gaussian) floats of the given mean."""
    typed, _ = _check_prng_key("wald", key)
    dt = _user_float_dtype("wald", dtype)
    shape = _check_broadcast_shapes("wald", shape, mean)
    _no_sharding("wald", out_sharding)
    return _wald(typed, mean, shape, dt)


@functools.partial(jit, static_argnums=(2, 3))
def _wald(key: Any, mean: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    if shape is None:
        shape = np.shape(mean)
    else:
        _check_shape("wald", shape, np.shape(mean))
    k1, k2 = _split(key, 2)
    mean = mean.astype(dtype) if hasattr(mean, "astype") else np.asarray(mean, dtype)
    mean = jnp.broadcast_to(mean, shape)
    v = normal(k1, shape, dtype)
    z = uniform(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    w = lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)
    return w


@_laid_out
def geometric(key: Any, p: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """The number of Bernoulli(p) trials up to the first success (integers >= 1)."""
    typed, _ = _check_prng_key("geometric", key)
    dt = dtypes.check_user_dtype_supported(int if dtype is None else dtype, "geometric")
    if not dtypes.issubdtype(dt, np.integer):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dt}")
    shape = _check_broadcast_shapes("geometric", shape, p)
    _no_sharding("geometric", out_sharding)
    return _geometric(typed, p, shape, dt, None)


@functools.partial(jit, static_argnums=(2, 3, 4))
def _geometric(key: Any, p: Any, shape: tuple[int, ...], dtype: np.dtype[Any], out_sharding: Any) -> Any:
    if shape is None:
        shape = np.shape(p)
    else:
        _check_shape("geometric", shape, np.shape(p))
    check_arraylike("geometric", p)
    (p,) = promote_dtypes_inexact(p)
    u = uniform(key, shape, p.dtype)
    log_u = lax.log(u)
    log_one_minus_p = lax.log1p(-jnp.broadcast_to(p, shape))
    g = lax.floor(lax.div(log_u, log_one_minus_p)) + 1
    return g.astype(dtype)


@_laid_out
def triangular(
    key: Any, left: Any, mode: Any, right: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Triangular floats on [left, right] peaking at ``mode``."""
    typed, _ = _check_prng_key("triangular", key)
    dt = _user_float_dtype("triangular", dtype)
    shape = _check_broadcast_shapes("triangular", shape, left, mode, right)
    _no_sharding("triangular", out_sharding)
    return _triangular(typed, left, mode, right, shape, dt)


@functools.partial(jit, static_argnums=(4, 5))
def _triangular(key: Any, left: Any, mode: Any, right: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    # Inverse CDF of the triangular distribution.
    fc = (mode - left) / (right - left)
    u = uniform(key, shape, dtype)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, out1, out2)


# ---------------------------------------------------------------------------
# Gumbel and categorical


@_laid_out
def gumbel(key: Any, shape: Shape = (), dtype: Any = None, mode: str | None = None, *, out_sharding: Any = None) -> Any:
    """Gumbel floats (density exp(-(x + e^-x))); ``mode='high'`` extends the tail."""
    typed, _ = _check_prng_key("gumbel", key)
    dt = _user_float_dtype("gumbel", dtype)
    shape = _canonicalize_shape(shape)
    if mode is None:
        mode = "high" if prng.use_high_dynamic_range_gumbel.value else "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    _no_sharding("gumbel", out_sharding)
    return _gumbel(typed, shape, dt, mode)


def _safe_int_to_float(random_bits: Any, dtype: np.dtype[Any]) -> Any:
    """Two uint32 words of a 64-bit fixed-point fraction (shape (2, ...)) -> float32 in (0, 1)."""
    if random_bits.dtype != np.uint32 or dtype != np.float32:
        raise RuntimeError("_safe_int_to_float only works for u32 -> f32")
    finfo = dtypes.finfo(dtype)
    hiclz, loclz = lax.clz(random_bits)
    hi, lo = random_bits
    mantissa = lax.bitwise_or(
        lax.shift_left(hi, hiclz),
        jnp.where(hiclz == 32, lax.shift_left(lo, loclz), lax.shift_right_logical(lo, finfo.bits - hiclz)),
    )
    mantissa = lax.shift_right_logical(mantissa, np.array(finfo.bits - finfo.nmant - 1, dtype=np.uint32))
    mantissa = lax.bitwise_and(mantissa, np.array((1 << finfo.nmant) - 1, dtype=np.uint32))
    exp = lax.shift_left(
        (-finfo.minexp - jnp.where(hiclz == 32, 32 + loclz, hiclz)), np.array(finfo.nmant, dtype=np.uint32)
    )
    exp = lax.bitwise_and(exp, np.array((1 << (finfo.bits - 2)) - (1 << (finfo.nmant - 1)), dtype=np.uint32))
    return lax.bitcast_convert_type(lax.bitwise_or(exp, mantissa), dtype)


@functools.partial(jit, static_argnums=(1, 2, 3))
def _gumbel(key: Any, shape: tuple[int, ...], dtype: np.dtype[Any], mode: str) -> Any:
    _check_shape("gumbel", shape)
    info = dtypes.finfo(dtype)
    if dtype == np.float32 and mode == "highest":
        random_bits = _random_bits(key, info.bits, shape=(2,) + shape)
        neg = lax.bitwise_not(random_bits)
        lo_bits = neg[1]
        # 1 - bits as a 64-bit fixed-point fraction.
        neg = neg + jnp.array(
            [lo_bits == np.array((1 << info.bits) - 1, dtype=np.uint32), jnp.ones_like(lo_bits)], dtype=np.uint32
        )
        flip_mask = random_bits[0] < np.array(1 << (info.bits - 1), dtype=np.uint32)
        x = _safe_int_to_float(jnp.where(flip_mask, random_bits, neg), dtype=np.dtype(np.float32))
        # log1p for (0, 0.5), log for [0.5, 1).
        return jnp.where(flip_mask, -jnp.log(-jnp.log1p(-x)), -jnp.log(-jnp.log(x)))
    if mode in ("high", "highest"):
        # Keyword arguments, as JAX passes them (a jit orders them by name).
        high, low = _uniform(key, minval=0.0, maxval=1.0, shape=(2,) + shape, dtype=dtype)
        x = jnp.where(high >= 0.5, high, high + 2 ** -int(info.nmant) * low + float(info.tiny))
        return -jnp.log(-jnp.log1p(-x))
    return -jnp.log(-jnp.log(_uniform(key, minval=info.tiny, maxval=1.0, shape=shape, dtype=dtype)))


@_laid_out
def categorical(
    key: Any,
    logits: Any,
    axis: int = -1,
    shape: Shape | None = None,
    replace: bool = True,
    mode: str | None = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Category indices drawn from softmax(``logits``) along ``axis`` (Gumbel-max; top-k without replacement)."""
    typed, _ = _check_prng_key("categorical", key)
    check_arraylike("categorical", logits)
    logits_arr = jnp.asarray(logits)
    batch_shape = tuple(np.delete(logits_arr.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = _canonicalize_shape(shape)
        _check_shape("categorical", shape, batch_shape)
    _no_sharding("categorical", out_sharding)
    return _categorical(typed, logits_arr, tuple(shape), batch_shape, axis, replace, mode)


def _categorical(
    key: Any, logits_arr: Any, shape: tuple[int, ...], batch_shape: tuple[int, ...], axis: int, replace: bool, mode: Any
) -> Any:
    shape_prefix = shape[: len(shape) - len(batch_shape)]
    if replace:
        if axis >= 0:
            axis -= len(logits_arr.shape)
        logits_shape = list(shape[len(shape) - len(batch_shape) :])
        logits_shape.insert(axis % len(logits_arr.shape), logits_arr.shape[axis])
        noise = gumbel(key, (*shape_prefix, *logits_shape), logits_arr.dtype, mode=mode)
        return jnp.argmax(noise + lax.expand_dims(logits_arr, tuple(range(len(shape_prefix)))), axis=axis)
    logits_arr += gumbel(key, logits_arr.shape, logits_arr.dtype, mode=mode)
    k = core.shape_size(shape_prefix)
    if k > logits_arr.shape[axis]:
        raise ValueError(
            f"Number of samples without replacement ({k}) cannot exceed number of categories ({logits_arr.shape[axis]})."
        )
    _, indices = lax.top_k(jnp.moveaxis(logits_arr, axis, -1), k)
    dimensions = (indices.ndim - 1, *range(indices.ndim - 1))
    return lax.reshape(indices, shape, dimensions)


# ---------------------------------------------------------------------------
# Gamma and the distributions built on it


@_laid_out
def gamma(key: Any, a: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Gamma floats of shape parameter ``a`` (rate 1)."""
    typed, _ = _check_prng_key("gamma", key)
    dt = _user_float_dtype("gamma", dtype)
    if shape is not None:
        shape = _canonicalize_shape(shape)
    _no_sharding("gamma", out_sharding)
    return _gamma(typed, a, shape=shape, dtype=dt)


@_laid_out
def loggamma(key: Any, a: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """The log of gamma floats, computed in log space (accurate for small ``a``)."""
    typed, _ = _check_prng_key("loggamma", key)
    dt = _user_float_dtype("gamma", dtype)
    if shape is not None:
        shape = _canonicalize_shape(shape)
    _no_sharding("loggamma", out_sharding)
    return _gamma(typed, a, shape=shape, dtype=dt, log_space=True)


@functools.partial(jit, static_argnames=("shape", "dtype", "log_space"))
def _gamma(key: Any, a: Any, shape: Any, dtype: np.dtype[Any], log_space: bool = False) -> Any:
    if shape is None:
        shape = np.shape(a)
    else:
        _check_shape("gamma", shape, np.shape(a))
    a = lax.convert_element_type(a, dtype)
    if np.shape(a) != shape:
        a = jnp.broadcast_to(a, shape)
    return random_prims.random_gamma_p.bind(key, a, log_space=log_space)


def _gamma_one(key: Any, alpha: Any, log_space: bool) -> Any:
    """One gamma sample (Marsaglia and Tsang): rejection with a while loop, as JAX's."""
    zero = _const(alpha, 0)
    one = _const(alpha, 1)
    two = _const(alpha, 2)
    minus_one = _const(alpha, -1)
    one_over_two = _const(alpha, 0.5)
    one_over_three = _const(alpha, 1.0 / 3.0)
    squeeze_const = _const(alpha, 0.0331)
    dtype = dtypes.dtype(alpha)
    # alpha < 1 is boosted to alpha + 1: Gamma(a) ~ Gamma(a + 1) * U ** (1 / a).
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, one_over_three)
    c = lax.div(one_over_three, lax.sqrt(d))

    def _cond_fn(kXVU: Any) -> Any:
        _, X, V, U = kXVU
        return lax.bitwise_and(
            lax.ge(U, lax.sub(one, lax.mul(squeeze_const, lax.mul(X, X)))),
            lax.ge(lax.log(U), lax.add(lax.mul(X, one_over_two), lax.mul(d, lax.add(lax.sub(one, V), lax.log(V))))),
        )

    def _body_fn(kXVU: Any) -> Any:
        def _next_kxv(kxv: Any) -> Any:
            k = kxv[0]
            k, subkey = _split(k)
            x = normal(subkey, (), dtype=dtype)
            v = lax.add(one, lax.mul(x, c))
            return k, x, v

        k = kXVU[0]
        k, x_key, U_key = _split(k, 3)
        _, x, v = lax.while_loop(lambda kxv: lax.le(kxv[2], zero), _next_kxv, (x_key, zero, minus_one))
        X = lax.mul(x, x)
        V = lax.mul(lax.mul(v, v), v)
        U = uniform(U_key, (), dtype=dtype)
        return k, X, V, U

    # The initial state makes _cond_fn true.
    key, subkey = _split(key)
    _, _, V, _ = lax.while_loop(_cond_fn, _body_fn, (key, zero, one, two))
    if log_space:
        log_samples = lax.neg(exponential(subkey, (), dtype=dtype))
        log_boost = lax.select(boost_mask | (log_samples == 0), zero, lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(V)), log_boost)
    samples = 1 - uniform(subkey, (), dtype=dtype)
    boost = lax.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, V), boost)


def _gamma_impl(key: Any, a: Any, *, log_space: bool) -> Any:
    """random_gamma's meaning: one key per element of ``a`` (split from ``key``), one sample each."""
    a_shape = np.shape(a)
    split_count = core.shape_size(a_shape[key.ndim :])
    keys = key.flatten()
    keys = vmap(_split, in_axes=(0, None))(keys, split_count)
    keys = keys.flatten()
    alphas = a.flatten()
    samples = vmap(functools.partial(_gamma_one, log_space=log_space))(keys, alphas)
    return jnp.reshape(samples, a_shape)


@_laid_out
def beta(key: Any, a: Any, b: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Beta floats of parameters ``a`` and ``b``."""
    typed, _ = _check_prng_key("beta", key)
    dt = _user_float_dtype("beta", dtype)
    _check_all_safe_to_cast("beta", dt, a, b)
    shape = _check_broadcast_shapes("beta", shape, a, b)
    _no_sharding("beta", out_sharding)
    return _beta(typed, a, b, shape, dt)


@functools.partial(jit, static_argnums=(3, 4))
def _beta(key: Any, a: Any, b: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    _check_shape("beta", shape, np.shape(a), np.shape(b))
    a = lax.convert_element_type(a, dtype)
    b = lax.convert_element_type(b, dtype)
    key_a, key_b = _split(key)
    a = jnp.broadcast_to(a, shape)
    b = jnp.broadcast_to(b, shape)
    log_gamma_a = loggamma(key_a, a, shape, dtype)
    log_gamma_b = loggamma(key_b, b, shape, dtype)
    # gamma_a / (gamma_a + gamma_b), computed from the logs without overflow.
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = jnp.exp(log_gamma_a - log_max)
    gamma_b_scaled = jnp.exp(log_gamma_b - log_max)
    return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)


@_laid_out
def dirichlet(key: Any, alpha: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Dirichlet samples (probability vectors along the last axis) of concentration ``alpha``."""
    typed, _ = _check_prng_key("dirichlet", key)
    dt = _user_float_dtype("dirichlet", dtype)
    if shape is not None:
        shape = _canonicalize_shape(shape)
    _no_sharding("dirichlet", out_sharding)
    return _dirichlet(typed, alpha, shape, dt)


@functools.partial(jit, static_argnums=(2, 3))
def _dirichlet(key: Any, alpha: Any, shape: Any, dtype: np.dtype[Any]) -> Any:
    if not np.ndim(alpha) >= 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {np.ndim(alpha)}")
    if shape is None:
        shape = np.shape(alpha)[:-1]
    else:
        _check_shape("dirichlet", shape, np.shape(alpha)[:-1])
    alpha = lax.convert_element_type(alpha, dtype)
    # Gamma samples in log space: small alpha would underflow otherwise.
    log_gamma_samples = loggamma(key, alpha, shape + np.shape(alpha)[-1:], dtype)
    return softmax(log_gamma_samples, -1)


@_laid_out
def chisquare(key: Any, df: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Chi-square floats of ``df`` degrees of freedom."""
    typed, _ = _check_prng_key("chisquare", key)
    dt = _user_float_dtype("chisquare", dtype)
    shape = _check_broadcast_shapes("chisquare", shape, df)
    _check_all_safe_to_cast("chisquare", dt, df)
    _no_sharding("chisquare", out_sharding)
    return _chisquare(typed, df, shape, dt, None)


@functools.partial(jit, static_argnums=(2, 3, 4))
def _chisquare(key: Any, df: Any, shape: tuple[int, ...], dtype: np.dtype[Any], out_sharding: Any) -> Any:
    df = lax.convert_element_type(df, dtype)
    two = _const(df, 2)
    half_df = lax.div(df, two)
    log_g = loggamma(key, a=half_df, shape=shape, dtype=dtype)
    return lax.mul(jnp.exp(log_g), two)


@_laid_out
def t(key: Any, df: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Student's t floats of ``df`` degrees of freedom."""
    typed, _ = _check_prng_key("t", key)
    dt = _user_float_dtype("t", dtype)
    shape = _check_broadcast_shapes("t", shape, df)
    _no_sharding("t", out_sharding)
    _check_all_safe_to_cast("t", dt, df)
    return _t(typed, df, shape, dt)


@functools.partial(jit, static_argnums=(2, 3))
def _t(key: Any, df: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    _check_shape("t", shape, np.shape(df))
    df = lax.convert_element_type(df, dtype)
    key_n, key_g = _split(key)
    n = normal(key_n, shape, dtype)
    two = _const(n, 2)
    half_df = lax.div(df, two)
    g = gamma(key_g, half_df, shape, dtype)
    return n * jnp.sqrt(half_df / g)


# ---------------------------------------------------------------------------
# Poisson


@_laid_out
def poisson(key: Any, lam: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Poisson integers of rate ``lam`` (Knuth's method below 10, transformed rejection above)."""
    typed, _ = _check_prng_key("poisson", key)
    dt = dtypes.check_user_dtype_supported(int if dtype is None else dtype, "poisson")
    shape = np.shape(lam) if shape is None else _canonicalize_shape(shape)
    _no_sharding("poisson", out_sharding)
    lam = jnp.broadcast_to(lam, shape)
    lam = lax.convert_element_type(lam, np.float32)
    return _poisson(typed, lam, shape, dt)


def _isnan(x: Any) -> Any:
    return lax.ne(x, x)


@functools.partial(jit, static_argnums=(2, 3, 4))
def _poisson_knuth(key: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype[Any], max_iters: Any) -> Any:
    def body_fn(carry: Any) -> Any:
        i, k, rng, log_prod = carry
        rng, subkey = _split(rng)
        k = lax.select(log_prod > -lam, k + 1, k)
        u = uniform(subkey, shape, np.float32)
        return i + 1, k, rng, log_prod + jnp.log(u)

    def cond_fn(carry: Any) -> Any:
        i, log_prod = carry[0], carry[3]
        return (log_prod > -lam).any() & (i < max_iters)

    k_init = lax.full_like(lam, 0, dtype, shape)
    log_rate_init = lax.full_like(lam, 0, np.float32, shape)
    k = lax.while_loop(cond_fn, body_fn, (0, k_init, key, log_rate_init))[1]
    return (k - 1).astype(dtype)


@functools.partial(jit, static_argnums=(2, 3, 4))
def _poisson_rejection(key: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype[Any], max_iters: Any) -> Any:
    # Transformed rejection (Hormann, 1993).
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body_fn(carry: Any) -> Any:
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = _split(key, 3)
        u = uniform(subkey_0, shape, lam.dtype) - 0.5
        v = uniform(subkey_1, shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept2 = s <= t
        accept = accept1 | (~reject & accept2)
        k_out = lax.select(accept, k, k_out)
        accepted |= accept
        return i + 1, k_out, accepted, key

    def cond_fn(carry: Any) -> Any:
        i, k_out, accepted, key = carry
        return (~accepted).any() & (i < max_iters)

    k_init = lax.full_like(lam, -1, lam.dtype, shape)
    accepted = lax.full_like(lam, False, np.dtype("bool"), shape)
    k = lax.while_loop(cond_fn, body_fn, (0, k_init, accepted, key))[1]
    return k.astype(dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _poisson(key: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    use_knuth = _isnan(lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, lax.full_like(lam, 0.0))
    # Rejection's acceptance rate tends to 89% for large lam: a large dummy rate is cheap.
    lam_rejection = lax.select(use_knuth, lax.full_like(lam, 1e5), lam)
    max_iters = dtype.type(dtypes.iinfo(dtype).max)
    result = lax.select(
        use_knuth,
        _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters),
    )
    return lax.select(lam == 0, jnp.zeros_like(result), result)


# ---------------------------------------------------------------------------
# F, generalized normal, Lp ball, orthogonal matrices


@_laid_out
def f(
    key: Any, dfnum: Any, dfden: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """F-distributed floats: the ratio of two chi-squares, each over its degrees of freedom."""
    typed, _ = _check_prng_key("f", key)
    dt = _user_float_dtype("f", dtype)
    shape = _check_broadcast_shapes("f", shape, dfnum, dfden)
    _no_sharding("f", out_sharding)
    _check_all_safe_to_cast("f", dt, dfnum, dfden)
    return _f(typed, dfnum, dfden, shape, dt, None)


@functools.partial(jit, static_argnums=(3, 4, 5))
def _f(key: Any, dfnum: Any, dfden: Any, shape: tuple[int, ...], dtype: np.dtype[Any], out_sharding: Any) -> Any:
    dfden = lax.convert_element_type(dfden, dtype)
    dfnum = lax.convert_element_type(dfnum, dtype)
    # JAX draws the denominator from the first half of the split.
    key_dfd, key_dfn = _split(key)
    chi2_dfn = chisquare(key_dfn, dfnum, shape, dtype)
    chi2_dfd = chisquare(key_dfd, dfden, shape, dtype)
    return lax.div(lax.div(chi2_dfn, dfnum), lax.div(chi2_dfd, dfden))


@_laid_out
def generalized_normal(key: Any, p: float, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Floats of density proportional to ``exp(-|x|**p)``: a random sign times ``Gamma(1/p) ** (1/p)``."""
    dims = _canonicalize_shape(shape)
    typed, _ = _check_prng_key("generalized_normal", key)
    dt = dtypes.check_user_dtype_supported(float if dtype is None else dtype, "generalized_normal")
    _check_shape("generalized_normal", dims)
    _no_sharding("generalized_normal", out_sharding)
    return _generalized_normal(typed, p, dims, dt)


@functools.partial(jit, static_argnums=(2, 3))
def _generalized_normal(key: Any, p: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    keys = _split(key)
    g = gamma(keys[0], 1 / p, shape, dtype)
    r = rademacher(keys[1], shape, dtype)
    return r * g ** (1 / p)


@_laid_out
def ball(key: Any, d: int, p: float = 2, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Points uniform in the unit Lp ball of dimension ``d``, shape ``(*shape, d)`` (Barthe et al.)."""
    dims = _canonicalize_shape(shape)
    typed, _ = _check_prng_key("ball", key)
    dt = dtypes.check_user_dtype_supported(float if dtype is None else dtype, "ball")
    _check_shape("ball", dims)
    d = operator.index(core.concrete_or_error(d, "The error occurred in jax.random.ball()"))
    _no_sharding("ball", out_sharding)
    return _ball(typed, p, d, dims, dt)


@functools.partial(jit, static_argnums=(2, 3, 4))
def _ball(key: Any, p: Any, d: int, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    k1, k2 = _split(key)
    g = generalized_normal(k1, p, (*shape, d), dtype)
    e = exponential(k2, shape, dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


@_laid_out
def orthogonal(
    key: Any, n: int, shape: Shape = (), dtype: Any = None, m: int | None = None, *, out_sharding: Any = None
) -> Any:
    """A (semi-)orthogonal ``n x m`` matrix, Haar-distributed: the QR of a Gaussian matrix, signs fixed by R's diagonal."""
    dims = _canonicalize_shape(shape)
    typed, _ = _check_prng_key("orthogonal", key)
    dt = dtypes.check_user_dtype_supported(float if dtype is None else dtype, "orthogonal")
    _check_shape("orthogonal", dims)
    where = "The error occurred in jax.random.orthogonal()"
    n = operator.index(core.concrete_or_error(n, where))
    cols = operator.index(core.concrete_or_error(n if m is None else m, where))
    _no_sharding("orthogonal", out_sharding)
    return _orthogonal(typed, n, cols, dims, dt)


@functools.partial(jit, static_argnums=(1, 2, 3, 4))
def _orthogonal(key: Any, n: int, m: int, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    z = normal(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    d = jnp.linalg.diagonal(r)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return x.mT if n < m else x


# ---------------------------------------------------------------------------
# Binomial and multinomial


def binomial(key: Any, n: Any, p: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Binomial counts (as floats) of ``n`` trials of success probability ``p``.

    As JAX (and TensorFlow): inversion by summing geometric waiting times where
    ``n * min(p, 1 - p) <= 10``, the BTRS transformed-rejection sampler above.
    """
    typed, _ = _check_prng_key("binomial", key)
    check_arraylike("binomial", n, p)
    dt = _user_float_dtype("binomial", dtype)
    dims = None if shape is None else _canonicalize_shape(shape)
    return _binomial(typed, n, p, dims, dt)


def _stirling_approx_tail(k: Any) -> Any:
    """log(k!) minus its Stirling approximation: tabulated for k <= 9, the series beyond."""
    tail_values = jnp.array(
        [
            0.0810614667953272,
            0.0413406959554092,
            0.0276779256849983,
            0.02079067210376509,
            0.0166446911898211,
            0.0138761288230707,
            0.0118967099458917,
            0.0104112652619720,
            0.00925546218271273,
            0.00833056343336287,
        ],
        dtype=k.dtype,
    )
    use_table = k <= 9
    k = lax.clamp(_const(k, 0.0), k, _const(k, 9.0))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = jnp.floor(k)
    return lax.select(use_table, tail_values[jnp.asarray(k, dtype="int32")], approx)


@functools.partial(jit, static_argnums=(3, 4, 5), inline=True)
def _binomial_inversion(key: Any, count: Any, prob: Any, shape: tuple[int, ...], dtype: np.dtype[Any], max_iters: Any) -> Any:
    log1minusprob = jnp.log1p(-prob)

    def body_fn(carry: Any) -> Any:
        i, num_geom, geom_sum, key = carry
        # JAX keeps the second half of the split as the next key.
        subkey, key = _split(key)
        num_geom_out = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = uniform(subkey, shape, prob.dtype)
        geom = jnp.ceil(jnp.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, key

    def cond_fn(carry: Any) -> Any:
        i, geom_sum = carry[0], carry[2]
        return (geom_sum <= count).any() & (i < max_iters)

    num_geom_init = lax.full_like(prob, 0, prob.dtype, shape)
    geom_sum_init = lax.full_like(prob, 0, prob.dtype, shape)
    k = lax.while_loop(cond_fn, body_fn, (0, num_geom_init, geom_sum_init, key))[1]
    return (k - 1).astype(dtype)


@functools.partial(jit, static_argnums=(3, 4, 5), inline=True)
def _btrs(key: Any, count: Any, prob: Any, shape: tuple[int, ...], dtype: np.dtype[Any], max_iters: Any) -> Any:
    # Transformed rejection with squeeze (Hormann, 1993).
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def body_fn(carry: Any) -> Any:
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = _split(key, 3)
        u = uniform(subkey_0, shape, prob.dtype)
        v = uniform(subkey_1, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        ub = (
            (m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
            + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
            + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
            + _stirling_approx_tail(m)
            + _stirling_approx_tail(count - m)
            - _stirling_approx_tail(k)
            - _stirling_approx_tail(count - k)
        )
        accept = accept1 | (~reject & (v <= ub))
        k_out = lax.select(accept, k, k_out)
        return i + 1, k_out, accepted | accept, key

    def cond_fn(carry: Any) -> Any:
        i, accepted = carry[0], carry[2]
        return (~accepted).any() & (i < max_iters)

    k_init = lax.full_like(prob, -1, prob.dtype, shape)
    carry = (0, k_init, jnp.full(shape, False, bool), key)
    return lax.while_loop(cond_fn, body_fn, carry)[1].astype(dtype)


@functools.partial(jit, static_argnums=(3, 4), inline=True)
def _binomial(key: Any, count: Any, prob: Any, shape: Any, dtype: np.dtype[Any]) -> Any:
    if shape is None:
        shape = jnp.broadcast_shapes(np.shape(count), np.shape(prob))
    else:
        _check_shape("binomial", shape, np.shape(count), np.shape(prob))
    (prob,) = promote_dtypes_inexact(prob)
    count = lax.convert_element_type(count, prob.dtype)
    count = jnp.broadcast_to(count, shape)
    prob = jnp.broadcast_to(prob, shape)
    # Sample with q = min(p, 1 - p) and reflect at the end: both samplers want a small q.
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = _isnan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = _isnan(q)
    q_l_0 = q < 0.0
    q = lax.select(q_is_nan | q_l_0, lax.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    # A float count is floored, as NumPy's binomial does.
    count = jnp.floor(count)
    count_inv = lax.select(use_inversion, count, lax.full_like(count, 0.0))
    count_btrs = lax.select(use_inversion, lax.full_like(count, 1e4), count)
    q_btrs = lax.select(use_inversion, lax.full_like(q, 0.5), q)
    max_iters = dtype.type(dtypes.finfo(dtype).max)
    samples = lax.select(
        use_inversion,
        _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
        _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters),
    )
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, jnp.full_like(samples, np.nan, dtype), samples)
    samples = lax.select(count_inf & (~invalid), jnp.full_like(samples, np.inf, dtype), samples)
    return lax.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples, count.astype(dtype) - samples)


def multinomial(
    key: Any, n: Any, p: Any, *, shape: Shape | None = None, dtype: Any = None, unroll: int | bool = 1
) -> Any:
    """Multinomial counts along ``p``'s last axis: one binomial per outcome on what the previous ones left."""
    typed, _ = _check_prng_key("multinomial", key)
    check_arraylike("multinomial", n, p)
    n, p = promote_dtypes_inexact(n, p)
    dt = dtypes.check_user_dtype_supported(float if dtype is None else dtype, "multinomial")
    dims = tuple(p.shape) if shape is None else _canonicalize_shape(shape)
    n = jnp.broadcast_to(n, dims[:-1])
    p = jnp.broadcast_to(p, dims)

    def step(remainder: Any, ratio_key: Any) -> Any:
        ratio, k = ratio_key
        count = binomial(k, remainder, ratio.clip(0, 1), dtype=remainder.dtype)
        return remainder - count, count

    p = jnp.moveaxis(p, -1, 0)
    remaining_probs = lax.cumsum(p, 0, reverse=True)
    ratios = p / jnp.where(remaining_probs == 0, 1, remaining_probs)
    keys = _split(typed, ratios.shape[0])
    _, counts = lax.scan(step, n, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dt)


_gamma_jaxprs: dict[tuple[Any, ...], Any] = {}


def random_gamma_jaxpr(key: core.ShapedArray, a: core.ShapedArray, log_space: bool) -> Any:
    """The ClosedJaxpr that computes the ``random_gamma`` primitive on these operand
    types: JAX's sampler (``_gamma_impl``), traced once per signature. The
    backends lower the primitive by running it, as JAX lowers it."""
    cache_key = (key, a, bool(log_space), config.x64_enabled())
    closed = _gamma_jaxprs.get(cache_key)
    if closed is None:

        def fun(k: Any, alpha: Any) -> list[Any]:
            return [_gamma_impl(k, alpha, log_space=log_space)]

        closed, _ = trace_to_jaxpr(fun, [key, a])
        _gamma_jaxprs[cache_key] = closed
    return closed
random_gamma_p = random_prims.random_gamma_p
