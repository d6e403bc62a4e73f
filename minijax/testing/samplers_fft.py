"""Samplers of the ``fft`` primitive (``minijax/primitives/fft.py``).

The law harness draws real dtypes (kind "float"); a case transforms one to
three trailing axes of sizes 1 to 5 (odd and even, so that IRFFT's Nyquist
frequency is both present and absent) under up to two batch axes. RFFT takes
an operand of the drawn dtype's precision (float32 or float64), the other
kinds a complex one; float16/bfloat16 draws use float32 parts, as the complex
samplers do. Every kind is linear (over the reals) in its operand, so the
law harness checks its jvp, its transpose and vmap.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from minijax.primitives.fft import FftType
from minijax.testing.cases import FLOAT, Case, Draw, Operand, Sampler, case
from minijax.testing.samplers_complex import complex_values, parts_dtype, real_values

_parts, _complex_values, _real_values = parts_dtype, complex_values(2.0), real_values(2.0)


def _fft(draw: Draw, dtype: np.dtype[Any]) -> Case:
    parts = _parts(dtype)
    fft_type = draw(st.sampled_from(list(FftType)))
    lengths = tuple(draw(st.integers(1, 5)) for _ in range(draw(st.integers(1, 3))))
    batch = tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2))))
    if fft_type == FftType.RFFT:
        operand = Operand(batch + lengths, parts, _real_values)
    else:
        last = lengths[-1] // 2 + 1 if fft_type == FftType.IRFFT else lengths[-1]
        operand = Operand(batch + lengths[:-1] + (last,), np.result_type(parts, np.complex64), _complex_values)
    return case("fft", {"fft_type": fft_type, "fft_lengths": lengths}, [operand], (0,), [(0,)])


SAMPLERS: dict[str, Sampler] = {"fft": Sampler("fft", _fft, FLOAT, linear=True)}
