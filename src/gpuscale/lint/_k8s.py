"""The typed views of :mod:`gpuscale.manifests`, as lint rules use them.

The views decide the Kubernetes semantics (label selectors and their operators, API
defaults, GPU requests per pod, toleration matching); this module adds only what a
linter needs around them:

- each view is built once per run, and a manifest the view refuses (a value of the wrong
  type, which :func:`gpuscale.manifests.validate` reports) gives ``None``: rules skip it
  instead of crashing;
- :func:`selects` answers ``None`` (undecidable) instead of a guess when a placeholder
  (:func:`gpuscale.manifests.is_templated`) stands in a selector or in the labels it is
  matched against;
- key paths into the pod template, for findings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from gpuscale.errors import ManifestError
from gpuscale.kube import LabelSelector
from gpuscale.lint._access import as_map, iter_list, iter_map
from gpuscale.lint._context import LintContext
from gpuscale.manifests import (
    WORKLOAD_KINDS,
    Container,
    KeyPath,
    Manifest,
    Service,
    ServiceMonitor,
    Workload,
    is_templated,
)

__all__ = [
    "POD_SPEC",
    "container_path",
    "gpu_resources",
    "gpu_undecidable",
    "selects",
    "service_view",
    "servicemonitor_view",
    "workload_view",
    "workloads",
]

POD_SPEC: KeyPath = ("spec", "template", "spec")
"""Where a Deployment or StatefulSet keeps its pod spec."""

_V = TypeVar("_V")


def _view(ctx: LintContext, obj: Manifest, build: Callable[[Manifest], _V]) -> _V | None:
    def compute() -> _V | None:
        try:
            return build(obj)
        except ManifestError:
            return None

    return ctx.cached(build.__qualname__, id(obj), compute)


def workload_view(ctx: LintContext, obj: Manifest) -> Workload | None:
    """The Deployment/StatefulSet view of ``obj``; ``None`` for other kinds or bad values."""
    if obj.kind not in WORKLOAD_KINDS:
        return None
    return _view(ctx, obj, Workload.from_manifest)


def workloads(ctx: LintContext) -> list[Workload]:
    """Every Deployment and StatefulSet of the set that its view reads."""

    def build() -> list[Workload]:
        found = (workload_view(ctx, obj) for obj in ctx.of_kind(*WORKLOAD_KINDS))
        return [work for work in found if work is not None]

    return ctx.cached("index", "workloads", build)


def service_view(ctx: LintContext, obj: Manifest) -> Service | None:
    """The Service view of ``obj``; ``None`` when it refuses a value."""
    return _view(ctx, obj, Service.from_manifest)


def servicemonitor_view(ctx: LintContext, obj: Manifest) -> ServiceMonitor | None:
    """The ServiceMonitor view of ``obj``; ``None`` when it refuses a value."""
    return _view(ctx, obj, ServiceMonitor.from_manifest)


def container_path(index: int, *, init: bool = False) -> KeyPath:
    """The key path of a container of the pod template."""
    return (*POD_SPEC, "initContainers" if init else "containers", index)


def gpu_resources(container: Container) -> list[str]:
    """The GPU extended resources a container requests or limits, in the order written."""
    return list(container.gpus)


def selects(selector: LabelSelector, labels: Mapping[str, str]) -> bool | None:
    """Whether ``selector`` selects an object with ``labels``; ``None``: undecidable.

    Matching is :meth:`LabelSelector.matches`; requirements that involve a placeholder (in
    the selector's values or in the label they look at) are set aside, and if the rest
    matches, the answer is undecidable rather than a guess.
    """
    pairs = []
    requirements = []
    undecided = False
    for key, value in selector.match_labels:
        if is_templated(value) or is_templated(labels.get(key)):
            undecided = True
        else:
            pairs.append((key, value))
    for requirement in selector.match_expressions:
        if is_templated(labels.get(requirement.key)) or any(
            is_templated(value) for value in requirement.values
        ):
            undecided = True
        else:
            requirements.append(requirement)
    if not LabelSelector(tuple(pairs), tuple(requirements)).matches(labels):
        return False
    return None if undecided else True


def gpu_undecidable(work: Workload) -> bool:
    """Whether a placeholder stands in a request or limit of the pod template (the view
    leaves such values out, so GPU counts would be guessed)."""
    spec = work.manifest.get(POD_SPEC)
    if not isinstance(spec, dict):
        return False
    for field in ("containers", "initContainers"):
        for _, raw in iter_list(spec.get(field)):
            container = as_map(raw) or {}
            resources = as_map(container.get("resources")) or {}
            for section in ("requests", "limits"):
                for _, value in iter_map(resources.get(section)):
                    if is_templated(value):
                        return True
    return False
