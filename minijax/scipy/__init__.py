"""``jax.scipy``: ``special``, ``stats``, ``linalg``, ``sparse.linalg``, ``signal``,
``optimize``, ``integrate``, ``interpolate``, ``ndimage``, ``spatial.transform``, ``cluster``."""

from minijax.scipy import (
    cluster as cluster,
    fft as fft,  # fft (issue 19): jax.scipy.fft
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
    "fft",  # fft (issue 19)
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
