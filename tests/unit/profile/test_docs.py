"""docs/profile.md documents every key of the profile, with its meaning.

A key's meaning is the docstring under its field in ``gpuscale/profile/_model.py``. The
models do not ask pydantic to read those (``use_attribute_docstrings`` parses the source
of every model on import, a cost on every command that reads a profile), so they are read
here from the source, as pydantic would.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import textwrap
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


def _described(model: type[BaseModel]) -> dict[str, str]:
    """Each field's docstring, from the source of the model and its bases."""
    found: dict[str, str] = {}
    for klass in reversed(model.__mro__):
        if not (isinstance(klass, type) and issubclass(klass, BaseModel)) or klass is BaseModel:
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        body = tree.body[0].body  # type: ignore[attr-defined]
        for field, doc in itertools.pairwise(body):
            if (
                isinstance(field, ast.AnnAssign)
                and isinstance(field.target, ast.Name)
                and isinstance(doc, ast.Expr)
                and isinstance(doc.value, ast.Constant)
                and isinstance(doc.value.value, str)
            ):
                found[field.target.id] = doc.value.value
    return found


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_field_has_a_description_and_a_row(model: type[BaseModel]) -> None:
    text = DOC.read_text()
    described = _described(model)
    for name in model.model_fields:
        assert described.get(name, "").strip(), f"{model.__name__}.{name} has no description"
        assert f"| `{name}` |" in text, f"docs/profile.md lacks {model.__name__}.{name}"


def test_sections_and_taints_are_described() -> None:
    for model in (Profile, TaintSpec):
        described = _described(model)
        for name in model.model_fields:
            assert described.get(name, "").strip(), f"{model.__name__}.{name}"
