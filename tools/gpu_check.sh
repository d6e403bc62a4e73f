#!/usr/bin/env bash
# Runs the XLA backend's half of the suite on a CUDA GPU, for a machine that has
# JAX's CUDA PJRT plugin installed and no network (so nothing is fetched: the
# project is installed without dependencies or build isolation).
# Usage: [LIMIT=seconds] [JOBS=n] tools/gpu_check.sh OUTDIR [extra pytest args]
# pytest -v lists every test as it ends, so a run cut short by LIMIT still says what passed.
set -u
out=${1:?usage: tools/gpu_check.sh OUTDIR [pytest args]}
shift
py=${PYTHON:-python3}
mkdir -p "$out"
# Several pytest workers share one GPU: none may grab most of its memory up front.
export XLA_PYTHON_CLIENT_PREALLOCATE=false
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  $py -c "import sys, jaxlib, numpy; print(sys.version); print('jaxlib', jaxlib.__version__, 'numpy', numpy.__version__)"
} > "$out/env.txt" 2>&1
$py -m pip install -q --no-deps --no-build-isolation -e . > "$out/install.txt" 2>&1 \
  || export PYTHONPATH="$PWD:$PWD/backends"
# JAX_PLATFORMS=cuda makes a plugin that fails to load an error, not a silent CPU run.
JAX_PLATFORMS=cuda $py -c "import minijax as jax; print(jax.devices(), jax.default_backend())" >> "$out/env.txt" 2>&1
JAX_PLATFORMS=cuda CI=1 timeout "${LIMIT:-3600}" $py -m pytest -v -p no:cacheprovider --backend xla -m "not oracle" \
  -n "${JOBS:-12}" --junitxml="$out/junit.xml" -rf "$@" > "$out/pytest.txt" 2>&1
echo "pytest rc=$?" >> "$out/pytest.txt"
tail -5 "$out/pytest.txt"
