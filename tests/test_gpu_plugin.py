"""Finding and loading JAX's CUDA PJRT plugin, tested without a GPU.

The plugin is two packages (notes section 9): ``jax-cudaNN-pjrt`` puts
``jax_plugins/xla_cudaNN/xla_cuda_plugin.so`` on the path (its ``__init__``
imports jax, so it must never be imported), and ``jax-cudaNN-plugin`` the
kernels package ``jax_cudaNN_plugin``. These tests build fake installs of
both in a temporary directory on ``sys.path``: discovery must find them, a
version other than jaxlib's and a library that does not load must give a
clear error, and the backend must use a GPU client when one is made.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minijax as jax

pytest.importorskip("jaxlib", reason="the XLA backend needs jaxlib")

from minijax_xla import backend as xla_backend, jaxlib_api  # noqa: E402
from minijax_xla.jaxlib_api import CudaPlugin, GpuPluginError  # noqa: E402

# Each test makes its own XlaBackend or calls the discovery functions directly.
pytestmark = pytest.mark.single_backend


def fake_install(root: Path, cuda: str, version: str, kernels: bool = True) -> Path:
    """A fake jax-cuda<cuda>-pjrt (and -plugin) install under ``root``; the .so's path."""
    package = root / "jax_plugins" / f"xla_cuda{cuda}"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('the PJRT package must not be imported')\n")
    library = package / "xla_cuda_plugin.so"
    library.write_bytes(b"\x7fELF not really a shared library")
    dist_info = root / f"jax_cuda{cuda}_pjrt-{version}.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: jax-cuda{cuda}-pjrt\nVersion: {version}\n")
    if kernels:
        (root / f"jax_cuda{cuda}_plugin").mkdir()
        (root / f"jax_cuda{cuda}_plugin" / "__init__.py").write_text("")
    return library


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``tmp_path`` on sys.path, and the fake packages forgotten afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith(("jax_plugins", "jax_cuda"))]:
        del sys.modules[name]


def test_discovery_finds_an_installed_plugin_without_importing_it(on_path: Path) -> None:
    library = fake_install(on_path, "13", jaxlib_api.JAXLIB_VERSION)
    plugin = jaxlib_api.find_cuda_plugin()
    assert plugin == CudaPlugin("cuda13", str(library), "jax-cuda13-pjrt", jaxlib_api.JAXLIB_VERSION, "jax_cuda13_plugin")
    assert "jax_plugins.xla_cuda13" not in sys.modules


def test_discovery_prefers_cuda13_and_falls_back_to_cuda12(on_path: Path) -> None:
    fake_install(on_path, "12", "0.10.2", kernels=False)
    plugin = jaxlib_api.find_cuda_plugin()
    assert plugin is not None and (plugin.name, plugin.kernels) == ("cuda12", None)
    fake_install(on_path, "13", "0.10.2")
    plugin = jaxlib_api.find_cuda_plugin()
    assert plugin is not None and plugin.name == "cuda13"


def test_no_plugin_means_cpu_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jaxlib_api, "find_cuda_plugin", lambda: None)
    client, status = xla_backend.gpu_client(None)
    assert client is None and status.startswith("no CUDA plugin installed (pip install 'jax-cuda13-plugin[with-cuda]==")
    backend = xla_backend.XlaBackend()
    assert backend.platform == "cpu" and backend.platform_devices("gpu") == []
    assert backend.gpu_status == status


def test_a_plugin_of_another_version_is_refused_with_the_fix(on_path: Path) -> None:
    fake_install(on_path, "13", "0.0.1")
    plugin = jaxlib_api.find_cuda_plugin()
    assert plugin is not None
    with pytest.raises(GpuPluginError, match=r"jax-cuda13-pjrt 0.0.1 at .* does not match jaxlib") as info:
        jaxlib_api.make_cuda_client(plugin)
    assert f"pip install 'jax-cuda13-pjrt=={jaxlib_api.JAXLIB_VERSION}'" in str(info.value)
    assert "JAX_PLATFORMS=cpu" in str(info.value)


def test_a_plugin_that_does_not_load_is_a_clear_error(on_path: Path) -> None:
    fake_install(on_path, "13", jaxlib_api.JAXLIB_VERSION)
    plugin = jaxlib_api.find_cuda_plugin()
    assert plugin is not None
    with pytest.raises(GpuPluginError, match=r"could not be used: .*xla_cuda_plugin.so") as info:
        jaxlib_api.make_cuda_client(plugin)
    assert "nvidia-smi" in str(info.value) and "JAX_PLATFORMS=cpu" in str(info.value)


def test_jax_platforms_decides_what_a_failure_means(on_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_install(on_path, "13", jaxlib_api.JAXLIB_VERSION)
    # Unset: warn and run on the CPU, as JAX does.
    with pytest.warns(RuntimeWarning, match="falling back to the CPU"):
        client, status = xla_backend.gpu_client(None)
    assert client is None and "cuda13 plugin failed to load" in status
    # Asked for by name: an error.
    with pytest.raises(GpuPluginError):
        xla_backend.gpu_client({"cuda", "cpu"})

    # CPU only: the plugin is not even looked for.
    def must_not_look() -> None:
        raise AssertionError("the plugin was looked for")

    monkeypatch.setattr(jaxlib_api, "find_cuda_plugin", must_not_look)
    client, status = xla_backend.gpu_client({"cpu"})
    assert client is None and status == "not looked for (JAX_PLATFORMS=cpu)"


class FakeGpu:
    """What the backend reads of a PJRT GPU device."""

    def __init__(self, id: int) -> None:
        self.id = id
        self.device_kind = "Fake GPU"

    def __str__(self) -> str:
        return f"cuda:{self.id}"


class FakeGpuClient:
    def local_devices(self) -> list[FakeGpu]:
        return [FakeGpu(0), FakeGpu(1)]


def test_a_gpu_client_makes_gpus_the_default_platform(on_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    library = fake_install(on_path, "13", jaxlib_api.JAXLIB_VERSION)

    def make(plugin: CudaPlugin) -> Any:
        assert plugin.library == str(library)
        return FakeGpuClient()

    monkeypatch.setattr(jaxlib_api, "make_cuda_client", make)
    backend = xla_backend.XlaBackend()
    assert backend.platform == "gpu" and backend.gpu_status == f"cuda13 plugin loaded from {library}"
    gpus = backend.devices()
    assert [repr(d) for d in gpus] == ["CudaDevice(id=0)", "CudaDevice(id=1)"]
    assert [str(d) for d in gpus] == ["cuda:0", "cuda:1"] and gpus[0].platform == "gpu"
    assert backend.platform_devices("gpu") == gpus
    (cpu,) = backend.platform_devices("cpu")
    # The CPU of the same backend still computes (committed data stays there).
    x = jax.device_put(np.arange(3.0, dtype=np.float32), cpu)
    y = jax.jit(lambda v: v * 2.0)(x) + 1.0
    assert y.devices() == {cpu} and y.tolist() == [1.0, 3.0, 5.0]


# --- lowering for a GPU, checked on the CPU ----------------------------------------------------


def _lower_for(platform: str, f: Any, *args: Any) -> tuple[Any, str]:
    from minijax_xla.lowering import lower_jaxpr, module_text

    closed = jax.make_jaxpr(f)(*args)
    module, _ = lower_jaxpr(closed, "main", {}, [], platform)
    return closed, module_text(module)


@pytest.mark.parametrize(
    ("name", "f", "shape", "cpu_target", "gpu_target"),
    [
        ("cholesky", jax.numpy.linalg.cholesky, (3, 3), "lapack_spotrf_ffi", "cusolver_potrf_ffi"),
        ("lu", jax.lax.linalg.lu, (3, 3), "lapack_sgetrf_ffi", "cusolver_getrf_ffi"),
        ("qr", jax.numpy.linalg.qr, (4, 3), "lapack_sgeqrf_ffi", "cusolver_geqrf_ffi"),
        ("eigh", jax.numpy.linalg.eigh, (3, 3), "lapack_ssyevd_ffi", "cusolver_syevd_ffi"),
        ("svd", jax.numpy.linalg.svd, (2, 5), "lapack_sgesdd_ffi", "cusolver_gesvd_ffi"),
    ],
)
def test_linalg_calls_cusolver_in_a_module_for_the_gpu(name: str, f: Any, shape: tuple[int, ...], cpu_target: str, gpu_target: str) -> None:
    # The LAPACK kernels live in the host process: a GPU program naming one
    # fails inside XLA ("No FFI handler registered ... on a platform CUDA").
    x = np.eye(*shape, dtype=np.float32) + 0.5
    _, cpu_text = _lower_for("cpu", f, x)
    _, gpu_text = _lower_for("gpu", f, x)
    assert cpu_target in cpu_text and "cusolver" not in cpu_text
    assert gpu_target in gpu_text and "lapack_" not in gpu_text


@pytest.mark.parametrize("options", [{}, {"transpose_a": True}, {"left_side": False, "unit_diagonal": True}, {"lower": False}])
def test_triangular_solve_for_the_gpu_is_xlas_op_and_agrees(options: dict[str, Any]) -> None:
    # On a GPU triangular_solve lowers to stablehlo.triangular_solve, which
    # XLA:CPU runs too: so the GPU's rule is checked for values here.
    rng = np.random.default_rng(0)
    a = (rng.random((2, 4, 4)) + 4 * np.eye(4)).astype(np.float32)
    b = rng.random((2, 4, 3) if options.get("left_side", True) else (2, 3, 4)).astype(np.float32)
    kw = {"left_side": True, "lower": True, **options}

    def f(a: Any, b: Any) -> Any:
        return jax.lax.linalg.triangular_solve(a, b, **kw)

    closed, text = _lower_for("gpu", f, a, b)
    assert "stablehlo.triangular_solve" in text and "lapack_" not in text
    from minijax_xla.lowering import lower_jaxpr

    module, _ = lower_jaxpr(closed, "main", {}, [], "gpu")
    be = jax.backend.get_backend("xla")
    pjrt = be._pjrt_device(None)
    run = jaxlib_api.make_runner(jaxlib_api.compile_module(jaxlib_api.device_client(pjrt), module, pjrt), closed.out_avals, pjrt)
    got = jaxlib_api.get(run([jaxlib_api.put(a, pjrt), jaxlib_api.put(b, pjrt)])[0])
    want = np.asarray(jax.jit(f)(a, b))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_buffer_numpy_cannot_view_is_read_through_a_host_copy() -> None:
    # Without jax installed, np.asarray of a GPU buffer is a 0-d object array
    # (no buffer protocol for device memory): reading must copy to the host.
    pjrt = jax.backend.get_backend("xla")._pjrt_device(None)
    real = jaxlib_api.put(np.arange(6, dtype=np.float32).reshape(2, 3), pjrt)

    class DeviceOnly:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
            return np.asarray(object())

    got = jaxlib_api.get(DeviceOnly())
    np.testing.assert_array_equal(got, np.arange(6, dtype=np.float32).reshape(2, 3))
