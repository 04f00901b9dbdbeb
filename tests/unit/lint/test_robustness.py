"""Malformed and templated manifests never crash a rule.

Property-based: hypothesis builds documents of every kind lint reads whose values have
arbitrary types (strings, numbers, booleans, nulls, lists, mappings, placeholders), in
the places rules look, and every rule runs over them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscale.lint import KeyPath, LintOptions, NodePool, ProfileValues, Taint, run_lint
from tests.unit.lint.adapter import load_text
from tests.unit.lint.conftest import DATA

PLACEHOLDERS = ["${X}", "{{ .Values.x }}", "<name>", "$VAR", "", "amd.com/gpu", "80", "0"]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=200),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(PLACEHOLDERS),
    st.text(max_size=12),
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(
            st.sampled_from(["key", "name", "port", "value", "x"]), children, max_size=3
        ),
    ),
    max_leaves=8,
)

KEYS = {
    "ScaledObject": [
        ("spec", "minReplicaCount"),
        ("spec", "maxReplicaCount"),
        ("spec", "idleReplicaCount"),
        ("spec", "cooldownPeriod"),
        ("spec", "initialCooldownPeriod"),
        ("spec", "pollingInterval"),
        ("spec", "fallback"),
        ("spec", "advanced"),
        ("spec", "scaleTargetRef"),
        ("spec", "triggers"),
    ],
    "Deployment": [
        ("spec", "template"),
        ("spec", "template", "metadata"),
        ("spec", "template", "spec"),
    ],
    "Service": [("metadata", "labels"), ("spec", "selector"), ("spec", "ports")],
    "ServiceMonitor": [
        ("metadata", "labels"),
        ("spec", "selector"),
        ("spec", "namespaceSelector"),
        ("spec", "endpoints"),
    ],
    "HorizontalPodAutoscaler": [("spec", "scaleTargetRef"), ("metadata", "ownerReferences")],
}

trigger = st.fixed_dictionaries(
    {
        "type": st.just("prometheus"),
        "metadata": st.dictionaries(
            st.sampled_from(
                [
                    "query",
                    "threshold",
                    "activationThreshold",
                    "ignoreNullValues",
                    "serverAddress",
                    "metricName",
                ]
            ),
            st.one_of(
                values, st.sampled_from(["sum(x)", "avg(x{a=~'.*'})", "sum(x", "rate(x[1m])"])
            ),
            max_size=6,
        ),
    },
    optional={"metricType": values, "useCachedMetrics": values},
)
container = st.fixed_dictionaries(
    {},
    optional={
        "name": values,
        "command": values,
        "args": values,
        "resources": st.fixed_dictionaries(
            {},
            optional={
                "requests": st.dictionaries(st.sampled_from(["amd.com/gpu", "cpu"]), values),
                "limits": values,
            },
        ),
    },
)
pod_spec = st.fixed_dictionaries(
    {},
    optional={
        "containers": st.one_of(values, st.lists(container, max_size=2)),
        "initContainers": values,
        "nodeSelector": st.one_of(
            values,
            st.dictionaries(
                st.sampled_from(["doks.digitalocean.com/gpu-brand", "doks.<x>/gpu-brand", "a/b"]),
                values,
            ),
        ),
        "tolerations": st.one_of(
            values,
            st.lists(
                st.dictionaries(st.sampled_from(["key", "operator", "value", "effect"]), values),
                max_size=2,
            ),
        ),
        "affinity": values,
    },
)


@dataclass(frozen=True)
class _Object:
    kind: str
    body: Mapping[str, Any]

    @property
    def name(self) -> str | None:
        meta = self.body.get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        return name if isinstance(name, str) else None

    @property
    def namespace(self) -> str | None:
        meta = self.body.get("metadata")
        ns = meta.get("namespace") if isinstance(meta, dict) else None
        return ns if isinstance(ns, str) else None

    def line_of(self, key_path: KeyPath) -> tuple[str, int, int]:
        return "fuzz.yaml", 1 + len(key_path), 1


def _document(kind: str, parts: dict[tuple[str, ...], Any], name: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": kind, "metadata": {"name": name}}
    for path, value in parts.items():
        node = body
        for step in path[:-1]:
            if not isinstance(node.get(step), dict):
                node[step] = {}
            node = node[step]
        node[path[-1]] = value
    return body


@st.composite
def documents(draw: st.DrawFn) -> list[_Object]:
    objects = []
    for kind, keys in KEYS.items():
        for _ in range(draw(st.integers(min_value=0, max_value=2))):
            parts = {path: draw(values) for path in keys if draw(st.booleans())}
            if kind == "ScaledObject" and draw(st.booleans()):
                parts[("spec", "triggers")] = draw(st.lists(trigger, max_size=2))
            if kind == "Deployment" and draw(st.booleans()):
                parts[("spec", "template", "spec")] = draw(pod_spec)
            name = draw(st.one_of(st.sampled_from(["web", "<name>", "${N}"]), values))
            objects.append(_Object(kind, _document(kind, parts, name)))
    return objects


PROFILE = ProfileValues(
    release_name="kps",
    prometheus_namespace="monitoring",
    scrape_interval=60,
    node_pools=(
        NodePool(
            "gpu", "amd", 1, {"doks.digitalocean.com/node-pool": "gpu"}, (Taint("amd.com/gpu"),), 2
        ),
    ),
    default_startup_seconds=600,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(objects=documents(), with_profile=st.booleans())
def test_no_rule_crashes_on_malformed_documents(objects: list[_Object], with_profile: bool) -> None:
    report = run_lint(objects, PROFILE if with_profile else None, LintOptions(namespace="ns"))
    for finding in report.findings:
        assert finding.message
        assert finding.location.file == "fuzz.yaml"


def _template(node: Any, placeholder: str) -> Any:
    if isinstance(node, dict):
        return {
            k: v if k in {"kind", "apiVersion"} else _template(v, placeholder)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_template(item, placeholder) for item in node]
    return placeholder


def test_templated_tutorial_values_never_crash() -> None:
    text = (DATA / "tutorial" / "resources.yaml").read_text()
    loaded = load_text(text)
    for placeholder in ("${VALUE}", "{{ .Values.x }}", "<value>", "$VALUE"):
        objects = [_Object(o.kind, _template(dict(o.body), placeholder)) for o in loaded]
        report = run_lint(objects, PROFILE, LintOptions())
        rules = {f.rule for f in report.findings}
        assert "query-invalid" not in rules
        # Keys are not templated: the tutorial's misspelled nodeSelector key is still wrong.
        assert rules <= {"scaledobject-target-missing", "gpu-node-selector"}, rules
