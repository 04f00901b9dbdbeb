"""From the user's manifests and profile to a simulation: the adapters. Pure.

``gpuscale simulate``, ``gpuscale demo`` and the lint rule that proves a flap all start
here. :func:`build_inputs` reads what the cluster would read:

- every **Deployment/StatefulSet** (the typed ``Workload`` view) becomes a
  :class:`~gpuscale.sim.specs.SimWorkload`: replicas, summed pod requests (GPUs
  included), nodeSelector, required node affinity, tolerations, the readiness probe,
  ``terminationGracePeriodSeconds``, ``minReadySeconds``, emptyDir/hostPath volumes
  (which keep the cluster autoscaler from draining a node); the profile's
  ``workloads.<name>`` adds image pull and start-up times and request capacity;
- the **Service** whose selector matches the pod template and the **ServiceMonitor**
  that selects that Service (its labels, ``namespaceSelector``, the Prometheus'
  ``release`` label selector unless ``prometheus.selects_all_servicemonitors``, an
  endpoint naming one of its ports) say whether and how
  the pods are scraped: interval, path, ``honorLabels``, ``jobLabel`` and the target's
  labels — or that nothing scrapes them, which is a warning, and a faithful prediction;
- the profile's **node pools** become :class:`~gpuscale.sim.specs.SimPool` s (labels and
  taints as the provider sets them, min/max or a fixed count, price, provisioning time),
  with as many nodes at the start as the initial replicas need; its **autoscaler**,
  **hpa** and **prometheus** sections give the loops' timings, the lookback and the
  PromQL version, and its **timing** section the latencies the loops drift by
  (:func:`timing_options`);
- every **ScaledObject** becomes a :class:`~gpuscale.sim.keda.ScaledObjectSource`: its
  typed spec after KEDA's admission webhook, and the HPA KEDA generates for it.

Whatever cannot be modelled from the given manifests raises ``InputError`` naming
``file:line`` and what to do: a ScaledObject whose target is not among them, a trigger
type other than ``prometheus``, ``scalingModifiers``, a query outside the PromQL engine's
subset, a templated replica count. What is modelled but probably not meant (nothing
scrapes a workload, a plain HorizontalPodAutoscaler that is not simulated, a trigger
pointing at another Prometheus) is returned as :attr:`SimulationInputs.warnings`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

import promql_parser as pp

from gpuscale.controllers.cluster_autoscaler import AutoscalingOptions
from gpuscale.controllers.hpa import HPAControllerOptions, Tolerance
from gpuscale.controllers.kubelet import Readiness, ReadinessProbe
from gpuscale.errors import GpuscaleError, InputError
from gpuscale.manifests import (
    Manifest,
    ManifestSet,
    Service,
    ServiceMonitor,
    Workload,
)
from gpuscale.profile import (
    AutoscalerSpec,
    HpaSpec,
    Profile,
    PrometheusSpec,
    TimingSpec,
    WorkloadSpec,
)
from gpuscale.promql import fold, parse_query, walk
from gpuscale.sim.keda import ScaledObjectSource, thresholds_of
from gpuscale.sim.load_checks import (
    ProfileLocator,
    needs_capacity,
    step_workload,
)
from gpuscale.sim.located import where
from gpuscale.sim.metrics import PrometheusOptions, PromQLBackend
from gpuscale.sim.node_pools import initial_nodes, pool_spec
from gpuscale.sim.provider import PROVIDERS
from gpuscale.sim.scaled_objects import scaled_object
from gpuscale.sim.scalers import Scaler
from gpuscale.sim.scenario import GaugeStep, Scenario
from gpuscale.sim.simulation import Simulation
from gpuscale.sim.specs import (
    ControlPlaneSpec,
    EngineCapacity,
    RequestCapacity,
    ScrapeSpec,
    SimulationSpec,
    SimWorkload,
)
from gpuscale.sim.timing import Latencies
from gpuscale.sim.world import LoadSpec

__all__ = [
    "APPROXIMATIONS",
    "ProfileLocator",
    "SimulationInputs",
    "autoscaling_options",
    "build_inputs",
    "gauges_of",
    "hpa_options",
    "needs_capacity",
    "prometheus_options",
    "scrape_options",
    "selected_metric_names",
    "timing_options",
]

APPROXIMATIONS = (
    "Scheduler: no volumes, ports, inter-pod affinity, topology spread, image locality, "
    "preferred affinity or backoff; pending pods are retried whenever a node turns Ready "
    "or resources are freed.",
    "Cluster autoscaler: no failed provisioning or backoff, no DaemonSets or PDBs, no "
    "resource limits other than max-nodes-total, no balancing of similar node groups; the "
    "node group template of an empty pool lists its GPUs (the upstream DigitalOcean "
    "provider's does not: check scale-from-zero on your account).",
    "Node provisioning takes exactly the pool's provisioning_time (the profile's "
    "assumption), GPUs allocatable when the node is Ready.",
    "Prometheus: targets appear when a pod is Ready and disappear when it is deleted; "
    "target labels are those prometheus-operator sets for a ServiceMonitor endpoint "
    "(job, instance, namespace, service, pod, endpoint, container), so scrape phases "
    "differ from a real server's (the spread is the same).",
    "kube-state-metrics: Deployment status follows the pods at once (the Deployment "
    "controller's own lag is not modelled).",
    "Readiness: a probe succeeds from the first tick after the program serves (the "
    "profile's startup_time after the container starts); probe ticks start when the pod "
    "is bound. Without a probe a pod is Ready when its container starts; requests sent "
    "to it before it serves wait for it (a real one refuses the connection).",
    "Requests (serving.kind queue): fixed service times (no batching slow-down), one "
    "connection per request, FIFO per replica.",
    "Requests (serving.kind vllm): a step-level model of vLLM v0.11's scheduler with "
    "preset step costs (a datasheet roofline unless calibrated); no prefix caching; a "
    "scrape sees the engine as of the end of the step in progress; a deleted replica "
    "aborts what it holds (v0.11 exits on SIGTERM).",
    "Latencies (the profile's timing section) are estimates drawn uniformly within their "
    "spread; the ScaledObject is created at t=0 (the Deployment already running), KEDA's "
    "loop starts its keda_start later and the HPA's first sync is a sync period after "
    "that; an HPA's phase-lock onto its informer's resync (hours) is not modelled.",
)
"""What is modelled approximately, for timeline headers and reports."""


@dataclass(frozen=True)
class SimulationInputs:
    """Everything a run is built from, read from manifests and a profile."""

    spec: SimulationSpec
    """The world: workloads, pools, timings."""
    scaled_objects: tuple[ScaledObjectSource, ...]
    """The ScaledObjects, each KEDA's loop plus its HPA."""
    prometheus: PrometheusOptions = field(default_factory=PrometheusOptions)
    """The Prometheus server's flags (lookback, version, retention: every query still sees
    its window)."""
    namespace: str = "default"
    """The namespace of objects that set none (``kubectl apply -n``)."""
    warnings: tuple[str, ...] = ()
    """Things modelled as written but probably not meant (one line each)."""
    latency_targets: Mapping[str, float] = field(default_factory=dict)
    """Workload key → the profile's latency target (seconds)."""
    scrape_only: frozenset[str] | None = None
    """The metric names the triggers' queries can select; only those series are stored
    during a run (an exact saving: no query can see the others). None: all of them."""

    def backend(self) -> PromQLBackend:
        """A fresh metrics backend with this Prometheus' lookback and version."""
        return self.prometheus.backend()

    def scalers(self) -> dict[str, list[Scaler]]:
        """Fresh KEDA and HPA loops per workload key (stateful: one set per run)."""
        out: dict[str, list[Scaler]] = {}
        for source in self.scaled_objects:
            out.setdefault(f"{source.namespace}/{source.target}", []).extend(source.loops().scalers)
        return out

    def thresholds(self) -> dict[str, float]:
        """``query:<metric>``/``hpa:<metric>`` → the HPA target, for plots."""
        out: dict[str, float] = {}
        for source in self.scaled_objects:
            out.update(thresholds_of(source))
        return out

    def simulation(
        self,
        *,
        load: LoadSpec | None = None,
        seed: int = 0,
        audit: bool = False,
        scalers: Mapping[str, Sequence[Scaler]] | None = None,
    ) -> Simulation:
        """A new run of this system under ``load``; ``scalers`` (workload key → loops)
        stands in for the ScaledObjects' KEDA and HPA loops, e.g. a
        :class:`~gpuscale.sim.scalers.ReplicaSchedule`."""
        return Simulation(
            self.spec,
            metrics=self.backend(),
            seed=seed,
            scalers=self.scalers() if scalers is None else scalers,
            load=load,
            audit=audit,
            scrape_only=self.scrape_only,
        )

    def workload_key(self, name: str) -> str:
        """The ``namespace/name`` of the workload called ``name`` (or already a key)."""
        return self.spec.workload(name).key


def gauges_of(scenario: Scenario | None, workloads: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The gauges a scenario sets, per workload name (its default target when only one)."""
    out: dict[str, list[str]] = {}
    if scenario is None:
        return {}
    for step in scenario.steps:
        if not isinstance(step, GaugeStep):
            continue
        target = step_workload(step, workloads)
        if target is None:
            continue
        names = out.setdefault(target.split("/")[-1], [])
        if step.name not in names:
            names.append(step.name)
    return {k: tuple(v) for k, v in out.items()}


def _selectors(expr: object) -> Iterator[str | None]:
    for node in walk(expr):
        if isinstance(node, pp.VectorSelector):
            yield node.name or None


def selected_metric_names(queries: Sequence[str]) -> frozenset[str] | None:
    """The metric names ``queries`` select by name, or None when one of their selectors
    has no plain name (``{job="x"}``, ``{__name__=~"..."}``) and could select anything."""
    names: set[str] = set()
    for query in queries:
        try:
            found = list(_selectors(parse_query(query)))
        except ValueError:
            return None
        if any(name is None for name in found):
            return None
        names.update(name for name in found if name is not None)
    return frozenset(names)


# --------------------------------------------------------------------------- workloads


def _readiness(workload: Workload) -> Readiness:
    for container in workload.containers:
        probe = container.readiness_probe
        if probe is not None:
            return ReadinessProbe(
                initial_delay_s=float(probe.initial_delay_seconds),
                period_s=float(probe.period_seconds),
                success_threshold=probe.success_threshold,
            )
    return "started"


def _local_storage(manifest: Manifest) -> bool:
    volumes = manifest.get(("spec", "template", "spec", "volumes")) or []
    return any(
        isinstance(v, dict) and ("emptyDir" in v or "hostPath" in v)
        for v in volumes
        if isinstance(volumes, list)
    )


def _capacity(
    settings: WorkloadSpec, workload: Workload
) -> RequestCapacity | EngineCapacity | None:
    serving = settings.serving
    if serving.kind == "vllm":
        config, cost = serving.engine_settings()
        return EngineCapacity(
            config=config,
            cost=cost,
            model_name=serving.served_model_name
            or _served_model_name(workload)
            or serving.model_name
            or workload.name,
            timeout_s=settings.request_timeout,
            latency_target_s=settings.latency_target,
        )
    service_time = settings.service_time
    if service_time is None and settings.requests_per_second is not None:
        service_time = settings.concurrency / settings.requests_per_second
    tokens = settings.prefill_tokens_per_second is not None
    if service_time is None and not tokens:
        return None
    return RequestCapacity(
        concurrency=settings.concurrency,
        service_time_s=service_time,
        prefill_tokens_per_s=settings.prefill_tokens_per_second,
        decode_tokens_per_s=settings.decode_tokens_per_second,
        timeout_s=settings.request_timeout,
        latency_target_s=settings.latency_target,
    )


def _served_model_name(workload: Workload) -> str | None:
    """The name vLLM serves the model under, from the first container's command and args:
    the first ``--served-model-name`` (vLLM labels metrics with the first of several),
    else ``--model``, else ``vllm serve``'s positional model (``vllm/entrypoints/cli/
    serve.py``; ``vllm/config/model.py`` falls back from the served name to the model)."""
    if not workload.containers:
        return None
    container = workload.containers[0]
    words = [word for part in (*container.command, *container.args) for word in part.split()]
    found: dict[str, str] = {}
    for index, word in enumerate(words):
        flag, equals, value = word.partition("=")
        if flag in ("--served-model-name", "--model") and flag not in found:
            if not equals:
                value = words[index + 1] if index + 1 < len(words) else ""
            if value and not value.startswith("-"):
                found[flag] = value
        if word == "serve" and index + 1 < len(words) and "serve" not in found:
            following = words[index + 1]
            if not following.startswith("-"):
                found["serve"] = following
    return found.get("--served-model-name") or found.get("--model") or found.get("serve")


@dataclass(frozen=True)
class _Scrape:
    scraped: bool
    service: str | None = None
    interval_s: float | None = None
    path: str = "/metrics"
    honor_labels: bool = False
    port: int = 8080
    port_name: str = "metrics"
    container: str = "app"
    job: str | None = None
    warning: str | None = None


def _container_port(workload: Workload, target: int | str | None) -> tuple[int, str]:
    """The container and port number a Service port's ``targetPort`` lands on."""
    for container in workload.containers:
        for port in container.ports:
            if target is None or target in (port.container_port, port.name):
                return (port.container_port or 0), container.name
    first = workload.containers[0].name if workload.containers else "app"
    return (target if isinstance(target, int) else 0), first


def _scrape(
    workload: Workload,
    namespace: str,
    manifests: ManifestSet,
    default_namespace: str,
    release: str | None,
) -> _Scrape:
    services = []
    for manifest in manifests.by_kind("Service"):
        if manifest.effective_namespace(default_namespace) != namespace:
            continue
        service = Service.from_manifest(manifest)
        if service.selects(workload.template_labels):
            services.append(service)
    if not services:
        return _Scrape(
            False,
            warning=f"{workload.kind} {workload.name} ({workload.source}): no Service selects "
            "its pods, so Prometheus does not scrape them",
        )
    reasons: list[str] = []
    for manifest in manifests.by_kind("ServiceMonitor"):
        monitor = ServiceMonitor.from_manifest(manifest)
        own = manifest.effective_namespace(default_namespace)
        for service in services:
            if not monitor.selector.matches(service.labels):
                continue
            if not monitor.namespace_selector.covers(namespace, own):
                covered = (
                    ", ".join(monitor.namespace_selector.match_names) or f"its own namespace {own}"
                )
                reasons.append(
                    f"ServiceMonitor {monitor.name} ({monitor.source}) selects Service "
                    f"{service.name} by its labels, but its namespaceSelector covers {covered} "
                    f"and the Service is in {namespace}"
                )
                continue
            if release is not None and monitor.labels.get("release") != release:
                reasons.append(
                    f"ServiceMonitor {monitor.name} ({monitor.source}) lacks the label "
                    f"release: {release} that the Prometheus of release {release!r} selects"
                )
                continue
            for endpoint in monitor.endpoints:
                port = service.port_named(endpoint.port) if endpoint.port else None
                if port is None:
                    continue
                number, container = _container_port(workload, port.target_port or port.port)
                job_label = manifest.get(("spec", "jobLabel"))
                job = (
                    service.labels.get(job_label)
                    if isinstance(job_label, str) and job_label
                    else None
                )
                return _Scrape(
                    True,
                    service=service.name,
                    interval_s=endpoint.interval,
                    path=endpoint.path,
                    honor_labels=endpoint.honor_labels,
                    port=number or 8080,
                    port_name=endpoint.port or "metrics",
                    container=container,
                    job=job,
                )
            reasons.append(
                f"ServiceMonitor {monitor.name} ({monitor.source}) names no port of Service "
                f"{service.name}"
            )
    why = "; ".join(reasons) if reasons else "no ServiceMonitor selects its Service"
    return _Scrape(
        False,
        service=services[0].name,
        warning=f"{workload.kind} {workload.name} in namespace {namespace} is not scraped: "
        f"{why}. Its metrics never reach Prometheus",
    )


def _workload_spec(
    manifest: Manifest,
    manifests: ManifestSet,
    profile: Profile,
    default_namespace: str,
    gauges: tuple[str, ...],
) -> tuple[SimWorkload, str | None]:
    try:
        workload = Workload.from_manifest(manifest)
    except GpuscaleError as error:
        raise InputError(error.message, where=error.where, fix=error.fix) from None
    namespace = manifest.effective_namespace(default_namespace)
    if workload.replicas is None:
        raise InputError(
            f"{manifest.kind} {manifest.name}: spec.replicas is a template placeholder",
            where=where(manifest, ("spec", "replicas")),
            fix="render the manifest first, or write a number",
        )
    if not workload.containers:
        raise InputError(
            f"{manifest.kind} {manifest.name} has no containers",
            where=where(manifest, ("spec", "template", "spec", "containers")),
            fix="add the workload's container",
        )
    settings = profile.workload(workload.name)
    prometheus = profile.prometheus
    # a Prometheus that selects every ServiceMonitor (gpuscale install's) needs no label
    release = None if prometheus.selects_all_servicemonitors else prometheus.release
    scrape = _scrape(workload, namespace, manifests, default_namespace, release)
    grace = workload.termination_grace_period_seconds
    min_ready = manifest.get(("spec", "minReadySeconds"))
    try:
        spec = SimWorkload(
            workload.name,
            namespace=namespace,
            replicas=workload.replicas,
            requests=dict(workload.pod_requests),
            node_selector=dict(workload.node_selector),
            node_affinity=workload.required_node_affinity or None,
            tolerations=workload.tolerations,
            image=workload.containers[0].image or "unknown",
            image_pull_s=settings.image_pull_time,
            startup_s=settings.startup_time,
            readiness=_readiness(workload),
            termination_grace_s=float(30 if grace is None else grace),
            min_ready_s=float(min_ready) if isinstance(min_ready, int) else 0.0,
            capacity=_capacity(settings, workload),
            gauges=gauges,
            container=scrape.container,
            metrics_port=scrape.port,
            metrics_port_name=scrape.port_name,
            service=scrape.service,
            scrape_interval_s=scrape.interval_s,
            scraped=scrape.scraped,
            honor_labels=scrape.honor_labels,
            metrics_path=scrape.path,
            job=scrape.job,
            local_storage=_local_storage(manifest),
        )
    except ValueError as error:
        raise InputError(
            f"{manifest.kind} {manifest.name}: {error}",
            where=str(manifest.source),
            fix="correct the value in the manifest or the profile's workloads section",
        ) from None
    return spec, scrape.warning


def _longest_window_ms(queries: Sequence[str]) -> int:
    """The longest stretch of past samples any of ``queries`` reads: ranges, subquery
    ranges and steps, and offsets (either sign) added along each path of the tree."""

    def reach(node: object, inner: list[int]) -> int:
        own = 0
        for attribute in ("range", "offset", "step"):
            value = getattr(node, attribute, None)
            if isinstance(value, timedelta):
                own += abs(round(value.total_seconds() * 1000))
        return own + max(inner, default=0)

    longest = 0
    for query in queries:
        try:
            longest = max(longest, fold(parse_query(query), reach))
        except ValueError:
            continue
    return longest


# --------------------------------------------------------------------------- entry point


def autoscaling_options(spec: AutoscalerSpec) -> AutoscalingOptions:
    """The profile's ``autoscaler`` section as the cluster autoscaler model's options: the
    one place the profile's names meet the model's (``docs/profile.md``; every documented
    key is checked to reach an option by ``tests/unit/sim/test_inputs.py``)."""
    return AutoscalingOptions(
        scan_interval_s=spec.scan_interval,
        unschedulable_pod_time_buffer_s=spec.scale_up_delay,
        unschedulable_pod_with_gpu_time_buffer_s=spec.scale_up_delay_gpu,
        new_pod_scale_up_delay_s=spec.new_pod_scale_up_delay,
        scale_down_unneeded_time_s=spec.scale_down_unneeded_time,
        scale_down_delay_after_add_s=spec.scale_down_delay_after_add,
        scale_down_delay_after_delete_s=spec.scale_down_delay_after_delete,
        scale_down_delay_after_failure_s=spec.scale_down_delay_after_failure,
        scale_down_utilization_threshold=spec.scale_down_utilization_threshold,
        scale_down_gpu_utilization_threshold=spec.scale_down_gpu_utilization_threshold,
        expander=spec.expander,
        expander_priorities={
            priority: tuple(patterns) for priority, patterns in spec.expander_priorities.items()
        },
        max_nodes_total=spec.max_nodes_total,
    )


def timing_options(spec: TimingSpec) -> Latencies:
    """The profile's ``timing`` section as the simulator's latencies (``gpuscale.sim.timing``)."""
    return Latencies(
        hpa_reconcile_s=spec.hpa_reconcile,
        keda_start_s=spec.keda_start,
        keda_poll_s=spec.keda_poll,
        autoscaler_run_once_s=spec.autoscaler_run_once,
        pod_start_s=spec.pod_start,
        spread=spec.spread,
    )


def hpa_options(spec: HpaSpec) -> HPAControllerOptions:
    """The profile's ``hpa`` section as the HPA controller's flags (one tolerance for both
    directions, as ``--horizontal-pod-autoscaler-tolerance`` sets)."""
    return HPAControllerOptions(
        sync_period_s=spec.sync_period,
        tolerance=Tolerance(spec.tolerance, spec.tolerance),
        downscale_stabilization_s=spec.downscale_stabilization,
    )


def prometheus_options(spec: PrometheusSpec, queries: Sequence[str] = ()) -> PrometheusOptions:
    """The profile's ``prometheus`` section as the Prometheus server's query flags. The
    retention keeps twice what ``queries`` can read (their longest window plus the
    lookback) and an hour more, so dropping older samples changes no answer."""
    lookback_ms = round(spec.lookback_delta * 1000)
    window = _longest_window_ms(queries)
    return PrometheusOptions(
        lookback_ms=lookback_ms,
        version=spec.version,
        retention_ms=2 * (window + lookback_ms) + 3_600_000,
    )


def scrape_options(spec: PrometheusSpec) -> ScrapeSpec:
    """The profile's ``prometheus`` section as the scrape manager's options."""
    return ScrapeSpec(scrape_interval_s=spec.scrape_interval)


def build_inputs(
    manifests: ManifestSet,
    profile: Profile,
    *,
    namespace: str = "default",
    gauges: Mapping[str, Sequence[str]] | None = None,
) -> SimulationInputs:
    """Read the simulation the manifests and profile describe (see the module docstring).

    ``namespace`` is where objects without one land (``kubectl apply -n``); ``gauges``
    names, per workload, the gauges a scenario sets (its pods export them from the
    start, at 0).
    """
    gauges = gauges or {}
    warnings: list[str] = []
    workloads: dict[tuple[str, str, str], SimWorkload] = {}
    for manifest in manifests.by_kind("Deployment", "StatefulSet"):
        spec, warning = _workload_spec(
            manifest, manifests, profile, namespace, tuple(gauges.get(manifest.name, ()))
        )
        key = (manifest.kind, spec.namespace, spec.name)
        if any(k[1:] == key[1:] for k in workloads):
            raise InputError(
                f"two workloads are called {spec.namespace}/{spec.name}",
                where=str(manifest.source),
                fix="give each Deployment and StatefulSet its own name per namespace",
            )
        workloads[key] = spec
        if warning:
            warnings.append(warning)
    if not workloads:
        raise InputError(
            "no Deployment or StatefulSet among the manifests",
            where=", ".join(manifests.files) or "manifests",
            fix="pass the directory or files that hold the workload",
        )
    backend = prometheus_options(profile.prometheus).backend()
    hpa = hpa_options(profile.hpa)
    sources: list[ScaledObjectSource] = []
    for manifest in manifests.by_kind("ScaledObject"):
        source, more = scaled_object(
            manifest,
            manifests=manifests,
            prometheus_address=profile.prometheus.address,
            hpa=hpa,
            default_namespace=namespace,
            workloads=workloads,
            backend=backend,
        )
        sources.append(source)
        warnings += more
    targets = {(s.namespace, s.target) for s in sources}
    for manifest in manifests.by_kind("HorizontalPodAutoscaler"):
        ref = manifest.get(("spec", "scaleTargetRef", "name"))
        ns = manifest.effective_namespace(namespace)
        also = " (a ScaledObject scales it too)" if (ns, ref) in targets else ""
        warnings.append(
            f"HorizontalPodAutoscaler {manifest.name} ({manifest.source}) is not simulated{also}: "
            "gpuscale simulates the HPAs KEDA generates; its target keeps the replicas the "
            "other scalers give it"
        )
    pools = profile.node_pools
    specs = list(workloads.values())
    counts = initial_nodes(pools, specs, PROVIDERS[profile.cluster.provider])
    pool_specs = tuple(pool_spec(pool, n) for pool, n in zip(pools, counts, strict=True))
    if not pool_specs:
        raise InputError(
            "the profile has no node pools", where="gpuscale.yaml", fix="add node_pools"
        )
    sim_spec = SimulationSpec(
        tuple(specs),
        pool_specs,
        autoscaler=autoscaling_options(profile.autoscaler),
        prometheus=scrape_options(profile.prometheus),
        control_plane=ControlPlaneSpec(hpa=hpa),
        provider=profile.cluster.provider,
        timing=timing_options(profile.timing),
    )
    queries = [t.query for s in sources for t in s.hpa.triggers if t is not None]
    return SimulationInputs(
        spec=sim_spec,
        scaled_objects=tuple(sources),
        prometheus=prometheus_options(profile.prometheus, queries),
        namespace=namespace,
        warnings=tuple(warnings),
        latency_targets={
            w.key: w.capacity.latency_target_s
            for w in specs
            if w.capacity is not None and w.capacity.latency_target_s is not None
        },
        scrape_only=selected_metric_names(queries),
    )
