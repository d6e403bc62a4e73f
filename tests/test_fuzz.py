"""The fuzzing suite: ill-typed and edge-case programs and inputs, on both backends.

Every case runs eagerly and under jit on the NumPy and XLA backends and must
end in the same correct result everywhere or in one of JAX's exception types
whose message names the operation (``fuzz_support``). The cases:

* primitives: each sampled primitive's valid case, then broken on purpose
  (edge values, another dtype or shape, rank 0, a zero-size dimension, a
  wrong param, an operand too few or too many) -- ``fuzz_cases.primitive_cases``;
* the public API (jnp and lax functions) with ill-typed and edge arguments;
* control flow (cond, switch, scan, while_loop, fori_loop) with mismatched
  branch types, bad predicates and indices, wrong lengths and carries;
* transformations (jit, grad, vmap, jvp) with bad arguments and axes;
* jaxprs: random programs printed, parsed back and evaluated, then with the
  text mutated; and hand-built jaxprs with wrong types, run by eval_jaxpr
  and compiled;
* XLA-level hazards (executables fed wrong buffers, deleted arrays, callback
  results of the wrong type) in a subprocess batch, so that a crash fails
  the test instead of killing the run.

Counts: the default run draws over 2,000 cases; ``MINIJAX_FUZZ=long``
five times as many (see fuzz_support.FUZZ_SCALE).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import fuzz_cases
import fuzz_support
import numpy as np
import pytest
from fuzz_cases import FuzzCase
from fuzz_support import COUNTS, fuzz_settings, run_case
from hypothesis import given, strategies as st

import minijax as jax
from minijax.config import config_context
from minijax.testing import tolerances

pytestmark = pytest.mark.single_backend  # each case names both backends itself

pytest.importorskip("jaxlib", reason="the XLA backend needs jaxlib")


@pytest.fixture(scope="module", autouse=True)
def _report() -> Iterator[None]:
    """Write the case counts (MINIJAX_FUZZ_REPORT=path) when the module is done."""
    COUNTS.clear()
    yield
    path = os.environ.get("MINIJAX_FUZZ_REPORT")
    if path:
        with open(path, "w") as f:
            json.dump({"scale": fuzz_support.FUZZ_SCALE, **COUNTS}, f, indent=2, sort_keys=True)


def _run(case: FuzzCase, modes: tuple[str, ...] = fuzz_support.MODES) -> str:
    compare = None
    if case.prim is not None:
        prim, params, operands = case.prim, case.params, case.args

        def reference(ops: list[Any]) -> list[Any]:
            # The reference on other operands (XLA flushes subnormals: the tolerance re-runs it on flushed ones).
            with config_context(minijax_backend="numpy"):
                return [np.asarray(x) for x in jax.tree_util.tree_leaves(prim.bind(*ops, **params))]

        def compare(actual: list[Any], expected: list[Any]) -> tolerances.Agreement:
            return tolerances.compare_primitive(prim.name, params, operands, actual, expected, reference)

    elif case.values_unspecified:

        def compare(actual: list[Any], expected: list[Any]) -> tolerances.Agreement:
            same = [(a.shape, a.dtype) for a in actual] == [(e.shape, e.dtype) for e in expected]
            return tolerances.Agreement(same, 0.0, "" if same else "the results' shapes or dtypes differ")

    return run_case(
        repr(case), case.fn, case.args, case.names, key=case.key, compare=compare, modes=modes,
        require_name=case.require_name, reference=case.reference, may_be_large=case.may_be_large,
        program=case.program,
    )  # fmt: skip


# --- primitives --------------------------------------------------------------------------------


@fuzz_settings(850)
@given(fuzz_cases.primitive_cases(), st.booleans())
def test_fuzz_primitives(case: FuzzCase, with_jit: bool) -> None:
    # jit compiles a program per case on XLA: one case in two runs it too.
    _run(case, fuzz_support.MODES if with_jit else ("eager",))


# --- the public API ------------------------------------------------------------------------------


@fuzz_settings(650)
@given(fuzz_cases.api_cases())
def test_fuzz_public_api(case: FuzzCase) -> None:
    _run(case)


# --- control flow and transformations ---------------------------------------------------------------


@fuzz_settings(250)
@given(fuzz_cases.control_flow_cases())
def test_fuzz_control_flow(case: FuzzCase) -> None:
    _run(case)


@fuzz_settings(200)
@given(fuzz_cases.transform_cases())
def test_fuzz_transformations(case: FuzzCase) -> None:
    _run(case)


# --- jaxprs ------------------------------------------------------------------------------------------


@fuzz_settings(200)
@given(fuzz_cases.jaxpr_text_cases())
def test_fuzz_parsed_jaxprs(case: FuzzCase) -> None:
    _run(case, ("eager",))  # eval_jaxpr binds each equation: the jit of it is the hand-built case below


@fuzz_settings(150)
@given(fuzz_cases.hand_built_cases())
def test_fuzz_hand_built_jaxprs(case: FuzzCase) -> None:
    _run(case, ("eager",))  # a jit equation: compiled on each backend already


# --- XLA-level hazards, in a process of their own ----------------------------------------------------


def test_fuzz_xla_hazards_in_a_subprocess() -> None:
    """Executables fed wrong buffers, reused donations, callbacks returning junk: a crash
    here would take the whole run down, so these run in a child process."""
    n = 300 * fuzz_support.FUZZ_SCALE
    script = os.path.join(os.path.dirname(__file__), "fuzz_xla_hazards.py")
    args = [sys.executable, script, str(n)] + (["--random"] if fuzz_support.FUZZ_SCALE > 1 else [])
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(args, capture_output=True, text=True, timeout=1800, env=env, stdin=subprocess.DEVNULL)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0, (
        f"the hazard batch died (exit {done.returncode}) during:\n"
        + "\n".join(lines[-12:]) + f"\n{done.stderr[-3000:]}"
    )  # fmt: skip
    summary = json.loads(lines[-1])
    counts = summary["counts"]
    COUNTS["cases"] += counts.get("cases", 0)
    for key, value in counts.items():
        if key.startswith(("ok", "error:")):
            COUNTS[key] += value
    assert summary["n_failures"] == 0, "\n".join(summary["failures"])
    assert counts["cases"] >= n * 0.7 and counts.get("ok", 0) > 0 and counts.get("error:TypeError", 0) > 0


# --- examples the random profile found, pinned ---------------------------------------------------


def test_arange_past_the_largest_dimension_raises_the_same_error_eagerly_and_under_jit() -> None:
    # Eagerly the iota's size check refused the 2**32-element result (ValueError); under
    # jit the iota traced, and converting the Python int step 2**31 to int32 raised
    # OverflowError first. The case runs without the eval_shape pre-check, which skips it.
    api = next(a for a in fuzz_cases.API if a.name == "jnp.arange")
    case = fuzz_cases.api_case(api, [0, 2**63, 2**31])
    assert run_case(repr(case), case.fn, case.args, case.names, require_name=False) == "ValueError"


@pytest.mark.parametrize(
    ("name", "values"),
    [("cumsum", [0.82177013, -1.3812797, -2.754159]), ("cumprod", [0.51652765, -1.3132702, -1.4127556])],
)
def test_a_reverse_cumulative_sum_or_product_may_associate_as_xla_does(name: str, values: list[float]) -> None:
    # XLA (and JAX on CPU) reduce each suffix in index order, (x0 + x1) + x2; the reference
    # accumulates from the end, (x2 + x1) + x0: 1 ulp apart at index 0 (spec/tolerances.md, rule 3).
    from minijax.primitives.sorting import CUMULATIVE_PRIMITIVES

    p = CUMULATIVE_PRIMITIVES[name]
    params = {"axis": 0, "reverse": True}
    x = np.array(values, np.float32)
    case = fuzz_cases.FuzzCase(f"{name}{params}", lambda x: p.bind(x, **params), [x], (name,), key=None, prim=p, params=params)
    assert _run(case) == "ok"


def test_a_parsed_program_ending_in_lgamma_near_its_zero_agrees_by_lgammas_rule() -> None:
    # Found by the random profile (test_fuzz_parsed_jaxprs): XLA's lgamma(1.940907) is 567 ulps
    # from the reference's, within lgamma's absolute allowance near 2 but not normwise.
    from minijax.jaxpr import ClosedJaxpr, eval_jaxpr
    from minijax.jaxpr_parse import parse_jaxpr

    text = "{ lambda ; a:f32[] b:f32[]. let c:f32[] = acos a; d:f32[] = lgamma b in (c, d) }"
    parsed = parse_jaxpr(text)
    program = parsed if isinstance(parsed, ClosedJaxpr) else ClosedJaxpr(parsed, [])
    args = [np.array(-0.66176975, np.float32), np.array(1.940907, np.float32)]
    case = fuzz_cases.FuzzCase(
        "acos and lgamma", lambda *xs: eval_jaxpr(program.jaxpr, program.consts, *xs), args, ("lgamma", "acos"),
        key=("text", text), program=program,
    )  # fmt: skip
    assert _run(case, ("eager",)) == "ok"
