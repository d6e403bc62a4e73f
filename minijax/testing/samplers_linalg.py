"""Samplers for the linalg primitives (see ``minijax.testing.samplers``)."""

from __future__ import annotations

from minijax.testing.cases import Sampler

SAMPLERS: dict[str, Sampler] = {}
