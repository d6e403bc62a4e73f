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
from minijax.testing.cases import FLOAT, Case, Draw, NDArray, Operand, Sampler, Shape, case


def _parts(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return dtype if dtype in (np.dtype(np.float32), np.dtype(np.float64)) else np.dtype(np.float32)


def _complex_values(rng: np.random.Generator, s: Shape, dtype: np.dtype[Any]) -> NDArray:
    return np.asarray((rng.uniform(-2, 2, s) + 1j * rng.uniform(-2, 2, s)).astype(dtype))


def _real_values(rng: np.random.Generator, s: Shape, dtype: np.dtype[Any]) -> NDArray:
    return np.asarray(rng.uniform(-2, 2, s).astype(dtype))


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
