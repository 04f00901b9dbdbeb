"""A small runner for Prometheus' PromQL test notation, so upstream cases can be transcribed.

Prometheus tests its engine with scripts (promql/testdata/*.test, later
promql/promqltest/testdata/) that ``load`` series at a fixed interval and ``eval`` queries
with expected answers. This module understands the parts of that notation our transcribed
cases use (written from the notation's description, not copied from upstream's runner):

```
load 10s
  metric{job="a"} 0+10x3 _ stale 1x2     # 0 10 20 30, a gap, a staleness marker, 1 1 1
eval instant at 1m sum(metric)
  {} 30
eval_fail instant at 1m rate(metric)       # must raise PromQLError
eval_ordered instant at 1m sort(metric)    # order must match too
eval range from 0 to 1m step 30s metric
  metric{job="a"} 0 _ 30
clear
```

Values compare as upstream does: relative difference below 1e-6, NaN equal to NaN.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import promql_parser

from gpuscale.promql import (
    Engine,
    MatrixResult,
    PromQLError,
    ScalarResult,
    SeriesStore,
    VectorResult,
)
from gpuscale.promql.labels import Labels, labels_from_mapping

__all__ = ["Outcome", "run_script"]

_EPSILON = 1e-6
_STALE = "stale"
_EVAL = re.compile(r"^eval(?:_(fail|ordered))?\s+instant\s+at\s+(\S+)\s+(.+)$")
_EVAL_RANGE = re.compile(
    r"^eval(?:_(fail))?\s+range\s+from\s+(\S+)\s+to\s+(\S+)\s+step\s+(\S+)\s+(.+)$"
)
_ITEM = re.compile(
    r"^([+-]?(?:[0-9.]+(?:e[+-]?\d+)?|Inf|NaN|_))(?:([+-])([0-9.]+(?:e[+-]?\d+)?))?x(\d+)$", re.I
)


@dataclass
class Outcome:
    """What a script did: how many evals ran and which failed (with why)."""

    evals: int = 0
    failures: list[str] = field(default_factory=list)


def _ms(text: str) -> int:
    if re.fullmatch(r"-?\d+", text):
        return int(text) * 1000
    neg = text.startswith("-")
    if re.fullmatch(r"-?0+[a-z]*", text):
        return 0
    d = promql_parser.parse_duration(text.lstrip("-"))
    ms = int(d.total_seconds() * 1000)
    return -ms if neg else ms


def _number(text: str) -> float:
    low = text.lower()
    if low in ("inf", "+inf"):
        return math.inf
    if low == "-inf":
        return -math.inf
    if low == "nan":
        return math.nan
    return float(text)


def _expand(values: str) -> list[float | str | None]:
    """Series notation: ``1 2 _ stale``, ``a+bxn`` / ``a-bxn`` (n+1 values), ``axn``."""
    out: list[float | str | None] = []
    for item in values.split():
        if item == "_":
            out.append(None)
            continue
        if item == _STALE:
            out.append(_STALE)
            continue
        m = _ITEM.match(item)
        if m is None:
            out.append(_number(item))
            continue
        start, sign, step, times = m.groups()
        count = int(times) + 1
        if start == "_":
            out.extend([None] * count)
            continue
        a = _number(start)
        b = float(step or 0) * (-1 if sign == "-" else 1)
        out.extend(a + b * i for i in range(count))
    return out


def _split_series(line: str) -> tuple[str, str]:
    line = line.strip()
    if "{" in line.split()[0] or line.startswith("{"):
        end = _closing_brace(line)
        return line[: end + 1], line[end + 1 :]
    head, _, rest = line.partition(" ")
    if "\t" in head:
        head, _, rest2 = head.partition("\t")
        rest = rest2 + " " + rest
    return head, rest


def _closing_brace(line: str) -> int:
    in_quote = False
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\" and in_quote:
            i += 2
            continue
        if c == '"':
            in_quote = not in_quote
        elif c == "}" and not in_quote:
            return i
        i += 1
    raise ValueError(f"unbalanced braces in {line!r}")


def _labels(selector: str) -> Labels:
    selector = selector.strip()
    if selector in ("{}", ""):
        return ()
    expr = promql_parser.parse(selector)
    labels = {}
    if expr.name:
        labels["__name__"] = expr.name
    for m in expr.matchers.matchers:
        labels[m.name] = m.value
    return labels_from_mapping(labels)


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if a == b:
        return True
    return abs(a - b) / (abs(a) + abs(b)) < _EPSILON


def run_script(script: str, *, version: str) -> Outcome:
    """Run ``script`` against a fresh store with the engine in ``version`` ("2" or "3")."""
    outcome = Outcome()
    store = SeriesStore()
    engine = Engine(store, version=version)  # type: ignore[arg-type]
    lines = [ln.rstrip() for ln in script.splitlines()]
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        if line == "clear":
            store = SeriesStore()
            engine = Engine(store, version=version)  # type: ignore[arg-type]
            continue
        body: list[str] = []
        while i < len(lines) and lines[i][:1] in (" ", "\t") and lines[i].strip():
            if not lines[i].strip().startswith("#"):
                body.append(lines[i].strip())
            i += 1
        if line.startswith("load "):
            step = _ms(line.split()[1])
            for entry in body:
                selector, values = _split_series(entry)
                labels = _labels(selector)
                for k, v in enumerate(_expand(values)):
                    if v is None:
                        continue
                    if v == _STALE:
                        store.mark_stale(labels, k * step)
                        if not store.samples(labels):
                            continue
                    else:
                        assert isinstance(v, float)
                        store.append(labels, k * step, v)
            continue
        m = _EVAL.match(line)
        if m is not None:
            outcome.evals += 1
            kind, at, query = m.groups()
            _check_instant(engine, query, _ms(at), kind=kind, body=body, outcome=outcome)
            continue
        m = _EVAL_RANGE.match(line)
        if m is not None:
            outcome.evals += 1
            kind, start, end, step_text, query = m.groups()
            window = (_ms(start), _ms(end), _ms(step_text))
            _check_range(engine, query, window, kind=kind, body=body, outcome=outcome)
            continue
        raise ValueError(f"unsupported test line: {line!r}")
    return outcome


def _check_instant(
    engine: Engine, query: str, t: int, *, kind: str | None, body: list[str], outcome: Outcome
) -> None:
    where = f"{query} at {t}ms"
    try:
        result = engine.instant(query, t)
    except PromQLError as exc:
        if kind != "fail":
            outcome.failures.append(f"{where}: unexpected error {exc}")
        return
    if kind == "fail":
        outcome.failures.append(f"{where}: expected an error, got {result.to_api_json()['data']}")
        return
    if isinstance(result, ScalarResult):
        expected = _number(body[0]) if body else None
        if expected is None or not _close(result.value, expected):
            outcome.failures.append(f"{where}: scalar {result.value} vs {body}")
        return
    if isinstance(result, MatrixResult):
        got = {s.labels: list(s.values) for s in result.series}
        want = {}
        for entry in body:
            selector, values = _split_series(entry)
            want[_labels(selector)] = [v for v in _expand(values) if v is not None]
        if got.keys() != want.keys() or any(
            len(got[k]) != len(want[k])
            or not all(_close(a, float(b)) for a, b in zip(got[k], want[k], strict=True))  # type: ignore[arg-type]
            for k in got
        ):
            outcome.failures.append(f"{where}: matrix {got} vs {want}")
        return
    assert isinstance(result, VectorResult)
    expected_rows = []
    for entry in body:
        selector, value = _split_series(entry)
        expected_rows.append((_labels(selector), _number(value.strip())))
    got_rows = [(s.labels, s.value) for s in result.samples]
    if dict(got_rows).keys() != dict(expected_rows).keys() or len(got_rows) != len(expected_rows):
        outcome.failures.append(f"{where}: labels {got_rows} vs {expected_rows}")
        return
    want = dict(expected_rows)
    for labels, v in got_rows:
        if not _close(v, want[labels]):
            outcome.failures.append(f"{where}: {dict(labels)} {v} vs {want[labels]}")
            return
    if kind == "ordered" and not all(
        _close(a, b) for (_, a), (_, b) in zip(got_rows, expected_rows, strict=True)
    ):
        outcome.failures.append(f"{where}: order {got_rows} vs {expected_rows}")


def _check_range(
    engine: Engine,
    query: str,
    window: tuple[int, int, int],
    *,
    kind: str | None,
    body: list[str],
    outcome: Outcome,
) -> None:
    start, end, step = window
    where = f"{query} from {start} to {end} step {step}"
    try:
        result = engine.range(query, start, end, step)
    except PromQLError as exc:
        if kind != "fail":
            outcome.failures.append(f"{where}: unexpected error {exc}")
        return
    if kind == "fail":
        outcome.failures.append(f"{where}: expected an error")
        return
    got = {s.labels: dict(zip(s.timestamps_ms, s.values, strict=True)) for s in result.series}
    want: dict[Labels, dict[int, float]] = {}
    for entry in body:
        selector, values = _split_series(entry)
        points = {}
        for k, v in enumerate(_expand(values)):
            if v is not None and v != _STALE:
                points[start + k * step] = float(v)  # type: ignore[arg-type]
        want[_labels(selector)] = points
    if got.keys() != want.keys():
        outcome.failures.append(f"{where}: series {sorted(got)} vs {sorted(want)}")
        return
    for labels, points in got.items():
        exp = want[labels]
        if points.keys() != exp.keys() or not all(_close(points[t], exp[t]) for t in points):
            outcome.failures.append(f"{where}: {dict(labels)} {points} vs {exp}")
            return


def main(argv: list[str] | None = None) -> int:
    """Run upstream test files from a Prometheus checkout, block by block (``clear``).

    ``python -m tests.unit.promql.promqltest --version 2 prometheus/promql/testdata/*.test``
    Blocks using notation this runner does not read (native histograms, ``eval_warn``, ...)
    are reported as skipped; failures are printed.
    """
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(description="Run Prometheus PromQL test files.")
    parser.add_argument("--version", choices=["2", "3"], required=True)
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args(argv)
    evals = failures = skipped = 0
    for path in args.files:
        for block in path.read_text().split("\nclear\n"):
            try:
                outcome = run_script(block, version=args.version)
            except (ValueError, SyntaxError) as exc:
                skipped += 1
                print(f"{path.name}: block skipped ({' '.join(str(exc).split())[:120]})")
                continue
            evals += outcome.evals
            failures += len(outcome.failures)
            for failure in outcome.failures:
                print(f"{path.name}: {failure}")
    print(f"{evals} evals, {failures} failures, {skipped} blocks skipped")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
