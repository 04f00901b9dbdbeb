"""The run-it-for-real modules export what ``__all__`` lists, every name exists (the
check of ``test_exported_members.py`` for ``gpuscale.cloud`` and ``gpuscale.live``; ruff's
RUF022 checks the order)."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "gpuscale._http_errors",
    "gpuscale.cli._options",
    "gpuscale.cloud",
    "gpuscale.cloud.api",
    "gpuscale.cloud.client",
    "gpuscale.cloud.kubeconfig",
    "gpuscale.cloud.ops",
    "gpuscale.cloud.plan",
    "gpuscale.cloud.spec",
    "gpuscale.live.applier",
    "gpuscale.live.apply",
    "gpuscale.live.discovery",
    "gpuscale.live.events",
    "gpuscale.live.verifier",
    "gpuscale.live.verify",
    "gpuscale.live.helm",
    "gpuscale.live.kube",
    "gpuscale.live.kubeconfig",
    "gpuscale.live.load",
    "gpuscale.live.portforward",
    "gpuscale.live.watch",
    "gpuscale.live.watcher",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_is_unique_and_resolves(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert len(exported) == len(set(exported)), f"{name}.__all__ has duplicates"
    for member in exported:
        assert hasattr(module, member), f"{name}.{member} is in __all__ but missing"
