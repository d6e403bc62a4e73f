"""``jax.scipy``: ``special``, ``stats``, ``linalg``, ``sparse.linalg``, ``signal``,
``optimize``, ``integrate``, ``interpolate``, ``ndimage``, ``spatial.transform``, ``cluster``."""

from minijax.scipy import (
    cluster as cluster,
    integrate as integrate,
    interpolate as interpolate,
    linalg as linalg,
    ndimage as ndimage,
    optimize as optimize,
    signal as signal,
    sparse as sparse,
    spatial as spatial,
    special as special,
    stats as stats,
)

__all__ = [
    "cluster",
    "integrate",
    "interpolate",
    "linalg",
    "ndimage",
    "optimize",
    "signal",
    "sparse",
    "spatial",
    "special",
    "stats",
]
