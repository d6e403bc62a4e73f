"""Every primitive, one module per family, each with all of its rules."""

from minijax.primitives import (
    autodiff as autodiff,
    callbacks as callbacks,
    collectives as collectives,
    elementwise as elementwise,
    reductions as reductions,
    structural as structural,
)

__all__ = ["autodiff", "callbacks", "collectives", "elementwise", "reductions", "structural"]
