"""What the API server and KEDA refuse in code, beyond what the schemas say.

The OpenAPI schemas (what ``kubeconform`` checks, and :mod:`gpuscale.manifests._validate`
before this module) give types and required keys; the API server then runs each kind's
validation function, and KEDA's admission webhook and scaler builders refuse more. An
object that passes the schema but fails here is still refused by ``kubectl apply`` (or,
for a ScaledObject, never scales): this module is where gpuscale refuses it first, so that
``render``, ``lint``, ``simulate`` and ``deploy`` (which all call
:func:`gpuscale.manifests.validate`) agree.

It runs only on an object whose schema check found nothing: the API server decodes an
object before it validates it, and a wrong type never reaches these functions. Values
holding a template placeholder are not judged. Each refusal names the key it is about,
so the caller puts it on that key's line.

Ported from kubernetes/kubernetes (v1.33/master, read through the omerap12/kubernetes
fork as ``docs/models/hpa.md`` says), in our own words:

- ``pkg/apis/core/validation/validation.go``: ``ValidatePodSpec`` (at least one
  container), ``validateContainers``/``validateInitContainers`` (names DNS-1123 labels,
  unique across init and app containers), ``validateContainerPorts`` (``containerPort``
  1-65535, ``hostPort`` 0 or 1-65535, port names IANA service names, unique in the
  container), ``ValidateResourceRequirements`` (quantities not negative, requests at most
  limits, extended resources such as ``amd.com/gpu`` whole numbers with requests equal to
  limits), ``validateProbe``/``validateHandler`` (exactly one handler, timings not
  negative, ``successThreshold`` 1 for liveness and startup probes), ``validatePortNumOrName``
  (probe ports), ``ValidateService`` (ports required unless headless or ExternalName, port
  and targetPort 1-65535, names DNS-1123 labels, required when there are several and
  unique, no two ports with the same port and protocol);
- ``pkg/apis/apps/validation/validation.go``: ``ValidateDeploymentSpec``,
  ``ValidateStatefulSetSpec``, ``ValidateDaemonSetSpec``, ``ValidateReplicaSetSpec``
  (selector not empty and matching the template's labels, replicas not negative,
  ``minReadySeconds``/``revisionHistoryLimit`` not negative, ``progressDeadlineSeconds``
  above ``minReadySeconds``), ``ValidateDeploymentStrategy``/``ValidateRollingUpdateDeployment``
  (no ``rollingUpdate`` with ``Recreate``; ``maxSurge`` and ``maxUnavailable`` not both 0,
  percentages at most 100 % for ``maxUnavailable``), ``ValidatePodTemplateSpecForReplicaSet``
  (``restartPolicy: Always`` only);
- ``pkg/apis/autoscaling/validation/validation.go``: ``ValidateHorizontalPodAutoscalerSpec``
  (``minReplicas`` >= 1, ``maxReplicas`` >= ``minReplicas``), ``validateMetricTarget``
  (values and averages positive), ``validateBehavior``/``validateScalingRules``/
  ``validateScalingPolicy`` (windows 0-3600 s, policy values above 0, periods 1-1800 s,
  ``selectPolicy``): the behavior checks are the HPA model's own
  (:meth:`gpuscale.controllers.hpa.Behavior.from_k8s`), not a second copy;
- kedacore/keda ``apis/keda/v1alpha1/scaledobject_webhook.go`` and
  ``scaledobject_types.go`` (replica bounds, ``idleReplicaCount`` below the minimum,
  fallback, trigger names, scalingModifiers, names), ``pkg/scalers/prometheus_scaler.go``
  (``parsePrometheusMetadata``: ``threshold`` must parse...) and the HPA KEDA generates
  from the ScaledObject (``controllers/keda/hpa.go``), which the API server then checks as
  above: a ``threshold`` of 0 or less is an ``averageValue`` the API server refuses, and
  the behavior is copied verbatim. All through the KEDA model
  (:mod:`gpuscale.controllers.keda`), which ``simulate`` runs too.

The KEDA and HPA models live in :mod:`gpuscale.controllers` (which may not import
manifests); they are imported here when a ScaledObject or an HPA is checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Literal, NamedTuple

from gpuscale.errors import GpuscaleError
from gpuscale.kube import parse_quantity
from gpuscale.manifests._model import KeyPath, Manifest
from gpuscale.manifests._views import is_templated
from gpuscale.manifests.names import name_problem

__all__ = ["POD_SPEC_PATHS", "TRIGGER_AUTH_STAND_INS", "Refusal", "refusals"]

Check = Literal["apiserver", "keda"]


class Refusal(NamedTuple):
    """One thing the API server (``apiserver``) or KEDA (``keda``) refuses, at ``path``."""

    path: KeyPath
    message: str
    fix: str
    expected: str
    check: Check = "apiserver"


POD_SPEC_PATHS: Mapping[str, KeyPath] = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
"""Where each workload kind keeps its pod spec."""

_SELECTOR_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet")
_ALWAYS_KINDS = _SELECTOR_KINDS
_PORT_MAX = 65535
_IANA_NAME = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?")
_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
_PROBE_TIMINGS = (
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
)
_NATIVE_PREFIXES = ("kubernetes.io/", "requests.")
_PERCENT = re.compile(r"(\d+)%")


def refusals(manifest: Manifest) -> Iterator[Refusal]:
    """Every refusal for ``manifest`` (whose schema check passed), placeholders aside."""
    for refusal in _all(manifest):
        value = manifest.get(refusal.path)
        if is_templated(value) or any(is_templated(step) for step in refusal.path):
            continue
        yield refusal


def _all(manifest: Manifest) -> Iterator[Refusal]:
    kind = manifest.kind
    group = manifest.api_version.rpartition("/")[0]
    if group in ("", "apps", "batch") and kind in POD_SPEC_PATHS:
        yield from _pod_spec(manifest, POD_SPEC_PATHS[kind])
    if group == "apps" and kind in _SELECTOR_KINDS:
        yield from _workload(manifest)
    if group == "" and kind == "Service":
        yield from _service(manifest)
    if group == "autoscaling" and kind == "HorizontalPodAutoscaler":
        yield from _hpa(manifest)
    if group == "keda.sh" and kind == "ScaledObject":
        yield from _scaled_object(manifest)


# --- small readers ----------------------------------------------------------------------


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _port_range(
    path: KeyPath, value: object, what: str, *, zero: bool = False
) -> Iterator[Refusal]:
    """IsValidPortNum (1-65535; ``zero`` also admits 0, as for ``hostPort``)."""
    number = _int(value)
    if number is None:
        return
    low = 0 if zero else 1
    if not low <= number <= _PORT_MAX:
        yield Refusal(
            path,
            f"{what} {number} is out of range: must be between {low} and {_PORT_MAX}, inclusive",
            f"use a port between 1 and {_PORT_MAX}" + (" (or 0 for none)" if zero else ""),
            f"a port number {low}-{_PORT_MAX}",
        )


def _iana_problem(name: str) -> str | None:
    """IsValidPortName: an IANA service name (at most 15 lower-case letters, digits and
    '-', at least one letter, no '--', not starting or ending with '-')."""
    if len(name) > 15:
        return "must be no more than 15 characters"
    if not _IANA_NAME.fullmatch(name):
        return (
            "must contain only lower-case letters, digits and '-', and start and end "
            "with a letter or digit"
        )
    if "--" in name:
        return "must not contain consecutive hyphens"
    if not any(c.isalpha() for c in name):
        return "must contain at least one letter"
    return None


def _port_name(path: KeyPath, name: object, what: str) -> Iterator[Refusal]:
    if not isinstance(name, str):
        return
    problem = _iana_problem(name)
    if problem:
        yield Refusal(
            path,
            f"{what} {name!r} is not a valid port name: it {problem} (an IANA service name)",
            "use a short name such as http or metrics",
            "an IANA service name",
        )


def _port_or_name(path: KeyPath, value: object, what: str) -> Iterator[Refusal]:
    """validatePortNumOrName: a number 1-65535 or an IANA service name."""
    if isinstance(value, str):
        if value.isdigit():
            return
        yield from _port_name(path, value, what)
    else:
        yield from _port_range(path, value, what)


def _not_negative(path: KeyPath, value: object) -> Iterator[Refusal]:
    """ValidateNonnegativeField."""
    number = _int(value)
    if number is not None and number < 0:
        yield Refusal(
            path,
            f"{path[-1]} must be greater than or equal to 0, got {number}",
            f"set {path[-1]} to 0 or more",
            "an integer >= 0",
        )


# --- pod spec ---------------------------------------------------------------------------


def _pod_spec(manifest: Manifest, base: KeyPath) -> Iterator[Refusal]:
    spec = manifest.get(base)
    if not isinstance(spec, dict):
        return
    containers = spec.get("containers")
    if isinstance(containers, list) and not containers:
        yield Refusal(
            (*base, "containers"),
            "must have at least one container",
            "add a container with a name and an image",
            "at least one container",
        )
    seen: dict[str, str] = {}
    for group in ("initContainers", "containers"):
        for index, container in enumerate(_list(spec.get(group))):
            if not isinstance(container, dict):
                continue
            path = (*base, group, index)
            name = container.get("name")
            if isinstance(name, str) and not is_templated(name):
                problem = name_problem(name, "dns1123-label")
                if problem:
                    yield Refusal(
                        (*path, "name"),
                        f"container name {name!r} is not valid: it {problem}",
                        "rename the container, e.g. app",
                        "a DNS-1123 label",
                    )
                elif name in seen:
                    yield Refusal(
                        (*path, "name"),
                        f"duplicate container name {name!r} (also in {seen[name]}): container "
                        "names must be unique in the pod",
                        "give each container (init containers included) its own name",
                        "a unique container name",
                    )
                else:
                    seen[name] = group
            yield from _container_ports(path, container)
            yield from _resources(path, container)
            for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
                if isinstance(container.get(probe), dict):
                    yield from _probe((*path, probe), container[probe], probe)
    if manifest.kind in _ALWAYS_KINDS and manifest.api_version.startswith("apps/"):
        policy = spec.get("restartPolicy")
        if isinstance(policy, str) and policy != "Always":
            yield Refusal(
                (*base, "restartPolicy"),
                f"restartPolicy {policy!r} is not supported for a {manifest.kind}'s pods: "
                "supported values: Always",
                "remove restartPolicy (Always is the default)",
                "Always",
            )


def _container_ports(path: KeyPath, container: Mapping[str, Any]) -> Iterator[Refusal]:
    names: set[str] = set()
    for index, port in enumerate(_list(container.get("ports"))):
        if not isinstance(port, dict):
            continue
        at = (*path, "ports", index)
        yield from _port_range((*at, "containerPort"), port.get("containerPort"), "containerPort")
        if "hostPort" in port:
            yield from _port_range((*at, "hostPort"), port.get("hostPort"), "hostPort", zero=True)
        name = port.get("name")
        if isinstance(name, str) and name:
            before = len(names)
            yield from _port_name((*at, "name"), name, "port name")
            names.add(name)
            if len(names) == before:
                yield Refusal(
                    (*at, "name"),
                    f"duplicate port name {name!r} in the container",
                    "give each port of the container its own name",
                    "a unique port name",
                )


def _quantity(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    try:
        return parse_quantity(value)
    except (ValueError, TypeError):
        return None


def _extended(name: str) -> bool:
    """IsExtendedResourceName: a qualified name with a domain outside kubernetes.io."""
    return "/" in name and not name.startswith(_NATIVE_PREFIXES)


def _resources(path: KeyPath, container: Mapping[str, Any]) -> Iterator[Refusal]:
    resources = _map(container.get("resources"))
    requests = _map(resources.get("requests"))
    limits = _map(resources.get("limits"))
    for section, values in (("requests", requests), ("limits", limits)):
        for name, raw in values.items():
            amount = _quantity(raw)
            at = (*path, "resources", section, name)
            if amount is None:
                continue
            if amount < 0:
                yield Refusal(
                    at,
                    f"{name} {section} must be greater than or equal to 0, got {raw!r}",
                    "use a quantity of 0 or more",
                    "a quantity >= 0",
                )
            elif _extended(name) and amount != int(amount):
                yield Refusal(
                    at,
                    f"{name} {section} must be a whole number, got {raw!r} (extended "
                    "resources such as GPUs are not divisible)",
                    f"use {max(1, round(amount))}",
                    "a whole number",
                )
    for name, raw in requests.items():
        request = _quantity(raw)
        at = (*path, "resources", "requests", name)
        if request is None:
            continue
        limit = _quantity(limits.get(name)) if name in limits else None
        if _extended(name):
            if name not in limits:
                yield Refusal(
                    at,
                    f"a request for {name} needs a limit: {name} cannot be overcommitted",
                    f"set resources.limits.{name} to the same value",
                    "a limit equal to the request",
                )
            elif limit is not None and limit != request:
                yield Refusal(
                    at,
                    f"{name} request {raw!r} must be equal to its limit {limits[name]!r}",
                    "make the request and the limit the same",
                    "a request equal to the limit",
                )
        elif limit is not None and request > limit:
            yield Refusal(
                at,
                f"{name} request {raw!r} must be less than or equal to its limit {limits[name]!r}",
                "lower the request or raise the limit",
                "a request at most the limit",
            )


def _probe(path: KeyPath, probe: Mapping[str, Any], which: str) -> Iterator[Refusal]:
    handlers = [h for h in _HANDLERS if probe.get(h) is not None]
    if not handlers:
        yield Refusal(
            path,
            f"{which} must specify a handler type",
            "add one of httpGet, tcpSocket, exec or grpc",
            "one handler",
        )
    elif len(handlers) > 1:
        yield Refusal(
            (*path, handlers[1]),
            f"{which} may not specify more than 1 handler type (has {', '.join(handlers)})",
            f"keep one of {', '.join(handlers)}",
            "one handler",
        )
    for key in _PROBE_TIMINGS:
        yield from _not_negative((*path, key), probe.get(key))
    success = _int(probe.get("successThreshold"))
    if which != "readinessProbe" and success is not None and success != 1:
        yield Refusal(
            (*path, "successThreshold"),
            f"{which}.successThreshold must be 1, got {success}",
            "remove successThreshold (only readiness probes may need several successes)",
            "1",
        )
    for handler in ("httpGet", "tcpSocket"):
        action = _map(probe.get(handler))
        if "port" in action:
            yield from _port_or_name((*path, handler, "port"), action["port"], f"{which} port")


# --- workloads --------------------------------------------------------------------------


def _selector_labels(selector: Mapping[str, Any]) -> bool:
    return bool(_map(selector.get("matchLabels"))) or bool(_list(selector.get("matchExpressions")))


def _workload(manifest: Manifest) -> Iterator[Refusal]:
    from gpuscale.errors import ManifestError  # noqa: PLC0415 - a leaf import
    from gpuscale.kube import selector_matches  # noqa: PLC0415

    spec = manifest.spec
    kind = manifest.kind
    selector = spec.get("selector")
    if isinstance(selector, dict):
        if not _selector_labels(selector):
            yield Refusal(
                ("spec", "selector"),
                f"empty selector is invalid for a {kind}",
                "select the pods by their template labels, e.g. matchLabels: {app: NAME}",
                "a non-empty selector",
            )
        else:
            labels = _map(_map(_map(spec.get("template")).get("metadata")).get("labels"))
            text_labels = {str(k): str(v) for k, v in labels.items()}
            try:
                matches = selector_matches(selector, text_labels)
            except ManifestError:
                matches = True
            placeholders = [*text_labels.values(), *_map(selector.get("matchLabels")).values()]
            if not matches and not any(is_templated(v) for v in placeholders):
                shown = ", ".join(f"{k}={v}" for k, v in sorted(text_labels.items())) or "none"
                yield Refusal(
                    ("spec", "selector"),
                    f"selector does not match template labels ({shown}): the {kind} would "
                    "not own the pods it creates",
                    "make spec.template.metadata.labels carry every label of the selector",
                    "a selector matching the template labels",
                )
    for key in ("replicas", "minReadySeconds", "revisionHistoryLimit"):
        yield from _not_negative(("spec", key), spec.get(key))
    if kind == "Deployment":
        yield from _deployment(spec)


def _deployment(spec: Mapping[str, Any]) -> Iterator[Refusal]:
    deadline = _int(spec.get("progressDeadlineSeconds"))
    ready = _int(spec.get("minReadySeconds")) or 0
    if deadline is not None and deadline <= ready:
        yield Refusal(
            ("spec", "progressDeadlineSeconds"),
            f"progressDeadlineSeconds {deadline} must be greater than minReadySeconds {ready}",
            "raise progressDeadlineSeconds (600 by default)",
            "more than minReadySeconds",
        )
    elif deadline is None and ready >= 600:
        yield Refusal(
            ("spec", "minReadySeconds"),
            f"minReadySeconds {ready} must be less than progressDeadlineSeconds (600 by default)",
            "set progressDeadlineSeconds above minReadySeconds",
            "less than progressDeadlineSeconds",
        )
    strategy = _map(spec.get("strategy"))
    kind = strategy.get("type", "RollingUpdate")
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate" and rolling is not None:
        yield Refusal(
            ("spec", "strategy", "rollingUpdate"),
            "rollingUpdate may not be specified when strategy type is 'Recreate'",
            "remove rollingUpdate, or use type: RollingUpdate",
            "no rollingUpdate",
        )
    if kind != "RollingUpdate" or not isinstance(rolling, dict):
        return
    amounts = {}
    for key in ("maxSurge", "maxUnavailable"):
        raw = rolling.get(key)
        path = ("spec", "strategy", "rollingUpdate", key)
        if isinstance(raw, str):
            match = _PERCENT.fullmatch(raw)
            if match is None:
                yield Refusal(
                    path,
                    f"{key} {raw!r} must be an integer or a percentage such as 25%",
                    "write a number of pods or a percentage",
                    "an integer or a percentage",
                )
                continue
            amounts[key] = int(match.group(1))
            if key == "maxUnavailable" and amounts[key] > 100:
                yield Refusal(
                    path,
                    f"maxUnavailable {raw!r} must not be greater than 100%",
                    "use at most 100%",
                    "at most 100%",
                )
        elif _int(raw) is not None:
            amounts[key] = raw  # type: ignore[assignment]
            yield from _not_negative(path, raw)
    if amounts.get("maxSurge") == 0 and amounts.get("maxUnavailable") == 0:
        yield Refusal(
            ("spec", "strategy", "rollingUpdate", "maxUnavailable"),
            "maxUnavailable may not be 0 when maxSurge is 0: the rollout could never start",
            "allow one surge pod (maxSurge: 1) or one unavailable pod",
            "not both 0",
        )


# --- Service ----------------------------------------------------------------------------


def _service(manifest: Manifest) -> Iterator[Refusal]:
    spec = manifest.spec
    ports = spec.get("ports")
    headless = spec.get("clusterIP") == "None"
    if not _list(ports) and not headless and spec.get("type") != "ExternalName":
        yield Refusal(
            ("spec", "ports"),
            "ports: a Service needs at least one port (unless headless or ExternalName)",
            "add a port, e.g. - name: http, port: 80, targetPort: http",
            "at least one port",
        )
    entries = [(i, p) for i, p in enumerate(_list(ports)) if isinstance(p, dict)]
    names: set[str] = set()
    pairs: dict[tuple[int, str], int] = {}
    for index, port in entries:
        at = ("spec", "ports", index)
        name = port.get("name")
        if len(entries) > 1 and not name:
            yield Refusal(
                at,
                "ports: a name is required when a Service has more than one port",
                "name each port, e.g. name: http",
                "a port name",
            )
        if isinstance(name, str) and name:
            problem = name_problem(name, "dns1123-label")
            if problem:
                yield Refusal(
                    (*at, "name"),
                    f"port name {name!r} is not valid: it {problem}",
                    "use a name such as http or metrics",
                    "a DNS-1123 label",
                )
            elif name in names:
                yield Refusal(
                    (*at, "name"),
                    f"duplicate port name {name!r}",
                    "give each port its own name",
                    "a unique port name",
                )
            names.add(name)
        yield from _port_range((*at, "port"), port.get("port"), "port")
        if "targetPort" in port:
            yield from _port_or_name((*at, "targetPort"), port.get("targetPort"), "targetPort")
        if "nodePort" in port:
            yield from _port_range((*at, "nodePort"), port.get("nodePort"), "nodePort", zero=True)
        number = _int(port.get("port"))
        protocol = port.get("protocol") or "TCP"
        if number is not None and isinstance(protocol, str):
            first = pairs.setdefault((number, protocol), index)
            if first != index:
                yield Refusal(
                    (*at, "port"),
                    f"duplicate port {number}/{protocol} (also ports[{first}])",
                    "remove one of the two, or give it another port",
                    "a unique port and protocol",
                )


# --- HorizontalPodAutoscaler ------------------------------------------------------------


def _hpa(manifest: Manifest) -> Iterator[Refusal]:
    spec = manifest.spec
    minimum = _int(spec.get("minReplicas"))
    maximum = _int(spec.get("maxReplicas"))
    if minimum is not None and minimum < 1:
        yield Refusal(
            ("spec", "minReplicas"),
            f"minReplicas must be greater than or equal to 1, got {minimum}",
            "use 1 or more (a ScaledObject can scale to 0)",
            "an integer >= 1",
        )
    if maximum is not None and maximum < 1:
        yield Refusal(
            ("spec", "maxReplicas"),
            f"maxReplicas must be greater than or equal to 1, got {maximum}",
            "use 1 or more",
            "an integer >= 1",
        )
    elif maximum is not None and minimum is not None and maximum < minimum:
        yield Refusal(
            ("spec", "maxReplicas"),
            f"maxReplicas {maximum} must be greater than or equal to minReplicas {minimum}",
            "raise maxReplicas or lower minReplicas",
            "at least minReplicas",
        )
    for index, metric in enumerate(_list(spec.get("metrics"))):
        kind = _map(metric).get("type")
        source = _map(_map(metric).get(_SOURCE_KEYS.get(str(kind), "")))
        yield from _metric_target(
            ("spec", "metrics", index, _SOURCE_KEYS.get(str(kind), "")), source
        )
    yield from _behavior(manifest, ("spec", "behavior"), "apiserver")


_SOURCE_KEYS = {
    "External": "external",
    "Object": "object",
    "Pods": "pods",
    "Resource": "resource",
    "ContainerResource": "containerResource",
}


def _metric_target(path: KeyPath, source: Mapping[str, Any]) -> Iterator[Refusal]:
    """validateMetricTarget: a value or average value must be positive, a utilization too."""
    target = _map(source.get("target"))
    for key in ("value", "averageValue"):
        if key in target:
            amount = _quantity(target[key])
            if amount is not None and amount <= 0:
                yield Refusal(
                    (*path, "target", key),
                    f"target {key} must be positive, got {target[key]!r}",
                    f"set {key} above 0",
                    "a positive quantity",
                )
    utilization = _int(target.get("averageUtilization"))
    if utilization is not None and utilization <= 0:
        yield Refusal(
            (*path, "target", "averageUtilization"),
            f"averageUtilization must be greater than 0, got {utilization}",
            "use a percentage such as 60",
            "an integer > 0",
        )


def _behavior(manifest: Manifest, path: KeyPath, check: Check) -> Iterator[Refusal]:
    """validateBehavior, by the HPA model's own reader of a behavior block."""
    from gpuscale.controllers.hpa import Behavior  # noqa: PLC0415 - see module doc

    block = manifest.get(path)
    if block is None:
        return
    try:
        Behavior.from_k8s(block, key_path=path)
    except GpuscaleError as error:
        prefix = (
            "the HPA KEDA generates copies this behavior, and the API server refuses it: "
            if check == "keda"
            else ""
        )
        yield Refusal(
            error.key_path or path,
            prefix + error.message,
            error.fix or "correct the behavior block",
            "a valid autoscaling/v2 behavior",
            check,
        )


# --- ScaledObject -----------------------------------------------------------------------

TRIGGER_AUTH_STAND_INS: Mapping[str, str] = dict.fromkeys(
    (
        "bearerToken",
        "username",
        "cert",
        "key",
        "oauthTokenURI",
        "clientID",
        "customAuthHeader",
        "customAuthValue",
        "apiKey",
    ),
    "<from the TriggerAuthentication>",
)
"""A value for each parameter an auth mode may require (``Config.Validate`` in KEDA's
``pkg/scalers/authentication/authentication_types.go``), for a trigger whose parameters a
TriggerAuthentication supplies: its secrets are not read, so they are taken as given
(lint's view of a trigger reads them from here too)."""


def _keda(error: GpuscaleError, default: KeyPath, fix: str = "") -> Iterator[Refusal]:
    problems = getattr(error, "problems", ()) or ((error.key_path or default, error.message),)
    for path, message in problems:
        yield Refusal(
            path,
            message,
            error.fix or fix or "see gpuscale lint --explain scaledobject-invalid",
            "what KEDA accepts",
            "keda",
        )


def _scaled_object(manifest: Manifest) -> Iterator[Refusal]:
    from gpuscale.controllers.keda import (  # noqa: PLC0415 - see module doc
        metric_quantity,
        metric_target_type,
        parse_prometheus_trigger,
        validate_scaled_object,
    )

    spec = manifest.spec
    name = manifest.name if manifest.name and not is_templated(manifest.name) else None
    try:
        validate_scaled_object(spec, name=name)
    except GpuscaleError as error:
        yield from _keda(error, ("spec",))
        return
    for index, raw in enumerate(_list(spec.get("triggers"))):
        trigger = _map(raw)
        at = ("spec", "triggers", index)
        kind = trigger.get("type")
        raw_type = trigger.get("metricType")
        if kind not in ("cpu", "memory") and isinstance(raw_type, str) and raw_type:
            try:
                chosen = metric_target_type(raw_type)
            except ValueError as error:
                message = str(error)
            else:
                message = (
                    ""
                    if chosen in ("AverageValue", "Value")
                    else f'the generated HPA\'s target type "{raw_type}" must be either '
                    "Utilization, Value, or AverageValue (the API server refuses the HPA)"
                )
            if message:
                yield Refusal(
                    (*at, "metricType"),
                    f"metricType {raw_type!r}: {message}",
                    "use AverageValue (the default) or Value",
                    "AverageValue or Value",
                    "keda",
                )
        if kind != "prometheus":
            continue
        metadata = _map(trigger.get("metadata"))
        if any(is_templated(v) for v in metadata.values()):
            continue
        auth = TRIGGER_AUTH_STAND_INS if trigger.get("authenticationRef") is not None else None
        try:
            parsed = parse_prometheus_trigger(
                {str(k): str(v) for k, v in metadata.items()},
                auth,
                trigger_index=index,
                key_path=("spec", "triggers", index, "metadata"),
            )
        except GpuscaleError as error:
            yield from _keda(error, ("spec", "triggers", index, "metadata"))
            continue
        if metric_quantity(parsed.threshold) <= 0:
            yield Refusal(
                (*at, "metadata", "threshold"),
                f"threshold {metadata.get('threshold')!r} gives the HPA KEDA generates a "
                "target of 0, which the API server refuses (target must be positive): the "
                "HPA is never created and nothing scales",
                "set a threshold above 0 (at least 0.001): the value per replica to scale at",
                "a threshold above 0",
                "keda",
            )
    yield from _behavior(
        manifest, ("spec", "advanced", "horizontalPodAutoscalerConfig", "behavior"), "keda"
    )
