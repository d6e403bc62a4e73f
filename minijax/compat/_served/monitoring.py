"""``jax.monitoring``: JAX's event hooks. minijax sends no events of its own; a library's are passed on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_event_listeners: list[Callable[..., Any]] = []
_duration_listeners: list[Callable[..., Any]] = []
_scalar_listeners: list[Callable[..., Any]] = []


def record_event(event: str, **kwargs: Any) -> None:
    """Send ``event`` to the event listeners."""
    for listener in list(_event_listeners):
        listener(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: Any) -> None:
    """Send ``event``'s duration to the duration listeners."""
    for listener in list(_duration_listeners):
        listener(event, duration, **kwargs)


def record_scalar(event: str, value: float, **kwargs: Any) -> None:
    """Send a scalar measurement to the scalar listeners."""
    for listener in list(_scalar_listeners):
        listener(event, value, **kwargs)


def register_event_listener(listener: Callable[..., Any]) -> None:
    _event_listeners.append(listener)


def register_event_duration_secs_listener(listener: Callable[..., Any]) -> None:
    _duration_listeners.append(listener)


def register_scalar_listener(listener: Callable[..., Any]) -> None:
    _scalar_listeners.append(listener)


def clear_event_listeners() -> None:
    for listeners in (_event_listeners, _duration_listeners, _scalar_listeners):
        listeners.clear()
