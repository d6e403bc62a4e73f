"""Devices and placement, as JAX's FAQ describes ("Controlling data and
computation placement on devices").

An array is *committed* to its device when ``device_put`` put it there
explicitly, or when it was computed from committed arrays; computations run
where committed operands are (two different devices: ValueError), else on
the default device (``minijax.default_device`` / ``jax_default_device``).

Most tests run once per backend (tests/conftest.py makes each one the
default in turn); those that choose backends themselves, or start a fresh
interpreter, are marked ``single_backend``.

Several devices: most tests use an xla backend made with two CPU devices in
this process (``two``); the subprocess tests check that XLA's own flag
(``XLA_FLAGS=--xla_force_host_platform_device_count=N``) and JAX_PLATFORMS
are honoured, and ``PLACEMENT_SCRIPT`` prints exactly what real JAX prints on
two CPU devices (``tests/test_devices_oracle.py`` checks the expectation
against JAX).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax.api import default_device
from minijax.array import Array
from minijax.backend import Device, default_backend_name, get_backend
from minijax.config import config, config_context

pytest.importorskip("jaxlib", reason="the XLA backend needs jaxlib")


def f32(*values: float) -> np.ndarray[Any, Any]:
    return np.array(values, np.float32)


@pytest.fixture(scope="module")
def two() -> list[Device]:
    """Two CPU devices of an xla backend of their own (not registered)."""
    from minijax_xla.backend import XlaBackend

    class TwoCpus(XlaBackend):
        name = "xla_two_cpus"

    return TwoCpus(num_cpu_devices=2).devices()


def ids(x: Any) -> list[int]:
    return sorted(d.id for d in x.devices())


# --- devices ---------------------------------------------------------------------


@pytest.mark.single_backend
def test_device_repr_str_and_attributes() -> None:
    (d,) = get_backend("numpy").devices()
    assert repr(d) == "CpuDevice(id=0)" and str(d) == "cpu:0"
    assert (d.platform, d.device_kind, d.id, d.process_index) == ("cpu", "cpu", 0, 0)
    assert [repr(x) for x in get_backend("xla").devices()] == ["CpuDevice(id=0)"]


def test_devices_by_platform_and_by_backend_name() -> None:
    assert jax.devices() == jax.devices("cpu") == jax.local_devices() == jax.local_devices(backend="cpu")
    assert jax.device_count() == jax.local_device_count() == len(jax.devices())
    assert jax.default_backend() == "cpu"
    assert jax.devices("xla") == get_backend("xla").devices()
    assert jax.devices("numpy") == get_backend("numpy").devices()
    with config_context(minijax_backend="xla"):
        assert jax.devices() == jax.devices("cpu") == get_backend("xla").devices()


def test_unknown_platforms_and_processes_are_errors() -> None:
    with pytest.raises(RuntimeError, match="'gpu' requested, but no platforms that are instances of gpu are present"):
        jax.devices("gpu")
    with pytest.raises(RuntimeError, match="Unknown backend bogus"):
        jax.devices("bogus")
    with pytest.raises(ValueError, match="Unknown process_index 1"):  # JAX's words
        jax.local_devices(process_index=1)


# --- committed or not ---------------------------------------------------------------


def test_values_start_uncommitted_on_the_default_device() -> None:
    x = jnp.arange(3.0)
    put = jax.device_put(f32(1, 2, 3))
    scalar = jax.device_put(2.5)
    for a in (x, put, scalar, x + put, jnp.sin(x), jax.jit(lambda v: v * 2)(x)):
        assert a.committed is False
        assert a.devices() == {jax.devices()[0]} and a.device is jax.devices()[0]
    assert scalar.weak_type and not put.weak_type


def test_device_put_with_a_device_commits() -> None:
    dev = jax.devices()[0]
    x = jnp.arange(3.0)
    c = jax.device_put(x, dev)
    assert c.committed and not x.committed  # x itself is unchanged
    np.testing.assert_array_equal(np.asarray(c), [0.0, 1.0, 2.0])
    # Results computed from committed data are committed; jit's too.
    assert (c + x).committed and jnp.sin(c).committed and jax.jit(lambda a, b: a - b)(x, c).committed
    assert jax.device_put(f32(1), dev).committed
    # device_put without a device leaves arrays as they are.
    assert jax.device_put(c) is c and jax.device_put(x) is x


def test_device_put_on_pytrees_and_its_copy_options(two: list[Device]) -> None:
    tree = {"a": f32(1, 2), "b": [3.0, jnp.ones(2)]}
    placed = jax.device_put(tree, two[1])
    leaves = jax.tree_util.tree_leaves(placed)
    assert all(type(v) is Array and v.committed and ids(v) == [1] for v in leaves)
    x = jax.device_put(f32(5, 6), two[1])
    copy = jax.device_put(x, two[1], may_alias=False)
    assert copy._buf is not x._buf and np.asarray(copy).tolist() == [5.0, 6.0]
    moved = jax.device_put(x, two[0], donate=True)
    assert ids(moved) == [0] and moved.tolist() == [5.0, 6.0]
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        np.asarray(x)


# --- computation follows data -----------------------------------------------------------


def test_computation_follows_committed_data(two: list[Device]) -> None:
    b = jax.device_put(f32(1, 1, 1), two[1])
    x = jnp.arange(3.0)  # uncommitted, on the default device
    for y in (b + x, x * b, jnp.where(x > 0, b, x), jax.jit(lambda u, v: u + v)(x, b)):
        assert y.committed and ids(y) == [1]
    np.testing.assert_array_equal(np.asarray(b + x), [1.0, 2.0, 3.0])
    assert not x.committed and ids(x) == [0]  # the operand itself did not move


def test_two_committed_devices_are_an_error(two: list[Device]) -> None:
    b = jax.device_put(f32(1, 1, 1), two[1])
    c = jax.device_put(f32(2, 2, 2), two[0])
    with pytest.raises(
        ValueError,
        match=r"Received incompatible devices for jitted computation. Got argument args\[0\] of add with shape "
        r"float32\[3\] and with device ids \[1\] on platform CPU and argument args\[1\] of add with shape "
        r"float32\[3\] and with device ids \[0\] on platform CPU",
    ):
        _ = b + c

    def g(p: Any, q: Any) -> Any:
        return p * q

    with pytest.raises(ValueError, match=r"Got argument p of g .* \[0\] .* argument q of g .* \[1\]"):
        jax.jit(g)(c, b)
    with pytest.raises(ValueError, match=r"argument tree\['a'\] of <lambda> .* argument tree\['b'\] of <lambda>"):
        jax.jit(lambda tree: tree["a"] + tree["b"])({"a": b, "b": c})
    with pytest.raises(ValueError, match=r"move one with jax.device_put\(x, device\)"):
        _ = c - b


def test_jit_compiles_once_per_device(two: list[Device]) -> None:
    backend: Any = two[0].backend
    f = jax.jit(lambda v: v * 3.0 + 1.0)
    before = backend.stats["compiles"]
    on0 = jax.device_put(f32(1, 2), two[0])
    on1 = jax.device_put(f32(3, 4), two[1])
    for _ in range(3):
        assert f(on0).tolist() == [4.0, 7.0] and ids(f(on0)) == [0]
        assert f(on1).tolist() == [10.0, 13.0] and ids(f(on1)) == [1]
    assert backend.stats["compiles"] - before == 2
    assert f._cache_size() == 1  # one trace, two executables


def test_donation_on_a_second_device(two: list[Device]) -> None:
    x = jax.device_put(f32(1, 2, 3), two[1])
    y = jax.jit(lambda v: v + 1.0, donate_argnums=0)(x)
    assert ids(y) == [1] and y.committed and y.tolist() == [2.0, 3.0, 4.0]
    assert x.is_deleted()


# --- the default device -------------------------------------------------------------------


def test_default_device_moves_uncommitted_work(two: list[Device]) -> None:
    x = jnp.arange(3.0)
    c0 = jax.device_put(f32(1, 1, 1), two[0])
    with default_device(two[1]):
        z = jnp.ones(3)
        assert not z.committed and ids(z) == [1]
        assert ids(z + x) == [1] and (z + x).tolist() == [1.0, 2.0, 3.0]
        assert ids(jax.jit(lambda v: v * 2)(x)) == [1]
        assert ids(jax.device_put(f32(0))) == [1]
        assert ids(c0 + 1) == [0] and (c0 + 1).committed  # committed data stays put
        assert jax.device_put(x) is x  # arrays already on a device stay there
    assert ids(z + x) == [0] and (z + x).device is jax.devices()[0]


def test_the_config_flag_sets_the_default_device(two: list[Device]) -> None:
    try:
        config.update("jax_default_device", two[1])
        assert ids(jnp.ones(2)) == [1] and not jnp.ones(2).committed
    finally:
        config.update("jax_default_device", None)
    assert jnp.ones(2).device is jax.devices()[0]
    with config_context(jax_default_device="xla"):  # a name: that backend's first device
        assert jnp.ones(2).device is get_backend("xla").devices()[0]
    with pytest.raises(ValueError, match=r"jax.default_device must be passed either a Device object .* got: 3"):
        config.update("jax_default_device", 3)


def test_the_default_device_is_per_thread(two: list[Device]) -> None:
    seen: list[list[int]] = []
    inside = threading.Event()
    done = threading.Event()

    def other_thread() -> None:
        inside.wait(10)
        seen.append(ids(jnp.ones(1)))  # the context manager below is not in force here
        done.set()

    t = threading.Thread(target=other_thread)
    t.start()
    with default_device(two[1]):
        inside.set()
        done.wait(10)
        seen.append(ids(jnp.ones(1)))
    t.join()
    assert seen == [[0], [1]]


# --- backend choice: JAX_PLATFORMS ------------------------------------------------------------


@pytest.mark.single_backend
def test_jax_platforms_names_platforms_or_backends() -> None:
    # minijax_backend (MINIJAX_BACKEND) would take precedence: unset it here.
    with config_context(minijax_backend=None, jax_platforms="cpu"):
        assert get_backend(default_backend_name()).platform_devices("cpu")
        assert jnp.ones(2).device.platform == "cpu"
    with config_context(minijax_backend=None, jax_platforms="xla"):
        assert jnp.ones(2)._backend is get_backend("xla")
    with config_context(minijax_backend=None, jax_platforms="cuda,numpy"):  # the first one available wins
        assert default_backend_name() == "numpy"
    with config_context(minijax_backend=None, jax_platforms="bogus"), pytest.raises(RuntimeError, match="Unable to initialize backend 'bogus'"):
        jnp.ones(2)


def run_python(code: str, **env: str) -> str:
    """Run ``code`` in a fresh interpreter; its stdout. The backend is chosen
    by ``env`` alone (not by the MINIJAX_BACKEND of the test run)."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "MINIJAX_BACKEND": "", **env},
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.single_backend
def test_xla_honours_the_host_device_count_flag_and_jax_platforms() -> None:
    code = (
        "import numpy as np, minijax as jax, minijax.numpy as jnp\n"
        "from minijax.cli import main\n"
        "d = jax.devices()\n"
        "print(d, jax.device_count(), jax.local_device_count(), jax.default_backend())\n"
        "x = jax.device_put(np.arange(3, dtype=np.float32), d[2])\n"
        "y = jax.jit(lambda v: v * 2)(x) + jnp.ones(3)\n"
        "print(y.tolist(), sorted(e.id for e in y.devices()), y.committed)\n"
        "main(['info'])\n"
    )
    out = run_python(code, XLA_FLAGS="--xla_force_host_platform_device_count=3", JAX_PLATFORMS="xla")
    lines = out.splitlines()
    assert lines[0] == "[CpuDevice(id=0), CpuDevice(id=1), CpuDevice(id=2)] 3 3 cpu"
    assert lines[1] == "[1.0, 3.0, 5.0] [2] True"
    assert "  xla: platform cpu, priority 10, devices [CpuDevice(id=0), CpuDevice(id=1), CpuDevice(id=2)]" in lines
    assert "default device: CpuDevice(id=0) of the 'xla' backend" in lines


@pytest.mark.single_backend
def test_the_cpu_device_count_config_flag() -> None:
    out = run_python("import minijax as jax; print(jax.device_count('xla'))", JAX_NUM_CPU_DEVICES="2")
    assert out.strip() == "2"


# --- the same placement story as real JAX, on two CPU devices ----------------------------------

PLACEMENT_SCRIPT = """\
import numpy as np

import minijax
import minijax.numpy as jnp


def show(name, x):
    print(name, x.committed, sorted(d.id for d in x.devices()), np.asarray(x).tolist())


def error(name, thunk, message=True):
    try:
        thunk()
        print(name, "no error")
    except Exception as e:
        print(name, type(e).__name__, str(e).splitlines()[0] if message else "")


d = minijax.devices()
print(len(d), minijax.device_count(), len(minijax.local_devices()), minijax.default_backend())
print(repr(d[1]), str(d[1]), d[1].platform, d[1].id, minijax.devices("cpu") == d)
x = jnp.arange(3.0)
show("x", x)
show("put", minijax.device_put(np.arange(3.0, dtype=np.float32)))
show("put scalar", minijax.device_put(2.5))
b = minijax.device_put(np.ones(3, np.float32), d[1])
show("put d1", b)
show("b + x", b + x)
show("x * 2", x * 2)
f = minijax.jit(lambda u, v: u * v + 1)
show("jit(b, x)", f(b, x))
show("jit(x, x)", f(x, x))
show("put(b)", minijax.device_put(b))
print("put(b) is b", minijax.device_put(b) is b, "put(x) is x", minijax.device_put(x) is x)
c0 = minijax.device_put(np.ones(3, np.float32), d[0])
show("c0", c0)
error("b + c0", lambda: b + c0, message=False)


def g(p, q):
    return p + q


def h(tree):
    return tree["a"] * tree["b"]


error("jit g", lambda: minijax.jit(g)(b, c0))
error("jit h", lambda: minijax.jit(h)({"a": c0, "b": b}))
with minijax.default_device(d[1]):
    z = jnp.ones(3)
    show("z", z)
    show("z + x", z + x)
    show("jit under default", minijax.jit(lambda u: u * 2)(x))
    show("c0 + 1", c0 + 1)
    show("put under default", minijax.device_put(np.zeros(2, np.float32)))
show("z + x outside", z + x)
minijax.config.update("jax_default_device", d[1])
show("config ones", jnp.ones(2))
minijax.config.update("jax_default_device", None)
show("reset ones", jnp.ones(2))
show("move b", minijax.device_put(b, d[0]))
show("commit x", minijax.device_put(x, d[0]))
error("bad default", lambda: minijax.config.update("jax_default_device", 3))
error("devices gpu", lambda: minijax.devices("gpu"), message=False)
"""

# What real JAX 0.10.2 prints for PLACEMENT_SCRIPT (test_devices_oracle.py checks it).
PLACEMENT_EXPECTED = """\
2 2 2 cpu
CpuDevice(id=1) cpu:1 cpu 1 True
x False [0] [0.0, 1.0, 2.0]
put False [0] [0.0, 1.0, 2.0]
put scalar False [0] 2.5
put d1 True [1] [1.0, 1.0, 1.0]
b + x True [1] [1.0, 2.0, 3.0]
x * 2 False [0] [0.0, 2.0, 4.0]
jit(b, x) True [1] [1.0, 2.0, 3.0]
jit(x, x) False [0] [1.0, 2.0, 5.0]
put(b) True [1] [1.0, 1.0, 1.0]
put(b) is b True put(x) is x True
c0 True [0] [1.0, 1.0, 1.0]
b + c0 ValueError
jit g ValueError Received incompatible devices for jitted computation. Got argument p of g with shape float32[3] \
and with device ids [1] on platform CPU and argument q of g with shape float32[3] and with device ids [0] on platform CPU
jit h ValueError Received incompatible devices for jitted computation. Got argument tree['a'] of h with shape \
float32[3] and with device ids [0] on platform CPU and argument tree['b'] of h with shape float32[3] and with device \
ids [1] on platform CPU
z False [1] [1.0, 1.0, 1.0]
z + x False [1] [1.0, 2.0, 3.0]
jit under default False [1] [0.0, 2.0, 4.0]
c0 + 1 True [0] [2.0, 2.0, 2.0]
put under default False [1] [0.0, 0.0]
z + x outside False [0] [1.0, 2.0, 3.0]
config ones False [1] [1.0, 1.0]
reset ones False [0] [1.0, 1.0]
move b True [0] [1.0, 1.0, 1.0]
commit x True [0] [0.0, 1.0, 2.0]
bad default ValueError jax.default_device must be passed either a Device object (e.g. `jax.devices('cpu')[0]`) \
or a platform name string like 'cpu' or 'gpu', got: 3
devices gpu RuntimeError
"""

# Two CPU devices from XLA's own flag, as a JAX user would ask for them.
TWO_CPUS = {"XLA_FLAGS": "--xla_force_host_platform_device_count=2"}


def normalise(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip().splitlines()]


@pytest.mark.single_backend
def test_placement_script_prints_what_jax_prints() -> None:
    # minijax.default_device is exported by minijax/__init__.py; until then
    # the script finds it through minijax.api.
    prelude = "import minijax, minijax.api\nminijax.default_device = getattr(minijax, 'default_device', minijax.api.default_device)\n"
    out = run_python(prelude + PLACEMENT_SCRIPT, MINIJAX_BACKEND="xla", **TWO_CPUS)
    assert normalise(out) == normalise(PLACEMENT_EXPECTED)
