"""Scenario files: timed load steps, as YAML, with errors that name ``file:line``.

A scenario is a mapping with ``steps`` (and optionally ``until`` and a default
``workload``), or just the list of steps::

    until: 30m
    steps:
      - at: 60s
        set_gauge: {name: my_custom_gauge, value: 160, pods: 1}
      - at: 0s
        request_rate: 12
      - at: 10m
        ramp: {from: 0, to: 20, over: 10m}

- ``set_gauge``: set gauge ``name`` to ``value`` in ``pods`` ready pods (a number, or
  ``all``; default 1), each chosen as the Service would route a request to it — the
  tutorial's ``curl http://<service>/?value=160``. The value lives in the pod's process:
  pods started later export 0.
- ``request_rate``: requests per second from ``at`` on (Poisson arrivals).
- ``ramp``: the rate goes linearly from ``from`` to ``to`` over ``over``, then holds.

A step at or after ``until`` is an error (it would never act).

Every step may name its ``workload`` (Deployment name); without one, the scenario's
``workload`` or, in a one-workload simulation, that workload is meant. Durations take
``30s``, ``5m``, ``1h30m`` or seconds. Parsing is pure: the caller reads the file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from gpuscale.errors import InputError, ManifestError
from gpuscale.kube import format_duration, parse_duration
from gpuscale.manifests import parse_yaml

__all__ = [
    "GaugeStep",
    "RampStep",
    "RateStep",
    "Scenario",
    "Step",
    "parse_scenario",
]

_FIX = "see the scenario format in docs/simulator.md"
_STEP_KINDS = ("set_gauge", "request_rate", "ramp")


@dataclass(frozen=True, slots=True)
class GaugeStep:
    """Set a gauge in some ready pods."""

    at: float
    name: str
    value: float
    pods: int | None
    """How many ready pods; None means all of them."""
    workload: str | None = None
    line: int = 0
    """Line of the step in its file (1-based; 0 when built in code)."""


@dataclass(frozen=True, slots=True)
class RateStep:
    """Requests per second from ``at`` on."""

    at: float
    rate: float
    workload: str | None = None
    line: int = 0


@dataclass(frozen=True, slots=True)
class RampStep:
    """A linear rate change from ``start`` to ``end`` over ``over`` seconds, then hold."""

    at: float
    start: float
    end: float
    over: float
    workload: str | None = None
    line: int = 0


Step = GaugeStep | RateStep | RampStep


@dataclass(frozen=True, slots=True)
class Scenario:
    """Parsed steps, sorted by time (stable for equal times)."""

    steps: tuple[Step, ...]
    until: float | None = None
    """How long the scenario runs; None leaves it to the caller (``--until``)."""
    source: str = "<scenario>"


def _line(node: Any, key: Any = None) -> int:
    lc = getattr(node, "lc", None)
    if lc is None:
        return 0
    try:
        if key is None:
            return int(lc.line) + 1
        if isinstance(key, int):
            return int(lc.item(key)[0]) + 1
        return int(lc.key(key)[0]) + 1
    except (KeyError, IndexError, TypeError, AttributeError):
        return int(lc.line) + 1


def _fail(message: str, source: str, line: int, fix: str = _FIX) -> InputError:
    return InputError(message, where=f"{source}:{line}" if line else source, fix=fix)


def _duration(value: Any, what: str, source: str, line: int) -> float:
    try:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise TypeError(value)
        return parse_duration(value)
    except (TypeError, ValueError):
        raise _fail(
            f"{what} must be a duration such as 30s, 5m or 1h30m, got {value!r}", source, line
        ) from None


def _number(value: Any, what: str, source: str, line: int, *, minimum: float | None = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(f"{what} must be a number, got {value!r}", source, line)
    number = float(value)
    if not math.isfinite(number) or (minimum is not None and number < minimum):
        bound = "" if minimum is None else f" >= {minimum:g}"
        raise _fail(f"{what} must be a finite number{bound}, got {value!r}", source, line)
    return number


def _mapping(value: Any, what: str, source: str, line: int) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(f"{what} must be a mapping", source, line)
    return value


def _check_keys(doc: Mapping[str, Any], allowed: tuple[str, ...], what: str, source: str) -> None:
    for key in doc:
        if key not in allowed:
            raise _fail(
                f"unknown key {key!r} in {what}; expected one of {', '.join(allowed)}",
                source,
                _line(doc, key),
            )


def _parse_step(doc: Any, source: str, line: int, default_workload: str | None) -> Step:
    step = _mapping(doc, "a step", source, line)
    _check_keys(step, ("at", "workload", *_STEP_KINDS), "a step", source)
    if "at" not in step:
        raise _fail("a step needs 'at' (when it happens)", source, line)
    at = _duration(step["at"], "at", source, _line(step, "at"))
    workload = step.get("workload", default_workload)
    if workload is not None and not isinstance(workload, str):
        raise _fail("workload must be a Deployment name", source, _line(step, "workload"))
    kinds = [k for k in _STEP_KINDS if k in step]
    if len(kinds) != 1:
        raise _fail(
            f"a step needs exactly one of {', '.join(_STEP_KINDS)}, got {len(kinds)}",
            source,
            line,
        )
    kind = kinds[0]
    body = step[kind]
    where = _line(step, kind)
    if kind == "request_rate":
        return RateStep(at, _number(body, "request_rate", source, where), workload, line)
    if kind == "set_gauge":
        gauge = _mapping(body, "set_gauge", source, where)
        _check_keys(gauge, ("name", "value", "pods"), "set_gauge", source)
        name = gauge.get("name")
        if not isinstance(name, str) or not name:
            raise _fail("set_gauge needs a metric name", source, where)
        if "value" not in gauge:
            raise _fail("set_gauge needs a value", source, where)
        value = _number(gauge["value"], "set_gauge.value", source, where, minimum=None)
        pods_raw = gauge.get("pods", 1)
        pods: int | None
        if pods_raw == "all":
            pods = None
        elif isinstance(pods_raw, int) and not isinstance(pods_raw, bool) and pods_raw >= 1:
            pods = pods_raw
        else:
            raise _fail(
                f"set_gauge.pods must be a positive number or 'all', got {pods_raw!r}",
                source,
                _line(gauge, "pods"),
            )
        return GaugeStep(at, name, value, pods, workload, line)
    ramp = _mapping(body, "ramp", source, where)
    _check_keys(ramp, ("from", "to", "over"), "ramp", source)
    for key in ("from", "to", "over"):
        if key not in ramp:
            raise _fail(f"ramp needs '{key}'", source, where)
    over = _duration(ramp["over"], "ramp.over", source, _line(ramp, "over"))
    if over <= 0:
        raise _fail("ramp.over must be longer than 0s", source, _line(ramp, "over"))
    return RampStep(
        at,
        _number(ramp["from"], "ramp.from", source, _line(ramp, "from")),
        _number(ramp["to"], "ramp.to", source, _line(ramp, "to")),
        over,
        workload,
        line,
    )


def parse_scenario(text: str, *, source: str = "<scenario>") -> Scenario:
    """Parse a scenario from YAML text; errors name ``source:line``.

    The text first goes through the manifests' YAML reader, which refuses what ruamel's
    round-trip loader would take or crash on: an alias inside its own anchor, aliases
    that expand to far more values than the text holds ("billion laughs"), nesting too
    deep, duplicate keys.
    """
    try:
        parse_yaml(text, source)
    except ManifestError as exc:
        raise InputError(exc.message, where=exc.where, fix=exc.fix) from None
    try:
        doc = YAML(typ="rt").load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise _fail(f"not valid YAML ({problem})", source, line, "fix the YAML syntax") from None
    until: float | None = None
    default_workload: str | None = None
    if isinstance(doc, Mapping):
        _check_keys(doc, ("steps", "until", "workload"), "the scenario", source)
        if "until" in doc:
            until = _duration(doc["until"], "until", source, _line(doc, "until"))
            if until <= 0:
                raise _fail("until must be longer than 0s", source, _line(doc, "until"))
        if "workload" in doc:
            if not isinstance(doc["workload"], str):
                raise _fail("workload must be a Deployment name", source, _line(doc, "workload"))
            default_workload = doc["workload"]
        if "steps" not in doc:
            raise _fail("the scenario has no 'steps'", source, 1)
        steps_doc = doc["steps"]
    else:
        steps_doc = doc
    if not isinstance(steps_doc, list) or not steps_doc:
        raise _fail("steps must be a non-empty list of steps", source, _line(steps_doc) or 1)
    steps = [
        _parse_step(item, source, _line(steps_doc, index), default_workload)
        for index, item in enumerate(steps_doc)
    ]
    if until is not None:
        for index, step in enumerate(steps):
            if step.at >= until:
                raise _fail(
                    f"the step at {format_duration(step.at)} is not before the scenario's "
                    f"until ({format_duration(until)}), so it would never act",
                    source,
                    _line(steps_doc[index], "at") or step.line,
                    f"move the step before {format_duration(until)}, or raise until past "
                    f"{format_duration(step.at)}",
                )
    ordered = sorted(range(len(steps)), key=lambda i: (steps[i].at, i))
    return Scenario(tuple(steps[i] for i in ordered), until, source)
