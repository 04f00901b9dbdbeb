"""The public surface of gpuscale.controllers.keda: the names the conformance contract
(CONTRACT.md) requires, and the upstream version the module docstring names (its
``__all__`` is checked with every module's by tests/unit/test_exported_members.py)."""

from __future__ import annotations

from gpuscale.controllers import keda

CONTRACT_NAMES = [
    "FallbackError",
    "PrometheusQueryError",
    "PrometheusTrigger",
    "ScaleRequest",
    "TriggerError",
    "check_fallback",
    "check_replica_bounds",
    "evaluate_formula",
    "hpa_max_replicas",
    "hpa_min_replicas",
    "is_using_modifiers",
    "metrics_and_activity",
    "metrics_with_fallback",
    "parse_prometheus_response",
    "parse_prometheus_trigger",
    "request_scale",
    "scaled_object_warnings",
    "scaling_modifier_trigger_value",
    "validate_scaling_modifiers",
]


def test_contract_names_are_exported() -> None:
    assert set(CONTRACT_NAMES) <= set(keda.__all__)


def test_errors_are_value_errors_as_the_contract_requires() -> None:
    for error in (
        keda.TriggerError,
        keda.PrometheusQueryError,
        keda.FallbackError,
        keda.ScaledObjectError,
    ):
        assert issubclass(error, ValueError)


def test_docstring_names_upstream_version() -> None:
    assert keda.__doc__ is not None
    assert "8b4f083ca8c8c2baf8477e322bd4d16ac4dfa09a" in keda.__doc__
    assert "v1.17.8" in keda.__doc__
