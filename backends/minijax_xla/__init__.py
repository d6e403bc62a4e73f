"""The XLA backend: jaxprs lowered to StableHLO, compiled and run by PJRT (CPU).

Importing this package is cheap; jaxlib (about 0.2-1 s and 100 MiB to load)
is imported only when the backend is created, i.e. when minijax first asks
for the ``xla`` backend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from minijax_xla.backend import XlaBackend


def make_backend() -> XlaBackend:
    """Entry point of the ``minijax.backends`` group."""
    try:
        import jaxlib  # noqa: F401
    except ImportError as e:
        raise RuntimeError(
            "the xla backend needs jaxlib: pip install 'jaxlib>=0.10.2,<0.13' "
            "(without jax in the same environment)"
        ) from e
    # Imported here, not at the top: backend.py loads jaxlib (see above).
    from minijax_xla.backend import XlaBackend

    return XlaBackend()


__all__ = ["make_backend"]
