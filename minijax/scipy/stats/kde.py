"""``jax.scipy.stats.gaussian_kde``: a kernel density estimate with Gaussian kernels.

The estimator is a pytree (its arrays are the leaves), so it can cross
``jit``/``vmap`` boundaries, and its methods trace like any function.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

import minijax.numpy as jnp
from minijax import random
from minijax.array import Array
from minijax.nn.functions import logsumexp
from minijax.numpy.util import check_arraylike, promote_dtypes_inexact
from minijax.scipy import linalg, special
from minijax.stages import jit
from minijax.tree_util import register_pytree_node_class
from minijax.vectorization import vmap

__all__ = ["gaussian_kde"]

BwMethod = None | str | Array | Callable[[Any], Array]

_FIELDS = ("neff", "dataset", "weights", "covariance", "inv_cov")


@register_pytree_node_class
class gaussian_kde:  # noqa: N801 (JAX's and scipy's name)
    """A Gaussian kernel density estimate of ``dataset`` (``(d, n)``: ``n`` points in ``d`` dimensions).

    ``bw_method``: ``'scott'`` (default), ``'silverman'``, a scalar factor, or a
    callable taking the estimator and returning the factor. ``weights``: one
    per point, normalized to sum to 1.
    """

    __slots__ = _FIELDS
    neff: Array
    dataset: Array
    weights: Array
    covariance: Array
    inv_cov: Array

    def __init__(self, dataset: Any, bw_method: BwMethod = None, weights: Any = None) -> None:
        check_arraylike("gaussian_kde", dataset)
        dataset = jnp.atleast_2d(dataset)
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            check_arraylike("gaussian_kde", weights)
            dataset, weights = promote_dtypes_inexact(dataset, weights)
            weights = jnp.atleast_1d(weights)
            weights = weights / jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        else:
            (dataset,) = promote_dtypes_inexact(dataset)
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        self._set("dataset", dataset)
        self._set("weights", weights)
        neff = self._set("neff", 1 / jnp.sum(weights**2))
        bw_method = "scott" if bw_method is None else bw_method
        if isinstance(bw_method, str) and bw_method == "scott":
            factor = jnp.power(neff, -1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif jnp.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")
        data_covariance = jnp.atleast_2d(jnp.cov(dataset, rowvar=True, bias=False, aweights=weights))
        data_inv_cov = jnp.linalg.inv(data_covariance)
        self._set("covariance", data_covariance * factor**2)
        self._set("inv_cov", data_inv_cov / factor**2)

    def _set(self, name: str, value: Array) -> Array:
        object.__setattr__(self, name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: gaussian_kde is frozen")

    def __repr__(self) -> str:
        return "gaussian_kde(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in _FIELDS) + ")"

    def tree_flatten(self) -> tuple[tuple[Any, ...], None]:
        return tuple(getattr(self, f) for f in _FIELDS), None

    @classmethod
    def tree_unflatten(cls, aux_data: None, children: Any) -> gaussian_kde:
        kde = cls.__new__(cls)
        for name, value in zip(_FIELDS, children):
            kde._set(name, value)
        return kde

    @property
    def d(self) -> int:
        return int(self.dataset.shape[0])

    @property
    def n(self) -> int:
        return int(self.dataset.shape[1])

    def evaluate(self, points: Any) -> Array:
        """The estimated density at ``points`` (``(d, m)``, or ``(m,)`` for ``d = 1``)."""
        return self._kernel_sums("evaluate", points, in_log=False)

    def __call__(self, points: Any) -> Array:
        return self.evaluate(points)

    def pdf(self, x: Any) -> Array:
        return self.evaluate(x)

    def logpdf(self, x: Any) -> Array:
        """The log density, summed in log space (no underflow far from the data)."""
        return self._kernel_sums("logpdf", x, in_log=True)

    def _kernel_sums(self, name: str, points: Any, in_log: bool) -> Array:
        check_arraylike(name, points)
        points = self._reshape_points(points)
        result: Array = _gaussian_kernel_eval(in_log, self.dataset.T, self.weights[:, None], points.T, self.inv_cov)
        return result[:, 0]

    def integrate_gaussian(self, mean: Any, cov: Any) -> Array:
        """The integral of the estimate times the normal density ``N(mean, cov)``."""
        mean = jnp.atleast_1d(jnp.squeeze(mean))
        cov = jnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = linalg.cho_factor(self.covariance + cov)
        norm = 1.0 / (jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
        return _gaussian_kernel_convolve(chol, norm, self.dataset, self.weights, mean)

    @jit
    def integrate_box_1d(self, low: Any, high: Any) -> Array:
        """The estimate's mass on ``[low, high]`` (one-dimensional data only)."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = jnp.squeeze(jnp.sqrt(self.covariance))
        low = jnp.squeeze((low - self.dataset) / sigma)
        high = jnp.squeeze((high - self.dataset) / sigma)
        return jnp.sum(self.weights * (special.ndtr(high) - special.ndtr(low)))

    def integrate_kde(self, other: gaussian_kde) -> Array:
        """The integral of the product of two estimates."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = linalg.cho_factor(self.covariance + other.covariance)
        norm = 1.0 / (jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
        small, large = (self, other) if self.n < other.n else (other, self)
        convolve = partial(_gaussian_kernel_convolve, chol, norm, large.dataset, large.weights)
        result = vmap(convolve, in_axes=1)(small.dataset)
        return jnp.sum(result * small.weights)

    @jit(static_argnames=("shape",))  # type: ignore[untyped-decorator]
    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Array:
        """``shape`` draws from the estimate: a data point (by weight) plus kernel noise; ``(d, *shape)``."""
        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps: Array = random.multivariate_normal(eps_key, jnp.zeros(self.d, self.covariance.dtype), self.covariance,
                                         shape=shape, dtype=self.dataset.dtype).T
        return self.dataset[:, ind] + eps

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> Array:
        del low_bounds, high_bounds, maxpts
        raise NotImplementedError("only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method: BwMethod = None) -> None:
        del bw_method
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")

    def _reshape_points(self, points: Any) -> Any:
        points = jnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                points = jnp.reshape(points, (self.d, 1))
            else:
                raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points


def _gaussian_kernel_convolve(chol: tuple[Array, bool], norm: Array, target: Array, weights: Array,
                              mean: Array) -> Array:
    diff = target - mean[:, None]
    alpha = linalg.cho_solve(chol, diff)
    arg = 0.5 * jnp.sum(diff * alpha, axis=0)
    return norm * jnp.sum(jnp.exp(-arg) * weights)


@partial(jit, static_argnums=0)
def _gaussian_kernel_eval(in_log: bool, points: Any, values: Any, xi: Any, precision: Any) -> Any:
    """Per row of ``xi``: the weighted sum (``in_log``: logsumexp) of the Gaussian kernels at ``points``."""
    points, values, xi, precision = promote_dtypes_inexact(points, values, xi, precision)
    d = points.shape[1]
    if xi.shape[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    if precision.shape != (d, d):
        raise ValueError("precision matrix must match data dims")
    # With precision = W W^T, the Mahalanobis distance is the Euclidean one between whitened points.
    whitening = linalg.cholesky(precision, lower=True)
    points = jnp.dot(points, whitening)
    xi = jnp.dot(xi, whitening)
    log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * d * jnp.log(2 * np.pi)

    def kernel(x_test: Any, x_train: Any, y_train: Any) -> Any:
        arg = log_norm - 0.5 * jnp.sum(jnp.square(x_train - x_test))
        return jnp.log(y_train) + arg if in_log else y_train * jnp.exp(arg)

    reduce = logsumexp if in_log else jnp.sum
    return vmap(lambda x: reduce(vmap(kernel, in_axes=(None, 0, 0))(x, points, values), axis=0))(xi)


