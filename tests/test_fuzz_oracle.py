"""The public-API fuzz cases against real JAX: the same outcome, or the same exception type.

Each case of ``fuzz_cases.api_draws`` (a jnp/lax function with ill-typed and
edge arguments) runs in minijax (NumPy backend) and in JAX, eagerly and under
jit. Where JAX returns, minijax must return the same dtype, shape and values;
where JAX raises one of the exception types for bad input, minijax must raise
one of the same family (TypeError, ValueError, IndexError, ...).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")

import fuzz_cases  # noqa: E402
import fuzz_support  # noqa: E402
from hypothesis import given  # noqa: E402

from minijax.config import config_context  # noqa: E402

pytestmark = pytest.mark.oracle

JAX_API = fuzz_cases.api_table(jax.numpy, jax.lax)


def _jax_outcome(api: fuzz_cases.Api, values: list[Any], mode: str) -> fuzz_support.Outcome:
    case = fuzz_cases.api_case(api, values)
    where = f"jax/{mode}"
    try:
        f = case.fn if mode == "eager" else jax.jit(case.fn)
        # JAX arrays in: jnp.reshape of a NumPy array, say, is NumPy's reshape in JAX.
        args = [jax.numpy.asarray(a) if isinstance(a, np.ndarray) else a for a in case.args]
        leaves = jax.tree_util.tree_leaves(f(*args))
        return fuzz_support.Outcome(where, values=[np.asarray(x) for x in leaves])
    except Exception as e:  # judged below
        return fuzz_support.Outcome(where, error=e)


# JAX failing inside its own code (a message from Python, not from a check):
# not an answer to compare with.
_JAX_INTERNAL = ("safe_map()", "safe_zip()", "NoneType", "not supported between instances", "is not iterable",
                 "index out of range", "cannot be interpreted as an integer", "unhashable type",
                 "could not be broadcast together", "indices must be integers")  # fmt: skip

# Where minijax deliberately differs from JAX 0.10.2 on these inputs (each a JAX oddity, or a
# bug reported to the owner of the file): (API name, predicate on the argument values, why).
KNOWN_DEVIATIONS: list[tuple[str, Any, str]] = [
    ("jnp.reshape", lambda v: any(isinstance(d, int) and d < -1 for d in np.atleast_1d(v[1]).tolist()),
     "JAX infers any negative size like -1; minijax accepts only -1, as NumPy"),
    ("jnp.swapaxes", lambda v: not all(isinstance(a, int) for a in v[1:]), "JAX accepts a 1-tuple as an axis"),
    ("jnp.moveaxis", lambda v: v[1] is None or v[2] is None, "JAX fails on None inside its own code"),
    ("jnp.arange", lambda v: any(isinstance(x, int) and not isinstance(x, bool) and abs(x) >= 2**31 for x in v),
     "JAX computes the length with Python ints first; minijax converts the bounds to int32 and overflows"),
    ("jnp.repeat", lambda v: np.ndim(v[0]) == 0, "JAX repeats a 0-d array whatever the axis"),
    ("lax.integer_pow", lambda v: isinstance(v[1], bool), "JAX takes True as the exponent 1"),
    ("lax.slice", lambda v: 0 in np.shape(v[0]) or _beyond(v[2], np.shape(v[0])) or _negative(v[1]) or _negative(v[2]),
     "JAX's eager slice of an Array indexes it, skipping the limit checks (jit makes them)"),
    ("jnp.cumsum", lambda v: np.ndim(v[0]) == 0, "minijax flattens a 0-d array for any axis (reported: sorting.py)"),
    ("lax.cumsum", lambda v: not isinstance(v[1], int), "JAX truncates a float axis"),
    ("lax.argmax", lambda v: isinstance(v[1], bool), "JAX's eager argmax fails in NumPy on a bool axis; minijax takes it as an int"),
    ("jnp.full", lambda v: isinstance(v[1], float) and not np.isfinite(v[1]),
     "JAX converts a NaN or infinite fill value to an integer dtype (as convert_element_type); minijax raises"),
    ("jnp.split", lambda v: isinstance(v[1], int) and v[1] <= 0, "JAX splits into a non-positive number of sections"),
    ("jnp.linspace", lambda v: any(isinstance(x, int) and abs(x) >= 2**31 for x in v[:2]),
     "JAX checks that the bounds fit int32 before the number of samples"),
]  # fmt: skip


def _beyond(limits: Any, shape: tuple[int, ...]) -> bool:
    items = limits if isinstance(limits, tuple) else (limits,)
    return any(isinstance(lim, int) and lim > d for lim, d in zip(items, shape))


def _negative(indices: Any) -> bool:
    items = indices if isinstance(indices, tuple) else (indices,)
    return any(isinstance(i, int) and i < 0 for i in items)


def _known_deviation(name: str, values: list[Any]) -> bool:
    return any(n == name and when(values) for n, when, _ in KNOWN_DEVIATIONS)


def _compatible(mine: BaseException, theirs: BaseException) -> bool:
    """The same family of exception. An axis out of range is NumPy's AxisError, both a
    ValueError and an IndexError, and JAX raises either (sometimes an IndexError from
    inside its own code): those two count as one family here."""
    families = {fuzz_support._family(mine), fuzz_support._family(theirs)}
    return len(families) == 1 or families == {ValueError, IndexError}


@pytest.mark.parametrize("mode", ["eager", "jit"])
@fuzz_support.fuzz_settings(150)
@given(fuzz_cases.api_draws())
def test_public_api_fuzz_matches_jax(mode: str, draw: tuple[int, list[Any]]) -> None:
    index, values = draw
    mine_case = fuzz_cases.api_case(fuzz_cases.API[index], values)
    if mine_case.may_be_large and fuzz_support._too_large(mine_case.fn, mine_case.args):
        return
    with config_context(jax_enable_x64=False):
        theirs = _jax_outcome(JAX_API[index], values, mode)
    mine = fuzz_support.run_one(mine_case.fn, mine_case.args, "numpy", mode, None)
    label = mine_case.label
    if theirs.error is not None and (
        fuzz_support._family(theirs.error) is None or any(m in str(theirs.error) for m in _JAX_INTERNAL)
    ):
        return  # JAX itself fails in a way that is not an answer to compare with
    if _known_deviation(fuzz_cases.API[index].name, values):
        return
    if mine.error is not None and isinstance(mine.error, NotImplementedError):
        return  # what minijax does not support (complex dtypes), said so (docs/differences.md)
    if theirs.error is not None:
        assert mine.error is not None, f"{label}: JAX raised {type(theirs.error).__name__}: {theirs.error}\nminijax returned {mine.describe()}"
        assert _compatible(mine.error, theirs.error), (
            f"{label}: JAX raised {type(theirs.error).__name__}: {theirs.error}\nminijax raised {mine.describe()}"
        )
        return
    assert mine.values is not None, f"{label}: JAX returned {theirs.describe()}\nminijax raised {mine.describe()}"
    assert theirs.values is not None
    agreement = fuzz_support.compare_programs(mine.values, theirs.values)
    flushed_args = fuzz_support._flushed_arguments(mine_case.args)
    if not agreement.ok and flushed_args is not None:  # JAX on XLA flushes subnormal operands to zero
        flushed = fuzz_support.run_one(mine_case.fn, flushed_args, "numpy", mode, None)
        if flushed.values is not None:
            agreement = fuzz_support.compare_programs(flushed.values, theirs.values)
    if not agreement.ok:  # what XLA computes from a subnormal operand is unspecified (spec/tolerances.md, rule 4)
        masked = fuzz_support._masking_subnormal_operands(mine_case.args, mine.values, theirs.values)
        if masked is not None:
            agreement = fuzz_support.compare_programs(*fuzz_support._nans_where_either(*masked))
    assert agreement.ok, f"{label}: {agreement.detail}\n  {mine.describe()}\n  {theirs.describe()}"
