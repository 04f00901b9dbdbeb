"""Each link of :data:`gpuscale.live._verify.links.LINKS` checks only what it declares it
reads: a link whose check looked up a document its ``reads`` did not name would pass here
only because another link happened to read it, the hand coupling the list replaces."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from gpuscale.inputs import read_manifests
from gpuscale.live._verify.chain import verify_targets
from gpuscale.live._verify.links import LINKS, Scope, walk
from gpuscale.live.verify import Facts
from tests.integration.live import chain as c
from tests.unit.live.test_verify import facts_of


class _Looked(Mapping[str, Any]):
    """A mapping that notes every key asked of it."""

    def __init__(self, data: Mapping[str, Any], seen: set[str]) -> None:
        self.data = dict(data)
        self.seen = seen

    def __getitem__(self, key: str) -> Any:
        self.seen.add(key)
        return self.data[key]

    def __contains__(self, key: object) -> bool:
        self.seen.add(str(key))
        return key in self.data

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("a check walked every read instead of naming one")

    def __len__(self) -> int:
        return len(self.data)


def _recording(facts: Facts, seen: set[str], *, failed: bool) -> Facts:
    keys = [*facts.objects, *facts.lists]
    return Facts(
        context_namespace=facts.context_namespace,
        keda_namespace=facts.keda_namespace,
        objects=_Looked(facts.objects, seen),
        lists=_Looked(facts.lists, seen),
        errors=_Looked(dict.fromkeys(keys, "forbidden") if failed else {}, seen),
        prometheus=facts.prometheus,
        pools=facts.pools,
        pools_source=facts.pools_source,
    )


@pytest.mark.parametrize("fixed", [True, False])
@pytest.mark.parametrize("failed", [False, True])
def test_every_link_checks_only_what_it_reads(fixed: bool, failed: bool) -> None:
    state = c.chain(fixed=fixed)
    facts = facts_of(state)
    scope = Scope(verify_targets(read_manifests([state.path]), None, c.APP_NS), None)
    walked = 0
    for link, subject in walk(scope):
        declared = {ref.key for ref in link.reads(facts, subject)}
        seen: set[str] = set()
        checks = list(link.check(_recording(facts, seen, failed=failed), subject))
        assert checks, link.name
        assert seen <= declared, (link.name, seen - declared)
        walked += 1
    assert walked == len(LINKS)


def test_the_links_run_in_chain_order_with_each_subjects_checks_together() -> None:
    state = c.chain(fixed=True)
    scope = Scope(verify_targets(read_manifests([state.path]), None, c.APP_NS), None)
    assert [(link.name, subject.name) for link, subject in walk(scope)] == [
        ("KEDA CRDs", ""),
        ("KEDA operator", ""),
        ("KEDA metrics server", ""),
        ("external metrics API", ""),
        ("ScaledObject", c.APP),
        ("HPA", c.APP),
        ("trigger query", c.APP),
        ("ServiceMonitor", c.APP),
        ("kube-state-metrics", c.APP),
        ("GPU capacity", c.APP),
        ("Pending pods", c.APP),
    ]
