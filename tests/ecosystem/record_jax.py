"""Record the ecosystem programs' outputs under real JAX into tests/data/ecosystem/ (run in an environment
with jax and the libraries, e.g. the oracle one with the libraries beside it):

    PYTHONPATH=/path/to/libs JAX_PLATFORMS=cpu python tests/ecosystem/record_jax.py

The programs are plain JAX code; tests/ecosystem/test_training.py runs them on minijax and compares.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).parent
DATA = HERE.parent / "data" / "ecosystem"

if __name__ == "__main__":
    import jax  # must be real JAX here

    assert not jax.__name__.startswith("minijax") and hasattr(jax, "__file__"), "run this with real JAX"
    DATA.mkdir(parents=True, exist_ok=True)
    for program in sorted((HERE / "programs").glob("*.py")):
        out = subprocess.run([sys.executable, str(program)], check=True, capture_output=True, text=True).stdout
        record = json.loads(out.strip().splitlines()[-1])
        record["_recorded_with"] = f"jax {jax.__version__}"
        (DATA / f"{program.stem}.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        print(program.stem, "recorded")
