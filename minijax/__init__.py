"""minijax: a small, readable re-implementation of JAX's core.

``import minijax as jax; import minijax.numpy as jnp`` gives JAX's public API
for the supported surface.
"""

# customrules (issue 20): custom_gradient, linear_transpose, closure_convert, custom_batching, name scopes
# sharding (issue 17): jax.sharding, meshes, sharded arrays, shard_map
from minijax import (
    custom_batching as custom_batching,
    debug as debug,
    dispatch as _dispatch,  # noqa: F401  (installs eager evaluation)
    # jnpshape (issue 21): jax.ops, jax.flatten_util, jax.dlpack
    dlpack as dlpack,
    dtypes as dtypes,
    errors as errors,
    experimental as experimental,
    # stagesx (issue 20): jax.export, jax.profiler, jax.stages
    export as export,
    flatten_util as flatten_util,
    image as image,
    lax as lax,
    monitoring as monitoring,  # jax.monitoring
    nn as nn,
    numpy as numpy,
    ops as ops,
    primitives as _primitives,  # noqa: F401  (registers every primitive)
    profiler as profiler,  # stagesx (issue 20)
    random as random,
    scipy as scipy,
    sharding as sharding,  # noqa: E402
    stages as stages,  # stagesx (issue 20)
    tree as tree,
    tree_util as tree_util,
    typing as typing,
)

# remat (issue 20): the policies, as jax.checkpoint_policies
from minijax.ad_checkpoint import checkpoint as checkpoint, checkpoint_policies as checkpoint_policies, remat as remat
from minijax.api import (
    ShapeDtypeStruct as ShapeDtypeStruct,
    block_until_ready as block_until_ready,
    checking_leaks as checking_leaks,
    copy_to_host_async as copy_to_host_async,
    debug_infs as debug_infs,
    debug_nans as debug_nans,
    default_backend as default_backend,
    default_device as default_device,
    default_matmul_precision as default_matmul_precision,
    device_count as device_count,
    device_get as device_get,
    device_put as device_put,
    devices as devices,
    disable_jit as disable_jit,
    enable_x64 as enable_x64,
    ensure_compile_time_eval as ensure_compile_time_eval,
    eval_shape as eval_shape,
    explain_cache_misses as explain_cache_misses,
    host_count as host_count,
    host_id as host_id,
    host_ids as host_ids,
    local_device_count as local_device_count,
    local_devices as local_devices,
    log_compiles as log_compiles,
    make_jaxpr as make_jaxpr,
    named_call as named_call,
    named_scope as named_scope,
    numpy_dtype_promotion as numpy_dtype_promotion,
    numpy_rank_promotion as numpy_rank_promotion,
    print_environment_info as print_environment_info,
    process_count as process_count,
    process_index as process_index,
    process_indices as process_indices,
    typeof as typeof,
)
from minijax.array import Array as Array, Shard as Shard, live_arrays as live_arrays  # live_arrays: stagesx (issue 20)
from minijax.autodiff import (
    grad as grad,
    hessian as hessian,
    jacfwd as jacfwd,
    jacobian as jacobian,
    jacrev as jacrev,
    jvp as jvp,
    linear_transpose as linear_transpose,
    linearize as linearize,
    value_and_grad as value_and_grad,
    vjp as vjp,
)
from minijax.backend import Device as Device
from minijax.callbacks import effects_barrier as effects_barrier, pure_callback as pure_callback

# config: JAX's flags as context managers too (``with jax.enable_checks(True):``), beside api.py's.
from minijax.config import (
    allow_f16_reductions as allow_f16_reductions,
    check_tracer_leaks as check_tracer_leaks,
    config as config,
    enable_checks as enable_checks,
    jax2tf_associative_scan_reductions as jax2tf_associative_scan_reductions,
    no_tracing as no_tracing,
    softmax_custom_jvp as softmax_custom_jvp,
    thread_guard as thread_guard,
)
from minijax.custom_derivatives import (
    closure_convert as closure_convert,
    custom_gradient as custom_gradient,
    custom_jvp as custom_jvp,
    custom_vjp as custom_vjp,
)
from minijax.dtypes import float0 as float0
from minijax.jaxpr_graph import jaxpr_graph as jaxpr_graph
from minijax.pmap import pmap as pmap
from minijax.prng import (
    default_prng_impl_flag as default_prng_impl,  # noqa: F401  (jax.default_prng_impl)
    enable_custom_prng as enable_custom_prng,
    legacy_prng_key as legacy_prng_key,
    threefry_partitionable as threefry_partitionable,
)
from minijax.shard_map import shard_map as shard_map  # noqa: E402
from minijax.sharding import (  # noqa: E402
    NamedSharding as NamedSharding,
    PartitionSpec as P,  # noqa: F401  (jax.P)
    make_array_from_callback as make_array_from_callback,
    make_array_from_single_device_arrays as make_array_from_single_device_arrays,
    make_mesh as make_mesh,
    reshard as reshard,
    set_mesh as set_mesh,
)
from minijax.stages import clear_caches as clear_caches, jit as jit

# stagesx (issue 20): transfer guards
from minijax.transfers import (
    transfer_guard as transfer_guard,
    transfer_guard_device_to_device as transfer_guard_device_to_device,
    transfer_guard_device_to_host as transfer_guard_device_to_host,
    transfer_guard_host_to_device as transfer_guard_host_to_device,
)
from minijax.vectorization import vmap as vmap

__version__ = "0.1.0"
# JAX's tuple form of the version, for version checks (``__version_info__ >= (0, 4)``).
__version_info__ = tuple(int(part) for part in __version__.split("."))

# refs (issue 24): mutable array references (jax.Ref, jax.new_ref, jax.ref)
# mproc (issue 17): jax.distributed (multi-process on XLA's distributed runtime)
from minijax import (
    distributed as distributed,  # noqa: E402
    ref as ref,  # noqa: E402
)
from minijax.experimental.multihost_utils import (  # noqa: E402
    make_array_from_process_local_data as make_array_from_process_local_data,
)
from minijax.ref import (  # noqa: E402
    Ref as Ref,
    empty_ref as empty_ref,
    free_ref as free_ref,
    freeze as freeze,
    new_ref as new_ref,
)
