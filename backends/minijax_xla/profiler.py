"""jaxlib's profiler, handed to ``minijax.profiler`` through ``XlaBackend.profiler()``."""

from __future__ import annotations

from typing import Any

from jaxlib import _profiler  # type: ignore[attr-defined]


class XlaProfiler:
    """Sessions and annotations of XLA's profiler (the one JAX uses), and the client's heap profile."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def start_session(self, options: Any = None) -> Any:
        return _profiler.ProfilerSession(_profiler.ProfileOptions() if options is None else options)

    def trace_me(self, name: str, **kwargs: Any) -> Any:
        return _profiler.TraceMe(name, **kwargs)

    def heap_profile(self) -> bytes:
        profile: bytes = self._client.heap_profile()
        return profile
