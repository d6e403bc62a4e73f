"""``jax.example_libraries.stax``: neural networks as pairs of functions.

A *layer* is a pair ``(init_fun, apply_fun)``:

* ``init_fun(rng, input_shape) -> (output_shape, params)`` draws the layer's
  parameters from the PRNG key ``rng`` for inputs of shape ``input_shape``;
* ``apply_fun(params, inputs, **kwargs) -> outputs`` runs it (``rng=key`` in
  the keyword arguments feeds layers that need randomness, like ``Dropout``).

Constructors are CamelCase (``Dense(10)``, ``Conv(32, (3, 3))``); a layer that
takes no options is the pair itself (``Relu``, ``Flatten``). ``serial`` and
``parallel`` combine layers into layers. Keys are split in the same order as
JAX's stax, so the same key gives bit-for-bit the same parameters.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

from minijax import lax, numpy as jnp, random
from minijax.nn import elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax, softplus, standardize
from minijax.nn.initializers import glorot_normal, normal, ones, zeros

InitFun = Callable[..., tuple[Any, Any]]
ApplyFun = Callable[..., Any]
Layer = tuple[InitFun, ApplyFun]

# the older names JAX's stax still exports
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax

# JAX's defaults, built once (the builders return stateless functions)
_GLOROT_NORMAL = glorot_normal()
_NORMAL = normal()
_BIAS_NORMAL = normal(1e-6)


def Dense(out_dim: int, W_init: Callable[..., Any] = _GLOROT_NORMAL, b_init: Callable[..., Any] = _NORMAL) -> Layer:
    """A fully connected layer: ``inputs @ W + b`` over the last axis."""

    def init_fun(rng: Any, input_shape: Sequence[int]) -> tuple[Any, Any]:
        k_w, k_b = random.split(rng)
        params = W_init(k_w, (input_shape[-1], out_dim)), b_init(k_b, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(rhs_spec: str, input_shape: Sequence[int], lhs_spec: str, out_chan: int,
                  filter_shape: Sequence[int]) -> list[int]:
    # The kernel's layout letters in order: 'O' is out_chan, 'I' the input's
    # channel count, and the spatial letters take filter_shape in turn.
    spatial = iter(filter_shape)
    in_chan = input_shape[lhs_spec.index("C")]
    return [out_chan if c == "O" else in_chan if c == "I" else next(spatial) for c in rhs_spec]


def _conv_layer(transpose: bool, dimension_numbers: Any, out_chan: int, filter_shape: Sequence[int],
                strides: Sequence[int] | None, padding: Any, W_init: Callable[..., Any] | None,
                b_init: Callable[..., Any]) -> Layer:
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    # default: Glorot fans from the kernel's own in/out axes, the window in both
    kernel_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: Sequence[int]) -> tuple[Any, Any]:
        kernel_shape = _kernel_shape(rhs_spec, input_shape, lhs_spec, out_chan, filter_shape)
        shape_rule = lax.conv_transpose_shape_tuple if transpose else lax.conv_general_shape_tuple
        output_shape = shape_rule(input_shape, kernel_shape, strides, padding, dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k_w, k_b = random.split(rng)
        return output_shape, (kernel_init(k_w, kernel_shape), b_init(k_b, bias_shape))

    if transpose:

        def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
            W, b = params
            return lax.conv_transpose(inputs, W, strides, padding, dimension_numbers=dimension_numbers) + b
    else:

        def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
            W, b = params
            out = lax.conv_general_dilated(inputs, W, strides, padding, one, one, dimension_numbers=dimension_numbers)
            return out + b

    return init_fun, apply_fun


def GeneralConv(dimension_numbers: Sequence[str], out_chan: int, filter_shape: Sequence[int],
                strides: Sequence[int] | None = None, padding: Any = "VALID", W_init: Callable[..., Any] | None = None,
                b_init: Callable[..., Any] = _BIAS_NORMAL) -> Layer:
    """A convolution layer whose layouts are ``dimension_numbers = (lhs_spec, rhs_spec, out_spec)``.

    ``filter_shape`` gives the window's spatial sizes in ``rhs_spec``'s order;
    the kernel's input channels come from the input shape at ``init_fun`` time.
    """
    return _conv_layer(False, dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init)


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers: Sequence[str], out_chan: int, filter_shape: Sequence[int],
                         strides: Sequence[int] | None = None, padding: Any = "VALID",
                         W_init: Callable[..., Any] | None = None, b_init: Callable[..., Any] = _BIAS_NORMAL) -> Layer:
    """A transposed-convolution layer (``lax.conv_transpose``), layouts as in :func:`GeneralConv`."""
    return _conv_layer(True, dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init)


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis: int | Sequence[int] = (0, 1, 2), epsilon: float = 1e-5, center: bool = True, scale: bool = True,
              beta_init: Callable[..., Any] = zeros, gamma_init: Callable[..., Any] = ones) -> Layer:
    """Normalize over ``axis`` with the batch's own statistics, then scale by ``gamma`` and shift by ``beta``.

    The parameters have the input's shape without ``axis``; ``center=False``
    (``scale=False``) leaves out ``beta`` (``gamma``), whose slot is ``()``.
    There are no running averages: training and inference normalize alike.
    """
    axes: Sequence[int] = (axis,) if jnp.isscalar(axis) else axis  # type: ignore[assignment]

    def init_fun(rng: Any, input_shape: Sequence[int]) -> tuple[Any, Any]:
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axes)
        k_beta, k_gamma = random.split(rng)
        beta = beta_init(k_beta, shape) if center else ()
        gamma = gamma_init(k_gamma, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params: Any, x: Any, **kwargs: Any) -> Any:
        beta, gamma = params
        # index that puts the reduced axes back as size-1 axes of beta and gamma
        expand = tuple(None if i in axes else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axes, epsilon=epsilon)
        if center and scale:
            return gamma[expand] * z + beta[expand]
        if center:
            return z + beta[expand]
        if scale:
            return gamma[expand] * z
        return z

    return init_fun, apply_fun


def elementwise(fun: Callable[..., Any], **fun_kwargs: Any) -> Layer:
    """A layer without parameters that applies ``fun(inputs, **fun_kwargs)``."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _with_unit_axes(values: tuple[int, ...], axes: Sequence[int]) -> tuple[int, ...]:
    # insert a 1 at each of `axes` (ascending), the batch and channel axes of a pooling window
    out = values
    for i in sorted(axes):
        out = out[:i] + (1,) + out[i:]
    return out


def _pooling_layer(reducer: Callable[..., Any], init_val: Any,
                   rescaler: Callable[..., Callable[..., Any]] | None = None) -> Callable[..., Layer]:
    def PoolingLayer(window_shape: tuple[int, ...], strides: tuple[int, ...] | None = None, padding: Any = "VALID",
                     spec: str | None = None) -> Layer:
        """A pooling layer: a window of ``window_shape`` (spatial axes only) slid by ``strides``.

        ``spec`` names the input's layout (``'NHWC'`` by default: batch first,
        channels last); the window spans one batch entry and one channel.
        """
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        non_spatial = (0, len(window_shape) + 1) if spec is None else (spec.index("N"), spec.index("C"))
        full_window = _with_unit_axes(tuple(window_shape), non_spatial)
        full_strides = _with_unit_axes(tuple(strides), non_spatial)

        def init_fun(rng: Any, input_shape: Sequence[int]) -> tuple[Any, Any]:
            pads = lax.padtype_to_pads(input_shape, full_window, full_strides, padding)
            ones_ = (1,) * len(full_window)
            out_shape = lax.reduce_window_shape_tuple(input_shape, full_window, full_strides, pads, ones_, ones_)
            return out_shape, ()

        def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
            out = lax.reduce_window(inputs, init_val, reducer, full_window, full_strides, padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.0)


def _normalize_by_window_size(dims: tuple[int, ...], strides: tuple[int, ...],
                              padding: Any) -> Callable[..., Any]:
    # Average pooling is sum pooling divided by how many input elements (not
    # padding) each window covered: count them by sum-pooling ones.
    def rescale(outputs: Any, inputs: Any, spec: str | None) -> Any:
        non_spatial = (0, inputs.ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))
        spatial_shape = tuple(n for i, n in enumerate(inputs.shape) if i not in non_spatial)
        counts = lax.reduce_window(jnp.ones(spatial_shape, dtype=inputs.dtype), 0.0, lax.add, dims, strides, padding)
        for i in sorted(non_spatial):
            counts = jnp.expand_dims(counts, i)
        return outputs / counts

    return rescale


AvgPool = _pooling_layer(lax.add, 0.0, _normalize_by_window_size)


def _flatten_layer() -> Layer:
    def init_fun(rng: Any, input_shape: Sequence[int]) -> tuple[Any, Any]:
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = _flatten_layer()
"""Flatten every axis but the leading (batch) one."""


def _identity_layer() -> Layer:
    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return inputs

    return init_fun, apply_fun


Identity = _identity_layer()


def FanOut(num: int) -> Layer:
    """Give the input to ``num`` branches: a list of ``num`` references to it (for :func:`parallel`)."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return [input_shape] * num, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum_layer() -> Layer:
    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return input_shape[0], ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return sum(inputs)

    return init_fun, apply_fun


FanInSum = _fan_in_sum_layer()


def FanInConcat(axis: int = -1) -> Layer:
    """Join a list of branches by concatenating them along ``axis``."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        first = tuple(input_shape[0])
        ax = axis % len(first)
        joined = sum(shape[ax] for shape in input_shape)
        return first[:ax] + (joined,) + first[ax + 1:], ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> Layer:
    """Dropout. Note JAX's convention: ``rate`` is the probability of KEEPING an element.

    In ``mode='train'`` each element is kept with probability ``rate`` and
    divided by ``rate``, the others are zeroed; any other mode returns the
    input. ``apply_fun`` needs ``rng=key`` in either mode.
    """

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key argument. That is, "
                             "instead of `apply_fun(params, inputs)`, call it like `apply_fun(params, inputs, rng)` "
                             "where `rng` is a PRNG key (e.g. from `jax.random.key`).")
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)

    return init_fun, apply_fun


# ---------------------------------------------------------------------------
# Combinators


def serial(*layers: Layer) -> Layer:
    """The layers one after another: each one's output is the next one's input.

    ``init_fun`` splits its key once per layer, in order; ``params`` is the
    list of the layers' params. An ``rng`` given to ``apply_fun`` is split
    into one key per layer.
    """
    count = len(layers)
    init_funs, apply_funs = zip(*layers, strict=True) if layers else ((), ())

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        params = []
        shape = input_shape
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            shape, p = init(layer_rng, shape)
            params.append(p)
        return shape, params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, count) if rng is not None else (None,) * count
        for fun, p, r in zip(apply_funs, params, rngs):
            inputs = fun(p, inputs, rng=r, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """The layers side by side: input ``k`` goes to layer ``k``; the output is the list of their outputs.

    Usually sandwiched as ``serial(FanOut(n), parallel(...), FanInSum)``.
    ``init_fun`` returns the output shapes and the params as tuples.
    """
    count = len(layers)
    init_funs, apply_funs = zip(*layers, strict=True) if layers else ((), ())

    def init_fun(rng: Any, input_shape: Any) -> Any:
        rngs = random.split(rng, count)
        return zip(*[init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)])

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, count) if rng is not None else (None,) * count
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]

    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[Any], Layer]) -> Layer:
    """A layer built by ``make_layer(input_shape)`` once the input's shape is known (at init and at apply)."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
