"""NumPy implementations: elementwise primitives."""

from __future__ import annotations

import numpy as np

from minijax_numpy.table import IMPLS, impl


IMPLS["add"] = np.add
IMPLS["mul"] = np.multiply
IMPLS["sin"] = np.sin
IMPLS["gt"] = np.greater


@impl("convert_element_type")
def _convert_element_type(x: np.ndarray, *, new_dtype: object, weak_type: bool, sharding: object = None) -> np.ndarray:
    return x.astype(new_dtype)  # type: ignore[call-overload,no-any-return]
