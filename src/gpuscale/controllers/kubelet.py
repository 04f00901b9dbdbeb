"""When a pod bound to a node starts, becomes Ready and goes away, as the kubelet runs
it. Pure.

Models kubernetes/kubernetes (v1.34–1.35) ``pkg/kubelet``:

- ``kuberuntime/kuberuntime_manager.go`` ``SyncPod`` → ``kuberuntime_container.go``
  ``startContainer``: the image is pulled first (``images/image_manager.go``
  ``EnsureImageExists``; with ``imagePullPolicy: IfNotPresent``, the default for tagged
  images, a node that already holds the image skips the pull), then the container
  starts and the pod's phase turns Running;
- ``prober/prober_manager.go`` and ``status/status_manager.go``: the Ready condition turns
  true once the container's readiness holds, which we model as the workload's start-up
  time after the container starts (no probe failures);
- ``kuberuntime_container.go`` ``killContainer``: on deletion the container gets SIGTERM
  and is killed after ``terminationGracePeriodSeconds`` at the latest; a process that
  exits earlier (``exit_after``) ends the pod then.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PodStartup", "pod_startup", "termination_end"]


@dataclass(frozen=True, slots=True)
class PodStartup:
    """The times a bound pod reaches each stage (seconds, absolute)."""

    pulled_at: float
    """The image is on the node."""
    running_at: float
    """The container started: phase Running."""
    ready_at: float
    """The Ready condition is true."""


def pod_startup(
    bound_at: float, *, image_present: bool, image_pull_s: float, startup_s: float
) -> PodStartup:
    """Stage times of a pod bound at ``bound_at`` (``SyncPod``)."""
    if image_pull_s < 0 or startup_s < 0:
        raise ValueError("image pull and start-up times must be >= 0")
    pulled = bound_at if image_present else bound_at + image_pull_s
    return PodStartup(pulled_at=pulled, running_at=pulled, ready_at=pulled + startup_s)


def termination_end(deleted_at: float, *, grace_s: float, exit_after_s: float) -> float:
    """When a pod deleted at ``deleted_at`` is gone: its process exit, or the grace period's end."""
    if grace_s < 0 or exit_after_s < 0:
        raise ValueError("grace period and exit time must be >= 0")
    return deleted_at + min(grace_s, exit_after_s)
