"""``jax.scipy``: so far ``special``'s most used functions, ``signal``'s convolutions and ``stats.norm``."""

from minijax.scipy import signal as signal, special as special, stats as stats

# scilinalg: jax.scipy.linalg and jax.scipy.sparse
from minijax.scipy import linalg as linalg, sparse as sparse

__all__ = ["signal", "special", "stats"]
__all__ += ["linalg", "sparse"]  # scilinalg
