"""Reading reproducers and case files that may come from anyone: validate, then allocate.

A reproducer directory (``jaxpr.txt``, ``inputs.npz``, ``check.json``) or a
corpus case (``NAME.jaxpr`` and ``NAME.json``) is data from outside: a shared
bug report, a downloaded corpus. Everything it says is checked before minijax
acts on it, in an order that never spends more than ``max_bytes`` on a file's
say-so:

* each file exists, is a regular file no larger than ``max_bytes``, and text
  files are UTF-8;
* every field of the JSON has the type and range it must have (``"x64":
  "no"`` is an error, not ``True``), and no field is missing or unknown;
* the jaxpr is parsed (``JaxprSyntaxError`` becomes an error message) and
  type-checked (``check_jaxpr``), and every abstract value in it, nested
  jaxprs included, fits in ``max_bytes``, as does their total times any batch
  the check adds (a vmap's ``axis_size``, a nesting's vmaps);
* each ``.npy`` member of ``inputs.npz`` is judged by its zip entry and its
  header (shape, dtype, declared size) before a byte of its data is
  decompressed; object and structured dtypes are refused (no pickles);
* inputs must match the jaxpr's inputs in shape and dtype, batch axes
  included.

Every failure is a ``ReproducerError`` whose message names the file and what
is wrong with it; ``minijax replay`` and ``minijax conformance --cases`` print
it after their name and exit with status 2. Sizes are exact Python integers
(``math.prod``), so no shape overflows into a small number.
"""

from __future__ import annotations

import errno
import json
import math
import pathlib
import stat
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from minijax import dtypes
from minijax.config import enable_x64
from minijax.core import ShapedArray
from minijax.jaxpr import ClosedJaxpr, Jaxpr, Literal
from minijax.jaxpr_check import JaxprTypeError, check_jaxpr
from minijax.jaxpr_parse import JaxprSyntaxError, parse_jaxpr
from minijax.testing.defaults import DEFAULT_MAX_BYTES, TRANSFORMS

NDArray = np.ndarray[Any, Any]

# The laws run the program once per batch element (vmap) or per finite
# difference (a nesting's plain meaning) in a Python loop; the suite draws
# batches of 1 to 3. Past this many runs a replay takes minutes whatever its
# size in bytes, so a reproducer asking for more is refused.
MAX_RUNS = 4096
MAX_NESTING = 8  # transformations in a nested check (the suite draws up to 3)
MAX_RANK = 32  # dimensions of an input (NumPy's own limit is 64)

DTYPE_NAMES: dict[str, np.dtype[Any]] = {d.name: d for d in dtypes.supported_dtypes()}


class ReproducerError(ValueError):
    """A reproducer or case file is malformed, inconsistent, or asks for more than the limit."""


# ---------------------------------------------------------------------------
# Files


def _regular_file(path: pathlib.Path, max_bytes: int) -> int:
    """The size of ``path``, which must be a regular file of at most ``max_bytes``."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ReproducerError(f"{path}: no such file") from None
    except OSError as e:
        why = "a symbolic link loop" if e.errno == errno.ELOOP else (e.strerror or type(e).__name__)
        raise ReproducerError(f"{path}: cannot be read ({why})") from None
    if stat.S_ISDIR(info.st_mode):
        raise ReproducerError(f"{path}: is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise ReproducerError(f"{path}: is not a regular file")
    if info.st_size > max_bytes:
        raise ReproducerError(f"{path}: {info.st_size} bytes, more than the limit of {max_bytes} (--max-bytes)")
    return info.st_size


def read_text(path: pathlib.Path, max_bytes: int) -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes``."""
    _regular_file(path, max_bytes)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ReproducerError(f"{path}: cannot be read ({e.strerror or type(e).__name__})") from None
    if len(data) > max_bytes:  # it grew since it was measured
        raise ReproducerError(f"{path}: more than the limit of {max_bytes} bytes (--max-bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ReproducerError(f"{path}: is not UTF-8 text (byte {e.start} is {data[e.start]:#04x})") from None


def read_json_object(path: pathlib.Path, max_bytes: int) -> dict[str, Any]:
    text = read_text(path, max_bytes)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise ReproducerError(f"{path}: not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    except RecursionError:
        raise ReproducerError(f"{path}: the JSON is nested too deeply") from None
    except ValueError as e:  # an integer with too many digits for Python to convert
        raise ReproducerError(f"{path}: not valid JSON: {e}") from None
    if not isinstance(value, dict):
        raise ReproducerError(f"{path}: must hold a JSON object {{...}}, not {_json_type(value)}")
    return value


# ---------------------------------------------------------------------------
# Fields


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {_short(value)}"
    return "a list" if isinstance(value, list) else "an object"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class Fields:
    """Typed access to one JSON object, each wrong field reported by its path."""

    def __init__(self, obj: dict[str, Any], where: str) -> None:
        self.obj = obj
        self.where = where

    def fail(self, message: str) -> ReproducerError:
        return ReproducerError(f"{self.where}: {message}")

    def only(self, required: Sequence[str], optional: Sequence[str] = ()) -> None:
        missing = [k for k in required if k not in self.obj]
        if missing:
            raise self.fail(f"the field {missing[0]!r} is missing")
        unknown = [k for k in self.obj if k not in required and k not in optional]
        if unknown:
            raise self.fail(f"unexpected field {_short(unknown[0])} (the fields are {', '.join(list(required) + list(optional))})")

    def get(self, key: str) -> Any:
        return self.obj[key]

    def string(self, key: str) -> str:
        value = self.obj[key]
        if not isinstance(value, str):
            raise self.fail(f"{key!r} must be a string, got {_json_type(value)}")
        return value

    def boolean(self, key: str) -> bool:
        value = self.obj[key]
        if not isinstance(value, bool):
            raise self.fail(f"{key!r} must be true or false, got {_json_type(value)}")
        return value

    def integer(self, key: str, low: int, high: int) -> int:
        return _integer(self.obj[key], f"{key!r}", low, high, self.fail)

    def number(self, key: str) -> float:
        value = self.obj[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.fail(f"{key!r} must be a finite number, got {_json_type(value)}")
        return float(value)

    def array(self, key: str, max_length: int | None = None) -> list[Any]:
        value = self.obj[key]
        if not isinstance(value, list):
            raise self.fail(f"{key!r} must be a list, got {_json_type(value)}")
        if max_length is not None and len(value) > max_length:
            raise self.fail(f"{key!r} has {len(value)} entries, at most {max_length} allowed")
        return value

    def object(self, key: str) -> dict[str, Any]:
        value = self.obj[key]
        if not isinstance(value, dict):
            raise self.fail(f"{key!r} must be an object {{...}}, got {_json_type(value)}")
        return value


def _integer(value: Any, what: str, low: int, high: int, fail: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(f"{what} must be an integer, got {_json_type(value)}")
    if not low <= value <= high:
        raise fail(f"{what} is {_short(value)}, outside [{low}, {high}]")
    return value


def dtype_field(f: Fields, key: str) -> np.dtype[Any]:
    name = f.string(key)
    if name not in DTYPE_NAMES:
        raise f.fail(f"{key!r} is {_short(name)}, not a dtype minijax knows ({', '.join(DTYPE_NAMES)})")
    return DTYPE_NAMES[name]


def shape_field(f: Fields, key: str) -> tuple[int, ...]:
    dims = f.array(key, MAX_RANK)
    return tuple(_integer(d, f"{key!r}[{i}]", 0, 2**63 - 1, f.fail) for i, d in enumerate(dims))


# ---------------------------------------------------------------------------
# Sizes


def nbytes(shape: Sequence[int], dtype: Any) -> int:
    """Bytes of an array of this shape and dtype, exactly (a zero-sized dtype counts as one byte)."""
    return math.prod(int(d) for d in shape) * max(1, int(getattr(dtype, "itemsize", 1)))


def within(total: int, max_bytes: int, what: str, verb: str = "needs") -> None:
    if total > max_bytes:
        raise ReproducerError(f"{what} {verb} {total} bytes, more than the limit of {max_bytes} (--max-bytes)")


def jaxpr_avals(jaxpr: Jaxpr) -> Iterator[ShapedArray]:
    """Every abstract value in ``jaxpr``: its binders, outputs, equations' results, and the same
    in every jaxpr its params hold (branches, bodies, called and custom-rule jaxprs), however nested."""
    stack = [jaxpr]
    seen: set[int] = set()
    while stack:
        j = stack.pop()
        if id(j) in seen:
            continue
        seen.add(id(j))
        for v in (*j.constvars, *j.invars):
            yield v.aval
        for atom in j.outvars:
            yield atom.aval
        for eqn in j.eqns:
            for atom in eqn.invars:
                if isinstance(atom, Literal):
                    yield atom.aval
            for v in eqn.outvars:
                yield v.aval
            stack.extend(_jaxprs_in(list(eqn.params.values())))


def _jaxprs_in(values: list[Any]) -> Iterator[Jaxpr]:
    while values:
        value = values.pop()
        if isinstance(value, ClosedJaxpr):
            yield value.jaxpr
        elif isinstance(value, Jaxpr):
            yield value
        elif isinstance(value, (tuple, list)):
            values.extend(value)
        elif isinstance(value, dict):
            values.extend(value.values())


def check_jaxpr_size(jaxpr: Jaxpr, max_bytes: int, where: str, batch: int = 1) -> None:
    """Each abstract value in ``jaxpr`` (nested ones too) under ``max_bytes``, and their total times ``batch``."""
    total = 0
    for aval in jaxpr_avals(jaxpr):
        size = nbytes(aval.shape, aval.dtype)
        within(size * batch, max_bytes, f"{where}: a value of type {aval.str_short()}" + (f" batched {batch} times" if batch > 1 else ""))
        total += size
    within(total * batch, max_bytes, f"{where}: the program's values" + (f" batched {batch} times" if batch > 1 else ""), "need")


def read_jaxpr(path: pathlib.Path, x64: bool, max_bytes: int) -> ClosedJaxpr:
    """Parse, type-check and size-check the jaxpr in ``path`` (it must have no constvars)."""
    text = read_text(path, max_bytes)
    try:
        with enable_x64(x64):
            parsed = parse_jaxpr(text)
    except JaxprSyntaxError as e:
        raise ReproducerError(f"{path}: {e}") from None
    if not isinstance(parsed, ClosedJaxpr):
        raise ReproducerError(f"{path}: the jaxpr has constvars; it must take every array as an input")
    try:
        with enable_x64(x64):
            check_jaxpr(parsed)
    except JaxprTypeError as e:
        raise ReproducerError(f"{path}: {e}") from None
    check_jaxpr_size(parsed.jaxpr, max_bytes, str(path))
    return parsed


# ---------------------------------------------------------------------------
# A check's options, against its jaxpr and inputs

InputSpec = tuple[np.dtype[Any], tuple[int, ...]]  # the dtype and shape an input has


def _same_inputs(where: str, avals: Sequence[ShapedArray], specs: Sequence[InputSpec], shapes: Sequence[tuple[int, ...]]) -> None:
    """The inputs (``specs``) have the dtypes of the jaxpr's inputs and the ``shapes`` the check expects."""
    if len(specs) != len(avals):
        raise ReproducerError(f"{where}: {len(specs)} inputs are listed, but the jaxpr takes {len(avals)}")
    for i, ((dt, shape), aval, want) in enumerate(zip(specs, avals, shapes)):
        if dt != aval.dtype or shape != want:
            raise ReproducerError(f"{where}: input {i} is {dt.name}{list(shape)}, but the jaxpr's input {i} is "
                                  f"{aval.str_short()}" + (f" (expected {list(want)} with the batch axis)" if want != aval.shape else ""))  # fmt: skip


def check_options(where: str, kind: str, options: dict[str, Any], closed: ClosedJaxpr, specs: Sequence[InputSpec],
                  max_bytes: int) -> None:  # fmt: skip
    """Validate a check's ``options`` for its ``kind``, and its inputs against the jaxpr; bound the
    program's size times the batch the check adds."""
    f = Fields(options, f"{where}: options")
    avals = closed.in_avals
    batch = 1
    if kind in ("primitive", "jit", "program"):
        f.only([])
        if kind in ("primitive", "jit") and len(closed.jaxpr.eqns) != 1:
            raise ReproducerError(f"{where}: a primitive check's jaxpr has one equation, this one has {len(closed.jaxpr.eqns)}")
        _same_inputs(where, avals, specs, [a.shape for a in avals])
    elif kind in ("jvp", "vjp", "transpose"):
        f.only(["positions"])
        positions = [_integer(p, f"'positions'[{i}]", 0, max(len(avals) - 1, 0), f.fail)
                     for i, p in enumerate(f.array("positions", len(avals)))]  # fmt: skip
        if len(set(positions)) != len(positions) or not avals:
            raise f.fail(f"'positions' must name distinct inputs of the jaxpr's {len(avals)}")
        _same_inputs(where, avals, specs, [a.shape for a in avals])
    elif kind == "vmap":
        f.only(["in_axes", "out_axes", "axis_size"])
        batch = f.integer("axis_size", 1, MAX_RUNS)
        in_axes = f.array("in_axes", len(avals))
        if len(in_axes) != len(avals):
            raise f.fail(f"'in_axes' has {len(in_axes)} entries, but the jaxpr takes {len(avals)} inputs")
        shapes = []
        for i, (axis, aval) in enumerate(zip(in_axes, avals)):
            if axis is None:
                shapes.append(aval.shape)
                continue
            d = _integer(axis, f"'in_axes'[{i}]", -aval.ndim - 1, aval.ndim, f.fail)
            d = d % (aval.ndim + 1)
            shapes.append((*aval.shape[:d], batch, *aval.shape[d:]))
        rank = min((a.ndim for a in closed.out_avals), default=0)
        f.integer("out_axes", -rank - 1, rank)
        _same_inputs(where, avals, specs, shapes)
    elif kind == "nested":
        f.only(["transforms"])
        transforms = f.array("transforms", MAX_NESTING)
        for i, t in enumerate(transforms):
            if not isinstance(t, str) or t not in TRANSFORMS:
                raise f.fail(f"'transforms'[{i}] is {_json_type(t)}; the transformations are {', '.join(TRANSFORMS)}")
        vmaps = transforms.count("vmap")
        if len(avals) != 1 or avals[0].ndim != 1 or len(specs) != 1 or len(specs[0][1]) != vmaps + 1:
            raise ReproducerError(f"{where}: a nested check's jaxpr takes one vector, and its input has one more "
                                  f"axis than there are vmaps ({vmaps})")  # fmt: skip
        batches = specs[0][1][:vmaps]
        _same_inputs(where, avals, specs, [(*batches, *avals[0].shape)])
        batch = math.prod(batches)
        runs = _plain_runs(list(transforms), specs[0][1])
        if runs > MAX_RUNS:
            raise ReproducerError(f"{where}: the plain meaning of {' of '.join(transforms)} on an input of shape "
                                  f"{list(specs[0][1])} runs the program {runs} times, more than {MAX_RUNS}")  # fmt: skip
    check_jaxpr_size(closed.jaxpr, max_bytes, where, batch)


def _plain_runs(transforms: list[str], shape: tuple[int, ...]) -> int:
    """How many times ``programs.plain`` runs the base program (vmap loops, finite differences)."""
    runs = 1
    for t in transforms:
        if t == "vmap":
            runs *= shape[0]
            shape = shape[1:]
        elif t == "jvp":
            runs *= 2
        elif t == "grad":
            runs *= 2 * math.prod(shape)
    return runs


# ---------------------------------------------------------------------------
# .npz members, judged by their headers


def read_npz(path: pathlib.Path, wanted: Sequence[tuple[str, np.dtype[Any], tuple[int, ...]]], max_bytes: int) -> list[NDArray]:
    """The arrays ``wanted`` (member name without ``.npy``, stored dtype, shape) from the .npz at ``path``.

    Every member's zip entry and .npy header are checked (sizes against
    ``max_bytes``, the dtype and shape against ``wanted``) before any data is
    decompressed; then each member is read into an array of exactly its size.
    """
    _regular_file(path, max_bytes)
    within(sum(nbytes(shape, dt) for _, dt, shape in wanted), max_bytes, f"{path}: the inputs", "need")
    try:
        with zipfile.ZipFile(path) as archive:
            members = _members(path, archive, [name for name, _, _ in wanted], max_bytes)
            headers = [_header(path, archive, members[name], dt, shape) for name, dt, shape in wanted]
            return [_data(path, archive, members[name], offset, dt, shape, fortran)
                    for (name, dt, shape), (offset, fortran) in zip(wanted, headers)]  # fmt: skip
    except (zipfile.BadZipFile, zlib.error, EOFError) as e:
        raise ReproducerError(f"{path}: not a readable .npz archive ({type(e).__name__}: {e})") from None
    except NotImplementedError as e:  # zipfile's word for a feature a member's local header asks for
        raise ReproducerError(f"{path}: a zip feature .npz files do not use ({e})") from None
    except OSError as e:  # the file was a regular file: a seek the directory asked for failed
        raise ReproducerError(f"{path}: not a readable .npz archive ({type(e).__name__}: {e})") from None


def _members(path: pathlib.Path, archive: zipfile.ZipFile, names: Sequence[str], max_bytes: int) -> dict[str, zipfile.ZipInfo]:
    infos = archive.infolist()
    by_name: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        if not info.filename.endswith(".npy"):
            raise ReproducerError(f"{path}: unexpected member {_short(info.filename)} (an .npz holds NAME.npy members)")
        name = info.filename[:-4]
        if name in by_name:
            raise ReproducerError(f"{path}: the member {_short(info.filename)} appears twice")
        if name not in names:
            raise ReproducerError(f"{path}: unexpected member {_short(info.filename)}; check.json lists {', '.join(names) or 'none'}")
        if info.flag_bits & 0x41:  # encrypted, or strongly encrypted
            raise ReproducerError(f"{path}: the member {_short(info.filename)} is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise ReproducerError(f"{path}: the member {_short(info.filename)} uses compression method "
                                  f"{info.compress_type}; .npz members are stored or deflated")  # fmt: skip
        within(info.file_size, max_bytes, f"{path}: the member {_short(info.filename)}")
        by_name[name] = info
    missing = [n for n in names if n not in by_name]
    if missing:
        raise ReproducerError(f"{path}: no member {missing[0]}.npy, which check.json lists")
    return by_name


def _header(path: pathlib.Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, want_dtype: np.dtype[Any],
            want_shape: tuple[int, ...]) -> tuple[int, bool]:  # fmt: skip
    """Check one member's .npy header; return where its data starts and whether it is Fortran-ordered."""
    where = f"{path}: {info.filename}"
    with archive.open(info) as stream:
        try:
            version = np.lib.format.read_magic(stream)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
            else:
                raise ReproducerError(f"{where}: .npy format version {version} is not read (1.0 and 2.0 are)")
        except ValueError as e:
            if isinstance(e, ReproducerError):
                raise
            raise ReproducerError(f"{where}: not a valid .npy header ({e})") from None
        offset = stream.tell()
    if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
        raise ReproducerError(f"{where}: holds {dtype!s} values; only plain numeric arrays are read (no pickles)")
    if dtype != want_dtype:
        raise ReproducerError(f"{where}: stored as {dtype.str}, but check.json says {want_dtype.name}")
    if tuple(shape) != want_shape:
        raise ReproducerError(f"{where}: shape {tuple(shape)}, but check.json says {want_shape}")
    if info.file_size != offset + nbytes(shape, dtype):
        raise ReproducerError(f"{where}: the header says {nbytes(shape, dtype)} bytes of data, but the member "
                              f"holds {info.file_size - offset}")  # fmt: skip
    return offset, bool(fortran)


def _data(path: pathlib.Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, offset: int, dtype: np.dtype[Any],
          shape: tuple[int, ...], fortran: bool) -> NDArray:  # fmt: skip
    size = nbytes(shape, dtype)
    buffer = bytearray(size)
    view = memoryview(buffer)
    got = 0
    with archive.open(info) as stream:
        stream.read(offset)
        while got < size:  # in chunks: the data is copied once, into the array's own buffer
            chunk = stream.read(min(size - got, 1 << 20))
            if not chunk:
                break
            view[got : got + len(chunk)] = chunk
            got += len(chunk)
        if got != size or stream.read(1):  # reading to the end also checks the member's CRC
            raise ReproducerError(f"{path}: {info.filename}: the data is not the {size} bytes its header says")
    array = np.frombuffer(buffer, dtype=dtype, count=math.prod(shape))
    return array.reshape(shape, order="F" if fortran else "C")


__all__ = [
    "DEFAULT_MAX_BYTES",
    "DTYPE_NAMES",
    "MAX_NESTING",
    "MAX_RANK",
    "MAX_RUNS",
    "Fields",
    "ReproducerError",
    "check_jaxpr_size",
    "check_options",
    "dtype_field",
    "jaxpr_avals",
    "nbytes",
    "read_jaxpr",
    "read_json_object",
    "read_npz",
    "read_text",
    "shape_field",
    "within",
]
