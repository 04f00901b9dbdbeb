"""The scheduling links: a node (or a node pool that can grow) takes a pod of the
Deployment, as the scheduler model's node-only filters judge it, and what the scheduler and
the cluster autoscaler said about pods still Pending."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from gpuscale.controllers import scheduler
from gpuscale.controllers.scheduler import NodeView, PodRequirements
from gpuscale.kube import Taint, quantity_or_none
from gpuscale.live._verify.facts import (
    Check,
    PoolCapacity,
    Status,
    _as_manifest,
    _conditions,
    _labels,
    _meta,
    _number,
)
from gpuscale.live.events import EventView, event_views
from gpuscale.manifests import (
    Workload,
)
from gpuscale.profile import DOKS_LABEL_DOMAIN, CatalogueEntry, NodePool, Profile


def _node_ready(node: Mapping[str, Any]) -> bool:
    return _conditions(node).get("Ready", {}).get("status") == "True" and not (
        node.get("spec") or {}
    ).get("unschedulable")


def _taints(node: Mapping[str, Any]) -> tuple[Taint, ...]:
    return tuple(
        Taint(
            key=str(t.get("key") or ""),
            effect=str(t.get("effect") or ""),
            value=str(t.get("value") or ""),
        )
        for t in (node.get("spec") or {}).get("taints") or []
    )


def _fits(workload: Workload, labels: Mapping[str, str], taints: Sequence[Taint]) -> str | None:
    """Why a pod of ``workload`` cannot go on a node with ``labels`` and ``taints``, or None:
    the scheduler model's node-only filters (:func:`scheduler.static_failure`), in words.

    Cordons and resources are checked by the caller (a cordoned node is not Ready here;
    GPUs are compared as allocatable).
    """
    pod = PodRequirements(
        node_selector=workload.node_selector,
        required_terms=workload.required_node_affinity or None,
        tolerations=workload.tolerations,
    )
    failure = scheduler.static_failure(pod, NodeView("node", labels, taints, {}))
    if failure is None:
        return None
    if failure.taint is not None:
        return f"taint {failure.taint} is not tolerated"
    if failure.node_selector is not None:
        key, value = failure.node_selector
        return f"nodeSelector {key}={value} does not match"
    return "required node affinity does not match"


def check_gpu_capacity(
    subject: str,
    deployment: Mapping[str, Any],
    nodes: Sequence[Mapping[str, Any]],
    pools: Sequence[PoolCapacity] | None,
    pools_source: str,
) -> Check:
    """Some Ready node can take a pod of the Deployment (GPUs allocatable, selectors and
    taints), or a node pool can grow to one that can."""
    workload = Workload.from_manifest(_as_manifest(deployment, subject))
    gpus = workload.gpus_per_pod
    if not gpus:
        return Check("GPU capacity", subject, "skip", "the pods request no GPU")
    resource, need = next(iter(sorted(gpus.items())))
    want = f"{_number(need)} {resource}"
    reasons: list[str] = []
    for node in nodes:
        name = _meta(node, "name")
        have = (
            quantity_or_none(((node.get("status") or {}).get("allocatable") or {}).get(resource))
            or 0
        )
        if have < need:
            continue
        if not _node_ready(node):
            reasons.append(f"node {name} is not Ready")
            continue
        why = _fits(workload, _labels(node), _taints(node))
        if why is not None:
            reasons.append(f"node {name}: {why}")
            continue
        return Check(
            "GPU capacity",
            subject,
            "pass",
            f"node {name} has {_number(have)} {resource} allocatable (pods already using it "
            f"not counted); a pod needs {want}",
        )
    now = "; ".join(reasons) if reasons else f"no Ready node has {want} allocatable"
    if pools is None:
        return Check(
            "GPU capacity",
            subject,
            "warn",
            f"{now}; node pools unknown ({pools_source})",
            "give the profile's node pools (--profile), and a DigitalOcean token for DOKS, to "
            "check whether a pool can grow to one",
        )
    for pool in pools:
        if pool.gpu_resource != resource or pool.gpus_per_node < need:
            continue
        why = _fits(workload, pool.labels, pool.taints)
        if why is not None:
            reasons.append(f"pool {pool.name}: {why}")
            continue
        if pool.autoscaled and pool.nodes < pool.max_nodes:
            verified = pools_source == "DigitalOcean"
            return Check(
                "GPU capacity",
                subject,
                "pass" if verified else "warn",
                f"{now}; pool {pool.name} can grow {pool.nodes} -> {pool.max_nodes} nodes of "
                f"{pool.gpus_per_node} {resource} ({pools_source})",
                ""
                if verified
                else "per the profile only: check the pool on the provider (a DigitalOcean "
                "token lets verify ask DOKS)",
            )
        reasons.append(f"pool {pool.name} is at its maximum ({pool.max_nodes} nodes)")
    return Check(
        "GPU capacity",
        subject,
        "fail",
        f"{'; '.join(reasons) if reasons else now}; no pool offers {want} ({pools_source})",
        "add or grow a GPU pool of the right vendor (raise max_nodes), or correct the pod's "
        "nodeSelector/tolerations to the labels and taints the GPU nodes carry",
    )


def check_pending_pods(
    subject: str, pods: Sequence[Mapping[str, Any]], events: Sequence[Mapping[str, Any]]
) -> Check:
    """Pods of the Deployment not bound to a node, with what the scheduler
    (``FailedScheduling``) and the cluster autoscaler (``NotTriggerScaleUp``,
    ``TriggeredScaleUp``) said about each."""
    pending = [
        p
        for p in pods
        if not (p.get("spec") or {}).get("nodeName")
        and (p.get("status") or {}).get("phase", "Pending") == "Pending"
        and not (p.get("metadata") or {}).get("deletionTimestamp")
    ]
    if not pending:
        return Check("Pending pods", subject, "pass", f"none ({len(pods)} pods, all bound)")
    views = event_views(events)
    notes = []
    status: Status = "warn"
    fix = "wait for the new node (GPU nodes take minutes); gpuscale watch shows it arrive"
    for pod in pending:
        name = _meta(pod, "name")
        about = [v for v in views if v.kind == "Pod" and v.name == name]
        last: dict[str, EventView] = {v.reason: v for v in about}
        if "NotTriggerScaleUp" in last:
            status = "fail"
            notes.append(f"{name}: NotTriggerScaleUp: {last['NotTriggerScaleUp'].message}")
            fix = (
                "no node pool can run the pod: check nodeSelector, tolerations and requests "
                "against the GPU pool's labels, taints and size, and its max_nodes"
            )
        elif "TriggeredScaleUp" in last:
            notes.append(f"{name}: TriggeredScaleUp: {last['TriggeredScaleUp'].message}")
        elif "FailedScheduling" in last:
            notes.append(
                f"{name}: FailedScheduling: {last['FailedScheduling'].message}; no cluster "
                "autoscaler event yet"
            )
        else:
            notes.append(f"{name}: Pending, no scheduler event yet")
    return Check(
        "Pending pods", subject, status, f"{len(pending)} Pending: " + " | ".join(notes), fix
    )


# --- pools ------------------------------------------------------------------------------------


def pool_capacity(pool: NodePool, nodes: int) -> PoolCapacity:
    """A profile node pool (labels and taints as its provider sets them) with ``nodes``
    nodes now."""
    return PoolCapacity(
        name=pool.name,
        gpu_resource=pool.gpu_resource,
        gpus_per_node=pool.gpus_per_node,
        labels=dict(pool.labels),
        taints=pool.node_taints,
        nodes=nodes,
        max_nodes=pool.highest,
        autoscaled=pool.autoscaling,
    )


def doks_pool(
    name: str,
    size: str,
    *,
    auto_scale: bool,
    min_nodes: int,
    max_nodes: int,
    count: int,
    nodes: int,
    catalogue: Sequence[CatalogueEntry] = (),
) -> PoolCapacity:
    """A DOKS node pool as the DigitalOcean API reports it, with the GPUs of its size
    (from the size catalogue) and the labels and taints DOKS puts on its nodes (as the
    profile fills them for ``provider: doks``). A size the catalogue does not know counts
    as a pool without GPUs."""
    raw: dict[str, Any] = {"name": name, "size": size}
    if auto_scale:
        raw.update(min_nodes=min_nodes, max_nodes=max(max_nodes, min_nodes))
    else:
        raw["count"] = count
    try:
        pool = Profile.model_validate(
            {"cluster": {"provider": "doks"}, "node_pools": [raw], "catalogue": list(catalogue)}
        ).node_pools[0]
    except ValidationError:
        return PoolCapacity(
            name=name,
            gpu_resource=None,
            gpus_per_node=0,
            labels={f"{DOKS_LABEL_DOMAIN}/node-pool": name},
            taints=(),
            nodes=nodes,
            max_nodes=max_nodes if auto_scale else count,
            autoscaled=auto_scale,
        )
    return pool_capacity(pool, nodes)
