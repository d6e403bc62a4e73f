"""The case corpus (``spec/cases/``): jaxprs in text form with descriptions of their inputs.

Each case is two files side by side in a group directory
(``primitives/``, ``control_flow/``, ``programs/``):

* ``NAME.jaxpr``: the program, in the jaxpr text format (``spec/jaxpr.md``);
  it has no constvars (every array is an input).
* ``NAME.json``: ``{"about": ..., "x64": bool, "seed": int, "inputs": [...]}``
  with one description per input: ``shape``, ``dtype`` and ``values``, one of

  - ``"normal"`` (``scale``, default 1): standard normal values times scale;
  - ``"uniform"`` (``low``, ``high``): uniform in [low, high);
  - ``"integers"`` (``low``, ``high``): integers in [low, high], inclusive;
  - ``"given"`` (``data``): the values themselves, a nested list; floats may
    be written ``"nan"``, ``"inf"``, ``"-inf"`` or ``"-0.0"``.

  Input ``i`` draws from ``numpy.random.default_rng([seed, i])``.

The expected outputs are not stored: the reference backend computes them
when a check runs, and any backend must reproduce them within the
tolerances (``minijax.testing.tolerances``). ``spec/cases/generate.py``
(re)writes the files from the minijax programs they come from.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.config import enable_x64
from minijax.jaxpr import ClosedJaxpr
from minijax.jaxpr_parse import parse_jaxpr
from minijax.testing.checks import Check, primitives_in

NDArray = np.ndarray[Any, Any]

VALUE_KINDS = ("normal", "uniform", "integers", "given")
_SPECIAL = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf, "-0.0": -0.0}


def default_directory() -> pathlib.Path | None:
    """``$MINIJAX_CASES`` if set, else ``spec/cases`` of the source tree minijax runs from (None if absent)."""
    env = os.environ.get("MINIJAX_CASES")
    if env:
        return pathlib.Path(env)
    here = pathlib.Path(__file__).resolve().parent.parent.parent / "spec" / "cases"
    return here if here.is_dir() else None


def _dtype(name: str) -> np.dtype[Any]:
    return np.dtype(dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _given(data: Any) -> Any:
    if isinstance(data, list):
        return [_given(d) for d in data]
    return _SPECIAL.get(data, data) if isinstance(data, str) else data


def make_input(spec: dict[str, Any], rng: np.random.Generator) -> NDArray:
    """One input array from its description (see the module doc)."""
    shape = tuple(int(d) for d in spec["shape"])
    dtype = _dtype(spec["dtype"])
    kind = spec["values"]
    if kind == "normal":
        x: Any = rng.standard_normal(shape) * float(spec.get("scale", 1.0))
    elif kind == "uniform":
        x = rng.uniform(float(spec["low"]), float(spec["high"]), shape)
    elif kind == "integers":
        x = rng.integers(int(spec["low"]), int(spec["high"]), shape, endpoint=True)
    elif kind == "given":
        with np.errstate(over="ignore", invalid="ignore"):
            x = np.array(_given(spec["data"]), dtype=np.float64 if dtype.kind in "fV" else object)
        if x.shape != shape:
            raise ValueError(f"a given input has shape {x.shape}, but its description says {shape}")
    else:
        raise ValueError(f"unknown kind of values {kind!r}; the kinds are {list(VALUE_KINDS)}")
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(np.asarray(x).astype(dtype))


def describe_given(x: NDArray) -> dict[str, Any]:
    """The description of an input whose values are given (NaN and infinities as strings)."""
    x = np.asarray(x)

    def item(v: Any) -> Any:
        if isinstance(v, float):
            if np.isnan(v):
                return "nan"
            if np.isinf(v):
                return "inf" if v > 0 else "-inf"
            if v == 0 and np.signbit(v):
                return "-0.0"
        return v

    as_python = x.astype(np.float64).tolist() if dtypes.issubdtype(x.dtype, np.floating) else x.tolist()

    def walk(v: Any) -> Any:
        return [walk(i) for i in v] if isinstance(v, list) else item(v)

    return {"shape": list(x.shape), "dtype": x.dtype.name, "values": "given", "data": walk(as_python)}


@dataclasses.dataclass(frozen=True)
class CorpusCase:
    """One case of the corpus: where its files are, and what its description says."""

    name: str  # "group/name"
    jaxpr_path: pathlib.Path
    about: str
    x64: bool
    seed: int
    inputs: tuple[dict[str, Any], ...]

    def jaxpr(self) -> ClosedJaxpr:
        with enable_x64(self.x64):
            parsed = parse_jaxpr(self.jaxpr_path.read_text())
        if not isinstance(parsed, ClosedJaxpr):
            raise ValueError(f"{self.jaxpr_path}: a corpus jaxpr has no constvars (pass every array as an input)")
        return parsed

    def make_inputs(self) -> list[NDArray]:
        with enable_x64(self.x64):
            return [make_input(spec, np.random.default_rng([self.seed, i])) for i, spec in enumerate(self.inputs)]

    def check(self) -> Check:
        args = self.make_inputs()
        dtype = args[0].dtype.name if args else "-"
        return Check("program", self.name, dtype, self.jaxpr(), args, self.x64)


def load_case(jaxpr_path: pathlib.Path, root: pathlib.Path) -> CorpusCase:
    meta = json.loads(jaxpr_path.with_suffix(".json").read_text())
    name = jaxpr_path.relative_to(root).with_suffix("").as_posix()
    inputs = tuple(meta["inputs"])
    for i, spec in enumerate(inputs):
        if spec.get("values") not in VALUE_KINDS:
            raise ValueError(f"{name}: input {i} has values {spec.get('values')!r}; the kinds are {list(VALUE_KINDS)}")
    return CorpusCase(name, jaxpr_path, str(meta.get("about", "")), bool(meta.get("x64", False)),
                      int(meta.get("seed", 0)), inputs)  # fmt: skip


def load_corpus(directory: pathlib.Path | None = None, only: Sequence[str] | None = None) -> list[CorpusCase]:
    """Every case under ``directory`` (default: ``default_directory()``), in name order.

    ``only``: keep the cases whose jaxpr applies one of these primitives.
    """
    root = directory or default_directory()
    if root is None:
        return []
    cases = [load_case(p, root) for p in sorted(root.rglob("*.jaxpr"))]
    if only:
        wanted = set(only)
        cases = [c for c in cases if wanted & {p.name for p in primitives_in(c.jaxpr().jaxpr)}]
    return cases


__all__ = ["VALUE_KINDS", "CorpusCase", "default_directory", "describe_given", "load_case", "load_corpus", "make_input"]
