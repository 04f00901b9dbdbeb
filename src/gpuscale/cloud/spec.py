"""What the ``gpuscale cluster`` commands provision, as frozen values, and how they are
read from the profile.

The profile (``gpuscale.yaml``, :mod:`gpuscale.profile`) is the user's file; this module
holds the small part of it the DigitalOcean commands need, so that the commands, the
request builders (:mod:`gpuscale.cloud.api`) and the tests work on plain values.
:func:`cluster_spec_from_profile` is the only place that knows the profile's key names;
when the typed profile lands, only that function changes.

Keys read (``docs/commands/cluster.md`` documents them for users)::

    cluster:
      provider: doks            # required to be doks for the cluster commands
      name: gpu-keda            # required
      region: atl1              # required
      version: latest           # default "latest"; a slug (1.33.1-do.0) or a minor (1.33)
      vpc_uuid: ...             # optional
      ha: false                 # optional; omitted means DigitalOcean's default
      tags: [team-ml]           # optional
      gpu_metrics: true         # optional; AMD pools: enable the metrics exporter add-on
    node_pools:
      - name: gpu               # required
        size: gpu-mi300x1-192gb # required: a DigitalOcean size slug
        gpu_vendor: amd         # amd | nvidia; omitted for CPU pools
        gpus_per_node: 1        # default 1 for GPU pools, 0 otherwise
        min_nodes: 0            # autoscaled pool: min_nodes and max_nodes ...
        max_nodes: 2
        count: 1                # ... or a fixed count (also the initial count if autoscaled)
        labels: {team: ml}      # optional
        taints:                 # optional: "key=value:Effect" strings or mappings
          - key: amd.com/gpu
            effect: NoSchedule
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from gpuscale.errors import ProfileError

__all__ = [
    "TAINT_EFFECTS",
    "ClusterSpec",
    "GpuVendor",
    "PoolSpec",
    "Taint",
    "cluster_spec_from_profile",
    "parse_taint",
]

GpuVendor = Literal["amd", "nvidia"]
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_TAINT_TEXT = re.compile(r"^([^=:\s]+)(?:=([^:\s]*))?:(\w+)$")


@dataclass(frozen=True, slots=True)
class Taint:
    """A Kubernetes taint a node pool puts on its nodes."""

    key: str
    """The taint key, e.g. ``amd.com/gpu``."""
    effect: str
    """``NoSchedule``, ``PreferNoSchedule`` or ``NoExecute``."""
    value: str = ""
    """The taint value; empty for taints such as ``amd.com/gpu:NoSchedule``."""


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
class ClusterSpec:
    """A DOKS cluster as ``gpuscale cluster create`` makes it."""

    name: str
    """The cluster's name; gpuscale finds an existing cluster by this name."""
    region: str
    """A region slug such as ``atl1``; must offer DOKS and every pool's size."""
    pools: tuple[PoolSpec, ...]
    """The node pools, at least one."""
    version: str = "latest"
    """A DOKS version slug (``1.33.1-do.0``), a minor version (``1.33``) or ``latest``."""
    vpc_uuid: str | None = None
    """The VPC to create the cluster in; None for the region's default VPC."""
    ha: bool | None = None
    """A highly available control plane; None leaves DigitalOcean's default."""
    tags: tuple[str, ...] = ()
    """Extra tags for the cluster (DigitalOcean adds ``k8s`` and ``k8s:<id>`` itself)."""
    gpu_metrics: bool = True
    """Enable the AMD Device Metrics Exporter add-on when an AMD pool exists (opt-in in the API)."""

    @property
    def vendors(self) -> frozenset[GpuVendor]:
        """GPU vendors of the cluster's pools."""
        return frozenset(p.gpu_vendor for p in self.pools if p.gpu_vendor is not None)


def parse_taint(value: object, *, where: str) -> Taint:
    """A taint from ``"key=value:Effect"``, ``"key:Effect"`` or ``{key, value, effect}``."""
    if isinstance(value, str):
        match = _TAINT_TEXT.match(value.strip())
        if not match:
            raise ProfileError(
                f"cannot read taint {value!r}",
                where=where,
                fix="write it as key=value:Effect or key:Effect, e.g. amd.com/gpu:NoSchedule",
            )
        key, text_value, effect = match.group(1), match.group(2) or "", match.group(3)
    elif isinstance(value, Mapping):
        key = str(value.get("key") or "")
        text_value = str(value.get("value") or "")
        effect = str(value.get("effect") or "")
        if not key:
            raise ProfileError("a taint needs a key", where=where, fix="add key: <taint key>")
    else:
        raise ProfileError(
            f"expected a taint, got {type(value).__name__}",
            where=where,
            fix="write key=value:Effect or a mapping with key, value and effect",
        )
    if effect not in TAINT_EFFECTS:
        raise ProfileError(
            f"unknown taint effect {effect!r}",
            where=where,
            fix=f"use one of {', '.join(TAINT_EFFECTS)}",
        )
    return Taint(key=key, effect=effect, value=text_value)


def cluster_spec_from_profile(
    profile: Mapping[str, Any], *, source: str = "gpuscale.yaml"
) -> ClusterSpec:
    """The :class:`ClusterSpec` in a profile mapping (``yaml.load`` of ``gpuscale.yaml``).

    The only function that knows the profile's keys (see the module docstring). Raises
    :class:`ProfileError` naming ``source`` and the key for anything missing or wrong.
    """
    cluster = _mapping(profile.get("cluster"), where=f"{source}: cluster")
    provider = cluster.get("provider", "doks")
    if provider != "doks":
        raise ProfileError(
            f"cluster.provider is {provider!r}; gpuscale provisions only DigitalOcean (doks)",
            where=f"{source}: cluster.provider",
            fix="set provider: doks, or create the cluster yourself and skip gpuscale cluster",
        )
    name = _text(cluster, "name", where=f"{source}: cluster.name")
    region = _text(cluster, "region", where=f"{source}: cluster.region")
    raw_version = cluster.get("version", "latest")
    if not isinstance(raw_version, str) or not raw_version.strip():
        raise ProfileError(
            f"version must be a string, got {raw_version!r}"
            + (" (YAML read a number: 1.20 becomes 1.2)" if isinstance(raw_version, float) else ""),
            where=f"{source}: cluster.version",
            fix='quote it, e.g. version: "1.33", or use latest',
        )
    version = raw_version.strip()
    vpc = cluster.get("vpc_uuid")
    ha = cluster.get("ha")
    if ha is not None and not isinstance(ha, bool):
        raise ProfileError("expected true or false", where=f"{source}: cluster.ha", fix="ha: false")
    gpu_metrics = cluster.get("gpu_metrics", True)
    if not isinstance(gpu_metrics, bool):
        raise ProfileError(
            "expected true or false",
            where=f"{source}: cluster.gpu_metrics",
            fix="gpu_metrics: true",
        )
    tags = cluster.get("tags") or []
    if not isinstance(tags, Sequence) or isinstance(tags, str):
        raise ProfileError(
            "expected a list of tags", where=f"{source}: cluster.tags", fix="tags: [team-ml]"
        )
    raw_pools = profile.get("node_pools")
    if not isinstance(raw_pools, Sequence) or isinstance(raw_pools, str) or not raw_pools:
        raise ProfileError(
            "the profile has no node_pools",
            where=f"{source}: node_pools",
            fix="list at least one pool with name, size and max_nodes or count",
        )
    pools = tuple(_pool(raw, where=f"{source}: node_pools[{i}]") for i, raw in enumerate(raw_pools))
    seen: set[str] = set()
    for i, pool in enumerate(pools):
        if pool.name in seen:
            raise ProfileError(
                f"two node pools are named {pool.name!r}",
                where=f"{source}: node_pools[{i}].name",
                fix="give every pool its own name",
            )
        seen.add(pool.name)
    return ClusterSpec(
        name=name,
        region=region,
        pools=pools,
        version=version,
        vpc_uuid=str(vpc) if vpc else None,
        ha=ha,
        tags=tuple(str(t) for t in tags),
        gpu_metrics=gpu_metrics,
    )


def _pool(raw: object, *, where: str) -> PoolSpec:
    pool = _mapping(raw, where=where)
    name = _text(pool, "name", where=f"{where}.name")
    size = _text(pool, "size", where=f"{where}.size")
    vendor = pool.get("gpu_vendor")
    if vendor in (None, "", "none"):
        vendor = None
    elif vendor not in ("amd", "nvidia"):
        raise ProfileError(
            f"unknown GPU vendor {vendor!r}",
            where=f"{where}.gpu_vendor",
            fix="use amd or nvidia, or leave it out for a CPU pool",
        )
    gpus = _count(pool, "gpus_per_node", where=f"{where}.gpus_per_node")
    if gpus is None:
        gpus = 1 if vendor else 0
    min_nodes = _count(pool, "min_nodes", where=f"{where}.min_nodes")
    max_nodes = _count(pool, "max_nodes", where=f"{where}.max_nodes")
    count = _count(pool, "count", where=f"{where}.count")
    if (min_nodes is None) != (max_nodes is None):
        missing = "max_nodes" if max_nodes is None else "min_nodes"
        raise ProfileError(
            "an autoscaled pool needs both min_nodes and max_nodes",
            where=f"{where}.{missing}",
            fix=f"add {missing}, or use count for a fixed pool",
        )
    if max_nodes is None and count is None:
        raise ProfileError(
            "a pool needs min_nodes and max_nodes (autoscaled) or count (fixed)",
            where=where,
            fix="add min_nodes: 0 and max_nodes: 2, or count: 1",
        )
    if min_nodes is not None and max_nodes is not None:
        if max_nodes < 1 or min_nodes > max_nodes:
            raise ProfileError(
                f"min_nodes {min_nodes} and max_nodes {max_nodes} make no pool",
                where=f"{where}.max_nodes",
                fix="use 0 <= min_nodes <= max_nodes and max_nodes >= 1",
            )
        if count is not None and not min_nodes <= count <= max_nodes:
            raise ProfileError(
                f"count {count} is outside min_nodes..max_nodes ({min_nodes}..{max_nodes})",
                where=f"{where}.count",
                fix="set count between min_nodes and max_nodes, or leave it out",
            )
    labels = pool.get("labels") or {}
    if not isinstance(labels, Mapping):
        raise ProfileError(
            "expected a mapping of labels", where=f"{where}.labels", fix="labels: {team: ml}"
        )
    raw_taints = pool.get("taints") or []
    if not isinstance(raw_taints, Sequence) or isinstance(raw_taints, str):
        raise ProfileError(
            "expected a list of taints",
            where=f"{where}.taints",
            fix="taints: [amd.com/gpu:NoSchedule]",
        )
    return PoolSpec(
        name=name,
        size=size,
        gpu_vendor=vendor,
        gpus_per_node=gpus,
        min_nodes=min_nodes,
        max_nodes=max_nodes,
        count=count,
        labels={str(k): str(v) for k, v in labels.items()},
        taints=tuple(
            parse_taint(t, where=f"{where}.taints[{i}]") for i, t in enumerate(raw_taints)
        ),
    )


def _mapping(value: object, *, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ProfileError(
            "missing or not a mapping",
            where=where,
            fix="see docs/commands/cluster.md for the keys gpuscale cluster reads",
        )
    return value


def _text(mapping: Mapping[str, Any], key: str, *, where: str) -> str:
    value = mapping.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ProfileError(
            f"{key} is missing or empty", where=where, fix=f"set {key} to a non-empty string"
        )
    return value.strip()


def _count(mapping: Mapping[str, Any], key: str, *, where: str) -> int | None:
    value = mapping.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ProfileError(
            f"expected a whole number >= 0, got {value!r}", where=where, fix=f"{key}: 1"
        )
    return value
