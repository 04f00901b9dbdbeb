"""A subset of the expr-lang language, enough for KEDA ``scalingModifiers`` formulas.

KEDA compiles ``advanced.scalingModifiers.formula`` with github.com/expr-lang/expr
(v1.17.8 at the KEDA commit gpuscale follows) against an environment in which every
named trigger is a ``float64``, then runs it with the trigger values (``nil`` for a
trigger in ``scalingModifiers`` fallback). This package re-implements the part of that
language such formulas use, in stages that mirror expr's own packages, one module each:

- :mod:`.lexer` (``parser/lexer/state.go``): numbers, strings, operators, comments;
- :mod:`.ast` (``ast/node.go``): the syntax tree;
- :mod:`.parser` (``parser/parser.go`` with ``parser/operator/operator.go``'s precedence
  table): a Pratt parser for operators, ``?:``, ``??``, ``let``, ``if``, arrays, maps,
  member access, slices, pipes and predicates;
- :mod:`.checker` (``checker/checker.go``): what expr rejects at compile time;
- :mod:`.builtin` (``builtin/builtin.go``, ``builtin/lib.go``): the builtins, listed once
  (:data:`.builtin.SUPPORTED_BUILTINS` are evaluated, the others refused by name);
- :mod:`.runtime` (``vm/runtime``) and :mod:`.vm`: evaluation with Go's number semantics.

expr features outside the subset (dates, ``matches``, methods, bytes, ``::``) raise
``FormulaError`` saying the evaluator does not support them, rather than guessing. Every
error names the line and column of the token it is about. The table
``tests/unit/controllers/data/keda_expr_oracle.json`` holds answers of the real expr
v1.17.8 for the formulas the tests evaluate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpuscale.controllers._keda.errors import FormulaError
from gpuscale.controllers._keda.expr.ast import Node
from gpuscale.controllers._keda.expr.checker import Checker
from gpuscale.controllers._keda.expr.parser import Parser
from gpuscale.controllers._keda.expr.runtime import Value
from gpuscale.controllers._keda.expr.vm import Evaluator

__all__ = ["Program", "compile_formula", "evaluate"]


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
        evaluator = Evaluator(self.source, dict(values), self.user_text, max(start, 0))
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
        tree = Parser(source).parse()
        Checker(source, declared).visit(tree)
    except RecursionError:
        raise FormulaError("formula nests too deeply to compile") from None
    return Program(source, tree, declared, user_text)


def evaluate(source: str, values: Mapping[str, float | None]) -> Value:
    """Compile ``source`` against the names in ``values`` and run it on them."""
    return compile_formula(source, frozenset(values)).run(values)
