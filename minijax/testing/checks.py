"""One conformance check: a jaxpr, its inputs, and how to judge a backend on them.

A ``Check`` is everything needed to decide whether a backend agrees with the
reference on one program: the jaxpr (no constants: every value is an
input), the input arrays, the x64 flag, and its ``kind``:

* ``primitive``: a one-equation jaxpr run eagerly (``Backend.prepare``) on
  the backend and on the reference; compared by the primitive's tolerance
  (``minijax.testing.tolerances.compare_primitive``).
* ``jit``: the same one-equation jaxpr compiled (``Backend.compile``, the jit
  path) on the backend and run eagerly on the reference (``--jit``: with one
  backend as both, its jit path against its eager path); judged as
  ``primitive`` is.
* ``program``: a whole jaxpr compiled (``Backend.compile``) on both;
  compared by ``compare_program`` (or by the primitive's tolerance when the
  jaxpr is one primitive applied to its inputs).
* ``jvp``, ``vjp``, ``transpose``, ``vmap``: a transformation law, with the
  transformed programs compiled on the backend (``minijax.testing.laws``).
* ``nested``: a random nesting of jit/jvp/grad/vmap/cond against its plain
  meaning (``minijax.testing.programs``).

``minijax.testing.runner.run_check`` returns an ``Outcome``; ``write_reproducer`` stores a check as a
directory (``jaxpr.txt``, ``inputs.npz``, ``check.json``, ``README.md``) that
``load_reproducer`` reads back, so that ``minijax replay DIR`` re-runs it and
prints the same verdict.
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import functools
import importlib
import json
import os
import pathlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import minijax.primitives
from minijax import dtypes
from minijax.backend import Backend, backend_names, get_backend
from minijax.config import x64_enabled
from minijax.core import Primitive, ShapedArray
from minijax.jaxpr import ClosedJaxpr, Jaxpr, Literal, subjaxprs
from minijax.testing.loading import (
    DEFAULT_MAX_BYTES,
    Fields,
    check_options,
    dtype_field,
    read_jaxpr,
    read_json_object,
    read_npz,
    shape_field,
)
from minijax.testing.tolerances import BOUND_OF, Agreement, compare_primitive, compare_program, tolerance

NDArray = np.ndarray[Any, Any]

KINDS = ("primitive", "jit", "program", "jvp", "vjp", "transpose", "vmap", "nested")


@dataclasses.dataclass
class Check:
    """A program, its inputs, and what to check about it (see the module doc)."""

    kind: str
    subject: str  # the primitive's name, the corpus case's name, or a program's label
    dtype: str  # the dtype the case was drawn for ("-" when there is none)
    jaxpr: ClosedJaxpr  # without consts
    args: list[NDArray]
    x64: bool = False
    options: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Check: unknown kind {self.kind!r}; the kinds are {list(KINDS)}")
        if self.jaxpr.consts:
            raise ValueError("Check: the jaxpr must have no constants (pass them as inputs)")

    def label(self) -> str:
        return f"{self.kind} {self.subject} {self.dtype}"


@dataclasses.dataclass(frozen=True)
class Outcome:
    """How a check went: ``status`` is pass, fail, error (something raised) or unsupported."""

    status: str
    worst_ulps: float = 0.0
    message: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def failed(self) -> bool:
        return self.status in ("fail", "error")


def verdict(check: Check, outcome: Outcome, backend: str, reference: str) -> str:
    """The one-line verdict ``minijax replay`` prints (the same on every replay of the same check)."""
    head = f"{outcome.status.upper()}: {check.label()} on {backend!r} against {reference!r}"
    if outcome.passed:
        return f"{head}: worst error {outcome.worst_ulps:g} ulps"
    return f"{head}: {outcome.message}" if outcome.message else head


# ---------------------------------------------------------------------------
# Running programs on one backend, through the backend contract


def backend_named(name: str) -> Backend:
    """The backend registered as ``name``; ValueError listing the installed ones otherwise."""
    if name not in backend_names():
        raise ValueError(
            f"unknown backend {name!r}; installed backends: {', '.join(backend_names())}. A backend registers "
            "through the 'minijax.backends' entry-point group or minijax.backend.register_backend."
        )
    return get_backend(name)


def primitives_in(jaxpr: Jaxpr) -> list[Primitive]:
    """Every primitive ``jaxpr`` applies, nested jaxprs included, each once, in order of appearance."""
    seen: dict[str, Primitive] = {}

    def walk(j: Jaxpr) -> None:
        for eqn in j.eqns:
            seen.setdefault(eqn.primitive.name, eqn.primitive)
            for sub in subjaxprs(eqn.params):
                walk(sub)

    walk(jaxpr)
    return list(seen.values())


def unsupported_by(backend: Backend, jaxpr: Jaxpr) -> list[str]:
    """The primitives of ``jaxpr`` that ``backend.supports`` says it does not run."""
    return [p.name for p in primitives_in(jaxpr) if not backend.supports(p)]


def _inputs(backend: Backend, avals: Sequence[ShapedArray], args: Sequence[NDArray]) -> list[Any]:
    if len(args) != len(avals):
        raise TypeError(f"the program takes {len(avals)} inputs, got {len(args)}")
    bufs = []
    for i, (aval, x) in enumerate(zip(avals, args)):
        x = np.asarray(x)
        if x.shape != aval.shape or x.dtype != aval.dtype:
            raise TypeError(f"input {i} is {x.dtype.name}{list(x.shape)}, but the program takes {aval.str_short()}")
        bufs.append(backend.put(x if x.flags.c_contiguous else np.ascontiguousarray(x)))
    return bufs


def _outputs(backend: Backend, bufs: Sequence[Any]) -> list[NDArray]:
    return [np.array(backend.get(b), copy=True) for b in bufs]


class Unsupported(Exception):
    """The backend does not support a primitive the check needs (the check is reported unsupported)."""


def require_support(backend: Backend, jaxpr: Jaxpr) -> None:
    missing = unsupported_by(backend, jaxpr)
    if missing:
        raise Unsupported(f"{backend.name!r} does not support {', '.join(missing)}")


class Compiled:
    """A jaxpr compiled once on a backend, called on host arrays."""

    def __init__(self, backend: Backend, closed: ClosedJaxpr) -> None:
        require_support(backend, closed.jaxpr)
        self.backend = backend
        self.closed = closed
        self.executable = compile_once(backend, closed)

    def __call__(self, *args: NDArray) -> list[NDArray]:
        return _outputs(self.backend, self.executable(_inputs(self.backend, self.closed.in_avals, args)))


# Compiling is most of a conformance run's time (XLA: ~35 ms of CPU a program), and the
# laws and programs of a run compile the same program again and again: the same drawn
# shapes in another draw, the reference's program of a check, the jvp program of a law that
# an earlier draw already built. A program is its printed jaxpr (spec/jaxpr.md: the text
# holds every param and literal exactly, which is what reproducers rely on), so a program
# whose text was compiled before on the same backend reuses that executable. Programs whose
# text may not say everything (a constant, a Python callable in a param) are compiled anew.
_EXECUTABLES: collections.OrderedDict[tuple[Backend, bool, str], Any] = collections.OrderedDict()
EXECUTABLE_CACHE_SIZE = 256
compile_counts = {"compiles": 0, "reused": 0}


def program_key(closed: ClosedJaxpr) -> str | None:
    """The text that identifies ``closed`` as a program, or None when its text may not."""
    if closed.consts or not _plain_params(closed.jaxpr):
        return None
    return str(closed.jaxpr)


def _plain_params(jaxpr: Jaxpr) -> bool:
    for eqn in jaxpr.eqns:
        for value in eqn.params.values():
            if not _plain_value(value):
                return False
    return True


def _plain_value(value: Any) -> bool:
    if isinstance(value, ClosedJaxpr):
        return not value.consts and _plain_params(value.jaxpr)
    if isinstance(value, Jaxpr):
        return _plain_params(value)
    if isinstance(value, (tuple, list)):
        return all(_plain_value(v) for v in value)
    if isinstance(value, dict):
        return all(_plain_value(v) for v in value.values())
    return not callable(value) or isinstance(value, (type, np.dtype))


def compile_once(backend: Backend, closed: ClosedJaxpr) -> Any:
    """``backend.compile(closed)``, reusing the executable of an identical program compiled before."""
    key_text = program_key(closed)
    if key_text is None:
        compile_counts["compiles"] += 1
        return backend.compile(closed)
    key = (backend, x64_enabled(), key_text)
    executable = _EXECUTABLES.get(key)
    if executable is not None:
        _EXECUTABLES.move_to_end(key)
        compile_counts["reused"] += 1
        return executable
    compile_counts["compiles"] += 1
    executable = backend.compile(closed)
    _EXECUTABLES[key] = executable
    if len(_EXECUTABLES) > EXECUTABLE_CACHE_SIZE:
        _EXECUTABLES.popitem(last=False)
    return executable


def clear_compiled() -> None:
    """Forget the executables ``compile_once`` keeps (the end of a run)."""
    _EXECUTABLES.clear()


class Eager:
    """One primitive prepared once on a backend (the eager path), called on host arrays."""

    def __init__(self, backend: Backend, closed: ClosedJaxpr) -> None:
        (eqn,) = closed.jaxpr.eqns
        require_support(backend, closed.jaxpr)
        self.backend = backend
        self.in_avals = [a.aval for a in eqn.invars]
        self.runner = backend.prepare(eqn.primitive, dict(eqn.params), self.in_avals, [v.aval for v in eqn.outvars])

    def __call__(self, *args: NDArray) -> list[NDArray]:
        return _outputs(self.backend, self.runner(_inputs(self.backend, self.in_avals, args)))


def one_primitive(closed: ClosedJaxpr) -> bool:
    """Whether the jaxpr is one first-order equation reading its inputs in order and returning its results."""
    j = closed.jaxpr
    if len(j.eqns) != 1:
        return False
    eqn = j.eqns[0]
    return (
        not subjaxprs(eqn.params)
        and not any(isinstance(a, Literal) for a in eqn.invars)
        and list(eqn.invars) == list(j.invars)
        and list(eqn.outvars) == list(j.outvars)
    )


# ---------------------------------------------------------------------------
# Families: which module of minijax.primitives defines a primitive


@functools.cache
@functools.cache
def families() -> dict[str, str]:
    """primitive name -> the module of ``minijax.primitives`` that defines it.

    Modules re-export primitives of the families below them (``reductions``
    lists ``reduce_sum_p``, defined in ``structural``): a name a module
    imports does not make the primitive its own, and tables (dicts) count
    only for primitives defined nowhere else.
    """
    found: dict[str, str] = {}
    tables: list[tuple[str, dict[Any, Any]]] = []
    for family in minijax.primitives.FAMILIES:
        module = importlib.import_module(f"minijax.primitives.{family}")
        imported = _imported_names(pathlib.Path(str(module.__file__)))
        for name, value in vars(module).items():
            if isinstance(value, dict):
                tables.append((family, value))
            elif isinstance(value, Primitive) and name not in imported:
                found.setdefault(value.name, family)
    for module_name, table in tables:
        for item in table.values():
            if isinstance(item, Primitive):
                found.setdefault(item.name, module_name)
    return found


def _imported_names(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom) for alias in node.names}


def family(name: str) -> str:
    return families().get(name, "")


# ---------------------------------------------------------------------------
# Running the checks that need nothing but a backend (the others are in
# minijax.testing.laws and programs; minijax.testing.runner dispatches)


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else "(no message)"


def run_primitive(check: Check, backend: Backend, reference: Backend) -> Outcome:
    """One primitive run eagerly on ``backend``, against the reference run eagerly."""
    return _against_eager_reference(check, Eager(backend, check.jaxpr), reference)


def run_jit(check: Check, backend: Backend, reference: Backend) -> Outcome:
    """One primitive compiled on ``backend`` (``--jit``), against the reference run eagerly."""
    return _against_eager_reference(check, Compiled(backend, check.jaxpr), reference)


def _against_eager_reference(check: Check, run: Callable[..., list[NDArray]], reference: Backend) -> Outcome:
    (eqn,) = check.jaxpr.jaxpr.eqns
    ref = Eager(reference, check.jaxpr)
    expected = ref(*check.args)
    actual = run(*check.args)
    got = compare_primitive(eqn.primitive.name, eqn.params, check.args, actual, expected, lambda ops: ref(*ops))
    return Outcome("pass" if got.ok else "fail", got.worst_ulps, got.detail)


def run_program(check: Check, backend: Backend, reference: Backend) -> Outcome:
    ref = Compiled(reference, check.jaxpr)
    expected = ref(*check.args)
    actual = Compiled(backend, check.jaxpr)(*check.args)
    if one_primitive(check.jaxpr):
        eqn = check.jaxpr.jaxpr.eqns[0]
        got = compare_primitive(eqn.primitive.name, eqn.params, check.args, actual, expected, lambda ops: ref(*ops))
    else:
        got = compare_program_outputs(check.jaxpr, check.args, actual, expected, reference)
    return Outcome("pass" if got.ok else "fail", got.worst_ulps, got.detail)


def _exact(name: str, dtype: np.dtype[Any]) -> bool:
    """Whether every conforming backend computes ``name``'s results of ``dtype`` bit for bit."""
    return name not in BOUND_OF and tolerance(name, dtype).exact


def compare_program_outputs(
    closed: ClosedJaxpr, args: Sequence[NDArray], actual: list[NDArray], expected: list[NDArray], reference: Backend
) -> Agreement:
    """``compare_program``, except that an output one primitive computes from values every
    conforming backend computes exactly (inputs, literals, exact results of such values) may
    also agree by that primitive's own rule (``compare_primitive``).

    Normwise, an output is compared relative to its own magnitude, and some primitives are
    allowed an absolute error (lgamma near its zeros at 1 and 2: XLA's lgamma(1.940907) is
    567 float32 ulps from the reference, within 64 eps), which no relative rule admits.
    """
    normwise = compare_program(actual, expected)
    if normwise.ok or len(actual) != len(expected):
        return normwise
    j = closed.jaxpr
    exact: set[Any] = {*j.invars, *j.constvars}
    producer: dict[Any, Any] = {}
    for eqn in j.eqns:
        for v in eqn.outvars:
            producer[v] = eqn
        if not subjaxprs(eqn.params) and all(isinstance(a, Literal) or a in exact for a in eqn.invars):
            exact.update(v for v in eqn.outvars if _exact(eqn.primitive.name, v.aval.dtype))
    worst = 0.0
    for out, a, e in zip(j.outvars, actual, expected):
        one = compare_program([a], [e])
        if not one.ok:
            made_by = producer.get(out) if not isinstance(out, Literal) else None
            if (
                made_by is None
                or made_by.primitive.multiple_results
                or subjaxprs(made_by.params)
                or not all(isinstance(x, Literal) or x in exact for x in made_by.invars)
            ):
                return normwise
            operands = _operands(closed, args, made_by, reference)
            one = compare_primitive(made_by.primitive.name, made_by.params, operands, [a], [e])
            if not one.ok:
                return normwise
        worst = max(worst, one.worst_ulps)
    return Agreement(True, worst)


def _operands(closed: ClosedJaxpr, args: Sequence[NDArray], eqn: Any, reference: Backend) -> list[NDArray]:
    """The values of ``eqn``'s operands in ``closed`` on ``args``, as the reference computes them."""
    j = closed.jaxpr
    read = [x for x in eqn.invars if not isinstance(x, Literal)]
    values = iter(Compiled(reference, ClosedJaxpr(Jaxpr(j.constvars, j.invars, read, j.eqns), closed.consts))(*args))
    return [np.asarray(x.val) if isinstance(x, Literal) else next(values) for x in eqn.invars]


def import_modules(names: Sequence[str]) -> None:
    """Import each module (one that registers a backend with ``register_backend``, say)."""
    for name in names:
        if name:
            importlib.import_module(name)


# ---------------------------------------------------------------------------
# Reproducers

# NumPy's .npz keeps the standard dtypes; bfloat16 is stored as its bits.
_BITS_OF = {np.dtype(dtypes.bfloat16): np.dtype(np.uint16)}
REPRODUCER_FILES = ("README.md", "check.json", "jaxpr.txt", "inputs.npz")
MAX_INPUTS = 1024  # inputs of one check (a program of the suite takes a handful)


def write_reproducer(check: Check, outcome: Outcome, directory: pathlib.Path, backend: str, reference: str) -> pathlib.Path:
    """Write ``check`` to ``directory`` (created) so that ``minijax replay`` re-runs it."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "jaxpr.txt").write_text(str(check.jaxpr.jaxpr) + "\n")
    arrays = {}
    described = []
    for i, x in enumerate(check.args):
        x = np.asarray(x)
        stored = x.view(_BITS_OF[x.dtype]) if x.dtype in _BITS_OF else x
        arrays[f"arg{i}"] = stored
        described.append({"name": f"arg{i}", "dtype": x.dtype.name, "shape": list(x.shape)})
    np.savez(directory / "inputs.npz", **arrays)  # type: ignore[arg-type]
    line = verdict(check, outcome, backend, reference)
    meta = {
        "kind": check.kind,
        "subject": check.subject,
        "dtype": check.dtype,
        "x64": check.x64,
        "options": check.options,
        "inputs": described,
        "backend": backend,
        "reference": reference,
        "verdict": line,
    }
    (directory / "check.json").write_text(json.dumps(meta, indent=2, default=_jsonable) + "\n")
    (directory / "README.md").write_text(
        f"Replay: `minijax replay {directory}`\n\n"
        f"{line}\n\n"
        "Files: `jaxpr.txt` (the program), `inputs.npz` (its inputs arg0, arg1, ... in order; bfloat16 stored as "
        "uint16 bits), `check.json` (the kind of check, the backend and the verdict above).\n"
    )
    return directory


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.dtype):
        return value.name
    raise TypeError(f"check options: {value!r} is not JSON-serializable")


def load_reproducer(directory: pathlib.Path, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[Check, dict[str, Any]]:
    """The check stored in ``directory`` and its metadata (``check.json``).

    The directory may come from anyone: every file is validated before it is
    acted on (``minijax.testing.loading``), and a reproducer whose arrays or
    program would need more than ``max_bytes`` is refused. Raises
    FileNotFoundError when it is not a reproducer directory and
    ``ReproducerError`` (a ValueError) saying what is wrong otherwise.
    """
    if not directory.is_dir():
        raise FileNotFoundError(f"{directory} is not a reproducer: it is not a directory")
    missing = [f for f in REPRODUCER_FILES[1:] if not os.path.lexists(directory / f)]
    if missing:
        raise FileNotFoundError(f"{directory} is not a reproducer: {', '.join(missing)} missing")
    where = str(directory / "check.json")
    meta = read_json_object(directory / "check.json", max_bytes)
    f = Fields(meta, where)
    f.only(["kind", "subject", "dtype", "x64", "options", "inputs", "backend", "reference", "verdict"])
    kind = f.string("kind")
    if kind not in KINDS:
        raise f.fail(f"'kind' is {kind!r}, not a kind of check ({', '.join(KINDS)})")
    for key in ("subject", "dtype", "backend", "reference", "verdict"):
        f.string(key)
    x64 = f.boolean("x64")
    options = f.object("options")
    stored: list[tuple[str, np.dtype[Any], tuple[int, ...]]] = []
    specs = []
    for i, item in enumerate(f.array("inputs", MAX_INPUTS)):
        if not isinstance(item, dict):
            raise f.fail(f"'inputs'[{i}] must be an object {{\"name\", \"dtype\", \"shape\"}}")
        g = Fields(item, f"{where}: inputs[{i}]")
        g.only(["name", "dtype", "shape"])
        name, dt, shape = g.string("name"), dtype_field(g, "dtype"), shape_field(g, "shape")
        if any(name == n for n, _, _ in stored):
            raise g.fail(f"the name {name!r} is used twice")
        stored.append((name, _BITS_OF.get(dt, dt), shape))
        specs.append((dt, shape))
    closed = read_jaxpr(directory / "jaxpr.txt", x64, max_bytes)
    check_options(where, kind, options, closed, specs, max_bytes)
    raw = read_npz(directory / "inputs.npz", stored, max_bytes)
    args = [np.asarray(x.view(dt) if x.dtype != dt else x) for x, (dt, _) in zip(raw, specs)]
    return Check(kind, meta["subject"], meta["dtype"], closed, args, x64, options), meta


__all__ = [
    "KINDS",
    "REPRODUCER_FILES",
    "Check",
    "Compiled",
    "Eager",
    "Outcome",
    "Unsupported",
    "clear_compiled",
    "compile_once",
    "compile_counts",
    "program_key",
    "backend_named",
    "import_modules",
    "load_reproducer",
    "one_primitive",
    "primitives_in",
    "require_support",
    "run_primitive",
    "run_program",
    "families",
    "family",
    "first_line",
    "unsupported_by",
    "verdict",
    "write_reproducer",
]
