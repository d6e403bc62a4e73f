"""Public entry points that are not transforms of their own module: make_jaxpr,
eval_shape, devices and placement, readiness."""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minijax import (
    config as config_module,
    core,
    dtypes,
    sharding_rules as _sharding_rules,  # noqa: F401  (installs the rules into the tracer)
    transfers,
    tree_util,
)
from minijax.array import Array
from minijax.backend import Device, default_backend_name, devices_for, get_backend
from minijax.config import (  # checking_leaks() etc.: the flags as context managers (docs/debugging.md)
    check_tracer_leaks as checking_leaks,
    debug_infs as debug_infs,
    debug_nans as debug_nans,
    default_device as default_device,
    default_matmul_precision as default_matmul_precision,
    enable_x64 as enable_x64,
    explain_cache_misses as explain_cache_misses,
    log_compiles as log_compiles,
    numpy_dtype_promotion as numpy_dtype_promotion,
    numpy_rank_promotion as numpy_rank_promotion,
)
from minijax.interpreters.batching import extend_axis_env
from minijax.interpreters.tracing import (
    DebugInfo,
    abstractify_flat,
    arg_names_of,
    fun_name,
    refuse_tracing_if_asked,
    trace_to_jaxpr,
)
from minijax.jaxpr import ClosedJaxpr
from minijax.mesh import AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec, ShardedAval
from minijax.placement import device_put as device_put


class ShapeDtypeStruct:
    """A shape and dtype standing in for an array (``jax.ShapeDtypeStruct``)."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape: Sequence[int], dtype: Any, *, sharding: Any = None, weak_type: bool = False) -> None:
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type
        self.sharding = sharding

    @property
    def aval(self) -> core.ShapedArray:
        return core.ShapedArray(self.shape, dtypes.canonicalize_dtype(self.dtype), self.weak_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return core.shape_size(self.shape)

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ShapeDtypeStruct)
            and (self.shape, self.dtype, self.weak_type) == (other.shape, other.dtype, other.weak_type)
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))

    @classmethod
    def like(cls, x: Any) -> ShapeDtypeStruct:
        """The shape, dtype and weak type of ``x`` (an array, a tracer, or anything with an aval)."""
        aval = core.get_aval(x) if not isinstance(x, ShapeDtypeStruct) else x.aval
        return cls(aval.shape, aval.dtype, weak_type=aval.weak_type)


def make_jaxpr(
    fun: Callable[..., Any],
    static_argnums: int | Sequence[int] = (),
    axis_env: Any = None,
    return_shape: bool = False,
    abstracted_axes: Any = None,
) -> Callable[..., Any]:
    """``make_jaxpr(f)(*args)``: the ClosedJaxpr of ``f`` at the arguments' avals."""
    if abstracted_axes is not None:
        raise NotImplementedError("make_jaxpr(abstracted_axes=...) is not supported by minijax")
    statics = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    def make(*args: Any, **kwargs: Any) -> Any:
        nargs = len(args)
        static_pos = {i: a for i, a in enumerate(args) if i in statics or i - nargs in statics}
        dyn_args = [a for i, a in enumerate(args) if i not in static_pos]
        flat, in_tree = tree_util.tree_flatten((tuple(dyn_args), kwargs))
        avals = list(abstractify_flat(flat, fun, lambda: arg_names_of(fun, args, kwargs)))
        out_tree_box: list[Any] = []

        def flat_fun(*tracers: Any) -> list[Any]:
            d_args, d_kwargs = tree_util.tree_unflatten(in_tree, tracers)
            it = iter(d_args)
            full = [static_pos[i] if i in static_pos else next(it) for i in range(nargs)]
            out = fun(*full, **d_kwargs)
            out_flat, out_tree = tree_util.tree_flatten(out)
            out_tree_box.append(out_tree)
            return out_flat

        # JAX stages make_jaxpr through jit, and its messages say "for jit".
        info = DebugInfo(fun, arg_names_of(fun, args, kwargs), "jit")
        refuse_tracing_if_asked(fun)
        with extend_axis_env(axis_env or ()):
            closed, _ = trace_to_jaxpr(flat_fun, avals, info)
        if return_shape:
            shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in closed.out_avals]
            return closed, tree_util.tree_unflatten(out_tree_box[0], shapes)
        return closed

    make.__name__ = f"make_jaxpr({fun_name(fun)})"
    return make


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The output shapes/dtypes of ``fun`` without computing it."""

    def to_aval_leaf(x: Any) -> Any:
        return x

    closed, shapes = make_jaxpr(fun, return_shape=True)(*tree_util.tree_map(to_aval_leaf, args), **kwargs)
    return shapes


def block_until_ready(tree: Any) -> Any:
    """Wait for every array in ``tree`` to be computed; return the tree."""
    for leaf in tree_util.tree_leaves(tree):
        if type(leaf) is Array:
            leaf.block_until_ready()
    return tree


def device_get(tree: Any) -> Any:
    """Copy every array in ``tree`` to a NumPy array on the host."""
    with transfers.explicit_transfers():
        return tree_util.tree_map(lambda x: np.asarray(x) if type(x) is Array else x, tree)


def devices(backend: str | None = None) -> list[Device]:
    """The devices of the default backend, or of ``backend``: a platform name
    ("cpu", "gpu") or a minijax backend name ("xla", "numpy")."""
    return devices_for(backend)


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[Device]:
    """The devices of this process, or of process ``process_index`` (mproc, issue 17)."""
    backend_ = get_backend(backend) if backend in (None, "xla", "numpy") else None
    if backend_ is None:
        every = devices(backend)
        index = process_index if process_index is not None else get_backend().process_index()
    else:
        every = backend_.global_devices()
        index = process_index if process_index is not None else backend_.process_index()
    if not 0 <= index < process_count(backend):  # JAX's check and message
        raise ValueError(f"Unknown process_index {index}")
    return [d for d in every if d.process_index == index]


def device_count(backend: str | None = None) -> int:
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    return len(local_devices(backend=backend))


def default_backend() -> str:
    """The platform of the default backend ("cpu", or "gpu" when the xla backend found one)."""
    return get_backend().platform


def process_index(backend: Any = None) -> int:
    """This process's index among the processes of the computation (0 unless
    ``jax.distributed.initialize`` joined it to others)."""
    return get_backend(backend if backend in ("xla", "numpy") else None).process_index()


def process_count(backend: Any = None) -> int:
    """How many processes the computation spans (``num_processes`` after ``jax.distributed.initialize``)."""
    return get_backend(backend if backend in ("xla", "numpy") else None).process_count()


def process_indices(backend: Any = None) -> list[int]:
    """The indices of all processes: ``[0]``."""
    return list(range(process_count(backend)))


def _renamed(old: str, new: str) -> None:
    warnings.warn(f"jax.{old} has been renamed to jax.{new}. This alias will eventually be removed; please "
                  "update your code.", UserWarning, stacklevel=3)


def host_count(backend: Any = None) -> int:
    """The old name of ``process_count`` (warns)."""
    _renamed("host_count", "process_count")
    return process_count(backend)


def host_id(backend: Any = None) -> int:
    """The old name of ``process_index`` (warns)."""
    _renamed("host_id", "process_index")
    return process_index(backend)


def host_ids(backend: Any = None) -> list[int]:
    """The old name of ``process_indices`` (warns)."""
    _renamed("host_ids", "process_indices")
    return process_indices(backend)


def copy_to_host_async(x: Any) -> Any:
    """Start copying every array leaf of ``x`` to the host (what has a ``copy_to_host_async``
    method); returns ``x``."""
    for leaf in tree_util.tree_leaves(x):
        start = getattr(leaf, "copy_to_host_async", None)
        if start is not None:
            start()
    return x


__all__ = [
    "ClosedJaxpr",
    # customrules (issue 20)
    "current_name_stack",
    "named_call",
    "named_scope",
    "ShapeDtypeStruct",
    "block_until_ready",
    "checking_leaks",
    "copy_to_host_async",
    "debug_infs",
    "debug_nans",
    "default_backend",
    "default_device",
    "device_count",
    "device_get",
    "device_put",
    "devices",
    "default_matmul_precision",
    "disable_jit",
    "enable_x64",
    "ensure_compile_time_eval",
    "eval_shape",
    "explain_cache_misses",
    "host_count",
    "host_id",
    "host_ids",
    "local_device_count",
    "local_devices",
    "log_compiles",
    "make_jaxpr",
    "numpy_dtype_promotion",
    "numpy_rank_promotion",
    "print_environment_info",
    "process_count",
    "process_index",
    "process_indices",
    "typeof",
]


def ensure_compile_time_eval() -> contextlib.AbstractContextManager[None]:
    """Inside ``with jax.ensure_compile_time_eval():`` operations on concrete
    values run right away even while jit traces (their results are concrete,
    usable in Python ``if``); operations on traced values are staged as usual."""
    return config_module.eager_constant_folding(True)


def typeof(x: Any) -> core.ShapedArray:
    """The abstract value of ``x``: its shape, dtype and weak type (``jax.typeof``)."""
    if isinstance(x, (list, tuple, dict)) or not (isinstance(x, core.Tracer) or core.is_array_like(x)):
        raise TypeError(f"Argument '{x}' of type '{type(x)}' is not a valid JAX type")
    aval = core.get_aval(x)
    if isinstance(x, core.Tracer) and hasattr(aval, "vma"):  # inside an eager shard_map: its axes of variation
        return aval
    if isinstance(x, core.Tracer) and isinstance(aval, ShardedAval):  # shtypes: a traced value over Explicit axes carries its sharding
        if isinstance(aval.sharding, NamedSharding):
            return ShardedAval(aval.shape, aval.dtype, aval.weak_type, _type_sharding(aval.sharding))
        return aval
    if type(x) is Array and isinstance(x._sharding, NamedSharding):
        return ShardedAval(aval.shape, aval.dtype, aval.weak_type, _type_sharding(x._sharding))
    if type(x) is Array and x._sharding is not None:
        return ShardedAval(aval.shape, aval.dtype, aval.weak_type, x._sharding)
    # issue 24 (refs part: Optax's alias_test): a value with no sharding of its own (a tracer, an array
    # never placed) still has one, as in JAX: replicated over the empty abstract mesh. Libraries pass
    # it on as ``out_sharding`` (optax.tree_utils.tree_random_like).
    return ShardedAval(aval.shape, aval.dtype, aval.weak_type, _unplaced_sharding(aval.ndim))


def _type_sharding(sharding: NamedSharding) -> NamedSharding:
    """What a type says of an array laid out by ``sharding``, as JAX's types do: the abstract mesh, and
    only the Explicit axes (the compiler places values over Auto axes as it likes)."""
    mesh = sharding.mesh.abstract_mesh if isinstance(sharding.mesh, Mesh) else sharding.mesh
    kinds = dict(zip(mesh.axis_names, mesh.axis_types))

    def explicit(entry: Any) -> Any:
        if entry is None or entry is PartitionSpec.UNCONSTRAINED:
            return entry
        names = (entry,) if isinstance(entry, str) else tuple(entry)
        kept = tuple(n for n in names if kinds.get(n) is AxisType.Explicit)
        if not kept:
            return None
        return kept[0] if isinstance(entry, str) else kept

    return NamedSharding(mesh, PartitionSpec(*[explicit(e) for e in sharding.spec]))


def _unplaced_sharding(ndim: int) -> NamedSharding:
    return NamedSharding(AbstractMesh((), ()), PartitionSpec(*([None] * ndim)))


def print_environment_info(return_string: bool = False) -> str | None:
    """The versions and devices in use, as JAX's ``print_environment_info`` lists them."""
    import importlib.metadata
    import platform
    import sys

    # The package's version; read from the loaded package (this module is below it).
    version = sys.modules["minijax"].__version__
    backend = default_backend_name()
    try:
        jaxlib_version = importlib.metadata.version("jaxlib")
    except importlib.metadata.PackageNotFoundError:
        jaxlib_version = "not installed"
    local = devices_for(backend)
    # JAX's own text, its stray quote after "devices" included.
    text = (
        f"jax:    {version}\n"
        f"jaxlib: {jaxlib_version}\n"
        f"numpy:  {np.__version__}\n"
        f"python: {sys.version}\n"
        f"device info: {local[0].device_kind}-{len(local)}, {len(local)} local devices\"\n"
        f"process_count: {process_count()}\n"
        f"platform: {platform.uname()}\n"
    )
    if return_string:
        return text
    print(text)
    return None


def disable_jit(disable: bool = True) -> contextlib.AbstractContextManager[None]:
    """Inside ``with jax.disable_jit():`` jitted functions run op by op, on
    concrete arrays (``print`` shows values), and ``cond``/``while_loop``/``scan``
    with a concrete predicate run as Python control flow; the
    ``jax_disable_jit`` flag for the current thread (docs/debugging.md)."""
    return config_module.disable_jit(disable)



# ---------------------------------------------------------------------------
# Name scopes (jax.named_scope / jax.named_call). JAX keeps a name stack that
# it attaches to each equation's source info and prints only as op metadata in
# the lowered HLO (``loc(...)`` / ``op_name``), never in make_jaxpr's text.
# minijax keeps the stack (``current_name_stack()``) so scopes nest and are
# accepted under every transformation, but records it nowhere: neither
# jaxprs nor the lowered text carry it.


class _NameStack(threading.local):
    def __init__(self) -> None:
        self.names: list[str] = []


_name_stack = _NameStack()


def current_name_stack() -> str:
    """The active scopes, outermost first, joined by ``/`` (as JAX's name stack prints)."""
    return "/".join(_name_stack.names)


class _NamedScope(contextlib.ContextDecorator):
    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        _name_stack.names.append(self.name)

    def __exit__(self, *exc: object) -> None:
        _name_stack.names.pop()


def named_scope(name: str) -> contextlib.ContextDecorator:
    """A context manager (or decorator) adding ``name`` to the name stack."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    return _NamedScope(name)


def named_call(fun: Callable[..., Any], *, name: str | None = None) -> Callable[..., Any]:
    """``fun`` run inside ``named_scope(name)`` (default: ``fun.__name__``)."""
    if name is None:
        name = fun.__name__
    return named_scope(name)(fun)
