"""The ``minijax`` command: ``info``, ``tour``, ``conformance``, ``replay`` and ``run``.

``info`` reports what is installed: the version, every backend found through
the ``minijax.backends`` entry points with its devices (and, for xla, whether
a GPU plugin was found), the default backend and device, the x64 flag and the
persistent compilation cache.

``tour`` runs a few short snippets the way an interactive session would show
them (``>>>`` prompts, then each expression's value). The snippets are the
program: the text printed is exactly the text executed, so the tour cannot
drift from what it claims to show.

``conformance`` runs the differential suite of ``minijax.testing.conformance``
on a backend; ``replay DIR`` re-runs one reproducer it wrote
(``docs/conformance.md``). ``run script.py`` runs a JAX program on minijax (``minijax.run``, docs/ecosystem.md).
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import platform
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from typing import Any, TextIO

import numpy as np

import minijax
from minijax import backend as backend_module
from minijax.config import config, config_context
from minijax.run import run as run_script
from minijax.testing.defaults import (
    DEFAULT_EXAMPLES,
    DEFAULT_MAX_BYTES,
    DEFAULT_PROGRAM_EXAMPLES,
    DEFAULT_SEED,
    SECTIONS,
)

# One tour step: a title, a sentence saying what to notice, and the code.
_TOUR: list[tuple[str, str, str]] = [
    (
        "Arrays live on a backend device",
        "minijax is used through JAX's names; arrays are placed on the default backend.",
        """
        import minijax as jax
        import minijax.numpy as jnp
        jax.default_backend()
        jax.devices()
        x = jnp.arange(4.0)
        x
        """,
    ),
    (
        "jnp operations run eagerly",
        "With no transformation active, each operation runs right away on the backend.",
        """
        x * 2 + 1
        jnp.sin(x)
        jnp.sum(x)
        """,
    ),
    (
        "make_jaxpr shows the program a function stages out",
        "Tracing replaces the arguments by abstract values (shape and dtype) and records each primitive.",
        """
        def f(x):
            return jnp.sin(x) * 2.0 + x
        jax.make_jaxpr(f)(x)
        """,
    ),
    (
        "jit traces once per signature, then reuses the compiled program",
        "The list records each time g's Python body runs, i.e. each trace.",
        """
        traces = []
        @jax.jit
        def g(x):
            traces.append(x.shape)
            return jnp.sin(x) * 2.0 + x
        g(x)
        g(x + 1)
        traces
        g(jnp.arange(3.0))
        traces
        """,
    ),
]

_TOUR_END = (
    "The second call with f32[4] did not run g's body again: it went straight to the cached program.\n"
    "A new shape (f32[3]) is a new signature, so g was traced once more."
)


def _show_statement(source: str, out: TextIO) -> None:
    lines = source.splitlines()
    print(">>> " + lines[0], file=out)
    for line in lines[1:]:
        print("... " + line, file=out)


def run_snippet(code: str, namespace: dict[str, Any], out: TextIO) -> None:
    """Run ``code`` statement by statement, echoing it and each expression's value."""
    code = textwrap.dedent(code).strip("\n")
    module = ast.parse(code)
    for node in module.body:
        source = ast.get_source_segment(code, node, padded=True)
        # A decorator is part of its function, but get_source_segment starts at `def`.
        if isinstance(node, ast.FunctionDef) and node.decorator_list:
            first = node.decorator_list[0].lineno
            source = "\n".join(code.splitlines()[first - 1 : node.end_lineno])
        assert source is not None  # the node was parsed from `code` itself
        _show_statement(source, out)
        if isinstance(node, ast.Expr):
            value = eval(compile(ast.Expression(node.value), "<tour>", "eval"), namespace)
            if value is not None:
                print(repr(value), file=out)
        else:
            exec(compile(ast.Module([node], type_ignores=[]), "<tour>", "exec"), namespace)


def tour(backend: str | None, out: TextIO) -> int:
    if backend is not None and backend not in backend_module.backend_names():
        names = ", ".join(backend_module.backend_names())
        print(f"minijax tour: unknown backend {backend!r}; installed backends: {names}.", file=sys.stderr)
        return 2
    # jax_platforms names the default backend for this thread, which is what
    # every eager operation and jit call in the tour then uses.
    with config_context(jax_platforms=backend):
        name = backend_module.default_backend_name()
        print(f"A tour of minijax on the {name!r} backend.", file=out)
        namespace: dict[str, Any] = {}
        for i, (title, note, code) in enumerate(_TOUR, start=1):
            print(f"\n{i}. {title}\n   {note}\n", file=out)
            run_snippet(code, namespace, out)
    print("\n" + _TOUR_END, file=out)
    return 0


def info(out: TextIO) -> int:
    print(f"minijax {minijax.__version__} (distribution minijax-ref)", file=out)
    print(f"python {platform.python_version()}, numpy {np.__version__}", file=out)
    print(f"backends (entry-point group {backend_module.ENTRY_POINT_GROUP}):", file=out)
    for name in backend_module.backend_names():
        try:
            b = backend_module.get_backend(name)
            devices = ", ".join(repr(d) for d in b.devices())
            print(f"  {name}: platform {b.platform}, priority {b.priority}, devices [{devices}]", file=out)
            # Devices of other platforms (the CPUs when the main platform is a GPU).
            for kind in ("cpu", "gpu"):
                extra = [d for d in b.platform_devices(kind) if d not in b.devices()]
                if extra:
                    print(f"    also {kind}: [{', '.join(repr(d) for d in extra)}]", file=out)
            gpu = getattr(b, "gpu_status", None)
            if gpu is not None:
                print(f"    gpu: {gpu}", file=out)
        except Exception as e:  # one broken backend must not hide the others
            print(f"  {name}: failed to load: {type(e).__name__}: {e}", file=out)
    try:
        default = backend_module.default_backend_name()
    except RuntimeError as e:
        print(f"default backend: none ({e})", file=out)
        return 1
    print(f"default backend: {default}", file=out)
    device = backend_module.default_device()
    print(f"default device: {device!r} of the {device.backend.name!r} backend", file=out)
    print(f"x64 enabled: {config.jax_enable_x64} (set JAX_ENABLE_X64=1 to enable)", file=out)
    cache_dir = config.jax_compilation_cache_dir
    if cache_dir and config.jax_enable_compilation_cache:
        print(f"persistent compilation cache: {cache_dir}", file=out)
    else:
        print("persistent compilation cache: off (set JAX_COMPILATION_CACHE_DIR to a directory)", file=out)
    return 0


_NEEDS_HYPOTHESIS = (
    "needs hypothesis, which draws the cases: pip install hypothesis (or minijax-ref's dev extra)"
)


def conformance(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:  # the testing modules need hypothesis, an optional dependency
        from minijax.testing import conformance as suite
    except ModuleNotFoundError as e:
        if e.name != "hypothesis":
            raise
        print(f"minijax conformance {_NEEDS_HYPOTHESIS}", file=err)
        return 2
    # Hypothesis keeps caches in ./.hypothesis; a command should not litter the directory it runs in.
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(pathlib.Path(tempfile.gettempdir()) / "minijax-hypothesis")
    try:
        suite.import_modules(args.imports)
        sections = tuple(s for s in suite.SECTIONS if s not in set(args.skip))
        options = suite.Options(
            backend=args.backend,
            reference=args.reference,
            only=[n.strip() for n in args.only.split(",") if n.strip()] if args.only else None,
            slice=suite.parse_slice(args.slice) if args.slice else None,
            examples=args.examples,
            law_examples=args.law_examples,
            program_examples=args.program_examples,
            seed=args.seed,
            sections=sections,
            reproducers=pathlib.Path(args.reproducers),
            report=pathlib.Path(args.report) if args.report else None,
            cases=pathlib.Path(args.cases) if args.cases else None,
            max_bytes=args.max_bytes,
            progress=not args.quiet,
            jobs=args.jobs,
            imports=tuple(args.imports),
            jit=args.jit,
        )
        report = suite.run(options, out, err)
    except (ValueError, ImportError, suite.WorkerDied) as e:
        print(f"minijax conformance: {e}", file=err)
        return 2
    return 0 if report.ok else 1


def replay(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:  # the testing modules need hypothesis, an optional dependency
        from minijax.testing import checks, runner
    except ModuleNotFoundError as e:
        if e.name != "hypothesis":
            raise
        print(f"minijax replay {_NEEDS_HYPOTHESIS}", file=err)
        return 2
    try:
        checks.import_modules(args.imports)
        outcome, line = runner.replay(pathlib.Path(args.directory), args.backend, args.reference, args.max_bytes)
    except (ValueError, ImportError, FileNotFoundError) as e:
        print(f"minijax replay: {e}", file=err)
        return 2
    print(line, file=out)
    return 0 if outcome.passed else 1


def _add_conformance_parsers(commands: Any) -> None:
    p = commands.add_parser(
        "conformance",
        help="check a backend against the reference: every primitive, the transformation laws, the case corpus",
    )
    p.add_argument("--backend", metavar="NAME", required=True, help="the backend to check")
    p.add_argument("--reference", metavar="NAME", default="numpy", help="the backend to compare with (default: numpy)")
    p.add_argument("--only", metavar="PRIMS", default=None, help="comma-separated primitive names to check")
    p.add_argument("--slice", metavar="K/N", default=None,
                   help="check only the K-th of N slices of the primitives (every N-th from the K-th), "
                        "e.g. to spread a deep run over days")
    p.add_argument("--examples", metavar="N", type=int, default=DEFAULT_EXAMPLES,
                   help=f"hypothesis examples per primitive and dtype (default: {DEFAULT_EXAMPLES})")
    p.add_argument("--law-examples", metavar="N", type=int, default=None,
                   help="examples per law, primitive and dtype (default: half of --examples, at least 1)")
    p.add_argument("--program-examples", metavar="N", type=int, default=DEFAULT_PROGRAM_EXAMPLES,
                   help=f"random programs per kind (default: {DEFAULT_PROGRAM_EXAMPLES}; 0 for none)")
    p.add_argument("--seed", metavar="S", type=int, default=DEFAULT_SEED,
                   help=f"hypothesis seed (default: {DEFAULT_SEED}, so that runs repeat)")
    p.add_argument("--skip", metavar="SECTION", action="append", default=[], choices=SECTIONS,
                   help="leave out a section (repeatable): " + ", ".join(SECTIONS))
    p.add_argument("--report", metavar="FILE.json", default=None, help="write the results as JSON (docs/conformance.md)")
    p.add_argument("--reproducers", metavar="DIR", default="minijax-reproducers",
                   help="where failing checks are written (default: ./minijax-reproducers)")
    p.add_argument("--cases", metavar="DIR", default=None, help="the case corpus (default: spec/cases)")
    _add_max_bytes(p, "a case")
    p.add_argument("--import", metavar="MODULE", dest="imports", action="append", default=[],
                   help="import this module first, e.g. one that calls register_backend (repeatable)")
    p.add_argument("--jobs", metavar="N", type=int, default=1,
                   help="run the rows in N worker processes (default: 1, all in this one); the results "
                        "are the same as one process's")
    p.add_argument("--jit", action="store_true",
                   help="run each primitive under jit on the backend (its compiled path), against the reference "
                        "run eagerly: --backend numpy --reference numpy --jit checks a backend's jit against its eager")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    r = commands.add_parser("replay", help="re-run a reproducer written by `minijax conformance` and print its verdict")
    r.add_argument("directory", metavar="DIR")
    r.add_argument("--backend", metavar="NAME", default=None, help="run on this backend (default: the one it failed on)")
    r.add_argument("--reference", metavar="NAME", default=None, help="compare with this backend (default: as written)")
    r.add_argument("--import", metavar="MODULE", dest="imports", action="append", default=[],
                   help="import this module first, e.g. one that calls register_backend (repeatable)")
    _add_max_bytes(r, "the reproducer")


def _max_bytes(text: str) -> int:
    """``--max-bytes``: a positive whole number of bytes."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of bytes, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value


def _add_max_bytes(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--max-bytes", metavar="N", type=_max_bytes, default=DEFAULT_MAX_BYTES,
                        help=f"refuse {what} whose files, arrays or program values would need more than N bytes "
                             f"(default: {DEFAULT_MAX_BYTES}, 1 GiB)")  # fmt: skip


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="minijax",
        description="minijax: a small, readable re-implementation of JAX's core.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands.add_parser("info", help="version, installed backends and their devices, the default backend, x64")
    tour_parser = commands.add_parser("tour", help="a short tour: jnp operations, make_jaxpr, jit and its cache")
    tour_parser.add_argument("--backend", metavar="NAME", default=None, help="run the tour on this backend")
    _add_conformance_parsers(commands)
    # compat (issue 24): the script and its arguments are passed on untouched (main handles `run` first).
    commands.add_parser("run", help="run a JAX script on minijax: minijax run [-m module | script.py] [args ...]",
                        add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``minijax`` command; returns the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["run"]:
        return run_script(arguments[1:])
    args = _parser().parse_args(arguments)
    if args.command == "info":
        return info(sys.stdout)
    if args.command == "conformance":
        return conformance(args, sys.stdout, sys.stderr)
    if args.command == "replay":
        return replay(args, sys.stdout, sys.stderr)
    backend: str | None = args.backend
    return tour(backend, sys.stdout)


if __name__ == "__main__":
    raise SystemExit(main())
