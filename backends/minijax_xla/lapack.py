"""jaxlib's LAPACK kernels: registering them with XLA and emitting calls to them.

jaxlib ships LAPACK routines (potrf, getrf, geqrf, orgqr, trsm, syevd,
gesdd, gesvd, ...) as typed-FFI custom-call targets named
``lapack_<s|d><routine>_ffi`` (``jaxlib.lapack.registrations()``). Using one
takes two steps, done once per process by ``ensure_registered``:
registering the targets with XLA's CPU platform, and
``jaxlib.cpu._lapack.initialize()``, which fills in the LAPACK function
pointers from SciPy's LAPACK (SciPy is a dependency of jaxlib). The facts are
in ``notes/xla-via-jaxlib.md``, section "custom_call (typed FFI)".

Like ``jaxlib_api.py``, this module is the only place that calls these
jaxlib entry points; ``linalg.py`` uses the functions below.

The kernels read and write matrices in column-major (Fortran) order, with the
batch axes outermost: ``matrix_layout`` gives that layout. Every kernel
handles a batch of matrices in one call (the leading axes).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from jaxlib import lapack as _jaxlib_lapack, xla_client as xc
from jaxlib.cpu import _lapack as _lapack_kernels
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

Value = ir.Value[Any]

_lock = threading.Lock()
_registered = False

# LAPACK's dtype prefixes for the dtypes minijax has.
_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d", np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}
# The complex (Hermitian / unitary) names of the real routines.
_COMPLEX_ROUTINE = {"syevd": "heevd", "sytrd": "hetrd", "orgqr": "ungqr", "ormqr": "unmqr"}

def ensure_registered() -> None:
    """Register jaxlib's LAPACK targets with XLA (CPU) and load the LAPACK functions, once.

    Registering after the CPU client exists is fine: XLA looks the target up
    when it compiles a module that calls it.
    """
    global _registered
    if _registered:
        return
    with _lock:
        if _registered:
            return
        for name, handler, api_version in _jaxlib_lapack.registrations()["cpu"]:
            xc.register_custom_call_target(name, handler, platform="cpu", api_version=api_version)
        try:
            _lapack_kernels.initialize()
        except ImportError as e:
            raise RuntimeError(
                "the xla backend's linear algebra needs SciPy: jaxlib's LAPACK kernels load LAPACK from it "
                "(pip install scipy)"
            ) from e
        _registered = True


def target_name(routine: str, dtype: Any) -> str:
    """``lapack_sgetrf_ffi`` for routine "getrf" and float32; the real routine's name ("syevd") gives
    the complex one ("heevd") for complex dtypes."""
    prefix = _PREFIX.get(np.dtype(dtype))
    if prefix is None:
        raise NotImplementedError(f"LAPACK has no {routine} for dtype {np.dtype(dtype).name}")
    if prefix in "cz":
        routine = _COMPLEX_ROUTINE.get(routine, routine)
    return f"lapack_{prefix}{routine}_ffi"


def char_attr(c: str) -> ir.Attribute:
    """A one-character attribute (uplo='L', side='R', mode='V', ...), as the kernels read them: a ui8."""
    return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), ord(c))


def matrix_layout(rank: int) -> tuple[int, ...]:
    """Minor-to-major order of a batch of column-major matrices: rows fastest, then columns, then the batch."""
    return (rank - 2, rank - 1, *range(rank - 3, -1, -1))


def row_major_layout(rank: int) -> tuple[int, ...]:
    return tuple(range(rank - 1, -1, -1))


def _layouts(layouts: Sequence[Sequence[int]]) -> ir.ArrayAttr:
    index = ir.IndexType.get()
    return ir.ArrayAttr.get(
        [ir.DenseIntElementsAttr.get(np.asarray(lay, np.int64), type=index) for lay in layouts]  # type: ignore[call-overload]
    )


def call(
    target: str,
    operands: Sequence[Value],
    result_types: Sequence[ir.Type],
    *,
    operand_layouts: Sequence[Sequence[int]],
    result_layouts: Sequence[Sequence[int]],
    attributes: Mapping[str, ir.Attribute] | None = None,
    aliases: Mapping[int, int] | None = None,
) -> list[Value]:
    """A typed-FFI call of ``target`` at the current insertion point; returns its results.

    ``attributes`` are the kernel's named attributes; ``aliases`` maps a
    result index to the operand whose buffer it may reuse (the kernels copy
    the operand otherwise).
    """
    ensure_registered()
    i32 = ir.IntegerType.get_signless(32)
    op = hlo.CustomCallOp(
        list(result_types),
        list(operands),
        target,
        api_version=ir.IntegerAttr.get(i32, 4),  # typed FFI: the attributes are a dictionary
        backend_config=ir.DictAttr.get(dict(attributes or {})),
        operand_layouts=_layouts(operand_layouts),
        result_layouts=_layouts(result_layouts),
        output_operand_aliases=ir.ArrayAttr.get(
            [hlo.OutputOperandAlias.get([out] if len(result_types) > 1 else [], operand, []) for out, operand in (aliases or {}).items()]
        ),
    )
    return list(op.results)
