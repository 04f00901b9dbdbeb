"""The type checker: expr-lang ``checker/checker.go`` (and ``checker/nature``), rejecting
at compile time what expr rejects for these constructs: unknown names, operators on
mismatched types, non-boolean conditions, bad builtin arguments."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpuscale.controllers._keda.errors import FormulaError
from gpuscale.controllers._keda.expr.ast import (
    ArrayLiteral,
    Binary,
    Builtin,
    Call,
    Chain,
    Conditional,
    Identifier,
    Let,
    Literal,
    MapLiteral,
    Member,
    Node,
    Pointer,
    Predicate,
    SequenceNode,
    Slice,
    Unary,
)
from gpuscale.controllers._keda.expr.builtin import BUILTINS, PREDICATES, UNSUPPORTED_BUILTINS
from gpuscale.controllers._keda.expr.lexer import error_at
from gpuscale.controllers._keda.expr.parser import COMPARISONS, snake
from gpuscale.controllers._keda.expr.runtime import is_int

__all__ = ["BOOL", "FLOAT", "FUNC", "INT", "MAP", "NIL", "STRING", "UNKNOWN", "Checker", "Nature"]


@dataclass(frozen=True)
class Nature:
    """What the checker knows about a value's type (checker/nature): a ``kind`` among
    unknown, nil, bool, int, float, string, array, map, func; arrays may know their
    element nature."""

    kind: str
    element: Nature | None = None

    @property
    def unknown(self) -> bool:
        return self.kind == "unknown"

    @property
    def number(self) -> bool:
        return self.kind in ("int", "float")

    def go_name(self) -> str:
        return {
            "unknown": "unknown",
            "nil": "nil",
            "int": "int",
            "float": "float64",
            "bool": "bool",
            "string": "string",
            "array": "[]interface {}",
            "map": "map[string]interface {}",
            "func": "func",
        }[self.kind]


UNKNOWN = Nature("unknown")
NIL = Nature("nil")
BOOL = Nature("bool")
INT = Nature("int")
FLOAT = Nature("float")
STRING = Nature("string")
MAP = Nature("map")
FUNC = Nature("func")


def _array_of(element: Nature | None) -> Nature:
    return Nature("array", element)


def _maybe_compatible(left: Nature, right: Nature, kinds: Sequence[str]) -> bool:
    return (
        (left.unknown and right.unknown)
        or (left.unknown and right.kind in kinds)
        or (right.unknown and left.kind in kinds)
    )


def _assignable(source: Nature, target: Nature) -> bool:
    if source.kind == "nil" and target.kind in ("map", "array", "func"):
        return True
    if source.unknown or target.unknown:
        return False
    return source.kind == target.kind


class Checker:
    def __init__(self, source: str, env: frozenset[str]) -> None:
        self.source = source
        self.env = env
        self.variables: list[tuple[str, Nature]] = []
        self.scopes: list[tuple[Nature, dict[str, Nature]]] = []

    def error(self, node: Node, message: str) -> FormulaError:
        return error_at(self.source, message, node.offset)

    def visit(self, node: Node) -> Nature:
        method: Callable[[Node], Nature] = getattr(self, "visit_" + snake(type(node).__name__))
        return method(node)

    def visit_literal(self, node: Literal) -> Nature:
        value = node.value
        if value is None:
            return NIL
        if isinstance(value, bool):
            return BOOL
        if isinstance(value, int):
            return INT
        if isinstance(value, float):
            return FLOAT
        return STRING

    def visit_identifier(self, node: Identifier) -> Nature:
        for name, nature in reversed(self.variables):
            if name == node.name:
                return nature
        if node.name in self.env:
            return FLOAT
        if node.name in BUILTINS:
            return FUNC
        raise self.error(node, f"unknown name {node.name}")

    def visit_pointer(self, node: Pointer) -> Nature:
        if not self.scopes:
            raise self.error(node, "cannot use pointer accessor outside predicate")
        collection, variables = self.scopes[-1]
        if node.name == "":
            if collection.unknown:
                return UNKNOWN
            if collection.kind == "array":
                return collection.element or UNKNOWN
            raise self.error(node, f"cannot use {collection.go_name()} as array")
        if node.name in variables:
            return variables[node.name]
        raise self.error(node, f"unknown pointer #{node.name}")

    def visit_unary(self, node: Unary) -> Nature:
        nature = self.visit(node.operand)
        if node.operator in ("!", "not"):
            if nature.kind == "bool" or nature.unknown:
                return BOOL
        elif nature.number:
            return nature
        elif nature.unknown:
            return UNKNOWN
        raise self.error(
            node, f"invalid operation: {node.operator} (mismatched type {nature.go_name()})"
        )

    def visit_binary(self, node: Binary) -> Nature:
        left = self.visit(node.left)
        right = self.visit(node.right)
        op = node.operator
        result = self.binary_nature(op, left, right, node)
        if (
            op == "%"
            and isinstance(node.right, Literal)
            and node.right.value == 0
            and isinstance(node.left, Literal)
            and is_int(node.left.value)
            and is_int(node.right.value)
        ):
            raise self.error(node, "integer divide by zero")
        if result is not None:
            return result
        raise self.error(
            node,
            f"invalid operation: {op} (mismatched types {left.go_name()} and {right.go_name()})",
        )

    def binary_nature(self, op: str, left: Nature, right: Nature, node: Node) -> Nature | None:
        if op in ("==", "!="):
            comparable = (
                left.unknown
                or right.unknown
                or left.kind == "nil"
                or right.kind == "nil"
                or (left.number and right.number)
                or (left.kind == "array" and right.kind == "array")
                or _assignable(left, right)
            )
            return BOOL if comparable else None
        if op in ("or", "||", "and", "&&"):
            if left.kind == "bool" and right.kind == "bool":
                return BOOL
            return BOOL if _maybe_compatible(left, right, ("bool",)) else None
        if op in COMPARISONS:
            if (left.number and right.number) or (left.kind == right.kind == "string"):
                return BOOL
            return BOOL if _maybe_compatible(left, right, ("int", "float", "string")) else None
        if op in ("-", "*", "+"):
            if left.number and right.number:
                return FLOAT if "float" in (left.kind, right.kind) else INT
            if op == "+" and left.kind == right.kind == "string":
                return STRING
            kinds = ("int", "float", "string") if op == "+" else ("int", "float")
            return UNKNOWN if _maybe_compatible(left, right, kinds) else None
        if op in ("/", "**", "^"):
            if left.number and right.number:
                return FLOAT
            return FLOAT if _maybe_compatible(left, right, ("int", "float")) else None
        if op == "%":
            if left.kind == right.kind == "int":
                return INT
            return INT if _maybe_compatible(left, right, ("int",)) else None
        if op == "in":
            if right.kind == "map" or right.unknown:
                return BOOL
            if right.kind == "array":
                element = right.element or UNKNOWN
                if not (
                    left.unknown
                    or element.unknown
                    or left.kind == "nil"
                    or element.kind == "nil"
                    or (left.number and element.number)
                    or _assignable(left, element)
                ):
                    raise self.error(
                        node, f"cannot use {left.go_name()} as type {element.go_name()} in array"
                    )
                return BOOL
            if left.unknown and right.kind in ("string", "array", "map"):
                return BOOL
            return None
        if op == "matches":
            raise self.error(node, "the matches operator is not supported by gpuscale's evaluator")
        if op in ("contains", "startsWith", "endsWith"):
            if left.kind == right.kind == "string":
                return BOOL
            return BOOL if _maybe_compatible(left, right, ("string",)) else None
        if op == "..":
            if (left.kind == right.kind == "int") or _maybe_compatible(left, right, ("int",)):
                return _array_of(INT)
            return None
        if op == "??":
            if left.kind == "nil" and right.kind != "nil":
                return right
            if left.kind != "nil" and right.kind == "nil":
                return left
            if left.kind == "nil":
                return NIL
            return left if _assignable(right, left) else UNKNOWN
        raise self.error(node, f"unknown operator ({op})")  # pragma: no cover - parser-guarded

    def visit_conditional(self, node: Conditional) -> Nature:
        condition = self.visit(node.condition)
        if condition.kind != "bool" and not condition.unknown:
            raise self.error(
                node.condition,
                f"non-bool expression (type {condition.go_name()}) used as condition",
            )
        then = self.visit(node.then)
        otherwise = self.visit(node.otherwise)
        if then.kind == "nil" and otherwise.kind != "nil":
            return otherwise
        if then.kind != "nil" and otherwise.kind == "nil":
            return then
        if then.kind == "nil":
            return NIL
        if _assignable(then, otherwise):
            if then.kind == "array" and then.element != otherwise.element:
                return _array_of(None)
            return then
        return UNKNOWN

    def visit_array_literal(self, node: ArrayLiteral) -> Nature:
        natures = [self.visit(item) for item in node.items]
        if natures and all(n.kind == natures[0].kind for n in natures):
            return _array_of(natures[-1])
        if not natures:
            return _array_of(None)
        return _array_of(None)

    def visit_map_literal(self, node: MapLiteral) -> Nature:
        for key, value in node.pairs:
            self.visit(key)
            self.visit(value)
        return MAP

    def visit_member(self, node: Member) -> Nature:
        target = self.visit(node.target)
        key = self.visit(node.key)
        if target.kind == "array":
            if not (key.kind == "int" or key.unknown):
                raise self.error(
                    node.key,
                    f"array elements can only be selected using an integer (got {key.go_name()})",
                )
            return target.element or UNKNOWN
        if target.kind in ("map", "unknown"):
            return UNKNOWN
        if target.kind == "nil" and node.optional:
            return UNKNOWN
        raise self.error(node, f"type {target.go_name()} has no field {_literal_text(node.key)}")

    def visit_chain(self, node: Chain) -> Nature:
        return self.visit(node.inner)

    def visit_slice(self, node: Slice) -> Nature:
        target = self.visit(node.target)
        for bound in (node.start, node.stop):
            if bound is not None:
                nature = self.visit(bound)
                if not (nature.kind == "int" or nature.unknown):
                    raise self.error(bound, "non-integer slice index " + nature.go_name())
        if target.kind in ("array", "unknown"):
            return target
        raise self.error(node, f"cannot slice {target.go_name()}")

    def visit_call(self, node: Call) -> Nature:
        callee = self.visit_identifier(Identifier(node.offset, node.name))
        if callee.unknown:
            return UNKNOWN
        raise self.error(node, f"{callee.go_name()} is not callable")

    def visit_predicate(self, node: Predicate) -> Nature:
        return self.visit(node.body)

    def visit_let(self, node: Let) -> Nature:
        if node.name in self.env:
            raise self.error(node, f"cannot redeclare {node.name}")
        if node.name in BUILTINS:
            raise self.error(node, f"cannot redeclare builtin {node.name}")
        if any(name == node.name for name, _ in self.variables):
            raise self.error(node, f"cannot redeclare variable {node.name}")
        value = self.visit(node.value)
        self.variables.append((node.name, value))
        result = self.visit(node.body)
        self.variables.pop()
        return result

    def visit_sequence_node(self, node: SequenceNode) -> Nature:
        result = UNKNOWN
        for item in node.items:
            result = self.visit(item)
        return result

    def visit_builtin(self, node: Builtin) -> Nature:
        name, args = node.name, node.arguments
        if name in UNSUPPORTED_BUILTINS:
            raise self.error(node, f"builtin {name} is not supported by gpuscale's evaluator")
        if name in PREDICATES:
            return self.predicate_builtin(node)
        natures = [self.visit(arg) for arg in args]
        if name in (
            "abs",
            "int",
            "float",
            "len",
            "ceil",
            "floor",
            "round",
            "string",
            "first",
            "last",
            "reverse",
            "keys",
            "values",
        ):
            if len(natures) != 1:
                raise self.error(
                    node, f"invalid number of arguments (expected 1, got {len(natures)})"
                )
            arg = natures[0]
            allowed = {
                "abs": ("int", "float"),
                "int": ("int", "float", "string"),
                "float": ("int", "float", "string"),
                "len": ("array", "map", "string"),
                "ceil": ("int", "float"),
                "floor": ("int", "float"),
                "round": ("int", "float"),
                "first": ("array",),
                "last": ("array",),
                "reverse": ("array",),
                "keys": ("map",),
                "values": ("map",),
            }.get(name)
            if allowed is not None and not (arg.unknown or arg.kind in allowed):
                raise self.error(node, f"invalid argument for {name} (type {arg.go_name()})")
            return {
                "abs": arg,
                "int": INT,
                "float": FLOAT,
                "len": INT,
                "ceil": FLOAT,
                "floor": FLOAT,
                "round": FLOAT,
                "string": STRING,
                "first": (arg.element or UNKNOWN) if arg.kind == "array" else UNKNOWN,
                "last": (arg.element or UNKNOWN) if arg.kind == "array" else UNKNOWN,
                "reverse": _array_of(arg.element) if arg.kind == "array" else _array_of(None),
                "keys": _array_of(None),
                "values": _array_of(None),
            }[name]
        if name in ("max", "min", "mean", "median"):
            if not natures:
                raise self.error(node, f"not enough arguments to call {name}")
            for arg in natures:
                if arg.unknown or arg.kind == "array":
                    return UNKNOWN
                if not arg.number:
                    raise self.error(node, f"invalid argument for {name} (type {arg.go_name()})")
            return natures[0] if name in ("max", "min") else FLOAT
        raise self.error(node, f"unknown builtin {name}")  # pragma: no cover

    def predicate_builtin(self, node: Builtin) -> Nature:
        name, args = node.name, node.arguments
        collection = self.visit(args[0])
        if collection.kind != "array" and not collection.unknown:
            raise self.error(
                args[0], f"builtin {name} takes only array (got {collection.go_name()})"
            )
        if len(args) == 1:
            if name == "count":
                return INT
            return UNKNOWN if collection.unknown else (collection.element or UNKNOWN)
        variables: dict[str, Nature] = {}
        if name in ("map", "reduce"):
            variables["index"] = INT
        if name == "reduce":
            variables["acc"] = UNKNOWN
        self.scopes.append((collection, variables))
        out = self.visit(args[1])
        self.scopes.pop()
        if name == "reduce":
            if len(args) == 3:
                self.visit(args[2])
            return out
        if name == "map":
            return _array_of(out)
        if name == "sum":
            return out
        if out.kind != "bool" and not out.unknown:
            raise self.error(args[1], f"predicate should return boolean (got {out.go_name()})")
        if name in ("all", "none", "any", "one"):
            return BOOL
        if name == "filter":
            return _array_of(collection.element) if collection.kind == "array" else _array_of(None)
        if name in ("count", "findIndex", "findLastIndex"):
            return INT
        return (collection.element or UNKNOWN) if collection.kind == "array" else UNKNOWN


def _literal_text(node: Node) -> str:
    return str(node.value) if isinstance(node, Literal) else "?"
