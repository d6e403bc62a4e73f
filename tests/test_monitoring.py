"""jax.monitoring: listeners of each kind get the events minijax records under JAX's names."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import minijax as jax
from minijax import monitoring
from minijax.config import config_context


@pytest.fixture
def heard() -> Iterator[dict[str, list[Any]]]:
    seen: dict[str, list[Any]] = {"event": [], "duration": [], "span": [], "scalar": []}

    def on_event(event: str, **kwargs: Any) -> None:
        seen["event"].append((event, kwargs))

    def on_duration(event: str, duration: float, **kwargs: Any) -> None:
        seen["duration"].append((event, duration, kwargs))

    def on_span(event: str, start: float, end: float, **kwargs: Any) -> None:
        seen["span"].append((event, start, end, kwargs))

    def on_scalar(event: str, value: float, **kwargs: Any) -> None:
        seen["scalar"].append((event, value, kwargs))

    monitoring.register_event_listener(on_event)
    monitoring.register_event_duration_secs_listener(on_duration)
    monitoring.register_event_time_span_listener(on_span)
    monitoring.register_scalar_listener(on_scalar)
    yield seen
    monitoring.unregister_event_listener(on_event)
    monitoring.unregister_event_duration_listener(on_duration)
    monitoring.unregister_event_time_span_listener(on_span)
    monitoring.unregister_scalar_listener(on_scalar)


def test_recorded_events_reach_each_kind_of_listener(heard: dict[str, list[Any]]) -> None:
    monitoring.record_event("/my/event", step=3)
    monitoring.record_event_duration_secs("/my/duration", 0.5, where="here")
    monitoring.record_event_time_span("/my/span", 1.0, 2.5)
    monitoring.record_scalar("/my/scalar", 7, unit="items")
    assert heard["event"] == [("/my/event", {"step": 3})]
    assert heard["duration"] == [("/my/duration", 0.5, {"where": "here"})]
    assert heard["span"] == [("/my/span", 1.0, 2.5, {})]
    assert heard["scalar"] == [("/my/scalar", 7, {"unit": "items"})]


def test_jit_reports_its_trace_and_compile_times_under_jaxs_names(heard: dict[str, list[Any]]) -> None:
    def double_it(x: Any) -> Any:
        return x * 2

    jax.jit(double_it)(np.float32(1))
    durations = [(event, kwargs["fun_name"]) for event, _, kwargs in heard["duration"]]
    assert durations == [("/jax/core/compile/jaxpr_trace_duration", "double_it"),
                         ("/jax/core/compile/backend_compile_duration", "jit(double_it)")]
    assert all(d >= 0 for _, d, _ in heard["duration"])
    assert [(e, end >= start) for e, start, end, _ in heard["span"]] == [(e, True) for e, _ in durations]
    assert [e for e, _, _ in heard["scalar"]] == [e for e, _ in durations]  # each start time, as a scalar
    heard["duration"].clear()
    jax.jit(double_it)(np.float32(2))  # the same function and types: cached, nothing traced or compiled
    assert heard["duration"] == []


def test_the_persistent_cache_reports_requests_misses_and_hits(heard: dict[str, list[Any]], tmp_path: Any) -> None:
    pytest.importorskip("minijax_xla", reason="the persistent compilation cache is the xla backend's")
    with config_context(jax_compilation_cache_dir=str(tmp_path), jax_persistent_cache_min_compile_time_secs=0.0):
        first = jax.jit(lambda x: x * 3 + 1, backend="xla")
        first(np.ones(3, np.float32))
        jax.clear_caches()  # the in-memory caches: the second compile request goes to the directory
        jax.jit(lambda x: x * 3 + 1, backend="xla")(np.ones(3, np.float32))
    events = [e for e, _ in heard["event"] if e.startswith("/jax/compilation_cache/")]
    assert events == ["/jax/compilation_cache/compile_requests_use_cache", "/jax/compilation_cache/cache_misses",
                      "/jax/compilation_cache/compile_requests_use_cache", "/jax/compilation_cache/cache_hits"]
    assert [e for e, _, _ in heard["duration"] if "retrieval" in e] == ["/jax/compilation_cache/cache_retrieval_time_sec"]


def test_unregistering_a_stranger_and_clearing() -> None:
    with pytest.raises(ValueError, match="is not a registered event listener"):
        monitoring.unregister_event_listener(print)
    calls: list[str] = []
    monitoring.register_event_listener(lambda event, **kw: calls.append(event))
    monitoring.clear_event_listeners()
    monitoring.record_event("/nobody/listens")
    assert calls == []
