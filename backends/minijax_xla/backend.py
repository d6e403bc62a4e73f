"""XlaBackend: buffers are PJRT arrays; every computation is a compiled executable.

Eager operations are compiled too: ``prepare`` lowers a one-equation jaxpr
and compiles it once per (primitive, avals, params, device); the dispatch
layer keeps the returned runner, so a repeated eager op costs one executable
call.

Devices: the CPU client's devices (one, or N with
``XLA_FLAGS=--xla_force_host_platform_device_count=N`` / ``jax_num_cpu_devices``)
and, when a CUDA PJRT plugin is installed and usable, the GPUs, which then
come first (``devices()`` is the GPUs, ``platform_devices("cpu")`` the CPUs).
Every executable is compiled for the device it runs on.

The persistent compilation cache (off unless ``jax_compilation_cache_dir`` is
set) stores serialized executables under a hash of everything that decides
the compiled code; see ``_load_or_compile``.
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
import time
import warnings
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import distributed, monitoring
from minijax.array import Array
from minijax.backend import Backend, Device, Executable
from minijax.caching import BoundedCache
from minijax.config import executable_cache_size, read as read_flag, x64_enabled
from minijax.core import Primitive, ShapedArray
from minijax.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var
from minijax.mesh import NamedSharding, PartitionSpec, result_hints
from minijax.primitives import FAMILIES
from minijax_xla import jaxlib_api, spmd
from minijax_xla.lowering import LOWERINGS, lower_jaxpr, module_text
from minijax_xla.profiler import XlaProfiler

Runner = Callable[[Sequence[Any]], list[Any]]

logger = logging.getLogger("minijax_xla")


# The modules that fill LOWERINGS: one per primitive family, named as the
# module of minijax/primitives/ that defines its primitives
# (minijax.primitives.FAMILIES), never the package's helper modules.


def load_rules() -> None:
    """Import every family module of this package (each fills LOWERINGS)."""
    for family in FAMILIES:
        importlib.import_module(f"minijax_xla.{family}")


def donation_aliases(
    in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray], donated: Sequence[bool]
) -> dict[int, int]:
    """input position -> output position that reuses its buffer.

    Each donated input, in order, takes the first still-free output of the
    same shape and dtype: the same choice minijax's jit makes when it decides
    which donated Arrays to delete, so the two always agree.
    """
    free = list(range(len(out_avals)))
    aliases: dict[int, int] = {}
    for i, (aval, d) in enumerate(zip(in_avals, donated)):
        if not d:
            continue
        for j in free:
            if out_avals[j].shape == aval.shape and out_avals[j].dtype == aval.dtype:
                aliases[i] = j
                free.remove(j)
                break
    return aliases


# --- GPU discovery ---------------------------------------------------------------------


def _requested_platforms() -> set[str] | None:
    """The entries of JAX_PLATFORMS / jax_platforms, or None when unset."""
    wanted = read_flag("jax_platforms") or read_flag("jax_platform_name")
    if not wanted:
        return None
    return {e.strip().lower() for e in str(wanted).split(",") if e.strip()}


def gpu_client(platforms: set[str] | None) -> tuple[Any, str]:
    """A client on the GPUs of an installed CUDA plugin, or None; and a status line.

    ``platforms`` (JAX_PLATFORMS) decides how hard to try: unset, a plugin
    that fails to load warns and the backend runs on the CPU (as JAX does);
    naming "gpu"/"cuda" makes that failure an error; naming neither (e.g.
    "cpu") skips the plugin altogether.
    """
    explicit = platforms is not None and bool(platforms & {"gpu", "cuda"})
    if platforms is not None and not explicit and "xla" not in platforms:
        return None, f"not looked for (JAX_PLATFORMS={','.join(sorted(platforms))})"
    plugin = jaxlib_api.find_cuda_plugin()
    if plugin is None:
        return None, f"no CUDA plugin installed (pip install 'jax-cuda13-plugin[with-cuda]=={jaxlib_api.JAXLIB_VERSION}')"
    try:
        client = jaxlib_api.make_cuda_client(plugin)
    except jaxlib_api.GpuPluginError as e:
        if explicit:
            raise
        warnings.warn(f"minijax xla backend: falling back to the CPU: {e}", RuntimeWarning, stacklevel=2)
        return None, f"{plugin.name} plugin failed to load: {e}"
    return client, f"{plugin.name} plugin loaded from {plugin.library}"


# --- the persistent compilation cache --------------------------------------------------------


def cache_directory() -> str | None:
    """Where the persistent cache lives, or None when it is off (the default)."""
    if not read_flag("jax_enable_compilation_cache"):
        return None
    directory = read_flag("jax_compilation_cache_dir")
    return str(directory) if directory else None


def cache_key(module: bytes, device: Any) -> str:
    """A hash of everything that decides the compiled code: the module text,
    the compile options (which name the device), jaxlib's version, the
    platform and its version, the device kind, and the x64 flag (belt and
    braces: the module's types already reflect it)."""
    client = jaxlib_api.device_client(device)
    parts = [
        module,
        jaxlib_api.compile_options_bytes(device),
        jaxlib_api.JAXLIB_VERSION.encode(),
        str(device.platform).encode(),
        jaxlib_api.platform_version(client).encode(),
        str(device.device_kind).encode(),
        b"x64" if x64_enabled() else b"x32",
    ]
    # (hashlib and tempfile are imported by the persistent cache's functions, only when it is
    # on: together ~2% of the time to the first operation otherwise)
    import hashlib

    digest = hashlib.sha256()
    for part in parts:  # length-prefixed, so that no two part lists hash alike
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()


def _cache_problem(action: str, path: str, error: Exception) -> None:
    message = f"minijax persistent compilation cache: {action} {path} failed: {type(error).__name__}: {error}"
    if read_flag("jax_raise_persistent_cache_errors"):
        raise RuntimeError(message) from error
    warnings.warn(message + " (compiling instead; set jax_raise_persistent_cache_errors to raise)", stacklevel=4)


def _write_atomically(path: str, blob: bytes) -> None:
    # A reader in another process sees the old file or the whole new one.
    import tempfile

    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


class XlaBackend(Backend):
    name = "xla"
    platform = "cpu"
    # Above numpy (0): XLA is the default wherever jaxlib imports (issue 3).
    priority = 10

    def __init__(self, num_cpu_devices: int | None = None) -> None:
        load_rules()
        # What this backend compiled and loaded: tests and `minijax info` read it.
        # Counted under a lock: several threads may compile at once.
        self.stats: Counter[str] = Counter()
        self._stats_lock = threading.Lock()
        if num_cpu_devices is None:
            configured = int(read_flag("jax_num_cpu_devices"))
            num_cpu_devices = configured if configured > 0 else None
        # mproc (issue 17): after jax.distributed.initialize the CPU client spans every
        # process; its devices() are global, each with the process_index that owns it.
        if distributed.is_initialized():
            state = distributed.global_state
            cpu_client = jaxlib_api.make_distributed_cpu_client(
                state.client, state.process_id, state.num_processes, num_cpu_devices
            )
            cpu = list(cpu_client.devices())
        else:
            cpu = jaxlib_api.client_devices(jaxlib_api.make_cpu_client(num_cpu_devices))
        gpu_client_, self.gpu_status = gpu_client(_requested_platforms())
        gpu = jaxlib_api.client_devices(gpu_client_) if gpu_client_ is not None else []
        self._cpu_devices = [Device(self, d.id, "cpu", str(d.device_kind)) for d in cpu]
        for device, pjrt_device in zip(self._cpu_devices, cpu):
            device.process_index = int(pjrt_device.process_index)
        self._gpu_devices = [Device(self, d.id, "gpu", str(d.device_kind), name=str(d)) for d in gpu]
        # JAX's order: an accelerator, when present, is the default platform.
        self.platform = "gpu" if gpu else "cpu"
        # mproc (issue 17): devices() are this process's (the default device is the
        # first of them); global_devices() adds the other processes' devices.
        self._global_devices = self._gpu_devices or self._cpu_devices
        self._devices = [d for d in self._global_devices if d.process_index == self.process_index()]
        self._pjrt_of: dict[Device, Any] = dict(zip(self._gpu_devices + self._cpu_devices, gpu + cpu))
        self._device_of = {p: d for d, p in self._pjrt_of.items()}
        # (prim, avals, params, device) -> runner of its compiled program,
        # bounded (minijax_executable_cache_size) and compiled once per key.
        self._eager_cache: BoundedCache[tuple[Any, ...], Runner] = BoundedCache("xla eager executables", executable_cache_size)
        # runner returned by compile -> the loaded executable behind it.
        self._loaded: weakref.WeakKeyDictionary[Runner, Any] = weakref.WeakKeyDictionary()
        # spmdx: the runner compile_spmd returned -> its program (Compiled.as_text of an SPMD program).
        self._spmd_programs: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

    # --- devices and buffers -------------------------------------------------------
    def devices(self) -> list[Device]:
        return self._devices

    def global_devices(self) -> list[Device]:
        return self._global_devices

    def process_index(self) -> int:
        return distributed.global_state.process_id

    def process_count(self) -> int:
        return distributed.global_state.num_processes

    def platform_devices(self, platform: str) -> list[Device]:
        devices = {"cpu": self._cpu_devices, "gpu": self._gpu_devices}.get(platform, [])
        return [d for d in devices if d.process_index == self.process_index()]

    def _pjrt_device(self, device: Device | None) -> Any:
        if device is None:
            device = self._devices[0]
        pjrt = self._pjrt_of.get(device)
        if pjrt is None:
            raise ValueError(f"device {device!r} belongs to the {device.backend.name!r} backend, not 'xla'")
        return pjrt

    def put(self, value: np.ndarray[Any, Any], device: Device | None = None) -> Any:
        return jaxlib_api.put(jaxlib_api.c_contiguous(np.asarray(value)), self._pjrt_device(device))

    def get(self, buffer: Any) -> np.ndarray[Any, Any]:
        return jaxlib_api.get(buffer)

    # The runtime's C method itself, not a method calling it: no Python frame per
    # blocked call. (Array.block_until_ready turns a deleted buffer's error into JAX's.)
    block_until_ready = staticmethod(jaxlib_api.wait_until_ready)
    # What Array.block_until_ready raises for the runtime's error: JaxRuntimeError.
    runtime_error = staticmethod(jaxlib_api.runtime_error)

    def is_ready(self, buffer: Any) -> bool:
        return jaxlib_api.is_ready(buffer)

    def buffer_device(self, buffer: Any) -> Device:
        device: Device = self._device_of[jaxlib_api.buffer_device(buffer)]
        return device

    def supports(self, prim: Primitive) -> bool:
        return prim.name in LOWERINGS

    def _count(self, stat: str) -> None:
        with self._stats_lock:
            self.stats[stat] += 1

    # --- what is alive (tests: nothing keeps buffers or programs past their use) ----------
    def live_buffer_count(self) -> int:
        """How many device buffers exist on this backend's clients right now."""
        return sum(jaxlib_api.live_buffer_count(c) for c in self._clients())

    def live_executable_count(self) -> int:
        """How many compiled programs are loaded on this backend's clients right now."""
        return sum(jaxlib_api.live_executable_count(c) for c in self._clients())

    def _clients(self) -> list[Any]:
        clients: list[Any] = []
        for pjrt in self._pjrt_of.values():
            client = jaxlib_api.device_client(pjrt)
            if not any(client is c for c in clients):
                clients.append(client)
        return clients

    # --- arrays over several devices (minijax_xla.spmd) ----------------------------------
    def holds_shards(self, devices: Sequence[Device]) -> bool:
        pjrt = [self._pjrt_of.get(d) for d in devices]
        if any(p is None for p in pjrt) or len(set(map(id, pjrt))) < 2:
            return False
        client = jaxlib_api.device_client(pjrt[0])
        return all(jaxlib_api.device_client(p) is client for p in pjrt)

    def put_shards(self, value: np.ndarray[Any, Any], sharding: Any) -> Any:
        devices = sharding._device_assignment
        if self.process_count() > 1:
            return self._put_local_shards(value, sharding)
        indices = sharding.devices_indices_map(value.shape)
        return spmd.put_shards(value, sharding, [self._pjrt_of[d] for d in devices], [indices[d] for d in devices])

    def put_blocks(self, blocks: Sequence[np.ndarray[Any, Any]], sharding: Any, shape: tuple[int, ...]) -> Any:
        # npspmd (issue 17): each device's own block, as make_array_from_single_device_arrays gives them
        pjrt = [self._pjrt_of[d] for d in sharding._device_assignment]
        bufs = [jaxlib_api.put(jaxlib_api.c_contiguous(np.asarray(b)), d) for b, d in zip(blocks, pjrt)]
        aval = ShapedArray(shape, blocks[0].dtype)
        return spmd.assemble(aval, spmd.hlo_sharding(sharding, len(shape)), pjrt, bufs)

    # mproc (issue 17): over several processes a global array holds only this process's
    # blocks; the other processes hold theirs (every process passes the same whole value,
    # or, through make_array_from_process_local_data, its own part).
    def _local(self, devices: Sequence[Device]) -> list[Device]:
        mine = self.process_index()
        return [d for d in devices if d.process_index == mine]

    def _put_local_shards(self, value: np.ndarray[Any, Any], sharding: Any) -> Any:
        indices = sharding.devices_indices_map(value.shape)
        return self.put_local_blocks(
            value.shape, value.dtype, sharding, {d: value[indices[d]] for d in self._local(sharding._device_assignment)}
        )

    def put_local_blocks(
        self, shape: tuple[int, ...], dtype: Any, sharding: Any, blocks: dict[Device, np.ndarray[Any, Any]]
    ) -> Any:
        """The global array of ``shape`` laid out by ``sharding`` whose blocks on this
        process's devices are ``blocks`` (the other processes supply theirs)."""
        pjrt_all = [self._pjrt_of[d] for d in sharding._device_assignment]
        buffers = [jaxlib_api.put(jaxlib_api.c_contiguous(np.asarray(b, dtype=dtype)), self._pjrt_of[d])
                   for d, b in blocks.items()]  # fmt: skip
        return spmd.assemble(ShapedArray(tuple(shape), np.dtype(dtype)), spmd.hlo_sharding(sharding, len(shape)), pjrt_all, buffers)

    def get_shards(self, buffer: Any, sharding: Any, shape: tuple[int, ...], dtype: Any) -> np.ndarray[Any, Any]:
        indices = sharding.devices_indices_map(shape)
        devices = sharding._device_assignment
        if len(self._local(devices)) < len(devices):
            local = self._local(devices)

            def blocks(ds: Sequence[Device]) -> set[str]:
                return {repr(indices[d]) for d in ds}

            # JAX's rule: fetchable when this process's devices hold every distinct block of the value
            # (replicated, or laid out only over mesh axes within a process).
            if sharding.is_fully_replicated:
                local = local[:1]
            elif blocks(local) != blocks(devices):
                raise RuntimeError(
                    "Fetching value for `jax.Array` that spans non-addressable (non process local) devices is not "
                    "possible. You can use `jax.experimental.multihost_utils.process_allgather` to print the global "
                    "array or use `.addressable_shards` method of jax.Array to inspect the addressable (process "
                    "local) shards."
                )
            devices = local
        return spmd.to_host(buffer, [self._pjrt_of[d] for d in devices], shape, dtype, [indices[d] for d in devices])

    def shard_buffers(self, buffer: Any, sharding: Any, shape: tuple[int, ...]) -> list[Any]:
        pjrt = [self._pjrt_of[d] for d in self._local(sharding._device_assignment)]
        return spmd.shard_buffers(buffer, pjrt, sharding.shard_shape(shape))

    def compile_spmd(
        self, closed: ClosedJaxpr, in_shardings: Sequence[Any], out_shardings: Sequence[Any | None],
        donated: Sequence[int] = (), name: str | None = None,
    ) -> tuple[Callable[[list[Any]], list[Any]], list[Any]]:
        mesh = in_shardings[0].mesh
        pjrt, in_hlos, out_hlos = self._spmd_layouts(closed, in_shardings, out_shardings)
        replicated = NamedSharding(mesh, PartitionSpec())

        def put_replicated(value: Any, aval: ShapedArray) -> Any:
            return self.put_shards(np.asarray(value, dtype=aval.dtype), replicated)

        if self.process_count() > 1:
            self._agree_across_processes(closed, in_shardings, in_shardings[0]._device_assignment)
        self._count("compiles")
        aliases = _spmd_aliases(closed, donated)
        program = spmd.SpmdProgram(closed, pjrt, in_hlos, out_hlos, put_replicated, aliases, name)
        self._spmd_programs[program.run] = program
        results = []
        for given, hlo, aval in zip(out_shardings, program.out_hlos, closed.out_avals):
            if given is not None:
                results.append(given)
                continue
            spec = spmd.spec_for(hlo, mesh, aval.ndim, result_hints(in_shardings, closed.in_avals, aval))
            if spec is None:  # a layout no PartitionSpec names: laid out anew, replicated
                raise NotImplementedError(
                    f"minijax: XLA laid a result of the SPMD program out as {hlo}, which no PartitionSpec over "
                    f"{mesh} names; give jit out_shardings= for it."
                )
            results.append(NamedSharding(mesh, spec))
        return program.run, results

    def _spmd_layouts(
        self, closed: ClosedJaxpr, in_shardings: Sequence[Any], out_shardings: Sequence[Any | None]
    ) -> tuple[list[Any], list[Any], list[Any | None]]:
        pjrt = [self._pjrt_of[d] for d in in_shardings[0]._device_assignment]
        in_hlos = [spmd.hlo_sharding(s, a.ndim) for s, a in zip(in_shardings, closed.in_avals)]
        out_hlos = [None if s is None else spmd.hlo_sharding(s, a.ndim) for s, a in zip(out_shardings, closed.out_avals)]
        return pjrt, in_hlos, out_hlos

    def lower_spmd_text(
        self, closed: ClosedJaxpr, in_shardings: Sequence[Any], out_shardings: Sequence[Any | None],
        donated: Sequence[int] = (), name: str | None = None,
    ) -> str:
        # spmdx: the module compile_spmd compiles, as Lowered.as_text() shows it.
        pjrt, in_hlos, out_hlos = self._spmd_layouts(closed, in_shardings, out_shardings)
        module, _ = spmd.lower_spmd(closed, pjrt, in_hlos, out_hlos, name, _spmd_aliases(closed, donated))
        return module_text(module)

    def spmd_compiled_text(self, run: Callable[[list[Any]], list[Any]]) -> str | None:
        program = self._spmd_programs.get(run)
        return None if program is None else jaxlib_api.executable_hlo_text(program.executable)

    # mproc (issue 17): the processes of a multi-process computation must compile the same
    # SPMD program over the same device assignment; a mismatch would otherwise hang in (or
    # crash from) XLA's collectives. Each process publishes what its nth such compile is
    # through the coordination service's key-value store and compares with the others'.
    _mp_compiles = 0

    def _agree_across_processes(self, closed: ClosedJaxpr, in_shardings: Sequence[Any], devices: Sequence[Device]) -> None:
        state = distributed.global_state
        mesh = in_shardings[0].mesh
        mine = (
            f"mesh {dict(mesh.shape)} over devices {[d.id for d in devices]}; "
            f"in_specs {[str(s.spec) for s in in_shardings]}; in_avals {[str(a) for a in closed.in_avals]}"
        )
        n = self._mp_compiles
        self._mp_compiles += 1
        state.client.key_value_set(f"minijax/spmd/{n}/{state.process_id}", mine)
        for other in range(state.num_processes):
            if other == state.process_id:
                continue
            try:
                theirs = state.client.blocking_key_value_get(f"minijax/spmd/{n}/{other}", 60_000)
            except Exception as e:
                raise RuntimeError(
                    f"minijax: process {other} did not compile its SPMD program #{n} within 60 s ({e}); every process "
                    "must run the same jitted computations over global arrays, in the same order"
                ) from e
            if theirs != mine:
                raise ValueError(
                    f"Processes disagree on a jitted computation over arrays that span processes: process "
                    f"{state.process_id} has {mine}, process {other} has {theirs}. Every process must build the same "
                    "Mesh (same devices, same order, same axis names and sizes) and pass arrays of the same global "
                    "shapes and shardings, e.g. jax.make_mesh(...) with jax.devices() on every process."
                )

    # --- eager ---------------------------------------------------------------------
    def execute(
        self,
        prim: Primitive,
        params: dict[str, Any],
        inputs: Sequence[Any],
        out_avals: Sequence[ShapedArray],
    ) -> list[Any]:
        device = self.buffer_device(inputs[0]) if inputs else None
        return self.prepare(prim, params, [jaxlib_api.buffer_aval(b) for b in inputs], out_avals, device)(inputs)

    def prepare(
        self,
        prim: Primitive,
        params: dict[str, Any],
        in_avals: Sequence[ShapedArray],
        out_avals: Sequence[ShapedArray],
        device: Device | None = None,
    ) -> Runner:
        def compile_() -> Runner:
            invars = [Var(a) for a in in_avals]
            outvars = [Var(a) for a in out_avals]
            jaxpr = Jaxpr([], invars, outvars, [JaxprEqn(list(invars), outvars, prim, dict(params))])
            return self.compile(ClosedJaxpr(jaxpr, []), device=device)

        # The results' avals are part of the key: they are not always a function of the operands and
        # params alone (dim_as_value's scalar is int32 or int64 as x64 is off or on).
        key = (prim, tuple(in_avals), tuple(params.items()), tuple(out_avals), device)
        try:
            hash(key)
        except TypeError:  # an unhashable param: compile, don't cache
            return compile_()
        return self._eager_cache.get_or_make(key, compile_)

    # --- whole programs -----------------------------------------------------------------
    def compile(
        self, closed: ClosedJaxpr, donated_invars: Sequence[bool] | None = None, device: Device | None = None
    ) -> Executable:
        pjrt = self._pjrt_device(device)
        aliases = donation_aliases(closed.in_avals, closed.out_avals, donated_invars or [])
        host_callbacks: list[Callable[..., Any]] = []
        module, hoisted = lower_jaxpr(closed, "main", aliases, host_callbacks, jaxlib_api.device_platform(pjrt))
        const_avals = [closed.jaxpr.constvars[i].aval for i in hoisted]
        if host_callbacks:  # the program calls back into Python (debug.print, pure_callback, ...)
            # Never through the persistent cache: a stored executable does not
            # hold the Python functions, and running it without them crashes.
            self._count("compiles")
            client = jaxlib_api.device_client(pjrt)
            executable = jaxlib_api.compile_module_with_callbacks(client, module, pjrt, host_callbacks)
            const_bufs = [self._constant_buffer(closed.consts[i], a, pjrt) for i, a in zip(hoisted, const_avals)]
            run = jaxlib_api.make_waiting_runner(executable, closed.out_avals, pjrt, const_bufs, const_avals, sorted(aliases))
        else:
            executable = self._load_or_compile(module, pjrt)
            const_bufs = [self._constant_buffer(closed.consts[i], a, pjrt) for i, a in zip(hoisted, const_avals)]
            run = jaxlib_api.make_runner(executable, closed.out_avals, pjrt, const_bufs, const_avals, sorted(aliases))
        runner = _checked_runner(run, closed.in_avals)
        self._loaded[runner] = executable
        return runner

    def _constant_buffer(self, value: Any, aval: ShapedArray, pjrt: Any) -> Any:
        """The buffer a captured constant is passed in at every call.

        A captured Array already on ``pjrt`` is passed as it is: the program
        shares its buffer rather than holding a copy of its own, so a
        captured array is held once and goes when both the array and the
        function are gone (issue 22). Anything else (a NumPy array, an Array
        of another device or backend) is copied there once.
        """
        if isinstance(value, Array) and value._backend is self and self._pjrt_of.get(value._device) is pjrt:
            buf = value._buf
            buf_aval = getattr(buf, "aval", None)
            if buf is not None and buf_aval is not None and buf_aval.shape == aval.shape and buf_aval.dtype == aval.dtype:
                return buf
        return jaxlib_api.put(jaxlib_api.c_contiguous(np.asarray(value, dtype=aval.dtype)), pjrt)

    def _load_or_compile(self, module: Any, pjrt: Any) -> Any:
        """The executable for ``module``: from the persistent cache when it is on
        and holds it, else compiled (and written there if it took at least
        ``jax_persistent_cache_min_compile_time_secs`` and is at least
        ``jax_persistent_cache_min_entry_size_bytes`` long, as in JAX)."""
        client = jaxlib_api.device_client(pjrt)
        directory = cache_directory()
        if directory is None:
            self._count("compiles")
            return jaxlib_api.compile_module(client, module, pjrt)
        monitoring.record_event("/jax/compilation_cache/compile_requests_use_cache")
        path = os.path.join(directory, f"minijax-{cache_key(jaxlib_api.module_bytes(module), pjrt)}")
        if os.path.exists(path):
            try:
                start = time.monotonic()
                with open(path, "rb") as f:
                    executable = jaxlib_api.deserialize_executable(client, f.read(), pjrt)
                self._count("cache_hits")
                logger.debug("persistent compilation cache hit: %s", path)
                monitoring.record_event("/jax/compilation_cache/cache_hits")
                monitoring.record_event_duration_secs(
                    "/jax/compilation_cache/cache_retrieval_time_sec", time.monotonic() - start
                )
                return executable
            except Exception as e:
                _cache_problem("reading", path, e)
        start = time.perf_counter()
        executable = jaxlib_api.compile_module(client, module, pjrt)
        seconds = time.perf_counter() - start
        self._count("compiles")
        self._count("cache_misses")
        if seconds < float(read_flag("jax_persistent_cache_min_compile_time_secs")):
            logger.debug("not caching %s: compiled in %.3f s, under the minimum", path, seconds)
            return executable
        try:
            blob = jaxlib_api.serialize_executable(executable)
            if len(blob) >= int(read_flag("jax_persistent_cache_min_entry_size_bytes")):
                _write_atomically(path, blob)
                self._count("cache_writes")
                monitoring.record_event("/jax/compilation_cache/cache_misses")  # JAX counts a written miss
                logger.debug("persistent compilation cache write: %s (%d bytes)", path, len(blob))
        except Exception as e:
            _cache_problem("writing", path, e)
        return executable

    def lower_text(self, closed: ClosedJaxpr) -> str:
        module, _ = lower_jaxpr(closed)
        return module_text(module)

    def lowered_text(self, closed: ClosedJaxpr, dialect: str) -> str:
        if dialect == "hlo":
            text: str = jaxlib_api.hlo_computation(lower_jaxpr(closed)[0]).as_hlo_text()
            return text
        return self.lower_text(closed)

    def compiler_ir(self, closed: ClosedJaxpr, dialect: str | None) -> Any:
        module = lower_jaxpr(closed)[0]
        return jaxlib_api.hlo_computation(module) if dialect == "hlo" else module

    def lowered_cost_analysis(self, closed: ClosedJaxpr) -> dict[str, float] | None:
        client = jaxlib_api.device_client(self._pjrt_device(None))
        return jaxlib_api.hlo_cost_analysis(client, lower_jaxpr(closed)[0])

    def memory_analysis(self, executable: Executable) -> Any:
        loaded = self._loaded.get(executable)
        return None if loaded is None else jaxlib_api.executable_memory_stats(loaded)

    compiles_stablehlo = True

    def profiler(self) -> Any:
        return XlaProfiler(jaxlib_api.device_client(self._pjrt_device(None)))

    def refine_exported(self, module_text: str, in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray]) -> str:
        """An exported module with symbolic dimensions specialized to concrete argument types."""
        return jaxlib_api.refine_module_text(module_text, in_avals, out_avals)

    def compile_exported(self, module_text: str, in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray]) -> Executable:
        """Compile an exported program's StableHLO text (``jax.export``) for the default device:
        a runner like ``compile``'s, on buffers of ``in_avals``."""
        pjrt = self._pjrt_device(None)
        module = jaxlib_api.parse_module(module_text)
        executable = self._load_or_compile(module, pjrt)
        runner = _checked_runner(jaxlib_api.make_runner(executable, out_avals, pjrt), in_avals)
        self._loaded[runner] = executable
        return runner

    def compiled_text(self, executable: Executable) -> str | None:
        loaded = self._loaded.get(executable)
        return None if loaded is None else jaxlib_api.executable_hlo_text(loaded)

    def cost_analysis(self, executable: Executable) -> dict[str, float] | None:
        loaded = self._loaded.get(executable)
        return None if loaded is None else jaxlib_api.executable_cost_analysis(loaded)


def _checked_runner(run: Callable[[list[Any]], list[Any]], in_avals: Sequence[ShapedArray]) -> Runner:
    """Wrap ``run`` with the checks XLA does not make.

    An executable accepts any buffer of the right byte size (int32[4] into an
    f32[4] parameter computes garbage), so shapes and dtypes are checked here.
    (A deleted or donated input is recognised by ``run`` after the fact, off
    the hot path.)
    """
    expected = [(a.shape, a.dtype) for a in in_avals]
    n = len(expected)

    def call(bufs: Sequence[Any]) -> list[Any]:
        if len(bufs) != n:
            raise TypeError(f"xla executable takes {n} arguments, got {len(bufs)}")
        for i, (b, (shape, dtype)) in enumerate(zip(bufs, expected)):
            aval = getattr(b, "aval", None)
            if aval is None or aval.shape != shape or aval.dtype != dtype:
                raise _argument_type_error(i, b, in_avals[i])
        return run(bufs if isinstance(bufs, list) else list(bufs))

    # For callers that have already matched the arguments' types against the
    # program's (jit's call path, whose cache key holds them): the same call
    # without re-checking each buffer, a microsecond of a tiny call.
    call.unchecked = run  # type: ignore[attr-defined]
    return call


def _argument_type_error(i: int, buf: Any, expected: ShapedArray) -> TypeError:
    aval = getattr(buf, "aval", None)
    got = aval.str_short() if isinstance(aval, ShapedArray) else type(buf).__name__
    return TypeError(
        f"xla executable: argument {i} is {got}, but the program was compiled for {expected.str_short()}; "
        "call it with arguments of the types it was compiled for (or re-trace for the new types)"
    )


def _spmd_aliases(closed: ClosedJaxpr, donated: Sequence[int]) -> dict[int, int]:
    """spmdx: the donated inputs (jaxpr positions) -> the outputs that take their buffers."""
    flags = [i in set(donated) for i in range(len(closed.in_avals))]
    return donation_aliases(closed.in_avals, closed.out_avals, flags) if donated else {}


__all__ = ["XlaBackend", "cache_directory", "cache_key", "donation_aliases", "gpu_client", "load_rules"]
