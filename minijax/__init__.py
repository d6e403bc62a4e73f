"""minijax: a small, readable re-implementation of JAX's core.

``import minijax as jax; import minijax.numpy as jnp`` gives JAX's public API
for the supported surface.
"""

from minijax import config as _config_module
from minijax import dispatch as _dispatch  # noqa: F401  (installs eager evaluation)
from minijax import dtypes as dtypes
from minijax import errors as errors
from minijax import lax as lax
from minijax import numpy as numpy
from minijax import primitives as _primitives  # noqa: F401  (registers every primitive)
from minijax import tree as tree
from minijax import tree_util as tree_util
from minijax import typing as typing
from minijax.api import (
    ShapeDtypeStruct as ShapeDtypeStruct,
)
from minijax.api import (
    block_until_ready as block_until_ready,
)
from minijax.api import (
    default_backend as default_backend,
)
from minijax.api import (
    device_count as device_count,
)
from minijax.api import (
    device_get as device_get,
)
from minijax.api import (
    device_put as device_put,
)
from minijax.api import (
    devices as devices,
)
from minijax.api import (
    eval_shape as eval_shape,
)
from minijax.api import (
    local_device_count as local_device_count,
)
from minijax.api import (
    local_devices as local_devices,
)
from minijax.api import (
    make_jaxpr as make_jaxpr,
)
from minijax.api import (
    process_count as process_count,
)
from minijax.api import (
    process_index as process_index,
)
from minijax.array import Array as Array
from minijax.backend import Device as Device
from minijax.config import config as config
from minijax.interpreters.jit import jit as jit

__version__ = "0.1.0"

del _config_module
