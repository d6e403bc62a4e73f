"""``jax.extend.linear_util``: functions wrapped together with the transformations to apply to them.

A ``WrappedFun`` is a function ``f`` and a stack of transformations, each a
function ``gen(f, *static_args, *args, **kwargs)`` that calls ``f`` (the
function below it) itself (JAX's newer ``transformation2`` form) or a
generator that receives the arguments and sends back the results (the older
``transformation`` form). ``call_wrapped`` applies them, innermost first
wrapped around ``f``. ``_with_aux`` transformations also store an auxiliary
output, read after the call through the thunk they return.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Generator
from typing import Any

__all__ = [
    "Callable", "StoreException", "WrappedFun", "cache", "merge_linear_aux", "transformation", "transformation2",
    "transformation_with_aux", "transformation_with_aux2", "wrap_init",
]  # fmt: skip


class StoreException(Exception):
    """A store read before the call that fills it, or filled twice."""


class Store:
    """One auxiliary output of a ``_with_aux`` transformation."""

    __slots__ = ("_value",)
    _EMPTY = object()

    def __init__(self) -> None:
        self._value: Any = Store._EMPTY

    def store(self, value: Any) -> None:
        if self._value is not Store._EMPTY:
            raise StoreException("Store occupied")
        self._value = value

    def reset(self) -> None:  # each call fills the store anew
        self._value = Store._EMPTY

    @property
    def val(self) -> Any:
        if self._value is Store._EMPTY:
            raise StoreException("Store empty")
        return self._value


Transform = tuple[Callable[..., Any], tuple[Any, ...], Store | None]


class WrappedFun:
    """``f`` with the transformations ``transforms`` (first applied first) to apply when called."""

    __slots__ = ("f", "transforms", "params", "debug_info")

    def __init__(self, f: Callable[..., Any], transforms: tuple[Transform, ...], params: tuple[tuple[str, Any], ...],
                 debug_info: Any = None) -> None:  # fmt: skip
        self.f = f
        self.transforms = transforms
        self.params = params
        self.debug_info = debug_info

    @property
    def __name__(self) -> str:
        return getattr(self.f, "__name__", "<unnamed wrapped function>")

    @property
    def stores(self) -> list[Store | None]:
        return [store for _, _, store in self.transforms]

    def wrap(self, gen: Callable[..., Any], gen_static_args: tuple[Any, ...], store: Store | None) -> WrappedFun:
        return WrappedFun(self.f, (*self.transforms, (gen, gen_static_args, store)), self.params, self.debug_info)

    def call_wrapped(self, *args: Any, **kwargs: Any) -> Any:
        """Call ``f`` through every transformation: the last added sees the arguments first."""
        fun: Callable[..., Any] = functools.partial(self.f, **dict(self.params))
        for gen, static_args, store in self.transforms:
            if store is not None:
                store.reset()
                fun = functools.partial(gen, fun, store, *static_args)
            else:
                fun = functools.partial(gen, fun, *static_args)
        return fun(*args, **kwargs)

    def _key(self) -> tuple[Any, ...]:
        return (self.f, self.params, tuple((g, a) for g, a, _ in self.transforms))

    def __repr__(self) -> str:
        stack = "".join(f"{i}   : {getattr(g, '__name__', g)}   {a}\n" for i, (g, a, _) in enumerate(self.transforms))
        return f"Wrapped function:\n{stack}Core: {getattr(self.f, '__name__', self.f)}\n"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WrappedFun) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


def wrap_init(f: Callable[..., Any], params: dict[str, Any] | None = None, *, debug_info: Any = None) -> WrappedFun:
    """``f`` (with keyword ``params`` bound when called), not yet transformed."""
    return WrappedFun(f, (), tuple(sorted((params or {}).items())), debug_info)


# JAX's four ways to add a transformation are curried, as JAX's are: ``transformation2(gen)`` (or
# ``@transformation2`` on ``gen``) is a function of ``(fun, *gen_static_args)``.


def _transformation2(gen: Callable[..., Any], fun: WrappedFun, *gen_static_args: Any) -> WrappedFun:
    return fun.wrap(gen, gen_static_args, None)


def _transformation_with_aux2(gen: Callable[..., Any], fun: WrappedFun, *gen_static_args: Any,
                              use_eq_store: bool = False) -> tuple[WrappedFun, Callable[[], Any]]:  # fmt: skip
    del use_eq_store  # (JAX's EqualStore tolerates storing equal values twice; a Store is filled once per call)
    store = Store()
    return fun.wrap(gen, gen_static_args, store), lambda: store.val


def _transformation(gen: Callable[..., Any], fun: WrappedFun, *gen_static_args: Any) -> WrappedFun:
    def gen2(f: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        inst: Generator[Any, Any, Any] = gen(*args, **kwargs)
        inner_args, inner_kwargs = next(inst)
        return inst.send(f(*inner_args, **inner_kwargs))

    gen2.__name__ = getattr(gen, "__name__", "transformation")
    return _transformation2(gen2, fun, *gen_static_args)


def _transformation_with_aux(gen: Callable[..., Any], fun: WrappedFun,
                             *gen_static_args: Any) -> tuple[WrappedFun, Callable[[], Any]]:  # fmt: skip
    def gen2(f: Callable[..., Any], store: Store, *args: Any, **kwargs: Any) -> Any:
        inst: Generator[Any, Any, Any] = gen(*args, **kwargs)
        inner_args, inner_kwargs = next(inst)
        ans, aux = inst.send(f(*inner_args, **inner_kwargs))
        store.store(aux)
        return ans

    gen2.__name__ = getattr(gen, "__name__", "transformation_with_aux")
    return _transformation_with_aux2(gen2, fun, *gen_static_args)


def transformation2(gen: Callable[..., Any], *args: Any, **kwargs: Any) -> functools.partial[Any]:
    """Adds ``gen(f, *gen_static_args, *args, **kwargs)``, which calls the function below (``f``) itself."""
    return functools.partial(_transformation2, gen, *args, **kwargs)


def transformation_with_aux2(gen: Callable[..., Any], *args: Any, **kwargs: Any) -> functools.partial[Any]:
    """Like ``transformation2``; ``gen(f, store, *static, *args)`` also calls ``store.store(aux)``, which the
    thunk returned beside the function reads after a call."""
    return functools.partial(_transformation_with_aux2, gen, *args, **kwargs)


def transformation(gen: Callable[..., Any], *args: Any, **kwargs: Any) -> functools.partial[Any]:
    """The older form: ``gen(*static, *args)`` is a generator that yields ``(args, kwargs)`` for the
    function below, is sent its result, and yields the transformed result."""
    return functools.partial(_transformation, gen, *args, **kwargs)


def transformation_with_aux(gen: Callable[..., Any], *args: Any, **kwargs: Any) -> functools.partial[Any]:
    """The older form with an auxiliary output: the generator's second yield is ``(result, aux)``."""
    return functools.partial(_transformation_with_aux, gen, *args, **kwargs)


def merge_linear_aux(aux1: Callable[[], Any], aux2: Callable[[], Any]) -> tuple[bool, Any]:
    """Of two aux thunks exactly one of which was filled: ``(True, aux1())`` or ``(False, aux2())``."""
    try:
        out1 = aux1()
    except StoreException:
        try:
            out2 = aux2()
        except StoreException:
            raise StoreException("neither store occupied") from None
        return False, out2
    try:
        aux2()
    except StoreException:
        return True, out1
    raise StoreException("both stores occupied")


def cache(call: Callable[..., Any], *, explain: Any = None) -> Callable[..., Any]:
    """Memoise ``call(fun: WrappedFun, *args)`` on ``fun`` (its function weakly) and ``args``."""
    del explain
    memo: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()

    @functools.wraps(call)
    def memoized(fun: WrappedFun, *args: Any) -> Any:
        try:
            per_fun = memo.setdefault(fun.f, {})
        except TypeError:  # a function that cannot be weakly referenced: no memo
            return call(fun, *args)
        key = (fun._key()[1:], args)
        if key not in per_fun:
            per_fun[key] = call(fun, *args)
        return per_fun[key]

    memoized.cache_clear = memo.clear  # type: ignore[attr-defined]
    return memoized
