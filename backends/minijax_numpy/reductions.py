"""NumPy implementations: reductions primitives."""

from __future__ import annotations

import numpy as np

from minijax_numpy.table import IMPLS, impl
