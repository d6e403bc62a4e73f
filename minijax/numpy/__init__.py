"""``minijax.numpy``: NumPy's API on minijax arrays, as ``jax.numpy`` provides it.

``import minijax.numpy as jnp``. Functions accept arrays, tracers, NumPy
values and Python scalars, promote dtypes with JAX's rules (weak types
included) and are built from ``minijax.lax`` operations, so they work the
same eagerly and under every transformation.

Modules: ``scalar_types`` (``jnp.float32``, ``jnp.ndarray``, dtype helpers),
``creation`` (array, zeros, arange, ...), ``ufuncs`` and ``ufuncs_math``
(elementwise functions), ``reductions`` (sum, mean, argmax, allclose, ...),
``shape_ops`` (reshape, concatenate, where, ...), ``tensor_contractions``
(dot, matmul, tensordot, ...), ``indexing``
(``x[idx]`` and ``x.at[idx]``). ``array_methods`` gives arrays and tracers
their operators and methods.
"""

import sys

from minijax.numpy import array_methods as _array_methods, indexing as indexing, linalg as linalg
from minijax.numpy.creation import *  # noqa: F403

# issue 21 (sciother): vectorize, piecewise, apply_along_axis, apply_over_axes
from minijax.numpy.functional import *  # noqa: F403
from minijax.numpy.indexing import *  # noqa: F403
from minijax.numpy.io_misc import *  # noqa: F403
from minijax.numpy.matrix_ops import *  # noqa: F403

# issue 21, jnpmath: numerical functions (pad, quantiles, polynomials, windows, ...)
from minijax.numpy.numerical import *  # noqa: F403, E402
from minijax.numpy.padding import *  # noqa: F403, E402
from minijax.numpy.polynomial import *  # noqa: F403, E402
from minijax.numpy.reductions import *  # noqa: F403
from minijax.numpy.scalar_aliases import *  # noqa: F403
from minijax.numpy.scalar_types import *  # noqa: F403
from minijax.numpy.shape_ops import *  # noqa: F403
from minijax.numpy.sorting import *  # noqa: F403
from minijax.numpy.structural_more import *  # noqa: F403
from minijax.numpy.tensor_contractions import *  # noqa: F403
from minijax.numpy.ufunc_class import *  # noqa: F403
from minijax.numpy.ufuncs import *  # noqa: F403
from minijax.numpy.ufuncs_math import *  # noqa: F403

_array_methods.attach(sys.modules[__name__])
del _array_methods

# fft (issue 19): jnp.fft
from minijax.numpy import fft as fft  # noqa: E402


def __getattr__(name: str) -> object:
    # NumPy names JAX removed get JAX's explanation rather than a bare AttributeError.
    removed = _REMOVED.get(name)
    if removed is not None:
        raise AttributeError(removed)
    raise AttributeError(f"module 'minijax.numpy' has no attribute {name!r}")


_REMOVED = {
    "fix": "jax.numpy.fix was deprecated in JAX v0.9.0, and will be removed in JAX v0.10.0. Use jax.numpy.trunc instead.",
}
