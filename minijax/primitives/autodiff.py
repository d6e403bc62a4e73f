"""The primitives autodiff introduces: ``add_any`` (sum of tangents) and ``stop_gradient``.

Their transformation rules are here too; the jvp/transpose machinery is in
``minijax/interpreters/ad.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from minijax.core import ShapedArray
from minijax.interpreters import ad
from minijax.primitives.common import standard_primitive

# add_any (the sum of two tangents) is defined, with its jvp and transpose,
# by the autodiff machinery itself (minijax/interpreters/ad.py); its
# batching rule is below.
add_any_p = ad.add_any_p


def _stop_gradient_rule(x: ShapedArray) -> ShapedArray:
    return x


# The identity whose derivative is zero.
stop_gradient_p = standard_primitive("stop_gradient", _stop_gradient_rule)
ad.defjvp_zero(stop_gradient_p)


# ---------------------------------------------------------------------------
# Batching rules

from minijax.core import get_aval  # noqa: E402
from minijax.interpreters import batching  # noqa: E402


def _add_any_batcher(vals: Sequence[Any], dims: Sequence[batching.BatchDim]) -> tuple[Any, batching.BatchDim]:
    # Both operands have one type, so an unbatched one only needs the batch axis
    # (inserted where the other operand has it: no transpose).
    from minijax.primitives.elementwise import broadcast_batched

    (x, y), (dx, dy) = vals, dims
    if dx == dy:
        return add_any_p.bind(x, y), dx
    if dx is None:
        assert dy is not None
        return add_any_p.bind(broadcast_batched(x, get_aval(y).shape[dy], dy), y), dy
    if dy is None:
        return add_any_p.bind(x, broadcast_batched(y, get_aval(x).shape[dx], dx)), dx
    return add_any_p.bind(batching.moveaxis(x, dx, dy), y), dy


batching.primitive_batchers[add_any_p] = _add_any_batcher
batching.defvectorized(stop_gradient_p)
