"""Shared test configuration: hypothesis profiles and the oracle marker.

Profiles: ``default`` (40 examples per property, random), ``ci`` (the same,
derandomized so that a CI run is reproducible; chosen when ``CI`` is set), and
``thorough`` (1000 examples) for hunting bugs. ``HYPOTHESIS_PROFILE`` picks one.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}

settings.register_profile("default", max_examples=40, **_COMMON)
settings.register_profile("ci", max_examples=40, derandomize=True, **_COMMON)
settings.register_profile("thorough", max_examples=1000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default"))
