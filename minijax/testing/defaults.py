"""The conformance suite's sections and default sizes (no hypothesis needed to read them).

The defaults are chosen so that ``minijax conformance --backend xla`` runs
well within ten minutes on two cores (about 3.5 minutes of CPU time);
``docs/conformance.md`` quotes the measurement.
"""

from __future__ import annotations

SECTIONS = ("primitives", "laws", "corpus", "programs")
DEFAULT_EXAMPLES = 4  # hypothesis examples per primitive and dtype
DEFAULT_PROGRAM_EXAMPLES = 20  # random programs per kind
DEFAULT_SEED = 0  # runs repeat unless another seed is asked
# The transformations a nested check composes (minijax.testing.programs); here so that the
# reproducer loader can validate a nesting without importing the programs it checks.
TRANSFORMS = ("jit", "vmap", "jvp", "grad", "cond")
DEFAULT_MAX_BYTES = 2**30  # the most a reproducer or case may ask to allocate (--max-bytes)

__all__ = ["DEFAULT_EXAMPLES", "DEFAULT_MAX_BYTES", "DEFAULT_PROGRAM_EXAMPLES", "DEFAULT_SEED", "SECTIONS", "TRANSFORMS"]
