"""``jax.scipy.sparse``: the iterative solvers of ``linalg`` (cg, gmres, bicgstab)."""

from minijax.scipy.sparse import linalg as linalg

__all__ = ["linalg"]
