"""Pure decisions about DOKS clusters: is the spec valid for this account, what will it
cost at most, and what state is an existing cluster in.

Inputs are the decoded answers of ``GET /v2/kubernetes/options``, ``GET /v2/sizes`` and
``GET /v2/kubernetes/clusters[/{id}]`` (shapes in DigitalOcean's OpenAPI
``models/options.yml``, ``sizes/models/size.yml``, ``models/cluster.yml``); nothing here
sends a request, so the tests feed recorded-shape dicts straight in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpuscale.cloud.spec import DoksCluster
from gpuscale.errors import InputError

__all__ = [
    "ADDON_FIELDS",
    "ClusterStatus",
    "CreateCheck",
    "PoolStatus",
    "PriceRow",
    "check_create",
    "cluster_status",
    "find_by_name",
    "hourly_cost",
    "version_matches",
]

ADDON_FIELDS = (
    "amd_gpu_device_plugin",
    "amd_gpu_device_metrics_exporter_plugin",
    "nvidia_gpu_device_plugin",
)
"""The add-on fields gpuscale reads back and reports."""

_FAILED_STATES = ("error", "invalid", "deleted")


@dataclass(frozen=True, slots=True)
class PriceRow:
    """What one pool costs per hour at its largest size."""

    pool: str
    size: str
    price_hourly: float | None
    """``price_hourly`` of the size from ``/v2/sizes``; None when the size is not listed."""
    largest_count: int
    """``max_nodes`` for an autoscaled pool, ``count`` for a fixed one."""

    @property
    def max_per_hour(self) -> float | None:
        """Dollars per hour with the pool at its largest size."""
        if self.price_hourly is None:
            return None
        return self.price_hourly * self.largest_count


@dataclass(frozen=True, slots=True)
class CreateCheck:
    """The result of checking a spec against the account's options and sizes."""

    prices: tuple[PriceRow, ...]
    warnings: tuple[str, ...] = ()

    @property
    def max_per_hour(self) -> float | None:
        """Dollars per hour with every pool at its largest size; None if a price is unknown."""
        values = [row.max_per_hour for row in self.prices]
        if any(v is None for v in values):
            return None
        return sum(v for v in values if v is not None)


@dataclass(frozen=True, slots=True)
class PoolStatus:
    """A node pool as the API reports it."""

    name: str
    size: str
    count: int
    auto_scale: bool
    min_nodes: int
    max_nodes: int
    nodes: Mapping[str, int] = field(default_factory=dict)
    """Node count per ``status.state`` (provisioning, running, draining, deleting)."""


@dataclass(frozen=True, slots=True)
class ClusterStatus:
    """A DOKS cluster as the API reports it."""

    id: str
    name: str
    region: str
    version: str
    state: str
    """``status.state``: provisioning, running, degraded, error, deleted, upgrading, deleting."""
    message: str
    endpoint: str
    pools: tuple[PoolStatus, ...]
    addons: Mapping[str, bool | None]
    """Each of :data:`ADDON_FIELDS`: enabled, disabled, or None when the API left it out."""

    @property
    def running(self) -> bool:
        return self.state == "running"

    @property
    def failed(self) -> bool:
        return self.state in _FAILED_STATES

    @property
    def nodes_running(self) -> int:
        return sum(p.nodes.get("running", 0) for p in self.pools)

    @property
    def nodes_expected(self) -> int:
        return sum(p.count for p in self.pools)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form for ``-o json``."""
        return {
            "id": self.id,
            "name": self.name,
            "region": self.region,
            "version": self.version,
            "state": self.state,
            "message": self.message,
            "endpoint": self.endpoint,
            "node_pools": [
                {
                    "name": p.name,
                    "size": p.size,
                    "count": p.count,
                    "auto_scale": p.auto_scale,
                    "min_nodes": p.min_nodes,
                    "max_nodes": p.max_nodes,
                    "nodes": dict(p.nodes),
                }
                for p in self.pools
            ],
            "addons": dict(self.addons),
        }


def version_matches(wanted: str, versions: Sequence[Mapping[str, Any]]) -> str | None:
    """The slug ``wanted`` resolves to among the options' versions, or None.

    ``latest`` is the first listed version (the API lists newest first); a minor such
    as ``1.33`` matches the first ``kubernetes_version`` of that minor; anything else
    must be a listed slug.
    """
    if not versions:
        return None
    if wanted == "latest":
        return str(versions[0].get("slug"))
    for version in versions:
        if version.get("slug") == wanted:
            return wanted
    prefix = wanted + "."
    for version in versions:
        if str(version.get("kubernetes_version", "")).startswith(prefix):
            return str(version.get("slug"))
    return None


def check_create(
    spec: DoksCluster,
    options: Mapping[str, Any],
    sizes: Sequence[Mapping[str, Any]],
    *,
    source: str = "gpuscale.yaml",
) -> CreateCheck:
    """Check ``spec`` against ``/v2/kubernetes/options`` and ``/v2/sizes``.

    Raises :class:`InputError` naming the profile key for the first thing DigitalOcean
    would reject: an unknown region, an unknown version, a size that does not exist,
    is unavailable, or is not offered in the region. Returns the price rows and
    warnings for the things it cannot be sure about.
    """
    opts = options.get("options") or options
    regions = [str(r.get("slug")) for r in opts.get("regions") or []]
    if spec.region not in regions:
        raise InputError(
            f"DOKS is not offered in region {spec.region!r}",
            where=f"{source}: cluster.region",
            fix=f"use one of {', '.join(sorted(regions)) or '(none listed)'}",
        )
    versions = opts.get("versions") or []
    if version_matches(spec.version, versions) is None:
        listed = ", ".join(str(v.get("slug")) for v in versions[:6])
        raise InputError(
            f"DOKS has no version {spec.version!r}",
            where=f"{source}: cluster.version",
            fix=f"use latest, a minor such as 1.33, or one of {listed}",
        )
    doks_sizes = {str(s.get("slug")) for s in opts.get("sizes") or []}
    by_slug = {str(s.get("slug")): s for s in sizes}
    warnings: list[str] = []
    rows: list[PriceRow] = []
    for index, pool in enumerate(spec.pools):
        where = f"{source}: node_pools[{index}].size"
        size = by_slug.get(pool.size)
        if size is None:
            if pool.size not in doks_sizes:
                raise InputError(
                    f"DigitalOcean has no size {pool.size!r}",
                    where=where,
                    fix="use a slug from GET /v2/sizes, e.g. gpu-mi300x1-192gb or s-4vcpu-8gb",
                )
            warnings.append(
                f"pool {pool.name}: size {pool.size} is not in /v2/sizes (a contract size?); "
                "its price is unknown"
            )
            rows.append(PriceRow(pool.name, pool.size, None, pool.largest_count))
            continue
        if not size.get("available", True):
            raise InputError(
                f"size {pool.size!r} is not available at the moment",
                where=where,
                fix="choose another size, or retry later",
            )
        size_regions = [str(r) for r in size.get("regions") or []]
        if spec.region not in size_regions:
            offered = ", ".join(sorted(r for r in size_regions if r in regions)) or "no DOKS region"
            raise InputError(
                f"size {pool.size!r} is not offered in {spec.region}",
                where=where,
                fix=f"use a region that has it ({offered}) or another size",
            )
        if doks_sizes and pool.size not in doks_sizes:
            warnings.append(
                f"pool {pool.name}: size {pool.size} is not among the DOKS options' sizes; "
                "DigitalOcean may reject it for Kubernetes"
            )
        price = size.get("price_hourly")
        rows.append(
            PriceRow(
                pool.name,
                pool.size,
                float(price) if price is not None else None,
                pool.largest_count,
            )
        )
        if pool.gpu_vendor and pool.autoscaled and pool.min_nodes == 0:
            warnings.append(
                f"pool {pool.name}: min_nodes 0 relies on scale-from-zero of a GPU pool; "
                "test it on your account before relying on it (docs/walkthrough-doks.md)"
            )
    return CreateCheck(prices=tuple(rows), warnings=tuple(warnings))


def find_by_name(clusters: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    """The cluster named ``name`` among ``clusters`` (the API lets names repeat; first wins)."""
    for cluster in clusters:
        if cluster.get("name") == name:
            return cluster
    return None


def cluster_status(cluster: Mapping[str, Any]) -> ClusterStatus:
    """A :class:`ClusterStatus` from a ``kubernetes_cluster`` object."""
    doc = cluster.get("kubernetes_cluster", cluster)
    pools = tuple(
        PoolStatus(
            name=str(p.get("name", "")),
            size=str(p.get("size", "")),
            count=int(p.get("count") or 0),
            auto_scale=bool(p.get("auto_scale")),
            min_nodes=int(p.get("min_nodes") or 0),
            max_nodes=int(p.get("max_nodes") or 0),
            nodes=dict(
                Counter(
                    str((n.get("status") or {}).get("state") or "unknown")
                    for n in p.get("nodes") or []
                )
            ),
        )
        for p in doc.get("node_pools") or []
    )
    addons: dict[str, bool | None] = {}
    for name in ADDON_FIELDS:
        value = doc.get(name)
        addons[name] = bool(value.get("enabled")) if isinstance(value, Mapping) else None
    status = doc.get("status") or {}
    return ClusterStatus(
        id=str(doc.get("id", "")),
        name=str(doc.get("name", "")),
        region=str(doc.get("region", "")),
        version=str(doc.get("version", "")),
        state=str(status.get("state") or "unknown"),
        message=str(status.get("message") or ""),
        endpoint=str(doc.get("endpoint") or ""),
        pools=pools,
        addons=addons,
    )


def hourly_cost(status: ClusterStatus, sizes: Sequence[Mapping[str, Any]]) -> float | None:
    """Dollars per hour for the nodes the cluster has now (any state but deleting)."""
    prices = {str(s.get("slug")): s.get("price_hourly") for s in sizes}
    total = 0.0
    for pool in status.pools:
        price = prices.get(pool.size)
        if price is None:
            return None
        billed = sum(n for state, n in pool.nodes.items() if state != "deleting")
        total += float(price) * billed
    return total
