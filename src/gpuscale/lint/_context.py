"""What lint rules read: the objects of the manifest set and the profile values.

This is the seam between ``gpuscale lint`` and the code that loads manifests and the
profile. Rules never parse YAML or read files; they read:

- the objects, each a :class:`ManifestObject` (kind, name, namespace, body as plain
  dicts and lists, and ``line_of(key_path)`` giving ``(file, line, column)``);
- the profile values, a :class:`ProfileValues` (Prometheus release, namespace and scrape
  interval, node pools with their GPUs, labels, taints and size limits, start-up times),
  or ``None`` when the user gave no profile: rules that need it then stay silent;
- the ``--namespace`` default for objects that set none (``default``, as
  ``kubectl apply`` without ``-n`` would).

:class:`LintContext` bundles the three, indexes the objects by kind once, and caches the
parsed views rules share (ScaledObject settings, query analyses), so each rule stays a
short loop.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from gpuscale.lint._findings import KeyPath

__all__ = [
    "DEFAULT_NAMESPACE",
    "LintContext",
    "ManifestObject",
    "NodePool",
    "ProfileValues",
    "Taint",
]

DEFAULT_NAMESPACE = "default"

_T = TypeVar("_T")


@runtime_checkable
class ManifestObject(Protocol):
    """One Kubernetes object of the manifest set, as the loader gives it to lint.

    ``body`` is the whole document (``apiVersion``, ``kind``, ``metadata``, ``spec``...)
    as plain ``dict``/``list``/scalars. ``line_of`` maps a key path in ``body`` to the
    1-based ``(file, line, column)`` of that key (of the item, for a list index); for a
    path that does not exist it returns the location of the deepest existing parent, and
    ``line_of(())`` is where the object starts.
    """

    @property
    def kind(self) -> str: ...

    @property
    def name(self) -> str | None: ...

    @property
    def namespace(self) -> str | None: ...

    @property
    def body(self) -> Mapping[str, Any]: ...

    def line_of(self, key_path: KeyPath) -> tuple[str, int, int]: ...


@dataclass(frozen=True)
class Taint:
    """A node taint, as a node pool puts it on every node."""

    key: str
    value: str = ""
    effect: str = "NoSchedule"
    """``NoSchedule``, ``PreferNoSchedule`` or ``NoExecute``."""


@dataclass(frozen=True)
class NodePool:
    """A node pool as lint needs it (from the profile)."""

    name: str
    gpu_vendor: str | None = None
    """``amd``, ``nvidia`` or ``None`` for a pool without GPUs."""
    gpus_per_node: int = 0
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels on every node of the pool, including provider labels such as
    ``doks.digitalocean.com/node-pool`` when the loader knows them."""
    taints: tuple[Taint, ...] = ()
    max_nodes: int = 0
    """The most nodes the pool can ever have (its autoscaler maximum, or its fixed size)."""

    @property
    def gpu_resource(self) -> str | None:
        """The extended resource the pool's GPUs are offered as (``amd.com/gpu``...)."""
        return f"{self.gpu_vendor}.com/gpu" if self.gpu_vendor else None


@dataclass(frozen=True)
class ProfileValues:
    """The profile (gpuscale.yaml) values lint rules read; every field has a default."""

    release_name: str | None = None
    """The kube-prometheus-stack Helm release name; ``None``: not given (assume ``prometheus``)."""
    prometheus_namespace: str | None = None
    """The namespace Prometheus was installed into; ``None``: unknown."""
    scrape_interval: float | None = None
    """Seconds between scrapes of the workload's metrics; ``None``: unknown."""
    node_pools: tuple[NodePool, ...] = ()
    startup_seconds: Mapping[str, float] = field(default_factory=dict)
    """Seconds from a new replica being asked for to it serving, by workload name."""
    default_startup_seconds: float | None = None
    """The same for workloads not named in ``startup_seconds``; ``None``: unknown."""
    hpa_sync_period: float = 15.0
    """The HPA controller's sync period (``--horizontal-pod-autoscaler-sync-period``)."""

    def startup_for(self, workload: str | None) -> float | None:
        """The start-up time of ``workload`` in seconds, or ``None`` when unknown."""
        if workload is not None and workload in self.startup_seconds:
            return self.startup_seconds[workload]
        return self.default_startup_seconds

    def gpu_pools(self) -> tuple[NodePool, ...]:
        """The pools that have GPUs."""
        return tuple(pool for pool in self.node_pools if pool.gpu_vendor and pool.gpus_per_node)


class LintContext:
    """The manifest set, the profile values and the default namespace, indexed for rules."""

    def __init__(
        self,
        objects: Sequence[ManifestObject],
        profile: ProfileValues | None = None,
        *,
        default_namespace: str = DEFAULT_NAMESPACE,
    ) -> None:
        self.objects: tuple[ManifestObject, ...] = tuple(objects)
        self.profile = profile
        self.default_namespace = default_namespace
        self._by_kind: dict[str, list[ManifestObject]] = {}
        self._namespaces: dict[int, str] = {}
        for obj in self.objects:
            self._by_kind.setdefault(obj.kind, []).append(obj)
            namespace = obj.namespace
            if not isinstance(namespace, str) or not namespace:
                namespace = default_namespace
            self._namespaces[id(obj)] = namespace
        self._cache: dict[tuple[str, Hashable], Any] = {}

    def of_kind(self, *kinds: str) -> list[ManifestObject]:
        """The objects of the given kinds, in input order within each kind."""
        found: list[ManifestObject] = []
        for kind in kinds:
            found.extend(self._by_kind.get(kind, ()))
        return found

    def namespace_of(self, obj: ManifestObject) -> str:
        """The object's namespace, or the ``--namespace`` default when it sets none."""
        known = self._namespaces.get(id(obj))
        if known is not None:
            return known
        namespace = obj.namespace
        return namespace if isinstance(namespace, str) and namespace else self.default_namespace

    def cached(self, kind: str, key: Hashable, compute: Callable[[], _T]) -> _T:
        """``compute()`` once per ``(kind, key)`` for the whole run (views shared by rules)."""
        slot = (kind, key)
        if slot not in self._cache:
            self._cache[slot] = compute()
        value: _T = self._cache[slot]
        return value
