"""Tests for minijax.tree_util and minijax.tree.

Expected reprs, orders and messages were checked against real JAX (the oracle venv).
"""

from __future__ import annotations

import collections
import copy
import dataclasses
from typing import Any, NamedTuple

import pytest
from hypothesis import given, strategies as st

from minijax import tree as jtree, tree_util as tu

pytestmark = pytest.mark.single_backend  # pytrees; computes nothing on a backend


class Point(NamedTuple):
    x: Any
    y: Any


class Box:
    """A custom node with two children and a string of aux data."""

    def __init__(self, a: Any, b: Any, tag: str = "box") -> None:
        self.a, self.b, self.tag = a, b, tag

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Box) and (self.a, self.b, self.tag) == (other.a, other.b, other.tag))

    def __repr__(self) -> str:
        return f"Box({self.a!r}, {self.b!r}, {self.tag!r})"


tu.register_pytree_node(Box, lambda b: ((b.a, b.b), b.tag), lambda tag, kids: Box(*kids, tag))


# ----------------------------------------------------------------------------- strategies

leaves = st.one_of(st.integers(), st.text(max_size=3), st.floats(allow_nan=False), st.booleans())
keys = st.text(alphabet="abcdef", min_size=1, max_size=3)


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.tuples(children, children),
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(keys, children, max_size=3),
        st.dictionaries(keys, children, max_size=3).map(collections.OrderedDict),
        st.dictionaries(keys, children, max_size=3).map(lambda d: collections.defaultdict(list, d)),
        st.builds(Point, children, children),
        st.builds(Box, children, children, st.sampled_from(["p", "q"])),
    )


trees = st.recursive(st.one_of(leaves, st.none()), _containers, max_leaves=12)


def same(rebuilt: Any, original: Any) -> bool:
    """Equal, with exactly the same container types; an OrderedDict keeps its key order,
    while other dicts come back with their keys sorted."""
    a, b = rebuilt, original
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        order = list(b) if isinstance(b, collections.OrderedDict) else sorted(b)
        return (list(a) == order and getattr(a, "default_factory", None) == getattr(b, "default_factory", None)
                and all(same(a[k], b[k]) for k in a))
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, Box):
        return a.tag == b.tag and same(a.a, b.a) and same(a.b, b.b)
    return bool(a == b)


def follow(tree: Any, path: tu.KeyPath) -> Any:
    """The subtree that a key path names."""
    for key in path:
        if isinstance(key, tu.SequenceKey):
            tree = tree[key.idx]
        elif isinstance(key, tu.DictKey):
            tree = tree[key.key]
        elif isinstance(key, tu.GetAttrKey):
            tree = getattr(tree, key.name)
        else:
            tree = list(tu.flatten_one_level(tree)[0])[key.key]
    return tree


# ----------------------------------------------------------------------- round trips

@given(trees)
def test_flatten_unflatten_round_trip(tree: Any) -> None:
    leaves_, treedef = tu.tree_flatten(tree)
    assert treedef.num_leaves == len(leaves_)
    rebuilt = tu.tree_unflatten(treedef, leaves_)
    assert same(rebuilt, tree)
    assert tu.tree_structure(rebuilt) == treedef
    assert hash(tu.tree_structure(rebuilt)) == hash(treedef)
    assert all(tu.all_leaves([x]) for x in leaves_)


@given(trees)
def test_unflatten_with_new_leaves_and_map(tree: Any) -> None:
    leaves_, treedef = tu.tree_flatten(tree)
    tagged = treedef.unflatten(range(len(leaves_)))
    assert tu.tree_leaves(tagged) == list(range(len(leaves_)))
    assert tu.tree_structure(tagged) == treedef
    mapped = tu.tree_map(lambda x: ("m", x), tree)
    assert tu.tree_leaves(mapped, is_leaf=lambda x: isinstance(x, tuple) and x[:1] == ("m",)) == [
        ("m", x) for x in leaves_]
    assert treedef.flatten_up_to(tree) == leaves_


@given(trees)
def test_paths_name_their_leaves(tree: Any) -> None:
    pairs, treedef = tu.tree_flatten_with_path(tree)
    assert treedef == tu.tree_structure(tree)
    assert [x for _, x in pairs] == tu.tree_leaves(tree)
    for path, leaf in pairs:
        assert follow(tree, path) is leaf
    assert [p for p, _ in tu.tree_leaves_with_path(tree)] == [p for p, _ in pairs]
    assert tu.tree_map_with_path(lambda p, x: p, tree) == treedef.unflatten([p for p, _ in pairs])


@given(trees)
def test_children_and_node_counts(tree: Any) -> None:
    treedef = tu.tree_structure(tree)
    children = treedef.children()
    assert children == tu.treedef_children(treedef)
    if tu.treedef_is_leaf(treedef):
        assert treedef.num_nodes == 1 and children == []
    else:
        assert treedef.num_leaves == sum(c.num_leaves for c in children)
        assert treedef.num_nodes == 1 + sum(c.num_nodes for c in children)


@given(st.lists(st.tuples(st.integers(), st.integers(), st.integers()), min_size=1, max_size=4))
def test_transpose_swaps_levels_and_is_an_involution(rows: list[tuple[int, int, int]]) -> None:
    outer, inner = tu.tree_structure([0] * len(rows)), tu.tree_structure(rows[0])
    transposed = tu.tree_transpose(outer, inner, rows)
    assert transposed == tuple(list(col) for col in zip(*rows))
    assert tu.tree_transpose(inner, outer, transposed) == rows
    assert tu.tree_transpose(outer, None, rows) == transposed


@given(st.dictionaries(keys, st.integers(), max_size=6))
def test_dict_leaves_follow_sorted_keys(d: dict[str, int]) -> None:
    assert tu.tree_leaves(d) == [d[k] for k in sorted(d)]
    assert list(tu.tree_map(lambda x: x, d)) == sorted(d)
    assert tu.tree_structure(d).node_data() == (dict, sorted(d))


# ------------------------------------------------------------------------ semantics

def test_none_is_an_empty_node_and_dict_order() -> None:
    assert tu.tree_leaves([1, None, (None, 2)]) == [1, 2]
    assert tu.tree_leaves([1, None], is_leaf=lambda x: x is None) == [1, None]
    assert tu.tree_map(lambda x: x + 1, {"b": 1, "a": None}) == {"a": None, "b": 2}
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    assert tu.tree_leaves(od) == [1, 2]
    assert list(tu.tree_map(lambda x: x, od)) == ["b", "a"]
    dd = tu.tree_map(lambda x: x, collections.defaultdict(list, {"b": 1, "a": 2}))
    assert isinstance(dd, collections.defaultdict) and dd.default_factory is list
    assert list(dd) == ["a", "b"]


def test_subclasses_of_builtin_containers_are_leaves() -> None:
    class MyDict(dict):  # type: ignore[type-arg]
        pass

    d = MyDict(a=1)
    assert tu.tree_leaves([d]) == [d]
    assert tu.is_tree_node(dict) and not tu.is_tree_node(MyDict) and tu.is_tree_node(Point)


def test_is_leaf_stops_recursion() -> None:
    tree = [1, (2, 3), {"a": (4,)}]
    is_tuple = lambda x: isinstance(x, tuple)  # noqa: E731
    assert tu.tree_leaves(tree, is_leaf=is_tuple) == [1, (2, 3), (4,)]
    assert tu.tree_map(lambda x: x * 2, tree, is_leaf=is_tuple) == [2, (2, 3, 2, 3), {"a": (4, 4)}]
    pairs, _ = tu.tree_flatten_with_path(tree, is_leaf=lambda p, x: len(p) == 1, is_leaf_takes_path=True)
    assert [x for _, x in pairs] == [1, (2, 3), {"a": (4,)}]


def test_tree_map_several_trees_with_prefix() -> None:
    assert tu.tree_map(lambda a, b: a + b, (1, [2]), (10, [20])) == (11, [22])
    # The first tree's leaves may sit over whole subtrees of the others.
    assert tu.tree_map(lambda a, b: (a, b), (1, 2), ([3], {"x": 4})) == ((1, [3]), (2, {"x": 4}))
    assert tu.tree_map_with_path(lambda p, a, b: (tu.keystr(p), a + b), [5, (6,)], [1, (2,)]) == [
        ("[0]", 6), (("[1][0]", 8),)]


def test_reduce_all_and_all_leaves() -> None:
    assert tu.tree_reduce(lambda a, b: a + b, (1, 2, [3])) == 6
    assert tu.tree_reduce(lambda a, b: a + b, (1, 2, [3]), 10) == 16
    assert tu.tree_reduce(lambda a, b: a + b, (), 0) == 0
    assert tu.tree_reduce(lambda a, b: a + b, [[1], [2]], is_leaf=lambda x: isinstance(x, list) and len(x) == 1) == [
        1, 2]
    with pytest.raises(TypeError):
        tu.tree_reduce(lambda a, b: a + b, ())
    assert tu.tree_all((1, True, [])) and not tu.tree_all((1, [0]))
    assert tu.all_leaves([1, "a"]) and not tu.all_leaves([1, (2,)]) and not tu.all_leaves([1, None])
    assert tu.all_leaves([1, None], is_leaf=lambda x: x is None)


def test_broadcast() -> None:
    assert tu.tree_broadcast([1, 2], [(3, 4), {"a": 5}]) == [(1, 1), {"a": 2}]
    assert tu.tree_broadcast([1, None], [(3, 4), None]) == [(1, 1), None]


def test_treedef_helpers() -> None:
    assert tu.treedef_tuple([tu.tree_structure(1), tu.tree_structure([1, 2])]) == tu.tree_structure((0, [0, 0]))
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert tu.treedef_is_leaf(tu.tree_structure(None)) and tu.treedef_is_leaf(tu.tree_structure(()))
    assert not tu.treedef_is_leaf(tu.tree_structure((1,)))
    assert tu.tree_structure(1).unflatten([[3]]) == [3]
    assert tu.tree_structure(1).flatten_up_to([1, (2,)]) == [[1, (2,)]]
    assert tu.tree_structure((1, 2)).unflatten(iter([3, 4])) == (3, 4)
    assert tu.tree_structure([1, 2]).compose(tu.tree_structure((1, 2))) == tu.tree_structure([(1, 2), (3, 4)])
    assert tu.tree_structure(None).node_data() == (type(None), None)
    assert tu.tree_structure(1).node_data() is None
    assert tu.tree_structure(Point(1, 2)).node_data() == (Point, None)
    assert tu.tree_structure(Box(1, 2)).node_data() == (Box, "box")
    treedef = tu.tree_structure({"a": [1, 2]})
    assert copy.deepcopy(treedef).unflatten([3, 4]) == {"a": [3, 4]}
    leaf = tu.tree_structure(1)
    assert copy.copy(leaf).unflatten([5]) == 5 and copy.deepcopy(leaf).unflatten([5]) == 5


def test_tree_namespace_delegates() -> None:
    tree = {"b": (1, 2), "a": [3]}
    assert jtree.map(lambda x: x * 2, tree) == {"a": [6], "b": (2, 4)}
    assert jtree.leaves(tree) == [3, 1, 2]
    assert jtree.structure(tree) == tu.tree_structure(tree)
    leaves_, treedef = jtree.flatten(tree)
    assert jtree.unflatten(treedef, leaves_) == tree
    assert jtree.reduce(max, tree) == 3 and jtree.all(tree)
    assert [tu.keystr(p) for p, _ in jtree.leaves_with_path(tree)] == ["['a'][0]", "['b'][0]", "['b'][1]"]
    assert jtree.flatten_with_path(tree)[1] == treedef
    assert jtree.map_with_path(lambda p, x: len(p), tree) == {"a": [2], "b": (2, 2)}
    assert jtree.transpose(tu.tree_structure([0, 0]), None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert jtree.map is tu.tree_map


# ------------------------------------------------------------------ equality, hash, repr

def test_treedef_equality_and_hash() -> None:
    s = tu.tree_structure
    assert s((1, {"a": 2})) == s(("x", {"a": None.__class__}))
    assert hash(s((1, {"a": 2}))) == hash(s((3, {"a": 4})))
    assert s({"a": 1}) != s({"b": 1})
    assert s((1,)) != s([1])
    assert s(Point(1, 2)) != s((1, 2))
    assert s(Box(1, 2, "p")) != s(Box(1, 2, "q"))
    assert s([1, None]) != s([1, 2])
    assert s(collections.OrderedDict(a=1, b=2)) != s(collections.OrderedDict(b=2, a=1))
    assert s((1,)) != 5
    cache = {s((1, [2])): "hit"}
    assert cache[s(("a", ["b"]))] == "hit"


@pytest.mark.parametrize(("tree", "expected"), [
    ((1, {"b": [2, 3], "a": 4}), "PyTreeDef((*, {'a': *, 'b': [*, *]}))"),
    (None, "PyTreeDef(None)"),
    (1, "PyTreeDef(*)"),
    ((1,), "PyTreeDef((*,))"),
    ([None, (), {}], "PyTreeDef([None, (), {}])"),
    (Point(1, 2), "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))"),
    (collections.OrderedDict([("b", 1), ("a", 2)]), "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))"),
    (collections.defaultdict(list, {"b": 1, "a": 2}),
     "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))"),
    (Box(1, (2, 3), "aux"), "PyTreeDef(CustomNode(Box[aux], [*, (*, *)]))"),
    ({1: None, 0: [Point(1, None)]}, "PyTreeDef({0: [CustomNode(namedtuple[Point], [*, None])], 1: None})"),
])
def test_repr(tree: Any, expected: str) -> None:
    assert repr(tu.tree_structure(tree)) == expected


def test_children_repr() -> None:
    treedef = tu.tree_structure((1, {"b": [2, 3], "a": 4}))
    assert repr(treedef.children()) == "[PyTreeDef(*), PyTreeDef({'a': *, 'b': [*, *]})]"
    assert (treedef.num_leaves, treedef.num_nodes) == (4, 7)
    assert tu.tree_structure([None, (), {}]).num_nodes == 4


# ------------------------------------------------------------------------ key paths

def test_key_classes() -> None:
    assert (str(tu.SequenceKey(0)), str(tu.DictKey("a")), str(tu.DictKey(1))) == ("[0]", "['a']", "[1]")
    assert (str(tu.GetAttrKey("x")), str(tu.FlattenedIndexKey(3))) == (".x", "[<flat index 3>]")
    assert repr(tu.SequenceKey(0)) == "SequenceKey(idx=0)"
    assert repr(tu.DictKey("a")) == "DictKey(key='a')"
    assert repr(tu.GetAttrKey("n")) == "GetAttrKey(name='n')"
    assert repr(tu.FlattenedIndexKey(2)) == "FlattenedIndexKey(key=2)"
    assert tu.DictKey("a") == tu.DictKey("a") and hash(tu.DictKey("a")) == hash(tu.DictKey("a"))
    assert tu.SequenceKey(0) != tu.FlattenedIndexKey(0)
    assert tu.tree_leaves([tu.SequenceKey(0)]) == [tu.SequenceKey(0)]  # keys are leaves


def test_paths_and_keystr() -> None:
    tree = (1, {"b": [2, 3], "a": 4}, Point(5, 6), Box(7, 8))
    paths = [p for p, _ in tu.tree_leaves_with_path(tree)]
    assert [tu.keystr(p) for p in paths] == [
        "[0]", "[1]['a']", "[1]['b'][0]", "[1]['b'][1]", "[2].x", "[2].y", "[3][<flat index 0>]",
        "[3][<flat index 1>]"]
    assert paths[2] == (tu.SequenceKey(1), tu.DictKey("b"), tu.SequenceKey(0))
    assert tu.keystr(paths[2], simple=True, separator="/") == "1/b/0"
    assert tu.keystr(paths[2], separator="/") == "[1]/['b']/[0]"
    assert tu.keystr(paths[4], simple=True, separator=".") == "2.x"
    assert tu.keystr(()) == ""
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    assert [p for p, _ in tu.tree_leaves_with_path(od)] == [(tu.DictKey("b"),), (tu.DictKey("a"),)]
    assert tu.tree_leaves_with_path(5) == [((), 5)]
    assert tu.tree_leaves_with_path([None, 1]) == [((tu.SequenceKey(1),), 1)]


# --------------------------------------------------------------------- registration

def test_register_pytree_node_and_duplicates() -> None:
    class Pair:
        def __init__(self, a: Any, b: Any) -> None:
            self.a, self.b = a, b

    tu.register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, kids: Pair(*kids))
    out = tu.tree_map(lambda x: x + 1, Pair(1, [2]))
    assert isinstance(out, Pair) and (out.a, out.b) == (2, [3])
    with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration"):
        tu.register_pytree_node(Pair, lambda p: ((), None), lambda _, kids: Pair(0, 0))
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_pytree_node(tuple, lambda t: (t, None), lambda _, kids: tuple(kids))


def test_unflatten_receives_a_tuple_of_children() -> None:
    seen = []

    class Spy:
        pass

    tu.register_pytree_node(Spy, lambda s: ([1, 2], None), lambda _, kids: seen.append(kids) or Spy())
    tu.tree_map(lambda x: x, Spy())
    assert seen == [(1, 2)]


def test_registering_a_type_replaces_a_cached_classification() -> None:
    class Later:
        pass

    later = Later()
    assert tu.tree_leaves([later]) == [later]  # classified (and cached) as a leaf
    tu.register_pytree_node(Later, lambda _: ((), "reg"), lambda _, kids: Later())
    assert tu.tree_leaves([later]) == []
    Custom = collections.namedtuple("Custom", "x y")
    assert tu.tree_leaves(Custom(1, 2)) == [1, 2]
    tu.register_pytree_node(Custom, lambda c: ((c.y,), c.x), lambda x, kids: Custom(x, *kids))
    assert tu.tree_flatten(Custom(1, 2))[0] == [2]


def test_register_with_keys() -> None:
    class Named:
        def __init__(self, a: Any, b: Any) -> None:
            self.a, self.b = a, b

    tu.register_pytree_with_keys(
        Named, lambda n: (((tu.GetAttrKey("a"), n.a), (tu.GetAttrKey("b"), n.b)), None),
        lambda _, kids: Named(*kids))
    assert tu.tree_leaves(Named(1, 2)) == [1, 2]
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Named(1, [2]))] == [".a", ".b[0]"]

    class Both:
        def __init__(self, a: Any) -> None:
            self.a = a

    tu.register_pytree_node(Both, lambda b: ((b.a,), None), lambda _, kids: Both(*kids),
                            flatten_with_keys_func=lambda b: (((tu.DictKey("k"), b.a),), None))
    assert tu.tree_leaves_with_path(Both(3)) == [((tu.DictKey("k"),), 3)]


def test_register_pytree_node_class() -> None:
    @tu.register_pytree_node_class
    class K:
        def __init__(self, a: Any, b: Any) -> None:
            self.a, self.b = a, b

        def tree_flatten(self) -> tuple[tuple[Any, Any], str]:
            return (self.a, self.b), "meta"

        @classmethod
        def tree_unflatten(cls, aux: str, kids: Any) -> K:
            return cls(*kids)

    leaves_, treedef = tu.tree_flatten(K(1, [2]))
    assert leaves_ == [1, 2]
    assert repr(treedef) == "PyTreeDef(CustomNode(K[meta], [*, [*]]))"
    out = treedef.unflatten([5, 6])
    assert isinstance(out, K) and (out.a, out.b) == (5, [6])


def test_register_static() -> None:
    @tu.register_static
    class Static:
        def __init__(self, v: int) -> None:
            self.v = v

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Static) and self.v == other.v

        def __hash__(self) -> int:
            return hash(self.v)

        def __repr__(self) -> str:
            return f"Static({self.v})"

    leaves_, treedef = tu.tree_flatten([Static(1), 2])
    assert leaves_ == [2]
    assert repr(treedef) == "PyTreeDef([CustomNode(Static[Static(1)], []), *])"
    assert treedef.unflatten([3]) == [Static(1), 3]
    assert treedef != tu.tree_structure([Static(2), 2])


# ------------------------------------------------------------------------ dataclasses

def test_register_dataclass_as_decorator_infers_fields() -> None:
    @tu.register_dataclass
    @dataclasses.dataclass
    class State:
        x: Any
        y: Any
        name: str = dataclasses.field(default="n", metadata=dict(static=True))

    leaves_, treedef = tu.tree_flatten(State(1, 2))
    assert leaves_ == [1, 2]
    assert repr(treedef) == "PyTreeDef(CustomNode(State[('n',)], [*, *]))"
    assert treedef.node_data() == (State, ("n",))
    assert tu.tree_map(lambda v: v + 1, State(1, 2, "q")) == State(2, 3, "q")
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(State(1, 2))] == [".x", ".y"]
    assert tu.tree_structure(State(1, 2, "a")) != tu.tree_structure(State(1, 2, "b"))


def test_register_dataclass_explicit_fields() -> None:
    @dataclasses.dataclass
    class WithDefault:
        x: int
        y: int
        z: int = 0

    tu.register_dataclass(WithDefault, data_fields=["x"], meta_fields=["y"], drop_fields=["z"])
    leaves_, treedef = tu.tree_flatten(WithDefault(1, 2, 5))
    assert leaves_ == [1]
    assert treedef.unflatten([7]) == WithDefault(7, 2, 0)  # dropped fields take their defaults

    @dataclasses.dataclass
    class NoInit:
        x: int
        z: int = dataclasses.field(default=0, init=False)

    assert tu.register_dataclass(NoInit, data_fields=["x"], meta_fields=[]) is NoInit
    assert tu.tree_leaves(NoInit(4)) == [4]

    class Plain:
        def __init__(self, a: Any, b: Any) -> None:
            self.a, self.b = a, b

    tu.register_dataclass(Plain, data_fields=["a"], meta_fields=["b"])
    out = tu.tree_map(lambda v: v * 10, Plain(1, 2))
    assert (out.a, out.b) == (10, 2)


def test_register_dataclass_errors() -> None:
    @dataclasses.dataclass
    class D:
        x: int
        y: int

    with pytest.raises(ValueError, match=r"Missing fields: \{'y'\}"):
        tu.register_dataclass(D, data_fields=["x"], meta_fields=[])
    with pytest.raises(ValueError, match="Unexpected fields"):
        tu.register_dataclass(D, data_fields=["x", "y"], meta_fields=["q"])
    with pytest.raises(ValueError, match="must not overlap"):
        tu.register_dataclass(D, data_fields=["x", "y"], meta_fields=["x"])
    with pytest.raises(TypeError, match="must both be specified"):
        tu.register_dataclass(D, data_fields=["x"])
    with pytest.raises(TypeError, match="not a dataclass"):
        tu.register_dataclass(type("NotDC", (), {}))
    assert tu.tree_leaves(D(1, 2)) == [D(1, 2)]  # failed registrations left no trace


# --------------------------------------------------------------------------- Partial

def test_partial_is_a_pytree() -> None:
    def f(a: int, b: int, c: int = 0) -> int:
        return a + b + c

    p = tu.Partial(f, 1, c=3)
    assert p(2) == 6
    assert repr(p).startswith("Partial(<function")
    leaves_, treedef = tu.tree_flatten(p)
    assert leaves_ == [1, 3]
    assert repr(treedef) == f"PyTreeDef(CustomNode(Partial[{f!r}], [(*,), {{'c': *}}]))"
    q = tu.tree_map(lambda x: x * 10, p)
    assert isinstance(q, tu.Partial) and q(2) == 42
    assert treedef == tu.tree_structure(tu.Partial(f, 7, c=8))
    assert treedef != tu.tree_structure(tu.Partial(f, 7))
    # A Partial of a Partial keeps the inner one's arguments static.
    nested = tu.Partial(p, 2)
    assert nested() == 6 and tu.tree_leaves(nested) == [2]
    assert tu.tree_map(lambda x: x + 1, nested)() == 7


# ----------------------------------------------------------------------------- errors

def test_tree_map_structure_mismatch_messages() -> None:
    with pytest.raises(ValueError, match="different lengths of tuple at key path\n    tree_map tree\n"):
        tu.tree_map(lambda a, b: a, (1, 2), (1, 2, 3))
    with pytest.raises(ValueError, match=r"different types at key path\n    tree_map tree\[1\]"):
        tu.tree_map(lambda a, b: a, (1, (2, 3)), (1, 4))
    with pytest.raises(ValueError, match="different types") as info:
        tu.tree_map(lambda a, b: a, (1, 2), [1, 2])
    assert "<class 'tuple'>" in str(info.value) and "<class 'list'>" in str(info.value)
    with pytest.raises(ValueError, match="different pytree metadata"):
        tu.tree_map(lambda a, b: a, {"a": 1}, {"b": 1})
    with pytest.raises(ValueError, match="different numbers of pytree children"):
        tu.tree_map(lambda a, b: a, {"a": 1, "b": 2}, {"a": 1})
    with pytest.raises(ValueError, match=r"different types at key path\n    tree_map tree\[1\]"):
        tu.tree_map(lambda a, b: a, [1, None], [2, 3])  # None is not a prefix of a leaf
    with pytest.raises(ValueError, match=r"tree_map_with_path tree\[1\]"):
        tu.tree_map_with_path(lambda p, a, b: a, [5, (6,)], [1, (2, 3)])
    with pytest.raises(ValueError, match="different types"):
        tu.tree_map(lambda a, b: a, Point(1, 2), collections.namedtuple("Q", "x y")(1, 2))


def test_unflatten_wrong_leaf_count() -> None:
    treedef = tu.tree_structure((1, 2))
    with pytest.raises(ValueError, match="Too few leaves for PyTreeDef; expected 2, got 1"):
        tu.tree_unflatten(treedef, [1])
    with pytest.raises(ValueError, match="Too many leaves for PyTreeDef; expected 2."):
        treedef.unflatten([1, 2, 3])
    with pytest.raises(ValueError, match="Too few leaves"):
        tu.tree_structure(1).unflatten([])


@pytest.mark.parametrize(("prefix", "tree", "message"), [
    ((1, (2, 3)), (1, 2), "Expected tuple, got 2."),
    ((1, 2), [1, 2], "Expected tuple, got [1, 2]."),
    ((1, 2), (1, 2, 3), "Tuple arity mismatch: 3 != 2; tuple: (1, 2, 3)."),
    ([1], [1, 2], "List arity mismatch: 2 != 1; list: [1, 2]."),
    ({"a": 1}, {"b": 1}, "Dict key mismatch; expected keys: ['a']; present keys: ['b']."),
    (None, 1, "Expected None, got 1."),
    (Point(1, 2), (1, 2), "Expected named tuple, got (1, 2)."),
    (Box(1, 2), [1, 2], "Custom node type mismatch: expected type: "),
    (Box(1, 2, "p"), Box(1, 2, "q"), "Mismatch custom node data: p != q; value: Box(1, 2, 'q')."),
])
def test_flatten_up_to_errors(prefix: Any, tree: Any, message: str) -> None:
    with pytest.raises(ValueError) as info:
        tu.tree_structure(prefix).flatten_up_to(tree)
    assert str(info.value).startswith(message)


def test_transpose_and_dict_key_errors() -> None:
    with pytest.raises(TypeError, match="Mismatch"):
        tu.tree_transpose(tu.tree_structure([0, 0]), tu.tree_structure((0, 0)), [(1, 2), (3, 4, 5)])
    with pytest.raises(ValueError, match="Comparator raised exception while sorting pytree dictionary keys"):
        tu.tree_flatten({"b": 1, 1: 2})
    with pytest.raises(ValueError, match="can't tree-flatten"):
        tu.flatten_one_level(1)
