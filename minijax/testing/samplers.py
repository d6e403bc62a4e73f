"""The per-primitive sampler registry: a hypothesis strategy of valid cases for every primitive.

``SAMPLERS[name].cases(dtype)`` draws ``Case`` objects (``minijax.testing.cases``):
a primitive's params, operand avals and a maker of operand values inside the
primitive's differentiable domain, with the operands it is differentiable
and linear in. The law suites (``tests/test_ad_laws.py``,
``tests/test_vmap_laws.py``) walk this registry; ``missing_samplers()``
lists the primitives that have none, and a test fails while it is not empty,
so that a new primitive gets a sampler together with its rules.

Primitives that have no sampler on purpose are in ``UNSAMPLED`` with the
reason: the higher-order ones (their params hold jaxprs and functions; their
rules are tested with the transformations of programs that use them), host
callbacks, collectives (they need a named axis) and ``empty2`` (its value is
unspecified).

Usage::

    from hypothesis import given
    from minijax.testing.samplers import SAMPLERS
    from minijax.testing.strategies import seeds

    @given(SAMPLERS["dot_general"].cases("float32"), seeds())
    def test(case, rng):
        out = case.apply(*case.args(rng))  # dot_general(lhs, rhs, **case.params)
"""

from __future__ import annotations

from minijax import core
from minijax.testing.cases import Case as Case, Sampler as Sampler
from minijax.testing.samplers_complex import SAMPLERS as _COMPLEX  # complex: complex, real, imag, conj
from minijax.testing.samplers_convolution import SAMPLERS as _CONVOLUTION
from minijax.testing.samplers_elementwise import SAMPLERS as _ELEMENTWISE
from minijax.testing.samplers_fft import SAMPLERS as _FFT  # fft (issue 19): the fft primitive
from minijax.testing.samplers_indexing import SAMPLERS as _INDEXING
from minijax.testing.samplers_linalg import SAMPLERS as _LINALG
from minijax.testing.samplers_random import SAMPLERS as _RANDOM
from minijax.testing.samplers_sorting import SAMPLERS as _SORTING
from minijax.testing.samplers_special import SAMPLERS as _SPECIAL
from minijax.testing.samplers_structural import SAMPLERS as _STRUCTURAL
from minijax.testing.samplers_windowed import SAMPLERS as _WINDOWED

SAMPLERS: dict[str, Sampler] = {**_ELEMENTWISE, **_STRUCTURAL, **_INDEXING, **_SORTING, **_RANDOM, **_LINALG, **_CONVOLUTION, **_WINDOWED, **_SPECIAL, **_COMPLEX}
SAMPLERS.update(_FFT)  # fft (issue 19)

_HIGHER_ORDER = "higher-order: its params hold jaxprs or functions; tested through the programs that use it"
_CALLBACK = "host callback: calls Python with side effects; tested in tests/test_callbacks.py"
_COLLECTIVE = "collective: needs a named axis; tested with vmap(..., axis_name=...)"

_KEYED = "takes a PRNG key operand, which the law harness cannot stack; its laws are in tests/test_random.py"

UNSAMPLED: dict[str, str] = {
    "random_bits": _KEYED,
    "random_split": _KEYED,
    "random_fold_in": _KEYED,
    "random_unwrap": _KEYED,
    "random_clone": _KEYED,
    "random_gamma": _KEYED,
    "jit": _HIGHER_ORDER,
    "shard_map": _HIGHER_ORDER + " (tests/test_shard_map_primitive.py)",  # shard_map (issue 17)
    "remat2": _HIGHER_ORDER,
    "custom_jvp_call": _HIGHER_ORDER,
    "custom_vjp_call": _HIGHER_ORDER,
    "custom_vmap_call": _HIGHER_ORDER,
    "custom_lin": "appears only in linear jaxprs, which are transposed and never evaluated",
    "closed_call": _HIGHER_ORDER,
    "cond": _HIGHER_ORDER,
    "while": _HIGHER_ORDER,
    "scan": _HIGHER_ORDER,
    "cholesky_update": "it takes one matrix and has no batching rule (as in JAX), which the vmap law needs; "
    "tests/test_lax_linalg_householder.py covers it",
    "custom_linear_solve": _HIGHER_ORDER + " (tests/test_custom_solves.py checks its laws)",  # linsolve
    "reduce_window": "its init values are operands that cannot be batched (as in JAX), which the vmap law would "
    "try; the case corpus (spec/cases/primitives/reduce_window_*) and tests/test_windowed.py cover it",
    "empty2": "its value is unspecified (cond's filler for unused residual slots): no law to check on values; "
    "tested with cond",
    "debug_callback": _CALLBACK,
    "debug_print": _CALLBACK,
    "pure_callback": _CALLBACK,
    "io_callback": _CALLBACK,
    "check": "checkify's assertion: raises or refuses to compile; tested in tests/test_checkify.py",
    "psum": _COLLECTIVE,
    "pmax": _COLLECTIVE,
    "pmin": _COLLECTIVE,
    "all_gather": _COLLECTIVE,
    "axis_index": _COLLECTIVE,
    "ppermute": _COLLECTIVE,
    "all_to_all": _COLLECTIVE,
    "reduce_scatter": _COLLECTIVE,
    # spmdx (issue 17): an identity on values whose param is a sharding over a mesh of devices
    "sharding_constraint": "its param lays the value out over a mesh of devices (values pass unchanged); "
    "tests/test_spmdx.py checks it on both backends, with its jvp, transpose and vmap",
    "reshard": "an identity on values whose param is the layout the result's type carries; "
    "tests/test_sharding.py checks it in traces on both backends, with its jvp, transpose and vmap",
}


def public_primitive_names() -> list[str]:
    """Every registered primitive (those tests make, named ``test_*``, left out)."""
    return sorted(n for n in core.primitive_registry if not n.startswith("test_"))


def sampled_primitive_names() -> list[str]:
    """The registered primitives that have a sampler, in name order."""
    return [n for n in public_primitive_names() if n in SAMPLERS]


def missing_samplers() -> list[str]:
    """Registered primitives with neither a sampler nor a reason in ``UNSAMPLED``."""
    return [n for n in public_primitive_names() if n not in SAMPLERS and n not in UNSAMPLED]


def sampler_for(name: str) -> Sampler:
    try:
        return SAMPLERS[name]
    except KeyError:
        why = UNSAMPLED.get(name)
        detail = f"it is not sampled on purpose ({why})" if why else "add one to minijax/testing/samplers_*.py"
        raise KeyError(f"no sampler for primitive {name!r}: {detail}") from None


__all__ = [
    "SAMPLERS",
    "UNSAMPLED",
    "Case",
    "Sampler",
    "missing_samplers",
    "public_primitive_names",
    "sampled_primitive_names",
    "sampler_for",
]
