"""Malformed and templated manifests never crash a rule.

Property-based: hypothesis builds documents of every kind lint reads whose values have
arbitrary types (strings, numbers, booleans, nulls, lists, mappings, placeholders), in
the places rules look; they are written as JSON (which is YAML), read by the real loader,
and every rule runs over them.
"""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscale.lint import LintOptions, run_lint
from gpuscale.manifests import Manifest, load_text
from tests.unit.lint.conftest import EXAMPLES, gpu_pool, make_profile

PLACEHOLDERS = ["${X}", "{{ .Values.x }}", "<name>", "$VAR", "", "amd.com/gpu", "80", "0"]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=200),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(PLACEHOLDERS),
    # YAML allows no control characters or lone surrogates (YAML 1.2 §5.1).
    st.text(st.characters(blacklist_categories=("Cs", "Cc", "Cn")), max_size=12),
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


API_VERSIONS = {
    "ScaledObject": "keda.sh/v1alpha1",
    "Deployment": "apps/v1",
    "Service": "v1",
    "ServiceMonitor": "monitoring.coreos.com/v1",
    "HorizontalPodAutoscaler": "autoscaling/v2",
}
"""So that the schema validator (``schema-invalid``) reads the documents too."""


def _document(kind: str, parts: dict[tuple[str, ...], Any], name: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": API_VERSIONS[kind],
        "kind": kind,
        "metadata": {"name": name},
    }
    for path, value in parts.items():
        node = body
        for step in path[:-1]:
            if not isinstance(node.get(step), dict):
                node[step] = {}
            node = node[step]
        node[path[-1]] = value
    return body


def _json(value: Any) -> Any:
    """``value`` with the floats JSON cannot write (NaN, ±Inf) as YAML spells them."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(item) for item in value]
    return value


def _loaded(bodies: list[dict[str, Any]], file: str = "fuzz.yaml") -> list[Manifest]:
    text = "\n---\n".join(json.dumps(_json(body), ensure_ascii=False) for body in bodies)
    return load_text(text, file) if bodies else []


@st.composite
def documents(draw: st.DrawFn) -> list[Manifest]:
    bodies = []
    for kind, keys in KEYS.items():
        for _ in range(draw(st.integers(min_value=0, max_value=2))):
            parts = {path: draw(values) for path in keys if draw(st.booleans())}
            if kind == "ScaledObject" and draw(st.booleans()):
                parts[("spec", "triggers")] = draw(st.lists(trigger, max_size=2))
            if kind == "Deployment" and draw(st.booleans()):
                parts[("spec", "template", "spec")] = draw(pod_spec)
            name = draw(st.one_of(st.sampled_from(["web", "<name>", "${N}"]), values))
            bodies.append(_document(kind, parts, name))
    return _loaded(bodies)


PROFILE = make_profile(
    prometheus={"release": "kps", "namespace": "monitoring", "scrape_interval": "60s"},
    node_pools=[gpu_pool(max_nodes=2)],
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(objects=documents(), with_profile=st.booleans())
def test_no_rule_crashes_on_malformed_documents(
    objects: list[Manifest], with_profile: bool
) -> None:
    options = LintOptions(namespace="ns", validate=True)
    report = run_lint(objects, PROFILE if with_profile else None, options)
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
    # The seed's own copy of the tutorial, whose mirror rewrote digitalocean.com in the
    # nodeSelector key (examples/tutorial/README.md says so).
    text = (EXAMPLES / "tutorial" / "resources.yaml").read_text()
    text = text.replace("doks.digitalocean.com/gpu-brand", "doks.linux-console.net/gpu-brand")
    loaded = load_text(text, "t.yaml")
    for placeholder in ("${VALUE}", "{{ .Values.x }}", "<value>", "$VALUE"):
        objects = _loaded([_template(dict(o.body), placeholder) for o in loaded], "t.yaml")
        report = run_lint(objects, PROFILE, LintOptions(validate=True))
        rules = {f.rule for f in report.findings}
        assert "query-invalid" not in rules
        # Keys are not templated: the seed's misspelled nodeSelector key is still wrong,
        # and the container still has no readiness probe.
        assert "gpu-node-selector" in rules
        assert rules <= {"gpu-node-selector", "no-readiness-probe"}, rules
