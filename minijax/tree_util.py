"""Pytrees: nested containers of leaves, flattened to a list plus a `PyTreeDef`.

Behaves like `jax.tree_util`. Tuples, lists, dicts, None, namedtuples,
OrderedDict, defaultdict and registered types are nodes (matched by exact type);
everything else is a leaf. None is a node with no children, so it holds no leaf.
Plain dicts flatten in sorted-key order; an OrderedDict keeps its own order.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any, Self, TypeVar, cast

__all__ = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial",
    "PyTreeDef", "SequenceKey", "all_leaves", "equality_errors", "equality_errors_pytreedef",
    "flatten_one_level", "is_tree_node",
    "keystr", "register_dataclass", "register_pytree_node", "register_pytree_node_class",
    "register_pytree_with_keys", "register_pytree_with_keys_class", "register_static",
    "tree_all", "tree_broadcast", "tree_flatten", "tree_flatten_with_path", "tree_leaves",
    "tree_leaves_with_path", "tree_map", "tree_map_with_path", "tree_reduce",
    "tree_structure", "tree_transpose", "tree_unflatten", "treedef_children",
    "treedef_is_leaf", "treedef_tuple",
]

T = TypeVar("T")
Typ = TypeVar("Typ", bound=type)
KeyEntry = Any
KeyPath = tuple[KeyEntry, ...]
IsLeaf = Callable[..., bool] | None
FlattenFn = Callable[[Any], tuple[Iterable[Any], Any]]
UnflattenFn = Callable[[Any, Iterable[Any]], Any]
FlattenWithKeysFn = Callable[[Any], tuple[Iterable[tuple[KeyEntry, Any]], Any]]


# ------------------------------------------------------------------------------- keys

@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    """Position in a tuple or list; prints as `[0]`."""
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class DictKey:
    """Key of a dict; prints as `['a']`."""
    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """Attribute of a namedtuple or dataclass; prints as `.name`."""
    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True, slots=True)
class FlattenedIndexKey:
    """Child position in a custom node registered without keys."""
    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


_PLAIN_FIELD = {SequenceKey: "idx", DictKey: "key", GetAttrKey: "name", FlattenedIndexKey: "key"}


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """Render a key path, e.g. `[1]['b'].x`; `simple=True` drops brackets and quotes."""
    if not simple:
        return separator.join(str(k) for k in keys)
    return separator.join(_plain_key(k) for k in keys)


def _plain_key(key: KeyEntry) -> str:
    attr = _PLAIN_FIELD.get(type(key))
    return str(key) if attr is None else str(getattr(key, attr))


# --------------------------------------------------------------------------- registry

class _NodeType:
    """How one node type flattens. `kind` picks the repr and the error messages:
    "tuple", "list", "dict", "None", "namedtuple" or "custom"."""
    __slots__ = ("flatten", "flatten_with_keys", "kind", "type", "unflatten")

    def __init__(self, typ: type, kind: str, flatten: FlattenFn, unflatten: UnflattenFn,
                 flatten_with_keys: FlattenWithKeysFn | None = None) -> None:
        self.type, self.kind, self.flatten, self.unflatten = typ, kind, flatten, unflatten
        self.flatten_with_keys = flatten_with_keys or self._index_keys

    def _index_keys(self, x: Any) -> tuple[list[tuple[KeyEntry, Any]], Any]:
        kids, aux = self.flatten(x)
        return [(FlattenedIndexKey(i), k) for i, k in enumerate(kids)], aux


class _Dispatch(dict[type, "_NodeType | None"]):
    """type -> node type, or None for a leaf type. A miss classifies the type once and
    caches it, so the flatten hot path is one dict lookup per object, leaves included."""

    def __missing__(self, typ: type) -> _NodeType | None:
        node = _registry.get(typ)
        if node is None and issubclass(typ, tuple) and hasattr(typ, "_fields"):
            node = _NodeType(typ, "namedtuple", _as_is, lambda _, kids: typ(*kids),
                             lambda t: ([(GetAttrKey(f), v) for f, v in zip(t._fields, t)],
                                        None))
        self[typ] = node
        return node


_registry: dict[type, _NodeType] = {}  # explicitly registered types, builtins included
_dispatch = _Dispatch()


def _register(node: _NodeType) -> None:
    if node.type in _registry:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {node.type}.")
    _registry[node.type] = node
    _dispatch[node.type] = node  # replaces a cached leaf/namedtuple classification


def _as_is(xs: Any) -> tuple[Any, None]:
    return xs, None


def _seq_keys(xs: Sequence[Any]) -> tuple[list[tuple[KeyEntry, Any]], None]:
    return [(SequenceKey(i), x) for i, x in enumerate(xs)], None


def _sorted_keys(d: dict[Any, Any]) -> list[Any]:
    try:
        return sorted(d)
    except TypeError as e:
        raise ValueError(
            "Comparator raised exception while sorting pytree dictionary keys.") from e


def _dict_flatten(d: dict[Any, Any]) -> tuple[list[Any], list[Any]]:
    keys = _sorted_keys(d)
    return [d[k] for k in keys], keys


def _dict_keys(d: dict[Any, Any]) -> tuple[list[tuple[KeyEntry, Any]], Any]:
    keys = list(d) if type(d) is collections.OrderedDict else _sorted_keys(d)
    aux = keys if type(d) is dict else tuple(keys)
    if isinstance(d, collections.defaultdict):
        aux = (d.default_factory, aux)
    return [(DictKey(k), d[k]) for k in keys], aux


def _defaultdict_flatten(d: collections.defaultdict[Any, Any]) -> tuple[list[Any], Any]:
    vals, keys = _dict_flatten(d)
    return vals, (d.default_factory, tuple(keys))


for _node in [
    _NodeType(tuple, "tuple", _as_is, lambda _, kids: tuple(kids), _seq_keys),
    _NodeType(list, "list", _as_is, lambda _, kids: list(kids), _seq_keys),
    _NodeType(dict, "dict", _dict_flatten, lambda keys, kids: dict(zip(keys, kids)),
              _dict_keys),
    _NodeType(type(None), "None", lambda _: ((), None), lambda _, __: None),
    _NodeType(collections.OrderedDict, "custom", lambda d: (list(d.values()), tuple(d)),
              lambda keys, kids: collections.OrderedDict(zip(keys, kids)), _dict_keys),
    _NodeType(collections.defaultdict, "custom", _defaultdict_flatten,
              lambda aux, kids: collections.defaultdict(aux[0], zip(aux[1], kids)),
              _dict_keys),
]:
    _register(_node)


# -------------------------------------------------------------------------- treedefs

class PyTreeDef:
    """The structure of a pytree: its nodes and their data, with `*` for each leaf."""
    __slots__ = ("_aux", "_children", "_hash", "_node", "num_leaves")

    def __init__(self, node: _NodeType | None, aux: Any, children: tuple[PyTreeDef, ...],
                 num_leaves: int | None = None) -> None:
        # Runs once per node on every flatten, so flatten passes num_leaves in (it
        # knows it for free) and num_nodes, rarely needed, is computed on demand.
        self._node = node
        self._aux = aux
        self._children = children
        self.num_leaves: int = (num_leaves if num_leaves is not None else
                                1 if node is None else sum(c.num_leaves for c in children))
        self._hash: int | None = None

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self._children)

    def children(self) -> list[PyTreeDef]:
        return list(self._children)

    def node_data(self) -> tuple[type, Any] | None:
        """`(node type, aux data)` of the root, or None for a leaf."""
        return None if self._node is None else (self._node.type, self._aux)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        leaves = list(leaves)
        if len(leaves) < self.num_leaves:
            raise ValueError(f"Too few leaves for PyTreeDef; expected {self.num_leaves}, "
                             f"got {len(leaves)}")
        if len(leaves) > self.num_leaves:
            raise ValueError(f"Too many leaves for PyTreeDef; expected {self.num_leaves}.")
        return leaves[0] if self is _LEAF else self._build(iter(leaves))

    def _build(self, leaves: Iterator[Any]) -> Any:
        node = self._node
        assert node is not None  # leaves are taken inline below: saves a call per leaf
        kids = [next(leaves) if c is _LEAF else c._build(leaves) for c in self._children]
        return node.unflatten(self._aux, tuple(kids))

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """The subtrees of `tree` found where this treedef has leaves."""
        out: list[Any] = []
        self._up_to(tree, out)
        return out

    def _up_to(self, x: Any, out: list[Any]) -> None:
        node = self._node
        if node is None:
            out.append(x)
            return
        if _dispatch[type(x)] is not node:
            raise ValueError(_type_mismatch(node, x))
        kids, aux = node.flatten(x)
        kids = list(kids)
        if node.kind == "dict" and aux != self._aux:
            raise ValueError(f"Dict key mismatch; expected keys: {self._aux}; "
                             f"present keys: {aux}.")
        if len(kids) != len(self._children):
            what, value = (node.kind, node.kind) if node.kind in ("tuple", "list") else (
                "custom type", "value")
            raise ValueError(f"{what.capitalize()} arity mismatch: {len(kids)} != "
                             f"{len(self._children)}; {value}: {x!r}.")
        if aux != self._aux:
            raise ValueError(f"Mismatch custom node data: {self._aux} != {aux}; value: {x!r}.")
        for c, kid in zip(self._children, kids):
            c._up_to(kid, out)

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """This structure with every leaf replaced by `inner`."""
        if self._node is None:
            return inner
        return PyTreeDef(self._node, self._aux, tuple(c.compose(inner) for c in self._children))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        # Tuple == tries identity first, and all leaves are the one _LEAF: cheap on jit calls.
        return self is other or (
            self._node is other._node and self.num_leaves == other.num_leaves
            and self._aux == other._aux and self._children == other._children)

    def __copy__(self) -> PyTreeDef:
        return self  # immutable; and a copied _LEAF would break the `is _LEAF` tests

    def __deepcopy__(self, memo: Any) -> PyTreeDef:
        return self

    def __hash__(self) -> int:
        # Custom aux data need not be hashable (JAX allows a list), so only dict keys
        # go in; == settles the rest. Cached, since jit hashes treedefs on every call.
        if self._hash is None:
            node = self._node
            keys = tuple(self._aux) if node is not None and node.kind == "dict" else None
            # Reading the children's cached hashes directly skips a Python-level
            # __hash__ call per child (leaves included): ~2x faster on big trees.
            kids = tuple([c._hash or hash(c) for c in self._children])
            self._hash = hash((node and node.type, keys, kids))
        return self._hash

    def __repr__(self) -> str:
        return f"PyTreeDef({self._str()})"

    def _str(self) -> str:
        node = self._node
        if node is None:
            return "*"
        kids = [c._str() for c in self._children]
        if node.kind == "None":
            return "None"
        if node.kind == "tuple":
            return f"({', '.join(kids)}{',' if len(kids) == 1 else ''})"
        if node.kind == "list":
            return f"[{', '.join(kids)}]"
        if node.kind == "dict":
            return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(self._aux, kids)) + "}"
        name = node.type.__name__
        label = f"namedtuple[{name}]" if node.kind == "namedtuple" else f"{name}[{self._aux}]"
        return f"CustomNode({label}, [{', '.join(kids)}])"


_LEAF = PyTreeDef(None, None, ())  # the one leaf treedef: makes == and `is _LEAF` cheap
hash(_LEAF)  # cache it now, for the parents' __hash__


def _type_mismatch(node: _NodeType, x: Any) -> str:
    if node.kind == "None":
        return (f"Expected None, got {x!r}.\n\nNone is a pytree node with no children, not a"
                " prefix of other values. To use None as a placeholder, pass is_leaf=lambda"
                " x: x is None and handle None in the mapped function.")
    if node.kind == "namedtuple":
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return f"Named tuple type mismatch: expected type: {node.type}, tuple: {x!r}."
        return f"Expected named tuple, got {x!r}."
    if node.kind == "custom":
        return f"Custom node type mismatch: expected type: {node.type}, value: {x!r}."
    return f"Expected {node.kind}, got {x!r}."


# ------------------------------------------------------------------ flatten and friends

def _flatten(x: Any, is_leaf: IsLeaf, leaves: list[Any]) -> PyTreeDef:
    node = _dispatch[type(x)]
    if node is None or (is_leaf is not None and is_leaf(x)):
        leaves.append(x)
        return _LEAF
    start = len(leaves)
    kids, aux = node.flatten(x)
    children = []
    for k in kids:
        # Leaf children are taken inline rather than by a recursive call: most of a
        # pytree's objects are leaves, and this is the jit call path.
        if _dispatch[type(k)] is None:
            leaves.append(k)
            children.append(_LEAF)
        else:
            children.append(_flatten(k, is_leaf, leaves))
    return PyTreeDef(node, aux, tuple(children), len(leaves) - start)


def tree_flatten(tree: Any, is_leaf: IsLeaf = None) -> tuple[list[Any], PyTreeDef]:
    """The leaves of `tree`, left to right, and its structure."""
    leaves: list[Any] = []
    return leaves, _flatten(tree, is_leaf, leaves)


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: IsLeaf = None) -> list[Any]:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: IsLeaf = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: IsLeaf = None) -> Any:
    """Apply `f` leafwise; each tree in `rest` must have `tree`'s structure as a prefix."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:  # the common case; skips zip's tuple packing
        return treedef.unflatten([f(x) for x in leaves])
    others = _flatten_rest("tree_map tree", treedef, tree, rest, is_leaf)
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


def _flatten_rest(name: str, treedef: PyTreeDef, tree: Any, rest: Iterable[Any],
                  is_leaf: IsLeaf) -> list[list[Any]]:
    """`flatten_up_to` every tree in `rest`; on failure, explain where the trees differ."""
    out = []
    for other in rest:
        try:
            out.append(treedef.flatten_up_to(other))
        except Exception:
            message = _prefix_error(tree, other, is_leaf, (), name)
            if message is None:
                raise
            raise ValueError(message) from None
    return out


def _prefix_error(prefix: Any, full: Any, is_leaf: IsLeaf, path: KeyPath,
                  name: str) -> str | None:
    """Describe the first place where `prefix` is not a tree prefix of `full`."""
    node = None if is_leaf is not None and is_leaf(prefix) else _dispatch[type(prefix)]
    if node is None:
        return None

    def head(what: str) -> str:
        return (f"pytree structure error: {what} at key path\n    {name}{keystr(path)}\n"
                f"At that key path, the prefix pytree {name} has a subtree of type")

    if type(full) is not type(prefix):
        return (head("different types") + f"\n    {type(prefix)}\nbut at the same "
                f"key path the full pytree has a subtree of different type\n    {type(full)}.")
    if isinstance(prefix, (list, tuple)) and len(prefix) != len(full):
        kind = type(prefix).__name__
        return (head(f"different lengths of {kind}") + f" {kind} of length "
                f"{len(prefix)}, but the full pytree has one of length {len(full)}.")
    prefix_kids, prefix_aux = node.flatten_with_keys(prefix)
    full_kids, full_aux = node.flatten_with_keys(full)
    prefix_kids, full_kids = list(prefix_kids), list(full_kids)
    if len(prefix_kids) != len(full_kids):
        return (head("different numbers of pytree children") + f"\n    {type(prefix)}"
                f"\nwith {len(prefix_kids)} children: {_keys(prefix_kids)}\nbut the full pytree "
                f"has {len(full_kids)} children: {_keys(full_kids)}.")
    if prefix_aux != full_aux:
        return (head("different pytree metadata") + f"\n    {type(prefix)}\nwith "
                f"metadata\n    {prefix_aux!r}\nbut the full pytree has metadata\n    "
                f"{full_aux!r}.")
    for (key, p), (_, q) in zip(prefix_kids, full_kids, strict=True):
        found = _prefix_error(p, q, is_leaf, (*path, key), name)
        if found is not None:
            return found
    return None


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


def _keys(keyed: list[tuple[KeyEntry, Any]]) -> str:
    return keystr(tuple(k for k, _ in keyed), simple=True, separator=" ")


_MISSING: Any = _Missing()  # tree_reduce's "no initializer" (None is a valid one)


def tree_reduce(function: Callable[[T, Any], T], tree: Any, initializer: Any = _MISSING,
                is_leaf: IsLeaf = None) -> T:
    leaves = tree_leaves(tree, is_leaf)
    result: T = (functools.reduce(function, leaves) if initializer is _MISSING
                 else functools.reduce(function, leaves, initializer))
    return result


def tree_all(tree: Any, *, is_leaf: IsLeaf = None) -> bool:
    return all(tree_leaves(tree, is_leaf))


def all_leaves(iterable: Iterable[Any], is_leaf: IsLeaf = None) -> bool:
    """Whether every element of `iterable` is itself a leaf."""
    return all((is_leaf is not None and is_leaf(x)) or _dispatch[type(x)] is None
               for x in iterable)


def is_tree_node(typ: type) -> bool:
    return _dispatch[typ] is not None


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    node = _dispatch[type(tree)]
    if node is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    kids, aux = node.flatten(tree)
    return kids, aux


# ------------------------------------------------------------------- structural differences

Difference = tuple[KeyPath, str, str, str]


def equality_errors(tree1: Any, tree2: Any, is_leaf: IsLeaf = None) -> list[Difference]:
    """Where two pytrees differ in structure: (path, what tree1 has there, what
    tree2 has, why that differs), as JAX words it in the errors of its control
    flow ("... is a tuple of length 2 but ... is a list of length 2, so their
    Python types differ"). Leaves never differ: only structure is compared."""
    found: list[Difference] = []
    _equality_errors((), tree1, tree2, is_leaf, found)
    return found


class _LeafType(type):
    def __repr__(cls) -> str:
        return "pytree leaf"


class _Leaf(metaclass=_LeafType):
    """Stands for every leaf when two treedefs are compared (its type prints ``pytree leaf``)."""


def equality_errors_pytreedef(tree1: PyTreeDef, tree2: PyTreeDef) -> list[Difference]:
    """``equality_errors`` of two treedefs (a leaf is described as ``pytree leaf``)."""
    leaf = _Leaf()
    return equality_errors(tree1.unflatten([leaf] * tree1.num_leaves), tree2.unflatten([leaf] * tree2.num_leaves))


def _is_strict_leaf(x: Any, is_leaf: IsLeaf) -> bool:
    return (is_leaf is not None and is_leaf(x)) or _dispatch[type(x)] is None


def _equality_errors(path: KeyPath, t1: Any, t2: Any, is_leaf: IsLeaf, found: list[Difference]) -> None:
    if _is_strict_leaf(t1, is_leaf) and _is_strict_leaf(t2, is_leaf):
        return
    if type(t1) is not type(t2):
        found.append((path, str(type(t1)), str(type(t2)), "their Python types differ"))
        return
    if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
        found.append((path, f"{type(t1).__name__} of length {len(t1)}", f"{type(t2).__name__} of length {len(t2)}",
                      "the lengths do not match"))  # fmt: skip
        return
    children1, meta1 = flatten_one_level(t1)
    children2, meta2 = flatten_one_level(t2)
    kids1, kids2 = list(children1), list(children2)
    keys1, keys2 = _child_keys(t1), _child_keys(t2)
    if len(kids1) != len(kids2):
        different = set(keys1) ^ set(keys2)
        # Listed when every key has one (dict keys do); sorted, so that the message is the same every run.
        listed = " ".join(sorted(repr(k.key) for k in different)) if all(hasattr(k, "key") for k in different) else ""
        why = "the numbers of children do not match"
        if listed:
            why += f", with the symmetric difference of key sets: {{{listed}}}"
        found.append((path, f"{type(t1)} with {_children(len(kids1))}", f"{type(t2)} with {_children(len(kids2))}", why))
        return
    if meta1 != meta2:
        found.append((path, f"{type(t1)} with pytree metadata {_meta(meta1)}", f"{type(t2)} with pytree metadata {_meta(meta2)}",
                      "the pytree node metadata does not match"))  # fmt: skip
        return
    for key, k1, k2 in zip(keys1, kids1, kids2):
        _equality_errors((*path, key), k1, k2, is_leaf, found)


def _children(n: int) -> str:
    return f"{n} child{'ren' if n > 1 else ''}"


def _meta(meta: Any) -> str:
    return str(tuple(meta)) if isinstance(meta, list) else str(meta)  # a dict's keys, shown as JAX's tuple


def _child_keys(tree: Any) -> list[KeyEntry]:
    """The key of each child of ``tree``'s root (``SequenceKey(0)``, ``DictKey('a')``, ...)."""
    pairs = tree_flatten_with_path(tree, is_leaf=lambda x: x is not tree)[0]
    return [path[0] for path, _ in pairs]


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Turn an outer-of-inner pytree into an inner-of-outer one."""
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    flat, treedef = tree_flatten(pytree_to_transpose)
    inner, outer = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner * outer:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{outer_treedef.compose(inner_treedef)}")
    rows = [flat[i * inner:(i + 1) * inner] for i in range(outer)]
    return inner_treedef.unflatten(outer_treedef.unflatten(col) for col in zip(*rows))


def tree_broadcast(prefix_tree: Any, full_tree: Any, is_leaf: IsLeaf = None) -> Any:
    """Repeat each leaf of `prefix_tree` over the matching subtree of `full_tree`."""
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    subtrees = _flatten_rest("tree_broadcast prefix tree", prefix_def, prefix_tree,
                             [full_tree], is_leaf)[0]
    return tree_structure(full_tree).unflatten(
        p for p, s in zip(prefix_leaves, subtrees) for _ in range(len(tree_leaves(s))))


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.num_nodes == 1


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    return PyTreeDef(_registry[tuple], None, tuple(treedefs))


# ------------------------------------------------------------------------- key paths

def _flatten_with_path(x: Any, is_leaf: IsLeaf, takes_path: bool, path: KeyPath,
                       out: list[tuple[KeyPath, Any]]) -> PyTreeDef:
    node = _dispatch[type(x)]
    if node is None or (is_leaf is not None and (is_leaf(path, x) if takes_path
                                                 else is_leaf(x))):
        out.append((path, x))
        return _LEAF
    keyed, aux = node.flatten_with_keys(x)
    return PyTreeDef(node, aux, tuple(
        [_flatten_with_path(k, is_leaf, takes_path, (*path, key), out) for key, k in keyed]))


def tree_flatten_with_path(tree: Any, is_leaf: IsLeaf = None, is_leaf_takes_path: bool = False,
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Like `tree_flatten`, but each leaf comes with its key path."""
    out: list[tuple[KeyPath, Any]] = []
    return out, _flatten_with_path(tree, is_leaf, is_leaf_takes_path, (), out)


def tree_leaves_with_path(tree: Any, is_leaf: IsLeaf = None, is_leaf_takes_path: bool = False,
                          ) -> list[tuple[KeyPath, Any]]:
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: IsLeaf = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """Like `tree_map`, but `f` gets each leaf's key path first: `f(path, x, *xs)`."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = _flatten_rest("tree_map_with_path tree", treedef, tree, rest,
                           None if is_leaf_takes_path else is_leaf)
    return treedef.unflatten(
        [f(path, x, *xs) for (path, x), *xs in zip(pairs, *others)] if others
        else [f(path, x) for path, x in pairs])


# ---------------------------------------------------------------------- registration

def register_pytree_node(
    nodetype: type[T], flatten_func: Callable[[T], tuple[Iterable[Any], Any]],
    unflatten_func: Callable[[Any, Iterable[Any]], T],
    flatten_with_keys_func: Callable[[T], tuple[Iterable[tuple[KeyEntry, Any]], Any]]
    | None = None,
) -> None:
    """Make `nodetype` a node: `flatten_func(x) -> (children, aux)` and
    `unflatten_func(aux, children) -> x`. aux must support ==; a hashable aux is best."""
    _register(_NodeType(nodetype, "custom", flatten_func, unflatten_func,
                        flatten_with_keys_func))


def register_pytree_with_keys(
    nodetype: type[T],
    flatten_with_keys: Callable[[T], tuple[Iterable[tuple[KeyEntry, Any]], Any]],
    unflatten_func: Callable[[Any, Iterable[Any]], T],
    flatten_func: Callable[[T], tuple[Iterable[Any], Any]] | None = None,
) -> None:
    """Like `register_pytree_node`, with a flatten that names each child's key."""
    def drop_keys(x: T) -> tuple[Iterable[Any], Any]:
        keyed, aux = flatten_with_keys(x)
        return [child for _, child in keyed], aux

    register_pytree_node(nodetype, flatten_func or drop_keys, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls: Typ) -> Typ:
    """Class decorator: uses `x.tree_flatten()` and `cls.tree_unflatten(aux, children)`."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cast(Any, cls).tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: Typ) -> Typ:
    """Class decorator: uses `tree_flatten_with_keys`, `tree_unflatten`, and `tree_flatten`
    if the class has one."""
    flatten = (lambda x: x.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(),
                              cast(Any, cls).tree_unflatten, flatten)
    return cls


def register_dataclass(nodetype: Typ, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> Typ:
    """Register a dataclass-like type: data fields are children, meta fields go in the
    treedef. With no field lists (e.g. as a bare decorator) every init field is data,
    except those declared with `field(metadata=dict(static=True))`."""
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required "
                            f"when nodetype is not a dataclass. Got nodetype={nodetype}.")
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    elif data_fields is None or meta_fields is None:
        raise TypeError("register_dataclass: data_fields and meta_fields must both be "
                        f"specified when either is specified. Got data_fields={data_fields}"
                        f" meta_fields={meta_fields}.")
    data, meta = list(data_fields), list(meta_fields)
    if overlap := set(data) & set(meta):
        raise ValueError(f"data_fields and meta_fields must not overlap. "
                         f"Overlapping fields: {overlap}.")
    if dataclasses.is_dataclass(nodetype):
        # Unflatten calls the constructor, so the lists must cover exactly the init fields.
        init = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        missing, extra = init - set(data) - set(meta), (set(data) | set(meta)) - init
        if missing or extra:
            raise ValueError(
                "data_fields and meta_fields must include all dataclass fields with "
                "``init=True`` and only them."
                + (f" Missing fields: {missing}. Add them to drop_fields to suppress this "
                   "error." if missing else "") + (f" Unexpected fields: {extra}." if extra
                                                   else ""))

    def flatten_with_keys(x: Any) -> tuple[list[tuple[KeyEntry, Any]], tuple[Any, ...]]:
        return [(GetAttrKey(n), getattr(x, n)) for n in data], tuple(getattr(x, n) for n in meta)

    register_pytree_node(
        nodetype,
        lambda x: ([getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)),
        lambda aux, kids: nodetype(**dict(zip(meta, aux)), **dict(zip(data, kids))),
        flatten_with_keys)
    return nodetype


def register_static(cls: Typ) -> Typ:
    """Make `cls` a node with no children: each value lives in the treedef, so it
    must be hashable and comparable."""
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


# --------------------------------------------------------------------------- Partial

class _Boxed:
    """Hides a partial from `functools.partial.__new__`, which would merge its
    arguments into the new one's: only a Partial's own arguments are its leaves."""
    __slots__ = ("fn",)

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Boxed) and self.fn == other.fn

    def __hash__(self) -> int:
        return hash(self.fn)

    def __repr__(self) -> str:
        return repr(self.fn)


class Partial(functools.partial[Any]):
    """A `functools.partial` that is a pytree: `func` is static, the positional and
    keyword arguments are children, so a closure over arrays can cross `jit`."""

    def __new__(cls, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Self:
        if isinstance(func, functools.partial):
            func = _Boxed(func)
        return super().__new__(cls, func, *args, **kwargs)


def _partial_unflatten(func: Any, kids: Iterable[Any]) -> Partial:
    args, kwargs = kids
    return Partial(func, *args, **kwargs)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func), _partial_unflatten)


# ------------------------------------------------------- jnpshape (issue 21): JAX's last three names


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[KeyEntry, Any]], Hashable]:
    """``tree``'s children, each with its key, and the node's auxiliary data (one level only)."""
    node = _dispatch[type(tree)]
    if node is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    keyed, aux = node.flatten_with_keys(tree)
    return tuple((key, kid) for key, kid in keyed), aux


class _Unspecified:
    def __repr__(self) -> str:
        return "<unspecified>"


_UNSPECIFIED: Any = _Unspecified()


def tree_reduce_associative(operation: Callable[[T, T], T], tree: Any, *, identity: Any = _UNSPECIFIED,
                            is_leaf: IsLeaf = None) -> T:  # fmt: skip
    """Reduce ``tree``'s leaves with an associative ``operation`` as a balanced tree of calls
    (depth log2(n)): the leaves split in halves, each half reduced, then the two combined."""
    return cast(T, _halving_reduce(tree_leaves(tree, is_leaf), operation, identity))


def _halving_reduce(seq: list[Any], operation: Callable[[Any, Any], Any], identity: Any) -> Any:
    if not seq:
        if identity is _UNSPECIFIED:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    if len(seq) == 1:
        return seq[0]
    half = len(seq) // 2
    return operation(_halving_reduce(seq[:half], operation, identity), _halving_reduce(seq[half:], operation, identity))


class PyTreeRegistry:
    """The registry of pytree node types, as an object (JAX's ``default_registry``).

    minijax has the one global registry; this object's methods are the
    module-level functions over it.
    """

    def flatten(self, tree: Any, leaf_predicate: IsLeaf = None) -> tuple[list[Any], PyTreeDef]:
        return tree_flatten(tree, leaf_predicate)

    def flatten_one_level(self, tree: Any) -> tuple[Iterable[Any], Any] | None:
        node = _dispatch[type(tree)]
        return None if node is None else node.flatten(tree)

    def flatten_one_level_with_keys(self, tree: Any) -> tuple[Iterable[tuple[KeyEntry, Any]], Any] | None:
        return None if _dispatch[type(tree)] is None else flatten_one_level_with_keys(tree)

    def flatten_with_path(self, tree: Any, leaf_predicate: Callable[[Any, Any], bool] | None = None,
                          ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:  # fmt: skip
        if leaf_predicate is None:
            return tree_flatten_with_path(tree)
        return tree_flatten_with_path(tree, leaf_predicate, is_leaf_takes_path=True)

    def is_node(self, type: Any) -> bool:  # noqa: A002  (JAX's parameter name)
        return isinstance(type, builtins_type) and _dispatch[type] is not None

    def register_node(self, type: Any, to_iterable: Any, from_iterable: Any,  # noqa: A002
                      to_iterable_with_keys: Any = None) -> None:  # fmt: skip
        if to_iterable_with_keys is None:
            register_pytree_node(type, to_iterable, from_iterable)
        else:
            register_pytree_node(type, to_iterable, from_iterable, to_iterable_with_keys)

    def register_dataclass_node(self, type: Any, data_fields: Sequence[str], meta_fields: Sequence[str],  # noqa: A002
                                /) -> None:  # fmt: skip
        register_dataclass(type, data_fields, meta_fields)

    def __repr__(self) -> str:
        return "<minijax.tree_util.PyTreeRegistry (the default registry)>"


builtins_type = type
default_registry = PyTreeRegistry()
__all__ += ["default_registry", "flatten_one_level_with_keys", "tree_reduce_associative"]
