"""The lexer of the formula language: expr-lang ``parser/lexer/state.go`` and ``lexer.go``.

Numbers with ``_`` separators and hex/octal/binary integers, strings with Go's escapes,
operators, ``//`` and ``/* */`` comments, and ``not in`` read as one operator. Errors name
the line and column of the offending character (:func:`error_at`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from gpuscale.controllers._keda.errors import FormulaError
from gpuscale.controllers._keda.goparse import GO_SPACE

__all__ = ["NEGATABLE", "Lexer", "Token", "error_at", "position"]

_KEYWORD_OPERATORS = frozenset(
    ["in", "or", "and", "matches", "contains", "startsWith", "endsWith", "let", "if", "else"]
)
NEGATABLE = frozenset(["in", "matches", "contains", "startsWith", "endsWith"])


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


class Lexer:
    """Produces tokens on demand, so an unlexable character is reported only when the
    parser reaches it, as expr's lexer does."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.pos = 0

    def error(self, message: str, offset: int) -> FormulaError:
        return error_at(self.source, message, offset)

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
        if src[start:end] in NEGATABLE:
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


def position(source: str, offset: int) -> tuple[int, int]:
    line = source.count("\n", 0, offset) + 1
    column = offset - (source.rfind("\n", 0, offset) + 1) + 1
    return line, column


def error_at(source: str, message: str, offset: int) -> FormulaError:
    line, column = position(source, offset)
    return FormulaError(f"{message} (at {line}:{column})", line=line, column=column)
