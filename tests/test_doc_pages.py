"""More of JAX's documentation pages run unchanged on minijax and show what JAX shows.

Each page's code cells (``tests/pages/<name>_cells.txt``, copied from JAX's
``docs/``) run as tests/page_harness.py describes: the printed output (numbers
within ``print_rtol``), the errors (type and first line), the arrays bound and
the figures must equal JAX's record in ``tests/pages/<name>_expected.json``.
The pages with a module of their own (convolutions, custom derivatives, ...)
are the ones that need more words; the ones here need none beyond their name.
tests/test_doc_pages_oracle.py checks the records against real JAX.

To record the expectations again (oracle environment, from the repository root):
    python tests/test_doc_pages.py --write-expected
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from page_harness import Page

pytest.importorskip("matplotlib", reason="matplotlib (the page runner's figure backend) is not installed")
pytest.importorskip("scipy", reason="scipy (the page runner stands in for scipy.datasets) is not installed")

# JAX's docs/<page>.md at the commit the cells files name; the JAX 101 tutorials and the user guides.
PAGES = [
    Page("key_concepts", cell_count=13, rtol=1e-5, print_rtol=1e-5),
    Page("jit_compilation", cell_count=13, rtol=1e-5, print_rtol=1e-5),
    # Its finite differences (eps = 1e-4, float32) keep 2 to 3 digits: they multiply the
    # rounding of the loss by 1e4, and the NumPy backend's float32 sums round as the
    # machine's BLAS kernel does (1.2946 where JAX prints 1.3041 on an AVX-512 AMD CPU).
    Page("automatic_differentiation", cell_count=11, rtol=1e-2, print_rtol=1e-2),
    Page("automatic_vectorization", cell_count=9, rtol=1e-5, print_rtol=1e-5),
    Page("pytrees", cell_count=16, rtol=1e-5, print_rtol=1e-5),
    Page("random_numbers", cell_count=15, rtol=1e-5, print_rtol=1e-5),
    Page("stateful_computations", cell_count=6, rtol=1e-5, print_rtol=1e-5),
    Page("control_flow", cell_count=18, rtol=1e-5, print_rtol=1e-5),
    Page("jaxpr", cell_count=9, rtol=1e-5, print_rtol=1e-5),
    Page("custom_pytrees", cell_count=16, rtol=1e-5, print_rtol=1e-5),
    Page("higher_order", cell_count=18, rtol=1e-5, print_rtol=1e-5),
    Page("jacobian_vector_products", cell_count=13, rtol=1e-5, print_rtol=1e-5),
    Page("external_callbacks", cell_count=28, rtol=1e-5, print_rtol=1e-5),
    # Cell c3 prints from a loop with unordered jax.debug.print: XLA may run the prints in any order.
    Page("thinking_in_jax", cell_count=32, rtol=1e-5, print_rtol=1e-5,
         different_output=(("kpv5K7QYxQnX", "type(x) is minijax's Array class, not jaxlib's ArrayImpl"),)),
    Page("complex_differentiation", cell_count=9, rtol=1e-5, print_rtol=1e-5),
    # The same finite differences as automatic_differentiation's.
    Page("autodiff_cookbook", cell_count=35, rtol=1e-2, print_rtol=1e-2),
    Page("tracing", cell_count=10, rtol=1e-5, print_rtol=1e-5),
    Page("debugging", cell_count=12, rtol=1e-5, print_rtol=1e-6, unordered_cells=("c3",)),
    # refs (issue 24): `Ref`: mutable arrays for data plumbing and memory control.
    Page("array_refs", cell_count=19, rtol=1e-5, print_rtol=1e-5,
         different_output=(("c2", "the error names the argument's class: JAX's internal tracer class, minijax's Ref"),
                           ("c16", "unsafe_buffer_pointer: JAX updates the ref's buffer in place, minijax's ref "
                                   "holds a new Array after the call (refs are discharged at trace time)"))),
    # issue 17: "Distributed arrays and automatic parallelization" (sharding in types, jit, reshard).
    Page("parallel", cell_count=36, rtol=1e-5, print_rtol=1e-5,
         different_output=(("c8", "jax.set_mesh's object prints its class: JAX's set_mesh, minijax's own"),
                           ("c17", "prints the shards of c16's unreduced array, which minijax does not build"),
                           ("c18", "prints c16's unreduced array's sharding, which minijax does not build")),
         different_output_on=(("c25", "numpy", "XLA's compiled program text (an all-reduce): the NumPy backend "
                                               "compiles none"),),
         known_gaps=(("c16", "unreduced layouts (PartitionSpec(unreduced=...))"),)),
    # issue 17: shard_map, eager (per-device values printed) and jitted (real collectives on XLA).
    Page("shard_map", cell_count=69, rtol=1e-5, print_rtol=1e-5,
         different_output=(("c19", "JAX's error names the function it wraps the lambda in (_rem_singleton); "
                                   "minijax's names the lambda"),
                           ("c21", "not built (docs/differences.md): JAX's staged types carry the mesh axes a value "
                                   "varies over ({V:i}) and insert pvary equations, and its shard_map equation "
                                   "names the abstract mesh"))),
]
BY_NAME = {page.name: page for page in PAGES}


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_the_page_runs_on_minijax_and_shows_what_jax_shows(name: str, backend_name: str, tmp_path: Path) -> None:
    BY_NAME[name].main_test()(backend_name, tmp_path)


@pytest.mark.single_backend
@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_the_stored_cells_are_the_pages_code_only(name: str) -> None:
    BY_NAME[name].cells_test()()


if __name__ == "__main__":
    for page in PAGES:
        page.write_expected_main(sys.argv[1:], __doc__)
