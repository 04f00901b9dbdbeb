"""The ``gpuscale cluster`` operations: sequences of API calls with the decisions between them.

Each operation takes a :class:`~gpuscale.cloud.client.DigitalOcean` (the wire), the
:class:`~gpuscale.cloud.spec.DoksCluster`, and, where it waits, an injected clock and
sleep, so the tests run a 20-minute provisioning in no time. Each has a ``plan_*``
twin that returns the calls it would send, for ``--dry-run``; ids that only the API
can tell are shown as ``{cluster_id}``.

What the user sees is reported through :class:`Reporter` (the CLI prints to stderr with
rich); the operations return values, and print nothing themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from gpuscale.cloud import api
from gpuscale.cloud.client import DigitalOcean
from gpuscale.cloud.plan import (
    ClusterStatus,
    CreateCheck,
    check_create,
    cluster_status,
    find_by_name,
)
from gpuscale.cloud.spec import DoksCluster
from gpuscale.errors import InputError, RetryableError, UnavailableError

__all__ = [
    "PLACEHOLDER_ID",
    "CreateOutcome",
    "DeletePlan",
    "Reporter",
    "create",
    "delete",
    "enable_gpu_metrics",
    "fetch_sizes",
    "find_cluster",
    "get_credentials",
    "plan_create",
    "plan_delete",
    "plan_enable_gpu_metrics",
    "plan_kubeconfig",
    "plan_status",
    "require_cluster",
    "wait_running",
]

PLACEHOLDER_ID = "{cluster_id}"


class Reporter(Protocol):
    """Where operations tell the user what is happening."""

    def checked(self, check: CreateCheck) -> None:
        """The spec passed the checks; show the prices and warnings."""

    def progress(self, status: ClusterStatus, elapsed: float) -> None:
        """The cluster was polled while waiting for it to run."""

    def note(self, text: str) -> None:
        """A line worth telling (an existing cluster, a skipped step)."""


@dataclass(frozen=True, slots=True)
class CreateOutcome:
    """What ``gpuscale cluster create`` did."""

    status: ClusterStatus
    created: bool
    """False when a cluster of that name already existed (nothing was created)."""
    check: CreateCheck | None
    """The checks and prices; None when the cluster already existed."""
    metrics_update_sent: bool = False
    """True when the metrics-exporter add-on had to be enabled with a separate PUT."""


@dataclass(frozen=True, slots=True)
class DeletePlan:
    """What ``gpuscale cluster delete`` would remove."""

    status: ClusterStatus
    associated: Mapping[str, Sequence[Mapping[str, Any]]]
    """``load_balancers``, ``volumes`` and ``volume_snapshots`` the cluster created."""


def find_cluster(do: DigitalOcean, name: str) -> ClusterStatus | None:
    """The cluster named ``name``, or None."""
    found = find_by_name(list(do.pages(api.list_clusters, "kubernetes_clusters")), name)
    return None if found is None else cluster_status(found)


def require_cluster(do: DigitalOcean, spec: DoksCluster, *, source: str) -> ClusterStatus:
    """The cluster the profile names; :class:`InputError` when there is none."""
    status = find_cluster(do, spec.name)
    if status is None:
        raise InputError(
            f"no cluster named {spec.name!r} in this DigitalOcean account",
            where=f"{source}: cluster.name",
            fix="check the name, or create it with gpuscale cluster create",
        )
    return status


def fetch_sizes(do: DigitalOcean) -> list[dict[str, Any]]:
    """Every size of ``GET /v2/sizes``, all pages."""
    return list(do.pages(api.list_sizes, "sizes"))


def plan_create(spec: DoksCluster) -> list[api.ApiCall]:
    """The calls ``create`` sends for a cluster that does not exist yet."""
    calls = [
        api.list_clusters(1),
        api.list_options(),
        api.list_sizes(1),
        api.create_cluster(spec),
        api.get_cluster(
            PLACEHOLDER_ID, note="every 10s until status.state is running and the nodes run"
        ),
    ]
    if "amd" in spec.vendors and spec.gpu_metrics:
        calls.append(
            api.update_cluster(
                PLACEHOLDER_ID,
                api.metrics_exporter_body(spec.name),
                note="only if the running cluster does not report the exporter enabled",
            )
        )
    return calls


def create(
    do: DigitalOcean,
    spec: DoksCluster,
    *,
    reporter: Reporter,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    source: str = "gpuscale.yaml",
    wait: bool = True,
    timeout: float = 1800.0,
    poll_interval: float = 10.0,
) -> CreateOutcome:
    """Create the cluster unless one of that name exists; wait for it; enable the exporter.

    Checks region, version and sizes before anything is created (:func:`check_create`).
    An existing cluster is reported and returned, never duplicated.
    """
    existing = find_cluster(do, spec.name)
    if existing is not None:
        reporter.note(
            f"cluster {spec.name} already exists (id {existing.id}, state {existing.state}); "
            "nothing created"
        )
        if wait and not existing.running and not existing.failed:
            existing = wait_running(
                do,
                existing.id,
                reporter=reporter,
                clock=clock,
                sleep=sleep,
                timeout=timeout,
                poll_interval=poll_interval,
            )
        return CreateOutcome(status=existing, created=False, check=None)
    options = do.send(api.list_options()).body or {}
    check = check_create(spec, options, fetch_sizes(do), source=source)
    reporter.checked(check)
    answer = do.send(api.create_cluster(spec)).body or {}
    status = cluster_status(answer)
    reporter.note(f"cluster {status.name} requested (id {status.id})")
    if not wait:
        return CreateOutcome(status=status, created=True, check=check)
    status = wait_running(
        do,
        status.id,
        reporter=reporter,
        clock=clock,
        sleep=sleep,
        timeout=timeout,
        poll_interval=poll_interval,
    )
    sent = False
    if (
        "amd" in spec.vendors
        and spec.gpu_metrics
        and not status.addons.get("amd_gpu_device_metrics_exporter_plugin")
    ):
        status = _enable_metrics(do, status)
        sent = True
    return CreateOutcome(status=status, created=True, check=check, metrics_update_sent=sent)


def wait_running(
    do: DigitalOcean,
    cluster_id: str,
    *,
    reporter: Reporter,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    timeout: float = 1800.0,
    poll_interval: float = 10.0,
) -> ClusterStatus:
    """Poll until the cluster is ``running`` and every node it asked for runs.

    A failed state (error, invalid, deleted) raises :class:`UnavailableError`; running
    out of ``timeout`` raises :class:`RetryableError` (creating again is safe).
    """
    started = clock()
    while True:
        status = cluster_status(do.send(api.get_cluster(cluster_id)).body or {})
        elapsed = clock() - started
        reporter.progress(status, elapsed)
        if status.failed:
            raise UnavailableError(
                f"cluster {status.name} is in state {status.state}"
                + (f": {status.message}" if status.message else ""),
                where=f"cluster {cluster_id}",
                fix="look at the cluster in the DigitalOcean control panel; delete it with "
                "gpuscale cluster delete and create it again",
            )
        if status.running and status.nodes_running >= status.nodes_expected:
            return status
        if elapsed >= timeout:
            raise RetryableError(
                f"cluster {status.name} is still {status.state} after {elapsed:.0f}s "
                f"({status.nodes_running}/{status.nodes_expected} nodes running)",
                where=f"cluster {cluster_id}",
                fix="follow it with gpuscale cluster status; running create again is safe",
            )
        sleep(poll_interval)


def _enable_metrics(do: DigitalOcean, status: ClusterStatus) -> ClusterStatus:
    answer = do.send(api.update_cluster(status.id, api.metrics_exporter_body(status.name))).body
    return cluster_status(answer) if answer else status


def plan_enable_gpu_metrics(spec: DoksCluster) -> list[api.ApiCall]:
    """The calls ``enable_gpu_metrics`` sends."""
    return [
        api.list_clusters(1),
        api.update_cluster(
            PLACEHOLDER_ID,
            api.metrics_exporter_body(spec.name),
            note="only if the cluster does not report the exporter enabled",
        ),
    ]


def enable_gpu_metrics(
    do: DigitalOcean, spec: DoksCluster, *, source: str = "gpuscale.yaml"
) -> tuple[ClusterStatus, bool]:
    """Enable the AMD metrics exporter on the existing cluster; returns (status, changed)."""
    status = require_cluster(do, spec, source=source)
    if status.addons.get("amd_gpu_device_metrics_exporter_plugin"):
        return status, False
    return _enable_metrics(do, status), True


def plan_status(spec: DoksCluster) -> list[api.ApiCall]:
    """The calls ``gpuscale cluster status`` sends."""
    del spec
    return [api.list_clusters(1), api.list_sizes(1)]


def plan_kubeconfig(spec: DoksCluster, expiry_seconds: int) -> list[api.ApiCall]:
    """The calls ``gpuscale cluster kubeconfig`` sends."""
    del spec
    return [api.list_clusters(1), api.get_credentials(PLACEHOLDER_ID, expiry_seconds)]


def get_credentials(
    do: DigitalOcean, spec: DoksCluster, expiry_seconds: int, *, source: str = "gpuscale.yaml"
) -> tuple[ClusterStatus, dict[str, Any]]:
    """The running cluster and credentials that expire after ``expiry_seconds``."""
    status = require_cluster(do, spec, source=source)
    if not status.running:
        raise UnavailableError(
            f"cluster {status.name} is {status.state}, not running",
            where=f"cluster {status.id}",
            fix="wait for it (gpuscale cluster create waits; gpuscale cluster status shows it)",
        )
    body = do.send(api.get_credentials(status.id, expiry_seconds)).body
    if not isinstance(body, dict):
        raise RetryableError(
            "the credentials answer was empty",
            where=f"cluster {status.id}",
            fix="retry in a minute",
        )
    return status, body


def plan_delete(spec: DoksCluster, *, with_resources: bool) -> list[api.ApiCall]:
    """The calls ``gpuscale cluster delete`` sends."""
    del spec
    last = (
        api.destroy_cluster_and_resources(PLACEHOLDER_ID)
        if with_resources
        else api.delete_cluster(PLACEHOLDER_ID)
    )
    return [api.list_clusters(1), api.list_associated_resources(PLACEHOLDER_ID), last]


def delete(
    do: DigitalOcean,
    spec: DoksCluster,
    *,
    confirm: Callable[[DeletePlan], bool],
    with_resources: bool = False,
    source: str = "gpuscale.yaml",
) -> DeletePlan | None:
    """Delete the cluster after ``confirm`` approves the plan; None when it said no."""
    status = require_cluster(do, spec, source=source)
    associated = do.send(api.list_associated_resources(status.id)).body or {}
    plan = DeletePlan(
        status=status,
        associated={
            key: list(associated.get(key) or [])
            for key in ("load_balancers", "volumes", "volume_snapshots")
        },
    )
    if not confirm(plan):
        return None
    if with_resources:
        do.send(api.destroy_cluster_and_resources(status.id))
    else:
        do.send(api.delete_cluster(status.id))
    return plan
