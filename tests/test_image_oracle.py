"""minijax.image against real JAX: values, dtypes, weak types, gradients and errors.

Every method x upsampling/downsampling x antialias on/off, on 1-D, 2-D and 3-D
images and NHWC batches, for ``resize`` and ``scale_and_translate``, and the
gradients with respect to the image (and to scale and translation), to
float32 tolerance.

Run with the oracle environment (README.md, "More"):
    .venv-oracle/bin/python -m pytest -m oracle tests/test_image_oracle.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")
import jax.numpy as jjnp  # noqa: E402

import minijax as mj  # noqa: E402
import minijax.numpy as mjnp  # noqa: E402

pytestmark = pytest.mark.oracle

F32 = np.float32
METHODS = ["nearest", "linear", "cubic", "lanczos3", "lanczos5", "cubic-pytorch", "area"]

# (input shape, output shape): 1-D, 2-D, 3-D images and NHWC batches; each
# multi-dimensional case enlarges some dimensions and shrinks others (and the
# 3-D one keeps one), so every case of each rank is both up- and downsampling.
RESIZES = {
    "1d_up": ((5,), (12,)),
    "1d_down": ((13,), (4,)),
    "2d": ((6, 9), (10, 4)),
    "3d": ((7, 4, 5), (3, 9, 5)),
    "nhwc": ((2, 10, 5, 3), (2, 4, 9, 3)),
}


def _image(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape).astype(F32)


def same(ours: Any, theirs: Any, rtol: float = 2e-5, atol: float = 2e-5) -> None:
    assert (ours.shape, ours.dtype, ours.weak_type) == (theirs.shape, theirs.dtype, theirs.weak_type)
    np.testing.assert_allclose(np.asarray(ours, np.float64), np.asarray(theirs, np.float64), rtol=rtol, atol=atol)


def both(program: Callable[[Any, Any, Any], Any], *host_args: Any, **tols: float) -> None:
    """``program(jax_module, jnp_module, *args)`` in both libraries: the same results (shape, dtype, weak type)."""
    ours = program(mj, mjnp, *[mjnp.asarray(a) if isinstance(a, np.ndarray) else a for a in host_args])
    theirs = program(jax, jjnp, *[jjnp.asarray(a) if isinstance(a, np.ndarray) else a for a in host_args])
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            same(o, t, **tols)
    else:
        same(ours, theirs, **tols)


def same_error(program: Callable[[Any, Any], Any]) -> None:
    """Both libraries refuse: ours with JAX's error type."""
    with pytest.raises(Exception) as theirs:
        program(jax, jjnp)
    with pytest.raises(theirs.type):
        program(mj, mjnp)


def same_dicts(ours: dict[str, Any], theirs: dict[str, Any], **tols: float) -> None:
    assert sorted(ours) == sorted(theirs)
    for key in sorted(theirs):
        try:
            same(ours[key], theirs[key], **tols)
        except AssertionError as e:
            raise AssertionError(f"{key}: {e}") from None


def both_jit(program: Callable[[Any, Any, Any], dict[str, Any]], *host_args: Any, **tols: float) -> None:
    """``program`` jitted in both libraries (real JAX compiles every new shape: one compile per test, not per case)."""
    ours = mj.jit(lambda *a: program(mj, mjnp, *a))(*[mjnp.asarray(a) for a in host_args])
    theirs = jax.jit(lambda *a: program(jax, jjnp, *a))(*[jjnp.asarray(a) for a in host_args])
    same_dicts(ours, theirs, **tols)


@pytest.mark.parametrize("case", sorted(RESIZES))
@pytest.mark.parametrize("method", METHODS)
def test_resize_values_and_gradients(method: str, case: str) -> None:
    """The resized image and its gradient, with and without antialiasing."""
    src, dst = RESIZES[case]

    def program(j: Any, jnp: Any, x: Any, c: Any) -> dict[str, Any]:
        out = {}
        for antialias in (True, False):
            resized = lambda y: j.image.resize(y, dst, method, antialias=antialias)  # noqa: B023, E731
            out[f"antialias={antialias}"] = resized(x)
            out[f"antialias={antialias} grad"] = j.grad(lambda y: jnp.sum(resized(y) * c))(x)  # noqa: B023
        return out

    both_jit(program, _image(src), _image(dst, seed=1), rtol=1e-4, atol=1e-4)


# (input shape, output shape, spatial dims, scale, translation)
WARPS = {
    "1d": ((6,), (11,), (0,), [1.7], [0.6]),
    "2d": ((12, 6), (4, 10), (0, 1), [0.3, 1.5], [0.25, -0.7]),
    "2d_negative_dims_off_the_image": ((8, 7), (5, 12), (-2, -1), [0.6, 1.6], [3.0, -2.5]),
    "3d": ((4, 6, 5), (7, 3, 5), (0, 1, 2), [1.6, 0.5, 1.0], [0.1, 0.3, 0.0]),
    "nhwc_one_axis": ((2, 7, 6, 3), (2, 7, 4, 3), (2,), [0.6], [-0.3]),
    "nhwc": ((2, 7, 6, 3), (2, 10, 4, 3), (1, 2), [1.4, 0.6], [0.5, -0.3]),
}


@pytest.mark.parametrize("case", sorted(WARPS))
@pytest.mark.parametrize("method", [m for m in METHODS if m != "nearest"])
def test_scale_and_translate_values_and_gradients(method: str, case: str) -> None:
    """The warped image and its gradients w.r.t. image, scale and translation, with and without antialiasing."""
    src, dst, dims, scale, translation = WARPS[case]

    def program(j: Any, jnp: Any, x: Any, s: Any, t: Any, c: Any) -> dict[str, Any]:
        out = {}
        for antialias in (True, False):

            def warp(y: Any, s: Any, t: Any) -> Any:
                return j.image.scale_and_translate(y, dst, dims, s, t, method, antialias=antialias)  # noqa: B023

            key = f"antialias={antialias}"
            out[key] = warp(x, s, t)
            grads = j.grad(lambda y, s, t: jnp.sum(warp(y, s, t) * c), argnums=(0, 1, 2))(x, s, t)
            out.update({f"{key} grad {name}": g for name, g in zip(("image", "scale", "translation"), grads)})
        return out

    both_jit(program, _image(src), np.array(scale, F32), np.array(translation, F32), _image(dst, seed=1),
             rtol=1e-4, atol=1e-4)  # fmt: skip


DTYPES = [np.int32, np.uint8, np.int8, np.bool_, np.float16, ml_dtypes.bfloat16]


@pytest.mark.parametrize("method", ["nearest", "linear", "cubic", "area"])
def test_dtypes(method: str) -> None:
    """Integers and bool: NEAREST keeps the dtype, the others compute in float32; half floats stay themselves."""
    rng = np.random.default_rng(3)
    images = [(rng.integers(0, 2, (5, 6)) if dtype is np.bool_ else rng.integers(0, 9, (5, 6))).astype(dtype)
              for dtype in DTYPES]  # fmt: skip

    def program(j: Any, jnp: Any, *xs: Any) -> dict[str, Any]:
        return {np.dtype(x.dtype).name: j.image.resize(x, (9, 4), method) for x in xs}

    ours = program(mj, mjnp, *[mjnp.asarray(x) for x in images])
    theirs = program(jax, jjnp, *[jjnp.asarray(x) for x in images])
    same_dicts(ours, theirs, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("method", ["nearest", "linear", "lanczos3"])
@pytest.mark.parametrize("resized", [True, False])
def test_weak_types(method: str, resized: bool) -> None:
    shape = (7,) if resized else (4,)
    both(lambda j, jnp: j.image.resize(jnp.full((4,), 1.5), shape, method))
    both(lambda j, jnp: j.image.resize(2.0, (), method))


def test_scale_dtype_sets_the_weights_precision() -> None:
    """The weights are computed in scale's dtype (float16 here) and only then cast to the image's."""
    both(lambda j, jnp, x, s, t: j.image.scale_and_translate(x, (9,), (0,), s, t, "linear"),
         np.arange(5, dtype=F32), np.array([1.7], np.float16), np.array([0.3], np.float16))  # fmt: skip


@pytest.mark.parametrize("method", ["linear", "lanczos5", "nearest"])
def test_jit_and_vmap(method: str) -> None:
    x = _image((3, 6, 5))
    both(lambda j, jnp, a: j.jit(lambda b: j.image.resize(b, (3, 9, 4), method))(a), x)
    both(lambda j, jnp, a: j.vmap(lambda b: j.image.resize(b, (11, 3), method))(a), x)
    both(lambda j, jnp, a: j.vmap(lambda b: j.image.resize(b, (3, 8), method), in_axes=1, out_axes=2)(a), x)


def test_vmap_over_scale_and_translation() -> None:
    scales = np.array([[0.5], [1.0], [2.5]], F32)
    shifts = np.array([[0.0], [0.7], [-1.0]], F32)

    def program(j: Any, jnp: Any, x: Any, s: Any, t: Any) -> Any:
        warp = lambda s1, t1: j.image.scale_and_translate(x, (9,), (0,), s1, t1, "cubic")  # noqa: E731
        return j.vmap(warp)(s, t), j.vmap(j.grad(lambda s1, t1: jnp.sum(warp(s1, t1) ** 2), argnums=(0, 1)))(s, t)

    ours = mj.jit(lambda *a: program(mj, mjnp, *a))(_image((6,)), scales, shifts)
    theirs = jax.jit(lambda *a: program(jax, jjnp, *a))(_image((6,)), scales, shifts)
    same(ours[0], theirs[0])
    for o, t in zip(ours[1], theirs[1]):
        same(o, t, rtol=1e-4, atol=1e-4)


def test_align_corners_recipe() -> None:
    """The docstring's torch ``align_corners=True`` recipe gives JAX's numbers."""
    m, n = 5, 9
    s = (n - 1) / (m - 1)
    both(lambda j, jnp, x: j.image.scale_and_translate(x, (n,), (0,), jnp.array([s]), jnp.array([0.5 * (1 - s)]),
                                                        "linear"), _image((m,)))  # fmt: skip


def test_method_names() -> None:
    for name in ["nearest", "linear", "bilinear", "trilinear", "triangle", "cubic", "bicubic", "tricubic",
                 "lanczos3", "lanczos5", "cubic-pytorch", "bicubic-pytorch", "area"]:  # fmt: skip
        assert mj.image.ResizeMethod.from_string(name).name == jax.image.ResizeMethod.from_string(name).name
    assert [(m.name, m.value) for m in mj.image.ResizeMethod] == [(m.name, m.value) for m in jax.image.ResizeMethod]


@pytest.mark.parametrize(
    "program",
    [
        lambda j, jnp: j.image.resize(jnp.ones((3, 4)), (3,), "linear"),
        lambda j, jnp: j.image.resize(jnp.ones((3, 4)), (3, 4), "Linear"),
        lambda j, jnp: j.image.resize(jnp.ones((3, 4)), (3.0, 4), "linear"),
        lambda j, jnp: j.image.resize(jnp.ones((0, 4)), (3, 4), "linear"),
        lambda j, jnp: j.image.resize(jnp.ones((0, 4)), (3, 4), "nearest"),
        lambda j, jnp: j.image.resize(jnp.ones((3, 4)), (6, 8), "linear", precision="bogus"),
        lambda j, jnp: j.jit(lambda x, n: j.image.resize(x, (n,), "linear"))(jnp.ones(3), 5),
        lambda j, jnp: j.image.ResizeMethod.from_string("bicubic-opencv"),
        lambda j, jnp: j.image.scale_and_translate(
            jnp.ones((3, 4)), (6, 8), (0, 1), jnp.ones(2), jnp.zeros(2), "nearest"
        ),  # fmt: skip
        lambda j, jnp: j.image.scale_and_translate(jnp.ones((3, 4)), (6,), (0,), jnp.ones(1), jnp.zeros(1), "linear"),
        lambda j, jnp: j.image.scale_and_translate(
            jnp.ones((3, 4)), (6, 8), (0, 2), jnp.ones(2), jnp.zeros(2), "linear"
        ),  # fmt: skip
        lambda j, jnp: j.image.scale_and_translate(jnp.ones((3, 4)), (6, 8), (0, 1), [2.0, 2.0], [0.0, 0.0], "linear"),
        lambda j, jnp: j.image.scale_and_translate(
            jnp.ones((3, 4)), (6, 8), (0, 1), jnp.array(2.0), jnp.array(0.0), "linear"
        ),  # fmt: skip
    ],
)
def test_errors_have_jax_types(program: Callable[[Any, Any], Any]) -> None:
    same_error(program)


def test_nearest_jaxpr_equals_jax() -> None:
    """NEAREST computes its picks with JAX's operations in JAX's order (float32, whatever the image's dtype)."""
    for dtype in (np.float32, np.uint8):
        x = np.zeros((3, 4), dtype)
        ours = mj.make_jaxpr(lambda a: mj.image.resize(a, (7, 2), "nearest"))(x)
        theirs = jax.make_jaxpr(lambda a: jax.image.resize(a, (7, 2), "nearest"))(x)
        assert str(ours) == str(theirs)
