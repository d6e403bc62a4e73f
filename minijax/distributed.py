"""``jax.distributed``: several processes computing together, on XLA's own distributed runtime.

Process 0 starts jaxlib's coordination service; every process connects a
jaxlib distributed-runtime client to it. The XLA backend, created afterwards,
builds its CPU client from that client (the global device topology is
exchanged through the service) with gloo's TCP collectives, so one program
spans every process's devices. Nothing here is home-made networking.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from minijax import backend as _backend


@dataclass
class _State:
    service: Any = None
    client: Any = None
    process_id: int = 0
    num_processes: int = 1
    coordinator_address: str | None = None
    local_device_ids: list[int] | None = None


global_state = _State()


def _jaxlib() -> Any:
    try:
        return importlib.import_module("jaxlib._jax")
    except ImportError as e:  # the NumPy backend alone has no distributed runtime
        raise RuntimeError(
            "jax.distributed.initialize needs jaxlib (the xla backend's runtime); install jaxlib 0.10.2"
        ) from e


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    local_device_ids: int | Sequence[int] | None = None,
    cluster_detection_method: str | None = None,
    initialization_timeout: int = 300,
    coordinator_bind_address: str | None = None,
    slice_index: int | None = None,
    heartbeat_timeout_seconds: int = 100,
    shutdown_timeout_seconds: int = 300,
) -> None:
    """Join this process to a multi-process computation (JAX's signature).

    Call it first, before anything that creates the XLA backend (a computation,
    ``jax.devices()``, ``jax.device_put``). ``coordinator_address`` is
    ``host:port`` of process 0, which also starts the coordination service
    there. A process that cannot reach the coordinator within
    ``initialization_timeout`` seconds gets a RuntimeError.
    """
    if any(name in _backend._instances for name in ("xla",)):
        raise RuntimeError(
            "jax.distributed.initialize() must be called before any JAX calls that might initialise the XLA backend. "
            "This includes any computation, but also calls to jax.devices, jax.device_put, and others."
        )
    if cluster_detection_method is not None:
        raise NotImplementedError(
            "jax.distributed.initialize: minijax detects no clusters; pass coordinator_address, num_processes "
            "and process_id explicitly"
        )
    coordinator_address = coordinator_address or os.environ.get("JAX_COORDINATOR_ADDRESS")
    if coordinator_address is None:
        raise ValueError("coordinator_address should be defined.")
    if num_processes is None:
        raise ValueError("Number of processes must be defined.")
    if process_id is None:
        raise ValueError("The process id of the current process must be defined.")
    if not isinstance(process_id, int):
        raise TypeError(f"process_id must be a nonnegative int. Got process_id={process_id} of type {type(process_id)}.")
    if not isinstance(num_processes, int):
        raise TypeError(
            f"num_processes must be a positive int. Got num_processes={num_processes} of type {type(num_processes)}."
        )
    if not 0 <= process_id < num_processes:
        raise ValueError(
            "process_id and num_processes must be nonnegative, with process_id < num_processes. "
            f"Got process_id={process_id}, num_processes={num_processes}."
        )
    if global_state.client is not None:
        raise RuntimeError("distributed.initialize should only be called once.")
    if isinstance(local_device_ids, int):
        local_device_ids = [local_device_ids]
    jaxlib = _jaxlib()
    bind = coordinator_bind_address or os.environ.get(
        "JAX_COORDINATOR_BIND_ADDRESS", "[::]:" + coordinator_address.rsplit(":", 1)[1]
    )
    service = None
    if process_id != 0:
        _wait_for_coordinator(coordinator_address, process_id, num_processes, initialization_timeout)
    if process_id == 0:
        service = jaxlib.get_distributed_runtime_service(
            bind, num_processes, heartbeat_timeout=heartbeat_timeout_seconds, shutdown_timeout=shutdown_timeout_seconds
        )
    client = jaxlib.get_distributed_runtime_client(
        coordinator_address,
        process_id,
        init_timeout=initialization_timeout,
        use_compression=True,
        heartbeat_timeout=heartbeat_timeout_seconds,
        shutdown_timeout=shutdown_timeout_seconds,
    )
    try:
        client.connect()
    except Exception as e:
        if service is not None:
            service.shutdown()
        raise RuntimeError(
            f"jax.distributed.initialize: process {process_id} could not connect to the coordinator at "
            f"{coordinator_address} within initialization_timeout={initialization_timeout}s ({e}). Check that "
            f"process 0 runs with the same coordinator_address and that all {num_processes} processes start."
        ) from e
    global_state.service = service
    global_state.client = client
    global_state.process_id = process_id
    global_state.num_processes = num_processes
    global_state.coordinator_address = coordinator_address
    global_state.local_device_ids = list(local_device_ids) if local_device_ids is not None else None


def _wait_for_coordinator(address: str, process_id: int, num_processes: int, timeout: float) -> None:
    """Return once something listens at ``address``; RuntimeError after ``timeout`` seconds.

    jaxlib's client, failing to register, ends the whole process from C++ (a fatal
    log, no Python exception); probing the port first turns an unreachable
    coordinator into an error the caller can read and catch."""
    import socket  # (here: only a multi-process start needs it, and it is ~2% of ``import minijax``)

    host, port = address.rsplit(":", 1)
    host = host.strip("[]")
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=max(0.1, min(1.0, deadline - time.monotonic()))):
                return
        except OSError as e:
            if time.monotonic() >= deadline:
                raise RuntimeError(
                    f"jax.distributed.initialize: process {process_id} could not connect to the coordinator at "
                    f"{address} within initialization_timeout={timeout}s ({e}). Start process 0 (which runs the "
                    f"coordinator) with the same coordinator_address, start all {num_processes} processes, or "
                    "raise initialization_timeout."
                ) from e
            time.sleep(0.1)


def is_initialized() -> bool:
    """Whether ``initialize`` has run (and ``shutdown`` has not)."""
    return global_state.client is not None


def shutdown() -> None:
    """Leave the computation: disconnect the client, and on process 0 stop the service."""
    if global_state.client is not None:
        global_state.client.shutdown()
    if global_state.service is not None:
        global_state.service.shutdown()
    global_state.client = None
    global_state.service = None
    global_state.process_id = 0
    global_state.num_processes = 1
    global_state.coordinator_address = None
    global_state.local_device_ids = None


__all__ = ["global_state", "initialize", "is_initialized", "shutdown"]
