"""Padding by name: how ``'SAME'``, ``'SAME_LOWER'`` and ``'VALID'`` become explicit pads.

Convolutions and windowed reductions both take a padding either as explicit
``(low, high)`` pairs per spatial dimension or as one of these names; this is
the one place that turns a name into pairs (``lax.padtype_to_pads``).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

__all__ = ["padtype_to_pads"]


class PaddingType(enum.Enum):
    VALID = 1
    SAME = 2
    SAME_LOWER = 3


def padtype_to_pads(
    in_shape: Sequence[int], window_shape: Sequence[int], window_strides: Sequence[int], padding: str | PaddingType
) -> list[tuple[int, int]]:
    """The ``(low, high)`` pads that padding mode ``padding`` gives each spatial dimension.

    ``'VALID'`` pads nothing. ``'SAME'`` pads just enough that a window placed at
    every ``stride``-th position covers the input, so each output dimension is
    ``ceil(in / stride)``; an odd total puts the extra element at the high end,
    and ``'SAME_LOWER'`` puts it at the low end.
    """
    if isinstance(padding, str):
        try:
            padding = PaddingType[padding.upper()]
        except KeyError:
            raise RuntimeError(
                f"Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got {padding}."
            ) from None
    if padding is PaddingType.VALID:
        return [(0, 0)] * len(in_shape)
    if padding not in (PaddingType.SAME, PaddingType.SAME_LOWER):
        raise TypeError(f"Unknown padding type: {padding}.")
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides, strict=True):
        out = -(-int(size) // int(stride))
        total = max((out - 1) * int(stride) + int(window) - int(size), 0)
        small, large = total // 2, total - total // 2
        pads.append((small, large) if padding is PaddingType.SAME else (large, small))
    return pads
