"""Record JAX's public names, module by module, for tests/test_public_names.py.

Run it in the oracle environment (the one with real JAX):

    .venv-oracle/bin/python tools/record_jax_names.py > tests/data/jax_public_names.json

A module's public names are those of ``dir(module)`` without a leading underscore.
"""

from __future__ import annotations

import importlib
import json
import sys

# The modules minijax promises in full (issue 21's list), as JAX spells them.
MODULES = [
    "numpy", "numpy.linalg", "numpy.fft",
    "scipy.special", "scipy.stats", "scipy.linalg", "scipy.signal", "scipy.optimize",
    "scipy.integrate", "scipy.interpolate", "scipy.ndimage", "scipy.spatial.transform",
    "scipy.cluster.vq", "scipy.fft", "scipy.sparse.linalg",
    "ops", "flatten_util", "dlpack", "random", "nn", "nn.initializers", "tree_util", "tree",
    # extend (issue 20): jax.extend and its submodules
    "extend", "extend.core", "extend.core.primitives", "extend.linear_util", "extend.backend", "extend.random",
    "extend.source_info_util", "extend.ifrt_programs", "extend.mlir", "extend.lowering", "extend.sharding",
    "extend.xla", "extend.pallas",
]  # fmt: skip


def main() -> None:
    import jax

    names = {m: sorted(n for n in dir(importlib.import_module(f"jax.{m}")) if not n.startswith("_")) for m in MODULES}
    json.dump({"jax_version": jax.__version__, "modules": names}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
