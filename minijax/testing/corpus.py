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
import os
import pathlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.config import enable_x64
from minijax.jaxpr import ClosedJaxpr
from minijax.jaxpr_parse import parse_jaxpr
from minijax.testing.checks import MAX_INPUTS, Check, primitives_in
from minijax.testing.defaults import DEFAULT_MAX_BYTES
from minijax.testing.loading import (
    Fields,
    ReproducerError,
    check_options,
    dtype_field,
    nbytes,
    read_jaxpr,
    read_json_object,
    shape_field,
    within,
)

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


def load_case(jaxpr_path: pathlib.Path, root: pathlib.Path, max_bytes: int = DEFAULT_MAX_BYTES) -> CorpusCase:
    """One case, validated (``minijax.testing.loading``): every field typed, the jaxpr parsed and
    type-checked, the inputs matching its inputs, nothing needing more than ``max_bytes``."""
    json_path = jaxpr_path.with_suffix(".json")
    name = jaxpr_path.relative_to(root).with_suffix("").as_posix()
    where = str(json_path)
    f = Fields(read_json_object(json_path, max_bytes), where)
    f.only(["inputs"], ["about", "x64", "seed"])
    about = f.string("about") if "about" in f.obj else ""
    x64 = f.boolean("x64") if "x64" in f.obj else False
    seed = f.integer("seed", 0, 2**63 - 1) if "seed" in f.obj else 0
    inputs = []
    total = 0
    for i, spec in enumerate(f.array("inputs", MAX_INPUTS)):
        if not isinstance(spec, dict):
            raise f.fail(f"'inputs'[{i}] must be an object {{\"shape\", \"dtype\", \"values\", ...}}")
        g = Fields(spec, f"{where}: inputs[{i}]")
        shape, dtype = _input_spec(g)
        # The random kinds draw float64 values first, then cast.
        total += nbytes(shape, dtype) + (nbytes(shape, np.dtype(np.float64)) if spec["values"] != "given" else 0)
        within(total, max_bytes, f"{where}: the inputs", "need")
        inputs.append((dtype, shape))
    closed = read_jaxpr(jaxpr_path, x64, max_bytes)
    check_options(str(jaxpr_path), "program", {}, closed, inputs, max_bytes)
    return CorpusCase(name, jaxpr_path, about, x64, seed, tuple(f.obj["inputs"]))


def _input_spec(g: Fields) -> tuple[tuple[int, ...], np.dtype[Any]]:
    if "values" not in g.obj:
        raise g.fail("the field 'values' is missing")
    kind = g.obj["values"]
    if not isinstance(kind, str) or kind not in VALUE_KINDS:
        raise g.fail(f"'values' is {kind!r}; the kinds are {list(VALUE_KINDS)}")
    own = {"normal": [], "uniform": ["low", "high"], "integers": ["low", "high"], "given": ["data"]}[kind]
    g.only(["shape", "dtype", "values", *own], ["scale"] if kind == "normal" else [])
    shape, dtype = shape_field(g, "shape"), dtype_field(g, "dtype")
    if kind == "normal" and "scale" in g.obj:
        g.number("scale")
    elif kind == "uniform":
        if not g.number("low") <= g.number("high"):
            raise g.fail("'low' must not exceed 'high'")
    elif kind == "integers":
        lo, hi = -(2**63), 2**63 - 1
        if dtype.kind in "iub":
            info = (0, 1) if dtype.kind == "b" else (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
            lo, hi = max(lo, info[0]), min(hi, info[1])
        if not g.integer("low", lo, hi) <= g.integer("high", lo, hi):
            raise g.fail("'low' must not exceed 'high'")
    elif kind == "given":
        _check_given(g, g.obj["data"], shape, dtype, "'data'")
    return shape, dtype


def _check_given(g: Fields, data: Any, shape: tuple[int, ...], dtype: np.dtype[Any], what: str) -> None:
    """``data`` is a nested list of ``shape`` whose leaves are values of ``dtype``."""
    if shape:
        if not isinstance(data, list) or len(data) != shape[0]:
            got = f"{len(data)} entries" if isinstance(data, list) else _describe(data)
            raise g.fail(f"{what} must be a list of {shape[0]} entries (the shape says {list(shape)}), got {got}")
        for k, item in enumerate(data):
            _check_given(g, item, shape[1:], dtype, f"{what}[{k}]")
        return
    if dtype.kind == "f" or dtype.name == "bfloat16":
        ok = (isinstance(data, (int, float)) and not isinstance(data, bool)) or (isinstance(data, str) and data in _SPECIAL)
    elif dtype.kind == "b":
        ok = isinstance(data, bool) or (isinstance(data, int) and data in (0, 1))
    else:
        info = np.iinfo(dtype)
        ok = isinstance(data, int) and not isinstance(data, bool) and int(info.min) <= data <= int(info.max)
    if not ok:
        raise g.fail(f"{what} is {_describe(data)}, not a {dtype.name} value")


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def load_corpus(
    directory: pathlib.Path | None = None, only: Sequence[str] | None = None, max_bytes: int = DEFAULT_MAX_BYTES
) -> list[CorpusCase]:
    """Every case under ``directory`` (default: ``default_directory()``), in name order, each validated
    by ``load_case`` (ReproducerError, a ValueError, for the first that is not valid).

    ``only``: keep the cases whose jaxpr applies one of these primitives.
    """
    root = directory or default_directory()
    if root is None:
        return []
    if not root.is_dir():
        raise ReproducerError(f"{root}: the case corpus is not a directory")
    cases = [load_case(p, root, max_bytes) for p in sorted(root.rglob("*.jaxpr"))]
    if only:
        wanted = set(only)
        cases = [c for c in cases if wanted & {p.name for p in primitives_in(c.jaxpr().jaxpr)}]
    return cases


__all__ = ["VALUE_KINDS", "CorpusCase", "default_directory", "describe_given", "load_case", "load_corpus", "make_input"]
