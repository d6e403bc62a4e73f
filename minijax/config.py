"""Configuration flags, mirroring ``jax.config``.

Every flag has a global value (set by ``config.update`` or, at import time, by
an environment variable named after the flag: ``JAX_ENABLE_X64`` for
``jax_enable_x64``) and may be overridden per thread by a context manager::

    from minijax.config import config, enable_x64, config_context

    config.update("jax_enable_x64", True)        # global
    with enable_x64(False):                       # this thread, this block
        ...
    with config_context(jax_debug_nans=True, jax_numpy_rank_promotion="raise"):
        ...

Overrides live in a thread-local stack so that transforms running on several
threads (and tests) cannot see each other's temporary settings, the same model
JAX uses for its context-manager flags.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = [
    "Config",
    "Flag",
    "allow_f16_reductions",
    "check_tracer_leaks",
    "compilation_cache_dir",
    "config",
    "config_context",
    "debug_infs",
    "debug_nans",
    "default_device",
    "disable_jit",
    "enable_checks",
    "enable_compilation_cache",
    "enable_x64",
    "executable_cache_size",
    "explicit_x64_dtypes",
    "generation",
    "global_value",
    "invalidate_derived",
    "jax2tf_associative_scan_reductions",
    "minijax_backend",
    "no_tracing",
    "num_cpu_devices",
    "numpy_dtype_promotion",
    "numpy_rank_promotion",
    "overridden_anywhere",
    "persistent_cache_min_compile_time_secs",
    "persistent_cache_min_entry_size_bytes",
    "platform_name",
    "platforms",
    "raise_persistent_cache_errors",
    "read",
    "register_listener",
    "softmax_custom_jvp",
    "thread_guard",
    "trace_cache_size",
    "x64_enabled",
]

T = TypeVar("T")

# Strings accepted for boolean flags, from the environment or from
# ``config.update``; JAX accepts the same spellings.
_TRUE_STRINGS = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE_STRINGS = frozenset({"0", "false", "f", "no", "n", "off", ""})


def _parse_bool(name: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _TRUE_STRINGS:
            return True
        if lowered in _FALSE_STRINGS:
            return False
    raise ValueError(
        f"Invalid value {value!r} for boolean flag {name}: expected True/False "
        f"or one of {sorted(_TRUE_STRINGS | _FALSE_STRINGS - {''})}."
    )


def _enum_parser(*choices: str) -> Callable[[str, object], str]:
    def parse(name: str, value: object) -> str:
        # StrEnum members (as JAX hands out) compare equal to their string.
        if isinstance(value, str) and value in choices:
            return str(value)
        raise ValueError(
            f"Invalid value {value!r} for flag {name}: must be one of {list(choices)}."
        )

    return parse


def _optional_enum_parser(*choices: str) -> Callable[[str, object], str | None]:
    def parse(name: str, value: object) -> str | None:
        if value is None or (isinstance(value, str) and value in choices):
            return None if value is None else str(value)
        raise ValueError(f"new enum value must be None or in {list(choices)}, got {value} of type {type(value)}.")

    return parse


# jax_default_matmul_precision's values: the precisions by name, then JAX's
# dot algorithm presets (which minijax does not implement, see canonicalize_precision).
MATMUL_PRECISIONS = (
    "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
    "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM",
    "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16", "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6",
    "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64",
)  # fmt: skip


def _parse_optional_str(name: str, value: object) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    raise ValueError(f"Invalid value {value!r} for flag {name}: expected a string or None.")


def _parse_float(name: str, value: object) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise ValueError(f"Invalid value {value!r} for flag {name}: expected a number.")


def _parse_int(name: str, value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    raise ValueError(f"Invalid value {value!r} for flag {name}: expected an integer.")


def _parse_device(name: str, value: object) -> object:
    """None, a Device, or a platform / backend name such as 'cpu' or 'xla'.

    Checked by shape only (config must not import the backend module); which
    device a name means is decided when it is used (backend.default_device).
    The message is JAX's, which names the API rather than the flag.
    """
    del name
    if value is None or isinstance(value, str) or (hasattr(value, "platform") and hasattr(value, "id")):
        return value
    raise ValueError(
        "jax.default_device must be passed either a Device object (e.g. `jax.devices('cpu')[0]`) "
        f"or a platform name string like 'cpu' or 'gpu', got: {value!r}"
    )


# ---------------------------------------------------------------------------
# Storage: one global dict plus a per-thread dict of overrides.

# Sentinel for "no override in this thread"; None is a legal flag value.
_UNSET: Any = object()

_global_values: dict[str, Any] = {}


class _ThreadOverrides(threading.local):
    """This thread's overrides: flag name -> the value currently in force here.

    Only the current override is stored; each context manager remembers what
    it replaced and puts it back on exit, which gives stack behaviour for free.
    """

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        # trace_context() while this thread overrides one of its flags, else None
        # (jit reads it on every call: one token, not one per call), with the
        # _trace_context_version it was computed at.
        self.trace_context: int | None = None
        self.trace_context_version = -1


_overrides = _ThreadOverrides()
# For fast paths that read several flags at once (jit's hot path): while
# ``thread_overrides.values`` is empty (nothing overridden in this thread),
# each flag's value is ``global_values[name]``.
thread_overrides = _overrides
global_values = _global_values
# The key under which global_values holds global_trace_context() (not a flag).
GLOBAL_TRACE_CONTEXT = " trace context"
_listeners: list[Callable[[str, Any], None]] = []


def register_listener(fn: Callable[[str, Any], None]) -> None:
    """Call ``fn(flag_name, new_value)`` whenever a flag's value may change.

    Used by modules that cache values derived from flags (e.g. promotion
    tables keyed on nothing but the flag). Called for ``config.update`` and
    on entering and leaving a context manager, in whichever thread did it,
    for every flag: a listener must be thread-safe, and cheap for the flags
    it does not follow (a context entry costs the sum of the listeners).
    """
    _listeners.append(fn)


class _Generation:
    """A counter bumped whenever any flag may have changed, in any thread.

    Hot paths cache values derived from several flags (the default device)
    and recompute them when ``generation.value`` moves: one attribute read is
    cheaper than re-reading the flags.
    """

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


generation = _Generation()


def invalidate_derived() -> None:
    """Make every cache keyed on ``generation`` recompute (e.g. a new backend)."""
    generation.value += 1


def _notify(changed: dict[str, Any]) -> None:
    """Tell every listener of each flag in ``changed`` (name -> value now in force).

    Every listener hears of every change even when one raises (the first
    error is raised afterwards): a listener left out would keep a value
    derived from the old flag, such as NaN checks switched off.
    """
    invalidate_derived()
    error: BaseException | None = None
    for name, value in changed.items():
        for fn in tuple(_listeners):
            try:
                fn(name, value)
            except BaseException as e:  # noqa: PERF203 - each listener must run
                if error is None:
                    error = e
    if error is not None:
        raise error


def read(name: str) -> Any:
    """The value of flag ``name`` in force in this thread (fast, unchecked).

    For hot paths; raises KeyError for unknown names. Elsewhere prefer
    ``config.<name>`` or ``<flag>.value``.
    """
    value = _overrides.values.get(name, _UNSET)
    return _global_values[name] if value is _UNSET else value



def global_value(name: str) -> Any:
    """The global value of flag ``name``, whatever this thread overrides."""
    return _global_values[name]


# The flags that change what tracing a function gives (dtypes, promotion,
# precision): jit's caches key on their values, as JAX's trace context does,
# so a function traced outside ``with jax.numpy_dtype_promotion("strict")``
# is traced again inside it.
TRACE_CONTEXT_FLAGS = (
    "jax_enable_x64", "jax_numpy_dtype_promotion", "jax_numpy_rank_promotion", "jax_default_matmul_precision",
    "jax_allow_f16_reductions", "jax_softmax_custom_jvp",
)


# Moves when update() changes a global trace-context flag: a thread's cached
# context mixes its overrides with the global values of the other flags.
_trace_context_version = 0


def trace_context() -> int:
    """The values of TRACE_CONTEXT_FLAGS in force in this thread, as a token: equal
    values, equal tokens (``context_token``)."""
    overrides = _overrides
    local = overrides.trace_context
    if local is None:
        return _global_values[GLOBAL_TRACE_CONTEXT]  # type: ignore[no-any-return]
    if overrides.trace_context_version != _trace_context_version:
        _refresh_thread_trace_context()
        return trace_context()
    return local


def _refresh_thread_trace_context() -> None:
    """Cache this thread's trace context if it overrides one of its flags."""
    local = _overrides.values
    overridden = any(name in local for name in TRACE_CONTEXT_FLAGS)
    values = tuple(read(name) for name in TRACE_CONTEXT_FLAGS) if overridden else None
    _overrides.trace_context = None if values is None else context_token(values)
    _overrides.trace_context_version = _trace_context_version


def global_trace_context() -> int:
    """trace_context() for a thread that overrides nothing (jit's hot path reads
    ``global_values[GLOBAL_TRACE_CONTEXT]``, kept up to date by ``update``)."""
    return context_token(tuple(_global_values[name] for name in TRACE_CONTEXT_FLAGS))


# Trace contexts enter every cache key of the hot paths (eager dispatch, jit
# calls) as small ints: a tuple of six flag values would be hashed again at
# every lookup (tuples do not keep their hash). Few contexts ever occur, so the
# table is never trimmed.
_context_tokens: dict[tuple[Any, ...], int] = {}
_context_counter = itertools.count()


def context_token(values: tuple[Any, ...]) -> int:
    """The int naming the trace-context flag values ``values``."""
    # The values' types too: True == 1 hash alike, but a flag read as either means another thing.
    key = (values, tuple(map(type, values)))
    token = _context_tokens.get(key)
    if token is None:
        token = _context_tokens.setdefault(key, next(_context_counter))  # (atomic: threads agree)
    return token


def x64_enabled() -> bool:
    """Whether 64-bit dtypes are enabled in this thread right now.

    On the hot path of every dtype computation, so written out by hand
    instead of going through ``config``'s attribute lookup.
    """
    value = _overrides.values.get("jax_enable_x64", _UNSET)
    return bool(_global_values["jax_enable_x64"] if value is _UNSET else value)


# ---------------------------------------------------------------------------
# Flags


@dataclass(frozen=True)
class Flag(Generic[T]):
    """One configuration option.

    ``flag.value`` reads the value in force; calling the flag, as in
    ``with enable_x64(True):``, overrides it for the current thread.
    """

    name: str
    default: T
    parse: Callable[[str, object], T]
    help: str

    @property
    def value(self) -> T:
        result: T = read(self.name)
        return result

    def __call__(self, new_value: object = True) -> contextlib.AbstractContextManager[None]:
        return config_context(**{self.name: new_value})


_flags: dict[str, Flag[Any]] = {}


def _define(
    name: str, default: T, parse: Callable[[str, object], T], help: str
) -> Flag[T]:
    flag = Flag(name, default, parse, help)
    _flags[name] = flag
    env = os.environ.get(name.upper())
    # Environment variables are read once, at import, like JAX does.
    _global_values[name] = default if env is None else parse(name.upper(), env)
    return flag


enable_x64: Flag[bool] = _define(
    "jax_enable_x64", False, _parse_bool,
    "Enable 64-bit types (int64, uint64, float64). Off by default: values and "
    "promotions that would be 64-bit are computed in 32 bits.",
)
explicit_x64_dtypes: Flag[str] = _define(
    "jax_explicit_x64_dtypes", "warn", _enum_parser("allow", "warn", "error"),
    "What to do when a 64-bit dtype is requested explicitly while x64 is off: "
    "'warn' and truncate to 32 bits, 'error', or 'allow' it.",
)
platforms: Flag[str | None] = _define(
    "jax_platforms", None, _parse_optional_str,
    "Comma-separated backend names to use, first is the default; None picks "
    "automatically.",
)
minijax_backend: Flag[str | None] = _define(
    "minijax_backend", None, _parse_optional_str,
    "The default minijax backend by registry name ('numpy', 'xla', or a plug-in); "
    "None picks the installed backend with the highest priority. Environment: "
    "MINIJAX_BACKEND. Takes precedence over jax_platforms.",
)
platform_name: Flag[str | None] = _define(
    "jax_platform_name", None, _parse_optional_str,
    "Name of the default backend; None picks automatically. Prefer jax_platforms.",
)
default_device: Flag[object] = _define(
    "jax_default_device", None, _parse_device,
    "Device on which uncommitted values are placed and computations on them run "
    "(a Device, or a platform name such as 'cpu'); None is the default "
    "backend's first device. As a context manager: minijax.default_device(dev).",
)
num_cpu_devices: Flag[int] = _define(
    "jax_num_cpu_devices", -1, _parse_int,
    "Number of CPU devices the xla and numpy backends create; -1 leaves it to XLA "
    "(XLA_FLAGS=--xla_force_host_platform_device_count=N, else 1). Read when the "
    "backend is created.",
)
compilation_cache_dir: Flag[str | None] = _define(
    "jax_compilation_cache_dir", None, _parse_optional_str,
    "Directory of the persistent compilation cache; None (the default) turns the "
    "cache off. Environment: JAX_COMPILATION_CACHE_DIR.",
)
enable_compilation_cache: Flag[bool] = _define(
    "jax_enable_compilation_cache", True, _parse_bool,
    "Use the persistent compilation cache when jax_compilation_cache_dir is set.",
)
persistent_cache_min_compile_time_secs: Flag[float] = _define(
    "jax_persistent_cache_min_compile_time_secs", 1.0, _parse_float,
    "Only executables that took at least this long to compile are written to the "
    "persistent cache.",
)
persistent_cache_min_entry_size_bytes: Flag[int] = _define(
    "jax_persistent_cache_min_entry_size_bytes", 0, _parse_int,
    "Only entries of at least this many bytes are written to the persistent cache "
    "(0 or -1: no minimum).",
)
raise_persistent_cache_errors: Flag[bool] = _define(
    "jax_raise_persistent_cache_errors", False, _parse_bool,
    "Raise errors from reading or writing the persistent cache instead of warning "
    "and compiling.",
)
disable_jit: Flag[bool] = _define(
    "jax_disable_jit", False, _parse_bool,
    "Run jit-decorated functions eagerly, op by op (useful for debugging).",
)
numpy_dtype_promotion: Flag[str] = _define(
    "jax_numpy_dtype_promotion", "standard", _enum_parser("standard", "strict"),
    "Implicit dtype promotion rules: 'standard' (JAX's lattice) or 'strict' "
    "(only weak Python scalars promote implicitly).",
)
numpy_rank_promotion: Flag[str] = _define(
    "jax_numpy_rank_promotion", "allow", _enum_parser("allow", "warn", "raise"),
    "NumPy-style implicit rank promotion in broadcasting: 'allow', 'warn' or 'raise'.",
)
default_matmul_precision: Flag[str | None] = _define(
    "jax_default_matmul_precision", None, _optional_enum_parser(*MATMUL_PRECISIONS),
    "The precision of dot_general and convolutions called with precision=None: "
    "'default'/'bfloat16', 'high'/'tensorfloat32', 'highest'/'float32' (or one of "
    "JAX's dot algorithm presets). None leaves it to the backend.",
)
eager_constant_folding: Flag[bool] = _define(
    "jax_eager_constant_folding", False, _parse_bool,
    "While tracing, compute operations whose operands are all concrete right "
    "away instead of staging them (jax.ensure_compile_time_eval turns it on).",
)
debug_nans: Flag[bool] = _define(
    "jax_debug_nans", False, _parse_bool,
    "Check every operation's output for NaNs and raise FloatingPointError.",
)
debug_infs: Flag[bool] = _define(
    "jax_debug_infs", False, _parse_bool,
    "Check every operation's output for infinities and raise FloatingPointError.",
)
check_tracer_leaks: Flag[bool] = _define(
    "jax_check_tracer_leaks", False, _parse_bool,
    "When a transformation ends, check that none of its tracers is still referenced "
    "from outside it (a global, a closure, an attribute) and raise "
    "UnexpectedTracerError naming the referrer. Costs a scan of the heap per "
    "transformation: for debugging only. Context manager: minijax.api.checking_leaks().",
)
log_compiles: Flag[bool] = _define(
    "jax_log_compiles", False, _parse_bool,
    "Log each trace and compilation of a jit-compiled function at WARNING level "
    "(logger 'minijax.stages' and 'minijax.dispatch'; otherwise at DEBUG). Context "
    "manager: minijax.log_compiles().",
)
explain_cache_misses: Flag[bool] = _define(
    "jax_explain_cache_misses", False, _parse_bool,
    "When a jit-compiled function is traced again, log at WARNING level (logger "
    "'minijax.stages') why its cached traces did not fit: a function never seen, "
    "or how the arguments differ from the closest earlier call's.",
)

enable_checks: Flag[bool] = _define(
    "jax_enable_checks", False, _parse_bool,
    "Type-check every jaxpr as it is traced (minijax.jaxpr_check): slower, for "
    "debugging minijax itself or a custom rule. Context manager: minijax.enable_checks().",
)
no_tracing: Flag[bool] = _define(
    "jax_no_tracing", False, _parse_bool,
    "Refuse to trace a function for jit or make_jaxpr (RuntimeError): a way to "
    "prove a loop reuses its compiled programs. Context manager: minijax.no_tracing().",
)
allow_f16_reductions: Flag[bool] = _define(
    "jax_allow_f16_reductions", True, _parse_bool,
    "When False, lax.reduce_sum of a float16 or bfloat16 operand over an axis longer "
    "than 1 raises ValueError (jnp.sum accumulates those in float32 and is unaffected).",
)
softmax_custom_jvp: Flag[bool] = _define(
    "jax_softmax_custom_jvp", False, _parse_bool,
    "jax.nn.softmax as a custom_jvp function with the rule y * (dx - sum(y * dx)) "
    "(True) or as its formula with the maximum under stop_gradient (False, JAX 0.10's default).",
)
jax2tf_associative_scan_reductions: Flag[bool] = _define(
    "jax2tf_associative_scan_reductions", False, _parse_bool,
    "Read by JAX's jax2tf only (how it converts cumulative reductions); minijax has "
    "no jax2tf, so the flag changes nothing here.",
)
thread_guard: Flag[bool] = _define(
    "jax_thread_guard", False, _parse_bool,
    "In JAX, multi-process operations called from another thread than the one that "
    "set the guard raise. minijax runs in one process, so there are no such operations.",
)


def _parse_cache_size(name: str, value: object) -> int:
    size = _parse_int(name, value)
    if size < 1:
        raise ValueError(f"Invalid value {value!r} for flag {name}: a cache size must be at least 1.")
    return size


executable_cache_size: Flag[int] = _define(
    "minijax_executable_cache_size", 1024, _parse_cache_size,
    "How many compiled programs each in-memory compilation cache keeps (eager "
    "operations per signature, compiled jaxprs, the xla backend's executables); "
    "the least recently used are dropped first and recompiled if needed again. "
    "Environment: MINIJAX_EXECUTABLE_CACHE_SIZE.",
)
trace_cache_size: Flag[int] = _define(
    "minijax_trace_cache_size", 512, _parse_cache_size,
    "How many argument signatures each jit-compiled function keeps traced (and "
    "compiled); the least recently used are dropped first. Environment: "
    "MINIJAX_TRACE_CACHE_SIZE.",
)


def _lookup(name: str) -> Flag[Any]:
    flag = _flags.get(name)
    if flag is None:
        raise AttributeError(f"Unrecognized config option: {name}")
    return flag


@contextlib.contextmanager
def config_context(**new_values: object) -> Iterator[None]:
    """Override flags for the current thread inside a ``with`` block.

    >>> with config_context(jax_enable_x64=True, jax_debug_nans=True):
    ...     pass
    """
    # Validate everything before changing anything: a bad value must not leave
    # half the flags overridden.
    parsed = {name: _lookup(name).parse(name, value) for name, value in new_values.items()}
    local = _overrides.values
    saved = {name: local.get(name, _UNSET) for name in parsed}
    _count_overrides(parsed, +1)  # before _notify moves the generation (see overridden_anywhere)
    # From here on every way out, a listener raising on entry included, puts
    # the flags back: a failed entry must not leave an override in force.
    try:
        local.update(parsed)
        _refresh_thread_trace_context()
        _notify(parsed)
        yield
    finally:
        _count_overrides(parsed, -1)
        for name, old in saved.items():
            if old is _UNSET:
                local.pop(name, None)
            else:
                local[name] = old
        _refresh_thread_trace_context()
        _notify({name: read(name) for name in saved})


# flag name -> how many config_context overrides of it are in force, in all threads.
_active_overrides: dict[str, int] = {}
_active_overrides_lock = threading.Lock()


def _count_overrides(names: Iterable[str], step: int) -> None:
    with _active_overrides_lock:
        for name in names:
            _active_overrides[name] = _active_overrides.get(name, 0) + step


def overridden_anywhere(names: Iterable[str]) -> bool:
    """Whether some thread has a ``config_context`` override of one of ``names`` in force.

    While none has, a value derived from those flags is the same in every
    thread, so it may be cached process-wide (keyed on ``generation``, which
    moves after the count does when an override starts or ends).
    """
    return any(_active_overrides.get(name, 0) for name in names)


class Config:
    """The ``config`` object: ``config.update(name, value)``, ``config.<flag>``."""

    def update(self, name: str, value: object) -> None:
        """Set a flag's global value (thread-local overrides still win)."""
        flag = _lookup(name)
        _global_values[name] = flag.parse(name, value)
        if name in TRACE_CONTEXT_FLAGS:
            global _trace_context_version
            _global_values[GLOBAL_TRACE_CONTEXT] = global_trace_context()
            _trace_context_version += 1
        _notify({name: read(name)})

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails, i.e. for flag names.
        if name.startswith("__"):
            raise AttributeError(name)
        _lookup(name)
        return read(name)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(
            f"Set flags with config.update({name!r}, value), not by assignment."
        )

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(_flags))

    def read(self, name: str) -> Any:
        """The value of flag ``name`` in force in this thread."""
        _lookup(name)
        return read(name)

    @property
    def x64_enabled(self) -> bool:
        return x64_enabled()

    @property
    def values(self) -> dict[str, Any]:
        """A snapshot of every flag's value in force in this thread."""
        return {name: read(name) for name in _flags}

    def flag(self, name: str) -> Flag[Any]:
        """The ``Flag`` object for ``name`` (its default, help text, ...)."""
        return _lookup(name)


config = Config()

# Set once every flag above exists; update() keeps it current.
_global_values[GLOBAL_TRACE_CONTEXT] = global_trace_context()
