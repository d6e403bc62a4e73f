"""``jax.interpreters.batching``: what libraries use to give their own primitives batching rules.

``primitive_batchers`` is minijax's table: a rule ``(args, dims, **params) ->
(out, out_dims)`` put there is the one ``vmap`` applies.
"""

from __future__ import annotations

from minijax.compat._served.standin import stand_in_function
from minijax.interpreters.batching import (
    bdim_at_front as bdim_at_front,
    broadcast as broadcast,
    defreducer as defreducer,
    defvectorized as defvectorized,
    not_mapped as not_mapped,
    primitive_batchers as primitive_batchers,
)

_WHY = "minijax's vmap has one kind of batching rule: put it in primitive_batchers"
axis_primitive_batchers: dict[object, object] = {}
fancy_primitive_batchers: dict[object, object] = {}
defbroadcasting = stand_in_function("jax.interpreters.batching.defbroadcasting", _WHY)
register_vmappable = stand_in_function("jax.interpreters.batching.register_vmappable", "minijax has no vmappable types")
unregister_vmappable = stand_in_function("jax.interpreters.batching.unregister_vmappable", "minijax has no vmappable types")
