"""``minijax.lax``: the public wrappers that bind primitives, named as in ``jax.lax``."""

# complex: complex, real, imag, conj (issue 19)
from minijax.lax import (
    autodiff as _autodiff,
    complex as _complex,  # noqa: E402
    control_flow as _control_flow,
    conv_wrappers as _conv_wrappers,
    convolution as _convolution,
    elementwise as _elementwise,
    fft as _fft,  # fft (issue 19): lax.fft, lax.FftType
    indexing as _indexing,
    linalg as linalg,
    padding as _padding,
    parallel as _parallel,
    reductions as _reductions,
    sorting as _sorting,
    special as _special,
    structural as _structural,
    windowed as _windowed,
)
from minijax.lax.autodiff import *  # noqa: F403
from minijax.lax.complex import *  # noqa: E402, F403
from minijax.lax.control_flow import *  # noqa: F403
from minijax.lax.conv_wrappers import *  # noqa: F403
from minijax.lax.convolution import *  # noqa: F403
from minijax.lax.elementwise import *  # noqa: F403
from minijax.lax.fft import *  # noqa: F403  # fft (issue 19)
from minijax.lax.indexing import *  # noqa: F403
from minijax.lax.padding import *  # noqa: F403
from minijax.lax.parallel import *  # noqa: F403
from minijax.lax.reductions import *  # noqa: F403
from minijax.lax.sorting import *  # noqa: F403
from minijax.lax.special import *  # noqa: F403
from minijax.lax.structural import *  # noqa: F403
from minijax.lax.windowed import *  # noqa: F403

# sharding (issue 17): lax.with_sharding_constraint
from minijax.sharding import with_sharding_constraint as with_sharding_constraint

__all__ = [*_autodiff.__all__, *_control_flow.__all__, *_conv_wrappers.__all__, *_convolution.__all__, *_elementwise.__all__, *_indexing.__all__, *_padding.__all__, *_parallel.__all__, *_reductions.__all__, *_sorting.__all__, *_special.__all__, *_structural.__all__, *_windowed.__all__]
__all__ += _complex.__all__  # complex (issue 19)
__all__ += _fft.__all__  # fft (issue 19)
