"""``jax.scipy``: so far ``special``'s most used functions, ``signal``'s convolutions and ``stats.norm``."""

# issue 21, jnpmath: jax.scipy.integrate.trapezoid
from minijax.scipy import (
    integrate as integrate,  # noqa: E402
    signal as signal,
    special as special,
    stats as stats,
)

__all__ = ["signal", "special", "stats"]
__all__ += ["integrate"]  # issue 21, jnpmath
