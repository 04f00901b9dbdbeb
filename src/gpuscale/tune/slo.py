"""Service-level objectives in the user's terms: parse ``late<=1%`` and friends, and
say whether (and by how much) a run meets them. Pure.

The grammar (one SLO per ``--slo``; several are all required)::

    slo      := measure op bound
    measure  := "late" | "failed" | ("latency" | "ttft" | "itl" | "pending") "_p" NN
    op       := "<=" | "<" | "=="
    bound    := PERCENT "%" | COUNT        (late, failed)
              | DURATION                   (the percentiles: 2s, 100ms, 10m)

- ``late``: the share of the workload's requests that were not answered within its
  ``latency_target`` (the profile's ``workloads.<name>.latency_target``): served late,
  timed out, or dropped. Requests still in flight when the run ends are left out.
  A bare count (``late<=20``) counts requests instead of a share.
- ``failed``: requests that timed out or whose replica went away (a share with ``%``).
- ``latency_pNN``: the NN-th percentile of the requests' latency, a request that failed
  (timed out, dropped) counting as slower than any bound (as for ``ttft`` and ``itl``).
- ``pending_pNN``: the NN-th percentile of the time the workload's pods spend Pending
  (from their creation to their binding to a node, or to the end of the run).
- ``ttft_pNN`` / ``itl_pNN``: the NN-th percentile of the served requests' time to first
  token and mean inter-token latency (vLLM's TPOT; one-token answers have none). They need
  the vLLM serving model (``serving: kind: vllm`` in the profile): the command refuses
  them, with a line saying so, for a workload on the queue model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from gpuscale.errors import InputError
from gpuscale.kube import format_duration, parse_duration

__all__ = [
    "NEEDS_SERVING",
    "SLO",
    "Measures",
    "Op",
    "SloCheck",
    "check_slos",
    "parse_slo",
    "parse_slos",
    "percentile",
]

Op = Literal["<=", "<", "=="]
"""A comparison: at most, below, exactly."""

_FORM = re.compile(
    r"\s*(?P<measure>[a-z_]+?)(?:_p(?P<q>\d+(?:\.\d+)?))?\s*(?P<op><=|<|==)\s*(?P<bound>\S+)\s*"
)
_SHARES = ("late", "failed")
_PERCENTILES = ("latency", "ttft", "itl", "pending")
NEEDS_SERVING = ("ttft", "itl")
"""Measures only the vLLM serving model has."""
_EXAMPLES = "late<=1%, failed==0, latency_p99<=20s, pending_p99<=10m, ttft_p95<=2s, itl_p99<=100ms"


@dataclass(frozen=True, slots=True)
class SLO:
    """One objective: ``measure`` ``op`` ``bound``."""

    text: str
    """As the user wrote it (for messages and tables)."""
    measure: str
    """``late``, ``failed``, ``latency``, ``pending`` (``ttft``/``itl`` with serving)."""
    op: Op
    bound: float
    """A share in 0..1 (``share``), a count, or seconds (percentiles)."""
    quantile: float | None = None
    """The percentile, 0 < q <= 100, for the percentile measures."""
    share: bool = False
    """Whether ``bound`` is a share of the requests (written with ``%``)."""

    @property
    def key(self) -> str:
        """The measure's name in :class:`Measures` (``late``, ``latency_p99``)."""
        if self.quantile is None:
            return f"{self.measure}_share" if self.share else self.measure
        return f"{self.measure}_p{self.quantile:g}"

    def holds(self, value: float) -> bool:
        """Whether ``value`` meets the bound."""
        if self.op == "==":
            return value == self.bound
        if self.op == "<":
            return value < self.bound
        return value <= self.bound

    def excess(self, value: float) -> float:
        """How far ``value`` is beyond the bound, relative to it (<= 0 when met): the
        constraint Optuna keeps at or below 0."""
        scale = self.bound if self.bound > 0 else (1.0 if not self.share else 0.01)
        if self.holds(value):
            return (value - self.bound) / scale if self.op != "==" else 0.0
        return max((value - self.bound) / scale, 1e-9)


def _refuse(text: str, why: str, fix: str = f"write e.g. {_EXAMPLES}") -> InputError:
    return InputError(f"{why} in {text!r}", where="--slo", fix=fix)


def parse_slo(text: str) -> SLO:
    """Parse one SLO; a one-line :class:`InputError` (``--slo``) for anything else."""
    match = _FORM.fullmatch(text)
    if match is None:
        raise _refuse(text, "expected MEASURE OP BOUND (op <=, < or ==)")
    measure, q_text, op_text, bound_text = match.group("measure", "q", "op", "bound")
    op: Op = "==" if op_text == "==" else "<" if op_text == "<" else "<="
    if measure in _SHARES:
        if q_text is not None:
            raise _refuse(text, f"{measure} takes no percentile")
        share = bound_text.endswith("%")
        number = bound_text[:-1] if share else bound_text
        try:
            bound = float(number)
        except ValueError:
            raise _refuse(text, f"{measure} needs a share such as 1% or a count") from None
        if not math.isfinite(bound) or bound < 0 or (share and bound > 100):
            raise _refuse(text, f"{measure} needs a share in 0..100% or a count >= 0")
        if not share and bound != int(bound):
            raise _refuse(text, f"a count of requests is whole, got {number}")
        return SLO(
            text.strip(),
            measure,
            op,
            bound / 100 if share else bound,
            None,
            share,
        )
    if measure not in _PERCENTILES:
        known = ", ".join([*_SHARES, *(f"{m}_pNN" for m in _PERCENTILES)])
        raise _refuse(text, f"unknown measure {measure!r}", fix=f"use one of {known}")
    if q_text is None:
        raise _refuse(text, f"{measure} needs a percentile, e.g. {measure}_p99")
    quantile = float(q_text)
    if not 0 < quantile <= 100:
        raise _refuse(text, "the percentile must be above 0 and at most 100")
    try:
        bound = parse_duration(bound_text)
    except (TypeError, ValueError, OverflowError):
        raise _refuse(text, f"{measure} needs a duration such as 2s, 100ms or 10m") from None
    if not math.isfinite(bound) or bound < 0:
        raise _refuse(text, "the duration must be finite and not negative")
    return SLO(text.strip(), measure, op, bound, quantile)


def parse_slos(texts: Sequence[str]) -> tuple[SLO, ...]:
    """Every ``--slo`` (at least one; the same measure twice is refused)."""
    if not texts:
        raise InputError(
            "no latency target to tune for", where="--slo", fix="give one, e.g. --slo 'late<=1%'"
        )
    slos = tuple(parse_slo(text) for text in texts)
    seen: dict[str, str] = {}
    for slo in slos:
        if slo.key in seen:
            raise InputError(
                f"{slo.text!r} and {seen[slo.key]!r} bound the same measure",
                where="--slo",
                fix="keep one of them",
            )
        seen[slo.key] = slo.text
    return slos


@dataclass(frozen=True, slots=True)
class Measures:
    """What one run measured, for the SLOs (see the module docstring for each)."""

    requests: int
    """Requests counted (those still in flight at the end left out)."""
    late: int
    failed: int
    latency: Sequence[float]
    """Served requests' latencies (seconds), any order."""
    pending: Sequence[float]
    """Pods' Pending durations (seconds)."""
    ttft: Sequence[float] = ()
    """Served requests' times to first token (vLLM workloads)."""
    itl: Sequence[float] = ()
    """Served requests' mean inter-token latencies (vLLM workloads)."""

    def value(self, slo: SLO) -> float:
        """The measured value ``slo`` bounds."""
        if slo.measure in _SHARES:
            count = self.late if slo.measure == "late" else self.failed
            if not slo.share:
                return float(count)
            return count / self.requests if self.requests else 0.0
        values = {
            "latency": self.latency,
            "pending": self.pending,
            "ttft": self.ttft,
            "itl": self.itl,
        }[slo.measure]
        assert slo.quantile is not None
        if slo.measure != "pending":
            # A request that failed never answered: slower than any bound.
            values = [*values, *([math.inf] * self.failed)]
        return percentile(values, slo.quantile)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile by linear interpolation (numpy's default); 0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    if math.isinf(ordered[high]):
        return ordered[high] if rank > low or math.isinf(ordered[low]) else ordered[low]
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass(frozen=True, slots=True)
class SloCheck:
    """The SLOs against one run."""

    values: Mapping[str, float]
    """SLO text → measured value."""
    met: bool
    excess: float
    """The largest relative excess over a bound (<= 0: all met)."""

    def describe(self, slos: Sequence[SLO]) -> str:
        """``late 0.4% (<=1%) ok; latency_p99 31s (<=20s) MISSED``."""
        parts = []
        for slo in slos:
            value = self.values[slo.text]
            shown = (
                f"{value * 100:.2f}%"
                if slo.share
                else "never answered"
                if math.isinf(value)
                else format_duration(value)
                if slo.quantile is not None
                else f"{value:g}"
            )
            parts.append(f"{slo.key} {shown} ({slo.text}) {'ok' if slo.holds(value) else 'MISSED'}")
        return "; ".join(parts)


def check_slos(slos: Sequence[SLO], measures: Measures) -> SloCheck:
    """Measure every SLO on one run."""
    values = {slo.text: measures.value(slo) for slo in slos}
    excesses = [slo.excess(values[slo.text]) for slo in slos]
    return SloCheck(
        values=values,
        met=all(slo.holds(values[slo.text]) for slo in slos),
        excess=min(max(excesses), 1e6) if excesses else 0.0,
    )
