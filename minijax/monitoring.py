"""``jax.monitoring``: named events a program reaches, handed to whoever listens.

minijax records the events JAX records where the same things happen, under
JAX's names, so that a metrics exporter written for JAX reads minijax too:

* ``/jax/core/compile/jaxpr_trace_duration``: ``jit`` traced a function;
* ``/jax/core/compile/backend_compile_duration``: a backend compiled a jaxpr
  (on XLA this includes lowering it to StableHLO, which JAX times apart);
* ``/jax/compilation_cache/compile_requests_use_cache``, ``.../cache_hits``,
  ``.../cache_misses`` (an entry written), ``.../cache_retrieval_time_sec``:
  the XLA backend's persistent compilation cache.

A timed event is reported three ways, as JAX does: its start time as a scalar,
its duration, and its time span, each with the keyword ``fun_name``.
Listeners are called in the thread that reached the event, in the order they
were registered.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

__all__ = [
    "clear_event_listeners",
    "record_event",
    "record_event_duration_secs",
    "record_event_time_span",
    "record_scalar",
    "register_event_duration_secs_listener",
    "register_event_listener",
    "register_event_time_span_listener",
    "register_scalar_listener",
    "unregister_event_duration_listener",
    "unregister_event_listener",
    "unregister_event_time_span_listener",
    "unregister_scalar_listener",
]

JAXPR_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


class EventListener(Protocol):
    def __call__(self, event: str, **kwargs: str | int) -> None: ...


class EventDurationListener(Protocol):
    def __call__(self, event: str, duration_secs: float, **kwargs: str | int) -> None: ...


class EventTimeSpanListener(Protocol):
    def __call__(self, event: str, start_time: float, end_time: float, **kwargs: str | int) -> None: ...


class ScalarListener(Protocol):
    def __call__(self, event: str, value: float | int, **kwargs: str | int) -> None: ...


# One list per kind of event. A registration replaces the list rather than
# appending, so a recording that runs in another thread meanwhile iterates the
# list it started with.
_event_listeners: list[EventListener] = []
_duration_listeners: list[EventDurationListener] = []
_time_span_listeners: list[EventTimeSpanListener] = []
_scalar_listeners: list[ScalarListener] = []


def record_event(event: str, **kwargs: str | int) -> None:
    """Tell every event listener that ``event`` happened."""
    for listener in _event_listeners:
        listener(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Tell every duration listener that ``event`` took ``duration`` seconds."""
    for listener in _duration_listeners:
        listener(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float, **kwargs: str | int) -> None:
    """Tell every time-span listener when ``event`` started and ended (seconds since the epoch)."""
    for listener in _time_span_listeners:
        listener(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Tell every scalar listener the value ``event`` measured."""
    for listener in _scalar_listeners:
        listener(event, value, **kwargs)


def register_event_listener(callback: EventListener) -> None:
    global _event_listeners
    _event_listeners = [*_event_listeners, callback]


def register_event_duration_secs_listener(callback: EventDurationListener) -> None:
    global _duration_listeners
    _duration_listeners = [*_duration_listeners, callback]


def register_event_time_span_listener(callback: EventTimeSpanListener) -> None:
    global _time_span_listeners
    _time_span_listeners = [*_time_span_listeners, callback]


def register_scalar_listener(callback: ScalarListener) -> None:
    global _scalar_listeners
    _scalar_listeners = [*_scalar_listeners, callback]


def _without(listeners: list[Any], callback: Any, kind: str) -> list[Any]:
    if callback not in listeners:
        raise ValueError(f"{callback!r} is not a registered {kind} listener, so it cannot be unregistered")
    kept = list(listeners)
    kept.remove(callback)
    return kept


def unregister_event_listener(callback: EventListener) -> None:
    global _event_listeners
    _event_listeners = _without(_event_listeners, callback, "event")


def unregister_event_duration_listener(callback: EventDurationListener) -> None:
    global _duration_listeners
    _duration_listeners = _without(_duration_listeners, callback, "event duration")


def unregister_event_time_span_listener(callback: EventTimeSpanListener) -> None:
    global _time_span_listeners
    _time_span_listeners = _without(_time_span_listeners, callback, "event time span")


def unregister_scalar_listener(callback: ScalarListener) -> None:
    global _scalar_listeners
    _scalar_listeners = _without(_scalar_listeners, callback, "scalar")


def clear_event_listeners() -> None:
    """Forget every listener of every kind."""
    global _event_listeners, _duration_listeners, _time_span_listeners, _scalar_listeners
    _event_listeners, _duration_listeners, _time_span_listeners, _scalar_listeners = [], [], [], []


@contextmanager
def timed_event(event: str, fun_name: str) -> Iterator[None]:
    """Report the block as ``event``: start time, duration and span, with ``fun_name``.

    Nothing is measured when nobody listens (the common case costs two list checks).
    """
    if not (_scalar_listeners or _duration_listeners or _time_span_listeners):
        yield
        return
    start = time.time()
    record_scalar(event, start, fun_name=fun_name)
    try:
        yield
    finally:  # a trace or compile that failed is reported too, as JAX does
        end = time.time()
        record_event_duration_secs(event, end - start, fun_name=fun_name)
        record_event_time_span(event, start, end, fun_name=fun_name)
