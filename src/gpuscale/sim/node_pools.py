"""The profile's node pools as the simulator's :class:`~gpuscale.sim.specs.SimPool` s,
and how many nodes each has at the start: its minimum, plus what the initial replicas
need (first fit, in pool order), within its maximum — the cluster a Deployment already
running finds. Pure."""

from __future__ import annotations

from collections.abc import Sequence

from gpuscale.controllers import scheduler
from gpuscale.errors import InputError
from gpuscale.profile import NodePool
from gpuscale.sim.provider import NodeProvider
from gpuscale.sim.specs import SimPool, SimWorkload

__all__ = ["DEFAULT_PODS_PER_NODE", "initial_nodes", "pool_spec"]

DEFAULT_PODS_PER_NODE = 110
"""The kubelet's ``--max-pods`` default: a node's ``pods`` allocatable."""


def pool_spec(pool: NodePool, nodes: int) -> SimPool:
    allocatable: dict[str, float] = {
        "cpu": pool.cpu,
        "memory": float(pool.memory),
        "pods": DEFAULT_PODS_PER_NODE,
    }
    resource = pool.gpu_resource
    if resource is not None and pool.gpus_per_node:
        allocatable[resource] = pool.gpus_per_node
    try:
        return SimPool(
            pool.name,
            allocatable=allocatable,
            labels=dict(pool.labels),
            taints=tuple(pool.node_taints),
            min_nodes=pool.lowest,
            max_nodes=pool.highest,
            initial_nodes=nodes,
            price_per_hour=pool.price_per_hour,
            provisioning_s=pool.provisioning_time,
            gpu_model=pool.gpu_model or "",
        )
    except ValueError as error:
        raise InputError(
            f"node pool {pool.name}: {error}",
            where=f"node_pools[{pool.name}]",
            fix="use a DNS label (lowercase letters, digits, '-') and consistent counts",
        ) from None


def initial_nodes(
    pools: Sequence[NodePool], workloads: Sequence[SimWorkload], provider: NodeProvider
) -> list[int]:
    """Nodes per pool at the start: the pool's minimum, plus what the initial replicas
    need (first fit, in pool order), within its maximum — the cluster as a Deployment
    already running finds it."""
    templates = [pool_spec(pool, pool.lowest) for pool in pools]
    counts = [pool.lowest for pool in pools]
    nodes: list[tuple[int, dict[str, int]]] = [
        (index, {}) for index, pool in enumerate(pools) for _ in range(pool.lowest)
    ]
    for workload in workloads:
        requirements = workload.pod_requirements()
        for _ in range(workload.replicas):
            placed = False
            for index, used in nodes:
                if _fits(requirements, templates[index], used, provider):
                    _take(requirements, used)
                    placed = True
                    break
            if placed:
                continue
            for index, pool in enumerate(pools):
                if counts[index] >= pool.highest:
                    continue
                used = {}
                if _fits(requirements, templates[index], used, provider):
                    _take(requirements, used)
                    nodes.append((index, used))
                    counts[index] += 1
                    break
    return counts


def _fits(
    requirements: scheduler.PodRequirements,
    pool: SimPool,
    used: dict[str, int],
    provider: NodeProvider,
) -> bool:
    view = scheduler.NodeView(
        "template",
        provider.template_labels(dict(pool.labels), pool.name),
        pool.taints,
        scheduler.quantities(pool.allocatable),
        dict(used),
    )
    reasons, _ = scheduler.filter_node(requirements, view)
    return not reasons


def _take(requirements: scheduler.PodRequirements, used: dict[str, int]) -> None:
    for resource, amount in requirements.requests.items():
        used[resource] = used.get(resource, 0) + amount
    used["pods"] = used.get("pods", 0) + 1
