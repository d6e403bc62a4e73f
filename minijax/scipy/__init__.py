"""``jax.scipy``: so far ``special``'s most used functions, ``signal``'s convolutions and ``stats.norm``."""

# scilinalg: jax.scipy.linalg and jax.scipy.sparse
from minijax.scipy import linalg as linalg, signal as signal, sparse as sparse, special as special, stats as stats

__all__ = ["signal", "special", "stats"]
__all__ += ["linalg", "sparse"]  # scilinalg
