"""``jax.image``: resizing and resampling images (``resize``, ``scale_and_translate``, ``ResizeMethod``)."""

from minijax.image.scale import (
    ResizeMethod as ResizeMethod,
    resize as resize,
    scale_and_translate as scale_and_translate,
)

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
