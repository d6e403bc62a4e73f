"""A backend with one planted bug (neg adds one), registered on import: `--import` in the
workers of a `--jobs` run (tests/test_conformance.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
from minijax_numpy import NumpyBackend

from minijax.backend import register_backend
from minijax.core import Primitive


class PlantedNeg(NumpyBackend):
    name = "planted-neg"

    def prepare(self, prim: Primitive, params: Any, in_avals: Any, out_avals: Any, device: Any = None) -> Any:
        run = super().prepare(prim, params, in_avals, out_avals)
        if prim.name != "neg":
            return run
        return lambda inputs: [self.put(np.asarray(self.get(b)) + np.ones((), np.asarray(self.get(b)).dtype)) for b in run(inputs)]


register_backend("planted-neg", PlantedNeg)


class CrashingNeg(NumpyBackend):
    """neg kills its process, as a backend's segfault would."""

    name = "crashing-neg"

    def prepare(self, prim: Primitive, params: Any, in_avals: Any, out_avals: Any, device: Any = None) -> Any:
        if prim.name == "neg":
            import os

            os._exit(3)
        return super().prepare(prim, params, in_avals, out_avals)


register_backend("crashing-neg", CrashingNeg)
