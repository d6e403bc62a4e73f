"""The autodiff API: jvp, linearize, vjp, grad, value_and_grad, custom rules, checkpoint.

Per-primitive rules are tested by family (tests/test_ad_<family>.py) and by
the registry-wide laws (tests/test_ad_laws.py); this file tests the
transformations themselves and their composition.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import dtypes, lax


def f_sin_x(x):
    return jnp.sin(x) * x


def df_sin_x(x):
    return math.cos(x) * x + math.sin(x)


# --- jvp / linearize / vjp / grad ----------------------------------------------


def test_jvp_of_a_scalar_function():
    y, t = jax.jvp(f_sin_x, (1.0,), (2.0,))
    assert np.isclose(y, math.sin(1.0))
    assert np.isclose(t, 2.0 * df_sin_x(1.0), rtol=1e-6)


def test_jvp_pytrees_in_and_out():
    def f(d):
        return {"s": d["a"] * d["b"], "t": (d["a"] + d["b"],)}

    primals = ({"a": 2.0, "b": 3.0},)
    tangents = ({"a": 1.0, "b": 0.0},)
    out, tan = jax.jvp(f, primals, tangents)
    assert float(out["s"]) == 6.0 and float(tan["s"]) == 3.0
    assert float(tan["t"][0]) == 1.0


def test_linearize_evaluates_once_and_is_linear():
    y, f_jvp = jax.linearize(f_sin_x, 1.5)
    assert np.isclose(y, math.sin(1.5) * 1.5)
    assert np.isclose(f_jvp(1.0), df_sin_x(1.5), rtol=1e-6)
    assert np.isclose(f_jvp(3.0), 3.0 * df_sin_x(1.5), rtol=1e-6)


def test_vjp_matches_jvp_transposition_law():
    x = np.array([0.3, -1.2, 2.0], np.float32)
    u = np.array([1.0, 2.0, -1.0], np.float32)
    v = np.array([0.5, 0.25, 4.0], np.float32)
    _, pullback = jax.vjp(lambda x: jnp.sin(x) * x, x)
    _, tangent = jax.jvp(lambda x: jnp.sin(x) * x, (x,), (v,))
    (ct,) = pullback(u)
    assert np.isclose(np.vdot(ct, v), np.vdot(u, tangent), rtol=1e-5)


def test_grad_value_and_argnums():
    def f(x, y):
        return x * jnp.sin(y)

    assert np.isclose(jax.grad(f)(2.0, 1.0), math.sin(1.0))
    assert np.isclose(jax.grad(f, argnums=1)(2.0, 1.0), 2.0 * math.cos(1.0))
    gx, gy = jax.grad(f, argnums=(0, 1))(2.0, 1.0)
    assert np.isclose(gx, math.sin(1.0)) and np.isclose(gy, 2.0 * math.cos(1.0))
    value, g = jax.value_and_grad(f)(2.0, 1.0)
    assert np.isclose(value, 2.0 * math.sin(1.0)) and np.isclose(g, math.sin(1.0))


def test_grad_has_aux():
    g, aux = jax.grad(lambda x: (x * x, {"half": x / 2}), has_aux=True)(3.0)
    assert float(g) == 6.0 and float(aux["half"]) == 1.5
    (v, aux2), g2 = jax.value_and_grad(lambda x: (x * x, x + 1), has_aux=True)(3.0)
    assert float(v) == 9.0 and float(aux2) == 4.0 and float(g2) == 6.0


def test_grad_of_pytree_argument():
    params = {"w": np.array([1.0, 2.0], np.float32), "b": np.float32(0.5)}
    g = jax.grad(lambda p: jnp.sum(p["w"] * p["w"]) + p["b"])(params)
    np.testing.assert_allclose(g["w"], [2.0, 4.0])
    assert float(g["b"]) == 1.0


def test_higher_order_and_jit_composition():
    # d^3/dx^3 sin(x) = -cos(x), through nested jit and grad.
    third = jax.grad(jax.jit(jax.grad(jax.jit(jax.grad(jnp.sin)))))
    assert np.isclose(third(1.0), -math.cos(1.0), rtol=1e-6)
    assert np.isclose(jax.grad(jax.grad(f_sin_x))(0.7), -math.sin(0.7) * 0.7 + 2 * math.cos(0.7), rtol=1e-5)


def test_grad_of_jit_equals_grad():
    x = 0.9
    assert np.isclose(jax.grad(jax.jit(f_sin_x))(x), jax.grad(f_sin_x)(x), rtol=1e-6)
    assert np.isclose(jax.jit(jax.grad(f_sin_x))(x), jax.grad(f_sin_x)(x), rtol=1e-6)


def test_jit_closing_over_a_differentiated_value():
    def f(y):
        return jax.jit(lambda x: x * y)(2.0)

    assert float(jax.grad(f)(3.0)) == 2.0


def test_python_control_flow_on_concrete_values_works_under_grad():
    # The FAQ's example: branching on a value is fine under grad, not under jit.
    def divide(x, y):
        if y >= 1.0:
            return x / y
        return x

    assert np.isclose(jax.grad(divide)(3.0, 2.0), 0.5)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(divide)(3.0, 2.0)


def test_unsafe_where_gives_nan_and_safe_where_gives_zero():
    def unsafe(x):
        return jnp.where(x > 0.0, jnp.sqrt(x), 0.0)

    def safe(x):
        safe_x = jnp.where(x > 0.0, x, 1.0)
        return jnp.where(x > 0.0, jnp.sqrt(safe_x), 0.0)

    # JAX gives nan: the untaken branch's derivative (inf) times a zero cotangent.
    assert np.isnan(jax.grad(unsafe)(0.0))
    assert float(jax.grad(safe)(0.0)) == 0.0
    assert np.isclose(jax.grad(safe)(4.0), 0.25)


def test_step_functions_have_zero_gradient():
    assert float(jax.grad(lambda x: jnp.floor(x) + jnp.round(x))(1.3)) == 0.0
    assert float(jax.grad(lambda x: (x > 0).astype(jnp.float32))(1.0)) == 0.0


def test_stop_gradient():
    assert float(jax.grad(lambda x: lax.stop_gradient(x) * x)(3.0)) == 3.0
    assert float(jax.grad(lambda x: lax.stop_gradient(x * x))(3.0)) == 0.0


# --- symbolic zeros and float0 ---------------------------------------------------


def test_integer_inputs_get_float0_gradients_with_allow_int():
    g = jax.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert float(g[0]) == 3.0
    assert g[1].dtype == dtypes.float0 and g[1].shape == ()


def test_jvp_with_integer_primal_needs_float0_tangent():
    with pytest.raises(TypeError, match="float0"):
        jax.jvp(lambda n: n * 2, (1,), (1,))
    y, t = jax.jvp(lambda n: n * 2, (3,), (np.zeros((), dtypes.float0),))
    assert int(y) == 6 and t.dtype == dtypes.float0


def test_unused_input_gets_a_zero_gradient():
    g = jax.grad(lambda x, y: x * 2.0, argnums=1)(1.0, 5.0)
    assert float(g) == 0.0


# --- errors ---------------------------------------------------------------------


def test_grad_of_non_scalar_output_raises():
    with pytest.raises(TypeError, match=r"Gradient only defined for scalar-output functions. Output had shape: \(3,\)"):
        jax.grad(jnp.sin)(np.ones(3, np.float32))


def test_grad_of_integer_input_raises():
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        jax.grad(lambda x: x * 1.0)(1)


def test_grad_of_integer_output_raises():
    with pytest.raises(TypeError, match="grad requires real-valued outputs"):
        jax.grad(lambda x: x, allow_int=True)(1)


def test_argnums_out_of_range_raises():
    with pytest.raises(TypeError, match="requires at least 3 positional arguments"):
        jax.grad(lambda x, y: x * y, argnums=2)(1.0, 2.0)


def test_has_aux_with_a_non_pair_output_raises():
    with pytest.raises(TypeError, match="expected function with aux output to return a two-element tuple"):
        jax.grad(lambda x: x, has_aux=True)(1.0)


def test_holomorphic_needs_complex_inputs():
    # tests/test_complex.py has the rest of holomorphic differentiation.
    with pytest.raises(TypeError, match=r"grad with holomorphic=True requires inputs with complex dtype, but got float32"):
        jax.grad(lambda x: x, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="jacfwd with holomorphic=True requires inputs with complex dtype"):
        jax.jacfwd(lambda x: x, holomorphic=True)(1.0)
    assert complex(jax.grad(lambda z: z * z, holomorphic=True)(1.0 + 1j)) == 2 + 2j


def test_jvp_argument_errors():
    with pytest.raises(TypeError, match="must be tuples or lists"):
        jax.jvp(jnp.sin, 1.0, 1.0)
    with pytest.raises(TypeError, match="same tree structure"):
        jax.jvp(jnp.sin, (1.0,), (1.0, 2.0))
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        jax.jvp(jnp.sin, (1.0,), (np.ones(2, np.float32),))


def test_vjp_cotangent_errors():
    _, pullback = jax.vjp(jnp.sin, 1.0)
    with pytest.raises(ValueError, match="unexpected JAX type"):
        pullback(np.ones(2, np.float32))
    with pytest.raises(ValueError, match="unexpected tree structure"):
        pullback((1.0,))


# --- custom_jvp / custom_vjp -----------------------------------------------------


@jax.custom_jvp
def twice_tangent_sin(x):
    return jnp.sin(x)


@twice_tangent_sin.defjvp
def _twice_tangent_sin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return twice_tangent_sin(x), 2.0 * t


def test_custom_jvp_rule_is_used_by_jvp_grad_and_jit():
    assert np.isclose(twice_tangent_sin(1.0), math.sin(1.0))
    assert float(jax.jvp(twice_tangent_sin, (1.0,), (1.0,))[1]) == 2.0
    assert float(jax.grad(twice_tangent_sin)(1.0)) == 2.0
    assert float(jax.jit(jax.grad(twice_tangent_sin))(1.0)) == 2.0
    assert float(jax.grad(jax.jit(twice_tangent_sin))(1.0)) == 2.0


def test_custom_jvp_defjvps_and_nondiff_argnums():
    @jax.custom_jvp
    def scaled(x, y):
        return x * y

    scaled.defjvps(lambda t, ans, x, y: 10.0 * t, lambda t, ans, x, y: 100.0 * t)
    assert float(jax.grad(scaled, argnums=0)(1.0, 2.0)) == 10.0
    assert float(jax.grad(scaled, argnums=1)(1.0, 2.0)) == 100.0

    from functools import partial

    @partial(jax.custom_jvp, nondiff_argnums=(0,))
    def apply(n, x):
        return x**n

    @apply.defjvp
    def _apply_jvp(n, primals, tangents):
        (x,), (t,) = primals, tangents
        return apply(n, x), 7.0 * t

    assert float(jax.grad(apply, argnums=1)(3, 2.0)) == 7.0


def test_custom_jvp_wrong_rule_output_raises():
    @jax.custom_jvp
    def f(x):
        return x

    f.defjvp(lambda p, t: (p[0], (t[0], t[0])))
    with pytest.raises(TypeError, match="equal container"):
        jax.jvp(f, (1.0,), (1.0,))


@jax.custom_vjp
def clip_gradient(x):
    return x


def _clip_fwd(x):
    return x, None


def _clip_bwd(_, g):
    return (jnp.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def test_custom_vjp_rule_is_used_by_grad_and_jit():
    assert float(jax.grad(lambda x: 5.0 * clip_gradient(x))(2.0)) == 1.0
    assert float(jax.jit(jax.grad(lambda x: 5.0 * clip_gradient(x)))(2.0)) == 1.0
    assert float(jax.grad(jax.jit(lambda x: -5.0 * clip_gradient(x)))(2.0)) == -1.0


def test_custom_vjp_under_forward_mode_raises():
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jax.jvp(clip_gradient, (1.0,), (1.0,))


def test_custom_vjp_bwd_with_wrong_structure_raises():
    @jax.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (g,))
    with pytest.raises(TypeError, match="bwd rule must produce a tuple of length equal to the number of primal inputs"):
        jax.grad(f)(1.0, 2.0)


# --- checkpoint -----------------------------------------------------------------


def test_checkpoint_gives_the_same_gradient_and_shows_remat_in_the_jaxpr():
    g = jax.grad(jax.checkpoint(f_sin_x))(0.8)
    assert np.isclose(g, df_sin_x(0.8), rtol=1e-6)
    text = str(jax.make_jaxpr(jax.grad(jax.checkpoint(f_sin_x)))(0.8))
    assert "remat2[" in text and "differentiated=True" in text
    # Recomputation: sin appears both in the forward part and inside the remat.
    assert text.count("sin ") == 2


def _mlp(W1, W2, x):
    h = jax.ad_checkpoint.checkpoint_name(jnp.sin(jnp.dot(W1, x)), "h")
    return jnp.sum(jnp.cos(jnp.dot(W2, h)))


_POLICIES = {
    "none": None,
    "everything": jax.checkpoint_policies.everything_saveable,
    "nothing": jax.checkpoint_policies.nothing_saveable,
    "dots": jax.checkpoint_policies.dots_saveable,
    "dots_no_batch": jax.checkpoint_policies.dots_with_no_batch_dims_saveable,
    "except_names": jax.checkpoint_policies.save_anything_except_these_names("h"),
    "names_but": jax.checkpoint_policies.save_any_names_but_these("g"),
    "only_names": jax.checkpoint_policies.save_only_these_names("h"),
    "both": jax.checkpoint_policies.save_from_both_policies(
        jax.checkpoint_policies.dots_saveable, jax.checkpoint_policies.save_only_these_names("h")),
    "offload_dots": jax.checkpoint_policies.offload_dot_with_no_batch_dims("device", "pinned_host"),
    "offload_names": jax.checkpoint_policies.save_and_offload_only_these_names(
        names_which_can_be_saved=[], names_which_can_be_offloaded=["h"], offload_src="device",
        offload_dst="pinned_host"),
}
_MLP_ARGS = (np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), np.linspace(0.5, -0.5, 6, dtype=np.float32).reshape(2, 3),
             np.linspace(0, 1, 4, dtype=np.float32))


@pytest.mark.parametrize("policy", sorted(_POLICIES))
def test_checkpoint_grads_under_every_policy_equal_the_plain_grads(policy):
    want = jax.grad(_mlp, argnums=(0, 1, 2))(*_MLP_ARGS)
    f = jax.checkpoint(_mlp, policy=_POLICIES[policy])
    for got in (jax.grad(f, argnums=(0, 1, 2))(*_MLP_ARGS), jax.jit(jax.grad(f, argnums=(0, 1, 2)))(*_MLP_ARGS)):
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
    batched = jax.vmap(jax.grad(f, argnums=2), in_axes=(None, None, 0))(*_MLP_ARGS[:2], np.stack([_MLP_ARGS[2]] * 3))
    np.testing.assert_allclose(np.asarray(batched[1]), np.asarray(want[2]), rtol=1e-5, atol=1e-6)


def _saved(f, *args):
    """The saved residuals: their source without its file position, and their shape."""
    return [where.split(" from <")[0].split(" from /")[0] + " " + str(aval.shape)
            for aval, where in jax.ad_checkpoint.saved_residuals(f, *args)]


def test_checkpoint_policies_decide_the_saved_residuals():
    args = ["from the argument W1 (3, 4)", "from the argument W2 (2, 3)", "from the argument x (4,)"]
    plain = _saved(_mlp, *_MLP_ARGS)
    assert "output of sin (3,)" not in plain and "named 'h' (3,)" in plain and "output of sin (2,)" in plain
    assert _saved(jax.checkpoint(_mlp), *_MLP_ARGS) == args
    assert _saved(jax.checkpoint(_mlp, policy=jax.checkpoint_policies.nothing_saveable), *_MLP_ARGS) == args
    assert _saved(jax.checkpoint(_mlp, policy=jax.checkpoint_policies.everything_saveable), *_MLP_ARGS) == plain
    dots = _saved(jax.checkpoint(_mlp, policy=jax.checkpoint_policies.dots_saveable), *_MLP_ARGS)
    assert dots == args + ["output of dot_general (3,)", "output of dot_general (2,)"]
    names = _saved(jax.checkpoint(_mlp, policy=jax.checkpoint_policies.save_only_these_names("h")), *_MLP_ARGS)
    assert names == args + ["named 'h' (3,)"]
    assert _saved(jax.checkpoint(_mlp, policy=_POLICIES["offload_names"]), *_MLP_ARGS) == names
    assert _saved(jax.checkpoint(_mlp, policy=_POLICIES["both"]), *_MLP_ARGS) == (
        args + ["output of dot_general (3,)", "named 'h' (3,)", "output of dot_general (2,)"])


def test_checkpoint_name_is_the_identity_under_jit_vmap_grad():
    name = jax.ad_checkpoint.checkpoint_name
    x = np.float32([1.0, 2.0, 3.0])
    assert "name[name=h]" in str(jax.make_jaxpr(lambda v: name(v * 2, "h"))(x))
    np.testing.assert_allclose(np.asarray(jax.jit(lambda v: name(v * 2, "h"))(x)), x * 2)
    np.testing.assert_allclose(np.asarray(jax.vmap(lambda v: name(jnp.sin(v), "h"))(x)), np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.grad(lambda v: jnp.sum(name(jnp.sin(v), "h")))(x)), np.cos(x), rtol=1e-6)
    tree = name({"a": x, "b": (x, x)}, "t")
    assert jax.tree_util.tree_structure(tree) == jax.tree_util.tree_structure({"a": x, "b": (x, x)})


def test_vjp_pullback_is_a_pytree_of_its_residuals():
    y, pullback = jax.vjp(lambda v: jnp.sin(jnp.sin(v)), np.float32([0.5, 1.0]))
    leaves, tree = jax.tree_util.tree_flatten(pullback)
    assert len(leaves) == 2 and type(pullback).__name__ == "VJP"  # JAX 0.10.2's class
    again = jax.tree_util.tree_unflatten(tree, leaves)
    np.testing.assert_allclose(np.asarray(again(np.float32([1.0, 1.0]))[0]), np.asarray(pullback(np.float32([1.0, 1.0]))[0]))


def test_vjp_pullback_lists_the_input_residuals_first():
    W, x = np.ones((3, 4), np.float32), np.ones(4, np.float32)
    _, pullback = jax.vjp(lambda W, x: jnp.sin(jnp.dot(W, x)), W, x)
    assert [leaf.shape for leaf in jax.tree_util.tree_leaves(pullback)] == [(3, 4), (4,), (3,)]


def test_a_custom_policy_answers_with_bools_or_saveable_recompute_offloadable():
    from minijax.ad_checkpoint import Offloadable, Recompute, Saveable

    def sin_only(prim, *avals, **params):
        return Saveable if prim.name == "sin" else Recompute

    saved = _saved(jax.checkpoint(_mlp, policy=sin_only), *_MLP_ARGS)
    assert [s for s in saved if "output" in s] == ["output of sin (3,)", "output of sin (2,)"]  # as JAX
    offloaded = _saved(jax.checkpoint(_mlp, policy=lambda prim, *a, **k: Offloadable("device", "pinned_host")
                                      if prim.name == "sin" else False), *_MLP_ARGS)
    assert offloaded == saved
    with pytest.raises(TypeError, match="Did you return `Offloadable` instead of an instantiated"):
        jax.grad(jax.checkpoint(_mlp, policy=lambda *a, **k: Offloadable))(*_MLP_ARGS)
    with pytest.raises(TypeError, match="Value returned by a remat policy should be a bool"):
        jax.grad(jax.checkpoint(_mlp, policy=lambda *a, **k: "yes"))(*_MLP_ARGS)


def test_save_and_offload_names_must_not_intersect():
    with pytest.raises(ValueError, match="should not intersect"):
        jax.checkpoint_policies.save_and_offload_only_these_names(
            names_which_can_be_saved=["a"], names_which_can_be_offloaded=["a"], offload_src="device",
            offload_dst="pinned_host")


def test_custom_vjp_nondiff_argnums():
    from functools import partial

    @partial(jax.custom_vjp, nondiff_argnums=(0,))
    def scale(k, x):
        return k * x

    scale.defvjp(lambda k, x: (k * x, None), lambda k, _, g: (100.0 * k * g,))
    assert float(jax.grad(scale, argnums=1)(2.0, 3.0)) == 200.0


def test_custom_rules_under_vmap_and_jit():
    xs = np.array([0.5, 1.0, 2.0], np.float32)
    np.testing.assert_allclose(jax.vmap(twice_tangent_sin)(xs), np.sin(xs), rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(jax.grad(twice_tangent_sin))(xs), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(jax.grad(lambda v: jnp.sum(jax.vmap(twice_tangent_sin)(v)))(xs), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(jax.jit(jax.vmap(jax.grad(lambda x: 5.0 * clip_gradient(x))))(xs), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(jax.grad(lambda v: jnp.sum(jax.vmap(lambda x: -5.0 * clip_gradient(x))(v)))(xs), [-1.0, -1.0, -1.0])


def test_nested_custom_jvp_inside_grad_of_grad():
    # d/dx of the custom tangent 2*t is 0: the rule's output is linear in t.
    assert float(jax.grad(jax.grad(twice_tangent_sin))(1.0)) == 0.0


def test_a_custom_jvp_function_applied_to_a_tangent_is_inlined_when_linearizing():
    # A jvp rule that calls another custom_jvp function on the tangent: under
    # grad that call is part of the linear function and is transposed through
    # its body (JAX inlines it the same way; the jaxpr text is JAX's).
    @jax.custom_jvp
    def double(x):
        return 2.0 * x

    double.defjvp(lambda p, t: (double(p[0]), double(t[0])))

    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(p, t):
        (x,), (tx,) = p, t
        return jnp.sin(x), double(tx) * jnp.cos(x) / 2.0

    np.testing.assert_allclose(np.asarray(jax.grad(f)(1.0)), np.cos(1.0), rtol=1e-6)
    text = str(jax.make_jaxpr(jax.grad(f))(1.0))
    assert "custom_jvp_call" not in text and text.count("mul") == 2
