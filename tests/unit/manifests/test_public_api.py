"""The public API of the manifest and profile packages behaves as documented (their
``__all__`` is checked with every module's by tests/unit/test_exported_members.py)."""

from __future__ import annotations


def test_manifest_spec_is_the_raw_mapping() -> None:
    from gpuscale.manifests import load_text

    (scaled,) = load_text("kind: ScaledObject\nspec: {minReplicaCount: 1}\n", "s.yaml")
    assert scaled.spec == {"minReplicaCount": 1}
    (odd,) = load_text("kind: X\nspec: [1]\n", "x.yaml")
    assert odd.spec == {}
