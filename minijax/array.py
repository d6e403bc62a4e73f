"""``Array``: an immutable value living in a backend buffer.

Operators and array methods (``+``, ``.sum()``, ``.at``, indexing) are shared
with tracers and are attached by ``minijax.numpy.array_methods``.
"""

from __future__ import annotations

import abc
import gc
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from minijax import core, dtypes, transfers
from minijax.backend import default_device, default_device_of, get_backend
from minijax.core import IMMUTABLE_MESSAGE, HasAval, ShapedArray
from minijax.mesh import Sharding, SingleDeviceSharding

if TYPE_CHECKING:
    from minijax.backend import Backend, Device


class Array(HasAval, abc.ABC):  # noqa: B024  (an ABC so that tracers can register as Arrays)
    """A minijax array: a buffer on a backend device plus its abstract value.

    As in JAX, ``isinstance(x, Array)`` also holds for tracers (they register
    below), so user code can check for "an array" under transformations.
    Internals test ``type(x) is Array`` for a concrete array.
    """

    # A deleted (or donated) array has ``_buf is None``. ``_committed``: the
    # array was placed on its device explicitly (device_put with a device) or
    # computed from such an array, so computations on it run there (JAX's
    # "computation follows data"); uncommitted arrays move to the default device.
    # ``_sharding``: a multi-device sharding (a NamedSharding) when the array was
    # placed with one, else None (the whole array on ``_device``). On a backend that
    # holds per-device buffers (``Backend.holds_shards``: XLA over several devices)
    # such an array has ``_shards`` (one buffer per device, as the backend's one
    # object) and ``_buf is None``, so that every single-device path passes it to
    # ``placement.to_device``, which hands out its whole value on ``_device``
    # (assembled once, kept in ``_whole``). Elsewhere ``_shards`` is None and the
    # value stays whole on ``_device``: shards are derived from it (minijax.mesh).
    __slots__ = ("_buf", "aval", "_backend", "_device", "_committed", "_sharding", "_shards", "_whole", "__weakref__")
    aval: ShapedArray
    __array_priority__ = 100

    def __init__(
        self, buf: Any, aval: ShapedArray, backend: Backend, device: Device | None = None, committed: bool = False
    ) -> None:
        self._buf = buf
        self.aval = aval
        self._backend = backend
        self._device = device if device is not None else backend.devices()[0]
        self._committed = committed
        self._sharding: Sharding | None = None
        self._shards: Any = None
        self._whole: Any = None

    @property
    def _deleted(self) -> bool:
        return self._buf is None and self._shards is None

    def _whole_buffer(self) -> Any:
        """The buffer holding the whole value on ``_device``: ``_buf``, or for an array of
        per-device buffers their value put together there (once)."""
        if self._buf is not None:
            return self._buf
        if self._shards is None:
            raise RuntimeError(f"Array has been deleted with shape={self.aval.str_short(short_dtypes=False)}.")
        if self._whole is None:
            self._whole = put_on(self._device, self._value)
        return self._whole

    # --- data access -------------------------------------------------------
    @property
    def _value(self) -> np.ndarray[Any, Any]:
        if self._shards is not None:
            if transfers.active:
                transfers.check_device_to_host(self.aval, self._device)
            assert self._sharding is not None  # (an array of shards has its sharding)
            return self._backend.get_shards(self._shards, self._sharding, self.aval.shape, self.aval.dtype)
        if self._buf is None:
            raise RuntimeError(f"Array has been deleted with shape={self.aval.str_short(short_dtypes=False)}.")
        if transfers.active:
            transfers.check_device_to_host(self.aval, self._device)
        return self._backend.get(self._buf)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        value = self._value
        if copy:
            return np.array(value, dtype=dtype, copy=True)
        return value if dtype is None else value.astype(dtype)

    # --- DLPack (jnpshape, issue 21) ----------------------------------------
    # The host copy of the value exports itself: ``np.from_dlpack(x)`` and any
    # other DLPack consumer read a CPU tensor, whatever device holds ``x``.
    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: bool | None = None) -> Any:  # fmt: skip
        host = self._value
        if max_version is None:
            # A pre-1.0 consumer cannot be told the tensor is read-only: hand it a private copy.
            return np.array(host, copy=True).__dlpack__(stream=stream)
        return host.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # (kDLCPU, 0): the exported tensor is the host copy

    # --- printing ----------------------------------------------------------
    def __repr__(self) -> str:
        if isinstance(self.aval.dtype, dtypes.ExtendedDType):
            return self._extended_repr()
        prefix = "Array("
        weak = ", weak_type=True" if self.aval.weak_type else ""
        dtype_part = f"dtype={self.aval.dtype.name}{weak})"
        if self._deleted:
            return f"{prefix}<deleted>, shape={self.aval.shape}, {dtype_part}"
        if not self._printable_here():
            return f"{prefix}shape={self.aval.shape}, {dtype_part}"
        if self.aval.size == 0:
            body = f"[], shape={self.aval.shape}"
        else:
            body = np.array2string(
                self._printable(), separator=", ", prefix=prefix, suffix=",", max_line_width=np.get_printoptions()["linewidth"]
            )
        # JAX's layout: one space before dtype= when the last line has room,
        # else a wider gap of len("Array(") spaces (still on the same line).
        last_line = len(body) - body.rfind("\n") + 1
        fits = last_line + len(dtype_part) + 1 <= np.get_printoptions()["linewidth"]
        return f"{prefix}{body},{' ' if fits else ' ' * len(prefix)}{dtype_part}"

    def __str__(self) -> str:
        if isinstance(self.aval.dtype, dtypes.ExtendedDType):
            return self._extended_repr()
        if not self._printable_here():
            return repr(self)
        return str(self._printable())

    def _printable_here(self) -> bool:
        """mproc (issue 17): whether this process prints the value, as JAX decides: an array
        spanning processes prints as its shape and dtype alone unless it is replicated and a
        replica is on one of this process's devices."""
        if self._shards is None or self.is_fully_addressable:
            return True
        mine = self._backend.process_index()
        return self.is_fully_replicated and any(d.process_index == mine for d in self.devices())

    def _extended_repr(self) -> str:
        # JAX's form for key arrays: the key data under a header, as both repr and str.
        dtype = self.aval.dtype
        assert isinstance(dtype, dtypes.ExtendedDType)
        data = dtype.host_repr_data(self._value) if not self._deleted else "<deleted>"
        return f"Array({self.aval.shape}, dtype={dtype.name}) overlaying:\n{data}"

    def _printable(self) -> np.ndarray[Any, Any]:
        return self._value

    def __format__(self, spec: str) -> str:
        if not self._printable_here():
            return repr(self)
        if self.ndim == 0:
            return format(self._value[()], spec)
        return format(self._value, spec)

    if TYPE_CHECKING:
        # The operators and methods minijax.numpy.array_methods attaches at import (to tracers too),
        # declared for the type checker. Comparisons are elementwise, as in NumPy: they return an
        # Array, which is why __eq__/__ne__ cannot keep object's signature.
        def __add__(self, other: ArrayLike) -> Array: ...
        def __radd__(self, other: ArrayLike) -> Array: ...
        def __sub__(self, other: ArrayLike) -> Array: ...
        def __rsub__(self, other: ArrayLike) -> Array: ...
        def __mul__(self, other: ArrayLike) -> Array: ...
        def __rmul__(self, other: ArrayLike) -> Array: ...
        def __truediv__(self, other: ArrayLike) -> Array: ...
        def __rtruediv__(self, other: ArrayLike) -> Array: ...
        def __floordiv__(self, other: ArrayLike) -> Array: ...
        def __rfloordiv__(self, other: ArrayLike) -> Array: ...
        def __mod__(self, other: ArrayLike) -> Array: ...
        def __rmod__(self, other: ArrayLike) -> Array: ...
        def __divmod__(self, other: ArrayLike) -> tuple[Array, Array]: ...
        def __rdivmod__(self, other: ArrayLike) -> tuple[Array, Array]: ...
        def __pow__(self, other: ArrayLike) -> Array: ...
        def __rpow__(self, other: ArrayLike) -> Array: ...
        def __matmul__(self, other: ArrayLike) -> Array: ...
        def __rmatmul__(self, other: ArrayLike) -> Array: ...
        def __and__(self, other: ArrayLike) -> Array: ...
        def __rand__(self, other: ArrayLike) -> Array: ...
        def __or__(self, other: ArrayLike) -> Array: ...
        def __ror__(self, other: ArrayLike) -> Array: ...
        def __xor__(self, other: ArrayLike) -> Array: ...
        def __rxor__(self, other: ArrayLike) -> Array: ...
        def __lshift__(self, other: ArrayLike) -> Array: ...
        def __rlshift__(self, other: ArrayLike) -> Array: ...
        def __rshift__(self, other: ArrayLike) -> Array: ...
        def __rrshift__(self, other: ArrayLike) -> Array: ...
        def __eq__(self, other: ArrayLike) -> Array: ...  # type: ignore[override]
        def __ne__(self, other: ArrayLike) -> Array: ...  # type: ignore[override]
        # misc: NumPy's stubs type ``ndarray > x`` for any x with __array__ (an Array) as an ndarray, so
        # mypy calls these unsafely overlapping with ndarray's reflections; at run time NumPy defers to
        # Array's higher __array_priority__ and the result is an Array, as declared here.
        def __lt__(self, other: ArrayLike) -> Array: ...  # type: ignore[misc]
        def __le__(self, other: ArrayLike) -> Array: ...  # type: ignore[misc]
        def __gt__(self, other: ArrayLike) -> Array: ...  # type: ignore[misc]
        def __ge__(self, other: ArrayLike) -> Array: ...  # type: ignore[misc]
        def __neg__(self) -> Array: ...
        def __pos__(self) -> Array: ...
        def __abs__(self) -> Array: ...
        def __invert__(self) -> Array: ...
        def __round__(self, ndigits: int | None = None) -> Array: ...
        def __contains__(self, value: Any) -> bool: ...
        def __getitem__(self, idx: Any) -> Array: ...
        # Each forwards to the jnp function of its name (the array is the first argument).
        def all(self, *args: Any, **kwargs: Any) -> Array: ...
        def any(self, *args: Any, **kwargs: Any) -> Array: ...
        def argmax(self, *args: Any, **kwargs: Any) -> Array: ...
        def argmin(self, *args: Any, **kwargs: Any) -> Array: ...
        def argpartition(self, *args: Any, **kwargs: Any) -> Array: ...
        def argsort(self, *args: Any, **kwargs: Any) -> Array: ...
        def choose(self, *args: Any, **kwargs: Any) -> Array: ...
        def clip(self, *args: Any, **kwargs: Any) -> Array: ...
        def compress(self, *args: Any, **kwargs: Any) -> Array: ...
        def cumprod(self, *args: Any, **kwargs: Any) -> Array: ...
        def cumsum(self, *args: Any, **kwargs: Any) -> Array: ...
        def diagonal(self, *args: Any, **kwargs: Any) -> Array: ...
        def dot(self, *args: Any, **kwargs: Any) -> Array: ...
        def max(self, *args: Any, **kwargs: Any) -> Array: ...
        def mean(self, *args: Any, **kwargs: Any) -> Array: ...
        def min(self, *args: Any, **kwargs: Any) -> Array: ...
        def nonzero(self, *args: Any, **kwargs: Any) -> tuple[Array, ...]: ...
        def prod(self, *args: Any, **kwargs: Any) -> Array: ...
        def ptp(self, *args: Any, **kwargs: Any) -> Array: ...
        def repeat(self, *args: Any, **kwargs: Any) -> Array: ...
        def searchsorted(self, *args: Any, **kwargs: Any) -> Array: ...
        def sort(self, *args: Any, **kwargs: Any) -> Array: ...
        def std(self, *args: Any, **kwargs: Any) -> Array: ...
        def sum(self, *args: Any, **kwargs: Any) -> Array: ...
        def swapaxes(self, *args: Any, **kwargs: Any) -> Array: ...
        def take(self, *args: Any, **kwargs: Any) -> Array: ...
        def trace(self, *args: Any, **kwargs: Any) -> Array: ...
        def var(self, *args: Any, **kwargs: Any) -> Array: ...
        def astype(self, dtype: Any, copy: bool = False, device: Any = None) -> Array: ...
        def reshape(self, *args: Any, order: str = "C", **kwargs: Any) -> Array: ...
        def transpose(self, *args: Any) -> Array: ...
        def squeeze(self, axis: Any = None) -> Array: ...
        def ravel(self, order: str = "C") -> Array: ...
        def flatten(self, order: str = "C") -> Array: ...
        def round(self, decimals: int = 0, out: None = None) -> Array: ...
        def conj(self) -> Array: ...
        def conjugate(self) -> Array: ...
        def copy(self) -> Array: ...
        def view(self, dtype: Any = None, type: Any = None) -> Array: ...
        @property
        def T(self) -> Array: ...  # noqa: N802 (NumPy's name)
        @property
        def mT(self) -> Array: ...  # noqa: N802 (NumPy's name)
        @property
        def real(self) -> Array: ...
        @property
        def imag(self) -> Array: ...
        @property
        def at(self) -> Any: ...  # minijax.numpy.indexing's update helper (a layer above this module)

    # --- Python conversions ------------------------------------------------
    def __len__(self) -> int:
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __iter__(self) -> Iterator[Array]:
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.aval.shape[0]):
            yield self[i]  # type: ignore[index]

    def __bool__(self) -> bool:
        if isinstance(self.aval.dtype, dtypes.ExtendedDType):
            raise TypeError("key array cannot be converted to boolean.")
        return bool(self._value)

    def _check_scalar(self) -> None:
        if self.aval.ndim:
            raise TypeError(f"Only scalar arrays can be converted to Python scalars; got arr.ndim={self.aval.ndim}")

    def __int__(self) -> int:
        self._check_scalar()
        return int(self._value)

    def __float__(self) -> float:
        self._check_scalar()
        return float(self._value)

    def __complex__(self) -> complex:
        self._check_scalar()
        return complex(self._value)

    def __index__(self) -> int:
        if not dtypes.issubdtype(self.aval.dtype, np.integer):
            raise TypeError(f"Only integer scalar arrays can be converted to a scalar index, got {self.aval.str_short()}.")
        return int(self._value)

    def item(self, *args: Any) -> Any:
        return self._value.item(*args)

    def tolist(self) -> Any:
        return self._value.tolist()

    def __hash__(self) -> int:
        raise TypeError("unhashable type: 'Array'. Use a tuple of Python values, or a static argument, as a key.")

    def __setitem__(self, idx: Any, value: Any) -> None:
        raise TypeError(IMMUTABLE_MESSAGE)

    def __reduce__(self) -> Any:
        if isinstance(self.aval.dtype, dtypes.ExtendedDType):
            return self.aval.dtype.reduce_array(self._value)
        return (device_put_value, (np.asarray(self._value), self.aval.weak_type))

    def __copy__(self) -> Array:
        return self

    def __deepcopy__(self, memo: Any) -> Array:
        return self

    # --- placement and readiness ---------------------------------------------
    def block_until_ready(self) -> Array:
        buf = self._buf if self._shards is None else self._shards
        if buf is None:
            raise RuntimeError(f"Array has been deleted with shape={self.aval.str_short(short_dtypes=False)}.")
        try:
            self._backend.block_until_ready(buf)
        except RuntimeError as e:
            self._backend.is_ready(buf)  # a deleted (donated) buffer: raises JAX's message
            # A failed program (out of memory, ...): the backend's JaxRuntimeError, if it has one.
            runtime_error = getattr(self._backend, "runtime_error", None)
            if runtime_error is None:
                raise
            raise runtime_error(e) from None
        return self

    def is_ready(self) -> bool:
        buf = self._buf if self._shards is None else self._shards
        if buf is None:
            raise RuntimeError(f"Array has been deleted with shape={self.aval.str_short(short_dtypes=False)}.")
        return self._backend.is_ready(buf)

    def devices(self) -> set[Device]:
        return {self._device} if self._sharding is None else self._sharding.device_set

    # --- shardings (minijax.mesh) --------------------------------------------
    @property
    def sharding(self) -> Sharding:
        """How the array is laid out over devices (``SingleDeviceSharding`` unless placed with another)."""
        return SingleDeviceSharding(self._device) if self._sharding is None else self._sharding

    @property
    def is_fully_replicated(self) -> bool:
        return self.sharding.is_fully_replicated

    @property
    def is_fully_addressable(self) -> bool:
        mine = self._backend.process_index()  # mproc (issue 17)
        return all(d.process_index == mine for d in self.devices())

    @property
    def addressable_shards(self) -> list[Shard]:
        """One Shard per device: its index into the array and its block, as an Array on that device."""
        if self._sharding is None:
            return [Shard(self._device, (slice(None),) * self.aval.ndim, 0, self)]
        shape = self.aval.shape
        indices = self._sharding.devices_indices_map(shape)
        replicas = self._sharding.replica_ids(shape)
        if self._shards is not None:  # each device's own buffer
            blocks = self._backend.shard_buffers(self._shards, self._sharding, shape)
            shard_aval = self.aval.update(shape=self._sharding.shard_shape(shape))
            # mproc (issue 17): only this process's devices hold blocks here.
            mine = self._backend.process_index()
            local = [d for d in self._sharding._device_assignment if d.process_index == mine]
            return [
                Shard(device, indices[device], replicas[device], Array(block, shard_aval, self._backend, device, True))
                for device, block in zip(local, blocks)
            ]
        host = self._value
        return [
            Shard(device, index, replicas[device], _block_on(self, host, index, device))
            for device, index in indices.items()
        ]

    @property
    def global_shards(self) -> list[Shard]:
        """Every device's Shard; over several processes another process's have ``data=None`` (as in JAX)."""
        if self.is_fully_addressable:
            return self.addressable_shards
        assert self._sharding is not None  # (an array spanning processes is laid out over them)
        shape = self.aval.shape
        indices = self._sharding.devices_indices_map(shape)
        replicas = self._sharding.replica_ids(shape)
        local = {s.device: s for s in self.addressable_shards}
        return [local.get(d) or Shard(d, indices[d], replicas[d], None) for d in self._sharding._device_assignment]

    def addressable_data(self, index: int) -> Array:
        """The block held by the ``index``-th addressable device."""
        data = self.addressable_shards[index].data
        assert data is not None  # (an addressable shard has its data)
        return data

    @property
    def device(self) -> Device | Sharding:
        """The array's device; for an array over several devices, its sharding (as in JAX)."""
        if self._sharding is not None and self._sharding.num_devices > 1:
            return self._sharding
        return self._device

    @property
    def committed(self) -> bool:
        """Whether the array is committed to its device (``jax.Array.committed``)."""
        return self._committed

    def copy_to_host_async(self) -> None:
        return None

    def delete(self) -> None:
        self._buf = None
        self._shards = None
        self._whole = None

    def is_deleted(self) -> bool:
        return self._deleted

    def to_concrete_value(self) -> np.ndarray[Any, Any]:
        return self._value


Array.register(core.Tracer)


class Shard:
    """One device's block of an array (``Array.addressable_shards``)."""

    __slots__ = ("device", "index", "replica_id", "data")

    def __init__(self, device: Device, index: tuple[slice, ...], replica_id: int, data: Array | None) -> None:
        self.device = device
        self.index = index
        self.replica_id = replica_id
        self.data = data

    def __repr__(self) -> str:
        return f"Shard(device={self.device!r}, index={self.index}, replica_id={self.replica_id}, data={self.data})"


def _block_on(x: Array, host: np.ndarray[Any, Any], index: tuple[slice, ...], device: Device) -> Array:
    block = np.ascontiguousarray(host[index])
    return Array(put_on(device, block), x.aval.update(shape=block.shape), device.backend, device, True)


# Anything minijax accepts where an array is expected (``minijax.typing`` exports it; defined here,
# below that module, because Array's operators take it).
ArrayLike: TypeAlias = Array | np.ndarray[Any, Any] | np.bool_ | np.number[Any] | bool | int | float


def device_put_value(
    x: Any, weak_type: bool = False, backend: Backend | None = None, device: Device | None = None
) -> Array:
    """A host value (NumPy array or scalar) as an uncommitted Array on ``device``
    (default: the default device, or ``backend``'s default device)."""
    if device is None:
        device = default_device() if backend is None else default_device_of(backend)
    aval = core.get_aval(x)
    if weak_type and not aval.weak_type:
        aval = aval.update(weak_type=True)
    host = np.asarray(x, dtype=aval.dtype)
    if transfers.active:
        transfers.check_host_to_device(aval, device)
    return Array(put_on(device, host), aval, device.backend, device)


def put_on(device: Device, host: np.ndarray[Any, Any]) -> Any:
    """A backend buffer holding ``host`` on ``device``."""
    backend = device.backend
    return backend.put(host) if device is backend.devices()[0] else backend.put(host, device)


def live_arrays(platform: str | None = None) -> list[Array]:
    """``jax.live_arrays``: the Arrays alive now (not deleted), on the default backend or the
    one ``platform`` names (a backend name, or a platform such as "cpu": every backend on it).

    Found by walking the objects the garbage collector tracks, so making an
    Array costs nothing extra; this call takes time in proportion to the
    process's objects (a debugging tool, as in JAX)."""
    arrays = [a for a in gc.get_objects() if type(a) is Array and not a._deleted]
    if platform is None:
        backend = default_device().backend
        return [a for a in arrays if a._backend is backend]
    try:
        named = get_backend(platform)
    except Exception:  # not a backend's name: a platform's
        return [a for a in arrays if a._device.platform == platform]
    return [a for a in arrays if a._backend is named]
