"""Taints and tolerations, one definition for every layer.

``TestTolerationToleratesTaint`` rows follow kubernetes/kubernetes
``staging/src/k8s.io/api/core/v1/toleration_test.go`` (same case names where they exist).
"""

from __future__ import annotations

import pytest

from gpuscale.kube import Taint, Toleration, find_untolerated_taint

FOO_BAR = Taint("foo", "bar", "NoSchedule")


@pytest.mark.parametrize(
    ("name", "toleration", "taint", "tolerated"),
    [
        (
            "toleration and taint have the same key and effect, and operator is Exists, and "
            "taint has no value, expect tolerated",
         Toleration("foo", "Exists", effect="NoSchedule"), Taint("foo", "", "NoSchedule"), True),
        (
            "toleration and taint have the same key and effect, and operator is Exists, and "
            "taint has some value, expect tolerated",
         Toleration("foo", "Exists", effect="NoSchedule"), FOO_BAR, True),
        (
            "toleration and taint have the same effect, toleration has empty key and operator "
            "is Exists, means match all taints, expect tolerated",
         Toleration("", "Exists", effect="NoSchedule"), FOO_BAR, True),
        (
            "toleration and taint have the same key, effect and value, and operator is Equal, "
            "expect tolerated",
         Toleration("foo", "Equal", "bar", "NoSchedule"), FOO_BAR, True),
        (
            "toleration and taint have the same key and effect, but different values, and "
            "operator is Equal, expect not tolerated",
         Toleration("foo", "Equal", "value1", "NoSchedule"),
         Taint("foo", "value2", "NoSchedule"), False),
        (
            "toleration and taint have the same key and value, but different effects, and "
            "operator is Equal, expect not tolerated",
         Toleration("foo", "Equal", "bar", "NoSchedule"), Taint("foo", "bar", "NoExecute"), False),
        ("empty operator means Equal",
         Toleration("foo", "", "bar", "NoSchedule"), FOO_BAR, True),
        ("an unknown operator tolerates nothing, as ToleratesTaint's default case",
         Toleration("foo", "exists", "bar", "NoSchedule"), FOO_BAR, False),
        ("an unknown operator tolerates nothing, even with an empty key",
         Toleration("", "Any"), FOO_BAR, False),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)  # fmt: skip
def test_toleration_tolerates_taint(
    name: str, toleration: Toleration, taint: Taint, tolerated: bool
) -> None:
    assert toleration.tolerates(taint) is tolerated


def test_taint_field_order_is_upstreams_key_value_effect() -> None:
    assert Taint("dedicated", "ml", "NoExecute") == Taint(
        key="dedicated", value="ml", effect="NoExecute"
    )
    assert str(Taint("dedicated", "ml", "NoExecute")) == "dedicated=ml:NoExecute"
    assert str(Taint("amd.com/gpu")) == "amd.com/gpu:NoSchedule"


def test_only_no_schedule_and_no_execute_taints_filter() -> None:
    soft = Taint("a", effect="PreferNoSchedule")
    hard = Taint("b", effect="NoExecute")
    assert find_untolerated_taint((soft, hard), ()) == hard
    assert find_untolerated_taint((soft,), ()) is None
    assert find_untolerated_taint((hard,), (Toleration("b", "Exists"),)) is None
