"""``jax.interpreters.ad``: what libraries use to give their own primitives derivatives.

The rule tables are minijax's: a jvp rule put in ``primitive_jvps`` (or by
``defjvp``) is the one minijax's autodiff applies, and a rule in
``primitive_transposes`` the one its transposition applies.
"""

from __future__ import annotations

from typing import Any

from minijax.compat._served.standin import stand_in_function
from minijax.interpreters.ad import (
    JVPTrace as JVPTrace,
    JVPTracer as JVPTracer,
    UndefinedPrimal as UndefinedPrimal,
    Zero as Zero,
    add_tangents as add_tangents,
    defjvp as defjvp,
    defjvp2 as defjvp2,
    deflinear as deflinear,
    instantiate_zeros as instantiate_zeros,
    is_undefined_primal as is_undefined_primal,
    primitive_jvps as primitive_jvps,
    transpose_rules as primitive_transposes,
    zeros_like_aval as zeros_like_aval,
)

add_jaxvals = add_tangents


def get_primitive_transpose(prim: Any) -> Any:
    """The transpose rule registered for ``prim``."""
    try:
        return primitive_transposes[prim]
    except KeyError as error:
        raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for '{prim}' not implemented") from error


defbilinear = stand_in_function("jax.interpreters.ad.defbilinear", "define the jvp with defjvp and the transposes directly")
deflinear2 = stand_in_function("jax.interpreters.ad.deflinear2", "use jax.interpreters.ad.deflinear")
