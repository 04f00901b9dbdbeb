"""The Pratt parser: expr-lang ``parser/parser.go`` with ``parser/operator/operator.go``'s
precedence table.

Unary and binary operators, chained comparisons (``1 < x < 3``), ``?:`` and its elvis form,
``??`` (not mixable with other operators unbracketed), ``let`` bindings, ``;`` sequences,
``if {} else {}``, arrays, maps, member and index access, slices, ``|`` pipes, and the
predicate builtins' ``{# > 1}`` with ``#``, ``#index`` and ``#acc``.
"""

from __future__ import annotations

import re

from gpuscale._gomath import INT64_MAX, GoSyntaxError, parse_go_float
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
from gpuscale.controllers._keda.expr.builtin import BUILTINS, PREDICATES
from gpuscale.controllers._keda.expr.lexer import NEGATABLE, Lexer, Token, error_at
from gpuscale.controllers._keda.expr.runtime import Value
from gpuscale.controllers._keda.goparse import parse_go_int

__all__ = ["COMPARISONS", "Parser", "snake"]

_UNARY = {"not": 50, "!": 50, "-": 90, "+": 90}
_BINARY: dict[str, tuple[int, bool]] = {  # operator -> (precedence, right-associative)
    "|": (0, False),
    "or": (10, False),
    "||": (10, False),
    "and": (15, False),
    "&&": (15, False),
    "==": (20, False),
    "!=": (20, False),
    "<": (20, False),
    ">": (20, False),
    ">=": (20, False),
    "<=": (20, False),
    "in": (20, False),
    "matches": (20, False),
    "contains": (20, False),
    "startsWith": (20, False),
    "endsWith": (20, False),
    "..": (25, False),
    "+": (30, False),
    "-": (30, False),
    "*": (60, False),
    "/": (60, False),
    "%": (60, False),
    "**": (100, True),
    "^": (100, True),
    "??": (500, False),
}
COMPARISONS = frozenset(["<", ">", ">=", "<="])


class Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens = Lexer(source).tokens()
        self.current = next(self.tokens)
        self.stashed: Token | None = None
        self.depth = 0

    def error(self, message: str, token: Token | None = None) -> FormulaError:
        return error_at(self.source, message, (token or self.current).offset)

    def describe(self, token: Token) -> str:
        return "EOF" if token.kind == "EOF" else f'{token.kind}("{token.value}")'

    def advance(self) -> None:
        if self.stashed is not None:
            self.current, self.stashed = self.stashed, None
            return
        if self.current.kind == "EOF":
            raise self.error("unexpected end of expression")
        self.current = next(self.tokens)

    def at(self, kind: str, *values: str) -> bool:
        return self.current.kind == kind and (not values or self.current.value in values)

    def expect(self, kind: str, *values: str) -> None:
        if not self.at(kind, *values):
            raise self.error(f"unexpected token {self.describe(self.current)}")
        self.advance()

    def parse(self) -> Node:
        node = self.sequence()
        if not self.at("EOF"):
            raise self.error(f"unexpected token {self.describe(self.current)}")
        return node

    def sequence(self) -> Node:
        nodes = [self.expression(0)]
        while self.at("Operator", ";"):
            self.advance()
            if self.at("EOF"):
                break
            nodes.append(self.expression(0))
        if len(nodes) == 1:
            return nodes[0]
        return SequenceNode(nodes[0].offset, tuple(nodes))

    def expression(self, precedence: int) -> Node:
        if precedence == 0 and self.at("Operator", "let"):
            return self.let()
        if precedence == 0 and self.at("Operator", "if"):
            return self.conditional_if()
        left = self.primary()
        previous = ""
        op_token = self.current
        while op_token.kind == "Operator":
            negate = op_token.value == "not"
            if negate:
                backup = self.current
                self.advance()
                if self.current.value in NEGATABLE and self.current.kind == "Operator":
                    if _BINARY[self.current.value][0] >= precedence:
                        op_token = self.current
                    else:
                        self.stashed, self.current = self.current, backup
                        break
                else:
                    raise self.error(f"unexpected token {self.describe(self.current)}")
            spec = _BINARY.get(op_token.value)
            if spec is None or spec[0] < precedence:
                break
            op_precedence, right_assoc = spec
            self.advance()
            if op_token.value == "|":
                name = self.current
                self.expect("Identifier")
                left = self.call(name, [left])
            elif previous == "??" and op_token.value != "??":
                raise self.error(
                    f"Operator ({op_token.value}) and coalesce expressions (??) cannot be "
                    "mixed. Wrap either by parentheses.",
                    op_token,
                )
            elif op_token.value in COMPARISONS:
                left = self.comparison(left, op_token, op_precedence)
            else:
                right = self.expression(op_precedence if right_assoc else op_precedence + 1)
                left = Binary(op_token.offset, op_token.value, left, right)
                if negate:
                    left = Unary(op_token.offset, "not", left)
            previous = op_token.value
            op_token = self.current
        if precedence == 0:
            left = self.ternary(left)
        return left

    def let(self) -> Node:
        self.expect("Operator", "let")
        name = self.current
        self.expect("Identifier")
        self.expect("Operator", "=")
        value = self.expression(0)
        self.expect("Operator", ";")
        body = self.sequence()
        return Let(name.offset, name.value, value, body)

    def conditional_if(self) -> Node:
        start = self.current
        self.advance()
        condition = self.expression(0)
        self.expect("Bracket", "{")
        then = self.sequence()
        self.expect("Bracket", "}")
        self.expect("Operator", "else")
        if self.at("Operator", "if"):
            otherwise = self.conditional_if()
        else:
            self.expect("Bracket", "{")
            otherwise = self.sequence()
            self.expect("Bracket", "}")
        return Conditional(start.offset, condition, then, otherwise)

    def ternary(self, node: Node) -> Node:
        while self.at("Operator", "?"):
            question = self.current
            self.advance()
            if not self.at("Operator", ":"):
                then = self.expression(0)
                self.expect("Operator", ":")
                otherwise = self.expression(0)
            else:
                self.advance()
                then = node
                otherwise = self.expression(0)
            node = Conditional(question.offset, node, then, otherwise)
        return node

    def comparison(self, left: Node, token: Token, precedence: int) -> Node:
        root: Node | None = None
        while True:
            right = self.expression(precedence + 1)
            node = Binary(token.offset, token.value, left, right)
            root = node if root is None else Binary(token.offset, "&&", root, node)
            left = right
            token = self.current
            if not (token.kind == "Operator" and token.value in COMPARISONS):
                break
            self.advance()
        return root

    def primary(self) -> Node:
        token = self.current
        if token.kind == "Operator" and token.value in _UNARY:
            self.advance()
            operand = self.expression(_UNARY[token.value])
            return self.postfix(Unary(token.offset, token.value, operand))
        if self.at("Bracket", "("):
            self.advance()
            node = self.sequence()
            self.expect("Bracket", ")")
            return self.postfix(node)
        if self.depth > 0 and self.at("Operator", "#", "."):
            name = ""
            if token.value == "#":
                self.advance()
                if self.at("Identifier"):
                    name = self.current.value
                    self.advance()
            return self.postfix(Pointer(token.offset, name))
        if self.at("Operator", "::"):
            raise self.error("the :: operator is not supported by gpuscale's evaluator")
        return self.secondary()

    def secondary(self) -> Node:
        token = self.current
        node: Node
        if token.kind == "Identifier":
            self.advance()
            if token.value in ("true", "false"):
                return Literal(token.offset, token.value == "true")
            if token.value == "nil":
                return Literal(token.offset, None)
            if self.at("Bracket", "("):
                node = self.call(token, [])
            else:
                node = Identifier(token.offset, token.value)
        elif token.kind == "Number":
            self.advance()
            return Literal(token.offset, self.number(token))
        elif token.kind == "String":
            self.advance()
            node = Literal(token.offset, token.value)
        elif self.at("Bracket", "["):
            node = self.array()
        elif self.at("Bracket", "{"):
            node = self.map()
        else:
            raise self.error(f"unexpected token {self.describe(token)}")
        return self.postfix(node)

    def number(self, token: Token) -> Value:
        text = token.value.replace("_", "")
        lowered = text.lower()
        try:
            if lowered.startswith("0x"):
                return self.integer(int(text[2:], 16), token)
            if "." in lowered or "e" in lowered:
                return parse_go_float(text)
            if lowered.startswith("0b"):
                return self.integer(int(text[2:], 2), token)
            if lowered.startswith("0o"):
                return self.integer(int(text[2:], 8), token)
            return parse_go_int(text)
        except (ValueError, GoSyntaxError):
            kind = "float" if ("." in lowered or "e" in lowered) else "integer"
            raise self.error(f"invalid {kind} literal: {token.value}", token) from None

    def integer(self, value: int, token: Token) -> int:
        if value > INT64_MAX:
            raise self.error(f"invalid integer literal: {token.value}", token)
        return value

    def call(self, token: Token, arguments: list[Node]) -> Node:
        name = token.value
        if name in PREDICATES:
            self.expect("Bracket", "(")
            kinds = PREDICATES[name][len(arguments) :]
            for index, kind in enumerate(kinds):
                if kind.endswith("?"):
                    if self.at("Bracket", ")"):
                        break
                elif self.at("Bracket", ")"):
                    raise self.error(f"expected at least {len(kinds)} arguments")
                if index > 0:
                    self.expect("Operator", ",")
                arguments.append(self.predicate() if kind.startswith("p") else self.expression(0))
            if self.at("Operator", ","):
                self.advance()
            self.expect("Bracket", ")")
            return Builtin(token.offset, name, tuple(arguments))
        arguments = self.arguments(arguments)
        if name in BUILTINS:
            return Builtin(token.offset, name, tuple(arguments))
        return Call(token.offset, name, tuple(arguments))

    def arguments(self, arguments: list[Node]) -> list[Node]:
        offset = len(arguments)
        self.expect("Bracket", "(")
        while not self.at("Bracket", ")"):
            if len(arguments) > offset:
                self.expect("Operator", ",")
            if self.at("Bracket", ")"):
                break
            arguments.append(self.expression(0))
        self.expect("Bracket", ")")
        return arguments

    def predicate(self) -> Node:
        start = self.current
        brackets = self.at("Bracket", "{")
        if brackets:
            self.advance()
        self.depth += 1
        if brackets:
            body = self.sequence()
        else:
            body = self.expression(0)
            if self.at("Operator", ";"):
                raise self.error("wrap predicate with brackets { and }")
        self.depth -= 1
        if brackets:
            self.expect("Bracket", "}")
        return Predicate(start.offset, body)

    def array(self) -> Node:
        start = self.current
        self.expect("Bracket", "[")
        items: list[Node] = []
        while not self.at("Bracket", "]"):
            if items:
                self.expect("Operator", ",")
                if self.at("Bracket", "]"):
                    break
            items.append(self.expression(0))
        self.expect("Bracket", "]")
        return ArrayLiteral(start.offset, tuple(items))

    def map(self) -> Node:
        start = self.current
        self.expect("Bracket", "{")
        pairs: list[tuple[Node, Node]] = []
        while not self.at("Bracket", "}"):
            if pairs:
                self.expect("Operator", ",")
                if self.at("Bracket", "}"):
                    break
                if self.at("Operator", ","):
                    raise self.error(f"unexpected token {self.describe(self.current)}")
            key: Node
            if self.current.kind in ("Number", "String", "Identifier"):
                key = Literal(self.current.offset, self.current.value)
                self.advance()
            elif self.at("Bracket", "("):
                key = self.expression(0)
            else:
                raise self.error(
                    "a map key must be a quoted string, a number, a identifier, or an "
                    f"expression enclosed in parentheses (unexpected token "
                    f"{self.describe(self.current)})"
                )
            self.expect("Operator", ":")
            pairs.append((key, self.expression(0)))
        self.expect("Bracket", "}")
        return MapLiteral(start.offset, tuple(pairs))

    def postfix(self, node: Node) -> Node:
        while self.current.kind in ("Operator", "Bracket"):
            token = self.current
            optional = token.value == "?."
            if token.value in (".", "?."):
                self.advance()
                if optional and self.at("Bracket", "["):
                    node = self.index(node, self.current, optional=True)
                    continue
                prop = self.current
                self.advance()
                if prop.kind != "Identifier" and not (
                    prop.kind == "Operator" and prop.value.isidentifier()
                ):
                    raise self.error("expected name", prop)
                if self.at("Bracket", "("):
                    raise self.error("method calls are not supported by gpuscale's evaluator", prop)
                inner = node.inner if isinstance(node, Chain) else node
                member = Member(prop.offset, inner, Literal(prop.offset, prop.value), optional)
                node = Chain(prop.offset, member) if isinstance(node, Chain) or optional else member
            elif token.value == "[":
                node = self.index(node, token, optional=False)
            else:
                break
        return node

    def index(self, node: Node, token: Token, *, optional: bool) -> Node:
        self.advance()
        if self.at("Operator", ":"):
            self.advance()
            stop = None if self.at("Bracket", "]") else self.expression(0)
            self.expect("Bracket", "]")
            return Slice(token.offset, node, None, stop)
        start = self.expression(0)
        if self.at("Operator", ":"):
            self.advance()
            stop = None if self.at("Bracket", "]") else self.expression(0)
            self.expect("Bracket", "]")
            return Slice(token.offset, node, start, stop)
        member: Node = Member(token.offset, node, start, optional)
        if optional:
            member = Chain(token.offset, member)
        self.expect("Bracket", "]")
        return member


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
