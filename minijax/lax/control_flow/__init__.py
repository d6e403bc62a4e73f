"""Structured control flow: primitives that carry jaxprs, and the functions that build them.

One module per construct; this package re-exports their public names
(``from minijax.lax.control_flow import *`` is how ``minijax.lax`` gets them).
"""

from minijax.lax.control_flow.cond import cond as cond, switch as switch
from minijax.lax.control_flow.scan import map as map, scan as scan
from minijax.lax.control_flow.solves import (  # linsolve
    custom_linear_solve as custom_linear_solve,
    custom_root as custom_root,
)
from minijax.lax.control_flow.while_loop import fori_loop as fori_loop, while_loop as while_loop

# The primitives under JAX's lax names (``lax.cond_p``, ``lax.linear_solve_p``, ...).
from minijax.primitives.cond import cond_p as cond_p
from minijax.primitives.scan import scan_p as scan_p
from minijax.primitives.solves import linear_solve_p as linear_solve_p
from minijax.primitives.while_loop import while_p as while_p

__all__ = [
    "cond", "cond_p", "custom_linear_solve", "custom_root", "fori_loop", "linear_solve_p", "map", "scan", "scan_p",
    "switch", "while_loop", "while_p",
]
