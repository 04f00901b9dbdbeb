"""The evaluator: what expr-lang's ``vm/vm.go`` computes for the tree, with Go's number
semantics (``int`` is int64 and wraps, ``/`` and ``**`` give ``float64``, ``%`` needs
integers, mixed arithmetic gives ``float64``, ``and``/``or`` short-circuit on booleans)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from gpuscale._gomath import go_div, go_float_to_int64, go_pow, wrap_int64
from gpuscale.controllers._keda.errors import FormulaError
from gpuscale.controllers._keda.expr.ast import (
    ArrayLiteral,
    Binary,
    Builtin,
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
from gpuscale.controllers._keda.expr.builtin import PREDICATES, call_builtin
from gpuscale.controllers._keda.expr.lexer import error_at
from gpuscale.controllers._keda.expr.parser import COMPARISONS, snake
from gpuscale.controllers._keda.expr.runtime import (
    NilChainError,
    Value,
    as_float,
    as_int,
    equal,
    go_mod,
    is_int,
    is_number,
    to_string,
    type_name,
)

__all__ = ["Evaluator"]


@dataclass
class _Frame:
    collection: list[Value]
    item: Value = None
    index: int = 0
    acc: Value = None


@dataclass
class Evaluator:
    source: str
    values: Mapping[str, Value]
    user_text: str = ""
    user_start: int = 0
    variables: list[tuple[str, Value]] = field(default_factory=list)
    frames: list[_Frame] = field(default_factory=list)

    def error(self, node: Node, message: str) -> FormulaError:
        offset = node.offset - self.user_start
        if self.user_text and 0 <= offset < len(self.user_text):
            return error_at(self.user_text, message, offset)
        return error_at(self.source, message, node.offset)

    def eval(self, node: Node) -> Value:
        method: Callable[[Node], Value] = getattr(self, "eval_" + snake(type(node).__name__))
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
                    node, f"interface conversion: interface {{}} is {type_name(value)}, not bool"
                )
            return not value
        if node.operator == "-":
            if is_int(value):
                return wrap_int64(-value)  # type: ignore[operator]
            if isinstance(value, float):
                return -value
            raise self.error(node, f"invalid operation: - {type_name(value)}")
        if not is_number(value):
            raise self.error(node, f"invalid operation: + {type_name(value)}")
        return value

    def eval_binary(self, node: Binary) -> Value:
        op = node.operator
        if op in ("and", "&&", "or", "||"):
            left = self.eval(node.left)
            if not isinstance(left, bool):
                raise self.error(
                    node, f"interface conversion: interface {{}} is {type_name(left)}, not bool"
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
            f"invalid operation: {type_name(left)} {op} {type_name(right)}",
        )

    def apply(self, node: Node, op: str, left: Value, right: Value) -> Value:
        if op == "==":
            return equal(left, right)
        if op == "!=":
            return not equal(left, right)
        numbers = is_number(left) and is_number(right)
        both_int = is_int(left) and is_int(right)
        if op in COMPARISONS:
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
            return go_mod(left, right)  # type: ignore[arg-type]
        if op in ("**", "^"):
            if not numbers:
                raise self.mismatch(node, op, left, right)
            return go_pow(float(left), float(right))  # type: ignore[arg-type]
        if op == "in":
            if isinstance(right, list):
                return any(equal(left, item) for item in right)
            if isinstance(right, dict):
                return left in right
            if right is None:
                return False
            raise self.error(node, f'operator "in" not defined on {type_name(right)}')
        if op in ("contains", "startsWith", "endsWith"):
            if not (isinstance(left, str) and isinstance(right, str)):
                raise self.mismatch(node, op, left, right)
            if op == "contains":
                return right in left
            return left.startswith(right) if op == "startsWith" else left.endswith(right)
        if op == "..":
            if not both_int:
                raise self.mismatch(node, op, left, right)
            return list(range(as_int(left), as_int(right) + 1))
        raise self.error(node, f"unknown operator ({op})")  # pragma: no cover

    def eval_conditional(self, node: Conditional) -> Value:
        condition = self.eval(node.condition)
        if not isinstance(condition, bool):
            raise self.error(
                node.condition,
                f"interface conversion: interface {{}} is {type_name(condition)}, not bool",
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
                raise NilChainError
            raise self.error(node, f"cannot fetch {to_string(key)} from <nil>")
        if isinstance(target, list):
            if not is_number(key):
                raise self.error(node, f"cannot use {type_name(key)} as array index")
            index = as_int(key) if is_int(key) else go_float_to_int64(as_float(key))
            if index < 0:
                index += len(target)
            if not 0 <= index < len(target):
                raise self.error(
                    node, f"index out of range: {index} (array length is {len(target)})"
                )
            return target[index]
        if isinstance(target, dict):
            return target.get(key)
        raise self.error(node, f"cannot fetch {to_string(key)} from {type_name(target)}")

    def eval_chain(self, node: Chain) -> Value:
        try:
            return self.eval(node.inner)
        except NilChainError:
            return None

    def eval_slice(self, node: Slice) -> Value:
        target = self.eval(node.target)
        if not isinstance(target, list):
            raise self.error(node, f"cannot slice {type_name(target)}")
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
        if is_int(value):
            return value  # type: ignore[return-value]
        if isinstance(value, float):
            return go_float_to_int64(value)
        raise self.error(node, f"invalid operation: int({type_name(value)})")

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
        if node.name in PREDICATES:
            return self.predicate_builtin(node)
        args = [self.eval(arg) for arg in node.arguments]
        return call_builtin(self, node, node.name, args)

    def collection(self, node: Builtin) -> list[Value]:
        value = self.eval(node.arguments[0])
        if not isinstance(value, list):
            raise self.error(node, f"cannot iterate over {type_name(value)}")
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
                node, f"interface conversion: interface {{}} is {type_name(value)}, not bool"
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
