#!/usr/bin/env bash
# Build the documentation site into build/site/, with warnings as errors.
# Installs nothing: it needs the `docs` extra (pip install -e '.[docs]').
# The pages come from docs/ and spec/ (tools/docs_hooks.py stages them);
# the figures in docs/figures/ are committed, made by tools/make_figures.py.
set -euo pipefail

cd "$(dirname "$0")/.."
export NO_MKDOCS_2_WARNING=1
mkdocs build --strict "$@"
