"""Jaxpr text from someone else: reading it never runs code, nests boundedly,
takes time linear in its length and fails only with ``JaxprSyntaxError``.

``minijax replay DIR`` and ``minijax conformance --cases DIR`` parse text that
comes with a reproducer or a case corpus, so ``parse_jaxpr`` is an attack
surface (spec R5, R7, R8 in ``spec/jaxpr.md``).
"""

from __future__ import annotations

import gc
import os
import random
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minijax as jax
import minijax.numpy as jnp
from minijax import lax
from minijax.jaxpr import ClosedJaxpr, encode_name
from minijax.jaxpr_parse import MAX_NESTING, JaxprSyntaxError, param_constructors, parse_jaxpr, parse_param_value

pytestmark = pytest.mark.single_backend


def _cpu_seconds(fn: Callable[[], Any]) -> float:
    """The CPU time ``fn`` takes: other processes on a loaded machine do not count,
    nor do Python's garbage collections (whose cost grows with every live object)."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        fn()
        return time.process_time() - start
    finally:
        gc.enable()


def _with_param(value: str) -> str:
    return "{ lambda ; a:f32[3]. let b:f32[3] = exp[accuracy=" + value + "] a in (b,) }"


# --- values: a closed list of literal forms (R5) ---------------------------------------


def test_a_param_naming_a_shell_command_is_refused_and_runs_nothing(tmp_path):
    marker = tmp_path / "pwned"
    text = _with_param(f"np.testing._private.utils.os.system('touch\\x20{marker}')")
    with pytest.raises(JaxprSyntaxError, match=r"column 50: unknown param value constructor 'np\.testing\._private"):
        parse_jaxpr(text)
    assert not marker.exists()


@pytest.mark.parametrize(
    "value",
    [
        "__import__('os').system('true')",
        "eval('1')",
        "getattr(np, 'zeros')",
        "np.zeros((2,))",
        "np.dtype('O')",
        "dtype.__init__",
        "Precision.HIGH.value",
        "Precision.__class__",
        "Precision._member_map_",
        "GatherScatterMode.from_any('clip')",
        "GatherDimensionNumbers.__new__(GatherDimensionNumbers)",
        "dtype('O')",
        "dtype('V8000000000')",
        "dtype(np.float32)",
        "np.float32('1')",
        "np.uint8(300)",
        "(1, np.float32.__class__)",
    ],
)
def test_param_values_never_resolve_or_call_anything_unregistered(value):
    with pytest.raises(JaxprSyntaxError, match="line 1, column"):
        parse_jaxpr(_with_param(value))


@pytest.mark.parametrize(
    "text, message",
    [
        ("{ lambda ; a:i32[]. let b:key<fry>[] = random_seed[impl=nosuch] a in (b,) }", "param impl: ValueError"),
        (_with_param("GatherDimensionNumbers(offset_dims=(), nosuch=1)"), "GatherDimensionNumbers(...): TypeError"),
        (_with_param("SvdAlgorithm('nosuch')"), "SvdAlgorithm(...): ValueError"),
        ("{ lambda ; a:f32[1,,2]. let  in (a,) }", "expected"),
        ("{ lambda ; a:f32[]. let b:f32[] = add a 1.2.3:f32[] in (b,) }", "expected"),
        ("{ lambda ; a:u8[]. let b:u8[] = add a 300:u8[] in (b,) }", "literal 300:u8[] cannot be read"),
        ("{ lambda ; a:f32[" + "9" * 5000 + "]. let  in (a,) }", "bad type"),
    ],
)
def test_values_the_parser_or_a_registered_reader_refuses_are_syntax_errors(text, message):
    with pytest.raises(JaxprSyntaxError, match="line 1, column") as info:
        parse_jaxpr(text)
    assert message in str(info.value)


def test_registered_classes_are_classes():
    # The registry is looked up by one plain name; modules register classes only.
    assert param_constructors
    assert all(isinstance(cls, type) and "." not in name for name, cls in param_constructors.items())


@pytest.mark.parametrize(
    "text, value",
    [
        ("(np.int64(1), np.True_, np.False_)", (np.int64(1), np.True_, np.False_)),
        ("(np.float32(-inf), np.float16(0.5), np.uint32(7))", (np.float32(-np.inf), np.float16(0.5), np.uint32(7))),
        ("(dtype('int8'), dtype(bfloat16), dtype('bool'))", (np.dtype("int8"), np.dtype(jax.dtypes.bfloat16), np.dtype(bool))),
        ("Precision.HIGHEST", lax.Precision.HIGHEST),
        ("GatherScatterMode.CLIP", lax.GatherScatterMode.CLIP),
        ("('i', \"j\\n\")", ("i", "j\n")),
        ("[1, -2.5e-05, nan]", [1, -2.5e-05, float("nan")]),
    ],
)
def test_the_printers_literal_forms_read_back(text, value):
    got = parse_param_value(text)
    assert type(got) is type(value)
    assert repr(got) == repr(value)  # nan != nan; repr compares dtypes and scalar types too


# --- nesting (R8) -----------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1_000, 10_000])
@pytest.mark.parametrize("opener, closer", [("(", ")"), ("[", "]"), ("GatherScatterMode(", ")")])
def test_deeply_nested_brackets_are_a_syntax_error(depth, opener, closer):
    with pytest.raises(JaxprSyntaxError, match=f"nesting deeper than {MAX_NESTING} levels"):
        parse_jaxpr(_with_param(opener * depth + "1" + closer * depth))


def _nested_jit(depth: int) -> str:
    text = "{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }"
    for _ in range(depth):
        text = "{ lambda ; a:f32[]. let b:f32[] = jit[name=f jaxpr=" + text + "] a in (b,) }"
    return text


@pytest.mark.parametrize("depth", [MAX_NESTING, 1_000, 5_000])
def test_deeply_nested_jaxprs_are_a_syntax_error(depth):
    with pytest.raises(JaxprSyntaxError, match=f"nesting deeper than {MAX_NESTING} levels"):
        parse_jaxpr(_nested_jit(depth))


def test_a_chain_of_let_definitions_is_a_syntax_error_when_too_deep():
    # j{i} calls j{i-1}. In the printer's order (a caller before its callees)
    # the definitions read one after another; in the opposite order reading
    # the first reads them all within one another.
    n = 2 * MAX_NESTING
    lets = ["let j0 = { lambda ; a:f32[]. let b:f32[] = sin a in (b,) } in"]
    lets += [f"let j{i} = {{ lambda ; a:f32[]. let b:f32[] = jit[name=j{i - 1} jaxpr=j{i - 1}] a in (b,) }} in" for i in range(1, n)]
    main = f"{{ lambda ; a:f32[]. let b:f32[] = jit[name=j{n - 1} jaxpr=j{n - 1}] a in (b,) }}"
    read = parse_jaxpr("\n".join([*reversed(lets), main]))
    assert isinstance(read, ClosedJaxpr)
    with pytest.raises(JaxprSyntaxError, match="nesting deeper"):
        parse_jaxpr("\n".join([*lets, main]))


def test_nesting_within_the_limit_reads_back():
    text = _nested_jit(MAX_NESTING - 1)
    read = parse_jaxpr(text)
    assert str(read) == str(parse_jaxpr(str(read)))


def test_a_nearly_full_python_stack_gives_a_syntax_error_not_a_recursion_error():
    text = _nested_jit(MAX_NESTING // 2)
    limit = sys.getrecursionlimit()

    def deep(n: int) -> None:
        if n:
            deep(n - 1)
        else:
            parse_jaxpr(text)

    with pytest.raises(JaxprSyntaxError, match="nests too deeply"):
        deep(limit - 120)


# --- time linear in the text's length (R8) -------------------------------------------------


def _underscore_outputs(n: int) -> str:
    """A jit whose n results are all unused, each read as ``_`` by the inner jaxpr's outputs."""
    eqns = "; ".join("_:f32[] = sin a" for _ in range(n))
    outs = ", ".join("_" for _ in range(n))
    results = " ".join("_:f32[]" for _ in range(n))
    return (
        "{ lambda ; a:f32[]. let " + results + " = jit[name=f jaxpr={ lambda ; a:f32[]. let "
        + eqns + " in (" + outs + ") }] a in (a,) }"
    )


def _chain(n: int) -> str:
    names = [encode_name(i) for i in range(n + 1)]
    body = "\n    ".join(f"{names[i + 1]}:f32[3] = add {names[i]} 1.0:f32[]" for i in range(n))
    return "{ lambda ; a:f32[3]. let\n    " + body + f"\n  in ({names[n]},) }}"


def test_many_underscore_outputs_read_in_linear_time():
    text = _underscore_outputs(8_000)  # 8k outputs took 16 s when each scanned all the others
    seconds = _cpu_seconds(lambda: parse_jaxpr(text))
    assert seconds < 1.5
    small, large = (_cpu_seconds(lambda n=n: parse_jaxpr(_underscore_outputs(n))) for n in (2_000, 8_000))
    assert large / max(small, 1e-3) < 6  # 4x the text: ~4x the time (16x if quadratic)


# The figure is 100,000 equations in 2 s; PARSE_EQUATIONS sets the size
# (a smaller default keeps the suite quick; the bound scales with it).
EQUATIONS = int(os.environ.get("PARSE_EQUATIONS", "20000"))


def test_equations_read_in_linear_time():
    text = _chain(EQUATIONS)
    seconds = _cpu_seconds(lambda: parse_jaxpr(text))
    assert seconds < 2.0 * EQUATIONS / 100_000
    small, large = (_cpu_seconds(lambda n=n: parse_jaxpr(_chain(n))) for n in (EQUATIONS // 8, EQUATIONS // 2))
    assert large / max(small, 1e-3) < 6


def test_long_texts_of_other_shapes_read_in_linear_time():
    def many_jits(n: int) -> str:
        jit = "jit[name=f jaxpr={ lambda ; a:f32[]. let  in (a,) }] a; "
        return "{ lambda ; a:f32[]. let " + "".join(f"b{encode_name(i)}:f32[] = " + jit for i in range(n)) + "in (a,) }"

    for make, n in [(lambda n: _with_param("(" + "1, " * n + ")"), 20_000), (many_jits, 1_000)]:
        small, large = (_cpu_seconds(lambda k=k, make=make: parse_jaxpr(make(k))) for k in (n, 4 * n))
        assert large / max(small, 1e-3) < 6


def test_a_value_nested_in_many_jaxprs_is_read_once_not_once_per_level():
    payload = "('" + "x" * 100_000 + "',)"

    def nested(depth: int) -> str:
        text = "{ lambda ; a:f32[]. let b:f32[] = exp[accuracy=" + payload + "] a in (b,) }"
        for _ in range(depth):
            text = "{ lambda ; a:f32[]. let b:f32[] = jit[name=f jaxpr=" + text + "] a in (b,) }"
        return text

    shallow, deep = (_cpu_seconds(lambda d=d: parse_jaxpr(nested(d))) for d in (1, MAX_NESTING - 2))
    assert deep < 3 * shallow + 0.05


# --- nothing allocated in proportion to the declared shapes ---------------------------------


def test_reading_huge_declared_shapes_allocates_nothing_like_them():
    text = (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[100000,100000] = broadcast_in_dim[broadcast_dimensions=() shape=(100000, 100000) sharding=None] a\n"
        "    c:i32[100000,100000] = iota[dimension=0 dtype=int32 shape=(100000, 100000) sharding=None] \n"
        "  in (b, c) }"
    )
    tracemalloc.start()
    try:
        parse_jaxpr(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20  # 40 GB each, declared


# --- malformed text: JaxprSyntaxError and nothing else (R7) --------------------------------


def _body(c: Any, x: Any) -> tuple[Any, Any]:
    return c + jnp.sin(x), c * x


def _programs() -> list[str]:
    f32 = np.ones((3,), np.float32)
    progs = [
        jax.make_jaxpr(lambda x: jax.jit(lambda y: jax.jit(jnp.cos)(y) * 2.0)(x))(f32),
        jax.make_jaxpr(lambda x: lax.scan(_body, 0.0, x))(f32),
        jax.make_jaxpr(lambda p, x: lax.cond(p, jnp.sin, lambda y: y[:2].sum() + y, x))(True, f32),
        jax.make_jaxpr(lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, x)))(f32),
        jax.make_jaxpr(lambda x, i: x.at[i].get(mode="fill", fill_value=np.nan))(f32, np.array([0, 2])),
        jax.make_jaxpr(
            lambda a, b: lax.dot_general(a, b, (([1], [0]), ([], [])), precision=lax.Precision.HIGHEST)
        )(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)),
        jax.make_jaxpr(lambda k: jax.random.normal(jax.random.key(k), (2,)))(0),
    ]
    texts = [str(p) for p in progs]
    texts.append(
        "{ lambda ; a:f32[2,3]. let b:f32[2] = reduce_sum[axes=(np.int64(1),) out_sharding=None] a; "
        "c:i8[2] = convert_element_type[new_dtype=int8 weak_type=False] b in (c,) }"
    )
    return texts


_INSERTS = list("(){}[],;:=._ \n'\"-0123456789aefinx<>") + ["lambda", "let", "in", "_", "f32[]", "inf", "1e999", "((((", "np.", "dtype("]


def _mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 3)):
        if not text:
            return text
        i, j = sorted(rng.randrange(len(text) + 1) for _ in range(2))
        kind = rng.randrange(7)
        if kind == 0:  # delete a span
            text = text[:i] + text[j : j + 1 + (j - i) % 8] if j < len(text) else text[:i]
        elif kind == 1:  # insert a character or a token
            text = text[:i] + rng.choice(_INSERTS) + text[i:]
        elif kind == 2:  # duplicate a span
            text = text[:j] + text[i:j][:200] + text[j:]
        elif kind == 3 and j < len(text):  # swap two characters
            chars = list(text)
            chars[i], chars[j] = chars[j], chars[i]
            text = "".join(chars)
        elif kind == 4:  # swap two whitespace-separated tokens
            tokens = text.split(" ")
            a, b = rng.randrange(len(tokens)), rng.randrange(len(tokens))
            tokens[a], tokens[b] = tokens[b], tokens[a]
            text = " ".join(tokens)
        elif kind == 5:  # truncate
            text = text[:i]
        else:  # replace a digit run's character with a huge or odd number
            text = text[:i] + rng.choice(["9" * 5000, "-1", "0", "1.2.3", "99999999999999999999"]) + text[i + 1 :]
    return text


MUTATIONS = int(os.environ.get("PARSE_FUZZ_MUTATIONS", "1200"))


def test_mutated_jaxprs_parse_or_raise_a_syntax_error():
    texts = _programs()
    for text in texts:
        parse_jaxpr(text)  # the seeds are valid
    rng = random.Random(22)
    outcomes = {"parsed": 0, "syntax error": 0}
    start = time.monotonic()
    for n in range(MUTATIONS):
        mutated = _mutate(texts[n % len(texts)], rng)
        try:
            parse_jaxpr(mutated)
            outcomes["parsed"] += 1
        except JaxprSyntaxError:
            outcomes["syntax error"] += 1
        except Exception as e:  # noqa: BLE001 -- the point: nothing else may escape
            pytest.fail(f"mutation {n}: {type(e).__name__}: {e}\n{mutated}")
    assert outcomes["syntax error"] > MUTATIONS // 2  # the mutations do break the text
    assert time.monotonic() - start < 30
