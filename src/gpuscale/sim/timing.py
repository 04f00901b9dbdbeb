"""When each control loop runs, as its upstream loop schedules itself, and the latencies
between the steps of a real cluster. Pure: every draw comes from a stream of its own.

A real cluster never meets the ties an exact grid does: its loops drift and its clocks
are read milliseconds after a tick. The loops the simulator runs are scheduled here, one
rule per upstream loop (``docs/timing.md`` derives the consequences):

- **The HPA** (kubernetes ``pkg/controller/podautoscaler/horizontal.go``): the HPA
  informer's ``AddFunc`` (``enqueueHPA``) puts a new HPA into the work queue with
  ``AddRateLimited``, and the HPA rate limiter (``rate_limiters.go``,
  ``FixedItemIntervalRateLimiter``) always answers the sync period, so the first sync
  is one period after the HPA is created (kubernetes/kubernetes ``horizontal.go`` at
  0006726; the master fork at a769d588 that ``controllers/hpa.py`` follows adds a new
  HPA with ``queue.Add``, at once; the simulator keeps the rate-limited add). Each sync
  runs in ``processNextWorkItem``: the worker takes the key, reconciles (GET scale, the
  metrics API, status update), and only then re-adds the key with ``AddRateLimited`` —
  so the next sync starts a sync period after this one *finished*, and the loop drifts
  by one reconcile per period (:attr:`Latencies.hpa_reconcile_s`). Not modelled: the
  informer's own resync (every sync period, ``AddEventHandlerWithResyncPeriod``) also
  re-adds the key, and since the delaying queue keeps the earliest time, a resync that
  fires during a reconcile takes over the phase; its chain drifts by microseconds, so
  after hours an HPA can lock onto it (``docs/timing.md``, "What is not modelled").
- **KEDA's polling loop** (kedacore/keda ``pkg/scaling/scale_handler.go``
  ``startScaleLoop``): started by the ScaledObject's first reconcile
  (:attr:`Latencies.keda_start_s` after its creation, which is also when that reconcile
  creates the HPA); a check at once, then a new ``time.NewTimer(pollingInterval)`` made
  *before* each ``checkScalers``, so ticks are start to start. Inside a check the
  triggers' queries run before ``RequestScale`` reads ``time.Now()``
  (:attr:`Latencies.keda_poll_s`).
- **KEDA's timestamps** (``pkg/scaling/executor/scale_scaledobjects.go``):
  ``status.lastActiveTime`` and ``metadata.creationTimestamp`` are ``metav1.Time``,
  serialized at whole seconds of the wall clock and re-read from the API at each poll;
  the cooldown expires when ``LastActiveTime.Add(cooldown).Before(now)``. The wall clock
  at the run's ``t = 0`` has a sub-second part (:func:`clock_phase`), so the truncation
  is to whole seconds of ``t + phase`` (:func:`whole_seconds`).
- **The cluster autoscaler** (kubernetes/autoscaler ``cluster-autoscaler/main.go`` and
  ``loop/trigger.go``): a long-running process, so its loop has a phase of its own at
  ``t = 0`` (uniform over one scan interval); ``RunOnce`` takes
  :attr:`Latencies.autoscaler_run_once_s`, and ``LoopTrigger.Wait`` then sleeps a scan
  interval, returns at once after a productive iteration, or when the unschedulable-pod
  observer signals (a signal during ``RunOnce`` waits in the channel's buffer).
- **The kubelet on a warm node** (``pkg/kubelet``): from binding to the container's
  start, the kubelet's informer sees the pod, its pod worker creates the sandbox and
  the network, then pulls the image (if absent) and starts the container:
  :attr:`Latencies.pod_start_s` before the image pull.

Every latency is drawn uniformly in ``[d·(1 − spread), d·(1 + spread)]`` from a stream
of its own: :func:`stream` seeds a ``random.Random`` from the run's seed and the loop's
and object's names through BLAKE2b (never Python's ``hash``, which is salted per
process), so reordering or batching events elsewhere never changes a draw. With every
latency 0 (:meth:`Latencies.exact`) the loops run on the exact grid and the clock phase
is 0, for tests that need it.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass

__all__ = [
    "Latencies",
    "LoopClock",
    "clock_phase",
    "stream",
    "uniform",
    "whole_seconds",
]


def _seed_of(seed: int, names: tuple[str, ...]) -> int:
    text = "\x1f".join((str(seed), *names)).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")


def stream(seed: int, *names: str) -> random.Random:
    """A random stream of its own for (seed, loop, object): the same names give the same
    draws in every run and every process, whatever else the run draws."""
    return random.Random(_seed_of(seed, names))


def uniform(seed: int, *names: str) -> float:
    """One draw in [0, 1) for (seed, names), without a stream (for objects drawn once)."""
    return _seed_of(seed, names) / 2.0**64


@dataclass(frozen=True, slots=True)
class Latencies:
    """The latencies of a run (the profile's ``timing`` section, mapped in
    :func:`gpuscale.sim.inputs.timing_options`). The dataclass's own defaults are all 0:
    the exact grid, for worlds built by hand; the profile's defaults are realistic."""

    hpa_reconcile_s: float = 0.0
    """One HPA reconcile, from the worker taking the key to re-adding it."""
    keda_start_s: float = 0.0
    """From the ScaledObject's creation to KEDA's first poll (its first reconcile,
    which also creates the HPA)."""
    keda_poll_s: float = 0.0
    """From a poll's tick to ``RequestScale`` reading the clock (the triggers' queries)."""
    autoscaler_run_once_s: float = 0.0
    """One cluster-autoscaler ``RunOnce``."""
    pod_start_s: float = 0.0
    """From binding to the container's start on a node with the image (API, kubelet,
    sandbox and network)."""
    spread: float = 0.0
    """Each latency is drawn uniformly within ± this share of its value."""

    def __post_init__(self) -> None:
        for name in (
            "hpa_reconcile_s",
            "keda_start_s",
            "keda_poll_s",
            "autoscaler_run_once_s",
            "pod_start_s",
        ):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                raise ValueError(f"timing.{name} must be >= 0 seconds, got {value!r}")
        if not (isinstance(self.spread, int | float) and 0 <= self.spread <= 1):
            raise ValueError(f"timing.spread must be within 0..1, got {self.spread!r}")

    @property
    def exact(self) -> bool:
        """Every latency 0: the loops on their exact grid, the clock phase 0."""
        return not (
            self.hpa_reconcile_s
            or self.keda_start_s
            or self.keda_poll_s
            or self.autoscaler_run_once_s
            or self.pod_start_s
        )

    def draw(self, mean: float, rng: random.Random) -> float:
        """One latency around ``mean`` from ``rng`` (no draw when ``mean`` is 0)."""
        if mean == 0.0:
            return 0.0
        if self.spread == 0.0:
            return mean
        return mean * (1.0 + self.spread * (2.0 * rng.random() - 1.0))

    def draw_once(self, mean: float, seed: int, *names: str) -> float:
        """One latency around ``mean`` for an object drawn once (a pod's start)."""
        if mean == 0.0:
            return 0.0
        return mean * (1.0 + self.spread * (2.0 * uniform(seed, *names) - 1.0))


def clock_phase(timing: Latencies, seed: int) -> float:
    """The sub-second part of the wall clock at the run's ``t = 0`` (0 when exact)."""
    return 0.0 if timing.exact else uniform(seed, "wall-clock")


def whole_seconds(t: float, phase: float) -> float:
    """``t`` stored as a ``metav1.Time`` and read back: truncated to a whole second of the
    wall clock, whose sub-second part at ``t = 0`` is ``phase``."""
    return math.floor(t + phase) - phase


class LoopClock:
    """The draws of one loop over one object, from its own stream."""

    __slots__ = ("_rng", "timing")

    def __init__(self, timing: Latencies, seed: int, loop: str, key: str) -> None:
        self.timing = timing
        self._rng = stream(seed, loop, key)

    def latency(self, mean: float) -> float:
        """The next latency around ``mean``."""
        return self.timing.draw(mean, self._rng)

    def phase(self, period: float) -> float:
        """A phase in [0, period) (0 when exact): where a long-running loop stands at 0."""
        return 0.0 if self.timing.exact else self._rng.random() * period
