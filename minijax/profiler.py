"""``jax.profiler``: traces that TensorBoard and Perfetto open, and device memory profiles.

The core knows no profiler: it asks a backend for one (``Backend.profiler()``).
The ``xla`` backend hands over jaxlib's (``jaxlib._profiler``: XLA's profiler
session and its ``TraceMe`` annotations), which writes
``<log_dir>/plugins/profile/<run>/<host>.xplane.pb`` as JAX does. Without a
backend that has one (only ``numpy`` installed), ``start_trace`` and
``device_memory_profile`` raise ``NotImplementedError`` and the annotations
do nothing.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import json
import os
import pathlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from minijax.backend import Backend, default_device, get_backend

__all__ = [
    "StepTraceAnnotation",
    "TraceAnnotation",
    "annotate_function",
    "device_memory_profile",
    "save_device_memory_profile",
    "start_trace",
    "stop_trace",
    "trace",
]


def _profiler_backend(name: str | None = None) -> tuple[Backend, Any] | None:
    """The backend (``name``'s, else the default one, else ``xla``) and the profiler it offers."""
    candidates: list[Backend] = []
    if name is not None:
        candidates.append(get_backend(name))
    else:
        candidates.append(default_device().backend)
        try:
            candidates.append(get_backend("xla"))
        except Exception:  # not installed
            pass
    for backend in candidates:
        prof = backend.profiler()
        if prof is not None:
            return backend, prof
    return None


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.session: Any = None
        self.log_dir = ""
        self.perfetto = False


_state = _State()


def start_trace(log_dir: os.PathLike[str] | str, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False, profiler_options: Any = None) -> None:
    """Start collecting a trace, written to ``log_dir`` by ``stop_trace``."""
    if create_perfetto_link:
        raise NotImplementedError("start_trace(create_perfetto_link=True) (serving the trace) is not supported by "
                                  "minijax; use create_perfetto_trace=True and open the file in ui.perfetto.dev")
    with _state.lock:
        if _state.session is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be run at a time.")
        found = _profiler_backend()
        if found is None:
            raise NotImplementedError(
                "jax.profiler.start_trace needs a backend with a profiler: the xla backend (jaxlib's profiler); "
                "the numpy backend has none"
            )
        _state.session = found[1].start_session(profiler_options)
        _state.log_dir = str(log_dir)
        _state.perfetto = create_perfetto_trace


def stop_trace() -> None:
    """Stop the trace ``start_trace`` started and write it to its ``log_dir``."""
    with _state.lock:
        if _state.session is None:
            raise RuntimeError("No profile started")
        try:
            _state.session.stop_and_export(_state.log_dir)
            if _state.perfetto:
                _write_perfetto_trace(_state.log_dir)
        finally:
            _state.session = None


def _write_perfetto_trace(log_dir: str) -> pathlib.Path:
    """``perfetto_trace.json.gz`` beside the newest run's ``*.trace.json.gz``, without the
    metadata field Perfetto rejects (as JAX writes it)."""
    runs = (pathlib.Path(log_dir).absolute() / "plugins" / "profile").iterdir()
    latest = max(runs, key=os.path.getmtime)
    traces = list(latest.glob("*.trace.json.gz"))
    if len(traces) != 1:
        raise ValueError(f"Invalid trace folder: {latest}")
    with gzip.open(traces[0], "rb") as f:
        data = json.load(f)
    data.pop("metadata", None)
    out = latest / "perfetto_trace.json.gz"
    with gzip.open(out, "w") as f:
        f.write(json.dumps(data).encode())
    return out


@contextlib.contextmanager
def trace(log_dir: os.PathLike[str] | str, create_perfetto_link: bool = False, create_perfetto_trace: bool = False,
          profiler_options: Any = None) -> Iterator[None]:
    """``start_trace`` and ``stop_trace`` around a ``with`` block."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation:
    """A named span in the trace (``with TraceAnnotation("step"): ...``); keyword arguments
    become the span's metadata. Does nothing while no trace is collected."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        self._name = name
        self._kwargs = kwargs
        self._inner: Any = None

    def __enter__(self) -> TraceAnnotation:
        found = _profiler_backend() if _state.session is not None else None
        if found is not None:
            self._inner = found[1].trace_me(self._name, **self._kwargs)
            self._inner.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        inner, self._inner = self._inner, None
        if inner is not None:
            inner.__exit__(*exc)


class StepTraceAnnotation(TraceAnnotation):
    """A training step's span: TensorBoard's step view groups the trace by ``step_num``."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(name, _r=1, **kwargs)


def annotate_function(func: Callable[..., Any], name: str | None = None, **decorator_kwargs: Any) -> Callable[..., Any]:
    """``func`` with every call in a ``TraceAnnotation`` (named ``name`` or the function's own name)."""
    label = name or str(getattr(func, "__qualname__", None) or getattr(func, "__name__", "function"))

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with TraceAnnotation(label, **decorator_kwargs):
            return func(*args, **kwargs)

    return wrapper


def device_memory_profile(backend: str | None = None) -> bytes:
    """The live device buffers as a gzipped ``pprof`` profile (the ``xla`` backend's client)."""
    found = _profiler_backend(backend)
    if found is None:
        raise NotImplementedError(
            "jax.profiler.device_memory_profile needs a backend with a memory profiler: the xla backend; "
            "the numpy backend has none"
        )
    return gzip.compress(found[1].heap_profile())


def save_device_memory_profile(filename: os.PathLike[str] | str, backend: str | None = None) -> None:
    profile = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(profile)
