"""A bounded, thread-safe cache: what every in-memory cache of minijax is.

Compiled programs, traced jaxprs and prepared eager operations are kept in
``BoundedCache`` objects whose capacity is a flag
(``minijax_executable_cache_size``, ``minijax_trace_cache_size``): a program
called with ever new shapes must not keep every trace and executable alive.
"""

from __future__ import annotations

import collections
import threading
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from minijax.config import Flag, read, register_listener

__all__ = ["BoundedCache", "clear_all", "on_clear_all"]

K = TypeVar("K")
V = TypeVar("V")


class _Trimmable:
    """The caches that a shrinking size flag must trim at once (rather than at
    their next insertion), for one size flag.

    Only a cache holding two entries or more enters: one entry is within any
    legal size, and most caches (one per jitted function, called with one
    signature) never hold more, so a size change walks few caches however many
    functions are jitted. Weak references without callbacks, read and pruned
    under a lock: a callback (a WeakSet's) would change the set from the
    garbage collector, in any thread, while another thread walks it.
    """

    def __init__(self) -> None:
        self.refs: dict[int, weakref.ref[BoundedCache[Any, Any]]] = {}
        self.prune_at = 64

    def add(self, cache: BoundedCache[Any, Any]) -> None:
        with _trimmable_lock:
            self.refs[id(cache)] = weakref.ref(cache)
            if len(self.refs) >= self.prune_at:  # dead ones dropped in amortized O(1)
                self._prune()
                self.prune_at = max(64, 2 * len(self.refs))

    def alive(self) -> list[BoundedCache[Any, Any]]:
        with _trimmable_lock:
            self._prune()
            return [c for c in (r() for r in self.refs.values()) if c is not None]

    def _prune(self) -> None:
        for key in [key for key, ref in self.refs.items() if ref() is None]:
            del self.refs[key]


# Size flag name -> its trimmable caches. Any other flag's change walks nothing.
_trimmable: dict[str, _Trimmable] = {}
_trimmable_lock = threading.Lock()
_NOTHING = object()


def _trim_bounded_caches(name: str, value: Any) -> None:
    caches = _trimmable.get(name)
    if caches is None:  # not a cache size: nothing to do, whatever the number of caches
        return
    for cache in caches.alive():
        if len(cache.entries) > value:
            cache.trim()


register_listener(_trim_bounded_caches)


class _Pending:
    """A value one thread is making for a key; other threads wait for it."""

    __slots__ = ("done", "owner", "value", "kept")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.owner = threading.get_ident()
        self.value: Any = None
        self.kept = False  # made and stored: other threads may use it


# Every BoundedCache ever made, weakly, for ``clear_all`` (``jax.clear_caches``);
# plus the other forgetting a clear needs (jit's table of functions).
_all_caches: dict[int, weakref.ref[BoundedCache[Any, Any]]] = {}
_all_prune_at = 256
_clear_hooks: list[Callable[[], None]] = []


def _register(cache: BoundedCache[Any, Any]) -> None:
    global _all_prune_at
    with _trimmable_lock:
        _all_caches[id(cache)] = weakref.ref(cache)
        if len(_all_caches) >= _all_prune_at:  # dead ones dropped in amortized O(1)
            for key in [key for key, ref in _all_caches.items() if ref() is None]:
                del _all_caches[key]
            _all_prune_at = max(256, 2 * len(_all_caches))


def on_clear_all(hook: Callable[[], None]) -> None:
    """Run ``hook`` on every ``clear_all``: for caches that are not BoundedCaches."""
    _clear_hooks.append(hook)


def clear_all() -> None:
    """Empty every cache minijax keeps: traces, executables, eager operations (``jax.clear_caches``)."""
    with _trimmable_lock:
        caches = [c for c in (r() for r in _all_caches.values()) if c is not None]
    for cache in caches:
        cache.clear()
    for hook in _clear_hooks:
        hook()


class BoundedCache(Generic[K, V]):
    """A thread-safe map holding at most ``size_flag.value`` entries, dropping
    the least recently used first.

    Recency is tracked the "second chance" way (the CLOCK approximation of
    LRU): a hit only marks its entry as used, and eviction takes the oldest
    entry that was not used since it last came round, moving used ones to the
    back. So the hot path (eager dispatch, jit calls) is one lock-free dict
    read and one store, where exact LRU would hash the key a second time to
    reorder on every hit.

    ``get_or_make(key, make)`` makes a missing value once: the first thread to
    miss runs ``make()`` (tracing, compiling), and other threads asking for
    the same key meanwhile wait for its result instead of compiling again. If
    ``make`` raises, a waiting thread tries itself (and most likely raises the
    same error, in its own thread). A thread asking again for the key it is
    making (a function that calls itself under jit) makes it without caching,
    so that it recurses the way plain Python would instead of waiting on
    itself. Values are never None (None means "missing").
    """

    def __init__(self, name: str, size_flag: Flag[int]) -> None:
        self.name = name
        self._size_flag = size_flag
        self._trimmable = False  # entered in _trimmable yet
        # key -> [value, used since it last came round for eviction]. The
        # eager hot path reads it directly: ``entry = cache.entries.get(key)``,
        # then ``entry[1] = True`` on a hit (what ``get`` does, minus a call).
        self.entries: collections.OrderedDict[K, list[Any]] = collections.OrderedDict()
        self._pending: dict[K, _Pending] = {}
        self._lock = threading.Lock()
        # How many values were made and how many dropped: tests and benchmarks read them.
        self.misses = 0
        self.evictions = 0
        _register(self)

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, key: object) -> bool:
        return key in self.entries

    def __repr__(self) -> str:
        return f"<BoundedCache {self.name}: {len(self.entries)}/{self.capacity} entries>"

    @property
    def capacity(self) -> int:
        return int(read(self._size_flag.name))

    def get(self, key: K) -> V | None:
        entry = self.entries.get(key)
        if entry is None:
            return None
        entry[1] = True
        return entry[0]  # type: ignore[no-any-return]

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._insert(key, value)

    def _insert(self, key: K, value: V) -> None:
        data = self.entries
        data[key] = [value, False]
        data.move_to_end(key)
        if not self._trimmable and len(data) > 1:
            self._trimmable = True
            name = self._size_flag.name
            caches = _trimmable.get(name)
            if caches is None:
                with _trimmable_lock:
                    caches = _trimmable.setdefault(name, _Trimmable())
            caches.add(self)
        self._trim(keep=key)

    def trim(self) -> None:
        """Drop entries until the cache holds at most ``capacity`` (after the size flag shrank)."""
        with self._lock:
            self._trim(keep=_NOTHING)

    def _trim(self, keep: object) -> None:
        data = self.entries
        limit = self.capacity
        while len(data) > limit:
            old_key, entry = data.popitem(last=False)
            if old_key == keep:  # the entry being added stays
                data[old_key] = entry
            elif entry[1]:  # used since it last came round: a second chance, at the back
                entry[1] = False
                data[old_key] = entry
            else:
                self.evictions += 1

    def get_or_make(self, key: K, make: Callable[[], V], keep: Callable[[V], bool] | None = None) -> V:
        """The value for ``key``, made by ``make()`` if missing and stored unless ``keep(value)`` is False."""
        while True:
            value = self.get(key)
            if value is not None:
                return value
            with self._lock:
                entry = self.entries.get(key)
                if entry is not None:
                    return entry[0]  # type: ignore[no-any-return]
                pending = self._pending.get(key)
                if pending is None:
                    pending = self._pending[key] = _Pending()
                    break
            if pending.owner == threading.get_ident():
                return make()  # a recursive request for the key this thread is making
            pending.done.wait()
            if pending.kept:
                return pending.value  # type: ignore[no-any-return]
            if pending.value is not None:
                return make()  # made, but not to be shared (keep said no): make our own
            # The maker raised: go round again, possibly making it here.
        try:
            value = make()
            kept = keep is None or keep(value)
        except BaseException:
            with self._lock:
                del self._pending[key]
            pending.done.set()
            raise
        with self._lock:
            del self._pending[key]
            self.misses += 1
            if kept:
                self._insert(key, value)
        pending.value, pending.kept = value, kept
        pending.done.set()
        return value

    def discard(self, key: K) -> None:
        """Drop ``key``'s entry, if any. Takes no lock, so a weakref callback may
        call it whatever this thread is doing (even inside this cache): one
        dict operation, atomic under the GIL."""
        self.entries.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self.entries.clear()

    def values(self) -> list[V]:
        return [entry[0] for entry in list(self.entries.values())]
