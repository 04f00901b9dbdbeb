"""What the ``gpuscale cluster`` commands provision, as frozen values, from the profile.

The profile (``gpuscale.yaml``) is read and validated by :mod:`gpuscale.profile`; this
module turns its ``cluster`` and ``node_pools`` sections into the small values the
DigitalOcean commands, the request builders (:mod:`gpuscale.cloud.api`) and the tests
work on (:func:`cluster_spec_from_profile`). ``docs/profile.md`` documents the keys;
``docs/commands/cluster.md`` says which of them ``gpuscale cluster`` uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from gpuscale.errors import ProfileError
from gpuscale.kube import Taint
from gpuscale.profile import DOKS_LABEL_DOMAIN, ClusterSpec, NodePool, Profile

__all__ = [
    "DoksCluster",
    "GpuVendor",
    "PoolSpec",
    "cluster_spec_from_profile",
    "pool_spec",
]

GpuVendor = Literal["amd", "nvidia"]


@dataclass(frozen=True, slots=True)
class PoolSpec:
    """One DOKS node pool: either autoscaled between ``min_nodes`` and ``max_nodes`` or
    fixed at ``count`` nodes."""

    name: str
    """The pool's name; DOKS labels its nodes ``doks.digitalocean.com/node-pool=<name>``."""
    size: str
    """The Droplet size slug, e.g. ``gpu-mi300x1-192gb`` or ``s-4vcpu-8gb``."""
    gpu_vendor: GpuVendor | None = None
    """``amd`` or ``nvidia`` for GPU pools (decides the device-plugin add-ons); None for CPU."""
    gpus_per_node: int = 0
    """GPUs on each node of this size (informational; the size decides it)."""
    min_nodes: int | None = None
    """Lower bound for the cluster autoscaler; set together with ``max_nodes``."""
    max_nodes: int | None = None
    """Upper bound for the cluster autoscaler; set together with ``min_nodes``."""
    count: int | None = None
    """Fixed node count, or the initial count of an autoscaled pool (default: ``min_nodes``)."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra Kubernetes labels for the pool's nodes."""
    taints: tuple[Taint, ...] = ()
    """Taints for the pool's nodes (DOKS adds the GPU taint on GPU pools itself)."""

    @property
    def autoscaled(self) -> bool:
        """True when the cluster autoscaler sizes this pool."""
        return self.max_nodes is not None

    @property
    def initial_count(self) -> int:
        """The node count sent at creation."""
        if self.count is not None:
            return self.count
        return self.min_nodes or 0

    @property
    def largest_count(self) -> int:
        """The most nodes this pool can have: ``max_nodes`` when autoscaled, else ``count``."""
        if self.max_nodes is not None:
            return self.max_nodes
        return self.initial_count


@dataclass(frozen=True, slots=True)
class DoksCluster:
    """A DOKS cluster as ``gpuscale cluster create`` makes it: the profile's ``cluster``
    section (:class:`gpuscale.profile.ClusterSpec`, the one definition of its settings)
    and its node pools as DigitalOcean is asked for them."""

    cluster: ClusterSpec
    """The profile's ``cluster`` section (``provider: doks``)."""
    pools: tuple[PoolSpec, ...]
    """The node pools, at least one."""

    @property
    def name(self) -> str:
        """The cluster's name; gpuscale finds an existing cluster by this name."""
        return self.cluster.name

    @property
    def region(self) -> str:
        """A region slug such as ``atl1``; must offer DOKS and every pool's size."""
        return self.cluster.region

    @property
    def version(self) -> str:
        """A DOKS version slug (``1.33.1-do.0``), a minor version (``1.33``) or ``latest``."""
        return self.cluster.version

    @property
    def vpc_uuid(self) -> str | None:
        """The VPC to create the cluster in; None for the region's default VPC."""
        return self.cluster.vpc_uuid

    @property
    def ha(self) -> bool | None:
        """A highly available control plane; None leaves DigitalOcean's default."""
        return self.cluster.ha

    @property
    def tags(self) -> tuple[str, ...]:
        """Extra tags for the cluster (DigitalOcean adds ``k8s`` and ``k8s:<id>`` itself)."""
        return self.cluster.tags

    @property
    def gpu_metrics(self) -> bool:
        """Enable the AMD Device Metrics Exporter add-on when an AMD pool exists."""
        return self.cluster.gpu_metrics

    @property
    def vendors(self) -> frozenset[GpuVendor]:
        """GPU vendors of the cluster's pools."""
        return frozenset(p.gpu_vendor for p in self.pools if p.gpu_vendor is not None)


def cluster_spec_from_profile(profile: Profile, *, source: str = "gpuscale.yaml") -> DoksCluster:
    """The :class:`DoksCluster` of a loaded profile (:func:`gpuscale.inputs.read_profile`).

    The profile has already been validated; this only refuses what DigitalOcean cannot
    make (a provider other than ``doks``, no node pools, every pool starting with 0
    nodes: :meth:`Profile.creation_problem`), naming ``source`` and the key.
    """
    cluster = profile.cluster
    if cluster.provider != "doks":
        raise ProfileError(
            f"cluster.provider is {cluster.provider!r}; gpuscale provisions only DigitalOcean "
            "(doks)",
            where=f"{source}: cluster.provider",
            fix="set provider: doks, or create the cluster yourself and skip gpuscale cluster",
        )
    if not profile.node_pools:
        raise ProfileError(
            "the profile has no node pools",
            where=f"{source}: node_pools",
            fix="list at least one pool with name, size and max_nodes or count",
        )
    problem = profile.creation_problem()
    if problem is not None:
        path, message, fix = problem
        located = profile.line_of(path)
        where = str(located) if located is not None else f"{source}: node_pools"
        raise ProfileError(message, where=where, fix=fix, key_path=path)
    return DoksCluster(cluster, tuple(pool_spec(pool) for pool in profile.node_pools))


def pool_spec(pool: NodePool) -> PoolSpec:
    """The :class:`PoolSpec` DigitalOcean is asked for, from a profile node pool.

    The profile holds the labels and taints the nodes end up with, DOKS's own included;
    the request carries only the others, since DOKS sets its ``doks.digitalocean.com/*``
    labels and the GPU taint (``amd.com/gpu:NoSchedule``, ``nvidia.com/gpu:NoSchedule``)
    on its nodes itself.
    """
    vendor: GpuVendor | None = None
    if pool.gpu == "amd":
        vendor = "amd"
    elif pool.gpu == "nvidia":
        vendor = "nvidia"
    provided_taint = (
        Taint(key=pool.gpu_resource, effect="NoSchedule") if pool.gpu_resource else None
    )
    return PoolSpec(
        name=pool.name,
        size=pool.size,
        gpu_vendor=vendor,
        gpus_per_node=pool.gpus_per_node,
        min_nodes=None if pool.count is not None else (pool.min_nodes or 0),
        max_nodes=pool.max_nodes if pool.count is None else None,
        count=pool.count,
        labels={
            key: value
            for key, value in pool.labels.items()
            if not key.startswith(f"{DOKS_LABEL_DOMAIN}/")
        },
        taints=tuple(t for t in pool.node_taints if t != provided_taint),
    )
