"""``jax.scipy``: so far ``special``'s most used functions, ``signal``'s convolutions and ``stats.norm``;
and (issue 21) ``optimize``, ``integrate``, ``interpolate``, ``ndimage``, ``spatial.transform``, ``cluster``."""

# issue 21 (sciother): optimize, integrate, interpolate, ndimage, spatial, cluster
from minijax.scipy import (  # noqa: E402
    cluster as cluster,
    integrate as integrate,
    interpolate as interpolate,
    ndimage as ndimage,
    signal as signal,
    special as special,
    stats as stats,
)

__all__ = [
    "signal",
    "special",
    "stats",
    # issue 21 (sciother)
    "cluster",
    "integrate",
    "interpolate",
    "ndimage",
    "optimize",
    "spatial",
]
