"""Property: whatever text a ``gpuscale.yaml`` holds, loading it gives a :class:`Profile`
or a one-line :class:`GpuscaleError` naming the file, never another exception.

Three shapes of input (issue 11): arbitrary text; every real key path of the profile
given an arbitrary YAML-ish value (durations, numbers past every limit, ``.inf``/``.nan``,
booleans, lists and mappings where a scalar belongs, anchors, tags, 5,000-digit
integers); and whole profiles of real and unknown keys nested at random. Fixed seed
(``derandomize``), a bounded budget, no deadline (the machine is shared).
"""

from __future__ import annotations

import typing
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from gpuscale.errors import GpuscaleError, ProfileError
from gpuscale.profile import Profile, TuneSpec, load_profile_text

SOURCE = "gpuscale.yaml"
BUDGET = settings(
    derandomize=True,
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

ATOMS = [
    "0", "0s", "0ms", "-1", "-0", "1", "1.5", "1e309", "-1e309", "1e-320", ".inf", "-.inf",
    ".nan", "true", "false", "yes", "null", "~", "''", "'x'", '"1.33"', "1.20", "30s", "5m",
    "1h30m", "250ms", "-5m", "10d", "8Gi", "512Mi", "-8Gi", "lots", "amd", "nvidia", "none",
    "doks", "generic", "[amd]", "[]", "{}", "{a: 1}", "[1, 2]", "0x1F", "0o17", "017", "1_000",
    "9" * 5000, "-" + "9" * 4400, "1" + "0" * 400, "!!str 3", "!!int '3'", "!!float x",
    "&a 1", "88.5.x", "~2.20.0", ">=2, <3", "NoSchedule", "Prom_1", "a" * 70, "\"\\u0000\"",
    "'\t'", "|\n    block",
]  # fmt: skip


def _sections() -> dict[str, type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    for name, field in Profile.model_fields.items():
        for argument in (field.annotation, *typing.get_args(field.annotation)):
            for inner in (argument, *typing.get_args(argument)):
                if isinstance(inner, type) and issubclass(inner, BaseModel):
                    found[name] = inner
    return found


SECTIONS = _sections()


def _load(text: str) -> None:
    error: GpuscaleError | None = None
    try:
        profile = load_profile_text(text, SOURCE)
    except GpuscaleError as exc:
        error = exc
    if error is not None:
        line = error.one_line()
        assert "\n" not in line, line
        assert (error.where or "").startswith(SOURCE), line
        assert error.fix, line
        assert len(line) < 600, line
        return
    assert isinstance(profile, Profile)
    assert profile.source == SOURCE


@pytest.mark.parametrize(
    "text",
    [
        "hpa:\n  downscale_stabilization: 1" + "0" * 400 + "\n",
        "node_pools:\n  - {name: g, size: s-4vcpu-8gb, count: 1, memory: 1" + "0" * 400 + "}\n",
        "node_pools:\n  - {name: g, size: s-4vcpu-8gb, count: 1" + "0" * 400 + "}\n",
    ],
    ids=["duration", "memory", "count"],
)
def test_found_integers_too_large_for_a_float(text: str) -> None:
    """Found by the properties below: an integer past float's range was an
    OverflowError, and the message quoted all of its digits."""
    with pytest.raises(ProfileError) as caught:
        load_profile_text(text, SOURCE)
    assert len(caught.value.one_line()) < 300


@BUDGET
@given(st.text(max_size=200))
def test_arbitrary_text(text: str) -> None:
    _load(text)


@st.composite
def _one_key(draw: st.DrawFn) -> str:
    section = draw(st.sampled_from(sorted(SECTIONS)))
    model = SECTIONS[section]
    key = draw(st.sampled_from(sorted(model.model_fields)))
    value = draw(st.sampled_from(ATOMS))
    indent_value = value.replace("\n", "\n    ")
    if section == "node_pools":
        base = draw(
            st.sampled_from(
                [
                    "{name: g, size: s-4vcpu-8gb, count: 1}",
                    "{name: g, size: gpu-mi300x1-192gb, max_nodes: 3}",
                    "{name: g, size: custom}",
                ]
            )
        )
        return (
            f"node_pools:\n  - {base}\n  - name: h\n    size: s-4vcpu-8gb\n"
            f"    {key}: {indent_value}\n"
        )
    if section == "workloads":
        return f"workloads:\n  web:\n    {key}: {indent_value}\n"
    if section == "catalogue":
        return (
            "catalogue:\n  - slug: x\n    vcpus: 4\n    memory: 8Gi\n    price_per_hour: 1\n"
            f"    {key}: {indent_value}\n"
        )
    return f"{section}:\n  {key}: {indent_value}\n"


@BUDGET
@given(_one_key())
def test_every_key_with_any_value(text: str) -> None:
    _load(text)


_KEYS = sorted({key for model in SECTIONS.values() for key in model.model_fields} | set(SECTIONS))


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return str(value)


_FLOW_ATOMS = [atom for atom in ATOMS if "\n" not in atom and not atom.startswith(("&", "!", "|"))]
_TREES = st.recursive(
    st.sampled_from(_FLOW_ATOMS),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from([*_KEYS, "x", "name", "size"]), inner, max_size=4)
    ),
    max_leaves=12,
)


@BUDGET
@given(st.dictionaries(st.sampled_from([*sorted(SECTIONS), "other"]), _TREES, max_size=4))
def test_whole_profiles_of_nested_values(document: dict[str, Any]) -> None:
    text = "".join(f"{key}: {_flow(value)}\n" for key, value in document.items())
    _load(text)


_RANGES = [name for name in TuneSpec.model_fields if name != "keep"]


@BUDGET
@given(
    st.dictionaries(
        st.sampled_from(_RANGES),
        st.tuples(st.integers(-2, 12), st.integers(-2, 12)),
        min_size=1,
        max_size=4,
    )
)
def test_tune_ranges_load_in_order_or_are_refused_at_their_key(
    ranges: dict[str, tuple[int, int]],
) -> None:
    """A ``tune:`` section of ranges (seconds for delays) loads only when every range is
    ``[low, high]`` with low at most high and at least what KEDA and the HPA admit (a
    threshold above 0, a policy, a period, a polling interval and maxReplicaCount at
    least 1), and ``min_replicas``' low at most ``max_replicas``' high; otherwise the one
    line names the line and key of a range that breaks a rule."""
    names = list(ranges)
    text = "tune:\n" + "".join(
        f"  {name}: [{low}{'s' if 'period' in name or name in _DELAYS else ''}, "
        f"{high}{'s' if 'period' in name or name in _DELAYS else ''}]\n"
        for name, (low, high) in ranges.items()
    )
    lows = {name: low for name, (low, _) in ranges.items()}
    highs = {name: high for name, (_, high) in ranges.items()}
    bad = {n for n, (low, high) in ranges.items() if low < _LEAST.get(n, 0) or low > high}
    bad |= {"threshold"} & {n for n in ranges if lows[n] <= 0}
    both = "min_replicas" in ranges and "max_replicas" in ranges
    if both and lows["min_replicas"] > highs["max_replicas"]:
        bad.add("min_replicas")
    if bad:
        with pytest.raises(ProfileError) as caught:
            load_profile_text(text, SOURCE)
        line = caught.value.one_line()
        assert "\n" not in line
        assert "(fix: " in line
        assert any(f"{SOURCE}:{names.index(n) + 2}: tune.{n}" in line for n in bad), line
        return
    profile = load_profile_text(text, SOURCE)
    for name, (low, high) in ranges.items():
        assert getattr(profile.tune, name) == (low, high)


_DELAYS = {"cooldown", "scale_down_stabilization", "polling_interval"}
_LEAST = dict.fromkeys(
    ("max_replicas", "scale_up_pods", "scale_down_pods", "polling_interval", "scale_up_period"),
    1,
) | {"scale_down_period": 1}
"""The lowest value each range admits (0 for the others): what the HPA and KEDA admit."""


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ("max_replicas: [5, 2]", "tune.max_replicas: low 5 is above high 2 "
         "(fix: write [2, 5])"),
        ("threshold: [0, 10]", "tune.threshold[0]: must be greater than 0"),
        ("keep: [treshold]", "tune.keep[0]: 'treshold' is not one of its "
         "values (fix: did you mean threshold?)"),
    ],
)  # fmt: skip
def test_tune_messages(body: str, line: str) -> None:
    with pytest.raises(ProfileError) as caught:
        load_profile_text(f"tune:\n  {body}\n", SOURCE)
    assert caught.value.one_line().startswith(f"{SOURCE}:2: {line}")


def test_unknown_keep_lists_the_names_once() -> None:
    with pytest.raises(ProfileError) as caught:
        load_profile_text("tune:\n  keep: [bogus]\n", SOURCE)
    line = caught.value.one_line()
    assert line.count("gpu_min_nodes") == 1, line
    assert len(line) < 400, line


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ("scale_up_period: [1s, 31m]", "tune.scale_up_period[1]: must be 30m or shorter"),
        ("scale_down_stabilization: [0s, 2h]",
         "tune.scale_down_stabilization[1]: must be 1h or shorter"),
        ("cooldown: [1.5s, 2s]", "tune.cooldown[0]: must be whole seconds"),
        ("max_replicas: [0, 2]", "tune.max_replicas[0]: must be greater than or equal to 1"),
    ],
)  # fmt: skip
def test_tune_bounds_are_what_kubernetes_admits(body: str, line: str) -> None:
    with pytest.raises(ProfileError) as caught:
        load_profile_text(f"tune:\n  {body}\n", SOURCE)
    assert caught.value.one_line().startswith(f"{SOURCE}:2: {line}")
