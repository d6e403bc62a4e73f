"""Random primitives: the threefry2x32 hash and the operations on PRNG key arrays.

``threefry2x32`` is the counter-based hash every random number comes from
(20 rounds of add/rotate/xor on pairs of uint32 words). The key primitives
take and make *typed key arrays* (dtype ``key<fry>``, see ``minijax.prng``):
``random_seed`` (integer seeds -> keys), ``random_bits`` (keys -> uniform
unsigned bits), ``random_split``, ``random_fold_in``, ``random_wrap`` /
``random_unwrap`` (uint32 key data <-> keys) and ``random_clone``. Names and
params are JAX's, so jaxprs print as JAX prints them
(``random_bits[bit_width=32 shape=(3,)]``). ``spec/primitives/random.md`` is the
written specification; checks cite its constraint labels (``# random_bits C2``).

Every key primitive applies to each key of an array of keys independently:
keys of shape ``S`` give results of shape ``S + ...``. That makes batching
trivial (the batch axis is one more key axis) and keeps each backend's
implementation a loop-free array program. None of them is differentiable:
keys and bits have float0 tangents.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.core import ShapedArray, get_aval, shape_size
from minijax.interpreters import ad, batching
from minijax.jaxpr_parse import param_parsers
from minijax.primitives import elementwise as ew
from minijax.primitives.common import broadcasting_shape, standard_primitive
from minijax.primitives.special import random_gamma_grad
from minijax.prng import KeyTy, PRNGImpl, is_key_dtype, prngs, threefry_partitionable

_U32 = np.dtype(np.uint32)
UINT_DTYPES: dict[int, np.dtype[Any]] = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32, 64: np.dtype(np.uint64)}


def _shape_param(prim: str, shape: Any) -> tuple[int, ...]:
    try:
        dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{prim}: shape must be a tuple of integers, got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"{prim}: shape must have nonnegative dimensions, got {dims}")
    return dims


def _check_keys(prim: str, keys: ShapedArray) -> KeyTy:
    dtype = keys.dtype
    if not is_key_dtype(dtype):
        raise TypeError(f"{prim} takes a key array operand (dtype key<...>), got dtype={dtype.name}")
    assert isinstance(dtype, KeyTy)
    return dtype


# ---------------------------------------------------------------------------
# threefry2x32


def _threefry2x32_rule(*args: ShapedArray) -> list[ShapedArray]:
    if len(args) != 4:
        raise TypeError(f"threefry2x32 takes 4 operands (key1, key2, x1, x2), got {len(args)}")
    if any(a.dtype != _U32 for a in args):  # threefry2x32 C1
        raise TypeError("Arguments to threefry2x32 must have uint32 type, got " + ", ".join(a.str_short() for a in args))
    shape = broadcasting_shape("threefry2x32", *args)  # threefry2x32 C2
    return [ShapedArray(shape, _U32)] * 2


threefry2x32_p = standard_primitive("threefry2x32", _threefry2x32_rule, multiple_results=True)


# ---------------------------------------------------------------------------
# Key primitives


def _random_seed_rule(seeds: ShapedArray, *, impl: PRNGImpl) -> ShapedArray:
    if not dtypes.issubdtype(seeds.dtype, np.integer):  # random_seed C1
        raise TypeError(f"PRNG key seed must be an integer; got {seeds.str_short(short_dtypes=False)}")
    return ShapedArray(seeds.shape, KeyTy(impl))


random_seed_p = standard_primitive("random_seed", _random_seed_rule)


def _random_bits_rule(keys: ShapedArray, *, bit_width: int, shape: Any) -> ShapedArray:
    _check_keys("random_bits", keys)  # random_bits C1
    if bit_width not in UINT_DTYPES:  # random_bits C2
        raise TypeError(f"random_bits requires 8-, 16-, 32- or 64-bit field width, got bit_width={bit_width}.")
    dims = _shape_param("random_bits", shape)  # random_bits C3
    if shape_size(dims) > 2**64:
        raise NotImplementedError("random bits array of size exceeding 2 ** 64")
    return ShapedArray((*keys.shape, *dims), UINT_DTYPES[bit_width])


random_bits_p = standard_primitive("random_bits", _random_bits_rule)


def _random_split_rule(keys: ShapedArray, *, shape: Any) -> ShapedArray:
    dtype = _check_keys("random_split", keys)  # random_split C1
    dims = _shape_param("random_split", shape)  # random_split C2
    return ShapedArray((*keys.shape, *dims), dtype)


random_split_p = standard_primitive("random_split", _random_split_rule)


def _random_fold_in_rule(keys: ShapedArray, msgs: ShapedArray) -> ShapedArray:
    dtype = _check_keys("random_fold_in", keys)  # random_fold_in C1
    if msgs.dtype != _U32:  # random_fold_in C2
        raise TypeError(f"random_fold_in takes uint32 data to fold in, got {msgs.str_short()}")
    shape = broadcasting_shape("random_fold_in", keys, msgs)  # random_fold_in C3
    return ShapedArray(shape, dtype)


random_fold_in_p = standard_primitive("random_fold_in", _random_fold_in_rule)


def check_key_data(impl: PRNGImpl, data: ShapedArray) -> None:
    """JAX's checks (and messages) for uint32 data becoming keys of ``impl``."""
    ndim = len(impl.key_shape)
    if data.ndim < 1:  # random_wrap C1
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; got ndim={data.ndim}")
    if data.shape[-ndim:] != impl.key_shape:  # random_wrap C2
        raise TypeError(
            "JAX encountered invalid PRNG key data: expected key_data.shape to "
            f"end with {impl.key_shape}; got shape={data.shape} for impl={impl.name}"
        )
    if data.dtype not in (_U32, dtypes.float0):  # random_wrap C3
        raise TypeError(
            f"JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; got dtype={data.dtype.name}"
        )


def _random_wrap_rule(data: ShapedArray, *, impl: PRNGImpl) -> ShapedArray:
    if is_key_dtype(data.dtype):
        raise TypeError("random_wrap takes uint32 key data, got a key array; it is a key already.")
    check_key_data(impl, data)
    return ShapedArray(data.shape[: data.ndim - len(impl.key_shape)], KeyTy(impl))


random_wrap_p = standard_primitive("random_wrap", _random_wrap_rule)


def _random_unwrap_rule(keys: ShapedArray) -> ShapedArray:
    dtype = _check_keys("random_unwrap", keys)  # random_unwrap C1
    return ShapedArray((*keys.shape, *dtype.impl.key_shape), _U32)


random_unwrap_p = standard_primitive("random_unwrap", _random_unwrap_rule)


def _random_clone_rule(keys: ShapedArray) -> ShapedArray:
    return keys  # any array, as in JAX (a raw key is cloned as itself)


random_clone_p = standard_primitive("random_clone", _random_clone_rule)


# ---------------------------------------------------------------------------
# random_gamma: gamma samples by rejection (JAX's ``random.random_gamma_p``).
# Its meaning is a program of other primitives (minijax.random._gamma_impl: a
# vmapped while loop per element); both backends run that program's jaxpr.


def _random_gamma_rule(key: ShapedArray, a: ShapedArray, *, log_space: bool) -> ShapedArray:
    _check_keys("random_gamma", key)  # random_gamma C1
    if not dtypes.issubdtype(a.dtype, np.floating):  # random_gamma C2
        raise TypeError(f"random_gamma takes a floating-point shape parameter a, got {a.str_short()}")
    if a.shape[: key.ndim] != key.shape:  # random_gamma C3
        raise TypeError(f"random_gamma: the key shape {key.shape} must be a prefix of the shape of a, {a.shape}")
    return a.strip_weak_type()


# random_gamma's meaning is JAX's gamma sampler, a program written with the
# other random functions (``minijax.random.random_gamma_jaxpr``): the backends
# lower the primitive by running that program, as JAX lowers it.
random_gamma_p = standard_primitive("random_gamma", _random_gamma_rule)

# Params print as JAX's (``impl=fry``: a PRNGImpl prints its tag) and read back.
def _parse_impl(text: str, ctx: Any) -> PRNGImpl:
    for impl in prngs.values():
        if impl.tag == text.strip():
            return impl
    raise ValueError(f"unknown PRNG implementation tag {text!r}")


param_parsers[("random_seed", "impl")] = _parse_impl
param_parsers[("random_wrap", "impl")] = _parse_impl


# ---------------------------------------------------------------------------
# Binding helpers (what minijax.random builds on)


def threefry2x32(k1: Any, k2: Any, x1: Any, x2: Any) -> list[Any]:
    return threefry2x32_p.bind(k1, k2, x1, x2)  # type: ignore[no-any-return]


def random_seed(seeds: Any, impl: PRNGImpl) -> Any:
    return random_seed_p.bind(seeds, impl=impl)


def check_partitionable() -> None:
    if not threefry_partitionable.value:
        raise NotImplementedError(
            "jax_threefry_partitionable=False (JAX's older way of generating threefry bits) is not "
            "implemented by minijax; leave the flag at its default, True."
        )


def random_bits(keys: Any, bit_width: int, shape: Sequence[int]) -> Any:
    check_partitionable()
    return random_bits_p.bind(keys, bit_width=bit_width, shape=tuple(shape))


def random_split(keys: Any, shape: Sequence[int]) -> Any:
    check_partitionable()
    return random_split_p.bind(keys, shape=tuple(shape))


def random_fold_in(keys: Any, msgs: Any) -> Any:
    return random_fold_in_p.bind(keys, msgs)


def random_wrap(data: Any, impl: PRNGImpl) -> Any:
    check_key_data(impl, _aval_of(data))
    return random_wrap_p.bind(data, impl=impl)


def random_unwrap(keys: Any) -> Any:
    if not is_key_dtype(_aval_of(keys).dtype):
        raise TypeError(f"random_unwrap takes key array operand, got keys.dtype={_aval_of(keys).dtype!r}")
    return random_unwrap_p.bind(keys)


def random_clone(keys: Any) -> Any:
    return random_clone_p.bind(keys)


def _aval_of(x: Any) -> ShapedArray:
    if hasattr(x, "aval") or isinstance(x, (np.ndarray, np.generic, bool, int, float)):
        return get_aval(x)
    return get_aval(np.asarray(x))


# ---------------------------------------------------------------------------
# Transformation rules: nothing here is differentiable (float0 tangents), and
# everything batches without moving data, except random_wrap, whose batch axis
# must not be the trailing key-data axis.

BatchDim = batching.BatchDim

for _prim in (threefry2x32_p, random_seed_p, random_bits_p, random_split_p, random_fold_in_p,
              random_wrap_p, random_unwrap_p):  # fmt: skip
    ad.defjvp_zero(_prim)


def _random_clone_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    # Keys (and integers) have float0 tangents: symbolic zeros. JAX defines no
    # derivative for a floating operand, and neither does minijax.
    out = random_clone_p.bind(*primals)
    if type(tangents[0]) is not ad.Zero and dtypes.issubdtype(get_aval(primals[0]).dtype, np.inexact):
        raise NotImplementedError("Differentiation rule for 'random_clone' not implemented")
    return out, ad.Zero.from_primal(out)


ad.primitive_jvps[random_clone_p] = _random_clone_jvp
ad.non_differentiable.add(random_clone_p)


def _random_gamma_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, log_space: bool) -> tuple[Any, Any]:
    # JAX's implicit reparameterization gradient: the tangent in a times d(sample)/da at the
    # sample's quantile (random_gamma_grad); in log space d(log x) = dx / x, with a sample
    # that rounded to 0 taken as the smallest normal float.
    _, a = primals
    out = random_gamma_p.bind(*primals, log_space=log_space)
    if type(tangents[1]) is ad.Zero:
        return out, ad.Zero.from_primal(out)
    if log_space:
        samples = ew.exp_p.bind(out, accuracy=None)
        tiny = ew.full_like(samples, float(dtypes.finfo(get_aval(samples).dtype).tiny))
        samples = ew.select(ew.eq_p.bind(samples, ew.full_like(samples, 0)), tiny, samples)
        grad = ew.div_p.bind(random_gamma_grad(a, samples), samples)
    else:
        grad = random_gamma_grad(a, out)
    return out, ew.mul_p.bind(tangents[1], grad)


ad.primitive_jvps[random_gamma_p] = _random_gamma_jvp

# Keys of shape S give results of shape S + (...): a batch axis among the key
# axes stays where it is.
for _prim in (random_seed_p, random_bits_p, random_split_p, random_unwrap_p, random_clone_p):
    batching.defvectorized(_prim)

_threefry_broadcasting = ew.broadcasting_batcher(threefry2x32_p)


def _threefry2x32_batcher(vals: Sequence[Any], dims: Sequence[BatchDim]) -> tuple[Any, list[BatchDim]]:
    outs, dim = _threefry_broadcasting(vals, dims)
    return outs, [dim, dim]  # both results are batched alike


batching.primitive_batchers[threefry2x32_p] = _threefry2x32_batcher
batching.primitive_batchers[random_fold_in_p] = ew.broadcasting_batcher(random_fold_in_p)


def _random_wrap_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, impl: PRNGImpl) -> tuple[Any, BatchDim]:
    (data,), (bdim,) = vals, dims
    size = batching.batch_size(vals, dims)
    return random_wrap_p.bind(batching.bdim_at_front(data, bdim, size), impl=impl), 0


batching.primitive_batchers[random_wrap_p] = _random_wrap_batcher


def _random_gamma_batcher(vals: Sequence[Any], dims: Sequence[BatchDim], *, log_space: bool) -> tuple[Any, BatchDim]:
    size = batching.batch_size(vals, dims)
    key, a = (batching.bdim_at_front(x, d, size) for x, d in zip(vals, dims))
    return random_gamma_p.bind(key, a, log_space=log_space), 0


batching.primitive_batchers[random_gamma_p] = _random_gamma_batcher
