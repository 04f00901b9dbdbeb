"""How :func:`gpuscale.live.verifier.gather` keeps failed reads: no answer at the first
read is the command's error (as deploy, watch and load raise it); after the API server has
answered once, every failure is kept for the checks that need it."""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import pytest

from gpuscale.errors import GpuscaleError
from gpuscale.inputs import read_manifests
from gpuscale.live.kube import ApiUnreachableError, Kube, KubeTarget, status_error
from gpuscale.live.verifier import gather
from gpuscale.profile import Profile
from tests.integration.live import chain as c


class _Kube(Kube):
    """Answers ``answered`` reads with 404 (an absent object), then fails every read."""

    def __init__(self, answered: int, failure: GpuscaleError) -> None:
        client = SimpleNamespace(configuration=SimpleNamespace(host="https://127.0.0.1:1"))
        super().__init__(client, KubeTarget("https://127.0.0.1:1", "x", c.APP_NS))
        self.answered = answered
        self.failure = failure
        self.paths: list[str] = []

    def get_json(
        self,
        path: str,
        query: Mapping[str, str] | None = None,
        *,
        what: str,
        missing_ok: bool = False,
    ) -> Any:
        self.paths.append(path)
        if len(self.paths) <= self.answered:
            return None
        raise self.failure


def _unreachable() -> ApiUnreachableError:
    return ApiUnreachableError("cannot reach the Kubernetes API server https://127.0.0.1:1")


def _gather(kube: _Kube) -> Any:
    manifests = read_manifests([c.chain(fixed=True).path])
    return gather(kube, manifests, profile=Profile())


def test_no_answer_to_the_first_read_is_raised() -> None:
    kube = _Kube(0, _unreachable())
    with pytest.raises(ApiUnreachableError):
        _gather(kube)
    assert len(kube.paths) == 1


def test_a_status_answer_to_the_first_read_is_kept_not_raised() -> None:
    kube = _Kube(0, status_error(403, "", "x"))
    facts = _gather(kube)
    assert facts.objects == {}
    assert set(facts.errors) >= {"CustomResourceDefinition//scaledobjects.keda.sh", "nodes"}


def test_losing_the_server_after_it_answered_is_kept_not_raised() -> None:
    facts = _gather(_Kube(1, _unreachable()))
    assert list(facts.objects) == ["CustomResourceDefinition//scaledobjects.keda.sh"]
    assert facts.errors["nodes"] == "cannot reach the Kubernetes API server https://127.0.0.1:1"
    (prom,) = facts.prometheus.values()
    assert prom.unread.startswith("cannot reach the Kubernetes API server")
