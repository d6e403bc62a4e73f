"""Every primitive, one module per family, each with all of its rules."""

from minijax.primitives import elementwise as elementwise  # noqa: F401
