"""The one door to ``promql-parser``: query text bounded before it is parsed, and the one
iterative walk over the syntax tree every reader of a query uses.

Why a gate. ``promql-parser`` (Rust, called through PyO3) recurses once per level of the
tree: a chain of about 5,000 ``+`` terms (20 KB) or 12,000 nested parentheses overflows
its stack and kills the process with a segfault, which no ``except`` can catch. The
Python code that reads the tree (the engine's compiler and evaluator, lint's analyses,
``str()`` of a node) recurses too and raises ``RecursionError`` from about 400 levels
(a 400-term sum, measured with the default recursion limit of 1,000). So text is checked
*before* the parser sees it, against limits far above any real query and well below
where either breaks:

- :data:`MAX_QUERY_CHARS` characters (16 KiB; dashboards' longest queries are a few KB);
- :data:`MAX_QUERY_DEPTH` levels of nesting, estimated from the text without parsing:
  every bracket (``(``, ``[``, ``{``, a call's or an aggregation's parentheses) is a
  level, and so is every operator within one bracket level (a chain of ``n`` operators
  is a tree ``n`` deep). The estimate is never below the tree's real depth.

:func:`parse_query` is the gate plus the parser; every caller (the engine, lint, the
simulator, the CLI) goes through it, and a caller that knows where the query is written
(a manifest's ``file:line``) passes it as ``where`` so the one-line error names it.

Why one walker. The tree's shape (which attribute holds which child) is written once, in
:func:`children`; :func:`walk` visits every node top-down and :func:`fold` computes a
value bottom-up, both with an explicit stack, so no reader recurses per level.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import promql_parser as pp

from gpuscale.promql._errors import PromQLError

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_QUERY_DEPTH",
    "check_query_text",
    "children",
    "fold",
    "parse_query",
    "query_depth",
    "walk",
]

MAX_QUERY_CHARS = 16 * 1024
"""Longest query text accepted, in characters."""
MAX_QUERY_DEPTH = 128
"""Deepest nesting accepted, as :func:`query_depth` estimates it."""

_T = TypeVar("_T")

_OPEN = {"(": ")", "[": "]", "{": "}"}
_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<string>"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|`[^`]*`?)
  | (?P<number>0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<word>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<operator>==|!=|<=|>=|=~|!~|[-+*/%^<>=!])
  | (?P<bracket>[(\[{])
  | (?P<close>[)\]}])
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_WORD_OPERATORS = frozenset({"and", "or", "unless", "atan2"})


def query_depth(text: str) -> int:
    """An upper bound of the depth of ``text``'s syntax tree, read off the text alone.

    Each bracket group counts one level, plus the operators directly inside it, plus its
    deepest inner group; a ``[...]`` range or subquery also counts as an operator of the
    level it is written in (it wraps the operand before it). Inside a selector's braces
    ``=``/``!=`` are matchers, not operators. Strings and comments are skipped. Unbalanced
    text is measured as if closed (the parser then reports it).
    """
    stack: list[list[int]] = [[0, 0, 0]]  # [operators, deepest inner group, in braces]
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        frame = stack[-1]
        if kind == "bracket":
            if match.group() == "[":
                frame[0] += 1  # a range or subquery wraps the operand before it
            stack.append([0, 0, int(match.group() == "{")])
        elif kind == "close":
            if len(stack) > 1:
                done = stack.pop()
                stack[-1][1] = max(stack[-1][1], done[0] + done[1] + 1)
        elif (kind == "operator" and not frame[2]) or (
            kind == "word" and not frame[2] and match.group().lower() in _WORD_OPERATORS
        ):
            frame[0] += 1
    while len(stack) > 1:
        done = stack.pop()
        stack[-1][1] = max(stack[-1][1], done[0] + done[1] + 1)
    return stack[0][0] + stack[0][1] + 1


def _shown(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def check_query_text(text: str, *, where: str | None = None) -> None:
    """Raise :class:`PromQLError` when ``text`` is longer or nests deeper than gpuscale
    accepts (see the module docstring); ``where`` names the query's place (``file:line``)."""
    place = where or f"query {_shown(text)}"
    if len(text) > MAX_QUERY_CHARS:
        raise PromQLError(
            f"the query is {len(text):,} characters long, more than the {MAX_QUERY_CHARS:,} "
            "gpuscale accepts",
            where=place,
            fix="shorten the query (a recording rule can hold the long part)",
        )
    depth = query_depth(text)
    if depth > MAX_QUERY_DEPTH:
        raise PromQLError(
            f"the query nests about {depth} levels deep (brackets and operators), more than "
            f"the {MAX_QUERY_DEPTH} gpuscale accepts",
            where=place,
            fix="split the query (a recording rule can hold a part), or use an aggregation "
            "such as sum by (...) instead of a long chain of + terms",
        )


def parse_query(text: str, *, where: str | None = None) -> pp.Expr:
    """The syntax tree of ``text``, after :func:`check_query_text`.

    A query over the limits raises :class:`PromQLError`; one that does not parse raises
    the parser's ``ValueError``, which callers turn into their own message.
    """
    check_query_text(text, where=where)
    return pp.parse(text)


def children(node: Any) -> tuple[Any, ...]:
    """The direct sub-expressions of ``node``: operands in the order they are written, an
    aggregation's operand before its parameter (topk's k, quantile's φ)."""
    if isinstance(node, pp.AggregateExpr):
        return (node.expr,) if node.param is None else (node.expr, node.param)
    if isinstance(node, pp.BinaryExpr):
        return (node.lhs, node.rhs)
    if isinstance(node, pp.ParenExpr | pp.UnaryExpr | pp.SubqueryExpr):
        return (node.expr,)
    if isinstance(node, pp.Call):
        return tuple(node.args)
    if isinstance(node, pp.MatrixSelector):
        return (node.vector_selector,)
    return ()


def walk(root: Any, *, into: Callable[[Any], bool] | None = None) -> Iterator[Any]:
    """Every node under ``root`` (itself included), parents before children, children in
    :func:`children`' order. ``into(node)`` false keeps the walk out of that node's children."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if into is None or into(node):
            stack.extend(reversed(children(node)))


def fold(root: Any, combine: Callable[[Any, list[_T]], _T]) -> _T:
    """``combine(node, [value of each child])`` computed bottom-up for every node; the
    root's value. Iterative: a tree of any depth uses no Python stack per level."""
    values: list[_T] = []
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        kids = children(node)
        if expanded or not kids:
            count = len(kids)
            own = values[len(values) - count :] if count else []
            if count:
                del values[len(values) - count :]
            values.append(combine(node, own))
            continue
        stack.append((node, True))
        stack.extend((kid, False) for kid in reversed(kids))
    return values[0]
