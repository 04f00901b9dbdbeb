"""The names the PromQL brief asks for exist and work together (every module's ``__all__``
is checked by tests/unit/test_exported_members.py)."""

from __future__ import annotations


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
