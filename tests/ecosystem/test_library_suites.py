"""The libraries' own test files, unmodified, run on minijax through ``minijax run -m pytest``.

Each suite must pass at least as many tests as measured when this was written
(the third entry of ``SUITES``), and every failure must be one of the features minijax does
not have yet (``PENDING``): complex dtypes (issue 19) and shardings (issue 17).
A failure of any other kind is a regression. The counts on real JAX 0.10.2
are in docs/ecosystem.md.
"""

from __future__ import annotations

import pathlib

import pytest
from ecosystem_support import library_dir, require, run_library_tests

pytestmark = [pytest.mark.ecosystem, pytest.mark.single_backend]

# Messages of the failures that stand for a feature minijax does not have yet (the tests that need it fail
# with them). A new failure of any other kind fails the suite.
PENDING = {
    "complex dtypes (issue 19)": ("complex dtypes", "complex64", "complex128", "complex scalar"),
    "shardings (issue 17)": ("sharding", "Sharding", "jax.sharding", "Mesh"),
    "jax.experimental.checkify (issue 20)": ("checkify",),
    "collectives": ("(a collective)",),
}
# Tests that fail for a reason other than a missing feature, each with the reason (the end of the test id:
# the module part of a junit class name depends on pytest's rootdir).
KNOWN_FAILURES = {
    # Real JAX 0.10.2 fails them too: the message they expect ("Dict key mismatch") is not JAX's.
    ".FreezeTest.test_bad_structure_raises": "fails on JAX 0.10.2 too",
    ".SelectiveTransformTest.test_selective_bad_structure": "fails on JAX 0.10.2 too",
    # Real JAX 0.10.2 fails it too: the clipped block's RMS is 0.9999999 in float32, not 1.0 to 7 places.
    ".ClippingTest.test_clip_by_block_rms": "fails on JAX 0.10.2 too (float32 rounding)",
    # Chex recognises a jitted function by the names of JAX's internal classes (PjitFunction, ...).
    ".AssertMaxTracesTest.test_incorrect_ordering": "chex matches JAX's internal class names",
}

OPTAX_BROAD = [
    "_src/base_test.py", "_src/combine_test.py", "_src/update_test.py", "_src/numerics_test.py", "_src/utils_test.py",
    "schedules", "transforms", "losses", "tree_utils",
]  # fmt: skip
CHEX = ["asserts_test.py", "dataclass_test.py", "variants_test.py", "fake_test.py", "asserts_chexify_test.py"]

# (library, test files or folders under it, the passes measured on minijax)
SUITES = {
    "optax_transform_test": ("optax", ["_src/transform_test.py"], 23),
    "optax_alias_test": ("optax", ["_src/alias_test.py"], 563),
    "optax_broad": ("optax", OPTAX_BROAD, 637),
    "chex": ("chex", [f"_src/{name}" for name in CHEX], 507),
}


def _files(library: str, parts: list[str]) -> list[pathlib.Path]:
    base = library_dir(library)
    found: list[pathlib.Path] = []
    for part in parts:
        path = base / part
        found.extend(sorted(path.glob("*_test.py")) if path.is_dir() else [path])
    return found


def _pending(message: str) -> str | None:
    for feature, words in PENDING.items():
        if any(word in message for word in words):
            return feature
    return None


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_library_suite_passes_but_for_pending_features(suite: str, tmp_path: pathlib.Path) -> None:
    library, parts, floor = SUITES[suite]
    require("optax", "chex", "flax", "equinox")
    outcomes = run_library_tests(_files(library, parts), tmp_path / "junit.xml")
    unexpected = [(test, message[:600]) for test, message in outcomes["failed"]
                  if _pending(message) is None and not any(test.endswith(known) for known in KNOWN_FAILURES)]
    counts = {k: len(v) for k, v in outcomes.items()}
    print(f"{suite}: {counts}")
    assert not unexpected, f"{suite}: {len(unexpected)} failures not explained by a pending feature:\n" + "\n\n".join(
        f"{test}: {message}" for test, message in unexpected[:10])
    assert counts["passed"] >= floor, f"{suite}: {counts}"
