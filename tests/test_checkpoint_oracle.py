"""Checkpoint policies against real JAX 0.10.2 (the oracle): the same saved residuals.

Each program is written once as a function of a library triple ``(jax, jnp,
lax)`` and run with JAX's and with minijax's. ``print_saved_residuals`` of the
checkpointed program under each policy must print the same lines in both
(types, where each residual comes from, and the file:line:column and function
of the equation that made it: the programs' code is the same code object in
both runs), and the gradients must agree.

Run with the oracle environment:
    .venv-oracle/bin/python -m pytest -m oracle tests/test_checkpoint_oracle.py
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed in this environment")
pytest.importorskip("jax.ad_checkpoint")  # loads the submodule the programs use as jax.ad_checkpoint

import minijax  # noqa: E402
import minijax.ad_checkpoint  # noqa: E402
import minijax.numpy as mnp  # noqa: E402

pytestmark = pytest.mark.oracle

jax.config.update("jax_platforms", "cpu")

SIDES = {"jax": (jax, jax.numpy, jax.lax), "minijax": (minijax, mnp, minijax.lax)}


def _mlp(lib: Any) -> Callable[..., Any]:
    j, jnp, _ = lib

    def f(W1, W2, x):
        h = j.ad_checkpoint.checkpoint_name(jnp.sin(jnp.dot(W1, x)), "h")
        g = j.ad_checkpoint.checkpoint_name(jnp.tanh(h), "g")
        return jnp.sum(jnp.cos(jnp.dot(W2, g * h)))

    return f


def _batched(lib: Any) -> Callable[..., Any]:
    _, jnp, _ = lib

    def f(A, B):
        C = jnp.einsum("bij,bjk->bik", A, B)  # batch dimension b
        D = jnp.einsum("bik,kl->bil", jnp.sin(C), B[0])  # no batch dimension
        return jnp.sum(jnp.cos(D))

    return f


def _conv(lib: Any) -> Callable[..., Any]:
    _, jnp, lax = lib

    def f(x, k):
        y = lax.conv_general_dilated(x, k, (1, 1), "SAME")
        return jnp.sum(jnp.sin(y) * y)

    return f


def _nested(lib: Any) -> Callable[..., Any]:
    j, jnp, _ = lib

    def f(x):
        y = j.checkpoint(lambda v: jnp.sin(jnp.sin(v)))(x)
        return jnp.sum(jnp.cos(j.checkpoint(lambda v: jnp.exp(v) * v)(y)))

    return f


def _with_jit(lib: Any) -> Callable[..., Any]:
    j, jnp, _ = lib

    def f(x):
        inner = j.jit(lambda v: jnp.sin(v) * v)
        return jnp.sum(jnp.cos(inner(x)))

    return f


rng = np.random.default_rng(0)
PROGRAMS = {
    "mlp": (_mlp, (rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(2, 3)).astype(np.float32),
                   rng.normal(size=4).astype(np.float32))),
    "batched": (_batched, (rng.normal(size=(2, 3, 3)).astype(np.float32), rng.normal(size=(2, 3, 3)).astype(np.float32))),
    "conv": (_conv, (rng.normal(size=(1, 2, 5, 5)).astype(np.float32), rng.normal(size=(3, 2, 3, 3)).astype(np.float32))),
    "nested": (_nested, (rng.normal(size=3).astype(np.float32),)),
    "with_jit": (_with_jit, (rng.normal(size=3).astype(np.float32),)),
}


def _policy(lib: Any, name: str) -> Any:
    p = lib[0].checkpoint_policies
    return {
        "plain": "plain",
        "none": None,
        "everything_saveable": p.everything_saveable,
        "nothing_saveable": p.nothing_saveable,
        "dots_saveable": p.dots_saveable,
        "checkpoint_dots": p.checkpoint_dots,
        "dots_with_no_batch_dims_saveable": p.dots_with_no_batch_dims_saveable,
        "checkpoint_dots_with_no_batch_dims": p.checkpoint_dots_with_no_batch_dims,
        "save_anything_except_these_names": p.save_anything_except_these_names("h"),
        "save_any_names_but_these": p.save_any_names_but_these("h"),
        "save_only_these_names": p.save_only_these_names("g"),
        "save_from_both_policies": p.save_from_both_policies(p.dots_saveable, p.save_only_these_names("h")),
        "offload_dot_with_no_batch_dims": p.offload_dot_with_no_batch_dims("device", "pinned_host"),
        "save_and_offload_only_these_names": p.save_and_offload_only_these_names(
            names_which_can_be_saved=["h"], names_which_can_be_offloaded=["g"], offload_src="device",
            offload_dst="pinned_host"),
    }[name]


POLICY_NAMES = ["plain", "none", "everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots",
                "dots_with_no_batch_dims_saveable", "checkpoint_dots_with_no_batch_dims",
                "save_anything_except_these_names", "save_any_names_but_these", "save_only_these_names",
                "save_from_both_policies", "offload_dot_with_no_batch_dims", "save_and_offload_only_these_names"]


def _run(side: str, program: str, policy: str) -> tuple[str, list[np.ndarray]]:
    lib = SIDES[side]
    make, args = PROGRAMS[program]
    f = make(lib)
    if policy != "plain":
        f = lib[0].checkpoint(f, policy=_policy(lib, policy))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        lib[0].ad_checkpoint.print_saved_residuals(f, *args)
    grads = lib[0].grad(f, argnums=tuple(range(len(args))))(*args)
    return out.getvalue(), [np.asarray(g) for g in grads]


@pytest.mark.parametrize("policy", POLICY_NAMES)
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_saved_residuals_and_grads_equal_jax(program: str, policy: str) -> None:
    want_text, want_grads = _run("jax", program, policy)
    got_text, got_grads = _run("minijax", program, policy)
    if "offload" in policy:
        # JAX offloads to host memory even on the CPU: a device_put to a `<host>` aval, printed
        # "f32<host>[3] output of device_put from ". minijax's avals have no memory space, so it
        # saves the value in place (docs/differences.md): the same residuals, differently labelled.
        want_lines, got_lines = want_text.splitlines(), got_text.splitlines()
        assert sorted(w.split()[0].replace("<host>", "") for w in want_lines) == sorted(g.split()[0] for g in got_lines)
        kept = [w for w in want_lines if "output of device_put" not in w]
        assert [g for g in got_lines if g in kept] == kept
    else:
        assert got_text == want_text
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("policy", ["dots_saveable", "dots_with_no_batch_dims_saveable", "save_only_these_names",
                                    "save_any_names_but_these", "none"])
def test_the_jaxpr_of_a_checkpoint_prints_its_policy_as_jax_does(policy: str) -> None:
    def text(side: str) -> str:
        lib = SIDES[side]
        f = lib[0].checkpoint(lambda x: lib[1].sin(x), policy=_policy(lib, policy))
        return str(lib[0].make_jaxpr(lib[0].vmap(f))(np.ones(3, np.float32)))

    assert text("minijax") == text("jax")


def _chain(lib: Any, recursive: bool) -> Callable[..., Any]:
    j, jnp, _ = lib

    def compose(funs: list[Callable[..., Any]]) -> Callable[..., Any]:
        if not recursive or len(funs) == 1:
            def f(x: Any) -> Any:
                for fun in funs:
                    x = fun(x)
                return x
            return f
        if len(funs) == 2:
            return lambda x: funs[0](funs[1](x))
        f1, f2 = compose(funs[: len(funs) // 2]), compose(funs[len(funs) // 2 :])
        return lambda x: f1(j.checkpoint(f2)(x))

    return compose([jnp.sin] * 8)


def _forward_and_backward(side: str, program: str, policy: str) -> tuple[str, str]:
    """The jaxprs the page's print_fwd_bwd draws: vjp's forward pass, and its pullback on the residuals."""
    lib = SIDES[side]
    j = lib[0]
    if program in ("chain", "recursive"):
        f, args = _chain(lib, program == "recursive"), (np.float32(3.0),)
    else:
        make, args = PROGRAMS[program]
        f = make(lib)
    if policy != "plain":
        f = j.checkpoint(f, policy=_policy(lib, policy))
    fwd = j.make_jaxpr(lambda *a: j.vjp(f, *a))(*args).jaxpr
    y, f_vjp = j.vjp(f, *args)
    res, tree = j.tree_util.tree_flatten(f_vjp)

    def pullback(*a: Any) -> Any:
        return j.tree_util.tree_unflatten(tree, a[:-1])(a[-1])

    bwd = j.make_jaxpr(pullback)(*res, y).jaxpr
    return str(fwd), str(bwd)


# Checkpointed programs only: without checkpoint, minijax's vjp orders the computed residuals by their
# first use on the backward pass (JAX: by creation) and inlines scalar residuals of an eager vjp as
# literals (docs/autodiff.md), so the page's print_fwd_bwd tables of the plain chain differ; and in
# the recursive chain minijax's nested forward remat2 also returns the input it forwards.
@pytest.mark.parametrize(("program", "policy"), [
    ("mlp", "dots_with_no_batch_dims_saveable"), ("mlp", "save_only_these_names"), ("mlp", "none"),
    ("batched", "dots_saveable"), ("conv", "dots_saveable")])
def test_the_forward_and_backward_jaxprs_equal_jax(program: str, policy: str) -> None:
    assert _forward_and_backward("minijax", program, policy) == _forward_and_backward("jax", program, policy)
