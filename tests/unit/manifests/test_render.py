"""Rendering back to YAML: a stable stream kubectl takes, that loads back to the same data."""

from __future__ import annotations

from typing import Any

import pytest

from gpuscale.inputs import read_manifests
from gpuscale.manifests import load_text, render

EXAMPLES = ["examples/tutorial/resources.yaml", "examples/tutorial-fixed/resources.yaml"]


@pytest.mark.parametrize("path", EXAMPLES)
def test_round_trip_keeps_every_value(path: str) -> None:
    loaded = read_manifests([path])
    text = render(loaded)
    again = load_text(text, "rendered.yaml")
    assert [m.body for m in again] == [m.body for m in loaded]
    assert render(again) == text


def test_kubernetes_keys_first_then_the_order_given() -> None:
    text = render(
        [{"spec": {"b": 1, "a": 2}, "kind": "X", "metadata": {"name": "x"}, "apiVersion": "v1"}]
    )
    assert text.splitlines() == [
        "apiVersion: v1",
        "kind: X",
        "metadata:",
        "  name: x",
        "spec:",
        "  b: 1",
        "  a: 2",
    ]


def test_documents_are_separated_and_ambiguous_strings_quoted() -> None:
    strings: dict[str, Any] = {
        k: k for k in ("false", "80", "yes", "on", "1e3", "0755", "~", "null")
    }
    text = render([{"kind": "A", "data": strings}, {"kind": "B"}])
    assert text.count("---\n") == 1
    (first, second) = load_text(text, "r.yaml")
    assert first.body["data"] == strings
    assert second.kind == "B"


def test_multi_line_strings_are_literal_blocks() -> None:
    text = render([{"kind": "ConfigMap", "data": {"main.py": "print(1)\nprint(2)\n"}}])
    assert "main.py: |\n    print(1)\n    print(2)\n" in text


def test_comments_go_above_their_key() -> None:
    body = {"kind": "X", "spec": {"items": [{"a": 1}], "b": 2}}
    text = render([body], comments={0: {("spec", "b"): "why b", ("spec", "items", 0): "first"}})
    lines = text.splitlines()
    assert lines[lines.index("  b: 2") - 1] == "  # why b"
    assert lines[lines.index("    - a: 1") - 1] == "    # first"
    assert load_text(text, "c.yaml")[0].body == body
