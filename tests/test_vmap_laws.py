"""vmap laws, for every primitive that has a sampler (``minijax.testing.samplers``).

1. ``vmap(f, in_axes, out_axes)(xs)`` equals stacking ``f`` over the batch:
   random batch positions (negative ones and None for some operands; at least
   one operand batched), batch sizes 1 to 3, random out_axes, every dtype
   the primitive takes. Integer and boolean results must be equal; floating
   ones equal up to a few ulps (a batched reduction or contraction may add
   in another order).
2. ``jit(vmap(f)) == vmap(f)``.
3. No loop over the batch: the jaxpr of ``vmap(f)`` has as many equations
   for a batch of 2 as for a batch of 3.

The reference backend runs the examples; xla runs one per law and primitive
(each new signature compiles there).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minijax
from minijax import dtypes
from minijax.testing.cases import Case, is_float
from minijax.testing.samplers import SAMPLERS, sampled_primitive_names
from minijax.testing.strategies import dtypes as dtype_strategy, seeds

PRIMS = sampled_primitive_names()

# How close batched and per-example floating results must be, by dtype.
RTOL: dict[np.dtype[Any], float] = {
    np.dtype(dtypes.bfloat16): 2e-2,
    np.dtype(np.float16): 4e-3,
    np.dtype(np.float32): 1e-5,
    np.dtype(np.float64): 1e-12,
}


def draw_axes(case: Case, data: st.DataObject) -> tuple[tuple[int | None, ...], int]:
    """in_axes (None for some operands, negative ones too, at least one operand batched) and out_axes."""
    dims: list[int | None] = []
    for aval in case.avals:  # an operand of rank r batched at an axis in [-(r+1), r], or not at all
        dims.append(data.draw(st.one_of(st.none(), st.integers(-aval.ndim - 1, aval.ndim)), label="in_axis"))
    if case.avals and all(d is None for d in dims):
        i = data.draw(st.integers(0, len(dims) - 1), label="batched operand")
        dims[i] = data.draw(st.integers(-case.avals[i].ndim - 1, case.avals[i].ndim), label="in_axis")
    # The lowest-ranked result bounds out_axes (eigh's eigenvalues, lu's pivots).
    out_rank = min(o.ndim for o in _outputs(case.prim.abstract_eval(*case.avals, **case.params)))
    return tuple(dims), data.draw(st.integers(-out_rank - 1, out_rank), label="out_axes")


class Batched:
    """A case with a batch: per-example operands, where each operand is batched, and the stacked operands."""

    def __init__(self, case: Case, data: st.DataObject, size: int, axes: tuple[tuple[int | None, ...], int]) -> None:
        self.case = case
        self.size = size
        self.in_axes, self.out_axes = axes
        rng = data.draw(seeds(), label="rng")
        self.examples = [case.args(rng) for _ in range(size)]

    def operand(self, i: int, b: int) -> Any:
        """Operand i of batch element b (an unbatched operand is the same for every element)."""
        return self.examples[b if self.in_axes[i] is not None else 0][i]

    def stacked_args(self) -> list[Any]:
        args = []
        for i, d in enumerate(self.in_axes):
            parts = [self.operand(i, b) for b in range(self.size)]
            args.append(parts[0] if d is None else np.stack(parts, axis=d))
        return args

    def vmapped(self) -> Callable[..., Any]:
        axis_size = self.size if not self.case.avals else None  # no operand to read the size from
        return minijax.vmap(self.case.apply, in_axes=self.in_axes, out_axes=self.out_axes, axis_size=axis_size)

    def expected(self) -> list[Any]:
        """f applied to each batch element, stacked along out_axes."""
        per_example = [_outputs(self.case.apply(*[self.operand(i, b) for i in range(len(self.in_axes))]))
                       for b in range(self.size)]  # fmt: skip
        return [np.stack([np.asarray(ex[k]) for ex in per_example], axis=self.out_axes)
                for k in range(len(per_example[0]))]  # fmt: skip


def _outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (list, tuple)) else [out]


def assert_same_results(got: Any, want: list[Any], what: str) -> None:
    got = _outputs(got)
    assert len(got) == len(want), f"{what}: {len(got)} results, expected {len(want)}"
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert (g.shape, g.dtype) == (w.shape, w.dtype), f"{what}: got {g.dtype}{list(g.shape)}, expected {w.dtype}{list(w.shape)}"
        if is_float(w.dtype):
            tol = RTOL[np.dtype(w.dtype)]
            with np.errstate(invalid="ignore"):  # bitcasts make NaN payloads the cast complains about
                g64, w64 = g.astype(np.float64), w.astype(np.float64)
            np.testing.assert_allclose(g64, w64, rtol=tol, atol=tol, err_msg=what)
        else:
            np.testing.assert_array_equal(g, w, err_msg=what)


def run_law(name: str, backend_name: str | None, share: float, law: Callable[[Batched], None]) -> None:
    n = 1 if backend_name == "xla" else max(2, int(settings().max_examples * share))
    sampler = SAMPLERS[name]

    @settings(max_examples=n)
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        dtype = data.draw(dtype_strategy(sampler.kinds), label="dtype")
        case = data.draw(sampler.cases(dtype), label="case")
        size = data.draw(st.integers(1, 3), label="batch size")
        law(Batched(case, data, size, draw_axes(case, data)))

    run()


@pytest.mark.parametrize("name", PRIMS)
def test_vmap_equals_stacking(name: str, backend_name: str | None) -> None:
    def law(batch: Batched) -> None:
        got = batch.vmapped()(*batch.stacked_args())
        assert_same_results(got, batch.expected(), f"vmap of {name}, in_axes={batch.in_axes}, out_axes={batch.out_axes}")

    run_law(name, backend_name, 0.3, law)


@pytest.mark.parametrize("name", PRIMS)
def test_jit_of_vmap_equals_vmap(name: str, backend_name: str | None) -> None:
    def law(batch: Batched) -> None:
        args = batch.stacked_args()
        want = [np.asarray(o) for o in _outputs(batch.vmapped()(*args))]
        assert_same_results(minijax.jit(batch.vmapped())(*args), want, f"jit(vmap({name})), in_axes={batch.in_axes}")

    run_law(name, backend_name, 0.1, law)


@pytest.mark.single_backend  # traces only
@pytest.mark.parametrize("name", PRIMS)
def test_vmap_does_not_loop_over_the_batch(name: str) -> None:
    @settings(max_examples=max(2, settings().max_examples // 10))
    @given(data=st.data())
    def law(data: st.DataObject) -> None:
        sampler = SAMPLERS[name]
        case = data.draw(sampler.cases(data.draw(dtype_strategy(sampler.kinds), label="dtype")), label="case")
        axes = draw_axes(case, data)
        counts = []
        for size in (2, 3):
            batch = Batched(case, data, size, axes)
            counts.append(len(minijax.make_jaxpr(batch.vmapped())(*batch.stacked_args()).jaxpr.eqns))
        assert counts[0] == counts[1], f"vmap of {name}: {counts[0]} equations for a batch of 2, {counts[1]} for 3"

    law()
