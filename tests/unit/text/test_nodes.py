"""The parse tree's nodes and remarks: what a node holds when a reader gives only its place."""

from __future__ import annotations

from accelconf.text.nodes import Node, Quirk


def test_a_node_given_only_its_place_is_a_plain_block_scalar_with_no_children() -> None:
    n = Node("scalar", 0, 3, 0, 0, 0, 3)
    assert (n.value, n.value12, n.raw, n.style, n.tag, n.pairs, n.items, n.flow) == (
        None,
        None,
        "",
        None,
        "",
        [],
        [],
        False,
    )
    assert Node("map", 0, 3, 0, 0, 0, 3).pairs is not n.pairs  # each node its own list


def test_a_node_keeps_the_children_it_is_given() -> None:
    key, value = Node("scalar", 0, 1, 0, 0, 0, 1), Node("scalar", 3, 4, 0, 3, 0, 4)
    pairs = [(key, value)]
    m = Node("map", 0, 4, 0, 0, 0, 4, pairs=pairs, flow=True)
    assert m.pairs is pairs and m.flow is True
    items = [value]
    s = Node("seq", 0, 4, 0, 0, 0, 4, items=items)
    assert s.items is items
    assert m != Node("map", 0, 4, 0, 0, 0, 4, pairs=pairs, flow=True)  # a node equals only itself


def test_a_quirk_without_an_offset_is_at_the_start() -> None:
    q = Quirk("duplicate-key", "duplicate key 'a'", 2, 0)
    assert (q.kind, q.message, q.line, q.col, q.offset) == ("duplicate-key", "duplicate key 'a'", 2, 0, 0)
