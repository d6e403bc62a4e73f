"""Every primitive, one module per family, each with all of its rules."""

from minijax.primitives import (
    autodiff as autodiff,
    collectives as collectives,
    elementwise as elementwise,
    reductions as reductions,
    structural as structural,
)

__all__ = ["autodiff", "collectives", "elementwise", "reductions", "structural"]
