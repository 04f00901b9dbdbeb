"""A ScaledObject as KEDA reads it, for lint rules: :mod:`gpuscale.controllers.keda` decides.

Every setting KEDA defaults (``minReplicaCount`` 0, ``maxReplicaCount`` 100,
``cooldownPeriod`` 300, ``pollingInterval`` 30, trigger ``metricType`` AverageValue,
``ignoreNullValues`` true...) comes from the KEDA model, never from a table of lint's own:

- the spec is read by :meth:`ScaledObjectSpec.from_k8s
  <gpuscale.controllers.keda.ScaledObjectSpec.from_k8s>` (the CRD schema's types, minimums
  and defaults); when it refuses the spec (a templated ``minReplicaCount: ${MIN}``, a
  wrong type, ``minReplicaCount`` above ``maxReplicaCount``) :attr:`ScaledObjectView.spec`
  is ``None`` and the rules that need a setting stay silent;
- each ``prometheus`` trigger's metadata is read by :func:`parse_prometheus_trigger
  <gpuscale.controllers.keda.parse_prometheus_trigger>` (``threshold`` as Go's JSON
  decoder reads it, ``ignoreNullValues`` as ``strconv.ParseBool``...); ``None`` when it
  refuses them (a templated ``threshold``, a missing ``serverAddress``), and the
  :class:`~gpuscale.controllers.keda.TriggerError` is kept for ``scaledobject-invalid``.
  A trigger with an ``authenticationRef`` gets its auth parameters from a
  TriggerAuthentication lint does not read (secrets), so every parameter an auth mode
  requires is taken as given: only the metadata's own values are judged;
- a trigger's ``metricType`` goes through :func:`metric_target_type
  <gpuscale.controllers.keda.metric_target_type>` (unset means AverageValue), and
  ``scalingModifiers`` through :func:`is_using_modifiers
  <gpuscale.controllers.keda.is_using_modifiers>`;
- :func:`model_problems` turns the model's refusals (``where`` strings such as
  ``spec.triggers[0].metadata.threshold``) into key paths for findings.

What the model has no opinion on is read raw: the query text (analysed by
:mod:`gpuscale.lint.query`, so query rules still run when another value is templated),
which metadata keys the manifest writes, and the raw values rules quote back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuscale.controllers.keda import (
    PrometheusTrigger,
    ScaledObjectSpec,
    TriggerError,
    is_using_modifiers,
    metric_target_type,
    parse_prometheus_trigger,
)
from gpuscale.errors import ManifestError
from gpuscale.lint._access import as_map, as_str, iter_list
from gpuscale.manifests import KeyPath, Manifest, is_templated
from gpuscale.manifests._admission import TRIGGER_AUTH_STAND_INS

__all__ = [
    "HPA_TARGET_TYPES",
    "ModelProblem",
    "ScaledObjectView",
    "TriggerView",
    "model_problems",
    "scaled_object_view",
]

HPA_TARGET_TYPES = ("AverageValue", "Value")
"""The ``metricType`` values an external metric of the HPA KEDA generates can have: the API
server refuses any other type (``validateMetricTarget`` in kubernetes
``pkg/apis/autoscaling/validation/validation.go``; ``Utilization`` KEDA refuses itself)."""


@dataclass(frozen=True)
class TriggerView:
    """One entry of ``spec.triggers``, raw where KEDA's model does not decide."""

    index: int
    type: str | None
    metadata: Mapping[str, Any]
    """The raw metadata mapping (empty when missing or not a mapping)."""
    metric_type: str | None
    """``AverageValue`` (KEDA's default when unset) or ``Value``; ``None`` when undecidable
    (templated, not a string) or refused (``Utilization``, which KEDA refuses for external
    metrics, and any type not in :data:`HPA_TARGET_TYPES`)."""
    metric_type_explicit: bool
    use_cached_metrics: bool
    query: str | None
    """The raw query text, stripped; ``None`` when missing or not a string."""
    prometheus: PrometheusTrigger | None
    """The trigger as KEDA builds it (``type: prometheus`` only); ``None`` when KEDA's parser
    refuses the metadata (a templated or malformed value) or a value is not a string."""
    refusal: TriggerError | None = None
    """Why KEDA's parser refuses the metadata (its string values only; non-strings are
    ``trigger-metadata-not-string``'s), when it does."""

    @property
    def is_prometheus(self) -> bool:
        """Whether the trigger is KEDA's ``prometheus`` scaler."""
        return self.type == "prometheus"


@dataclass(frozen=True)
class ScaledObjectView:
    """A ScaledObject manifest with KEDA's reading of it."""

    obj: Manifest
    spec: ScaledObjectSpec | None
    """The spec with KEDA's defaults; ``None`` when KEDA's model refuses it."""
    triggers: tuple[TriggerView, ...]
    uses_scaling_modifiers: bool
    """``advanced.scalingModifiers`` is in use: the HPA then reads one composite metric."""

    @property
    def target(self) -> tuple[str, str] | None:
        """``(kind, name)`` of ``scaleTargetRef`` as KEDA reads it; ``None`` when the spec is
        refused or the name is a placeholder."""
        if self.spec is None or is_templated(self.spec.scale_target_name):
            return None
        return self.spec.scale_target_kind, self.spec.scale_target_name


def _metric_type(trigger: Mapping[str, Any]) -> str | None:
    raw = trigger.get("metricType")
    if raw is not None and (not isinstance(raw, str) or is_templated(raw)):
        return None
    try:
        kind = metric_target_type(raw)
    except ValueError:
        return None
    return kind if kind in HPA_TARGET_TYPES else None


def _prometheus(
    metadata: Mapping[str, Any], index: int, trigger: Mapping[str, Any]
) -> tuple[PrometheusTrigger | None, TriggerError | None]:
    strings = {key: value for key, value in metadata.items() if isinstance(value, str)}
    auth = TRIGGER_AUTH_STAND_INS if trigger.get("authenticationRef") is not None else None
    try:
        parsed = parse_prometheus_trigger(
            strings, auth, trigger_index=index, key_path=("spec", "triggers", index, "metadata")
        )
    except TriggerError as error:
        return None, error
    return (parsed if len(strings) == len(metadata) else None), None


def _trigger(index: int, raw: Any) -> TriggerView:
    trigger = as_map(raw) or {}
    metadata = as_map(trigger.get("metadata")) or {}
    kind = as_str(trigger.get("type"))
    query = as_str(metadata.get("query"))
    parsed, refusal = (
        _prometheus(metadata, index, trigger) if kind == "prometheus" else (None, None)
    )
    return TriggerView(
        index=index,
        type=kind,
        metadata=metadata,
        metric_type=_metric_type(trigger),
        metric_type_explicit="metricType" in trigger,
        use_cached_metrics=trigger.get("useCachedMetrics") is True,
        query=query.strip() if query is not None else None,
        prometheus=parsed,
        refusal=refusal,
    )


def scaled_object_view(obj: Manifest) -> ScaledObjectView:
    """Read a ScaledObject manifest the way KEDA does (see the module docstring)."""
    spec_map = obj.spec
    try:
        spec: ScaledObjectSpec | None = ScaledObjectSpec.from_k8s(spec_map)
    except ManifestError:
        spec = None
    return ScaledObjectView(
        obj=obj,
        spec=spec,
        triggers=tuple(_trigger(i, t) for i, t in iter_list(spec_map.get("triggers"))),
        uses_scaling_modifiers=is_using_modifiers(spec_map),
    )


@dataclass(frozen=True)
class ModelProblem:
    """One thing KEDA's model refuses, at the key it names."""

    key_path: KeyPath
    message: str
    """The model's own message (KEDA's, where upstream has one)."""
    fix: str


def model_problems(obj: Manifest, error: ManifestError) -> list[ModelProblem]:
    """The refusals in ``error`` (each of a :class:`TriggerError`'s problems) that do not
    stand on a placeholder or on a value that is not a string in trigger metadata: those
    are undecidable, or another rule's (``trigger-metadata-not-string``)."""
    problems = error.problems if isinstance(error, TriggerError) else ()
    pairs = problems or ((error.key_path or ("spec",), error.message),)
    found = []
    for path, message in pairs:
        value = obj.get(path)
        if is_templated(value) or (
            value is not None and _is_metadata(path) and not isinstance(value, str)
        ):
            continue
        found.append(ModelProblem(path, message, error.fix or ""))
    return found


def _is_metadata(path: KeyPath) -> bool:
    return len(path) == 5 and path[:2] == ("spec", "triggers") and path[3] == "metadata"
