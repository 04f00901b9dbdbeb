"""Kubernetes semantics lint rules need: label selectors, pod templates, GPUs, tolerations.

Each function follows the Kubernetes code it names and answers ``None`` where a
templated or malformed value makes the answer undecidable.

- Label selectors: ``k8s.io/apimachinery/pkg/apis/meta/v1`` ``LabelSelectorAsSelector``
  (``matchLabels`` and ``matchExpressions`` ANDed; ``In``, ``NotIn``, ``Exists``,
  ``DoesNotExist``; ``NotIn`` and ``DoesNotExist`` match objects without the label).
- Tolerations: ``k8s.io/api/core/v1/toleration.go`` ``Toleration.ToleratesTaint`` (an
  empty key with ``Exists`` tolerates every taint; an empty effect matches every effect;
  operator ``Equal``, the default, compares values).
- GPU resources: extended resources such as ``amd.com/gpu`` and ``nvidia.com/gpu``, which
  cannot be overcommitted (``pkg/apis/core/validation/validation.go``
  ``ValidateResourceRequirements``: a limit is required and a request must equal it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpuscale.lint._access import as_list, as_map, as_str, is_templated, iter_list, iter_map
from gpuscale.lint._context import Taint
from gpuscale.lint._findings import KeyPath

__all__ = [
    "POD_TEMPLATE_PATHS",
    "WORKLOAD_KINDS",
    "Container",
    "GpuUse",
    "containers",
    "gpu_uses",
    "is_gpu_resource",
    "pod_spec",
    "pod_template_labels",
    "selector_matches",
    "tolerates",
]

POD_TEMPLATE_PATHS: Mapping[str, KeyPath] = {
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "Pod": ("spec",),
}
"""Where each workload kind keeps its pod spec."""

WORKLOAD_KINDS = frozenset(POD_TEMPLATE_PATHS)


def pod_spec(kind: str, body: Mapping[str, Any]) -> tuple[Mapping[str, Any], KeyPath] | None:
    """The pod spec of a workload and its key path, or ``None`` for other kinds."""
    path = POD_TEMPLATE_PATHS.get(kind)
    if path is None:
        return None
    node: Any = body
    for step in path:
        node = as_map(node)
        node = node.get(step) if node is not None else None
    spec = as_map(node)
    return (spec, path) if spec is not None else None


def pod_template_labels(kind: str, body: Mapping[str, Any]) -> Mapping[str, Any]:
    """The labels the workload's pods carry (``metadata.labels`` for a bare Pod)."""
    path = POD_TEMPLATE_PATHS.get(kind)
    if path is None:
        return {}
    meta_path = (*path[:-1], "metadata", "labels") if kind != "Pod" else ("metadata", "labels")
    node: Any = body
    for step in meta_path:
        node = as_map(node)
        node = node.get(step) if node is not None else None
    return as_map(node) or {}


@dataclass(frozen=True)
class Container:
    """A container (or init container) of a pod spec."""

    body: Mapping[str, Any]
    path: KeyPath
    name: str | None


def containers(spec: Mapping[str, Any], prefix: KeyPath) -> Iterator[Container]:
    """The init containers and containers of a pod spec, with their key paths."""
    for field in ("initContainers", "containers"):
        for index, raw in iter_list(spec.get(field)):
            body = as_map(raw)
            if body is not None:
                yield Container(body, (*prefix, field, index), as_str(body.get("name")))


def is_gpu_resource(name: str) -> bool:
    """Whether ``name`` is a GPU extended resource (``amd.com/gpu``, ``nvidia.com/gpu``...)."""
    return (
        name.endswith("/gpu")
        or name.startswith("nvidia.com/mig-")
        or name.startswith("gpu.intel.com/")
        or name.startswith("nvidia.com/gpu.")
    )


@dataclass(frozen=True)
class GpuUse:
    """A GPU extended resource in one container's requests and/or limits."""

    container: Container
    resource: str
    request: Any
    """The raw request value, or ``None`` when not requested."""
    limit: Any
    """The raw limit value, or ``None`` when not limited."""

    @property
    def count(self) -> int | None:
        """How many GPUs the container gets (the limit, else the request), if decidable."""
        raw = self.limit if self.limit is not None else self.request
        return quantity_int(raw)


def quantity_int(raw: Any) -> int | None:
    """A whole-number quantity (``1``, ``"2"``); ``None`` for anything else."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and raw.isdigit():
        return int(raw)
    return None


def gpu_uses(spec: Mapping[str, Any], prefix: KeyPath) -> list[GpuUse]:
    """Every GPU resource any container of the pod spec requests or limits."""
    uses: list[GpuUse] = []
    for container in containers(spec, prefix):
        resources = as_map(container.body.get("resources")) or {}
        requests = as_map(resources.get("requests")) or {}
        limits = as_map(resources.get("limits")) or {}
        for name in dict.fromkeys([*requests, *limits]):
            if isinstance(name, str) and is_gpu_resource(name):
                uses.append(GpuUse(container, name, requests.get(name), limits.get(name)))
    return uses


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool | None:
    """Whether a ``LabelSelector`` selects an object with ``labels``; ``None``: undecidable.

    An empty selector selects everything (as a ServiceMonitor's ``selector: {}`` does).
    """
    undecided = False
    for key, value in iter_map(selector.get("matchLabels")):
        if not isinstance(value, str | int | float) or is_templated(str(value)):
            undecided = True
            continue
        actual = labels.get(key)
        if actual is None or is_templated(str(actual)):
            if actual is not None:
                undecided = True
                continue
            return False
        if str(actual) != str(value):
            return False
    for _, raw in iter_list(selector.get("matchExpressions")):
        expression = as_map(raw)
        if expression is None:
            undecided = True
            continue
        result = _expression_matches(expression, labels)
        if result is None:
            undecided = True
        elif not result:
            return False
    return None if undecided else True


def _expression_matches(expression: Mapping[str, Any], labels: Mapping[str, Any]) -> bool | None:
    key = as_str(expression.get("key"))
    operator = expression.get("operator")
    values = as_list(expression.get("values")) or []
    if key is None or any(is_templated(str(v)) for v in values):
        return None
    present = key in labels
    actual = str(labels[key]) if present else None
    if operator == "In":
        return present and actual in {str(v) for v in values}
    if operator == "NotIn":
        return not present or actual not in {str(v) for v in values}
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    return None


def tolerates(toleration: Mapping[str, Any], taint: Taint) -> bool:
    """Whether ``toleration`` tolerates ``taint`` (``Toleration.ToleratesTaint``)."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.effect:
        return False
    key = toleration.get("key") or ""
    if key and key != taint.key:
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return str(toleration.get("value") or "") == taint.value
    return False
