"""Every primitive, one module per family, each with all of its rules.

``FAMILIES`` names the family modules. A backend implements a family in a
module of the same name (``backends/minijax_numpy/slicing.py``,
``backends/minijax_xla/slicing.py``), and ``spec/primitives/<family>.md``
specifies it.
"""

from minijax.primitives import (
    autodiff as autodiff,
    callbacks as callbacks,
    calls as calls,
    checkify as checkify,  # checkify (issue 20): the check primitive
    collectives as collectives,
    complex as complex,  # complex: complex, real, imag, conj
    cond as cond,
    convolution as convolution,
    elementwise as elementwise,
    fft as fft,  # fft (issue 19): the fft primitive
    indexing as indexing,
    linalg as linalg,
    random as random,
    reductions as reductions,
    scan as scan,
    slicing as slicing,
    solves as solves,  # linsolve: custom_linear_solve
    sorting as sorting,
    special as special,
    structural as structural,
    while_loop as while_loop,
    windowed as windowed,
)

FAMILIES = (
    "structural", "elementwise", "indexing", "slicing", "reductions", "convolution", "sorting", "linalg", "random",
    "collectives", "callbacks", "autodiff", "calls", "cond", "scan", "while_loop", "windowed",
    "special",
    "complex",  # complex: complex, real, imag, conj
    "solves",  # linsolve: custom_linear_solve
    "checkify",  # checkify (issue 20): the check primitive
    "fft",  # fft (issue 19): the fft primitive
)  # fmt: skip

__all__ = ["FAMILIES", *FAMILIES]
