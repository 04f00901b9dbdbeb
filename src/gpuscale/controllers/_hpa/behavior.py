"""Stabilization and rate limits: the normalization half of upstream ``horizontal.go``.

Upstream functions, one Python function each (but ``normalizeDesiredReplicas`` and
``normalizeDesiredReplicasWithBehaviors`` share one, by whether there is a
``spec.behavior``): ``stabilizeRecommendation`` and
``convertDesiredReplicasWithRules``/``calculateScaleUpLimit`` (the path with no
``spec.behavior``), ``stabilizeRecommendationWithBehaviors``,
``convertDesiredReplicasWithBehaviorRate``, ``calculateScaleUpLimitWithScalingRules``,
``calculateScaleDownLimitWithBehaviors``, ``getReplicasChangePerPeriod``,
``getLongestPolicyPeriod``, ``markScaleEventsOutdated`` and ``storeScaleEvent``.

Upstream keeps the recommendation and scale-event histories in controller maps and
reads ``time.Now()``; here the history goes in and the new history comes out, and
``now`` is a float of seconds passed by the caller. Time comparisons keep upstream's
strictness: a policy period or a behavior window counts an entry iff it is strictly
newer than ``now - seconds`` (``After``); an entry is reusable iff strictly older
(``Before``); the legacy window keeps entries that are not older than its cutoff.
Replica arithmetic is int32 as upstream's (see ``gonum``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gpuscale._gomath import go_ceil
from gpuscale.controllers._hpa.gonum import INT32_MAX, INT32_MIN, go_float_to_int32, wrap_int32
from gpuscale.controllers._hpa.spec import (
    DEFAULT_DOWNSCALE_STABILIZATION_SECONDS,
    Behavior,
    Recommendation,
    ScaleEvent,
    ScalingRules,
    generate_scale_down_rules,
    generate_scale_up_rules,
)

__all__ = [
    "MESSAGES",
    "RecommendationLike",
    "ScaleEventLike",
    "calculate_scale_down_limit",
    "calculate_scale_up_limit",
    "convert_desired_replicas_with_behavior_rate",
    "convert_desired_replicas_with_rules",
    "get_longest_policy_period",
    "get_replicas_change_per_period",
    "legacy_scale_up_limit",
    "mark_scale_events_outdated",
    "normalize_behavior_rate",
    "normalize_desired_replicas",
    "normalize_rules",
    "recommendations_of",
    "scale_events_of",
    "stabilize_recommendation",
    "stabilize_recommendation_into",
    "stabilize_recommendation_with_behaviors",
    "stabilize_with_behaviors",
    "stabilize_with_behaviors_into",
    "store_scale_event",
]

RecommendationLike = Recommendation | tuple[float, int]
ScaleEventLike = ScaleEvent | tuple[float, int] | tuple[float, int, bool]

MESSAGES = {
    "DesiredWithinRange": "the desired count is within the acceptable range",
    "ReadyForNewScale": "recommended size matches current size",
    "ScaleDownLimit": "the desired replica count is decreasing faster than the maximum scale rate",
    "ScaleDownStabilized": "recent recommendations were higher than current one, applying the "
    "highest recent recommendation",
    "ScaleUpLimit": "the desired replica count is increasing faster than the maximum scale rate",
    "ScaleUpStabilized": "recent recommendations were lower than current one, applying the "
    "lowest recent recommendation",
    "TooFewReplicas": "the desired replica count is less than the minimum replica count",
    "TooManyReplicas": "the desired replica count is more than the maximum replica count",
}
"""Upstream's condition messages, by reason."""


def recommendations_of(items: Iterable[RecommendationLike]) -> list[Recommendation]:
    """``(timestamp, replicas)`` pairs as Recommendation values (a new list; entries that
    already are exact Recommendation values are reused: they are immutable)."""
    return [
        item
        if type(item) is Recommendation and type(item[0]) is float and type(item[1]) is int
        else Recommendation(float(item[0]), int(item[1]))
        for item in items
    ]


def scale_events_of(items: Iterable[ScaleEventLike]) -> list[ScaleEvent]:
    """``(timestamp, change[, outdated])`` tuples as ScaleEvent values."""
    events = []
    for item in items:
        outdated = bool(item[2]) if len(item) > 2 else False
        events.append(ScaleEvent(float(item[0]), int(item[1]), outdated))
    return events


def _window(rules: ScalingRules | None, default: float) -> float:
    if rules is None or rules.stabilization_window_seconds is None:
        return default
    return float(rules.stabilization_window_seconds)


def stabilize_with_behaviors(
    *,
    desired: int,
    current_replicas: int,
    behavior: Behavior,
    recommendations: Iterable[RecommendationLike],
    now: float,
) -> tuple[int, str, list[Recommendation]]:
    """stabilizeRecommendationWithBehaviors with its reason: (replicas, reason, new history).

    The reason is the one upstream sets on AbleToScale when the result differs from
    ``desired``: ScaleUpStabilized if ``desired >= current_replicas``, else
    ScaleDownStabilized.
    """
    return stabilize_with_behaviors_into(
        recommendations_of(recommendations),
        desired=desired,
        current_replicas=current_replicas,
        behavior=behavior,
        now=now,
    )


def stabilize_with_behaviors_into(
    history: list[Recommendation],
    *,
    desired: int,
    current_replicas: int,
    behavior: Behavior,
    now: float,
) -> tuple[int, str, list[Recommendation]]:
    """:func:`stabilize_with_behaviors` on a list of exact Recommendation values that it
    updates and returns (no conversion: for a caller that owns such a list)."""
    up_cutoff = now - _window(behavior.scale_up, 0.0)
    down_cutoff = now - _window(behavior.scale_down, DEFAULT_DOWNSCALE_STABILIZATION_SECONDS)
    up_recommendation = desired
    down_recommendation = desired
    old_index: int | None = None
    for index, (timestamp, replicas) in enumerate(history):
        if timestamp > up_cutoff:
            up_recommendation = min(replicas, up_recommendation)
        if timestamp > down_cutoff:
            down_recommendation = max(replicas, down_recommendation)
        if timestamp < up_cutoff and timestamp < down_cutoff:
            old_index = index
    recommendation = current_replicas
    recommendation = max(recommendation, up_recommendation)
    recommendation = min(recommendation, down_recommendation)
    stored = Recommendation(float(now), desired)
    if old_index is None:
        history.append(stored)
    else:
        history[old_index] = stored
    reason = "ScaleUpStabilized" if desired >= current_replicas else "ScaleDownStabilized"
    return recommendation, reason, history


def stabilize_recommendation_with_behaviors(
    *,
    desired: int,
    current_replicas: int,
    behavior: Behavior,
    recommendations: Iterable[RecommendationLike],
    now: float,
) -> tuple[int, list[Recommendation]]:
    """stabilizeRecommendationWithBehaviors: clamp the current count between window extremes.

    The lowest recommendation of the scale-up window (``desired`` included) is a floor,
    the highest of the scale-down window a ceiling, and the current count is brought
    within them. ``desired`` (not the result) is recorded, reusing the last entry older
    than both windows or appending. Unset windows read as 0 s (up) and 300 s (down).
    Returns (stabilized replicas, the new history); the input is not modified.
    """
    replicas, _, history = stabilize_with_behaviors(
        desired=desired,
        current_replicas=current_replicas,
        behavior=behavior,
        recommendations=recommendations,
        now=now,
    )
    return replicas, history


def stabilize_recommendation(
    *,
    desired: int,
    recommendations: Iterable[RecommendationLike],
    now: float,
    window_seconds: float = DEFAULT_DOWNSCALE_STABILIZATION_SECONDS,
) -> tuple[int, list[Recommendation]]:
    """stabilizeRecommendation (no ``spec.behavior``): the max over the downscale window.

    Entries not older than ``now - window_seconds`` count; ``desired`` overwrites the last
    older entry, or is appended. Returns (stabilized replicas, the new history).
    """
    return stabilize_recommendation_into(
        recommendations_of(recommendations),
        desired=desired,
        now=now,
        window_seconds=window_seconds,
    )


def stabilize_recommendation_into(
    history: list[Recommendation], *, desired: int, now: float, window_seconds: float
) -> tuple[int, list[Recommendation]]:
    """:func:`stabilize_recommendation` on a list of exact Recommendation values that it
    updates and returns (no conversion: for a caller that owns such a list)."""
    cutoff = now - window_seconds
    maximum = desired
    old_index: int | None = None
    for index, (timestamp, replicas) in enumerate(history):
        if timestamp < cutoff:
            old_index = index
        elif replicas > maximum:
            maximum = replicas
    stored = Recommendation(float(now), desired)
    if old_index is None:
        history.append(stored)
    else:
        history[old_index] = stored
    return maximum, history


def legacy_scale_up_limit(
    current_replicas: int, *, factor: float = 2.0, minimum: float = 4.0
) -> int:
    """calculateScaleUpLimit: int32(max(factor x current, minimum)) (scaleUpLimitFactor/Minimum)."""
    return go_float_to_int32(max(factor * float(current_replicas), minimum))


def normalize_rules(
    *,
    desired: int,
    current_replicas: int,
    min_replicas: int,
    max_replicas: int,
    scale_up_limit_factor: float = 2.0,
    scale_up_limit_minimum: float = 4.0,
) -> tuple[int, str]:
    """convertDesiredReplicasWithRules with upstream's scaleUpLimitFactor/Minimum as arguments."""
    limit = legacy_scale_up_limit(
        current_replicas, factor=scale_up_limit_factor, minimum=scale_up_limit_minimum
    )
    if max_replicas > limit:
        maximum_allowed, limiting = limit, "ScaleUpLimit"
    else:
        maximum_allowed, limiting = max_replicas, "TooManyReplicas"
    if desired < min_replicas:
        return min_replicas, "TooFewReplicas"
    if desired > maximum_allowed:
        return maximum_allowed, limiting
    return desired, "DesiredWithinRange"


def convert_desired_replicas_with_rules(
    *,
    desired: int,
    current_replicas: int,
    min_replicas: int,
    max_replicas: int,
    scale_up_limit_factor: float = 2.0,
    scale_up_limit_minimum: float = 4.0,
) -> tuple[int, str]:
    """convertDesiredReplicasWithRules: min/max clamp plus the max(2x, 4) scale-up cap.

    Returns (replicas, condition reason): TooFewReplicas, ScaleUpLimit, TooManyReplicas or
    DesiredWithinRange. The factor and minimum are upstream's package variables
    (2.0 and 4.0; upstream's controller tests raise the factor to 8).
    """
    return normalize_rules(
        desired=desired,
        current_replicas=current_replicas,
        min_replicas=min_replicas,
        max_replicas=max_replicas,
        scale_up_limit_factor=scale_up_limit_factor,
        scale_up_limit_minimum=scale_up_limit_minimum,
    )


def get_replicas_change_per_period(
    period_seconds: float, events: Iterable[ScaleEventLike], now: float
) -> int:
    """getReplicasChangePerPeriod: the int32 sum of changes strictly newer than ``now - period``.

    The ``outdated`` flag is not consulted.
    """
    cutoff = now - period_seconds
    total = 0
    for event in scale_events_of(events):
        if event.timestamp > cutoff:
            total = wrap_int32(total + event.replica_change)
    return total


def get_longest_policy_period(rules: ScalingRules | None) -> int:
    """getLongestPolicyPeriod: the largest ``period_seconds`` among the rules' policies (or 0)."""
    longest = 0
    for policy in (rules.policies if rules is not None else None) or ():
        longest = max(longest, policy.period_seconds)
    return longest


def _period_start(
    current_replicas: int,
    period_seconds: int,
    up_events: Sequence[ScaleEvent],
    down_events: Sequence[ScaleEvent],
    now: float,
) -> int:
    added = get_replicas_change_per_period(period_seconds, up_events, now)
    removed = get_replicas_change_per_period(period_seconds, down_events, now)
    return wrap_int32(current_replicas - added + removed)


def calculate_scale_up_limit(
    *,
    current_replicas: int,
    scale_up_events: Iterable[ScaleEventLike],
    rules: ScalingRules | None,
    now: float,
    scale_down_events: Iterable[ScaleEventLike] = (),
) -> int:
    """calculateScaleUpLimitWithScalingRules: the most replicas the scale-up policies allow now.

    Each policy starts from the count at the start of its period (current - added +
    removed within the period) and adds ``value`` pods or ``ceil(start x (1 + value/100))``;
    ``Max`` (the default) takes the largest proposal, ``Min`` the smallest, ``Disabled``
    returns the current count. Fields left unset read as the API defaults.
    """
    rules = generate_scale_up_rules(rules)
    if rules.select_policy == "Disabled":
        return current_replicas
    up_events = scale_events_of(scale_up_events)
    down_events = scale_events_of(scale_down_events)
    pick_min = rules.select_policy == "Min"
    result = INT32_MAX if pick_min else INT32_MIN
    for policy in rules.policies or ():
        start = _period_start(current_replicas, policy.period_seconds, up_events, down_events, now)
        if policy.type == "Pods":
            proposed = wrap_int32(start + policy.value)
        else:
            proposed = go_float_to_int32(go_ceil(float(start) * (1 + float(policy.value) / 100)))
        result = min(result, proposed) if pick_min else max(result, proposed)
    return result


def calculate_scale_down_limit(
    *,
    current_replicas: int,
    scale_down_events: Iterable[ScaleEventLike],
    rules: ScalingRules | None,
    now: float,
    scale_up_events: Iterable[ScaleEventLike] = (),
) -> int:
    """calculateScaleDownLimitWithBehaviors: the fewest replicas the scale-down policies allow now.

    Each policy removes ``value`` pods, or keeps ``int32(start x (1 - value/100))``
    (truncated; may go negative), from the count at its period start. ``Max`` (the
    default) takes the smallest result (the biggest change), ``Min`` the largest. Fields
    left unset read as the API defaults.
    """
    rules = generate_scale_down_rules(rules)
    if rules.select_policy == "Disabled":
        return current_replicas
    up_events = scale_events_of(scale_up_events)
    down_events = scale_events_of(scale_down_events)
    pick_max = rules.select_policy == "Min"
    result = INT32_MIN if pick_max else INT32_MAX
    for policy in rules.policies or ():
        start = _period_start(current_replicas, policy.period_seconds, up_events, down_events, now)
        if policy.type == "Pods":
            proposed = wrap_int32(start - policy.value)
        else:
            proposed = go_float_to_int32(float(start) * (1 - float(policy.value) / 100))
        result = max(result, proposed) if pick_max else min(result, proposed)
    return result


def normalize_behavior_rate(
    *,
    desired: int,
    current_replicas: int,
    min_replicas: int,
    max_replicas: int,
    behavior: Behavior,
    scale_up_events: Iterable[ScaleEventLike],
    scale_down_events: Iterable[ScaleEventLike],
    now: float,
) -> tuple[int, str]:
    """convertDesiredReplicasWithBehaviorRate; unset ``behavior`` rules read as API defaults."""
    up_events = scale_events_of(scale_up_events)
    down_events = scale_events_of(scale_down_events)
    if desired > current_replicas:
        limit = calculate_scale_up_limit(
            current_replicas=current_replicas,
            scale_up_events=up_events,
            scale_down_events=down_events,
            rules=generate_scale_up_rules(behavior.scale_up),
            now=now,
        )
        limit = max(limit, current_replicas)
        if max_replicas > limit:
            maximum_allowed, reason = limit, "ScaleUpLimit"
        else:
            maximum_allowed, reason = max_replicas, "TooManyReplicas"
        if desired > maximum_allowed:
            return maximum_allowed, reason
    elif desired < current_replicas:
        limit = calculate_scale_down_limit(
            current_replicas=current_replicas,
            scale_up_events=up_events,
            scale_down_events=down_events,
            rules=generate_scale_down_rules(behavior.scale_down),
            now=now,
        )
        limit = min(limit, current_replicas)
        if min_replicas < limit:
            minimum_allowed, reason = limit, "ScaleDownLimit"
        else:
            minimum_allowed, reason = min_replicas, "TooFewReplicas"
        if desired < minimum_allowed:
            return minimum_allowed, reason
    return desired, "DesiredWithinRange"


def convert_desired_replicas_with_behavior_rate(
    *,
    desired: int,
    current_replicas: int,
    min_replicas: int,
    max_replicas: int,
    behavior: Behavior,
    scale_up_events: Iterable[ScaleEventLike],
    scale_down_events: Iterable[ScaleEventLike],
    now: float,
) -> tuple[int, str]:
    """convertDesiredReplicasWithBehaviorRate: rate limits and min/max in the direction of change.

    Scaling up is capped by ``min(max_replicas, max(scale-up limit, current))``, scaling
    down floored by ``max(min_replicas, min(scale-down limit, current))``. Returns
    (replicas, reason): ScaleUpLimit, TooManyReplicas, ScaleDownLimit, TooFewReplicas or
    DesiredWithinRange. ``desired`` is the already stabilized count.
    """
    return normalize_behavior_rate(
        desired=desired,
        current_replicas=current_replicas,
        min_replicas=min_replicas,
        max_replicas=max_replicas,
        behavior=behavior,
        scale_up_events=scale_up_events,
        scale_down_events=scale_down_events,
        now=now,
    )


def normalize_desired_replicas(
    history: list[Recommendation],
    *,
    desired: int,
    current_replicas: int,
    min_replicas: int,
    max_replicas: int,
    behavior: Behavior | None,
    window_seconds: float,
    scale_up_limit_factor: float,
    scale_up_limit_minimum: float,
    scale_up_events: Sequence[ScaleEvent],
    scale_down_events: Sequence[ScaleEvent],
    now: float,
) -> tuple[list[Recommendation], tuple[int, str, int, str]]:
    """normalizeDesiredReplicas (no ``behavior``: the downscale window ``window_seconds``,
    then the legacy limits with scaleUpLimitFactor/Minimum) or
    normalizeDesiredReplicasWithBehaviors (the behavior's windows, then its rate limits
    over the scale events), on a history of exact Recommendation values that it updates.

    Returns (the new history, (stabilized, the reason AbleToScale gives when it differs
    from ``desired``, final, the ScalingLimited reason)); setting the conditions is the
    caller's.
    """
    if behavior is None:
        stabilized, history = stabilize_recommendation_into(
            history, desired=desired, now=now, window_seconds=window_seconds
        )
        stabilized_reason = "ScaleDownStabilized"
        final, reason = normalize_rules(
            desired=stabilized,
            current_replicas=current_replicas,
            min_replicas=min_replicas,
            max_replicas=max_replicas,
            scale_up_limit_factor=scale_up_limit_factor,
            scale_up_limit_minimum=scale_up_limit_minimum,
        )
    else:
        stabilized, stabilized_reason, history = stabilize_with_behaviors_into(
            history,
            desired=desired,
            current_replicas=current_replicas,
            behavior=behavior,
            now=now,
        )
        final, reason = normalize_behavior_rate(
            desired=stabilized,
            current_replicas=current_replicas,
            min_replicas=min_replicas,
            max_replicas=max_replicas,
            behavior=behavior,
            scale_up_events=scale_up_events,
            scale_down_events=scale_down_events,
            now=now,
        )
    return history, (stabilized, stabilized_reason, final, reason)


def mark_scale_events_outdated(
    events: Iterable[ScaleEventLike], longest_period_seconds: float, now: float
) -> list[ScaleEvent]:
    """markScaleEventsOutdated: flag events strictly older than the longest policy period."""
    cutoff = now - longest_period_seconds
    return [
        event._replace(outdated=True) if event.timestamp < cutoff else event
        for event in scale_events_of(events)
    ]


def store_scale_event(
    *,
    behavior: Behavior | None,
    prev_replicas: int,
    new_replicas: int,
    scale_up_events: Iterable[ScaleEventLike],
    scale_down_events: Iterable[ScaleEventLike],
    now: float,
) -> tuple[list[ScaleEvent], list[ScaleEvent]]:
    """storeScaleEvent: record a rescale in the up or down history, reusing an outdated slot.

    Nothing is stored without a behavior. Otherwise the history of the direction is first
    marked against that direction's longest policy period, then the change replaces the
    last outdated event or is appended. Returns the new (up, down) histories.
    """
    up = scale_events_of(scale_up_events)
    down = scale_events_of(scale_down_events)
    if behavior is None:
        return up, down
    if new_replicas > prev_replicas:
        rules = generate_scale_up_rules(behavior.scale_up)
        up = _store(up, get_longest_policy_period(rules), new_replicas - prev_replicas, now)
    else:
        rules = generate_scale_down_rules(behavior.scale_down)
        down = _store(down, get_longest_policy_period(rules), prev_replicas - new_replicas, now)
    return up, down


def _store(events: list[ScaleEvent], longest: int, change: int, now: float) -> list[ScaleEvent]:
    marked = mark_scale_events_outdated(events, longest, now)
    old_index: int | None = None
    for index, event in enumerate(marked):
        if event.outdated:
            old_index = index
    stored = ScaleEvent(float(now), wrap_int32(change), False)
    if old_index is None:
        marked.append(stored)
    else:
        marked[old_index] = stored
    return marked
