"""Run a page's code cells the way a notebook does, and record what they show.

Usage: ``python run_cells.py CELLS OUT_DIR [--as-minijax]``

``CELLS`` holds the page's code cells, each starting with a ``# %% cell ID``
line. They run in order in one namespace, on matplotlib's Agg backend. With
``--as-minijax`` every ``import jax...`` gets the matching ``minijax`` module,
so the cells run unchanged on minijax.

Like a notebook, a cell's last expression is displayed (its ``repr`` printed)
unless the line ends with ``;``, and the cell's figures are closed after it.
A cell that raises does not stop the run (JAX's pages show errors on
purpose, in cells tagged ``raises-exception``): the next cell runs in the same
namespace. ``OUT_DIR/cells.json`` gets, per cell, its id, stdout, the error it
raised (if any: its type and first line), the arrays it bound in the namespace (name, kind, dtype, shape) and the
figures drawn (titles and what each axes holds); ``OUT_DIR/arrays.npz`` gets
the values, keyed ``CELL/NAME`` for namespace arrays and ``CELL/fig.../...``
for plotted data. Memory addresses in what a cell prints (``<... object at
0x7f...>``) differ from run to run: they are recorded as ``at 0x?``; so do a
jaxpr variable's ids (``Var(id=140...)``, JAX prints the object's ``id``): each
cell's are renumbered by first appearance (``Var(id=#1)``), which keeps which
printed variables are the same one.

``scipy.datasets.face()`` downloads its image on first use; here nothing can
be downloaded, so it is replaced by a fixed synthetic picture of the same
shape and dtype (uint8, 768 x 1024 x 3). Both runs get the same picture.

``from jax._src import test_util`` (JAX's private test helpers, which need
absl; the gradient-checkpointing page imports them in a cell whose function
is never called) gets an empty stand-in module in both runs.

NumPy's global random generator is seeded (0) before the first cell: a page
that draws its inputs with an unseeded ``np.random.randn`` (the tracing page)
then gives both runs the same inputs.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import io
import json
import re
import sys
import traceback
import types
from pathlib import Path
from typing import Any

import numpy as np

CELL_HEADER = re.compile(r"^# %% cell (\S+)\n", re.M)
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
VAR_ID = re.compile(r"\bVar\(id=(\d+)\)")


def _renumber_vars(text: str) -> str:
    numbers: dict[str, int] = {}
    return VAR_ID.sub(lambda m: f"Var(id=#{numbers.setdefault(m.group(1), len(numbers) + 1)})", text)


# IPython's magics, as plain Python: ``%timeit [-n N -r R] STATEMENT`` runs its statement once, not displayed (the timing
# it prints is the machine's, not the library's, so it is not recorded); the display-only ``%xmode`` and
# ``%matplotlib``, and shell commands (``!pip install ...``: nothing is installed here), are dropped.
TIMEIT = re.compile(r"^(\s*)%timeit(?:\s+-[nr]\s*\d+)*\s+(.*)$", re.M)
DROPPED_MAGIC = re.compile(r"^\s*(?:%(?:xmode|matplotlib)\b|!).*$", re.M)


def read_cells(path: Path) -> list[tuple[str, str]]:
    """``(id, source)`` of each cell, in order, its magics made plain Python."""
    parts = CELL_HEADER.split(path.read_text(encoding="utf-8"))
    return [(parts[i], DROPPED_MAGIC.sub("", TIMEIT.sub(r"\1\2;", parts[i + 1]))) for i in range(1, len(parts), 2)]


class _JaxIsMinijax(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers ``import jax.x.y`` with the module ``minijax.x.y``."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname == "jax" or fullname.startswith("jax."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return importlib.import_module("mini" + spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        pass  # already imported (and executed) under its own name


def synthetic_face() -> np.ndarray:
    """A smooth, deterministic stand-in for ``scipy.datasets.face()``."""
    rows, cols = np.mgrid[0:768, 0:1024].astype(np.float64)
    channels = [
        128 + 100 * np.sin(rows / 37.0) * np.cos(cols / 53.0),
        128 + 90 * np.cos((rows + cols) / 61.0),
        128 + 80 * np.sin((rows - 2 * cols) / 47.0),
    ]
    return np.clip(np.stack(channels, axis=-1), 0, 255).astype(np.uint8)


def _is_array(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return True
    if isinstance(value, type):  # a class (`from jax import Array, Ref`): JAX's have shape and dtype properties
        return False
    module = type(value).__module__ or ""
    return module.split(".")[0] in ("jax", "jaxlib", "minijax") and hasattr(value, "shape") and hasattr(value, "dtype")


def _kind(value: Any) -> str:
    return "numpy" if isinstance(value, np.ndarray) else "jax"


def _run_cell(source: str, name: str, namespace: dict[str, Any]) -> None:
    tree = ast.parse(source, filename=name)
    last = tree.body[-1] if tree.body else None
    displayed: ast.expr | None = None
    if isinstance(last, ast.Expr):
        line = source.splitlines()[(last.end_lineno or last.lineno) - 1].rstrip()
        if not line.endswith(";"):
            displayed = last.value
            tree.body.pop()
    exec(compile(tree, name, "exec"), namespace)
    if displayed is not None:
        value = eval(compile(ast.Expression(displayed), name, "eval"), namespace)
        if value is not None:
            print(repr(value))


def _figures(cell: int, arrays: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    import matplotlib.pyplot as plt

    figures = []
    for f, num in enumerate(plt.get_fignums()):
        fig = plt.figure(num)
        axes_info = []
        for a, ax in enumerate(fig.axes):
            prefix = f"{cell}/fig{f}/ax{a}"
            for i, line in enumerate(ax.lines):
                arrays[f"{prefix}/line{i}"] = np.asarray(line.get_xydata())
            for i, image in enumerate(ax.images):
                arrays[f"{prefix}/image{i}"] = np.asarray(image.get_array())
            for i, collection in enumerate(ax.collections):
                values = collection.get_array()
                if values is not None:
                    arrays[f"{prefix}/collection{i}"] = np.asarray(values)
            axes_info.append({
                "title": ax.get_title(),
                "lines": len(ax.lines),
                "images": len(ax.images),
                "collections": len(ax.collections),
            })
        figures.append({"size": [float(v) for v in fig.get_size_inches()], "axes": axes_info})
    plt.close("all")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cells", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--as-minijax", action="store_true")
    # A page whose cells show errors on purpose (checkify's) runs on after a cell's error.
    args = parser.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import scipy.datasets

    scipy.datasets.face = lambda gray=False: synthetic_face()
    if args.as_minijax:
        sys.meta_path.insert(0, _JaxIsMinijax())
    # With --as-minijax, ``jax._src`` is minijax's own ``_src`` package (the custom-interpreters page imports
    # its ``util``); the stand-in is added to whichever package answers.
    import jax._src

    test_util = types.ModuleType("jax._src.test_util")
    sys.modules["jax._src.test_util"] = test_util
    jax._src.test_util = test_util  # type: ignore[attr-defined]

    np.random.seed(0)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    arrays: dict[str, np.ndarray] = {}
    records = []
    seen: dict[str, Any] = {}  # arrays already recorded, by name: a cell records the ones it (re)binds
    for index, (cell_id, source) in enumerate(read_cells(args.cells)):
        out = io.StringIO()
        error = None
        with contextlib.redirect_stdout(out):
            try:
                _run_cell(source, f"<cell {cell_id}>", namespace)
            except Exception as exc:
                # The error's type and first line: what follows (JAX's links, minijax's fixes) is each
                # library's own wording.
                error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                error = ADDRESS.sub(" at 0x?", error)
                traceback.print_exc(file=sys.stderr)
        names = {}
        for name, value in namespace.items():
            if name.startswith("_") or not _is_array(value) or seen.get(name) is value:
                continue
            seen[name] = value
            if str(value.dtype).startswith("key<"):  # a PRNG key array has no NumPy value; its dtype and shape count
                names[name] = {"kind": "key", "dtype": str(value.dtype), "shape": list(value.shape)}
                continue
            try:
                array = np.asarray(value)
            except Exception:  # a tracer leaked out of a transformation (the Sharp Bits page saves one)
                names[name] = {"kind": "tracer", "dtype": str(value.dtype), "shape": list(value.shape)}
                continue
            if array.dtype != object:  # e.g. plt.subplots' array of Axes: no values to compare
                arrays[f"{index}/{name}"] = array
            names[name] = {"kind": _kind(value), "dtype": str(array.dtype), "shape": list(array.shape)}
        records.append({
            "id": cell_id,
            "stdout": _renumber_vars(ADDRESS.sub(" at 0x?", out.getvalue())),
            "error": error,
            "arrays": names,
            "figures": _figures(index, arrays),
        })
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cells.json").write_text(json.dumps(records, indent=1), encoding="utf-8")
    np.savez(args.out / "arrays.npz", **arrays)


if __name__ == "__main__":
    main()
