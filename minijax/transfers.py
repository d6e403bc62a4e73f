"""Transfer guards (``jax.transfer_guard`` and its three directions).

A guard level says what happens at a transfer between the host and a device,
or between devices: "allow" (the default), "log" or "disallow" an implicit
one (a NumPy array or Python scalar passed to a jitted function or an
operation, a constant an operation makes), "log_explicit" or
"disallow_explicit" every one, explicit ``jax.device_put``/``device_get``
included. A disallowed transfer raises ``JaxRuntimeError``, a logged one
logs a warning, in JAX's words.

As in JAX, reading a CPU array on the host (``np.asarray(x)``, ``float(x)``)
is no transfer: the host reads the buffer where it lies. Device-to-host is
guarded for arrays on other platforms.

The guards cost nothing until one is first set: ``active`` stays False.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from minijax.config import (
    _define,
    _optional_enum_parser,
    config_context,
    global_value,
    read as read_flag,
    register_listener,
)
from minijax.errors import JaxRuntimeError

if TYPE_CHECKING:
    from minijax.core import ShapedArray

__all__ = [
    "transfer_guard",
    "transfer_guard_device_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_host_to_device",
]

logger = logging.getLogger("minijax.transfer_guard")

_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
_parse = _optional_enum_parser(*_LEVELS)
_HELP = (
    "Select the transfer guard level for {what}. 'allow' permits them, 'log' logs and 'disallow' refuses "
    "implicit ones, 'log_explicit' and 'disallow_explicit' every one. None: the jax_transfer_guard level."
)
guard_all = _define(
    "jax_transfer_guard", None, _parse, _HELP.format(what="all transfers (each direction's own flag overrides it)")
)
guard_host_to_device = _define(
    "jax_transfer_guard_host_to_device", None, _parse, _HELP.format(what="host-to-device transfers")
)
guard_device_to_device = _define(
    "jax_transfer_guard_device_to_device", None, _parse, _HELP.format(what="device-to-device transfers")
)
guard_device_to_host = _define(
    "jax_transfer_guard_device_to_host", None, _parse, _HELP.format(what="device-to-host transfers")
)
_FLAGS = ("jax_transfer_guard", "jax_transfer_guard_host_to_device", "jax_transfer_guard_device_to_device",
          "jax_transfer_guard_device_to_host")


class _State(threading.local):
    explicit = 0  # > 0 inside jax.device_put / device_get


_state = _State()
# Set once a guard flag takes a value other than None, anywhere: until then
# the hot paths' check is this one read.
active = any(global_value(n) is not None for n in _FLAGS)


def _listen(name: str, value: Any) -> None:
    global active
    if name in _FLAGS and value is not None:
        active = True


register_listener(_listen)


def _level(direction_flag: str) -> str:
    level = read_flag(direction_flag)
    if level is None:
        level = read_flag("jax_transfer_guard")
    return "allow" if level is None else str(level)


def _sharding_text(device: Any) -> str:
    return f"SingleDeviceSharding(device={device!r}, memory_kind=device)"


def _check(direction_flag: str, what: str, detail: str) -> None:
    level = _level(direction_flag)
    if level == "allow":
        return
    explicit = _state.explicit > 0
    if explicit and level in ("log", "disallow"):
        return
    if level.startswith("disallow"):
        raise JaxRuntimeError(f"INVALID_ARGUMENT: Disallowed {what} transfer: {detail}")
    logger.warning("%s transfer: %s", what, detail)


def check_host_to_device(aval: ShapedArray, device: Any) -> None:
    """Called at every host-to-device copy (``active`` first, by the caller)."""
    _check("jax_transfer_guard_host_to_device", "host-to-device", f"aval={aval!r}, dst_sharding={_sharding_text(device)}")


def check_device_to_device(aval: ShapedArray, src: Any, dst: Any) -> None:
    _check(
        "jax_transfer_guard_device_to_device", "device-to-device",
        f"aval={aval!r}, src_sharding={_sharding_text(src)}, dst_sharding={_sharding_text(dst)}",
    )


def check_device_to_host(aval: ShapedArray, device: Any) -> None:
    if device.platform == "cpu":  # the host reads a CPU buffer in place: no transfer (as in JAX)
        return
    _check("jax_transfer_guard_device_to_host", "device-to-host", f"aval={aval!r}, src_sharding={_sharding_text(device)}")


@contextlib.contextmanager
def explicit_transfers() -> Iterator[None]:
    """What runs inside is an explicit transfer (``device_put``, ``device_get``)."""
    _state.explicit += 1
    try:
        yield
    finally:
        _state.explicit -= 1


def transfer_guard(new_val: str) -> contextlib.AbstractContextManager[None]:
    """Set the guard level of every direction inside a ``with`` block."""
    return config_context(
        jax_transfer_guard_host_to_device=new_val,
        jax_transfer_guard_device_to_device=new_val,
        jax_transfer_guard_device_to_host=new_val,
    )


def transfer_guard_host_to_device(new_val: str) -> contextlib.AbstractContextManager[None]:
    return config_context(jax_transfer_guard_host_to_device=new_val)


def transfer_guard_device_to_device(new_val: str) -> contextlib.AbstractContextManager[None]:
    return config_context(jax_transfer_guard_device_to_device=new_val)


def transfer_guard_device_to_host(new_val: str) -> contextlib.AbstractContextManager[None]:
    return config_context(jax_transfer_guard_device_to_host=new_val)
