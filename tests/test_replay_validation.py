"""``minijax replay`` and ``minijax conformance --cases`` on files from anyone: validate, then allocate.

Malformed reproducers and case files end in ``minijax replay: <what is wrong>`` (or ``minijax
conformance: ...``) with exit status 2, never a traceback; a file that asks for more than
``--max-bytes`` is refused before its data is decompressed or its program run. The fuzz test mutates
valid reproducers (written by ``write_reproducer``) ``MINIJAX_REPLAY_FUZZ`` times (default 1000).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pathlib
import random
import re
import shutil
import signal
import sys
import time
import tracemalloc
import zipfile
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from minijax.cli import main
from minijax.core import ShapedArray, primitive_registry
from minijax.testing import checks, corpus
from minijax.testing.checks import Check, write_reproducer
from minijax.testing.programs import NestedProgram
from minijax.testing.runner import run_check
from minijax.testing.suite import one_equation

pytestmark = pytest.mark.single_backend

ROOT = pathlib.Path(__file__).resolve().parent.parent
F32 = np.dtype(np.float32)


def _checks() -> dict[str, Check]:
    rng = np.random.default_rng(0)
    add = one_equation(primitive_registry["add"], {}, [ShapedArray((3,), F32)] * 2)
    vec = [rng.standard_normal(3).astype(F32) for _ in range(2)]
    scan = corpus.load_case(ROOT / "spec/cases/control_flow/scan_reverse_cond.jaxpr", ROOT / "spec/cases").check()
    return {
        "primitive": Check("primitive", "add", "float32", add, vec),
        "program": scan,
        "vmap": Check("vmap", "add", "float32", add, [rng.standard_normal((3, 2)).astype(F32), vec[1]], False,
                      {"in_axes": [1, None], "out_axes": 0, "axis_size": 2}),  # fmt: skip
        "jvp": Check("jvp", "add", "float32", add, vec, False, {"positions": [0, 1]}),
        "nested": NestedProgram(("vmap", "grad"), ("sin",), 2, (2,), rng.uniform(0.3, 1.0, (2, 2))).check(),
    }


@pytest.fixture(scope="module")
def valid(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pathlib.Path]:
    """One reproducer of each kind of check, as the suite writes them."""
    root = tmp_path_factory.mktemp("valid")
    numpy = checks.backend_named("numpy")
    made = {}
    for name, check in _checks().items():
        outcome = run_check(check, numpy, numpy)
        assert outcome.passed, outcome.message
        made[name] = write_reproducer(check, outcome, root / name, "numpy", "numpy")
    return made


def replay(directory: pathlib.Path, *extra: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["replay", str(directory), *extra])
    return status, out.getvalue(), err.getvalue()


def copy(src: pathlib.Path, dst: pathlib.Path) -> pathlib.Path:
    shutil.copytree(src, dst)
    return dst


def edit_json(directory: pathlib.Path, change: Callable[[dict[str, Any]], Any]) -> None:
    meta = json.loads((directory / "check.json").read_text())
    change(meta)
    (directory / "check.json").write_text(json.dumps(meta))


def assert_refused(status: int, out: str, err: str, *fragments: str) -> None:
    assert status == 2 and out == "", (status, out, err)
    assert err.startswith("minijax replay: ") and err.count("\n") <= 3, err
    for fragment in fragments:
        assert fragment in err, err


def test_valid_reproducers_replay_to_their_verdicts(valid: dict[str, pathlib.Path]) -> None:
    for directory in valid.values():
        status, out, err = replay(directory)
        assert status == 0 and err == "", err
        assert out.strip() == json.loads((directory / "check.json").read_text())["verdict"]


# ---------------------------------------------------------------------------
# Sizes: refused before anything is allocated


def test_a_zip_bomb_is_refused_by_its_headers(valid: dict[str, pathlib.Path], tmp_path: pathlib.Path) -> None:
    d = copy(valid["primitive"], tmp_path / "bomb")
    np.savez_compressed(d / "inputs.npz", arg0=np.zeros(2**24, F32), arg1=np.zeros(3, F32))  # 64 MiB in ~64 KiB
    assert (d / "inputs.npz").stat().st_size < 2**17
    tracemalloc.start()
    try:
        start = time.perf_counter()
        status, out, err = replay(d, "--max-bytes", str(2**20))
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert_refused(status, out, err, "arg0.npy", "more than the limit of 1048576 (--max-bytes)")
    assert peak < 2**20 and seconds < 5, (peak, seconds)
    # Under the limit, the header's shape must still be the one check.json lists.
    status, out, err = replay(d, "--max-bytes", str(2**27))
    assert_refused(status, out, err, "arg0.npy: shape (16777216,), but check.json says (3,)")


def test_a_huge_axis_size_is_refused_at_once(valid: dict[str, pathlib.Path], tmp_path: pathlib.Path) -> None:
    d = copy(valid["vmap"], tmp_path / "axis")

    def change(meta: dict[str, Any]) -> None:
        meta["options"] = {"in_axes": [None, None], "out_axes": 0, "axis_size": 10**8}
        meta["inputs"][0]["shape"] = [3]

    edit_json(d, change)
    np.savez(d / "inputs.npz", arg0=np.zeros(3, F32), arg1=np.zeros(3, F32))
    start = time.perf_counter()
    status, out, err = replay(d)
    assert_refused(status, out, err, "'axis_size' is 100000000, outside [1, 4096]")
    assert time.perf_counter() - start < 5
    # A batch within the run limit is still bounded in bytes: 4096 x the program's values.
    edit_json(d, lambda m: m["options"].update(axis_size=4096))
    status, out, err = replay(d, "--max-bytes", "10000")
    assert_refused(status, out, err, "batched 4096 times")


def test_a_jaxpr_whose_values_exceed_the_limit_is_not_run(valid: dict[str, pathlib.Path], tmp_path: pathlib.Path) -> None:
    d = copy(valid["primitive"], tmp_path / "big")
    (d / "jaxpr.txt").write_text(
        "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = add a b; d:f32[2147483647] = broadcast_in_dim["
        "broadcast_dimensions=() shape=(2147483647,) sharding=None] 1.0:f32[] in (c, d) }\n"
    )
    edit_json(d, lambda m: m.update(kind="program"))
    status, out, err = replay(d)
    assert_refused(status, out, err, "a value of type f32[2147483647] needs 8589934588 bytes")
    # Nested jaxprs count too: a value inside a cond branch inside a scan body.
    import minijax
    import minijax.numpy as jnp
    from minijax import lax

    def body(carry: Any, x: Any) -> Any:
        big = lambda v: jnp.sum(jnp.broadcast_to(v, (2**28,)))  # noqa: E731
        return lax.cond(x > 0, big, lambda v: v, carry), x

    f = lambda a, b: (a + b, lax.scan(body, 1.0, a)[0])  # noqa: E731
    (d / "jaxpr.txt").write_text(str(minijax.make_jaxpr(f)(np.zeros(3, F32), np.zeros(3, F32)).jaxpr) + "\n")
    status, out, err = replay(d)
    assert_refused(status, out, err, "jaxpr.txt: the program's values need 2147483753 bytes")
    status, out, err = replay(d, "--max-bytes", str(2**29))
    assert_refused(status, out, err, "jaxpr.txt: a value of type f32[268435456] needs 1073741824 bytes")


# ---------------------------------------------------------------------------
# Malformed reproducers: each one a message, status 2


def _npz_members(d: pathlib.Path, **arrays: Any) -> None:
    (d / "inputs.npz").unlink()
    np.savez(d / "inputs.npz", **arrays)


def _raw_npy(d: pathlib.Path, header: str) -> None:
    """An inputs.npz whose arg0.npy has this header dict (and no data)."""
    text = header.ljust(118) + "\n"
    with zipfile.ZipFile(d / "inputs.npz", "w") as z:
        z.writestr("arg0.npy", b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode())
        z.writestr("arg1.npy", (d.parent / "keep.npy").read_bytes() if (d.parent / "keep.npy").exists() else b"")


def _truncate(d: pathlib.Path, name: str, keep: float) -> None:
    data = (d / name).read_bytes()
    (d / name).write_bytes(data[: int(len(data) * keep)])


def _flag_bits(d: pathlib.Path, bits: int) -> None:
    """Set general-purpose flag bits in every central-directory entry of inputs.npz."""
    data = bytearray((d / "inputs.npz").read_bytes())
    at = data.find(b"PK\x01\x02")
    while at >= 0:
        data[at + 8] |= bits
        at = data.find(b"PK\x01\x02", at + 4)
    (d / "inputs.npz").write_bytes(bytes(data))


def _loop(d: pathlib.Path) -> None:
    (d / "jaxpr.txt").unlink()
    os.symlink(d / "jaxpr.txt", d / "jaxpr.txt")


def _set(key: str, value: Any) -> Callable[[pathlib.Path], None]:
    return lambda d: edit_json(d, lambda m: m.__setitem__(key, value))


MALFORMED: dict[str, tuple[Callable[[pathlib.Path], None], str]] = {
    "x64 as a string": (_set("x64", "no"), "'x64' must be true or false, got the string 'no'"),
    "unknown kind": (_set("kind", "fuzz"), "'kind' is 'fuzz', not a kind of check"),
    "missing field": (lambda d: edit_json(d, lambda m: m.pop("options")), "the field 'options' is missing"),
    "unexpected field": (_set("shell", "rm -rf"), "unexpected field 'shell'"),
    "options not an object": (_set("options", [1]), "'options' must be an object"),
    "inputs not a list": (_set("inputs", "arg0"), "'inputs' must be a list"),
    "negative dimension": (lambda d: edit_json(d, lambda m: m["inputs"][0].update(shape=[-3])), "'shape'[0] is -3"),
    "unknown dtype": (lambda d: edit_json(d, lambda m: m["inputs"][0].update(dtype="object")), "'dtype' is 'object'"),
    "check.json not an object": (lambda d: (d / "check.json").write_text("[1, 2]"), "must hold a JSON object"),
    "check.json not JSON": (lambda d: (d / "check.json").write_text('{"kind": '), "not valid JSON"),
    "check.json not UTF-8": (lambda d: (d / "check.json").write_bytes(b'{"kind": "\xff"}'), "is not UTF-8 text"),
    "check.json deeply nested": (lambda d: (d / "check.json").write_text("[" * 100_000), "nested too deeply"),
    "check.json a directory": (lambda d: ((d / "check.json").unlink(), (d / "check.json").mkdir()), "is a directory"),
    "jaxpr.txt a symlink loop": (_loop, "symbolic link loop"),
    "jaxpr syntax": (lambda d: (d / "jaxpr.txt").write_text("{ lambda ; a:f32[3]. let"), "jaxpr.txt: jaxpr text, line 1"),
    "jaxpr ill typed": (lambda d: (d / "jaxpr.txt").write_text(
        "{ lambda ; a:f32[3] b:f32[3]. let c:f32[4] = add a b in (c,) }"), "check_jaxpr: result 0 of add is declared f32[4]"),
    "jaxpr unknown primitive": (lambda d: (d / "jaxpr.txt").write_text(
        "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = system a b in (c,) }"), "unknown primitive 'system'"),
    "jaxpr with constvars": (lambda d: (d / "jaxpr.txt").write_text(
        "{ lambda a:f32[3] ; b:f32[3]. let c:f32[3] = add a b in (c,) }"), "the jaxpr has constvars"),
    "inputs vs jaxpr shapes": (lambda d: edit_json(d, lambda m: m["inputs"][1].update(shape=[4])),
                               "input 1 is float32[4], but the jaxpr's input 1 is f32[3]"),
    "inputs vs jaxpr dtypes": (lambda d: edit_json(d, lambda m: m["inputs"][1].update(dtype="int32")), "input 1 is int32[3]"),
    "npz truncated": (lambda d: _truncate(d, "inputs.npz", 0.6), "not a readable .npz archive"),
    "npz not a zip": (lambda d: (d / "inputs.npz").write_text("hello"), "not a readable .npz archive"),
    "npz wrong key": (lambda d: _npz_members(d, arg0=np.zeros(3, F32), x=np.zeros(3, F32)), "unexpected member 'x.npy'"),
    "npz missing key": (lambda d: _npz_members(d, arg0=np.zeros(3, F32)), "no member arg1.npy"),
    "npz dtype mismatch": (lambda d: _npz_members(d, arg0=np.zeros(3, F32), arg1=np.zeros(3, np.int64)),
                           "arg1.npy: stored as <i8, but check.json says float32"),
    "npz pickled objects": (lambda d: _npz_members(d, arg0=np.array([None, 1, "x"], object), arg1=np.zeros(3, F32)),
                            "only plain numeric arrays are read (no pickles)"),
    "npz huge header shape": (lambda d: _raw_npy(d, "{'descr': '<f4', 'fortran_order': False, 'shape': (2**40,), }"),
                              "not a valid .npy header"),
    "npz header shape": (lambda d: _raw_npy(d, "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }"),
                         "arg0.npy: shape (1099511627776,), but check.json says (3,)"),
    "npz header lies about size": (lambda d: _raw_npy(d, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"),
                                   "the header says 12 bytes of data, but the member holds 0"),
    "npz strongly encrypted": (lambda d: _flag_bits(d, 0x40), "the member 'arg0.npy' is encrypted"),
    "file missing": (lambda d: (d / "inputs.npz").unlink(), "is not a reproducer: inputs.npz missing"),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_a_malformed_reproducer_is_a_message_with_status_2(name: str, valid: dict[str, pathlib.Path], tmp_path: pathlib.Path) -> None:
    d = copy(valid["primitive"], tmp_path / "r")
    change, fragment = MALFORMED[name]
    change(d)
    assert_refused(*replay(d), fragment)


@pytest.mark.parametrize("kind, options, fragment", [
    ("vmap", {"in_axes": [1, None], "out_axes": 0, "axis_size": 3}, "input 0 is float32[3, 2]"),
    ("vmap", {"in_axes": [7, None], "out_axes": 0, "axis_size": 2}, "'in_axes'[0] is 7, outside [-2, 1]"),
    ("vmap", {"in_axes": [1], "out_axes": 0, "axis_size": 2}, "'in_axes' has 1 entries"),
    ("vmap", {"in_axes": [1, None], "out_axes": 9, "axis_size": 2}, "'out_axes' is 9"),
    ("vmap", {"in_axes": [1, None], "out_axes": 0, "axis_size": -1}, "'axis_size' is -1"),
    ("jvp", {"positions": [0, 0]}, "'positions' must name distinct inputs"),
    ("jvp", {"positions": [5]}, "'positions'[0] is 5"),
    ("nested", {"transforms": ["vmap", "rm -rf"]}, "'transforms'[1] is the string 'rm -rf'"),
    ("nested", {"transforms": ["vmap", "grad", "grad", "grad", "grad", "grad", "grad"]}, "more than 4096"),
    ("nested", {"transforms": ["grad"]}, "one more axis than there are vmaps"),
])  # fmt: skip
def test_a_check_s_options_are_validated(kind: str, options: dict[str, Any], fragment: str,
                                         valid: dict[str, pathlib.Path], tmp_path: pathlib.Path) -> None:  # fmt: skip
    d = copy(valid[kind], tmp_path / "r")
    edit_json(d, lambda m: m.update(options=options))
    assert_refused(*replay(d), fragment)


def test_max_bytes_must_be_a_positive_integer(valid: dict[str, pathlib.Path], capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("1GiB", "0", "-5"):
        with pytest.raises(SystemExit) as e:
            main(["replay", str(valid["primitive"]), "--max-bytes", bad])
        assert e.value.code == 2
        assert "--max-bytes" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# The case corpus (conformance --cases)


def _corpus(tmp_path: pathlib.Path, case: str = "control_flow/cond_with_operands") -> pathlib.Path:
    root = tmp_path / "cases"
    (root / "g").mkdir(parents=True)
    for suffix in (".jaxpr", ".json"):
        shutil.copy(ROOT / "spec/cases" / (case + suffix), root / "g" / ("c" + suffix))
    return root


def conformance_cases(root: pathlib.Path, *extra: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["conformance", "--backend", "numpy", "--skip", "primitives", "--skip", "laws", "--skip",
                       "programs", "--quiet", "--cases", str(root), *extra])  # fmt: skip
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("change, fragment", [
    (lambda m: m.update(x64="no"), "'x64' must be true or false"),
    (lambda m: m["inputs"][0].update(shape=[10**6, 10**6]), "c.json: the inputs need"),
    (lambda m: m["inputs"][0].update(values="given", data=[1, 2], scale=None), "unexpected field 'scale'"),
    (lambda m: m["inputs"][0].update(values="given", data=[1, 2, 3, [4]]) or m["inputs"][0].pop("scale"),
     "'data'[3] is [4], not a float32 value"),
    (lambda m: m["inputs"][0].update(values="integers", low=0, high=2**70) or m["inputs"][0].pop("scale"),
     "'high' is 1180591620717411303424, outside"),
    (lambda m: m["inputs"][0].update(shape=[5]), "input 0 is float32[5], but the jaxpr's input 0 is f32[4]"),
    (lambda m: m.update(seed=-1), "'seed' is -1"),
    (lambda m: m["inputs"].append(3), "'inputs'[2] must be an object"),
])  # fmt: skip
def test_a_malformed_case_is_a_message_with_status_2(change: Callable[[dict[str, Any]], None], fragment: str,
                                                     tmp_path: pathlib.Path) -> None:  # fmt: skip
    root = _corpus(tmp_path)
    status, out, err = conformance_cases(root)
    assert status == 0, out + err
    meta = json.loads((root / "g/c.json").read_text())
    change(meta)
    (root / "g/c.json").write_text(json.dumps(meta))
    status, out, err = conformance_cases(root, "--max-bytes", str(2**20))
    assert status == 2 and err.startswith("minijax conformance: ") and fragment in err, err


def test_a_case_jaxpr_over_the_limit_is_refused(tmp_path: pathlib.Path) -> None:
    root = _corpus(tmp_path)
    status, out, err = conformance_cases(root, "--max-bytes", "40")
    assert status == 2 and "c.jaxpr: a value of type f32[4] needs 16 bytes" not in err
    assert "more than the limit of 40 (--max-bytes)" in err, err
    status, out, err = conformance_cases(tmp_path / "nowhere")
    assert status == 2 and "the case corpus is not a directory" in err


# ---------------------------------------------------------------------------
# The fuzz test


FUZZ_CASES = int(os.environ.get("MINIJAX_REPLAY_FUZZ", "1000"))
FUZZ_MAX_BYTES = 2**16
CASE_SECONDS = 10  # a replay running longer than this counts as a hang

_ODD_VALUES: list[Any] = [None, True, False, "no", "", "float32", "arg0", -1, 0, 1, 2, 3, 7, 4096, 10**8, 2**63, 2**70,
                          -(2**63), 1.5, float("nan"), [], [0], [None], [1, None], {}, {"a": 1}, ["vmap"] * 9]  # fmt: skip


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


def _mutate_json(rng: random.Random, text: str) -> str:
    meta = json.loads(text)
    path = rng.choice(list(_paths(meta))[1:])
    parent = meta
    for key in path[:-1]:
        parent = parent[key]
    move = rng.random()
    if move < 0.15 and isinstance(parent, dict):
        del parent[path[-1]]
    elif move < 0.25 and isinstance(parent, dict):
        parent["extra" + str(rng.randrange(3))] = rng.choice(_ODD_VALUES)
    elif move < 0.4:
        old = parent[path[-1]]
        parent[path[-1]] = (old + rng.choice([-2, -1, 1, 2, 1000])) if isinstance(old, int) and not isinstance(old, bool) else [old]
    else:
        parent[path[-1]] = rng.choice(_ODD_VALUES)
    return json.dumps(meta)


def _mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    move = rng.random()
    if move < 0.2 or not b:
        return bytes(b[: rng.randrange(len(b) + 1)])
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(b))
        if move < 0.7:
            b[i] = rng.randrange(256)
        elif move < 0.85:
            del b[i : i + rng.randint(1, 16)]
        else:
            b[i:i] = rng.randbytes(rng.randint(1, 16))
        if not b:
            break
    return bytes(b)


def _mutate_npz(rng: random.Random, d: pathlib.Path) -> None:
    """Bytes anywhere, or a member's header (shape, dtype) rewritten with a valid zip around it."""
    if rng.random() < 0.5:
        (d / "inputs.npz").write_bytes(_mutate_bytes(rng, (d / "inputs.npz").read_bytes()))
        return
    with zipfile.ZipFile(d / "inputs.npz") as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    name = rng.choice(sorted(members))
    header_end = members[name].index(b"\n") + 1
    header = members[name][10:header_end].decode("latin1")
    shape = rng.choice(["()", "(0,)", "(3,)", "(2, 3)", "(1099511627776,)", "(-1,)", "(2**40,)", "(3, 0, 99999999999)"])
    descr = rng.choice(["'<f4'", "'<f8'", "'>f4'", "'|O'", "'<i4'", "[('a', '<f4')]", "'<V4'", "'<U3'"])
    header = re.sub(r"'shape': \([^)]*\)", f"'shape': {shape}", header) if rng.random() < 0.6 else header
    header = re.sub(r"'descr': '[^']*'", f"'descr': {descr}", header) if rng.random() < 0.6 else header
    text = header.rstrip().ljust(len(header) - 1)[: max(len(header) - 1, 0)] + "\n"
    if len(text) != header_end - 10:
        text = header.strip().ljust(header_end - 11) + "\n"
    members[name] = members[name][:10] + text.encode("latin1") + members[name][header_end:]
    with zipfile.ZipFile(d / "inputs.npz", "w", rng.choice([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])) as z:
        for n, data in members.items():
            z.writestr(n, data)


_JAXPR_SWAPS = [("f32", "f64"), ("f32", "i32"), ("[3]", "[4]"), ("[3]", "[99999999999]"), ("[2]", "[1099511627776]"),
                ("add", "sub"), ("sin", "cos"), ("a", "b"), ("(", ""), (")", ""), ("{", ""), ("}", ""),
                ("in (", "in ("), ("length=", "length=9"), (".", ""), (":", ""), ("1", "99999999")]  # fmt: skip


def _mutate_jaxpr(rng: random.Random, text: str) -> str:
    if rng.random() < 0.3:
        return _mutate_bytes(rng, text.encode()).decode("utf-8", "replace")
    old, new = rng.choice(_JAXPR_SWAPS)
    hits = [m.start() for m in re.finditer(re.escape(old), text)]
    if not hits:
        return text[: rng.randrange(len(text) + 1)]
    i = rng.choice(hits)
    return text[:i] + new + text[i + len(old) :]


def _new_values(rng: random.Random, d: pathlib.Path) -> None:
    """The same arrays with other values (edge values too): the reproducer stays valid."""
    with np.load(d / "inputs.npz") as stored:
        arrays = {k: stored[k] for k in stored.files}
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1.0, 3.0])
    picked = {k: np.asarray(np.random.default_rng(rng.randrange(2**32)).choice(edges, v.shape)).astype(v.dtype)
              for k, v in arrays.items()}  # fmt: skip
    np.savez(d / "inputs.npz", **picked)


def mutate(rng: random.Random, d: pathlib.Path) -> str:
    """Apply one to three mutations to the reproducer ``d``; return what was mutated."""
    done = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        target = rng.choice(["check.json", "check.json", "inputs.npz", "jaxpr.txt", "values"])
        path = d / target
        if target == "values":
            if done:  # np.load of an inputs.npz already mutated could be a bomb itself
                continue
            with np.errstate(invalid="ignore", over="ignore"):
                _new_values(rng, d)
        elif not path.is_file():
            continue
        elif target == "check.json":
            try:
                path.write_text(_mutate_json(rng, path.read_text()))
            except (json.JSONDecodeError, UnicodeDecodeError, IndexError):  # an earlier byte mutation broke it
                path.write_bytes(_mutate_bytes(rng, path.read_bytes()))
        elif target == "inputs.npz":
            try:
                _mutate_npz(rng, d)
            except (zipfile.BadZipFile, ValueError, KeyError, EOFError, OSError, zlib.error):  # not a zip any more
                path.write_bytes(_mutate_bytes(rng, path.read_bytes()))
        else:
            path.write_text(_mutate_jaxpr(rng, path.read_bytes().decode("utf-8", "replace")))
        done.append(target)
    return "+".join(done)


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Hang


def test_fuzzed_reproducers_give_a_verdict_or_a_message(valid: dict[str, pathlib.Path], tmp_path: pathlib.Path) -> None:
    """Seeded mutations of valid reproducers: every outcome is a verdict (status 0 or 1) or
    ``minijax replay: ...`` with status 2 -- no traceback, no hang, no allocation over the limit."""
    rng = random.Random(22)
    counts = {"verdict": 0, "refused": 0}
    worst_peak = 0
    kinds = sorted(valid)
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for n in range(FUZZ_CASES):
            d = copy(valid[kinds[n % len(kinds)]], tmp_path / f"f{n}")
            what = mutate(rng, d)
            tracemalloc.start()  # only while replaying: tracing the mutations would double the test's time
            signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
            try:
                status, out, err = replay(d, "--max-bytes", str(FUZZ_MAX_BYTES))
            except _Hang:
                pytest.fail(f"case {n} ({what}) ran past {CASE_SECONDS}s: {d}")
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
            worst_peak = max(worst_peak, peak)
            if status == 2:
                assert out == "" and err.startswith("minijax replay: "), (n, what, err)
                counts["refused"] += 1
            else:
                assert status in (0, 1) and err == "" and re.match(r"(PASS|FAIL|ERROR|UNSUPPORTED): ", out), (n, what, out, err)
                counts["verdict"] += 1
            # What the program and the interpreter need besides the inputs and values the limit bounds.
            assert peak < 16 * FUZZ_MAX_BYTES + 2**23, (n, what, peak)
            shutil.rmtree(d)
    finally:
        signal.signal(signal.SIGALRM, old)
    print(f"fuzz: {FUZZ_CASES} cases, {counts['verdict']} verdicts, {counts['refused']} refused, "
          f"peak traced {worst_peak} bytes", file=sys.stderr)  # fmt: skip
    assert counts["verdict"] + counts["refused"] == FUZZ_CASES
    assert counts["verdict"] > FUZZ_CASES // 10 and counts["refused"] > FUZZ_CASES // 2  # the mutations reach both
