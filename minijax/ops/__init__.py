"""``minijax.ops``: segment reductions, as ``jax.ops`` provides them.

Each ``segment_*`` fills an output of ``num_segments`` rows with the
reduction's identity and scatters ``data`` into it along the leading axis
(one ``scatter-add``/``scatter-mul``/``scatter-max``/``scatter-min``), so
the functions differentiate, batch and compile as those scatters do.
"""

from minijax.ops.scatter import (
    segment_max as segment_max,
    segment_min as segment_min,
    segment_prod as segment_prod,
    segment_sum as segment_sum,
)

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
