"""Every primitive, one module per family, each with all of its rules."""

from minijax.primitives import (
    autodiff as autodiff,
    callbacks as callbacks,
    collectives as collectives,
    elementwise as elementwise,
    indexing as indexing,
    linalg as linalg,
    random as random,
    reductions as reductions,
    sorting as sorting,
    structural as structural,
)

__all__ = ["autodiff", "callbacks", "collectives", "elementwise", "indexing", "linalg", "random", "reductions", "sorting", "structural"]
