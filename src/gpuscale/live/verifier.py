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
from gpuscale.live.kube import ApiUnreachableError, Kube
from gpuscale.live.load import ForwardPool, deployment_selector
from gpuscale.live.verify import (
    KEDA_CRDS,
    METRICS_APISERVICE,
    Facts,
    HttpAnswer,
    PoolCapacity,
    PromFacts,
    Ref,
    hpa_of,
    keda_deployments,
    ksm_query,
    pool_capacity,
    prometheus_trigger_of,
    query_params,
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
    def __init__(self, kube: Kube) -> None:
        self.kube = kube
        self.objects: dict[str, dict[str, Any] | None] = {}
        self.lists: dict[str, list[dict[str, Any]]] = {}
        self.errors: dict[str, str] = {}
        self.answered = False

    def _failed(self, key: str, error: GpuscaleError) -> None:
        if not isinstance(error, ApiUnreachableError):
            self.answered = True
        elif not self.answered:
            raise error
        self.errors[key] = error.one_line()

    def object(self, ref: Ref) -> dict[str, Any] | None:
        key = ref.key
        if key in self.objects:
            return self.objects[key]
        try:
            doc: dict[str, Any] | None = self.kube.get_json(ref.path, what=key, missing_ok=True)
        except GpuscaleError as error:
            self._failed(key, error)
            return None
        self.answered = True
        self.objects[key] = doc
        return doc

    def items(
        self, ref: Ref, query: dict[str, str] | None = None, *, missing_ok: bool = False
    ) -> list[dict[str, Any]]:
        key = ref.key
        if key in self.lists:
            return self.lists[key]
        try:
            doc = self.kube.get_json(ref.path, query, what=key, missing_ok=missing_ok)
        except GpuscaleError as error:
            self._failed(key, error)
            return []
        self.answered = True
        if doc is None:
            return []
        self.lists[key] = list(doc.get("items") or [])
        return self.lists[key]


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
    """Read everything :func:`~gpuscale.live.verify.verify_checks` needs for ``manifests``;
    ``open_client`` makes the Prometheus client for a base URL."""
    context = kube.target.namespace
    targets = verify_targets(manifests, namespace, context)
    reads = _Reads(kube)
    for name in KEDA_CRDS:
        reads.object(Ref.object("CustomResourceDefinition", None, name))
    apiservice = reads.object(Ref.object("APIService", None, METRICS_APISERVICE))
    operator, server, said_ns = keda_deployments(apiservice)
    keda_ns = said_ns or profile.keda.namespace
    for name in (operator, server):
        reads.object(Ref.object("Deployment", keda_ns, name))
    for manifest, ns in targets.scaled_objects:
        live = reads.object(Ref.object("ScaledObject", ns, manifest.name))
        reads.object(Ref.object("HorizontalPodAutoscaler", ns, hpa_of(manifest, live)))
    for manifest, ns in targets.monitors:
        reads.object(Ref.object("ServiceMonitor", ns, manifest.name))
        reads.object(Ref.object("Namespace", None, ns))
    if targets.monitors:
        prometheuses = Ref.list("prometheuses")
        try:
            doc = kube.get_json(prometheuses.path, what=prometheuses.key, missing_ok=True)
        except GpuscaleError as error:
            reads.errors[prometheuses.key] = error.one_line()
        else:
            if doc is not None:
                reads.lists[prometheuses.key] = list(doc.get("items") or [])
    for ns, name, _ in targets.deployments:
        live = reads.object(Ref.object("Deployment", ns, name))
        if live is not None:
            reads.items(Ref.list("pods", ns, name), {"labelSelector": deployment_selector(live)})
        reads.items(Ref.list("events", ns))
    nodes = reads.items(Ref.list("nodes"))
    proms = _prometheus(
        kube,
        open_client,
        targets.scaled_objects,
        [(ns, name) for ns, name, _ in targets.deployments],
        prometheus_url=prometheus_url,
        fallback=profile.prometheus.address,
    )
    found, source = pools(nodes) if pools is not None else (None, "no profile given")
    return Facts(
        context_namespace=context,
        keda_namespace=keda_ns,
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
    scaled_objects: Sequence[tuple[Any, str]],
    deployments: Sequence[tuple[str, str]],
    *,
    prometheus_url: str | None,
    fallback: str,
) -> dict[str, PromFacts]:
    wanted: dict[str, list[Any]] = {}
    for manifest, _ in scaled_objects:
        trigger, _why = prometheus_trigger_of(manifest)
        if trigger is not None:
            wanted.setdefault(prometheus_url or trigger.server_address, []).append(trigger)
    if not wanted:
        wanted[prometheus_url or fallback] = []
    found: dict[str, PromFacts] = {}
    for address, triggers in wanted.items():
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
                queries = {
                    t.query: _get(client, "/api/v1/query", query_params(t)) for t in triggers
                }
                for ns, name in deployments:
                    query = ksm_query(ns, name)
                    queries[query] = _get(client, "/api/v1/query", {"query": query})
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
