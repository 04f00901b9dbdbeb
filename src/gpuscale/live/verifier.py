"""The I/O half of ``gpuscale verify``: read everything the checks need into :class:`Facts`.

Only reads: ``GET`` of the KEDA CRDs, the ``v1beta1.external.metrics.k8s.io`` APIService,
KEDA's two Deployments (in the namespace the APIService names, else the profile's
``keda.namespace``), each ScaledObject, its HPA, ServiceMonitor and Deployment the
manifests name, the Deployment's pods and its namespace's events, the Namespaces of
the ServiceMonitors (their labels), the nodes and every ``monitoring.coreos.com/v1``
Prometheus. Then Prometheus itself, at each trigger's ``serverAddress`` (an in-cluster
Service, reached through a port-forward to one of its ready pods with
:class:`~gpuscale.live.load.ForwardPool`) or at ``--prometheus``, through the
project's :class:`~gpuscale.prometheus.PrometheusClient`: build info, the trigger
queries with KEDA's query parameters (answers kept raw for KEDA's parser), the active
targets, and the kube-state-metrics series of each Deployment. Node pools come from DigitalOcean (a
callable the CLI passes when the provider is doks and a token is set) or the profile.

A read that fails (a missing permission, a timeout, a 5xx) is kept in ``Facts.errors``
and the checks that needed it say so (``skip``, never a verdict on an object nobody
read); a 404 is an absent object, which the checks judge. When the very first read gets
no answer at all (:class:`~gpuscale.live.kube.ApiUnreachableError`), nothing would be
read, so :func:`gather` raises it as ``deploy``, ``watch`` and ``load`` do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from gpuscale.errors import GpuscaleError, InputError
from gpuscale.live._verify.links import APISERVICE, NODES, Ask, Scope, walk
from gpuscale.live.kube import ApiUnreachableError, Kube
from gpuscale.live.load import ForwardPool
from gpuscale.live.verify import (
    Facts,
    HttpAnswer,
    PoolCapacity,
    PromFacts,
    Ref,
    keda_deployments,
    pool_capacity,
    verify_targets,
)
from gpuscale.live.watch import POOL_LABELS
from gpuscale.live.watcher import in_cluster_service, open_prometheus
from gpuscale.manifests import ManifestSet
from gpuscale.profile import Profile
from gpuscale.prometheus import PrometheusClient

__all__ = ["PoolReader", "gather", "profile_pools"]

PoolReader = Callable[[Sequence[dict[str, Any]]], tuple[tuple[PoolCapacity, ...] | None, str]]
"""Given the nodes, returns the node pools and where they came from (``DigitalOcean``,
``the profile ...``), or None and why none are known."""


class _Reads:
    """The reads made so far; what each link's next reads may depend on (a
    :class:`~gpuscale.live._verify.links.Known`)."""

    def __init__(self, kube: Kube, keda_namespace: str) -> None:
        self.kube = kube
        self.default_keda_namespace = keda_namespace
        self.objects: dict[str, dict[str, Any] | None] = {}
        self.lists: dict[str, list[dict[str, Any]]] = {}
        self.errors: dict[str, str] = {}
        self.made: set[str] = set()
        self.answered = False

    @property
    def keda_namespace(self) -> str:
        """Where the APIService says KEDA runs, else the profile's ``keda.namespace``."""
        return keda_deployments(self.read(APISERVICE))[2] or self.default_keda_namespace

    def read(self, ref: Ref) -> dict[str, Any] | None:
        return self.objects.get(ref.key)

    def fetch(self, ref: Ref) -> None:
        """Read ``ref`` unless it was read (or failed) already."""
        key = ref.key
        if key in self.made:
            return
        self.made.add(key)
        try:
            doc = self.kube.get_json(
                ref.path, dict(ref.query) or None, what=key, missing_ok=ref.missing_ok
            )
        except GpuscaleError as error:
            if not isinstance(error, ApiUnreachableError):
                self.answered = True
            elif not self.answered:
                raise
            self.errors[key] = error.one_line()
            return
        self.answered = True
        if not ref.many:
            self.objects[key] = doc
        elif doc is not None:
            self.lists[key] = list(doc.get("items") or [])


def gather(
    kube: Kube,
    manifests: ManifestSet,
    *,
    profile: Profile,
    namespace: str | None = None,
    prometheus_url: str | None = None,
    pools: PoolReader | None = None,
    open_client: Callable[[str], PrometheusClient] = open_prometheus,
) -> Facts:
    """Make the reads every link of :data:`~gpuscale.live._verify.links.LINKS` declares for
    ``manifests``, in chain order, then its Prometheus queries; ``open_client`` makes the
    Prometheus client for a base URL."""
    context = kube.target.namespace
    scope = Scope(verify_targets(manifests, namespace, context), prometheus_url)
    reads = _Reads(kube, profile.keda.namespace)
    asks: list[Ask] = []
    for link, subject in walk(scope):
        for ref in link.reads(reads, subject):
            reads.fetch(ref)
        asks.extend(link.asks(subject))
    reads.fetch(NODES)  # the node pools are counted on the nodes, needed or not
    nodes = reads.lists.get(NODES.key) or []
    proms = _prometheus(
        kube, open_client, asks, prometheus_url=prometheus_url, fallback=profile.prometheus.address
    )
    found, source = pools(nodes) if pools is not None else (None, "no profile given")
    return Facts(
        context_namespace=context,
        keda_namespace=reads.keda_namespace,
        objects=reads.objects,
        lists=reads.lists,
        errors=reads.errors,
        prometheus=proms,
        pools=found,
        pools_source=source,
    )


def profile_pools(profile: Profile, nodes: Sequence[dict[str, Any]]) -> tuple[PoolCapacity, ...]:
    """The profile's node pools with the number of nodes each has now (by pool label)."""
    counts: Counter[str] = Counter()
    for node in nodes:
        labels = (node.get("metadata") or {}).get("labels") or {}
        pool = next((labels[label] for label in POOL_LABELS if label in labels), None)
        if pool is not None:
            counts[str(pool)] += 1
    return tuple(pool_capacity(pool, counts[pool.name]) for pool in profile.node_pools)


def _get(client: PrometheusClient, path: str, params: dict[str, str] | None = None) -> HttpAnswer:
    try:
        status, body = client.get(path, params)
    except GpuscaleError as error:
        return HttpAnswer(None, "", error.one_line())
    return HttpAnswer(status, body)


def _prometheus(
    kube: Kube,
    open_client: Callable[[str], PrometheusClient],
    asks: Sequence[Ask],
    *,
    prometheus_url: str | None,
    fallback: str,
) -> dict[str, PromFacts]:
    """Ask each Prometheus the links named (else ``fallback``) its own queries and the
    queries meant for every Prometheus, in the links' order."""
    wanted = list(dict.fromkeys(ask.address for ask in asks if ask.address is not None))
    if not wanted:
        wanted = [prometheus_url or fallback]
    found: dict[str, PromFacts] = {}
    for address in wanted:
        pool: ForwardPool | None = None
        try:
            base, source, error, unread = address, address, "", False
            service = None if prometheus_url else in_cluster_service(address)
            if service is not None:
                ns, name, port = service
                source = f"service/{ns}/{name}:{port} via port-forward"
                pool = ForwardPool(kube, ns, name, port)
                try:
                    pool.refresh()
                except GpuscaleError as exc:
                    error, unread = exc.one_line(), not isinstance(exc, InputError)
                urls = pool.urls()
                if urls:
                    base = urls[0]
                elif not error:
                    error = "; ".join(pool.forward_errors()) or ("no ready pod behind the Service")
            if error:
                found[address] = PromFacts(
                    source, HttpAnswer(None, "", error), unread=error if unread else ""
                )
                continue
            with open_client(base) as client:
                queries: dict[str, HttpAnswer] = {}
                for ask in asks:
                    if ask.address in (None, address):
                        params = dict(ask.params)
                        queries[params["query"]] = _get(client, "/api/v1/query", params)
                found[address] = PromFacts(
                    source=source,
                    buildinfo=_get(client, "/api/v1/status/buildinfo"),
                    queries=queries,
                    targets=_get(client, "/api/v1/targets", {"state": "active"}),
                )
        finally:
            if pool is not None:
                pool.close()
    return found
