"""The key moments of a run, in words, read off its timeline. Pure.

It reads only timeline records, so it lives with the report (it was ``gpuscale.sim.narrative``).
``gpuscale demo`` tells what happened in the tutorial and its fix as a short story:
the load change, each rescale with the metric and target behind it, a pod waiting for a
node and why, the cluster autoscaler's scale-up and its delay, the node turning Ready,
the ready replicas catching up, a Pending pod deleted before its node came — and, when
the replica count keeps cycling, one line for the cycle instead of every turn of it.
Every line comes from a record's decisions and state; nothing is recomputed. An HPA rescale
is told with the HPA's own arithmetic (:mod:`gpuscale.report.hpa`), the same words and
numbers as the report's decisions table.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from gpuscale.kube import format_duration
from gpuscale.report.hpa import hpa_step
from gpuscale.timeline import Record

__all__ = ["Moment", "key_moments", "when"]


def when(t: float) -> str:
    """A time as the narrative prints it: ``t=1m30s``."""
    return f"t={format_duration(t)}"


@dataclass(frozen=True, slots=True)
class Moment:
    """One line of the story."""

    t: float
    """When (seconds since the start of the run)."""
    text: str
    """What happened, e.g. ``HPA 1→2: 160 / 1 replica = 160 per replica against a target of
    80 per replica: ceil(1 × 160/80) = 2``."""

    def __str__(self) -> str:
        return f"{when(self.t)} {self.text}"


def _short_pod(target: str) -> str:
    return target.rsplit("/", 1)[-1]


def key_moments(
    records: Sequence[Record],
    *,
    workload: str | None = None,
    cycles: int = 1,
) -> list[Moment]:
    """The moments of ``records`` worth telling, for one workload (the first by default).

    Once the ready replicas have reached the highest count asked for, ``cycles`` more
    complete cycles of a flapping replica count (a decrease, then an increase) are told;
    the rest is summed up in one line: how often it turned and its period.
    """
    if not records or not records[0].workloads:
        return []
    name = workload or records[0].workloads[0].name
    moments: list[Moment] = []
    pending_since: dict[str, float] = {}
    ever_bound: set[str] = set()
    told: set[str] = set()
    scale_up_at: dict[str, float] = {}
    last_ready: int | None = None
    decreased = False
    rises: list[float] = []
    completed = 0
    reached = False
    top = 0
    quiet_from: float | None = None
    for index, record in enumerate(records):
        state = next((w for w in record.workloads if w.name == name), None)
        if state is None:
            continue
        texts: list[str] = []
        for d in record.decisions:
            if d.controller == "load" and d.reason in ("Scenario", "NoEndpoints"):
                texts.append(f"load: {d.detail}")
            elif d.controller == "hpa" and d.action == "scale":
                before, after = _sizes(d.detail)
                steps = hpa_step(records, index, d)
                why = d.detail.split("; reason: ", 1)[-1].split(";", 1)[0]
                numbers = "; ".join(step.arithmetic() for step in steps) or why
                text = f"HPA {before}→{after}: {numbers}"
                if after is not None and before is not None and after < before:
                    text += " (nothing higher left in its scale-down window)"
                    decreased = True
                elif decreased:
                    completed += 1 if reached else 0
                    rises.append(record.t)
                    decreased = False
                elif after is not None and before is not None and after > before:
                    rises.append(record.t)
                texts.append(text)
            elif d.controller == "keda" and d.action == "scale":
                texts.append(f"KEDA: {d.detail.split(':', 1)[0]}")
            elif d.controller == "scheduler" and d.reason == "FailedScheduling":
                pod = _short_pod(d.target)
                if pod not in pending_since:
                    pending_since[pod] = record.t
                    why = d.detail.split(". preemption:")[0]
                    texts.append(
                        f"pod {pod} Pending: {why}"
                        if why not in told
                        else f"pod {pod} Pending (the same reason)"
                    )
                    told.add(why)
            elif d.controller == "scheduler" and d.action == "bind":
                pod = _short_pod(d.target)
                ever_bound.add(pod)
                if pod in pending_since:
                    waited = record.t - pending_since[pod]
                    texts.append(
                        f"pod {pod} scheduled on {d.detail.removeprefix('node ')} "
                        f"after {format_duration(waited)} Pending"
                    )
            elif d.controller == "cluster-autoscaler" and d.reason == "TriggeredScaleUp":
                pool = d.target.removeprefix("pool/")
                sizes = d.detail.split(" (", 1)[0].replace(" -> ", "→")
                oldest = min(pending_since.values(), default=None)
                delay = (
                    ""
                    if oldest is None
                    else f" for a pod Pending {format_duration(record.t - oldest)}"
                )
                scale_up_at[pool] = record.t
                texts.append(f"cluster-autoscaler: scale-up {pool} {sizes}{delay}")
            elif d.controller == "cluster-autoscaler" and d.action == "remove-node":
                texts.append(f"cluster-autoscaler: removes {d.target} ({d.reason}: {d.detail})")
            elif d.controller == "kubelet" and d.reason == "NodeReady":
                pool = d.detail.removeprefix("pool ")
                since = scale_up_at.pop(pool, None)
                after_text = (
                    ""
                    if since is None
                    else (f", {format_duration(record.t - since)} after the scale-up")
                )
                texts.append(f"node {d.target.removeprefix('node/')} Ready{after_text}")
            elif d.controller == "replicaset" and d.action == "delete":
                pod = d.detail.removeprefix("Deleted pod: ")
                if pod in pending_since and pod not in ever_bound:
                    texts.append(
                        f"pod {pod} deleted while still Pending: the scale-down came before a "
                        "node for it was Ready"
                    )
        if last_ready is not None and state.ready != last_ready:
            texts.append(f"ready replicas {last_ready}→{state.ready}")
        last_ready = state.ready
        top = max(top, state.spec)
        if top > records[0].workloads[0].spec and state.ready >= top:
            reached = True
        if completed >= cycles:
            if quiet_from is None:
                quiet_from = record.t
            continue
        moments.extend(Moment(record.t, text) for text in texts)
    if quiet_from is not None and len(rises) >= 2:
        gaps = sorted(b - a for a, b in itertools.pairwise(rises))
        period = gaps[len(gaps) // 2]
        moments.append(
            Moment(
                quiet_from,
                f"the same cycle repeats: {len(rises)} scale-ups in all, one every "
                f"{format_duration(period)}, for as long as the load stays",
            )
        )
    return moments


def _sizes(detail: str) -> tuple[int | None, int | None]:
    found = re.search(r"; (\d+) -> (\d+)(?: \(|$|;)", detail)
    if found is None:
        return None, None
    return int(found.group(1)), int(found.group(2))
