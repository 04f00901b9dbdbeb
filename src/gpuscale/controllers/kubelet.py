"""When a pod bound to a node starts, becomes Ready and goes away, as the kubelet runs
it. Pure.

Models kubernetes/kubernetes (v1.34–1.35) ``pkg/kubelet``:

- ``kuberuntime/kuberuntime_manager.go`` ``SyncPod`` → ``kuberuntime_container.go``
  ``startContainer``: the image is pulled first (``images/image_manager.go``
  ``EnsureImageExists``; with ``imagePullPolicy: IfNotPresent``, the default for tagged
  images, a node that already holds the image skips the pull), then the container
  starts and the pod's phase turns Running;
- ``prober/prober_manager.go``, ``prober/worker.go`` and ``status/status_manager.go``:
  without a readiness probe a container is ready as soon as it runs, whether or not its
  program serves yet; with one, the probe worker (started when the pod reaches the
  kubelet) probes at once and then every ``periodSeconds``, skips probes until
  ``initialDelaySeconds`` (whole seconds) after the container started, and the pod turns
  Ready after ``successThreshold`` consecutive successes; a probe succeeds once the
  program serves, which is the workload's start-up time after the container started (no
  probe failures otherwise);
- ``kuberuntime_container.go`` ``killContainer``: on deletion the container gets SIGTERM
  and is killed after ``terminationGracePeriodSeconds`` at the latest; a process that
  exits earlier (``exit_after``) ends the pod then.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "PodStartup",
    "Readiness",
    "ReadinessProbe",
    "pod_startup",
    "termination_end",
]


@dataclass(frozen=True, slots=True)
class ReadinessProbe:
    """A container's ``readinessProbe`` timing (the API's defaults)."""

    initial_delay_s: float = 0.0
    """``initialDelaySeconds``."""
    period_s: float = 10.0
    """``periodSeconds``."""
    success_threshold: int = 1
    """``successThreshold``: consecutive successes needed."""

    def __post_init__(self) -> None:
        if self.initial_delay_s < 0 or self.period_s <= 0 or self.success_threshold < 1:
            raise ValueError("probe delay must be >= 0, period > 0 and success threshold >= 1")


Readiness = ReadinessProbe | Literal["serving", "started"]
"""How a pod turns Ready: by its probe; when its program serves (an ideal probe); or as
soon as its container started (no probe)."""


@dataclass(frozen=True, slots=True)
class PodStartup:
    """The times a bound pod reaches each stage (seconds, absolute)."""

    pulled_at: float
    """The image is on the node."""
    running_at: float
    """The container started: phase Running."""
    ready_at: float
    """The Ready condition is true."""
    serving_at: float = 0.0
    """The program answers (its ``/metrics``, its requests)."""


def pod_startup(
    bound_at: float,
    *,
    image_present: bool,
    image_pull_s: float,
    startup_s: float,
    readiness: Readiness = "serving",
) -> PodStartup:
    """Stage times of a pod bound at ``bound_at`` (``SyncPod``, the readiness prober)."""
    if image_pull_s < 0 or startup_s < 0:
        raise ValueError("image pull and start-up times must be >= 0")
    pulled = bound_at if image_present else bound_at + image_pull_s
    serving = pulled + startup_s
    if readiness == "serving":
        ready = serving
    elif readiness == "started":
        ready = pulled
    else:
        period = readiness.period_s
        # the first probe tick at which the program serves and the initial delay (counted
        # in whole seconds since the container started) has passed
        earliest = max(serving, pulled + readiness.initial_delay_s)
        ticks = max(0, math.ceil((earliest - bound_at) / period - 1e-9))
        first = bound_at + ticks * period
        while math.floor(first - pulled + 1e-9) < readiness.initial_delay_s or first < serving:
            first += period
        ready = first + (readiness.success_threshold - 1) * period
    return PodStartup(pulled_at=pulled, running_at=pulled, ready_at=ready, serving_at=serving)


def termination_end(deleted_at: float, *, grace_s: float, exit_after_s: float) -> float:
    """When a pod deleted at ``deleted_at`` is gone: its process exit, or the grace period's end."""
    if grace_s < 0 or exit_after_s < 0:
        raise ValueError("grace period and exit time must be >= 0")
    return deleted_at + min(grace_s, exit_after_s)
