"""``jax.scipy``: so far ``special``'s most used functions, ``signal``'s convolutions and ``stats.norm``."""

from minijax.scipy import signal as signal, special as special, stats as stats

__all__ = ["signal", "special", "stats"]
