"""The HPA's arithmetic in words: one sentence shape for every place that tells it.

Under an ``AverageValue`` target the HPA divides what it reads by the replicas and
compares the quotient with a target *per replica*: 80 / 2 replicas = 40 per replica against
a target of 80 per replica, so ceil(2 × 40/80) = 1 (upstream
``GetExternalPerPodMetricReplicas``, ``pkg/controller/podautoscaler/replica_calculator.go``).
The report (``gpuscale.report.hpa``: the demo's story, the decisions table), and lint's
``query-divides-by-replicas`` and ``flaps-under-steady-load`` all call :func:`hpa_step_text`,
so the wording and the numbers cannot drift apart. Pure, no imports beyond ``math``.
"""

from __future__ import annotations

import math

__all__ = ["hpa_step_text"]


def _g(value: float) -> str:
    return f"{value:g}"


def hpa_step_text(
    *,
    target_type: str,
    usage: float,
    target: float,
    replicas: int,
    desired: int,
    read: float | None = None,
) -> str:
    """One HPA computation, both numbers and the formula.

    ``usage`` is what the HPA compared with ``target`` (per replica under AverageValue);
    ``read`` what it read before dividing by ``replicas`` (AverageValue only; omitted when
    unknown). When ceil(replicas × usage / target) is not ``desired`` the ratio was within
    the HPA's tolerance and the text says so.
    """
    usage_text, target_text = _g(usage), _g(target)
    if target_type == "AverageValue":
        plural = "" if replicas == 1 else "s"
        divided = "" if read is None else f"{_g(read)} / {replicas} replica{plural} = "
        said = f"{divided}{usage_text} per replica against a target of {target_text} per replica"
    else:
        said = f"{usage_text} against a target of {target_text} ({target_type})"
    if target > 0 and math.ceil(replicas * usage / target - 1e-9) == desired:
        return f"{said}: ceil({replicas} × {usage_text}/{target_text}) = {desired}"
    return f"{said}: within the HPA's tolerance of the target, so {desired}"
