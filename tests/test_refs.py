"""Mutable array references: ``jax.Ref``, ``jax.new_ref``, ``jax.ref`` (issue 24).

Runs on every backend (tests/conftest.py). minijax discharges refs at trace time
(minijax/state.py): the values are checked against NumPy computations of the same
updates, the errors against JAX 0.10.2's (types and messages, as tests/test_refs_oracle.py
checks against JAX itself), and the uses minijax does not support yet must raise
NotImplementedError naming the ref, never leak a tracer or bake in a stale value.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax


def test_eager_reads_and_writes_follow_numpy_indexing() -> None:
    rng = np.random.default_rng(0)
    want = rng.standard_normal((3, 4)).astype(np.float32)
    ref = jax.new_ref(want)
    want = want.copy()
    ref[1] = ref[0]
    want[1] = want[0]
    ref[2, 3] = ref[1, 2]
    want[2, 3] = want[1, 2]
    ref[0, :3] = ref[:, 1]
    want[0, :3] = want[:, 1]
    ref[jnp.array([1, 2, 1]), jnp.array([0, 0, 1])] = ref[jnp.array([0, 0, 1]), jnp.array([1, 2, 3])]
    want[[1, 2, 1], [0, 0, 1]] = want[[0, 0, 1], [1, 2, 3]]
    ref[1:, ::2] += 2.5
    want[1:, ::2] += np.float32(2.5)
    np.testing.assert_array_equal(np.asarray(ref[...]), want)
    np.testing.assert_array_equal(np.asarray(jax.freeze(ref)), want)


def test_new_ref_copies_its_initial_value_and_keeps_its_type() -> None:
    init = jnp.zeros(3)
    ref = jax.new_ref(init)
    ref[0] = 7  # a Python int into a float32 ref takes the ref's dtype
    assert np.asarray(init).tolist() == [0.0, 0.0, 0.0]
    assert ref[...].dtype == jnp.float32 and ref.shape == (3,) and ref.ndim == 1 and len(ref) == 3
    assert str(ref.aval) == "Ref{float32[3]}"
    assert str(jax.new_ref(0.0).aval) == "Ref{float32[]}"  # no weak-type mark, as JAX prints it
    assert isinstance(ref, jax.Ref) and isinstance(ref.aval, jax.ref.AbstractRef)


def test_repr_is_the_arrays_with_ref_for_array() -> None:
    ref = jax.new_ref(jnp.arange(6.0).reshape(2, 3))
    assert repr(ref) == "Ref([[0., 1., 2.],\n       [3., 4., 5.]], dtype=float32)"
    assert str(jax.new_ref(3)) == "Ref(3, dtype=int32, weak_type=True)"


def test_writes_check_shape_and_dtype_like_jax() -> None:
    ref = jax.new_ref(jnp.zeros(3))
    with pytest.raises(ValueError, match=re.escape("Invalid shape for `swap`. Ref shape: (3,). Expected shape: (3,). Value shape: ().")):
        ref[...] = 2.0  # no broadcasting into a whole ref
    with pytest.raises(ValueError, match=re.escape("Invalid dtype for `swap`. Ref dtype: float32. Value dtype: int32.")):
        ref[0] = jnp.int32(1)
    with pytest.raises(TypeError, match="sin requires ndarray or scalar arguments"):
        jnp.sin(ref)
    with pytest.raises(TypeError):
        ref + 1  # noqa: B018 (no arithmetic on refs)


def test_the_ref_module_functions() -> None:
    ref = jax.new_ref(jnp.arange(4.0))
    old = jax.ref.swap(ref, 1, 10.0)
    jax.ref.set(ref, 2, 20.0)
    jax.ref.addupdate(ref, None, jnp.ones(4))
    assert float(old) == 1.0
    assert np.asarray(jax.ref.get(ref)).tolist() == [1.0, 11.0, 21.0, 4.0]
    assert np.asarray(jax.ref.get(ref, 3)).tolist() == 4.0
    empty = jax.empty_ref(jax.ShapeDtypeStruct((2,), jnp.int32))
    assert empty.shape == (2,) and empty.dtype == jnp.int32
    with pytest.raises(TypeError, match="swap expects a Ref"):
        jax.ref.swap(jnp.zeros(2), 0, 1.0)


def test_jit_updates_a_closed_over_ref_on_every_call() -> None:
    x_ref = jax.new_ref(jnp.zeros(3))

    @jax.jit
    def f() -> None:
        x_ref[1] += 1.0

    f()
    f()
    assert np.asarray(x_ref[...]).tolist() == [0.0, 2.0, 0.0]
    assert f._cache_size() == 0  # the refs' values go through an inner jit: f itself never caches a stale value


def test_jit_takes_refs_as_arguments_and_writes_them_back() -> None:
    @jax.jit
    def sin_inplace(x_ref: jax.Ref) -> None:
        x_ref[...] = jnp.sin(x_ref[...])

    x = np.arange(3.0, dtype=np.float32)
    ref = jax.new_ref(x)
    sin_inplace(ref)
    sin_inplace(ref)
    np.testing.assert_allclose(np.asarray(ref[...]), np.sin(np.sin(x)), rtol=1e-6)


def test_nested_jits_pass_a_ref_along() -> None:
    @jax.jit
    def inner(r: jax.Ref) -> None:
        r[...] = r[...] * 3.0

    @jax.jit
    def outer(r: jax.Ref, y: jax.Array) -> jax.Array:
        r[0] += y
        inner(r)
        return r[...].sum()

    ref = jax.new_ref(jnp.ones(2))
    total = outer(ref, jnp.float32(4.0))
    assert np.asarray(ref[...]).tolist() == [15.0, 3.0]
    assert float(total) == 18.0


def test_a_pure_function_with_internal_refs_transforms_as_usual() -> None:
    def g(x: jax.Array) -> jax.Array:
        ref = jax.new_ref(0.0)
        ref[...] = jnp.sin(x)
        ref[...] += ref[...] * x
        return ref[...]

    x = 0.7
    want = np.sin(x) * (1 + x)
    dwant = np.cos(x) * (1 + x) + np.sin(x)
    assert np.isclose(float(jax.jit(g)(x)), want, rtol=1e-6)
    assert np.isclose(float(jax.grad(g)(x)), dwant, rtol=1e-6)
    assert np.isclose(float(jax.jit(jax.grad(g))(x)), dwant, rtol=1e-6)
    xs = np.linspace(0.0, 1.0, 4, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(jax.vmap(g)(xs)), np.sin(xs) * (1 + xs), rtol=1e-6)

    def loop(n: int) -> jax.Array:
        acc = jax.new_ref(jnp.zeros(()))

        def body(i: jax.Array, c: jax.Array) -> jax.Array:
            return c + i

        acc[...] = lax.fori_loop(0, n, body, acc[...])
        return acc[...]

    assert float(jax.jit(loop, static_argnums=0)(5)) == 10.0


def test_vmap_maps_ref_arguments_and_reads_closed_over_refs() -> None:
    def dist(x: jax.Array, y: jax.Array, out_ref: jax.Ref) -> None:
        assert x.ndim == y.ndim == 1 and out_ref.ndim == 0
        out_ref[...] = jnp.sum((x - y) ** 2)

    vecs = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    out = jax.new_ref(jnp.zeros((3, 3)))
    jax.vmap(jax.vmap(dist, (0, None, 0)), (None, 0, 0))(vecs, vecs, out)
    want = ((vecs[None, :, :] - vecs[:, None, :]) ** 2).sum(-1)
    np.testing.assert_array_equal(np.asarray(out[...]), want)
    scale = jax.new_ref(2.0)
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda v: v * scale[...])(vecs[0])), vecs[0] * 2)


def test_static_integer_indices_are_bounds_checked_like_jax() -> None:
    ref = jax.new_ref(jnp.zeros((3, 2)))
    with pytest.raises(ValueError, match=re.escape("Out of bound indexer: idx=3, dim=3.")):
        ref[3]
    assert ref[-3].shape == (2,)


def test_jit_rejects_what_jax_rejects() -> None:
    x_ref = jax.new_ref(0.0)

    @jax.jit
    def returns(r: jax.Ref) -> jax.Ref:
        r[...] = 5.0
        return r

    with pytest.raises(ValueError, match=r"returned a mutable array reference of type Ref\{float32\[\]\}, but mutable array references cannot "
                       r"be returned.\n\nThe returned mutable array was passed in as the argument r."):
        returns(x_ref)
    assert float(x_ref[...]) == 0.0  # nothing written by a failed call

    @jax.jit
    def two(a: jax.Ref, b: jax.Ref) -> None:
        pass

    with pytest.raises(ValueError, match="only one reference to a mutable array may be passed as an argument to a function, "
                       r"but when tracing two at .* for jit the mutable array reference of type Ref\{float32\[\]\} appeared at both a and b"):
        two(x_ref, x_ref)

    @jax.jit
    def both(y_ref: jax.Ref) -> None:
        y_ref[...] = x_ref[...]

    with pytest.raises(ValueError, match=r"a mutable array reference of type Ref\{float32\[\]\} was both closed over and passed as the argument y_ref"):
        both(x_ref)


_acc = jax.new_ref(jnp.zeros(3))  # a module global, as the page's refs are


def _count(i: jax.Array, c: jax.Array) -> jax.Array:
    _acc[i % 3] += 1.0
    return c + 1


def test_loops_carry_the_refs_their_bodies_close_over() -> None:
    _acc[...] = jnp.zeros(3)
    assert int(lax.fori_loop(0, 7, _count, 0)) == 7  # static bounds: a scan
    assert np.asarray(_acc[...]).tolist() == [3.0, 2.0, 2.0]
    assert int(jax.jit(lambda n: lax.fori_loop(0, n, _count, 0))(jnp.int32(5))) == 5  # a while loop, under jit
    assert np.asarray(_acc[...]).tolist() == [5.0, 4.0, 3.0]
    assert int(lax.while_loop(lambda c: _acc[0] < 10, lambda c: _count(0, c), 0)) == 5
    assert np.asarray(_acc[...]).tolist() == [10.0, 4.0, 3.0]

    @jax.jit
    def f(xs: jax.Array) -> jax.Array:
        def step(c: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
            _acc[...] += x
            return c + x.sum(), _acc[0]

        return lax.scan(step, 0.0, xs)[1]

    ys = f(jnp.ones((2, 3)))
    assert np.asarray(_acc[...]).tolist() == [12.0, 6.0, 5.0]
    assert np.asarray(ys).tolist() == [11.0, 12.0]


def test_the_foreach_recipe() -> None:
    r = jax.new_ref(0)
    xs = jnp.arange(10)

    def body(x: jax.Array) -> jax.Array:
        r[...] += x
        return x * 2

    ys = lax.scan(lambda _, x: (None, body(x)), None, xs)[1]
    assert int(r[...]) == 45
    assert np.asarray(ys).tolist() == list(range(0, 20, 2))


def test_a_ref_used_under_a_transformation_it_was_not_passed_to_raises() -> None:
    x_ref = jax.new_ref(0.0)

    def closes_over(x: jax.Array) -> None:
        x_ref[...] = x

    with pytest.raises(ValueError, match=re.escape("performing a set/swap operation with vmapped value on an unbatched array "
                       "reference of type Ref{float32[]}. Move the array reference to be an argument to the vmapped function?")):
        jax.vmap(closes_over)(jnp.arange(3.0))
    holder = {"ref": x_ref}  # reached through an object: not found before tracing, so its use raises

    def through_a_dict(c: jax.Array, x: jax.Array) -> tuple[jax.Array, None]:
        holder["ref"][...] = x
        return c, None

    with pytest.raises(NotImplementedError, match="cannot write the Ref"):
        lax.scan(through_a_dict, 0.0, jnp.arange(3.0))
    assert float(x_ref[...]) == 0.0


def test_a_custom_vjp_function_with_a_ref_argument() -> None:
    @jax.custom_vjp
    def stash(grads_ref: jax.Ref, x: jax.Array) -> jax.Array:
        return x

    stash.defvjp(lambda r, x: (x, r), lambda r, g: (None, g))
    grads = jax.new_ref(0.0)
    assert float(stash(grads, jnp.float32(3.0))) == 3.0  # concrete: the function itself runs
    with pytest.raises(NotImplementedError, match="custom_vjp function stash takes a Ref"):
        jax.grad(lambda x: stash(grads, x))(1.0)


def test_unsafe_buffer_pointer_is_the_current_values() -> None:
    ref = jax.new_ref(jnp.arange(3.0))
    assert isinstance(ref.unsafe_buffer_pointer(), int) and ref.unsafe_buffer_pointer() != 0
