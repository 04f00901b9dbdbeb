"""Rebuild the golden tables that pin gpuscale's Go and expr-lang ports to the real thing.

Needs Go (>= 1.19) and github.com/expr-lang/expr v1.17.8 (the version KEDA 8b4f083
vendors); see README.md. Writes ``../keda_go_oracle.json`` (strconv.ParseFloat,
strconv.ParseBool, time.ParseDuration, KEDA's typed-config float reading,
strings.TrimSpace, and decoding Prometheus answers into KEDA's promQueryResult) and
``../keda_expr_oracle.json`` (KEDA-style compile and run of scalingModifiers formulas).

    python generate.py /path/to/kedaoracle-binary
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

FLOATS = [
    "1",
    "1.5",
    "-2",
    ".5",
    "1.",
    ".",
    " 1",
    "1 ",
    "+1",
    "+.5e3",
    "1e",
    "1e+",
    "1e5",
    "1E-5",
    "1_000",
    "1__0",
    "_1",
    "1_",
    "1_.5",
    "1._5",
    "0x10",
    "0x1p-2",
    "0X1P4",
    "0x1.8p1",
    "0x_1p0",
    "0x1_0p0",
    "0x.8p1",
    "0xp1",
    "inf",
    "+Inf",
    "-infinity",
    "infinity",
    "infin",
    "nan",
    "NaN",
    "+nan",
    "-NaN",
    "1e400",
    "-1e400",
    "1e-400",
    "4.9e-324",
    "2e-324",
    "abc",
    "",
    "0",
    "-0",
    "00012",
    "1e0001",
    "0b101",
    "0o17",
    "1_000.000_1",
    "1e1_0",
    "+",
    "-",
    "0x",
    "0x1",
    "1.7976931348623157e308",
    "1.7976931348623159e308",
    "1.7976931348623158e308",
    "\uff11",
    "1\u00a0",
    "9007199254740993",
    "160",
    "0.1",
    "3.14159265358979323846264338327950288",
    "-0.0",
    "1e-7",
    "12345678901234567890",
]
BOOLS = [
    "1",
    "t",
    "T",
    "TRUE",
    "true",
    "True",
    "0",
    "f",
    "F",
    "FALSE",
    "false",
    "False",
    "yes",
    "tRue",
    "",
    " true",
    "2",
    "on",
]
DURATIONS = [
    "0",
    "-0",
    "+0",
    "1000",
    "-1",
    "1s",
    "1.5s",
    "-1s",
    "1h30m",
    "1m0s",
    "250ms",
    "1us",
    "1\u00b5s",
    "1\u03bcs",
    "1ns",
    "1.5",
    "1 s",
    ".5s",
    "5.s",
    ".s",
    "s",
    "1d",
    "30",
    "9223372036854775807ns",
    "9223372036854775808ns",
    "-9223372036854775808ns",
    "2562047h",
    "2562048h",
    "1.0000000000000000000000001s",
    "00001s",
    "1h1h",
    "",
    "+",
    "1s2",
    "1.5.5s",
    "0.000000001s",
    "0.0000000001s",
    "5m",
    "2h45m",
    "-1.5h",
]
TYPED_FLOATS = [
    "100",
    "1e2",
    "-5",
    "0",
    "-0",
    "+1",
    ".5",
    "1.",
    "01",
    "1.0e+2",
    "NaN",
    "null",
    '"5"',
    "1e309",
    "true",
    " 7 ",
    "7 7",
    "0.1",
    "1E400",
    "-1e-400",
    "one",
    "80",
    "1_0",
    "0x10",
    "Infinity",
    "[1]",
    "{}",
    "50.5",
]


def _pow_arguments() -> list[str]:
    """math.Pow arguments: integer and fractional exponents over a spread of bases."""
    rng = random.Random(3)
    pairs = [(7.0, 3.5), (2.5, 1.3), (0.5, 0.25), (10.0, -2.7), (1e-3, 0.75), (123.456, 2.5)]
    for _ in range(150):
        base = rng.choice([rng.uniform(0, 10), rng.uniform(0, 1e6), rng.uniform(0, 1)])
        exponent = rng.choice([rng.uniform(-5, 5), float(rng.randint(-30, 30)), rng.uniform(0, 40)])
        pairs.append((base, exponent))
    return [json.dumps([b, e]) for b, e in pairs]


TRIMS = ["  a b  ", "\u00a0x\u00a0", "\x1cx\x1c", "\u2003y\u3000", "\u200bz", "\tq\n", "\u0085w"]
BODIES = [
    "{}",
    "",
    "null",
    "[]",
    '"x"',
    "5",
    "true",
    '{"data":null}',
    '{"data":[]}',
    '{"data":{"result":null}}',
    '{"data":{"result":{}}}',
    '{"data":{"result":[]}}',
    '{"data":{"result":[{}]}}',
    '{"data":{"result":[null]}}',
    '{"data":{"result":[5]}}',
    '{"data":{"result":[{"value":[]}]}}',
    '{"data":{"result":[{"value":["1"]}]}}',
    '{"data":{"result":[{"value":["1","2"]}]}}',
    '{"data":{"result":[{"value":[1,2]}]}}',
    '{"data":{"result":[{"value":[1,null]}]}}',
    '{"data":{"result":[{"value":[1,"2","3"]}]}}',
    '{"data":{"result":[{},{}]}}',
    '{"Data":{"Result":[{"VALUE":[1,"7"]}]}}',
    '{"\u017ftatus":5}',
    '{"status":5}',
    '{"status":"success","data":{"resultType":"scalar","result":[1,"5"]}}',
    '{"data":{"resultType":5,"result":[]}}',
    '{"data":{"result":[{"metric":"x","value":[1,"2"]}]}}',
    '{"data":{"result":[{"metric":null,"value":[1,"2"]}]}}',
    '{"data":{"result":[{"value":"12"}]}}',
    '{"data":{"result":[{"value":[1e400,"2"]}]}}',
    '{"other":1e400,"data":{"result":[{"value":[1,"2"]}]}}',
    '{"data":{"result":[{"value":[1,"2"]}]},"data":{}}',
    '{"data":{"result":[{"value":[1,"2"]}]},"data":{"result":null}}',
    '{"data":{"result":[{"value":[1,"2"]}]}} x',
    '{"data":{"result":[{"value":[1,NaN]}]}}',
    '{"data":{"result":[{"value":[1,"2"],}]}}',
    "\ufeff{}",
    '{"data":{"result":[{"value":[1,[1e999]]}]}}',
    '{"datA":{"resulT":[{"valuE":[0,"3"]}]}}',
    '{"data": {"result": [{"value": [1, {"a": 1e500}]}]}}',
    '{"data":{"result":[{"value":[1,"2"]}]}, "status": null}',
    '{"dat\u212a":1}',
    '{"data":{"result":[{"value":[1,"2"], "metric": []}]}}',
    '{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1686063687,"777"]}]}}',
    '{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"a"},"value":[1.5,"160"]}]}}',
    '{"data":{"result":[{"value":[1,"+Inf"]}]}}',
    '{"data":{"result":[{"value":[1,"-1.5"]}]}}',
    '{"data":{"result":[{"value":[1,true]}]}}',
    '{"data":{"result":[{"value":[1,"1e999"]}]}}',
]
HAND_FORMULAS = [
    "t1 + t2",
    "t1 - t2 * 2",
    "t1 / 0",
    "-t1 / 0",
    "0 / 0",
    "t1 % 2",
    "2 ** 10",
    "2 ^ 3 ^ 2",
    "-2 ** 2",
    "t1 < 5 ? t1 + t2 : 5",
    "t1 < 2 ? t1+t2 >= 2 ? 5 : 10 : 0",
    "count([t1,t2],{#>1}) > 1 ? 5 : 0",
    "float(float(t2 < 5 ? t1 + t2 : 5))",
    "t1 ?? t2 ?? 5",
    "t1 ?? 5",
    "t1 ?? t2",
    "max(t1, t2)",
    "min(t1, t2, 1)",
    "max([t1, t2])",
    "abs(-t1)",
    "ceil(t1 / 3)",
    "floor(-t2 / 3)",
    "round(2.5)",
    "round(-2.5)",
    "round(0.49999999999999994)",
    "int(t2 / 2)",
    "1 < t1 < 3",
    "1 < t1 < 2",
    "t1 == 2",
    "t1 == 2 ? 1 : 0",
    "t1 and t2",
    "true and t1 > 1 ? 1 : 2",
    "not (t1 > 1) ? 1 : 0",
    "!(t1 > 1) ? 1 : 0",
    "t1 > 1 && t2 > 1 ? 3 : 4",
    "t1 > 1 || t2 > 100 ? 3 : 4",
    "mean([t1, t2])",
    "median([t1, t2, 10])",
    "median([t1, t2])",
    "sum([t1, t2])",
    "sum([1, 2, 3])",
    "sum([])",
    "len([t1, t2])",
    "unknown + 1",
    "t1 +",
    "t1 + + t2",
    "(t1",
    "t1 @ t2",
    "t1 ?? t2 + 1",
    "(t1 ?? t2) + 1",
    "t1 + (t2 ?? 0)",
    "let x = t1 * 2; x + t2",
    "let t1 = 3; t1",
    "t1; t2",
    "if t1 > 1 { t2 } else { 0 }",
    "[t1, t2][1]",
    "[t1, t2][-1]",
    "[t1, t2][5]",
    "len([1,2,3][1:])",
    "first([t1, t2])",
    "last([t1, t2])",
    "all([t1, t2], {# > 1}) ? 1 : 0",
    "any([t1, t2], # > 4) ? 1 : 0",
    "none([t1,t2], {# > 10}) ? 1: 0",
    "one([t1,t2], {# > 4}) ? 1 : 0",
    "len(filter([t1, t2, 7], {# > 3}))",
    "sum(map([t1, t2], {# * 2}))",
    "reduce([t1, t2], #acc + #)",
    "reduce([t1, t2], #acc + #, 10)",
    "find([t1, t2], # > 3)",
    "findIndex([t1, t2], # > 3)",
    "findLast([t1, t2, 9], # > 3)",
    "findLastIndex([t1, t2], # > 100)",
    "1_000 + t1",
    "0x10 + t1",
    "0b101",
    "0o17",
    "1e3",
    ".5 + t1",
    "1. + t1",
    "t1 in [2, 3] ? 1 : 0",
    "2 in [t1] ? 1 : 0",
    "t1 not in [2] ? 1 : 0",
    "t1 % 2.0",
    "5 % 3",
    "-5 % 3",
    "5 % 0",
    '"a" + t1',
    't1 > "a"',
    't1 == "a" ? 1 : 0',
    "t1 == nil ? 1 : 0",
    "nil",
    "nil + 1",
    "t1 ?? nil",
    "t2 ?? nil",
    'true ? 1 : "a"',
    "t1 ? 1 : 2",
    "1 ? 1 : 2",
    "t1 // comment\n + 1",
    "t1 /* c */ + 1",
    "t1 ?: 5",
    "t1 > 0 ?: 5",
    "9223372036854775807 + 1",
    "9223372036854775808",
    "1e400",
    "int(1e300)",
    "max()",
    'max("a")',
    'abs("a")',
    'float("3.5")',
    'float("x")',
    'int("12")',
    'int("1.5")',
    'string(t1) == "2" ? 1 : 0',
    'string(1e21) == "1e+21" ? 1 : 0',
    'string(100000.0) == "100000" ? 1 : 0',
    "t1 | max(t2)",
    "t1 ** -1",
    "0 ** -1",
    "(-8) ** (1/3)",
    "2 ** 1024",
    "(-2) ** 1025",
    "len(1..5)",
    "len(5..1)",
    '{"a": t1}.a',
    '{a: t1}["a"]',
    "{a: t1}.b ?? 7",
    "{a: t1}?.a",
    "#",
    "count([true, false, true])",
    "count([t1])",
    "-t1",
    "+t1",
    "--t1",
    "- -t1",
    "not true ? 1 : 0",
    "1 + 2 * 3 - 4 / 2",
    "(1 + 2) * 3",
    "t1 * (t2 - 1) / 2",
    "t1 < t2 == true ? 1 : 0",
    "1 == 1.0 ? 1 : 0",
    "[1] == [1.0] ? 1 : 0",
    "[[1]] == [[1.0]] ? 1 : 0",
    "t1 >= 2 and t2 <= 5 ? 1 : 0",
    "t1 or true",
    'len("h\u00e9llo")',
    '"ab" contains "b" ? 1 : 0',
    '"ab" startsWith "a" ? 1 : 0',
    "max(t1, nil)",
    "min([])",
    "mean([])",
    "median([])",
    "reduce([], #acc)",
    "let x = 1; let y = x + 1; y * t1",
    "t1 ?? t2 ?? nil",
    "(t1 ?? 0) + (t2 ?? 0)",
    "t1 != nil ? t1 : t2",
    "max(t1 ?? 0, t2 ?? 0)",
    "sum([t1 ?? 0, t2 ?? 0])",
    "count([t1, t2], # != nil)",
    "[t1, t2] | filter(# != nil) | len()",
    "int(t1) % 2",
    "int(t1) / 2",
    "abs(int(-t1))",
    "ceil(5)",
    "round(-0.4)",
    "floor(-0.5)",
    "0.1 + 0.2",
    "1/3",
    "1e-5 * t1",
    "7 ** 1e2",
    "3.5 ** 100",
    "[t1, 2][t1]",
    "t1(1)",
    "now()",
]
VALUE_SETS = [
    {"t1": 2.0, "t2": 5.0},
    {"t1": None, "t2": 5.0},
    {"t1": -1.0, "t2": 0.0},
    {"t1": 0.5, "t2": None},
]


def _random_formulas(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    atoms = ["t1", "t2", "1", "2", "0", "3.5", "-1", "0.5", "nil", "true", "false", "10", "7"]
    binary = [
        "+",
        "-",
        "*",
        "/",
        "%",
        "**",
        "<",
        ">",
        "<=",
        ">=",
        "==",
        "!=",
        "and",
        "or",
        "??",
        "in",
    ]

    def gen(depth: int) -> str:
        if depth <= 0 or rng.random() < 0.25:
            return rng.choice(atoms)
        roll = rng.random()
        if roll < 0.45:
            return f"{gen(depth - 1)} {rng.choice(binary)} {gen(depth - 1)}"
        if roll < 0.55:
            return f"({gen(depth - 1)})"
        if roll < 0.65:
            return f"{gen(depth - 1)} ? {gen(depth - 1)} : {gen(depth - 1)}"
        if roll < 0.72:
            return f"{rng.choice(['-', 'not ', '!'])}{gen(depth - 1)}"
        if roll < 0.85:
            name = rng.choice(
                [
                    "max",
                    "min",
                    "abs",
                    "ceil",
                    "floor",
                    "round",
                    "int",
                    "float",
                    "mean",
                    "median",
                    "sum",
                    "len",
                    "first",
                    "last",
                ]
            )
            if name in ("max", "min"):
                return f"{name}({gen(depth - 1)}, {gen(depth - 1)})"
            if name in ("mean", "median", "sum", "len", "first", "last"):
                return f"{name}([{gen(depth - 1)}, {gen(depth - 1)}])"
            return f"{name}({gen(depth - 1)})"
        if roll < 0.95:
            name = rng.choice(
                ["all", "any", "none", "one", "count", "filter", "map", "find", "findIndex"]
            )
            body = rng.choice(["# > 1", "# == nil", "# * 2", "# ?? 0", "# < t2", "# != 1"])
            return f"{name}([{gen(depth - 1)}, {gen(depth - 1)}], {{{body}}})"
        return f"[{gen(depth - 1)}, {gen(depth - 1)}][{rng.choice(['0', '1', '-1', 't1'])}]"

    return [gen(4) for _ in range(count)]


def _ask(binary: str, requests: list[dict[str, object]]) -> list[dict[str, object]]:
    text = "\n".join(json.dumps(r) for r in requests) + "\n"
    done = subprocess.run([binary], input=text, capture_output=True, text=True, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def main(binary: str) -> None:
    go_requests: list[dict[str, object]] = (
        [{"kind": "ParseFloat", "text": t} for t in FLOATS]
        + [{"kind": "ParseBool", "text": t} for t in BOOLS]
        + [{"kind": "ParseDuration", "text": t} for t in DURATIONS]
        + [{"kind": "TypedFloat", "text": t} for t in TYPED_FLOATS]
        + [{"kind": "TrimSpace", "text": t} for t in TRIMS]
        + [{"kind": "Pow", "text": t} for t in _pow_arguments()]
        + [{"kind": "PromDecode", "text": t} for t in BODIES]
    )
    go_answers = _ask(binary, go_requests)
    cases = [{"request": q, "answer": a} for q, a in zip(go_requests, go_answers, strict=True)]
    (HERE.parent / "keda_go_oracle.json").write_text(
        json.dumps(
            {"source": "Go 1.19 standard library via kedaoracle", "cases": cases},
            indent=1,
            ensure_ascii=False,
        )
        + "\n"
    )
    rng = random.Random(20260830)
    expr_requests: list[dict[str, object]] = []
    for formula in HAND_FORMULAS:
        for values in VALUE_SETS[:2]:
            expr_requests.append(
                {"kind": "Formula", "formula": formula, "declared": ["t1", "t2"], "values": values}
            )
    for formula in _random_formulas(800, seed=7):
        expr_requests.append(
            {
                "kind": "Formula",
                "formula": formula,
                "declared": ["t1", "t2"],
                "values": rng.choice(VALUE_SETS),
            }
        )
    expr_answers = _ask(binary, expr_requests)
    lines = [
        json.dumps([q["formula"], q["values"], a], ensure_ascii=False, separators=(",", ":"))
        for q, a in zip(expr_requests, expr_answers, strict=True)
    ]
    header = json.dumps(
        "github.com/expr-lang/expr v1.17.8 via kedaoracle: [formula, values, answer] where the "
        "formula is wrapped by castToFloatIfNecessary and compiled with t1, t2 as float64"
    )
    (HERE.parent / "keda_expr_oracle.json").write_text(
        '{"source": ' + header + ',\n"cases": [\n' + ",\n".join(lines) + "\n]}\n"
    )


if __name__ == "__main__":
    main(sys.argv[1])
