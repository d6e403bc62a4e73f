"""Every primitive, one module per family, each with all of its rules."""

from minijax.primitives import elementwise as elementwise, reductions as reductions, structural as structural

__all__ = ["elementwise", "reductions", "structural"]
