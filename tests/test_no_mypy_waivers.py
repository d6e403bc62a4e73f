"""minijax type-checks under the strict mypy configuration without file-level waivers (issue 21).

A ``# mypy: disable-error-code=...`` line switches checks off for a whole module, so a wrong
type anywhere in it goes unseen; the stats modules had 24 of them, hiding real bugs.
"""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import pytest

import minijax.numpy as jnp
from minijax.array import Array
from minijax.numpy.util import promote_args_inexact, promote_dtypes_inexact

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_no_module_of_minijax_switches_mypy_checks_off() -> None:
    waived = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "minijax").rglob("*.py"))
        if any(line.lstrip().startswith("# mypy:") for line in path.read_text().splitlines())
    ]
    assert waived == []


# promote_*_inexact's overloads claim: Arrays in, Arrays out; otherwise an Array or a host constant
# (a NumPy value, or a Python float), never a bool or an int. These check the claims hold at run time.
OPERANDS: list[tuple[Any, ...]] = [
    (1.0,), (1, True), (jnp.ones(3), 0, 1), (np.ones(3), 0.5), (np.float32(1), 2.0),
    (jnp.ones(3, jnp.int32), np.float64(2)), (jnp.arange(3), jnp.ones(3, jnp.bfloat16)),
]


@pytest.mark.parametrize("promote", [lambda *a: promote_args_inexact("f", *a), promote_dtypes_inexact])
@pytest.mark.parametrize("args", OPERANDS)
def test_promoted_operands_are_arrays_or_inexact_host_constants(promote: Any, args: tuple[Any, ...]) -> None:
    for out in promote(*args):
        # ml_dtypes' scalar types (bfloat16, ...) derive from np.generic, not np.number.
        assert isinstance(out, (Array, np.ndarray, np.generic, float)) and not isinstance(out, (bool, int))
        assert np.issubdtype(np.result_type(out), np.inexact) or np.dtype(np.result_type(out)).name == "bfloat16"
    if all(isinstance(a, Array) for a in args):
        assert all(isinstance(out, Array) for out in promote(*args))
