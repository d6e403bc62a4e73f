"""jax.experimental.checkify on minijax: checks, the automatic checks, and their composition with transformations.

Messages are JAX 0.10.2's (tests/test_checkify_oracle.py compares them with
real JAX); here each behaviour is pinned on both backends.
"""

from __future__ import annotations

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.experimental import checkify

FUNCTIONALIZATION = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This probably means you tried to "
    "stage (jit/scan/pmap/...) a `check` without functionalizing it through `checkify.checkify`."
)


def indexed(x, i):
    checkify.check(i >= 0, "index needs to be non-negative, got {i}", i=i)
    return jnp.sin(x[i])


ALL = checkify.all_checks


# --- check and the error value -------------------------------------------------------------------------


def test_a_failed_check_reports_its_formatted_message():
    err, out = checkify.checkify(indexed)(jnp.ones(5), jnp.int32(-2))
    assert err.get() == "index needs to be non-negative, got -2 (`check` failed)"
    assert str(err) == "Error(index needs to be non-negative, got -2 (`check` failed))"
    np.testing.assert_allclose(out, np.sin(1.0), rtol=1e-6)


def test_a_passing_check_reports_nothing_and_throw_does_nothing():
    err, _ = checkify.checkify(indexed)(jnp.ones(5), jnp.int32(2))
    assert err.get() is None and err.get_exception() is None
    assert str(err) == "Error(None)"
    err.throw()  # no error: nothing raised
    assert checkify.init_error.get() is None


def test_throw_raises_jax_runtime_error_caused_by_the_check():
    err, _ = checkify.checkify(indexed)(jnp.ones(5), jnp.int32(-1))
    with pytest.raises(checkify.JaxRuntimeError, match=r"got -1 \(`check` failed\)") as info:
        err.throw()
    assert isinstance(info.value, ValueError)
    assert type(info.value.__cause__).__name__ == "FailedCheckError"
    assert type(err.get_exception()).__name__ == "FailedCheckError"


def test_format_args_positional_keyword_and_format_specs():
    def f(x):
        checkify.check(x > 0, "{} and {y:.2f} must be positive! {z}", x, y=x, z=jnp.arange(3))
        return x

    err, _ = checkify.checkify(f)(jnp.float32(-1.5))
    assert err.get() == "-1.5 and -1.50 must be positive! [0 1 2] (`check` failed)"


def test_check_rejects_a_non_scalar_or_non_bool_predicate_and_non_array_format_args():
    with pytest.raises(TypeError, match=r"^check takes a scalar pred as argument, got \[ True False\]$"):
        checkify.check(jnp.array([True, False]), "m")
    with pytest.raises(TypeError, match="^debug_check takes a scalar pred as argument, got True$"):
        checkify.debug_check(np.bool_(True), "m")
    with pytest.raises(TypeError, match="need to be PyTrees of arrays, but got 100 of type <class 'int'>"):
        checkify.checkify(indexed)(jnp.ones(5), 100)
    with pytest.raises(TypeError, match="^check_error takes an Error as argument, got type <class 'int'> instead.$"):
        checkify.check_error(3)


def test_an_eager_check_raises_at_once():
    checkify.check(jnp.array(True), "fine")
    checkify.check(True, "fine")
    with pytest.raises(checkify.JaxRuntimeError, match=r"^x is 1.0 \(`check` failed\)$"):
        checkify.check(jnp.array(1.0) > 2, "x is {a}", a=jnp.array(1.0))
    with pytest.raises(checkify.JaxRuntimeError, match="^plain False"):
        checkify.check(False, "plain False")


@pytest.mark.parametrize(
    "stage",
    [
        lambda f: jax.jit(f)(jnp.ones(5), -1),
        lambda f: lax.scan(lambda c, i: (c, f(jnp.ones(5), i)), 0.0, jnp.arange(3)),
        lambda f: lax.cond(True, lambda i: f(jnp.ones(5), i), lambda i: 0.0, -1),
    ],
    ids=["jit", "scan", "cond"],
)
def test_a_staged_check_that_checkify_did_not_discharge_cannot_compile(stage):
    with pytest.raises(ValueError) as info:
        stage(indexed)
    assert str(info.value) == FUNCTIONALIZATION
    assert not isinstance(info.value, checkify.JaxRuntimeError)


def test_a_staged_check_prints_in_jaxprs_without_its_tree():
    text = str(jax.make_jaxpr(indexed)(jnp.ones(5), 1))
    assert "check[debug=False]" in text and "err_tree" not in text


def test_debug_check_does_nothing_unless_checkified():
    def f(x):
        checkify.debug_check(x > 0, "dbg {}", x)
        return x * 2

    assert float(f(jnp.float32(-1.0))) == -2.0
    assert float(jax.jit(f)(jnp.float32(-1.0))) == -2.0
    err, out = checkify.checkify(f)(jnp.float32(-1.0))
    assert err.get() == "dbg -1.0 (`check` failed)" and float(out) == -2.0


def test_check_error_reraises_and_is_discharged_by_an_outer_checkify():
    def f(x):
        checkify.check(x > 0, "must be positive!")
        return x

    def with_inner_jit(x):
        error, out = jax.jit(checkify.checkify(f))(x)
        checkify.check_error(error)
        return out

    assert int(with_inner_jit(1)) == 1
    with pytest.raises(checkify.JaxRuntimeError, match=r"^must be positive! \(`check` failed\)$"):
        with_inner_jit(-1)
    err, _ = checkify.checkify(with_inner_jit)(-1)
    assert err.get() == "must be positive! (`check` failed)"


# --- the automatic checks ---------------------------------------------------------------------------------------


def test_the_sets_of_checks_and_their_arithmetic():
    names = lambda s: sorted(c.__name__ for c in s)  # noqa: E731
    assert names(checkify.user_checks) == ["FailedCheckError"]
    assert names(checkify.nan_checks) == ["NaNError"]
    assert names(checkify.index_checks) == ["OOBError"]
    assert names(checkify.div_checks) == ["DivisionByZeroError"]
    assert checkify.float_checks == checkify.nan_checks | checkify.div_checks
    assert checkify.automatic_checks == checkify.float_checks | checkify.index_checks
    assert checkify.all_checks == checkify.automatic_checks | checkify.user_checks
    assert checkify.all_checks - checkify.user_checks == checkify.automatic_checks


@pytest.mark.parametrize(
    ("fun", "args", "errors", "message"),
    [
        (lambda x: jnp.sin(x), (jnp.inf,), checkify.nan_checks, "nan generated by primitive: sin."),
        (lambda x, y: x / y, (jnp.float32(1.0), jnp.float32(0.0)), checkify.div_checks, "division by zero"),
        (lambda x, y: x / y, (jnp.arange(3), jnp.arange(3)), checkify.div_checks, "division by zero"),
        (lambda x, y: x / y, (jnp.float32(0.0), jnp.float32(0.0)), checkify.nan_checks, "nan generated by primitive: div."),
        (lambda x, i: x[i], (jnp.ones(5), 100), checkify.index_checks,
         "out-of-bounds indexing for array of shape (5,): index 100 is out of bounds for axis 0 with size 5. "),
        (lambda x, i: x.at[i].add(1.0), (jnp.zeros(3), 5), checkify.index_checks,
         "out-of-bounds indexing for array of shape (3,): index 5 is out of bounds for axis 0 with size 3. "),
        (lambda x, i: lax.dynamic_update_slice(x, jnp.ones(2), (i,)), (jnp.zeros(3), 2), checkify.index_checks,
         "out-of-bounds indexing for array of shape (3,): index 2 is out of bounds for axis 0 with size 3. "),
        (lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 2)), (jnp.zeros((3, 3)), 2), checkify.index_checks,
         "out-of-bounds indexing for array of shape (3, 3): index 2 is out of bounds for axis 0 with size 3. "),
        (lambda x, idx: x[idx], (jnp.zeros((3, 3)), jnp.array([0, 1, 4])), checkify.index_checks,
         "out-of-bounds indexing for array of shape (3, 3): index 4 is out of bounds for axis 0 with size 3. "),
    ],
    ids=["nan", "div", "div-int", "nan-of-div", "dynamic_slice", "scatter", "dynamic_update_slice", "dynamic_slice-2d",
         "gather"],
)  # fmt: skip
def test_automatic_checks_report_what_jax_reports(fun, args, errors, message):
    err, _ = checkify.checkify(fun, errors=errors)(*args)
    assert err.get() == message
    err, _ = checkify.checkify(fun, errors=checkify.user_checks)(*args)
    assert err.get() is None  # not enabled: not checked


def test_the_first_error_wins_and_checks_that_are_not_enabled_are_dropped():
    def f(x):
        y = jnp.log(x)
        checkify.check(x > 0, "positive")
        return y / 0.0

    # A check's code is given when the function is traced, before the automatic checks get
    # theirs: it wins over a NaN produced before it, as in JAX.
    err, _ = checkify.checkify(f, errors=checkify.all_checks)(jnp.float32(-1.0))
    assert err.get() == "positive (`check` failed)"
    g = lambda x: jnp.sin(jnp.log(x) / 0.0)  # noqa: E731
    assert checkify.checkify(g, errors=checkify.all_checks)(jnp.float32(-1.0))[0].get() == "nan generated by primitive: log."
    assert checkify.checkify(g, errors=checkify.all_checks)(jnp.float32(1.0))[0].get() == "division by zero"
    err, _ = checkify.checkify(f, errors=checkify.div_checks)(jnp.float32(-1.0))
    assert err.get() == "division by zero"
    err, _ = checkify.checkify(f, errors=checkify.nan_checks)(jnp.float32(2.0))
    assert err.get() is None  # its check is not enabled; no NaN at 2.0 (inf is no NaN)


# --- composition with transformations -------------------------------------------------------------------------------


def test_jit_of_checkify_and_checkify_of_jit():
    def f(x, i):
        return x[i]

    for checked in (checkify.checkify(jax.jit(f), errors=ALL), jax.jit(checkify.checkify(f, errors=ALL))):
        err, _ = checked(jnp.ones(5), 100)
        assert err.get() == "out-of-bounds indexing for array of shape (5,): index 100 is out of bounds for axis 0 with size 5. "
        err, out = checked(jnp.arange(5.0), 3)
        assert err.get() is None and float(out) == 3.0


def test_a_jitted_checkify_reuses_its_trace_and_reports_each_calls_values():
    jitted = jax.jit(checkify.checkify(indexed))
    got = [jitted(jnp.ones(5), jnp.int32(i))[0].get() for i in (-3, 2, -7)]
    assert got == ["index needs to be non-negative, got -3 (`check` failed)", None,
                   "index needs to be non-negative, got -7 (`check` failed)"]  # fmt: skip


def test_vmap_of_checkify_reports_every_failing_element():
    def f(x, i):
        checkify.check(i >= 0, "index needs to be non-negative! {}", i)
        return x[i]

    errs, out = jax.vmap(checkify.checkify(f, errors=ALL))(jnp.ones((3, 5)), jnp.array([-1, 2, 100]))
    assert errs.get() == (
        "at mapped index 0: index needs to be non-negative! -1 (`check` failed)\n"
        "at mapped index 2: out-of-bounds indexing for array of shape (5,): index 100 is out of bounds for axis 0 "
        "with size 5. "
    )
    assert type(errs.get_exception()).__name__ == "BatchedError"
    assert out.shape == (3,)
    # throw() reduces the batch to one error per kind (the last failing element) and raises the earliest.
    with pytest.raises(checkify.JaxRuntimeError, match=r"^index needs to be non-negative! -1 \(`check` failed\)$"):
        errs.throw()


def test_checkify_of_vmap_and_an_eager_vmap_report_the_last_failing_element():
    def f(x, i):
        checkify.check(i >= 0, "index needs to be non-negative! {}", i)
        return x[i]

    err, _ = checkify.checkify(jax.vmap(f))(jnp.ones((3, 5)), jnp.array([-3, -1, 2]))
    assert err.get() == "index needs to be non-negative! -1 (`check` failed)"
    with pytest.raises(checkify.JaxRuntimeError, match=r"^index needs to be non-negative! -1 \(`check` failed\)$"):
        jax.vmap(f)(jnp.ones((3, 5)), jnp.array([-3, -1, 2]))
    errs, _ = jax.vmap(checkify.checkify(f))(jnp.ones((3, 5)), jnp.array([2, -1, -2]))
    with pytest.raises(checkify.JaxRuntimeError, match=r"non-negative! -2 \(`check` failed\)$"):
        errs.throw()


def test_checkify_of_grad_checks_the_backward_pass():
    def f(x):
        return x / (1 + jnp.sqrt(x))

    err, _ = checkify.checkify(jax.grad(f), errors=checkify.nan_checks)(0.0)
    assert err.get() == "nan generated by primitive: mul."


def test_grad_and_jvp_of_checkify_and_of_a_check():
    def f(x):
        checkify.check(x > 0, "pos {}", x)
        return jnp.sin(x) * x

    g = jax.grad(lambda x: checkify.checkify(f)(x)[1])(jnp.float32(1.0))
    np.testing.assert_allclose(g, np.cos(1.0) + np.sin(1.0), rtol=1e-6)
    _, t = jax.jvp(lambda x: checkify.checkify(f)(x)[1], (jnp.float32(1.0),), (jnp.float32(1.0),))
    np.testing.assert_allclose(t, np.cos(1.0) + np.sin(1.0), rtol=1e-6)
    with pytest.raises(checkify.JaxRuntimeError, match=r"^pos -1.0 \(`check` failed\)$"):
        jax.grad(f)(jnp.float32(-1.0))


def test_a_check_in_a_custom_vjp_backward_pass():
    @jax.custom_vjp
    def negative_gradient(x):
        return x

    def bwd(_, grad):
        checkify.check(grad < 0, "gradient needs to be negative!")
        return (grad,)

    negative_gradient.defvjp(lambda x: (negative_gradient(x), None), bwd)
    with pytest.raises(checkify.JaxRuntimeError, match=r"^gradient needs to be negative! \(`check` failed\)$"):
        jax.grad(negative_gradient)(-1.0)
    err, g = checkify.checkify(jax.grad(negative_gradient))(-1.0)
    assert err.get() == "gradient needs to be negative! (`check` failed)" and float(g) == 1.0


def test_checks_inside_custom_jvp_and_custom_vjp_functions():
    @jax.custom_jvp
    def cj(x):
        checkify.check(x > 0, "cj x {}", x)
        return jnp.sin(x)

    cj.defjvp(lambda p, t: (cj(p[0]), jnp.cos(p[0]) * t[0] * 10))

    @jax.custom_vjp
    def cv(x):
        checkify.check(x > 0, "cv x {}", x)
        return jnp.sin(x)

    cv.defvjp(lambda x: (cv(x), jnp.cos(x)), lambda r, g: (r * g * 10,))
    for fun, name in ((cj, "cj"), (cv, "cv")):
        assert checkify.checkify(fun)(-1.0)[0].get() == f"{name} x -1.0 (`check` failed)"
        # The custom rule is kept under checkify: its derivative, not the function's.
        g = jax.grad(lambda x, fun=fun: checkify.checkify(fun)(x)[1])(2.0)
        np.testing.assert_allclose(g, 10 * np.cos(2.0), rtol=1e-6)
        err, g = checkify.checkify(jax.grad(fun))(-2.0)
        assert err.get() == f"{name} x -2.0 (`check` failed)"


def test_checks_in_cond_branches():
    def f(x):
        def big(a):
            checkify.check(a < 5, "too big {}", a)
            return jnp.log(a)

        return lax.cond(x > 0, big, lambda a: jnp.sin(a) / a, x)

    checked = checkify.checkify(f, errors=ALL)
    assert checked(7.0)[0].get() == "too big 7.0 (`check` failed)"
    assert jax.jit(checked)(7.0)[0].get() == "too big 7.0 (`check` failed)"
    assert checked(0.0)[0].get() == "division by zero"
    assert checked(-jnp.inf)[0].get() == "nan generated by primitive: sin."
    err, out = checked(2.0)
    assert err.get() is None
    np.testing.assert_allclose(out, np.log(2.0), rtol=1e-6)


def test_checks_in_while_loops_body_and_predicate():
    def body_check(x, limit=20):
        def body(c):
            checkify.check(c < 10, "c is {}", c)
            return c + 3

        return lax.while_loop(lambda c: c < limit, body, x)

    def cond_check(x):
        def cond(c):
            checkify.check(c < 10, "cond c is {}", c)
            return c < 20

        return lax.while_loop(cond, lambda c: c + 3, x)

    assert checkify.checkify(body_check)(1.0)[0].get() == "c is 10.0 (`check` failed)"
    assert jax.jit(checkify.checkify(body_check))(1.0)[0].get() == "c is 10.0 (`check` failed)"
    assert checkify.checkify(cond_check)(1.0)[0].get() == "cond c is 10.0 (`check` failed)"
    assert checkify.checkify(cond_check)(15.0)[0].get() == "cond c is 15.0 (`check` failed)"  # the first test
    err, out = checkify.checkify(body_check)(jnp.float32(1.0), limit=8)
    assert err.get() is None and float(out) == 10.0
    with pytest.raises(ValueError, match=r"^Checkify does not support batched while-loops"):
        checkify.checkify(jax.vmap(body_check))(jnp.array([1.0, 2.0]))


def test_checks_in_scan_bodies():
    def f(xs):
        def body(c, x):
            checkify.check(x > 0, "x {} at c {}", x, c)
            return c + jnp.log(x), c

        return lax.scan(body, jnp.float32(0.0), xs)

    checked = checkify.checkify(f, errors=ALL)
    assert checked(jnp.array([1.0, 2.0, -1.0, 3.0]))[0].get() == "x -1.0 at c 0.6931471824645996 (`check` failed)"
    assert checkify.checkify(f, errors=checkify.nan_checks)(jnp.array([1.0, -1.0]))[0].get() == (
        "nan generated by primitive: log."
    )
    err, (c, ys) = jax.jit(checked)(jnp.array([1.0, 2.0, 3.0]))
    assert err.get() is None
    np.testing.assert_allclose(c, np.log(6.0), rtol=1e-6)
    np.testing.assert_allclose(ys, [0.0, 0.0, np.log(2.0)], rtol=1e-6)


def test_checks_in_checkpointed_functions():
    def f(x):
        return jax.checkpoint(lambda a: jnp.log(a) * 2)(x)

    assert checkify.checkify(f, errors=ALL)(-1.0)[0].get() == "nan generated by primitive: log."
    assert checkify.checkify(jax.grad(f), errors=ALL)(0.0)[0].get() == "division by zero"


def test_outputs_keep_their_pytree_structure():
    err, out = checkify.checkify(lambda x: {"a": x, "b": [x * 2, x]})(jnp.float32(1.0))
    assert err.get() is None and sorted(out) == ["a", "b"] and float(out["b"][0]) == 2.0


def test_vmap_of_a_checkified_while_loop_and_a_check_in_a_scan_under_grad():
    # Two places where JAX 0.10.2 falls short (docs/checkify.md): minijax checks them.
    def loop(x):
        def body(c):
            checkify.check(c < 10, "c is {}", c)
            return c + 3

        return lax.while_loop(lambda c: c < 20, body, x)

    errs, out = jax.vmap(checkify.checkify(loop))(jnp.array([1.0, 12.0, 2.0]))
    assert errs.get() == (
        "at mapped index 0: c is 10.0 (`check` failed)\n"
        "at mapped index 1: c is 12.0 (`check` failed)\n"
        "at mapped index 2: c is 11.0 (`check` failed)"
    )
    np.testing.assert_array_equal(out, [22.0, 21.0, 20.0])

    def scanned(x):
        def body(c, xi):
            checkify.check(c < 5, "c {}", c)
            return c + xi, c

        return lax.scan(body, jnp.log(x), jnp.arange(3.0))[0]

    err, _ = checkify.checkify(jax.grad(scanned), errors=ALL)(jnp.float32(1e9))
    assert err.get() == "c 20.7232666015625 (`check` failed)"
