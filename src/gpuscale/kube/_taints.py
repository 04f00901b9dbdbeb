"""Taints and tolerations, and which taint a set of tolerations leaves untolerated.

Upstream: ``k8s.io/api/core/v1`` ``types.go`` (the ``Taint`` and ``Toleration`` structs,
whose field order these dataclasses keep: a taint is key, value, effect), ``toleration.go``
(``Toleration.ToleratesTaint``) and ``k8s.io/component-helpers/scheduling/corev1``
``helpers.go`` (``FindMatchingUntoleratedTaint``), as of Kubernetes 1.35.

``ToleratesTaint`` reads, in order: an effect that is set must equal the taint's; a key
that is set must equal the taint's (an empty key only makes sense with ``Exists`` and then
matches every key); then the operator decides: ``Exists`` ignores the value, ``Equal``
and the empty operator compare values, and any other operator tolerates nothing. That
last case is where an earlier copy in gpuscale read an unknown operator as ``Equal``;
upstream's reading is the one kept. (The ``Gt``/``Lt`` toleration operators behind
1.35's alpha ``TaintTolerationComparisonOperators`` gate are not modelled: with the gate
off, as by default, they tolerate nothing, which is what happens here.)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "TAINT_EFFECTS",
    "TOLERATION_OPERATORS",
    "Taint",
    "Toleration",
    "find_untolerated_taint",
]

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
"""The ``TaintEffect`` constants of core/v1."""
TOLERATION_OPERATORS = ("Exists", "Equal")
"""The ``TolerationOperator`` constants of core/v1 (the empty operator means ``Equal``)."""


@dataclass(frozen=True, slots=True)
class Taint:
    """A node taint (``spec.taints[]``), written ``key[=value]:effect``."""

    key: str
    """Taint key, e.g. ``amd.com/gpu``."""
    value: str = ""
    """Taint value; DOKS GPU taints have none."""
    effect: str = "NoSchedule"
    """``NoSchedule``, ``PreferNoSchedule`` or ``NoExecute``."""

    def __str__(self) -> str:
        value = f"={self.value}" if self.value else ""
        return f"{self.key}{value}:{self.effect}"


@dataclass(frozen=True, slots=True)
class Toleration:
    """A pod toleration (``spec.tolerations[]``); ``operator`` defaults to ``Equal``."""

    key: str = ""
    """Taint key to tolerate; empty with ``Exists`` tolerates every taint."""
    operator: str = "Equal"
    """``Equal`` (values must match) or ``Exists`` (any value); others tolerate nothing."""
    value: str = ""
    """Value to match with ``Equal``."""
    effect: str = ""
    """Effect to tolerate; empty tolerates all effects."""
    toleration_seconds: int | None = None
    """How long a ``NoExecute`` taint is tolerated; not modelled (no eviction)."""

    def tolerates(self, taint: Taint) -> bool:
        """Whether this toleration tolerates ``taint`` (``Toleration.ToleratesTaint``)."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("Equal", ""):
            return self.value == taint.value
        return False


def find_untolerated_taint(
    taints: Iterable[Taint], tolerations: Sequence[Toleration]
) -> Taint | None:
    """The first ``NoSchedule``/``NoExecute`` taint no toleration tolerates, or None.

    ``FindMatchingUntoleratedTaint`` with the filter the scheduler's ``TaintToleration``
    plugin passes (``PreferNoSchedule`` taints only score, they never filter).
    """
    for taint in taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None
