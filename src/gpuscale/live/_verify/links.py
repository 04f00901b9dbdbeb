"""The chain as one list of links: each declares what it reads and how it checks.

:data:`LINKS` is the single list both halves of ``gpuscale verify`` walk. The reader
(:func:`gpuscale.live.verifier.gather`) asks each link, in order, for its Kubernetes reads
(:class:`~gpuscale.live._verify.facts.Ref`) and its Prometheus queries (:class:`Ask`) and
performs them; :func:`verify_checks` asks each link, in the same order, for its checks.
Adding a link is adding one :class:`Link` here.

A link is about one kind of subject (``over``): the cluster's own parts, each
ScaledObject, each ServiceMonitor, each Deployment. Consecutive links over the same kind
run per subject, so a ScaledObject's checks stay together, as the table shows them.
A link's reads may depend on answers already read, its own included: ``reads`` is a
generator the reader drains one read at a time (KEDA's Deployments are named by the
APIService; the HPA by the live ScaledObject).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, Literal, Protocol

from gpuscale.live._verify.capacity import check_gpu_capacity, check_pending_pods
from gpuscale.live._verify.chain import _Targets, prometheus_trigger_of, verify_targets
from gpuscale.live._verify.facts import (
    KEDA_CRDS,
    METRICS_APISERVICE,
    Check,
    Facts,
    PromFacts,
    Ref,
    _labels,
    _read_failed,
    _unread,
    hpa_of,
    keda_deployments,
)
from gpuscale.live._verify.keda import (
    check_deployment_ready,
    check_external_metrics_api,
    check_hpa,
    check_keda_crds,
    check_scaled_object_active,
    check_scaled_object_ready,
)
from gpuscale.live._verify.monitors import (
    check_service_monitor_selected,
    check_service_monitor_targets,
)
from gpuscale.live._verify.prometheus import (
    check_kube_state_metrics,
    check_prometheus,
    check_query,
    ksm_query,
    query_params,
)
from gpuscale.live.load import deployment_selector
from gpuscale.manifests import Manifest, ManifestSet

Over = Literal["cluster", "scaledobject", "servicemonitor", "deployment"]


class Known(Protocol):
    """What a link's reads may consult: the answers read so far (a :class:`Facts`, or the
    reader while it reads)."""

    @property
    def keda_namespace(self) -> str: ...

    def read(self, ref: Ref) -> Mapping[str, Any] | None: ...


@dataclass(frozen=True, slots=True)
class Ask:
    """One Prometheus query a link needs: at ``address`` (a trigger's ``serverAddress`` or
    ``--prometheus``), or at every Prometheus asked (None)."""

    address: str | None
    params: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Scope:
    """What every subject of one run shares."""

    targets: _Targets
    prometheus_url: str | None


@dataclass(frozen=True, slots=True)
class Subject:
    """What a link is about: nothing (the cluster), or one object the manifests name."""

    scope: Scope
    namespace: str = ""
    name: str = ""
    manifest: Manifest | None = None
    """The written manifest (None for a Deployment only a scaleTargetRef names)."""

    @property
    def written(self) -> Manifest:
        assert self.manifest is not None
        return self.manifest


def _nothing(*_: Any) -> Iterator[Any]:
    return iter(())


@dataclass(frozen=True, slots=True)
class Link:
    """One link of the chain: what it is about, what it reads, how it checks."""

    name: str
    over: Over
    check: Callable[[Facts, Subject], Iterable[Check]]
    reads: Callable[[Known, Subject], Iterable[Ref]] = field(default=_nothing)
    asks: Callable[[Subject], Iterable[Ask]] = field(default=_nothing)


def _subjects(over: Over, scope: Scope) -> Iterator[Subject]:
    targets = scope.targets
    if over == "cluster":
        yield Subject(scope)
    elif over == "scaledobject":
        for manifest, ns in targets.scaled_objects:
            yield Subject(scope, ns, manifest.name, manifest)
    elif over == "servicemonitor":
        for manifest, ns in targets.monitors:
            yield Subject(scope, ns, manifest.name, manifest)
    else:
        for ns, name, written in targets.deployments:
            yield Subject(scope, ns, name, written)


def walk(scope: Scope) -> Iterator[tuple[Link, Subject]]:
    """Every link with each of its subjects, in chain order."""
    for over, group in groupby(LINKS, key=lambda link: link.over):
        links = tuple(group)
        for subject in _subjects(over, scope):
            for link in links:
                yield link, subject


# --- KEDA ---------------------------------------------------------------------------------

APISERVICE = Ref.object("APIService", None, METRICS_APISERVICE)
_CRDS = tuple(Ref.object("CustomResourceDefinition", None, name) for name in KEDA_CRDS)


def _crds(facts: Facts, _: Subject) -> Iterator[Check]:
    error = _unread(facts, *_CRDS)
    if error:
        yield _read_failed("KEDA CRDs", "", error)
    else:
        yield check_keda_crds(
            {name: facts.read(ref) for name, ref in zip(KEDA_CRDS, _CRDS, strict=True)}
        )


def _keda_name(known: Known, which: int) -> str:
    return str(keda_deployments(known.read(APISERVICE))[which])


def _keda_link(role: str, which: int) -> Link:
    """KEDA's operator (0) or metrics server (1): its name comes from the APIService."""

    def ref(known: Known) -> Ref:
        return Ref.object("Deployment", known.keda_namespace, _keda_name(known, which))

    def reads(known: Known, _: Subject) -> Iterator[Ref]:
        yield APISERVICE
        yield ref(known)

    def check(facts: Facts, _: Subject) -> Iterator[Check]:
        name = _keda_name(facts, which)
        error = _unread(facts, ref(facts))
        if error:
            yield _read_failed(role, f"deployment/{facts.keda_namespace}/{name}", error)
        else:
            yield check_deployment_ready(role, facts.keda_namespace, name, facts.read(ref(facts)))

    return Link(role, "cluster", check, reads)


def _external_metrics(facts: Facts, _: Subject) -> Iterator[Check]:
    error = _unread(facts, APISERVICE)
    if error:
        yield _read_failed("external metrics API", f"apiservice/{METRICS_APISERVICE}", error)
    else:
        yield check_external_metrics_api(facts.read(APISERVICE))


# --- ScaledObjects ------------------------------------------------------------------------


def _so_ref(subject: Subject) -> Ref:
    return Ref.object("ScaledObject", subject.namespace, subject.name)


def _so_subject(subject: Subject) -> str:
    return f"scaledobject/{subject.namespace}/{subject.name}"


def _scaled_object(facts: Facts, subject: Subject) -> Iterator[Check]:
    about = _so_subject(subject)
    error = _unread(facts, _so_ref(subject))
    if error:
        yield _read_failed("ScaledObject Ready", about, error)
        yield _read_failed("ScaledObject Active", about, error)
        return
    live = facts.read(_so_ref(subject))
    min_replicas = subject.written.spec.get("minReplicaCount")
    yield check_scaled_object_ready(about, live)
    yield check_scaled_object_active(
        about, live, int(min_replicas) if isinstance(min_replicas, int) else 0
    )


def _hpa_name(known: Known, subject: Subject) -> str:
    return hpa_of(subject.written, known.read(_so_ref(subject)))


def _hpa_ref(known: Known, subject: Subject) -> Ref:
    return Ref.object("HorizontalPodAutoscaler", subject.namespace, _hpa_name(known, subject))


def _hpa_reads(known: Known, subject: Subject) -> Iterator[Ref]:
    yield _so_ref(subject)
    yield _hpa_ref(known, subject)


def _hpa(facts: Facts, subject: Subject) -> Iterator[Check]:
    name = _hpa_name(facts, subject)
    error = _unread(facts, _hpa_ref(facts, subject))
    if error:
        yield _read_failed("HPA", f"hpa/{subject.namespace}/{name}", error)
    else:
        yield check_hpa(subject.namespace, name, facts.read(_hpa_ref(facts, subject)))


def _trigger_asks(subject: Subject) -> Iterator[Ask]:
    trigger, _ = prometheus_trigger_of(subject.written)
    if trigger is not None:
        yield Ask(subject.scope.prometheus_url or trigger.server_address, query_params(trigger))


def _trigger(facts: Facts, subject: Subject) -> Iterator[Check]:
    about = _so_subject(subject)
    trigger, why = prometheus_trigger_of(subject.written)
    if trigger is None:
        yield Check("trigger query", about, "skip", why)
        return
    key = subject.scope.prometheus_url or trigger.server_address
    prom = facts.prometheus.get(key)
    yield check_prometheus(about, prom, key)
    if prom is not None and prom.buildinfo.status == 200:
        yield check_query(about, trigger, prom.queries.get(trigger.query))
    else:
        yield Check("trigger query", about, "skip", "Prometheus was not reached")


def _first_prometheus(facts: Facts, scope: Scope) -> PromFacts | None:
    """The Prometheus the first reached trigger names; else any that answered (the
    ``--prometheus`` URL, or the profile's ``prometheus.address``)."""
    for manifest, _ in scope.targets.scaled_objects:
        trigger, _why = prometheus_trigger_of(manifest)
        if trigger is None:
            continue
        prom = facts.prometheus.get(scope.prometheus_url or trigger.server_address)
        if prom is not None and prom.buildinfo.status == 200:
            return prom
    return next((p for p in facts.prometheus.values() if p.buildinfo.status == 200), None)


# --- ServiceMonitors ----------------------------------------------------------------------

_PROMETHEUSES = Ref.list("prometheuses")


def _monitor_refs(subject: Subject) -> tuple[Ref, Ref]:
    return (
        Ref.object("ServiceMonitor", subject.namespace, subject.name),
        Ref.object("Namespace", None, subject.namespace),
    )


def _monitor_reads(_: Known, subject: Subject) -> Iterator[Ref]:
    yield from _monitor_refs(subject)
    yield _PROMETHEUSES


def _monitor(facts: Facts, subject: Subject) -> Iterator[Check]:
    about = f"servicemonitor/{subject.namespace}/{subject.name}"
    monitor_ref, namespace_ref = _monitor_refs(subject)
    live = facts.read(monitor_ref)
    namespace_doc = facts.read(namespace_ref)
    ns_labels = _labels(namespace_doc) if namespace_doc is not None else None
    monitor_error = _unread(facts, monitor_ref)
    error = monitor_error or _unread(facts, _PROMETHEUSES, namespace_ref)
    if error:
        yield _read_failed("ServiceMonitor selected", about, error)
    else:
        prometheuses: Sequence[Mapping[str, Any]] | None = facts.lists.get(_PROMETHEUSES.key)
        yield check_service_monitor_selected(about, live, prometheuses, ns_labels)
    if monitor_error:
        yield _read_failed("ServiceMonitor target", about, monitor_error)
    else:
        first = _first_prometheus(facts, subject.scope)
        yield check_service_monitor_targets(
            about, live, first.targets if first else None, subject.scope.targets.services
        )


# --- Deployments --------------------------------------------------------------------------

NODES = Ref.list("nodes")


def _deployment_ref(subject: Subject) -> Ref:
    return Ref.object("Deployment", subject.namespace, subject.name)


def _deployment_subject(subject: Subject) -> str:
    return f"deployment/{subject.namespace}/{subject.name}"


def _ksm_asks(subject: Subject) -> Iterator[Ask]:
    yield Ask(None, {"query": ksm_query(subject.namespace, subject.name)})


def _read_by_trigger(scope: Scope, namespace: str, name: str) -> str:
    """The trigger query of the (last) ScaledObject scaling this Deployment, or empty."""
    found = ""
    for manifest, ns in scope.targets.scaled_objects:
        trigger, _ = prometheus_trigger_of(manifest)
        target = (manifest.spec.get("scaleTargetRef") or {}).get("name")
        if trigger is not None and target and (ns, str(target)) == (namespace, name):
            found = trigger.query
    return found


def _ksm(facts: Facts, subject: Subject) -> Iterator[Check]:
    query = ksm_query(subject.namespace, subject.name)
    first = _first_prometheus(facts, subject.scope)
    yield check_kube_state_metrics(
        _deployment_subject(subject),
        first.queries.get(query) if first else None,
        query=query,
        needed="kube_deployment_"
        in _read_by_trigger(subject.scope, subject.namespace, subject.name),
    )


def _capacity_reads(_: Known, subject: Subject) -> Iterator[Ref]:
    yield _deployment_ref(subject)
    yield NODES


def _capacity(facts: Facts, subject: Subject) -> Iterator[Check]:
    about = _deployment_subject(subject)
    ref = _deployment_ref(subject)
    live = facts.read(ref)
    error = _unread(facts, ref)
    body = live if live is not None else (subject.manifest.body if subject.manifest else None)
    if body is None and error:
        yield _read_failed("GPU capacity", about, error)
    elif body is None:
        yield Check(
            "GPU capacity",
            about,
            "fail",
            "the Deployment is not in the cluster",
            "apply the manifests: gpuscale deploy",
        )
    elif (error := _unread(facts, NODES)) is not None:
        yield _read_failed("GPU capacity", about, error)
    else:
        yield check_gpu_capacity(about, body, facts.items(NODES), facts.pools, facts.pools_source)


def _pods_ref(subject: Subject, selector: str | None = None) -> Ref:
    query = {"labelSelector": selector} if selector is not None else None
    return Ref.list("pods", subject.namespace, subject.name, query=query)


def _pending_reads(known: Known, subject: Subject) -> Iterator[Ref]:
    yield _deployment_ref(subject)
    live = known.read(_deployment_ref(subject))
    if live is not None:
        yield _pods_ref(subject, deployment_selector(live))
    yield Ref.list("events", subject.namespace)


def _pending(facts: Facts, subject: Subject) -> Iterator[Check]:
    about = _deployment_subject(subject)
    ref = _deployment_ref(subject)
    error = _unread(facts, ref, _pods_ref(subject))
    if error:
        yield _read_failed("Pending pods", about, error)
    elif facts.read(ref) is None:
        yield Check("Pending pods", about, "skip", "the Deployment is not in the cluster")
    else:
        yield check_pending_pods(
            about,
            facts.items(_pods_ref(subject)),
            facts.items(Ref.list("events", subject.namespace)),
        )


LINKS: tuple[Link, ...] = (
    Link("KEDA CRDs", "cluster", _crds, lambda _known, _subject: iter(_CRDS)),
    _keda_link("KEDA operator", 0),
    _keda_link("KEDA metrics server", 1),
    Link("external metrics API", "cluster", _external_metrics, lambda _k, _s: iter([APISERVICE])),
    Link("ScaledObject", "scaledobject", _scaled_object, lambda _k, s: iter([_so_ref(s)])),
    Link("HPA", "scaledobject", _hpa, _hpa_reads),
    Link("trigger query", "scaledobject", _trigger, asks=_trigger_asks),
    Link("ServiceMonitor", "servicemonitor", _monitor, _monitor_reads),
    Link("kube-state-metrics", "deployment", _ksm, asks=_ksm_asks),
    Link("GPU capacity", "deployment", _capacity, _capacity_reads),
    Link("Pending pods", "deployment", _pending, _pending_reads),
)
"""The chain, in the order a signal travels it (:mod:`gpuscale.live.verify`)."""


def verify_checks(
    manifests: ManifestSet,
    facts: Facts,
    *,
    namespace: str | None = None,
    prometheus_url: str | None = None,
) -> list[Check]:
    """Every check for ``manifests``, in chain order, from ``facts``."""
    scope = Scope(verify_targets(manifests, namespace, facts.context_namespace), prometheus_url)
    return [check for link, subject in walk(scope) for check in link.check(facts, subject)]
