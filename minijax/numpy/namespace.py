"""The core ``jnp`` functions as one namespace, for the library modules inside
``minijax.numpy`` that are written in terms of ``jnp`` (numerical, padding,
polynomial): importing the package itself from them would be an import cycle."""

from __future__ import annotations

from types import SimpleNamespace

from minijax.numpy import (
    creation,
    indexing,
    linalg,
    matrix_ops,
    reductions,
    shape_ops,
    sorting,
    tensor_contractions,
    ufuncs,
    ufuncs_math,
)

_MODULES = (creation, indexing, matrix_ops, reductions, shape_ops, sorting, tensor_contractions, ufuncs, ufuncs_math)

jnp = SimpleNamespace(**{name: getattr(m, name) for m in _MODULES for name in m.__all__}, linalg=linalg)
