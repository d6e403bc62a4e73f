"""Every primitive, one module per family, each with all of its rules."""

from minijax.primitives import elementwise as elementwise
from minijax.primitives import reductions as reductions
from minijax.primitives import structural as structural

__all__ = ["elementwise", "reductions", "structural"]
