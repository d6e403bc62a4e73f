"""Every public name of JAX 0.10.2's numerical modules exists in minijax.

``tests/data/jax_public_names.json`` was recorded from real JAX by
``tools/record_jax_names.py`` (``test_public_names_oracle.py`` checks that the
file still says what JAX says). A name may be missing only when it is listed
below under the open issue that builds it, with the reason.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.single_backend

RECORDED = json.loads((Path(__file__).parent / "data" / "jax_public_names.json").read_text())

DEFERRED: dict[str, dict[str, str]] = {
    # extend (issue 20): the primitives minijax has not built, each with where it is (or is not) built.
    "extend.core.primitives": {
        **{name: "minijax has no tokens" for name in ["after_all_p", "create_token_p"]},
        **{name: "no ragged_all_to_all (issue 17)" for name in ["ragged_all_to_all_p"]},  # smap: ppermute_p, all_to_all_p built
        **{name: "minijax's calls are jit's: no separate call primitives" for name in ["call_p", "closed_call_p"]},
        **{name: "minijax's refs are discharged at trace time: no state primitives (docs/refs.md)" for name in ["get_p", "swap_p"]},
        **{name: "shape polymorphism's dimension comparisons: minijax's shapes are concrete"
           for name in ["eq_to_p", "le_to_p", "lt_to_p"]},
        "device_put_p": "minijax's device_put moves arrays outside of traces, not as a primitive",
        **{name: "not built: no lax function of minijax binds it"
           for name in ["approx_top_k_p", "reduce_p", "rng_bit_generator_p", "rng_uniform_p", "select_and_scatter_p"]},
    },
}


def _names(module: str) -> set[str]:
    try:
        mod = importlib.import_module(f"minijax.{module}")
    except ImportError:
        return set()
    return {n for n in dir(mod) if not n.startswith("_")}


@pytest.mark.parametrize("module", sorted(RECORDED["modules"]))
def test_every_public_name_of_jax_exists(module: str) -> None:
    have = _names(module)
    deferred = DEFERRED.get(module, {})
    missing = sorted(set(RECORDED["modules"][module]) - have - set(deferred))
    assert not missing, f"minijax.{module} lacks {len(missing)} of jax.{module}'s public names: {missing}"


@pytest.mark.parametrize("module", sorted(DEFERRED))
def test_a_deferred_name_is_really_missing(module: str) -> None:
    # Once the issue that builds a name lands, its entry here must go.
    present = sorted(set(DEFERRED[module]) & _names(module))
    assert not present, f"minijax.{module} now has {present}: remove them from DEFERRED"
