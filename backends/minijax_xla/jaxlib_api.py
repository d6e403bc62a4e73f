"""Every call into jaxlib, in one module, with the version shims.

The rest of the XLA backend talks to XLA only through these functions, so a
jaxlib upgrade is a change here. The facts behind each choice are in
``notes/xla-via-jaxlib.md`` (sections 0, 1, 4, 5 and 10); the comments below
name the gotcha each workaround is for.

Buffers are jaxlib ``ArrayImpl`` objects whose ``aval`` is a minijax
``ShapedArray`` (jaxlib never looks inside it beyond shape, dtype and ndim).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

# XLA's C++ logging goes to stderr; INFO lines (one per client creation) are
# noise for a library. Must be set before the shared library loads.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import jaxlib.mlir._mlir_libs._jax_mlir_ext as _jax_mlir_ext  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jaxlib import xla_client as xc  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402
from jaxlib.mlir.dialects import chlo, stablehlo as hlo  # noqa: E402
from jaxlib.version import __version__ as _jaxlib_version  # noqa: E402

from minijax.core import ShapedArray  # noqa: E402

JAXLIB_VERSION: str = _jaxlib_version

Buffer = Any  # a jaxlib ArrayImpl on one device
PjrtDevice = Any  # a jaxlib Device
Client = Any  # a jaxlib PJRT client


# --- MLIR context ----------------------------------------------------------------

_context: ir.Context | None = None
# MLIR contexts are not safe to build IR in from two threads at once.
context_lock = threading.RLock()


def mlir_context() -> ir.Context:
    """The process-wide MLIR context, with func and stablehlo loaded.

    One context for all lowerings: creating one costs 5-15 ms, which would
    dominate the first call of every eager op. Large constants are passed as
    executable arguments rather than embedded (see lowering.py), so the
    context does not accumulate big uniqued attributes.
    """
    global _context
    if _context is None:
        with context_lock:
            if _context is None:
                registry = ir.DialectRegistry()
                # Without the registry func.func does not parse; without
                # register_dialect no stablehlo op can be built.
                _jax_mlir_ext.register_dialects(registry)
                ctx = ir.Context()
                ctx.append_dialect_registry(registry)
                ctx.load_all_available_dialects()
                hlo.register_dialect(ctx)
                # CHLO: the client ops (erf, lgamma, asin, ...) that XLA expands.
                chlo.register_dialect(ctx)
                _context = ctx
    return _context


# --- types -----------------------------------------------------------------------

# dtype -> MLIR element type constructor (needs an active context). Booleans
# are i1; signed ints are signless; unsigned ints must say so.
_ELEMENT_TYPES: dict[np.dtype[Any], Callable[[], ir.Type]] = {
    np.dtype(np.bool_): lambda: ir.IntegerType.get_signless(1),
    np.dtype(np.int8): lambda: ir.IntegerType.get_signless(8),
    np.dtype(np.int16): lambda: ir.IntegerType.get_signless(16),
    np.dtype(np.int32): lambda: ir.IntegerType.get_signless(32),
    np.dtype(np.int64): lambda: ir.IntegerType.get_signless(64),
    np.dtype(np.uint8): lambda: ir.IntegerType.get_unsigned(8),
    np.dtype(np.uint16): lambda: ir.IntegerType.get_unsigned(16),
    np.dtype(np.uint32): lambda: ir.IntegerType.get_unsigned(32),
    np.dtype(np.uint64): lambda: ir.IntegerType.get_unsigned(64),
    np.dtype(ml_dtypes.bfloat16): lambda: ir.BF16Type.get(),
    np.dtype(np.float16): lambda: ir.F16Type.get(),
    np.dtype(np.float32): lambda: ir.F32Type.get(),
    np.dtype(np.float64): lambda: ir.F64Type.get(),
}

SUPPORTED_DTYPES: tuple[np.dtype[Any], ...] = tuple(_ELEMENT_TYPES)


def element_type(dtype: Any) -> ir.Type:
    """The MLIR element type of a NumPy dtype (needs an active context)."""
    make = _ELEMENT_TYPES.get(np.dtype(dtype))
    if make is None:
        names = ", ".join(d.name for d in SUPPORTED_DTYPES)
        raise TypeError(f"the xla backend does not support dtype {np.dtype(dtype).name}; supported: {names}")
    return make()


def tensor_type(shape: Sequence[int], dtype: Any) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), element_type(dtype))


def dense_constant(value: np.ndarray[Any, Any]) -> ir.Value[Any]:
    """A ``stablehlo.constant`` holding ``value`` (any shape, supported dtype)."""
    value = c_contiguous(value)
    # type= is required: the buffer protocol cannot describe bfloat16, and
    # without it unsigned ints would become signless. Bool arrays go in as
    # one byte per element (packing them is wrong on 0.10.2).
    attr = ir.DenseElementsAttr.get(value, type=tensor_type(value.shape, value.dtype))  # type: ignore[call-overload]
    result: ir.Value[Any] = hlo.constant(attr)
    return result


def c_contiguous(value: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``value`` in C order, keeping 0-d arrays 0-d (np.ascontiguousarray makes them 1-d)."""
    return value if value.flags.c_contiguous else np.array(value, order="C")


# --- client and devices ------------------------------------------------------------


def make_cpu_client() -> Client:
    return xc.make_cpu_client()


def client_devices(client: Client) -> list[PjrtDevice]:
    devices: list[PjrtDevice] = client.local_devices()
    return devices


class _Sharding(xc.SingleDeviceSharding):  # type: ignore[misc]
    """A single-device sharding with the Python-level methods that
    ``batched_device_put`` calls on jaxlib 0.10.2 (0.11+ accepts the plain
    C++ class; notes section 10)."""

    def _to_xla_hlo_sharding(self, ndim: int) -> Any:
        return xc.HloSharding.replicate()

    @property
    def _device_assignment(self) -> tuple[PjrtDevice, ...]:
        return (self._device,)

    @property
    def device_set(self) -> set[PjrtDevice]:
        return {self._device}

    @property
    def memory_kind(self) -> None:
        return None

    @property
    def is_fully_replicated(self) -> bool:
        return True

    @property
    def is_fully_addressable(self) -> bool:
        return True

    @property
    def num_devices(self) -> int:
        return 1

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        return global_shape


_put_shardings: dict[PjrtDevice, Any] = {}


def _put_sharding(device: PjrtDevice) -> Any:
    sharding = _put_shardings.get(device)
    if sharding is None:
        sharding = _put_shardings[device] = _Sharding(device)
    return sharding


# --- host <-> device -------------------------------------------------------------------


def put(value: np.ndarray[Any, Any], device: PjrtDevice) -> Buffer:
    """Copy ``value`` to ``device``.

    Copy semantics matter (gotcha 3): the default ZERO_COPY mode aliases a
    64-byte-aligned NumPy buffer, so mutating the host array afterwards would
    change an immutable Array. ``enable_x64=True`` always: minijax has already
    canonicalized the dtype, and jaxlib's own x64 narrowing must not apply.
    """
    aval = ShapedArray(value.shape, value.dtype)
    return xc.batched_device_put(
        aval,
        _put_sharding(device),
        [value],
        [device],
        True,
        host_buffer_semantics=xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL,
        enable_x64=True,
    )


def _is_ml_dtype(dtype: np.dtype[Any]) -> bool:
    # ml_dtypes (bfloat16, ...) are numpy "void-like" user dtypes that the
    # buffer protocol cannot describe.
    return dtype.type.__module__.startswith("ml_dtypes")


def check_live(buffer: Buffer) -> None:
    """Raise JAX's RuntimeError for a deleted or donated buffer (``None`` is
    what minijax's Array holds after ``delete()``)."""
    if buffer is None:
        raise RuntimeError("Array has been deleted.")
    if buffer.is_deleted():
        raise RuntimeError(f"Array has been deleted with shape={buffer.aval.str_short(short_dtypes=False)}.")


def get(buffer: Buffer) -> np.ndarray[Any, Any]:
    """The buffer's contents as a read-only NumPy array (blocks until ready).

    Without jax installed, ``np.asarray`` of a deleted buffer or of an
    ml_dtypes buffer returns a 0-d object array instead of raising or
    converting (gotcha 4): check deletion first, and read ml_dtypes through
    the explicit host copy (slower: 70-100 us, it probes for jax).
    """
    check_live(buffer)
    aval = buffer.aval
    if _is_ml_dtype(aval.dtype):
        host: np.ndarray[Any, Any] = buffer._single_device_array_to_np_array_did_copy()[0]
    else:
        host = np.asarray(buffer)
    if host.dtype != aval.dtype or host.shape != aval.shape:
        raise RuntimeError(
            f"xla backend: reading a {aval.str_short()} buffer gave {host.dtype}{list(host.shape)}; "
            f"jaxlib {JAXLIB_VERSION} may not be supported (need >=0.10.2,<0.13)"
        )
    return host


def block_until_ready(buffer: Buffer) -> None:
    check_live(buffer)
    buffer.block_until_ready()


def is_ready(buffer: Buffer) -> bool:
    check_live(buffer)
    return bool(buffer.is_ready())


def is_deleted(buffer: Buffer) -> bool:
    return bool(buffer.is_deleted())


def buffer_device(buffer: Buffer) -> PjrtDevice:
    check_live(buffer)
    return buffer._sharding._device


def delete(buffer: Buffer) -> None:
    buffer.delete()


# --- compile and execute -------------------------------------------------------------------

Executable = Any  # a jaxlib LoadedExecutable


def compile_module(client: Client, module: ir.Module, device: PjrtDevice) -> Executable:
    """Compile an MLIR module for one device (the ``ir.Module`` object is
    accepted directly, no text round trip)."""
    options = xc.CompileOptions()
    return client.compile_and_load(module, xc.DeviceList((device,)), options)


def result_handler(aval: ShapedArray, device: PjrtDevice) -> Any:
    """Turns one raw result into an ArrayImpl whose aval is ``aval``.

    Built once per output aval. 0.9/0.10 take ``_skip_checks`` and it must be
    True without jax (False calls a jax-only method); 0.11 removed it.
    """
    sharding = xc.SingleDeviceSharding(device)
    try:
        return xc.array_result_handler(aval, sharding, True, _skip_checks=True)
    except TypeError:
        return xc.array_result_handler(aval, sharding, True)


def make_runner(executable: Executable, out_avals: Sequence[ShapedArray], device: PjrtDevice) -> Callable[[list[Buffer]], list[Buffer]]:
    """The fast call path: ``execute_sharded`` + ``consume_with_handlers``.

    The convenience wrappers (``execute``, ``disassemble_...``) probe for an
    import of jax on every call, which costs 50-120 us without it (notes 5).
    """
    handlers = [result_handler(a, device) for a in out_avals]
    execute_sharded = executable.execute_sharded

    def run(args: list[Buffer]) -> list[Buffer]:
        outs: list[Buffer] = execute_sharded(args).consume_with_handlers(handlers)
        return outs

    return run


def executable_hlo_text(executable: Executable) -> str:
    """The optimized HLO XLA compiled (for debugging and tests)."""
    text: str = executable.get_hlo_text()
    return text
