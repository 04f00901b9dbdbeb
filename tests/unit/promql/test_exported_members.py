"""The public API of gpuscale.promql and gpuscale.prometheus is what ``__all__`` lists."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "gpuscale.promql",
    "gpuscale.promql.labels",
    "gpuscale.promql.result",
    "gpuscale.promql.store",
    "gpuscale.promql.engine",
    "gpuscale.prometheus",
    "gpuscale.prometheus.client",
    "gpuscale.prometheus.server",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_resolves_without_duplicates(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert len(exported) == len(set(exported))
    for member in exported:
        assert hasattr(module, member), f"{name}.{member}"


def test_the_brief_names_exist() -> None:
    from gpuscale.errors import InputError
    from gpuscale.promql import Engine, PromQLError, Result, SeriesStore

    assert issubclass(PromQLError, InputError)
    store = SeriesStore(retention_ms=None)
    ref = store.series_ref({"__name__": "m"})
    store.append_ref(ref, 0, 1.0)
    store.append({"__name__": "m"}, 1, 2.0)
    store.mark_stale({"__name__": "m"}, 2)
    store.drop_before(0)
    engine = Engine(store, lookback_ms=300_000, version="3")
    assert isinstance(engine.instant("m", 0), Result)
    assert isinstance(engine.range("m", 0, 1, 1), Result)
