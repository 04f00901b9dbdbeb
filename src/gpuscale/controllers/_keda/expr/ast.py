"""The syntax tree the parser builds and the checker and evaluator walk: expr-lang
``ast/node.go``, with only the node kinds KEDA formulas reach."""

from __future__ import annotations

from dataclasses import dataclass

from gpuscale.controllers._keda.expr.runtime import Value

__all__ = [
    "ArrayLiteral",
    "Binary",
    "Builtin",
    "Call",
    "Chain",
    "Conditional",
    "Identifier",
    "Let",
    "Literal",
    "MapLiteral",
    "Member",
    "Node",
    "Pointer",
    "Predicate",
    "SequenceNode",
    "Slice",
    "Unary",
]


@dataclass(frozen=True)
class Node:
    """A syntax-tree node; ``offset`` is where its token starts in the source."""

    offset: int


@dataclass(frozen=True)
class Literal(Node):
    value: Value


@dataclass(frozen=True)
class Identifier(Node):
    name: str


@dataclass(frozen=True)
class Pointer(Node):
    name: str


@dataclass(frozen=True)
class Unary(Node):
    operator: str
    operand: Node


@dataclass(frozen=True)
class Binary(Node):
    operator: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Conditional(Node):
    condition: Node
    then: Node
    otherwise: Node


@dataclass(frozen=True)
class ArrayLiteral(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True)
class MapLiteral(Node):
    pairs: tuple[tuple[Node, Node], ...]


@dataclass(frozen=True)
class Member(Node):
    target: Node
    key: Node
    optional: bool = False


@dataclass(frozen=True)
class Chain(Node):
    inner: Node


@dataclass(frozen=True)
class Slice(Node):
    target: Node
    start: Node | None
    stop: Node | None


@dataclass(frozen=True)
class Call(Node):
    name: str
    arguments: tuple[Node, ...]


@dataclass(frozen=True)
class Builtin(Node):
    name: str
    arguments: tuple[Node, ...]


@dataclass(frozen=True)
class Predicate(Node):
    body: Node


@dataclass(frozen=True)
class Let(Node):
    name: str
    value: Node
    body: Node


@dataclass(frozen=True)
class SequenceNode(Node):
    items: tuple[Node, ...]
