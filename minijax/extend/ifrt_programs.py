"""``jax.extend.ifrt_programs``: every name exists and raises NotImplementedError: minijax runs programs through PJRT, not IFRT programs."""

from __future__ import annotations

from minijax.extend._unsupported import unsupported

_WHY = "minijax runs programs through PJRT, not IFRT programs"

ifrt_programs = unsupported("extend.ifrt_programs", "ifrt_programs", _WHY)

__all__ = ["ifrt_programs"]
