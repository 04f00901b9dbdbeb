"""The public API of the manifest and profile packages is exactly their ``__all__`` (style
rule 9; the same check as tests/unit/test_exported_members.py, for these modules; ruff's
RUF022 keeps each ``__all__`` sorted)."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "gpuscale.manifests",
    "gpuscale.manifests.selectors",
    "gpuscale.manifests.scaffold",
    "gpuscale.profile",
    "gpuscale.profile.catalogue",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_is_unique_and_resolves(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert len(set(exported)) == len(exported)
    for member in exported:
        assert hasattr(module, member), f"{name}.{member}"


def test_manifest_spec_is_the_raw_mapping() -> None:
    from gpuscale.manifests import load_text

    (scaled,) = load_text("kind: ScaledObject\nspec: {minReplicaCount: 1}\n", "s.yaml")
    assert scaled.spec == {"minReplicaCount": 1}
    (odd,) = load_text("kind: X\nspec: [1]\n", "x.yaml")
    assert odd.spec == {}
