"""``jax.scipy``: so far ``special``'s most used functions, ``signal``'s convolutions and ``stats.norm``."""

from minijax.scipy import signal as signal, special as special, stats as stats

# issue 21, jnpmath: jax.scipy.integrate.trapezoid
from minijax.scipy import integrate as integrate  # noqa: E402

__all__ = ["signal", "special", "stats"]
__all__ += ["integrate"]  # issue 21, jnpmath
