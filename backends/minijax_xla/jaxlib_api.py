"""Every call into jaxlib, in one module, with the version shims.

The rest of the XLA backend talks to XLA only through these functions, so a
jaxlib upgrade is a change here. The facts behind each choice are in
``notes/xla-via-jaxlib.md`` (sections 0, 1, 4, 5 and 10); the comments below
name the gotcha each workaround is for.

Buffers are jaxlib ``ArrayImpl`` objects whose ``aval`` is a minijax
``ShapedArray`` (jaxlib never looks inside it beyond shape, dtype and ndim).
"""

from __future__ import annotations

import ctypes
import functools
import gc
import importlib.util
import os
import threading
import warnings
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

# XLA's C++ logging goes to stderr; INFO lines (one per client creation) are
# noise for a library. Must be set before the shared library loads.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import jaxlib.mlir._mlir_libs._jax_mlir_ext as _jax_mlir_ext  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jaxlib import xla_client as xc  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402
from jaxlib.mlir.dialects import chlo, func, stablehlo as hlo  # noqa: E402
from jaxlib.version import __version__ as _jaxlib_version  # noqa: E402

from minijax.core import ShapedArray  # noqa: E402
from minijax.dtypes import ExtendedDType, float0  # noqa: E402
from minijax.errors import JaxRuntimeError  # noqa: E402

JAXLIB_VERSION: str = _jaxlib_version

Buffer = Any  # a jaxlib ArrayImpl on one device
PjrtDevice = Any  # a jaxlib Device
Client = Any  # a jaxlib PJRT client


# --- Python objects the runtime releases late -------------------------------------

# The runtime's worker threads cannot take the GIL, so the Python objects they
# are done with (the traceback recorded for each execution, the host array of
# a transfer) are queued and released only when jaxlib next collects them,
# which it does itself only at a host-to-device transfer: a loop of cached
# calls would keep one such object per call (issue 22), and a transfer its
# host array until the next call. So every execution and every transfer
# collects what is queued (0.1 us), and so does every run of Python's garbage
# collector (as JAX does).
def _no_garbage_collection() -> None:
    pass


_extension: Any = getattr(xc, "_xla", None)  # jaxlib's C++ extension module
collect_garbage: Callable[[], None] = getattr(_extension, "collect_garbage", _no_garbage_collection)


def _collect_at_python_gc(phase: str, info: dict[str, int]) -> None:
    if phase == "stop":
        collect_garbage()


if _collect_at_python_gc not in gc.callbacks:
    gc.callbacks.append(_collect_at_python_gc)


# --- MLIR context ----------------------------------------------------------------

_context: ir.Context | None = None
# MLIR contexts are not safe to build IR in from two threads at once.
context_lock = threading.RLock()


def mlir_context() -> ir.Context:
    """The process-wide MLIR context, with func and stablehlo loaded.

    One context for all lowerings: creating one costs 5-15 ms, which would
    dominate the first call of every eager op. A context keeps every
    attribute built in it until it goes, so large constants are passed as
    executable arguments rather than embedded, and a module that must embed
    some (those of nested functions) is built in a context of its own
    (``new_mlir_context``; see lowering.py).
    """
    global _context
    if _context is None:
        with context_lock:
            if _context is None:
                _context = new_mlir_context()
    return _context


def new_mlir_context() -> ir.Context:
    """A fresh MLIR context with func, stablehlo and chlo loaded (5-15 ms)."""
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
    return ctx


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
    np.dtype(np.complex64): lambda: ir.ComplexType.get(ir.F32Type.get()),
    np.dtype(np.complex128): lambda: ir.ComplexType.get(ir.F64Type.get()),
    # float0 (the tangent type of integers) carries no data: booleans on the
    # device, as JAX lowers it; reading one back gives float0 zeros (``get``).
    float0: lambda: ir.IntegerType.get_signless(1),
    # narrow: ml_dtypes' narrow types. float6_* and int1/uint1 are absent on
    # purpose: XLA's CPU client cannot hold arrays of them (JAX 0.10.2 fails
    # inside XLA on them), so they are refused here with a clear error.
    np.dtype(ml_dtypes.float8_e3m4): lambda: ir.Float8E3M4Type.get(),
    np.dtype(ml_dtypes.float8_e4m3): lambda: ir.Float8E4M3Type.get(),
    np.dtype(ml_dtypes.float8_e4m3b11fnuz): lambda: ir.Float8E4M3B11FNUZType.get(),
    np.dtype(ml_dtypes.float8_e4m3fn): lambda: ir.Float8E4M3FNType.get(),
    np.dtype(ml_dtypes.float8_e4m3fnuz): lambda: ir.Float8E4M3FNUZType.get(),
    np.dtype(ml_dtypes.float8_e5m2): lambda: ir.Float8E5M2Type.get(),
    np.dtype(ml_dtypes.float8_e5m2fnuz): lambda: ir.Float8E5M2FNUZType.get(),
    np.dtype(ml_dtypes.float8_e8m0fnu): lambda: ir.Float8E8M0FNUType.get(),
    np.dtype(ml_dtypes.float4_e2m1fn): lambda: ir.Float4E2M1FNType.get(),
    np.dtype(ml_dtypes.int2): lambda: ir.IntegerType.get_signless(2),
    np.dtype(ml_dtypes.int4): lambda: ir.IntegerType.get_signless(4),
    np.dtype(ml_dtypes.uint2): lambda: ir.IntegerType.get_unsigned(2),
    np.dtype(ml_dtypes.uint4): lambda: ir.IntegerType.get_unsigned(4),
}

SUPPORTED_DTYPES: tuple[np.dtype[Any], ...] = tuple(d for d in _ELEMENT_TYPES if d != float0)


def check_dtype(dtype: np.dtype[Any]) -> None:
    """Refuse, with a TypeError naming the dtype, one XLA cannot hold (float6_*, int1, uint1)."""
    if dtype not in _ELEMENT_TYPES and not isinstance(dtype, np.dtype):
        return  # an extended dtype: stored as its physical dtype
    if dtype not in _ELEMENT_TYPES:
        names = ", ".join(d.name for d in SUPPORTED_DTYPES)
        raise TypeError(
            f"the xla backend does not support dtype {dtype.name} (XLA on CPU has no arrays of it); "
            f"use the numpy backend (jax.config.update('jax_platform_name', 'numpy')) for it. Supported: {names}"
        )


def element_type(dtype: Any) -> ir.Type:
    """The MLIR element type of a NumPy dtype (needs an active context)."""
    make = _ELEMENT_TYPES.get(np.dtype(dtype))
    if make is None:
        check_dtype(np.dtype(dtype))
        raise AssertionError  # unreachable: check_dtype raised
    return make()


def tensor_type(shape: Sequence[int], dtype: Any) -> ir.RankedTensorType:
    try:
        return ir.RankedTensorType.get(list(shape), element_type(dtype))
    except TypeError:  # a symbolic dimension (jax.export) is a dynamic one: ``?``
        dims = [d if isinstance(d, int) else ir.ShapedType.get_dynamic_size() for d in shape]
        return ir.RankedTensorType.get(dims, element_type(dtype))


def dense_constant(value: np.ndarray[Any, Any]) -> ir.Value[Any]:
    """A ``stablehlo.constant`` holding ``value`` (any shape, supported dtype)."""
    if value.dtype == float0:
        value = np.zeros(value.shape, np.bool_)
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


def make_cpu_client(num_devices: int | None = None) -> Client:
    """A CPU client with ``num_devices`` devices; None leaves the count to
    ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` (else 1), which XLA
    reads when the client is created (notes section 7)."""
    return xc.make_cpu_client(num_devices=num_devices)


# mproc (issue 17): the CPU client of one process of a multi-process computation.
def make_distributed_cpu_client(distributed_client: Any, node_id: int, num_nodes: int, num_devices: int | None) -> Client:
    """A CPU client whose devices are every process's (the topology is exchanged
    through the coordination service) and whose collectives cross processes over
    gloo's TCP transport, as JAX builds it after ``jax.distributed.initialize``."""
    collectives = xc._xla.make_gloo_tcp_collectives(distributed_client=distributed_client)  # type: ignore[attr-defined]
    return xc.make_cpu_client(
        distributed_client=distributed_client, node_id=node_id, num_nodes=num_nodes,
        collectives=collectives, num_devices=num_devices,
    )


def client_devices(client: Client) -> list[PjrtDevice]:
    devices: list[PjrtDevice] = client.local_devices()
    return devices


def device_client(device: PjrtDevice) -> Client:
    """The client a device belongs to (arrays and executables must share it)."""
    return device.client


def device_platform(device: PjrtDevice) -> str:
    """"gpu" for a CUDA or ROCm device, "cpu" for a host one: what a lowering needs to know."""
    return "gpu" if str(device.platform) in ("gpu", "cuda", "rocm") else "cpu"


def platform_version(client: Client) -> str:
    return str(client.platform_version)


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


def put_sharding(device: PjrtDevice) -> Any:
    sharding = _put_shardings.get(device)
    if sharding is None:
        sharding = _put_shardings[device] = _Sharding(device)
    return sharding


# --- host <-> device -------------------------------------------------------------------


# id -> buffer, for the buffers ``put`` made of a float0 value: their label. The
# buffer's own ``aval`` says bool, and jaxlib 0.11+ makes it read-only.
_float0_buffers: weakref.WeakValueDictionary[int, Buffer] = weakref.WeakValueDictionary()


def buffer_aval(buffer: Buffer) -> ShapedArray:
    """The aval of the value ``buffer`` holds (float0 for what ``put`` made of one)."""
    aval: ShapedArray = buffer.aval
    if _float0_buffers.get(id(buffer)) is buffer:
        return ShapedArray(aval.shape, float0)
    return aval


def put(value: np.ndarray[Any, Any], device: PjrtDevice) -> Buffer:
    """Copy ``value`` to ``device``.

    Copy semantics matter (gotcha 3): the default ZERO_COPY mode aliases a
    64-byte-aligned NumPy buffer, so mutating the host array afterwards would
    change an immutable Array. ``enable_x64=True`` always: minijax has already
    canonicalized the dtype, and jaxlib's own x64 narrowing must not apply.
    """
    if value.dtype == float0:
        # Booleans on the device (jaxlib knows no float0), labelled float0 for minijax.
        buffer = put(np.zeros(value.shape, np.bool_), device)
        _float0_buffers[id(buffer)] = buffer
        return buffer
    check_dtype(value.dtype)
    aval = ShapedArray(value.shape, value.dtype)
    buffer = xc.batched_device_put(
        aval,
        put_sharding(device),
        [value],
        [device],
        True,
        host_buffer_semantics=xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL,
        enable_x64=True,
    )
    # The copy is made; jaxlib has queued ``value`` for release (see
    # collect_garbage): release it now, not at the next call.
    collect_garbage()
    return buffer


def _is_ml_dtype(dtype: np.dtype[Any]) -> bool:
    # ml_dtypes (bfloat16, ...) are numpy "void-like" user dtypes that the
    # buffer protocol cannot describe.
    return dtype.type.__module__.startswith("ml_dtypes")


# What jaxlib raises when XLA reports a failed status (0.10+: JaxRuntimeError;
# earlier: XlaRuntimeError). Both are RuntimeErrors.
_JAXLIB_RUNTIME_ERROR: type[Exception] = getattr(_extension, "JaxRuntimeError", getattr(xc, "XlaRuntimeError", RuntimeError))


def runtime_error(error: Exception) -> Exception:
    """minijax's ``JaxRuntimeError`` carrying XLA's status text for an error of
    the runtime (``RESOURCE_EXHAUSTED: Out of memory ...``); any other error as it is."""
    if isinstance(error, _JAXLIB_RUNTIME_ERROR) and not isinstance(error, JaxRuntimeError):
        return JaxRuntimeError(str(error))
    return error


def check_live(buffer: Buffer) -> None:
    """Raise JAX's RuntimeError for a deleted or donated buffer (``None`` is
    what minijax's Array holds after ``delete()``)."""
    if buffer is None:
        raise RuntimeError("Array has been deleted.")
    if buffer.is_deleted():
        raise RuntimeError(f"Array has been deleted with shape={buffer_aval(buffer).str_short(short_dtypes=False)}.")


def get(buffer: Buffer) -> np.ndarray[Any, Any]:
    """The buffer's contents as a read-only NumPy array (blocks until ready).

    Without jax installed, ``np.asarray`` of a deleted buffer or of an
    ml_dtypes buffer returns a 0-d object array instead of raising or
    converting (gotcha 4): check deletion first, and read ml_dtypes through
    the explicit host copy (slower: 70-100 us, it probes for jax).
    """
    check_live(buffer)
    try:
        # A program that failed (out of memory, ...) leaves its results holding
        # the error: waiting raises it, where reading the bytes would give a
        # 0-d object array or abort the process inside XLA.
        buffer.block_until_ready()
    except Exception as e:
        check_live(buffer)  # donated meanwhile, by another thread: JAX's message
        raise runtime_error(e) from None
    aval = buffer_aval(buffer)
    if aval.dtype == float0:
        zeros = np.zeros(aval.shape, float0)
        zeros.flags.writeable = False
        return zeros
    if _is_ml_dtype(aval.dtype):
        host: np.ndarray[Any, Any] = buffer._single_device_array_to_np_array_did_copy()[0]
    else:
        host = np.asarray(buffer)
        if host.dtype == object:  # a GPU buffer: no zero-copy view of device memory without jax
            host = buffer._single_device_array_to_np_array_did_copy()[0]
    if host.dtype != aval.dtype or host.shape != aval.shape:
        check_live(buffer)  # donated by another thread since the wait above
        raise RuntimeError(
            f"xla backend: reading a {aval.str_short()} buffer gave {host.dtype}{list(host.shape)}; "
            f"jaxlib {JAXLIB_VERSION} may not be supported (need >=0.10.2,<0.13)"
        )
    return host


def block_until_ready(buffer: Buffer) -> None:
    check_live(buffer)
    try:
        buffer.block_until_ready()
    except Exception as e:
        check_live(buffer)
        raise runtime_error(e) from None


# The runtime's own wait, a C method: between a call's dispatch and its wait
# no Python frame runs (the computation is using the cores meanwhile). A
# deleted buffer raises the runtime's RuntimeError ("... deleted or donated
# buffer"); ``block_until_ready`` above gives JAX's message instead.
wait_until_ready: Any = xc.ArrayImpl.block_until_ready


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


MEMORY_FITTING_O2 = 29  # XLA's effort levels: O0 9, O1 19, O2 29, O3 39


def compile_options(device: PjrtDevice) -> Any:
    """Options for a one-device executable on ``device``.

    The device assignment is required: without it the single replica is
    assigned to device 0 whatever device list is passed, and running it on
    another device's buffers fails ("replica is assigned to device cpu:0").
    """
    options = xc.CompileOptions()
    options.device_assignment = xc.DeviceAssignment.create(np.array([[device.id]], dtype=np.int32))
    # JAX's defaults (its jax_memory_fitting_level flag is O2): XLA's buffer
    # assignment then schedules as it does for JAX.
    options.executable_build_options.memory_fitting_level = MEMORY_FITTING_O2
    return options


def compile_module(client: Client, module: ir.Module, device: PjrtDevice) -> Executable:
    """Compile an MLIR module for one device (the ``ir.Module`` object is
    accepted directly, no text round trip)."""
    check_module(module, n_host_callbacks=0)
    return client.compile_and_load(module, xc.DeviceList((device,)), compile_options(device))


class UnsafeModuleError(RuntimeError):
    """A module holds an operation that would crash the process inside XLA."""


def check_module(module: ir.Module, n_host_callbacks: int) -> None:
    """Refuse a module XLA would crash on, before compiling it.

    Two things abort the process instead of raising (notes gotchas 5 and 6):
    a host-callback custom call whose function is not among the
    ``n_host_callbacks`` handed to the compiler (a segfault when it runs), and
    a ``collective_permute`` with a ``channel_handle`` in a one-replica
    program (``std::out_of_range``). minijax's own lowering rules emit
    neither; this guards rules added later or by a plug-in. One walk over the
    operations: well under a millisecond for hundreds of ops, against tens of
    milliseconds to compile.
    """
    problems: list[str] = []
    targets = set(HOST_CALLBACK_TARGETS.values())
    # In an SPMD program (several partitions) a channel_handle is what pairs the devices'
    # collective_permutes, as JAX emits them.
    with context_lock, module.context:
        partitions = module.operation.attributes["mhlo.num_partitions"] if "mhlo.num_partitions" in module.operation.attributes else None
        spmd = partitions is not None and ir.IntegerAttr(partitions).value > 1

    def visit(op: Any) -> Any:
        name = op.name
        if name == "stablehlo.custom_call":
            target = ir.StringAttr(op.attributes["call_target_name"]).value
            if target in targets:
                index = _callback_index(op)
                if index is None or not 0 <= index < n_host_callbacks:
                    problems.append(
                        f"a host callback (custom_call @{target}) names function {index}, but the program is "
                        f"compiled with {n_host_callbacks} host callbacks; running it would crash the process. "
                        "Emit host callbacks through minijax_xla.callbacks (which registers the function)."
                    )
        elif name == "stablehlo.collective_permute" and "channel_handle" in op.attributes and not spmd:
            problems.append(
                "a collective_permute has a channel_handle, which aborts XLA in a one-replica program; "
                "emit it without channel_handle"
            )
        return ir.WalkResult.ADVANCE

    with context_lock, module.context:
        module.operation.walk(visit)
    if problems:
        raise UnsafeModuleError("xla backend: refusing to compile the lowered module: " + "; ".join(problems))


def _callback_index(op: Any) -> int | None:
    """The function index of a host-callback custom call (either encoding), or None."""
    for attr_name in ("backend_config", "mhlo.backend_config"):
        if attr_name not in op.attributes:
            continue
        attr = op.attributes[attr_name]
        if isinstance(attr, ir.DictAttr) and "index" in attr:
            return int(ir.IntegerAttr(attr["index"]).value)
    return None


def live_buffer_count(client: Client) -> int:
    """How many device buffers (arrays) are alive on ``client``."""
    return len(client.live_arrays())


def live_executable_count(client: Client) -> int:
    """How many loaded executables are alive on ``client``."""
    return len(client.live_executables())


def compile_options_bytes(device: PjrtDevice) -> bytes:
    """The serialized options ``compile_module`` uses for ``device`` (part of
    the persistent cache key: other options could give another executable)."""
    serialized: bytes = compile_options(device).SerializeAsString()
    return serialized


def module_bytes(module: ir.Module) -> bytes:
    """The module's text as bytes (the persistent cache key's main part)."""
    with context_lock, module.context:
        return str(module).encode()


def hlo_computation(module: ir.Module) -> Any:
    """The module as an ``XlaComputation`` (HLO), for ``Lowered.as_text(dialect="hlo")``."""
    return _extension.mlir.mlir_module_to_xla_computation(module_bytes(module), use_tuple_args=False, return_tuple=False)


def hlo_cost_analysis(client: Client, module: ir.Module) -> dict[str, float] | None:
    """XLA's cost estimates of a module before compiling (``Lowered.cost_analysis()``)."""
    try:
        costs = _extension.hlo_module_cost_analysis(client, hlo_computation(module).get_hlo_module())
    except Exception:  # not every client implements it
        return None
    return {str(k): float(v) for k, v in costs.items()} if costs else None


def executable_memory_stats(executable: Executable) -> Any:
    """The compiled program's memory sizes (a ``CompiledMemoryStats``), or None."""
    try:
        return executable.get_compiled_memory_stats()
    except Exception:  # not every PJRT plugin implements it
        return None


def parse_module(text: str) -> ir.Module:
    """A StableHLO module from its text (an exported program, read back)."""
    with context_lock, new_mlir_context(), ir.Location.unknown():
        return ir.Module.parse(text)


def refine_module_text(text: str, in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray]) -> str:
    """An exported module with dynamic (``?``) dimensions specialized to concrete argument types.

    The public ``main`` becomes a private callee of a new ``main`` whose parameters have the static
    types; ``stablehlo.convert`` bridges the types (as JAX wraps an exported module), and jaxlib's
    shape refinement (``refine_polymorphic_shapes``) propagates the static shapes through every op.
    """
    with context_lock, new_mlir_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        main = next(op for op in module.body.operations if ir.StringAttr(op.attributes["sym_name"]).value == "main")
        main.attributes["sym_name"] = ir.StringAttr.get("_wrapped_main")
        main.attributes["sym_visibility"] = ir.StringAttr.get("private")
        old_type = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        static_in = [tensor_type(a.shape, a.dtype) for a in in_avals]
        static_out = [tensor_type(a.shape, a.dtype) for a in out_avals]
        with ir.InsertionPoint(module.body):
            wrapper = func.FuncOp("main", ir.FunctionType.get(static_in, static_out))
            block = wrapper.body.blocks.append(*static_in)
            with ir.InsertionPoint(block):
                args = [hlo.convert(t, a) for t, a in zip(old_type.inputs, block.arguments)]
                call = func.CallOp(list(old_type.results), ir.FlatSymbolRefAttr.get("_wrapped_main"), args)
                func.ReturnOp([hlo.convert(t, r) for t, r in zip(static_out, call.results)])
        bytecode = module_bytes(module)
    try:
        # jaxlib's shape refinement (jaxlib._jax.mlir, reached through xla_client)
        refined = xc._xla.mlir.refine_polymorphic_shapes(  # type: ignore[attr-defined]
            bytecode, enable_shape_assertions=True, validate_static_shapes=True, enable_shardy=False
        )
    except Exception as e:
        raise ValueError(f"Error refining the shapes of an exported module to {[a.str_short() for a in in_avals]}: {e}") from e
    with context_lock, new_mlir_context(), ir.Location.unknown():
        return str(ir.Module.parse(refined))


def serialize_executable(executable: Executable) -> bytes:
    """The executable as bytes for the persistent cache (a few ms; notes section 4)."""
    blob: bytes = executable.serialize()
    return blob


def deserialize_executable(client: Client, blob: bytes, device: PjrtDevice) -> Executable:
    """An executable from ``serialize_executable``, loaded for ``device``.

    The blob is trusted: loading one can run arbitrary code, so the cache
    directory must be writable only by its user. A blob that is not an
    executable raises (``Failed to parse SerializedXlaExecutableMetadata``).
    """
    return client.deserialize_executable(blob, xc.DeviceList((device,)), compile_options(device))


def result_handler(aval: ShapedArray, device: PjrtDevice) -> Any:
    """Turns one raw result into an ArrayImpl whose aval is ``aval``.

    Built once per output aval. 0.9/0.10 take ``_skip_checks`` and it must be
    True without jax (False calls a jax-only method); 0.11 removed it.
    """
    if isinstance(aval.dtype, ExtendedDType):
        # A key array comes back as what it is physically (its dtype's ``dtype``, of
        # the same shape); jaxlib reads ``aval.dtype`` as a NumPy dtype.
        aval = ShapedArray(aval.shape, aval.dtype.dtype, aval.weak_type)
    sharding = xc.SingleDeviceSharding(device)
    try:
        return xc.array_result_handler(aval, sharding, True, _skip_checks=True)
    except TypeError:
        return xc.array_result_handler(aval, sharding, True)


def make_runner(
    executable: Executable,
    out_avals: Sequence[ShapedArray],
    device: PjrtDevice,
    const_bufs: Sequence[Buffer] = (),
    const_avals: Sequence[ShapedArray] = (),
    donated: Sequence[int] = (),
) -> Callable[[list[Buffer]], list[Buffer]]:
    """The fast call path: ``execute_sharded`` + ``consume_with_handlers``.

    The convenience wrappers (``execute``, ``disassemble_...``) probe for an
    import of jax on every call, which costs 50-120 us without it (notes 5).
    ``const_bufs`` (constants hoisted out of the program, of ``const_avals``)
    go before the arguments; ``donated``: the argument positions the program
    may take over. One Python frame per call: this is the floor of every call.
    """
    handlers = [result_handler(a, device) for a in out_avals]
    execute_sharded = executable.execute_sharded
    consts = list(const_bufs)
    collect = collect_garbage

    def run(args: list[Buffer]) -> list[Buffer]:
        try:
            outs: list[Buffer] = execute_sharded(args).consume_with_handlers(handlers)
        except Exception as e:
            raise execution_error(args, e, consts, const_avals) from e
        collect()  # what earlier executions left (see collect_garbage)
        return outs

    def run_with_consts(args: list[Buffer]) -> list[Buffer]:
        try:
            outs: list[Buffer] = execute_sharded([*consts, *args]).consume_with_handlers(handlers)
        except Exception as e:
            raise execution_error(args, e, consts, const_avals) from e
        collect()
        return outs

    return _sharing_consts(run_with_consts if consts else run, consts, donated, device)


# id -> buffer, for every buffer some compiled program reads as a constant
# (a captured Array's own buffer, shared: backend.compile). A program that
# would take over one of them by donation takes over a copy instead, so that
# the programs reading it keep working, as in JAX.
_constant_buffers: weakref.WeakValueDictionary[int, Buffer] = weakref.WeakValueDictionary()


def _sharing_consts(
    run: Callable[[list[Buffer]], list[Buffer]], consts: Sequence[Buffer], donated: Sequence[int], device: PjrtDevice
) -> Callable[[list[Buffer]], list[Buffer]]:
    """``run``, once ``consts`` are known as buffers a program reads as constants,
    and donating copies of them if it donates (``_donating_copies_of_consts``)."""
    for c in consts:
        _constant_buffers[id(c)] = c
    return _donating_copies_of_consts(run, donated, device) if donated else run


def _donating_copies_of_consts(
    run: Callable[[list[Buffer]], list[Buffer]], donated: Sequence[int], device: PjrtDevice
) -> Callable[[list[Buffer]], list[Buffer]]:
    """``run``, donating a copy of any argument that a compiled program reads
    as a constant (XLA also refuses to take over a buffer the same call reads)."""
    positions = tuple(donated)
    shared = _constant_buffers

    def run_donating(args: list[Buffer]) -> list[Buffer]:
        for i in positions:
            if i < len(args) and shared.get(id(args[i])) is args[i]:
                args = list(args)
                args[i] = put(get(args[i]), device)
        return run(args)

    return run_donating


def execution_error(
    args: Sequence[Buffer], error: Exception, consts: Sequence[Buffer] = (), const_avals: Sequence[ShapedArray] = ()
) -> Exception:
    """What a failed execute means: JAX's error for a deleted (donated)
    argument, found after the fact to keep checks off the hot path; else the
    runtime's error (``runtime_error``)."""
    for b in args:
        check_live(b)
    for b, aval in zip(consts, const_avals):
        if b.is_deleted():
            # The program shares a captured Array's buffer (backend.compile); donation
            # elsewhere takes a copy, so only deleting the runtime buffer itself gets here.
            raise RuntimeError(
                f"an array captured by the jitted function ({aval.str_short(short_dtypes=False)}) has had its "
                "device buffer deleted, so the compiled program can no longer read it: keep the array's buffer "
                "alive, or pass the array as an argument"
            )
    return runtime_error(error)


def executable_hlo_text(executable: Executable) -> str:
    """The optimized HLO XLA compiled (for debugging and tests)."""
    text: str = executable.get_hlo_text()
    return text


def executable_cost_analysis(executable: Executable) -> dict[str, float] | None:
    """XLA's cost estimates ('flops', 'transcendentals', 'bytes accessed', ...),
    or None where the platform provides none."""
    try:
        costs = executable.cost_analysis()
    except Exception:  # not every PJRT plugin implements it
        return None
    return {str(k): float(v) for k, v in costs.items()} if costs else None


# --- lowering shims: ops whose XLA expansion changed between jaxlib versions ---------------------


def digamma(x: ir.Value[Any]) -> ir.Value[Any]:
    """``chlo.digamma`` with NaN at the pole 0 on every jaxlib.

    jaxlib 0.10.2's expansion gives NaN at +-0 (as JAX 0.10.2 and the NumPy
    reference do); 0.12's gives -inf. Selecting NaN where x == 0 is a no-op
    on the older versions, so the answer no longer depends on the version.
    """
    tensor = ir.RankedTensorType(x.type)
    element = tensor.element_type

    def splat(value: float) -> ir.Value[Any]:
        result: ir.Value[Any] = hlo.constant(ir.DenseElementsAttr.get_splat(tensor, ir.FloatAttr.get(element, value)))
        return result

    at_pole = hlo.compare(x, splat(0.0), hlo.ComparisonDirectionAttr.get("EQ"), compare_type=hlo.ComparisonTypeAttr.get("FLOAT"))
    result: ir.Value[Any] = hlo.select(at_pole, splat(float("nan")), chlo.digamma(x))
    return result


# --- GPU: the CUDA PJRT plugin (notes section 9) ------------------------------------------------

# The packages JAX's CUDA support ships as, newest CUDA first (jaxlib's own
# plugin_support lists the same module names):
# (plugin name, PJRT package holding the .so, its distribution, the kernels package).
_CUDA_PLUGINS = (
    ("cuda13", "jax_plugins.xla_cuda13", "jax-cuda13-pjrt", "jax_cuda13_plugin"),
    ("cuda12", "jax_plugins.xla_cuda12", "jax-cuda12-pjrt", "jax_cuda12_plugin"),
)
_CUDA_LIBRARY = "xla_cuda_plugin.so"


@dataclass(frozen=True)
class CudaPlugin:
    """An installed CUDA PJRT plugin, found without importing it."""

    name: str  # "cuda13"
    library: str  # path of xla_cuda_plugin.so
    distribution: str  # "jax-cuda13-pjrt"
    version: str | None  # the distribution's version (must equal jaxlib's)
    kernels: str | None  # the importable package with the GPU custom calls, if installed


def find_cuda_plugin() -> CudaPlugin | None:
    """The first installed CUDA plugin (13 before 12), or None.

    The PJRT package's ``__init__`` imports jax, so it is located with
    ``find_spec`` and its shared library is loaded by path, never imported.
    """
    for name, package, distribution, kernels in _CUDA_PLUGINS:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            spec = None
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        library = next((os.path.join(d, _CUDA_LIBRARY) for d in locations if os.path.isfile(os.path.join(d, _CUDA_LIBRARY))), None)
        if library is None:
            continue
        from importlib import metadata  # (here: ~10 ms to import, and only a found plugin needs it)

        try:
            version: str | None = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            version = None
        try:
            has_kernels = importlib.util.find_spec(kernels) is not None
        except (ImportError, ValueError):
            has_kernels = False
        return CudaPlugin(name, library, distribution, version, kernels if has_kernels else None)
    return None


def _release(version: str) -> tuple[int, ...]:
    """The leading numeric part of a version: "0.10.2" and "0.10.2.dev1" -> (0, 10, 2)."""
    parts = []
    for piece in version.split("."):
        digits = "".join(c for c in piece if c.isdigit()) if piece[:1].isdigit() else ""
        if not digits:
            break
        parts.append(int(digits))
        if not piece.isdigit():
            break
    return tuple(parts)


def _preload_cuda_libraries() -> None:
    """Load the pip-installed CUDA libraries (nvidia-* wheels), when present,
    as JAX does: the plugin dlopens them by name, and site-packages is not on
    the loader's path. Without those wheels the system's libraries are used."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return
    if spec is None:
        return
    for root in spec.submodule_search_locations or []:
        for sub in ("cu13/lib", "cuda_runtime/lib", "cublas/lib", "cudnn/lib", "nccl/lib", "cusolver/lib", "cufft/lib"):
            directory = os.path.join(root, sub)
            if not os.path.isdir(directory):
                continue
            for entry in sorted(os.listdir(directory)):
                if entry.startswith("lib") and ".so" in entry:
                    try:
                        ctypes.CDLL(os.path.join(directory, entry), mode=ctypes.RTLD_GLOBAL)
                    except OSError:
                        pass  # a library the plugin may not need; it reports what it misses


class GpuPluginError(RuntimeError):
    """A CUDA plugin is installed but could not be used."""


def make_cuda_client(plugin: CudaPlugin) -> Client:
    """Load ``plugin`` into jaxlib and create a client on its GPUs.

    Raises GpuPluginError, naming the plugin and the fix, when its version is
    not jaxlib's (they must match exactly) or loading or creating the client
    fails (no visible GPU, missing CUDA libraries, ...).
    """
    where = f"{plugin.distribution} {plugin.version or '(version unknown)'} at {plugin.library}"
    if plugin.version is not None and _release(plugin.version) != _release(JAXLIB_VERSION):
        raise GpuPluginError(
            f"the CUDA plugin {where} does not match jaxlib {JAXLIB_VERSION}: install the same version, "
            f"e.g. pip install '{plugin.distribution}=={JAXLIB_VERSION}' "
            f"'{plugin.distribution.replace('-pjrt', '-plugin')}=={JAXLIB_VERSION}', "
            "or set JAX_PLATFORMS=cpu to use the CPU only"
        )
    try:
        _preload_cuda_libraries()
        if not xc.pjrt_plugin_loaded("cuda"):
            c_api = xc.load_pjrt_plugin_dynamically("cuda", plugin.library)
            # Only after a successful load: initializing an unloaded plugin crashes.
            xc.initialize_pjrt_plugin("cuda")
            _register_cuda_kernels(plugin, c_api)
        return xc.make_c_api_client("cuda", xc.generate_pjrt_gpu_plugin_options())
    except Exception as e:
        raise GpuPluginError(
            f"the CUDA plugin {where} could not be used: {type(e).__name__}: {e}. "
            "Check that a GPU is visible (nvidia-smi) and the CUDA libraries are installed "
            f"(pip install '{plugin.distribution.replace('-pjrt', '-plugin')}[with-cuda]=={JAXLIB_VERSION}'), "
            "or set JAX_PLATFORMS=cpu to use the CPU only"
        ) from e


def _register_cuda_kernels(plugin: CudaPlugin, c_api: Any) -> None:
    """Register the plugin's GPU custom-call and type handlers (the kernels
    package's FFI tables), as the plugin's own initialisation does for jax."""
    if plugin.kernels is None:
        return
    try:
        extension = importlib.import_module(f"{plugin.kernels}.cuda_plugin_extension")
    except ImportError as e:
        warnings.warn(f"{plugin.kernels} is installed but its extension does not import ({e}); GPU custom calls are unavailable", stacklevel=3)
        return
    def pairs(table: Any) -> list[tuple[str, Any]]:
        return list(table.items()) if isinstance(table, dict) else list(table)

    # Untested without a GPU (notes section 9, step 7): a failure here only
    # loses the GPU custom calls (minijax's primitives do not use any yet), so
    # it warns instead of refusing the GPU.
    try:
        xc.register_custom_call_handler("CUDA", functools.partial(extension.register_custom_call_target, c_api))
        for name, handler in pairs(extension.ffi_handlers()):
            xc.register_custom_call_target(name, handler, platform="CUDA", api_version=1)
        if hasattr(extension, "register_custom_type"):
            xc.register_custom_type_handler("CUDA", functools.partial(extension.register_custom_type, c_api))
            for type_name, type_id in pairs(getattr(extension, "ffi_types", list)()):
                xc.register_custom_type(type_name, type_id, platform="CUDA")
    except Exception as e:
        warnings.warn(f"registering the GPU kernels of {plugin.kernels} failed ({type(e).__name__}: {e})", stacklevel=3)
    _register_cusolver_kernels(plugin.kernels)


def _register_cusolver_kernels(kernels: str) -> None:
    """The cuSOLVER kernels the linalg lowerings call on a GPU (``cusolver_getrf_ffi``, ...),
    as jaxlib's ``gpu_solver`` registers them for jax."""
    try:
        solver = importlib.import_module(f"{kernels}._solver")
        for name, capsule in solver.registrations().items():
            xc.register_custom_call_target(name, capsule, platform="CUDA", api_version=1 if name.endswith("_ffi") else 0)
    except Exception as e:
        warnings.warn(f"the cuSOLVER kernels of {kernels} are unavailable ({type(e).__name__}: {e}): linalg will fail on the GPU", stacklevel=3)


# --- host callbacks: Python functions called from compiled code (notes section 8) -------------

# jaxlib's targets for Python callbacks (typed FFI), by platform. The ``index``
# attribute picks the function from the list given to
# ``compile_module_with_callbacks``; running a module that has this call
# without that list crashes the process.
HOST_CALLBACK_TARGETS = {"cpu": "xla_ffi_python_cpu_callback", "gpu": "xla_ffi_python_gpu_callback"}


def token_type() -> ir.Type:
    """The type of the token that orders side effects (``!stablehlo.token``)."""
    return hlo.TokenType.get()


def create_token() -> ir.Value[Any]:
    """A fresh token, the start of a chain of ordered side effects."""
    token: ir.Value[Any] = hlo.create_token()
    return token


def _row_major_layouts(types: Sequence[ir.Type]) -> ir.ArrayAttr:
    # Without layouts XLA may pick a non-row-major one for an operand (after a
    # transpose, say) and the callback would read the bytes in another order.
    # Minor-to-major dimension lists; a token has no dimensions.
    index = ir.IndexType.get()
    layouts = []
    for t in types:
        rank = t.rank if isinstance(t, ir.RankedTensorType) else 0
        minor_to_major = np.arange(rank - 1, -1, -1, dtype=np.int64)
        layouts.append(ir.DenseIntElementsAttr.get(minor_to_major, type=index))  # type: ignore[call-overload]
    return ir.ArrayAttr.get(layouts)


def emit_host_callback(
    index: int,
    operands: Sequence[ir.Value[Any]],
    result_types: Sequence[ir.Type],
    has_side_effect: bool,
    platform: str = "cpu",
) -> list[ir.Value[Any]]:
    """A call of host function number ``index`` at the current insertion point
    of a module compiled for ``platform`` ("cpu" or "gpu").

    ``has_side_effect=False`` lets XLA drop the call when its results are
    unused (and is only right for pure functions). The function receives the
    operands as read-only NumPy arrays (tokens included, as opaque values) and
    must return a tuple with one array per result type, of exactly that shape
    and dtype: XLA does not check (notes gotcha 5).
    """
    i32 = ir.IntegerType.get_signless(32)
    config = ir.DictAttr.get({"index": ir.IntegerAttr.get(ir.IntegerType.get_unsigned(64), index)})
    op = hlo.CustomCallOp(
        list(result_types),
        list(operands),
        HOST_CALLBACK_TARGETS[platform],
        has_side_effect=has_side_effect,
        api_version=ir.IntegerAttr.get(i32, 4),  # typed FFI: backend_config is a dictionary
        backend_config=config,
        operand_layouts=_row_major_layouts([v.type for v in operands]),
        result_layouts=_row_major_layouts(result_types),
    )
    return list(op.results)


def compile_module_with_callbacks(
    client: Client, module: ir.Module, device: PjrtDevice, host_callbacks: Sequence[Callable[..., Any]]
) -> Executable:
    """``compile_module`` for a module with host callbacks: ``host_callbacks[i]``
    is the function its ``emit_host_callback(i, ...)`` calls."""
    check_module(module, n_host_callbacks=len(host_callbacks))
    options = compile_options(device)
    return client.compile_and_load(module, xc.DeviceList((device,)), options, host_callbacks=list(host_callbacks))


def execute_and_wait(execute_sharded: Callable[..., Any], args: list[Buffer], handlers: Sequence[Any]) -> list[Buffer]:
    """Run an executable with host callbacks and return its results once the whole
    execution, callbacks included, has finished (``make_waiting_runner`` says why)."""
    results = execute_sharded(args, with_tokens=True)
    done = results.consume_token()
    outs: list[Buffer] = results.consume_with_handlers(list(handlers))
    done.block_until_ready()
    return outs


def make_waiting_runner(
    executable: Executable,
    out_avals: Sequence[ShapedArray],
    device: PjrtDevice,
    const_bufs: Sequence[Buffer] = (),
    const_avals: Sequence[ShapedArray] = (),
    donated: Sequence[int] = (),
) -> Callable[[list[Buffer]], list[Buffer]]:
    """``make_runner`` for programs with host callbacks: a call returns only
    after the whole execution, callbacks included, has finished.

    So a debug print has happened when the call returns, an error raised in a
    callback is raised by the call, and the callbacks of two calls never
    interleave (JAX orders them with runtime tokens; minijax by waiting).
    """
    handlers = [result_handler(a, device) for a in out_avals]
    execute_sharded = executable.execute_sharded
    consts = list(const_bufs)

    def run(args: list[Buffer]) -> list[Buffer]:
        try:
            outs = execute_and_wait(execute_sharded, [*consts, *args], handlers)
        except Exception as e:
            raise execution_error(args, e, consts, const_avals) from e
        collect_garbage()
        return outs

    return _sharing_consts(run, consts, donated, device)
