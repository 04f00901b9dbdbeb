"""A subset of the expr-lang language, enough for KEDA ``scalingModifiers`` formulas.

KEDA compiles ``advanced.scalingModifiers.formula`` with github.com/expr-lang/expr
(v1.17.8 at the KEDA commit gpuscale follows) against an environment in which every
named trigger is a ``float64``, then runs it with the trigger values (``nil`` for a
trigger in ``scalingModifiers`` fallback). This module re-implements the part of that
language such formulas use, in four small stages that mirror expr's own packages:

- a lexer (``parser/lexer/state.go``): numbers with ``_`` separators and hex/octal/binary
  integers, strings, operators, ``//`` and ``/* */`` comments, ``not in``;
- a Pratt parser (``parser/parser.go`` with ``parser/operator/operator.go``'s precedence
  table): unary and binary operators, chained comparisons (``1 < x < 3``), ``?:`` and the
  ``?:`` elvis form, ``??`` (which cannot be mixed with other operators unbracketed),
  ``let`` bindings, ``;`` sequences, ``if {} else {}``, arrays, maps, member and index
  access, slices, ``|`` pipes, predicates ``{# > 1}`` with ``#``, ``#index`` and ``#acc``;
- a checker (``checker/checker.go``) that rejects what expr rejects at compile time for
  these constructs: unknown names, operators on mismatched types, non-boolean
  conditions, bad builtin arguments;
- an evaluator with Go's number semantics (``vm/runtime``): ``int`` is int64 and wraps,
  ``/`` and ``**`` always give ``float64``, ``%`` needs integers, mixed int/float
  arithmetic gives ``float64``, ``and``/``or`` short-circuit and need booleans.

Builtins: ``len abs ceil floor round int float string max min mean median sum count all
any none one filter map find findIndex findLast findLastIndex reduce first last reverse
keys values``. Other expr builtins and features (dates, ``matches``, methods, bytes,
``::``) raise ``FormulaError`` saying the evaluator does not support them, rather than
guessing. Every error names the line and column of the token it is about. The table
``tests/unit/controllers/data/keda_expr_oracle.json`` holds answers of the real expr
v1.17.8 for the formulas the tests evaluate.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from gpuscale._gomath import (
    INT64_MAX,
    GoSyntaxError,
    format_go_float,
    go_ceil,
    go_div,
    go_float_to_int64,
    go_floor,
    go_pow,
    parse_go_float,
    wrap_int64,
)
from gpuscale.controllers._keda.errors import FormulaError
from gpuscale.controllers._keda.goparse import GO_SPACE, parse_go_int

__all__ = ["Program", "compile_formula", "evaluate"]

Value = object  # None (nil) | bool | int (Go int) | float | str | list | dict

# --- lexer ---------------------------------------------------------------------------------

_KEYWORD_OPERATORS = frozenset(
    ["in", "or", "and", "matches", "contains", "startsWith", "endsWith", "let", "if", "else"]
)
_NEGATABLE = frozenset(["in", "matches", "contains", "startsWith", "endsWith"])


@dataclass(frozen=True)
class Token:
    """One lexeme: ``kind`` is Identifier, Number, String, Operator, Bracket or EOF."""

    kind: str
    value: str
    offset: int


def _alphabetic(char: str) -> bool:
    return char in "_$" or char.isalpha()


def _alphanumeric(char: str) -> bool:
    return _alphabetic(char) or char.isdecimal()


class _Lexer:
    """Produces tokens on demand, so an unlexable character is reported only when the
    parser reaches it, as expr's lexer does."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.pos = 0

    def error(self, message: str, offset: int) -> FormulaError:
        return _error(self.source, message, offset)

    def peek_char(self, ahead: int = 0) -> str:
        index = self.pos + ahead
        return self.source[index] if index < len(self.source) else ""

    def tokens(self) -> Iterator[Token]:
        src = self.source
        while True:
            while self.pos < len(src) and src[self.pos] in GO_SPACE:
                self.pos += 1
            if self.pos >= len(src):
                yield Token("EOF", "", max(len(src) - 1, 0))
                return
            start = self.pos
            char = src[start]
            if char in "'\"":
                yield Token("String", self._string(char), start)
            elif char == "`":
                end = src.find("`", start + 1)
                if end < 0:
                    raise self.error("literal not terminated", start)
                self.pos = end + 1
                yield Token("String", src[start + 1 : end], start)
            elif char in "bB" and self.peek_char(1) in ("'", '"'):
                raise self.error("byte literals are not supported by gpuscale's evaluator", start)
            elif "0" <= char <= "9" or (char == "." and "0" <= self.peek_char(1) <= "9"):
                yield Token("Number", self._number(), start)
            elif char == "?":
                self.pos += 1
                if self.peek_char() in (".", "?"):
                    self.pos += 1
                yield Token("Operator", src[start : self.pos], start)
            elif char == "/":
                self.pos += 1
                if self.peek_char() == "/":
                    end = src.find("\n", self.pos)
                    self.pos = len(src) if end < 0 else end + 1
                elif self.peek_char() == "*":
                    end = src.find("*/", self.pos + 1)
                    if end < 0:
                        raise self.error("unclosed comment", start)
                    self.pos = end + 2
                else:
                    yield Token("Operator", "/", start)
            elif char == "#":
                self.pos += 1
                if self.peek_char() == "#":
                    self.pos += 1
                yield Token("Operator", src[start : self.pos], start)
                name_start = self.pos
                while self.pos < len(src) and _alphanumeric(src[self.pos]):
                    self.pos += 1
                if self.pos > name_start:
                    yield Token("Identifier", src[name_start : self.pos], name_start)
            elif char in "|:":
                self.pos += 1
                if self.peek_char() == char:
                    self.pos += 1
                yield Token("Operator", src[start : self.pos], start)
            elif char in "([{)]}":
                self.pos += 1
                yield Token("Bracket", char, start)
            elif char in ",;%+-^":
                self.pos += 1
                yield Token("Operator", char, start)
            elif char in "&!=*<>":
                self.pos += 1
                if self.peek_char() in ("&", "=", "*"):
                    self.pos += 1
                yield Token("Operator", src[start : self.pos], start)
            elif char == ".":
                self.pos += 1
                if self.peek_char() == ".":
                    self.pos += 1
                yield Token("Operator", src[start : self.pos], start)
            elif _alphanumeric(char):
                while self.pos < len(src) and _alphanumeric(src[self.pos]):
                    self.pos += 1
                word = src[start : self.pos]
                if word == "not":
                    yield Token("Operator", "not", start)
                    yield from self._after_not()
                elif word in _KEYWORD_OPERATORS:
                    yield Token("Operator", word, start)
                else:
                    yield Token("Identifier", word, start)
            else:
                raise self.error(f"unrecognized character: U+{ord(char):04X} '{char}'", start)

    def _after_not(self) -> Iterator[Token]:
        src = self.source
        while self.pos < len(src) and src[self.pos] in GO_SPACE:
            self.pos += 1
        start = self.pos
        end = start
        while end < len(src) and _alphanumeric(src[end]):
            end += 1
        if src[start:end] in _NEGATABLE:
            self.pos = end
            yield Token("Operator", src[start:end], start)

    def _number(self) -> str:
        src = self.source
        start = self.pos
        digits = "0123456789_"
        if self.peek_char() == "0":
            self.pos += 1
            prefix = self.peek_char()
            if prefix in ("x", "X"):
                digits = "0123456789abcdefABCDEF_"
                self.pos += 1
            elif prefix in ("o", "O"):
                digits = "01234567_"
                self.pos += 1
            elif prefix in ("b", "B"):
                digits = "01_"
                self.pos += 1
        elif self.peek_char() == ".":
            pass
        while self.pos < len(src) and src[self.pos] in digits:
            self.pos += 1
        before_point = self.pos
        if self.peek_char() == ".":
            self.pos += 1
            if self.peek_char() == ".":
                self.pos = before_point
                return src[start : self.pos]
            while self.pos < len(src) and src[self.pos] in digits:
                self.pos += 1
        if self.peek_char() in ("e", "E"):
            self.pos += 1
            if self.peek_char() in ("+", "-"):
                self.pos += 1
            while self.pos < len(src) and src[self.pos] in digits:
                self.pos += 1
        following = self.peek_char()
        if following and _alphanumeric(following):
            self.pos += 1
            raise self.error(f'bad number syntax: "{src[start : self.pos]}"', start)
        return src[start : self.pos]

    def _string(self, quote: str) -> str:
        src = self.source
        start = self.pos
        self.pos += 1
        chunks: list[str] = []
        while True:
            if self.pos >= len(src) or src[self.pos] == "\n":
                raise self.error("literal not terminated", start)
            char = src[self.pos]
            if char == quote:
                self.pos += 1
                return "".join(chunks)
            if char == "\\":
                chunks.append(self._escape(quote, start))
                continue
            chunks.append(char)
            self.pos += 1

    def _escape(self, quote: str, start: int) -> str:
        src = self.source
        self.pos += 1
        if self.pos >= len(src):
            raise self.error("literal not terminated", start)
        char = src[self.pos]
        self.pos += 1
        simple = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
        if char in simple:
            return simple[char]
        if char in ("\\", quote):
            return char
        width = {"x": 2, "u": 4, "U": 8}.get(char)
        if width is not None:
            digits = src[self.pos : self.pos + width]
            if len(digits) != width or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise self.error("invalid char escape", start)
            self.pos += width
            code = int(digits, 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise self.error("invalid char escape", start)
            return chr(code)
        if "0" <= char <= "7":
            digits = src[self.pos - 1 : self.pos + 2]
            if len(digits) != 3 or any(d not in "01234567" for d in digits):
                raise self.error("invalid char escape", start)
            self.pos += 2
            code = int(digits, 8)
            if code > 255:
                raise self.error("invalid char escape", start)
            return chr(code)
        raise self.error("invalid char escape", start)


def _position(source: str, offset: int) -> tuple[int, int]:
    line = source.count("\n", 0, offset) + 1
    column = offset - (source.rfind("\n", 0, offset) + 1) + 1
    return line, column


def _error(source: str, message: str, offset: int) -> FormulaError:
    line, column = _position(source, offset)
    return FormulaError(f"{message} (at {line}:{column})", line=line, column=column)


# --- syntax tree ---------------------------------------------------------------------------


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


# --- parser --------------------------------------------------------------------------------

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
_COMPARISONS = frozenset(["<", ">", ">=", "<="])

# builtin name -> argument kinds for the predicate builtins ("e" expression, "p" predicate,
# a trailing "?" marks an optional argument), from parser.go's predicates table.
_PREDICATES: dict[str, tuple[str, ...]] = {
    "all": ("e", "p"),
    "none": ("e", "p"),
    "any": ("e", "p"),
    "one": ("e", "p"),
    "filter": ("e", "p"),
    "map": ("e", "p"),
    "count": ("e", "p?"),
    "sum": ("e", "p?"),
    "find": ("e", "p"),
    "findIndex": ("e", "p"),
    "findLast": ("e", "p"),
    "findLastIndex": ("e", "p"),
    "groupBy": ("e", "p"),
    "sortBy": ("e", "p", "e?"),
    "reduce": ("e", "p", "e?"),
}
_BUILTINS = frozenset(
    [
        "all",
        "none",
        "any",
        "one",
        "filter",
        "map",
        "find",
        "findIndex",
        "findLast",
        "findLastIndex",
        "count",
        "sum",
        "groupBy",
        "sortBy",
        "reduce",
        "len",
        "type",
        "abs",
        "ceil",
        "floor",
        "round",
        "int",
        "float",
        "string",
        "trim",
        "trimPrefix",
        "trimSuffix",
        "upper",
        "lower",
        "split",
        "splitAfter",
        "replace",
        "repeat",
        "join",
        "indexOf",
        "lastIndexOf",
        "hasPrefix",
        "hasSuffix",
        "max",
        "min",
        "mean",
        "median",
        "toJSON",
        "fromJSON",
        "toBase64",
        "fromBase64",
        "now",
        "duration",
        "date",
        "timezone",
        "first",
        "last",
        "get",
        "take",
        "keys",
        "values",
        "toPairs",
        "fromPairs",
        "reverse",
        "uniq",
        "concat",
        "flatten",
        "sort",
        "bitnot",
        "bitand",
        "bitor",
        "bitxor",
        "bitnand",
        "bitshl",
        "bitshr",
        "bitushr",
    ]
)


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens = _Lexer(source).tokens()
        self.current = next(self.tokens)
        self.stashed: Token | None = None
        self.depth = 0

    def error(self, message: str, token: Token | None = None) -> FormulaError:
        return _error(self.source, message, (token or self.current).offset)

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
                if self.current.value in _NEGATABLE and self.current.kind == "Operator":
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
            elif op_token.value in _COMPARISONS:
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
            if not (token.kind == "Operator" and token.value in _COMPARISONS):
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
        if name in _PREDICATES:
            self.expect("Bracket", "(")
            kinds = _PREDICATES[name][len(arguments) :]
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
        if name in _BUILTINS:
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


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# --- checker -------------------------------------------------------------------------------


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


_UNSUPPORTED_BUILTINS = frozenset(_BUILTINS) - frozenset(
    [
        "all",
        "none",
        "any",
        "one",
        "filter",
        "map",
        "find",
        "findIndex",
        "findLast",
        "findLastIndex",
        "count",
        "sum",
        "reduce",
        "len",
        "abs",
        "ceil",
        "floor",
        "round",
        "int",
        "float",
        "string",
        "max",
        "min",
        "mean",
        "median",
        "first",
        "last",
        "reverse",
        "keys",
        "values",
    ]
)


class _Checker:
    def __init__(self, source: str, env: frozenset[str]) -> None:
        self.source = source
        self.env = env
        self.variables: list[tuple[str, Nature]] = []
        self.scopes: list[tuple[Nature, dict[str, Nature]]] = []

    def error(self, node: Node, message: str) -> FormulaError:
        return _error(self.source, message, node.offset)

    def visit(self, node: Node) -> Nature:
        method: Callable[[Node], Nature] = getattr(self, "visit_" + _snake(type(node).__name__))
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
        if node.name in _BUILTINS:
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
            and _is_int(node.left.value)
            and _is_int(node.right.value)
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
        if op in _COMPARISONS:
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
        if node.name in _BUILTINS:
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
        if name in _UNSUPPORTED_BUILTINS:
            raise self.error(node, f"builtin {name} is not supported by gpuscale's evaluator")
        if name in _PREDICATES:
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


# --- evaluator -----------------------------------------------------------------------------


class _NilChainError(Exception):
    """Raised inside a ``?.`` chain when an optional step meets nil; the chain yields nil."""


def _type_name(value: Value) -> str:
    """Go's ``%T`` of the runtime value."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "[]interface {}"
    return "map[string]interface {}"


def _as_int(value: Value) -> int:
    assert isinstance(value, int)
    return value


def _as_float(value: Value) -> float:
    assert isinstance(value, int | float)
    return float(value)


def _less(left: Value, right: Value) -> bool:
    """runtime.Less on two numbers: exact for two ints, else in float64."""
    if _is_int(left) and _is_int(right):
        return _as_int(left) < _as_int(right)
    return _as_float(left) < _as_float(right)


def _is_int(value: Value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Value) -> bool:
    return _is_int(value) or isinstance(value, float)


def _go_round(value: float) -> float:
    """``math.Round``: half away from zero."""
    if math.isinf(value) or math.isnan(value):
        return value
    whole = float(math.trunc(value))
    if abs(value - whole) >= 0.5:
        whole += math.copysign(1.0, value)
    return math.copysign(whole, value) if whole == 0 else whole


def _to_string(value: Value) -> str:
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if _is_int(value):
        return str(value)
    if isinstance(value, float):
        return format_go_float(value, "g")
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "[" + " ".join(_to_string(item) for item in value) + "]"
    assert isinstance(value, dict)
    items = " ".join(f"{_to_string(k)}:{_to_string(v)}" for k, v in sorted(value.items()))
    return f"map[{items}]"


def _equal(left: Value, right: Value) -> bool:
    """runtime.Equal: numbers compare across int and float; other values must match in type."""
    if _is_number(left) and _is_number(right):
        if _is_int(left) and _is_int(right):
            return left == right
        return float(left) == float(right)  # type: ignore[arg-type]
    return _deep_equal(left, right)


def _deep_equal(left: Value, right: Value) -> bool:
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(
            _equal(a, b) for a, b in zip(left, right, strict=True)
        )
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        assert isinstance(right, dict)
        return left.keys() == right.keys() and all(_deep_equal(left[k], right[k]) for k in left)
    return left == right


@dataclass
class _Frame:
    collection: list[Value]
    item: Value = None
    index: int = 0
    acc: Value = None


@dataclass
class _Evaluator:
    source: str
    values: Mapping[str, Value]
    user_text: str = ""
    user_start: int = 0
    variables: list[tuple[str, Value]] = field(default_factory=list)
    frames: list[_Frame] = field(default_factory=list)

    def error(self, node: Node, message: str) -> FormulaError:
        offset = node.offset - self.user_start
        if self.user_text and 0 <= offset < len(self.user_text):
            return _error(self.user_text, message, offset)
        return _error(self.source, message, node.offset)

    def eval(self, node: Node) -> Value:
        method: Callable[[Node], Value] = getattr(self, "eval_" + _snake(type(node).__name__))
        return method(node)

    def eval_literal(self, node: Literal) -> Value:
        return node.value

    def eval_identifier(self, node: Identifier) -> Value:
        for name, value in reversed(self.variables):
            if name == node.name:
                return value
        return self.values.get(node.name)

    def eval_pointer(self, node: Pointer) -> Value:
        frame = self.frames[-1]
        if node.name == "":
            return frame.item
        if node.name == "index":
            return frame.index
        return frame.acc

    def eval_unary(self, node: Unary) -> Value:
        value = self.eval(node.operand)
        if node.operator in ("!", "not"):
            if not isinstance(value, bool):
                raise self.error(
                    node, f"interface conversion: interface {{}} is {_type_name(value)}, not bool"
                )
            return not value
        if node.operator == "-":
            if _is_int(value):
                return wrap_int64(-value)  # type: ignore[operator]
            if isinstance(value, float):
                return -value
            raise self.error(node, f"invalid operation: - {_type_name(value)}")
        if not _is_number(value):
            raise self.error(node, f"invalid operation: + {_type_name(value)}")
        return value

    def eval_binary(self, node: Binary) -> Value:
        op = node.operator
        if op in ("and", "&&", "or", "||"):
            left = self.eval(node.left)
            if not isinstance(left, bool):
                raise self.error(
                    node, f"interface conversion: interface {{}} is {_type_name(left)}, not bool"
                )
            if (op in ("and", "&&")) != left:
                return left
            return self.eval(node.right)
        if op == "??":
            left = self.eval(node.left)
            return self.eval(node.right) if left is None else left
        left = self.eval(node.left)
        right = self.eval(node.right)
        return self.apply(node, op, left, right)

    def mismatch(self, node: Node, op: str, left: Value, right: Value) -> FormulaError:
        return self.error(
            node,
            f"invalid operation: {_type_name(left)} {op} {_type_name(right)}",
        )

    def apply(self, node: Node, op: str, left: Value, right: Value) -> Value:
        if op == "==":
            return _equal(left, right)
        if op == "!=":
            return not _equal(left, right)
        numbers = _is_number(left) and _is_number(right)
        both_int = _is_int(left) and _is_int(right)
        if op in _COMPARISONS:
            if numbers:
                a, b = (left, right) if both_int else (float(left), float(right))  # type: ignore[arg-type]
            elif isinstance(left, str) and isinstance(right, str):
                a, b = left, right
            else:
                raise self.mismatch(node, op, left, right)
            return {"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]  # type: ignore[operator]
        if op in ("+", "-", "*"):
            if both_int:
                result = {"+": left + right, "-": left - right, "*": left * right}[op]  # type: ignore[operator]
                return wrap_int64(result)
            if numbers:
                a, b = float(left), float(right)  # type: ignore[arg-type]
                return {"+": a + b, "-": a - b, "*": a * b}[op]
            if op == "+" and isinstance(left, str) and isinstance(right, str):
                return left + right
            raise self.mismatch(node, op, left, right)
        if op == "/":
            if not numbers:
                raise self.mismatch(node, op, left, right)
            return go_div(float(left), float(right))  # type: ignore[arg-type]
        if op == "%":
            if not both_int:
                raise self.mismatch(node, op, left, right)
            if right == 0:
                raise self.error(node, "integer divide by zero")
            return _go_mod(left, right)  # type: ignore[arg-type]
        if op in ("**", "^"):
            if not numbers:
                raise self.mismatch(node, op, left, right)
            return go_pow(float(left), float(right))  # type: ignore[arg-type]
        if op == "in":
            if isinstance(right, list):
                return any(_equal(left, item) for item in right)
            if isinstance(right, dict):
                return left in right
            if right is None:
                return False
            raise self.error(node, f'operator "in" not defined on {_type_name(right)}')
        if op in ("contains", "startsWith", "endsWith"):
            if not (isinstance(left, str) and isinstance(right, str)):
                raise self.mismatch(node, op, left, right)
            if op == "contains":
                return right in left
            return left.startswith(right) if op == "startsWith" else left.endswith(right)
        if op == "..":
            if not both_int:
                raise self.mismatch(node, op, left, right)
            return list(range(_as_int(left), _as_int(right) + 1))
        raise self.error(node, f"unknown operator ({op})")  # pragma: no cover

    def eval_conditional(self, node: Conditional) -> Value:
        condition = self.eval(node.condition)
        if not isinstance(condition, bool):
            raise self.error(
                node.condition,
                f"interface conversion: interface {{}} is {_type_name(condition)}, not bool",
            )
        return self.eval(node.then if condition else node.otherwise)

    def eval_array_literal(self, node: ArrayLiteral) -> Value:
        return [self.eval(item) for item in node.items]

    def eval_map_literal(self, node: MapLiteral) -> Value:
        result: dict[Value, Value] = {}
        for key, value in node.pairs:
            result[self.eval(key)] = self.eval(value)
        return result

    def eval_member(self, node: Member) -> Value:
        target = self.eval(node.target)
        key = self.eval(node.key)
        if target is None:
            if node.optional:
                raise _NilChainError
            raise self.error(node, f"cannot fetch {_to_string(key)} from <nil>")
        if isinstance(target, list):
            if not _is_number(key):
                raise self.error(node, f"cannot use {_type_name(key)} as array index")
            index = _as_int(key) if _is_int(key) else go_float_to_int64(_as_float(key))
            if index < 0:
                index += len(target)
            if not 0 <= index < len(target):
                raise self.error(
                    node, f"index out of range: {index} (array length is {len(target)})"
                )
            return target[index]
        if isinstance(target, dict):
            return target.get(key)
        raise self.error(node, f"cannot fetch {_to_string(key)} from {_type_name(target)}")

    def eval_chain(self, node: Chain) -> Value:
        try:
            return self.eval(node.inner)
        except _NilChainError:
            return None

    def eval_slice(self, node: Slice) -> Value:
        target = self.eval(node.target)
        if not isinstance(target, list):
            raise self.error(node, f"cannot slice {_type_name(target)}")
        length = len(target)
        start = 0 if node.start is None else self.int_of(node.start)
        stop = length if node.stop is None else self.int_of(node.stop)
        start = max(0, start + length if start < 0 else start)
        stop = max(0, stop + length if stop < 0 else stop)
        stop = min(stop, length)
        start = min(start, stop)
        return target[start:stop]

    def int_of(self, node: Node) -> int:
        value = self.eval(node)
        if _is_int(value):
            return value  # type: ignore[return-value]
        if isinstance(value, float):
            return go_float_to_int64(value)
        raise self.error(node, f"invalid operation: int({_type_name(value)})")

    def eval_let(self, node: Let) -> Value:
        self.variables.append((node.name, self.eval(node.value)))
        try:
            return self.eval(node.body)
        finally:
            self.variables.pop()

    def eval_sequence_node(self, node: SequenceNode) -> Value:
        result: Value = None
        for item in node.items:
            result = self.eval(item)
        return result

    def eval_builtin(self, node: Builtin) -> Value:
        if node.name in _PREDICATES:
            return self.predicate_builtin(node)
        args = [self.eval(arg) for arg in node.arguments]
        return _call_builtin(self, node, node.name, args)

    def collection(self, node: Builtin) -> list[Value]:
        value = self.eval(node.arguments[0])
        if not isinstance(value, list):
            raise self.error(node, f"cannot iterate over {_type_name(value)}")
        return value

    def test(self, node: Builtin, frame: _Frame) -> Value:
        self.frames.append(frame)
        try:
            body = node.arguments[1]
            assert isinstance(body, Predicate)
            return self.eval(body.body)
        finally:
            self.frames.pop()

    def truth(self, node: Node, value: Value) -> bool:
        if not isinstance(value, bool):
            raise self.error(
                node, f"interface conversion: interface {{}} is {_type_name(value)}, not bool"
            )
        return value

    def predicate_builtin(self, node: Builtin) -> Value:
        name = node.name
        items = self.collection(node)
        has_predicate = len(node.arguments) > 1

        def check(index: int, item: Value) -> bool:
            if not has_predicate:
                return self.truth(node, item)
            return self.truth(node, self.test(node, _Frame(items, item, index)))

        if name == "all":
            return all(check(i, item) for i, item in enumerate(items))
        if name == "any":
            return any(check(i, item) for i, item in enumerate(items))
        if name == "none":
            return not any(check(i, item) for i, item in enumerate(items))
        if name == "one":
            return sum(check(i, item) for i, item in enumerate(items)) == 1
        if name == "count":
            return sum(1 for i, item in enumerate(items) if check(i, item))
        if name == "filter":
            return [item for i, item in enumerate(items) if check(i, item)]
        if name == "map":
            return [self.test(node, _Frame(items, item, i)) for i, item in enumerate(items)]
        if name in ("find", "findIndex"):
            for i, item in enumerate(items):
                if check(i, item):
                    return item if name == "find" else i
            return None
        if name in ("findLast", "findLastIndex"):
            for i in range(len(items) - 1, -1, -1):
                if check(i, items[i]):
                    return items[i] if name == "findLast" else i
            return None
        if name == "sum":
            total: Value = 0
            for i, item in enumerate(items):
                term = self.test(node, _Frame(items, item, i)) if has_predicate else item
                total = self.apply(node, "+", total, term)
            return total
        assert name == "reduce"
        if len(node.arguments) == 3:
            acc = self.eval(node.arguments[2])
            start = 0
        else:
            if not items:
                raise self.error(node, "reduce of empty array with no initial value")
            acc, start = items[0], 1
        for i in range(start, len(items)):
            acc = self.test(node, _Frame(items, items[i], i, acc))
        return acc


def _go_mod(left: int, right: int) -> int:
    remainder = abs(left) % abs(right)
    return -remainder if left < 0 else remainder


def _numbers(evaluator: _Evaluator, node: Node, name: str, args: list[Value]) -> list[Value]:
    """Flatten the arguments of max/min/mean/median the way builtin/lib.go walks them."""
    flat: list[Value] = []

    def walk(value: Value, top: bool) -> None:
        if isinstance(value, list):
            for item in value:
                walk(item, False)
        elif _is_number(value):
            flat.append(value)
        else:
            raise evaluator.error(node, f"invalid argument for {name} (type {_type_name(value)})")

    for arg in args:
        walk(arg, True)
    return flat


def _call_builtin(evaluator: _Evaluator, node: Node, name: str, args: list[Value]) -> Value:
    arg = args[0] if args else None
    if name == "len":
        if isinstance(arg, list | dict | str):
            return len(arg)
        raise evaluator.error(node, f"invalid argument for len (type {_type_name(arg)})")
    if name == "abs":
        if _is_int(arg):
            return wrap_int64(abs(arg))  # type: ignore[arg-type]
        if isinstance(arg, float):
            return abs(arg)
        raise evaluator.error(node, f"invalid argument for abs (type {_type_name(arg)})")
    if name in ("ceil", "floor", "round"):
        if _is_int(arg):
            return float(arg)  # type: ignore[arg-type]
        if not isinstance(arg, float):
            raise evaluator.error(node, f"invalid argument for {name} (type {_type_name(arg)})")
        if name == "round":
            return _go_round(arg)
        return go_ceil(arg) if name == "ceil" else go_floor(arg)
    if name == "int":
        if _is_int(arg):
            return arg
        if isinstance(arg, float):
            return go_float_to_int64(arg)
        if isinstance(arg, str):
            try:
                return parse_go_int(arg)
            except GoSyntaxError:
                raise evaluator.error(node, f"invalid operation: int({arg})") from None
        raise evaluator.error(node, f"invalid operation: int({_type_name(arg)})")
    if name == "float":
        if _is_int(arg):
            return float(arg)  # type: ignore[arg-type]
        if isinstance(arg, float):
            return arg
        if isinstance(arg, str):
            try:
                return parse_go_float(arg)
            except GoSyntaxError:
                raise evaluator.error(node, f"invalid operation: float({arg})") from None
        raise evaluator.error(node, f"invalid operation: float({_type_name(arg)})")
    if name == "string":
        return _to_string(arg)
    if name in ("max", "min"):
        if len(args) == 1 and not isinstance(arg, list) and not _is_number(arg):
            return arg
        best: Value = None
        for value in _numbers(evaluator, node, name, args):
            if best is None:
                best = value
                continue
            if (name == "max" and _less(best, value)) or (name == "min" and _less(value, best)):
                best = value
        return best
    if name in ("mean", "median"):
        floats = [float(v) for v in _numbers(evaluator, node, name, args)]  # type: ignore[arg-type]
        if not floats:
            return 0.0
        if name == "mean":
            return _go_sum(floats) / len(floats)
        floats.sort()
        middle = len(floats) // 2
        if len(floats) % 2:
            return floats[middle]
        return (floats[middle - 1] + floats[middle]) / 2
    if name in ("first", "last"):
        if not isinstance(arg, list):
            raise evaluator.error(node, f"cannot get {name} of {_type_name(arg)}")
        if not arg:
            return None
        return arg[0] if name == "first" else arg[-1]
    if name == "reverse":
        if not isinstance(arg, list):
            raise evaluator.error(node, f"cannot reverse {_type_name(arg)}")
        return list(reversed(arg))
    if name in ("keys", "values"):
        if not isinstance(arg, dict):
            raise evaluator.error(node, f"cannot get {name} from {_type_name(arg)}")
        return list(arg.keys() if name == "keys" else arg.values())
    raise evaluator.error(node, f"builtin {name} is not supported by gpuscale's evaluator")


def _go_sum(values: list[float]) -> float:
    total = 0.0
    for value in values:
        total += value
    return total


# --- entry points --------------------------------------------------------------------------


@dataclass(frozen=True)
class Program:
    """A formula that parsed and type-checked against a set of variable names."""

    source: str
    tree: Node
    names: frozenset[str]
    user_text: str = ""
    """When ``source`` wraps a user's formula, that formula: runtime errors inside it are
    reported at its own line and column."""

    def run(self, values: Mapping[str, float | None]) -> Value:
        """Evaluate with ``values`` (None is expr's nil); names not given read as nil."""
        start = self.source.find(self.user_text) if self.user_text else 0
        evaluator = _Evaluator(self.source, dict(values), self.user_text, max(start, 0))
        try:
            return evaluator.eval(self.tree)
        except RecursionError:
            raise FormulaError("formula nests too deeply to evaluate") from None


def compile_formula(
    source: str, names: frozenset[str] | set[str] | Sequence[str], *, user_text: str = ""
) -> Program:
    """Parse and check ``source`` with every name in ``names`` declared as a float64, as KEDA
    compiles a formula against its named triggers (expr.Compile with expr.Env).

    Raises ``FormulaError`` with the line and column of the first problem.
    """
    declared = frozenset(names)
    try:
        tree = _Parser(source).parse()
        _Checker(source, declared).visit(tree)
    except RecursionError:
        raise FormulaError("formula nests too deeply to compile") from None
    return Program(source, tree, declared, user_text)


def evaluate(source: str, values: Mapping[str, float | None]) -> Value:
    """Compile ``source`` against the names in ``values`` and run it on them."""
    return compile_formula(source, frozenset(values)).run(values)
