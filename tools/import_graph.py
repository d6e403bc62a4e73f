"""The import graph of minijax and its two backends, and the layers it must respect.

Every ``import`` statement counts: at module level, inside a function, or
under ``if TYPE_CHECKING:``. An import hidden in a function is still a
dependency; it only moves the failure from import time to call time.

The layers below are the one list of which module belongs where. A module
may import modules of its own layer and of the layers before it, never of a
later one, and the graph has no cycles at all. ``tests/test_layers.py``
enforces both; ``docs/reading-the-core.md`` draws the picture.

    python tools/import_graph.py           # layers, cycles, upward and function-level imports
"""

from __future__ import annotations

import ast
import dataclasses
import pathlib
import sys
from collections.abc import Iterator

ROOT = pathlib.Path(__file__).resolve().parent.parent

# package -> its directory, relative to the repository root
PACKAGES = {"minijax": "minijax", "minijax_numpy": "backends/minijax_numpy", "minijax_xla": "backends/minijax_xla"}

# Bottom first. A pattern is a module name, or a package name followed by ".*"
# (the package's modules and subpackages, not the package's own __init__).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("minijax.config", "minijax.caching", "minijax.errors", "minijax.pretty", "minijax.dtypes",
                    "minijax.tree_util",
                    "minijax.source_info",  # remat (issue 20): equations' source positions
                    "minijax.monitoring",  # jax.monitoring: the events trace and compile report
                    "minijax.shape_poly")),  # polyexp (issue 20): symbolic dimensions
    ("ir", ("minijax.core", "minijax.jaxpr", "minijax.jaxpr_check", "minijax.jaxpr_parse", "minijax.jaxpr_passes",
            "minijax.jaxpr_graph", "minijax.debug_checks", "minijax.prng")),
    ("runtime", ("minijax.backend", "minijax.array", "minijax.placement", "minijax.dispatch",
                 "minijax.transfers",  # minijax.transfers: stagesx (issue 20), transfer guards
                 "minijax.mesh",  # sharding (issue 17): meshes and shardings, under the arrays that carry them
                 "minijax.sharding_rules",  # shtypes (issue 17): how each primitive's result sharding follows
                 "minijax.distributed")),  # mproc (issue 17): jax.distributed, read by the xla backend
    ("interpreters", ("minijax.interpreters", "minijax.interpreters.*")),
    ("primitives", ("minijax.primitives", "minijax.primitives.*")),
    ("transformations", ("minijax.api", "minijax.stages", "minijax.autodiff", "minijax.vectorization",
                         "minijax.custom_derivatives", "minijax.ad_checkpoint", "minijax.callbacks", "minijax.debug",
                         "minijax.debugger",  # jax.debug.breakpoint's jdb
                         # stagesx (issue 20): jax.export, jax.profiler
                         "minijax.export", "minijax.profiler",
                         # refs (issue 24): the Ref type, which jit's argument handling knows
                         "minijax.state")),
    ("libraries", ("minijax.custom_batching",  # customrules (issue 20)
                   "minijax.lax", "minijax.lax.*", "minijax.numpy", "minijax.numpy.*", "minijax.nn", "minijax.nn.*",
                   "minijax.scipy", "minijax.scipy.*", "minijax.random", "minijax.experimental",
                   "minijax.experimental.*", "minijax.typing", "minijax.tree", "minijax.image", "minijax.image.*",
                   "minijax.example_libraries", "minijax.example_libraries.*",
                   # jnpshape (issue 21): jax.ops, jax.flatten_util, jax.dlpack
                   "minijax.ops", "minijax.ops.*", "minijax.flatten_util", "minijax.dlpack",
                   # extend (issue 20): jax.extend, and jax._src.util for JAX's pages
                   "minijax.extend", "minijax.extend.*", "minijax._src", "minijax._src.*",
                   # sharding (issue 17): jax.sharding, shard_map
                   "minijax.sharding", "minijax.shard_map", "minijax.shard_map_eager",
                   "minijax.pmap",  # a shard_map over its devices, as JAX 0.10's
                   # refs (issue 24): jax.ref
                   "minijax.ref")),
    ("backends", ("minijax_numpy", "minijax_numpy.*", "minijax_xla", "minijax_xla.*")),
    ("package", ("minijax", "minijax.__main__", "minijax.cli", "minijax.test_util", "minijax.testing",
                 "minijax.testing.*",
                 # compat (issue 24): the jax alias and `minijax run`
                 "minijax.compat", "minijax.compat.*", "minijax.run")),
)  # fmt: skip

# The engine: everything below the public transformations and the libraries.
ENGINE_LAYERS = ("foundation", "ir", "runtime", "interpreters", "primitives")


@dataclasses.dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    in_function: bool


def module_files(root: pathlib.Path = ROOT) -> dict[str, pathlib.Path]:
    """module name -> its file, for every module of the three packages."""
    found = {}
    for package, directory in PACKAGES.items():
        base = root / directory
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            name = ".".join((package, *parts))
            found[name.removesuffix(".__init__")] = path
    return found


def imports(root: pathlib.Path = ROOT) -> list[Import]:
    """Every import of one of the three packages' modules by another, wherever the statement is."""
    files = module_files(root)
    found = []
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        for node, in_function in _import_nodes(ast.parse(path.read_text()), False):
            for target in _targets(node, name, is_package, files):
                if target != name:
                    found.append(Import(name, target, node.lineno, in_function))
    return found


def _import_nodes(node: ast.AST, in_function: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    for child in ast.iter_child_nodes(node):
        inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, inside
        yield from _import_nodes(child, inside)


def _targets(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool, files: dict[str, pathlib.Path]) -> list[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:  # a relative import, from the importer's package
            package = importer if is_package else importer.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}" if base else package
        # `from package import module` imports the module; `from module import name` the module.
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in files else base for alias in node.names]
    return [m for m in (_known_module(n, files) for n in names) if m is not None]


def _known_module(name: str, files: dict[str, pathlib.Path]) -> str | None:
    while name and name not in files:
        name = name.rpartition(".")[0]
    return name or None


def layers_of(module: str) -> list[str]:
    """The layers whose patterns match ``module`` (exactly one, when LAYERS is right)."""
    return [layer for layer, patterns in LAYERS
            if any(module == p or (p.endswith(".*") and module.startswith(p[:-1])) for p in patterns)]  # fmt: skip


def layer_of(module: str) -> str:
    homes = layers_of(module)
    if len(homes) != 1:
        raise LookupError(f"{module} is in the layers {homes}, not in one: fix LAYERS in tools/import_graph.py")
    return homes[0]


def layer_index(module: str) -> int:
    names = [layer for layer, _ in LAYERS]
    return names.index(layer_of(module))


def upward(found: list[Import]) -> list[Import]:
    """The imports of a module of a later layer than the importer's."""
    return [i for i in found if layer_index(i.imported) > layer_index(i.importer)]


def cycles(found: list[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    graph: dict[str, set[str]] = {}
    for i in found:
        graph.setdefault(i.importer, set()).add(i.imported)
        graph.setdefault(i.imported, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return sorted(components, key=len, reverse=True)


def main() -> int:
    found = imports()
    files = module_files()
    for layer, _ in LAYERS:
        members = [m for m in files if layer_of(m) == layer]
        lines = sum(len(files[m].read_text().splitlines()) for m in members)
        print(f"{layer:16} {len(members):3} modules {lines:6} lines")
    engine = [m for m in files if layer_of(m) in ENGINE_LAYERS]
    print(f"{'(engine)':16} {len(engine):3} modules {sum(len(files[m].read_text().splitlines()) for m in engine):6} lines")
    print("cycles:", cycles(found) or "none")
    for i in upward(found):
        print(f"upward: {i.importer} ({layer_of(i.importer)}) imports {i.imported} ({layer_of(i.imported)}), line {i.line}")
    for i in found:
        if i.in_function:
            print(f"in a function: {i.importer} imports {i.imported}, line {i.line}")
    return 1 if cycles(found) or upward(found) else 0


if __name__ == "__main__":
    sys.exit(main())
