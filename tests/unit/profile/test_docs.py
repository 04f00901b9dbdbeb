"""docs/profile.md documents every key of the profile, with its meaning."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from gpuscale.profile import (
    AutoscalerSpec,
    CalibrationSpec,
    CatalogueEntry,
    ClusterSpec,
    HpaSpec,
    KedaSpec,
    NodePool,
    Profile,
    PrometheusSpec,
    ServingSpec,
    StepCostSpec,
    TaintSpec,
    TimingSpec,
    TuneSpec,
    WorkloadSpec,
)

DOC = Path("docs/profile.md")
MODELS = [
    AutoscalerSpec,
    CalibrationSpec,
    CatalogueEntry,
    ClusterSpec,
    HpaSpec,
    KedaSpec,
    NodePool,
    PrometheusSpec,
    ServingSpec,
    StepCostSpec,
    TimingSpec,
    TuneSpec,
    WorkloadSpec,
]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_field_has_a_description_and_a_row(model: type[BaseModel]) -> None:
    text = DOC.read_text()
    for name, field in model.model_fields.items():
        assert field.description, f"{model.__name__}.{name} has no description"
        assert f"| `{name}` |" in text, f"docs/profile.md lacks {model.__name__}.{name}"


def test_sections_and_taints_are_described() -> None:
    for model in (Profile, TaintSpec):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name}"
