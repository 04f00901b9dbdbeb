"""Small manifest builders for rule tests (plain YAML text, so lines are easy to find)."""

from __future__ import annotations

import textwrap


def scaled_object(
    query: str = 'sum(my_gauge{namespace="default",app="web"})',
    *,
    name: str = "web",
    target: str = "web",
    spec: str = "minReplicaCount: 1\n",
    metadata: str = "",
    trigger: str = "",
    threshold: str = "'80'",
    namespace: str | None = None,
) -> str:
    """A ScaledObject with one prometheus trigger; extra YAML lines go where named."""
    ns = f"\n  namespace: {namespace}" if namespace else ""
    spec_lines = textwrap.indent(textwrap.dedent(spec), "  ")
    meta_lines = textwrap.indent(textwrap.dedent(metadata), "        ")
    trigger_lines = textwrap.indent(textwrap.dedent(trigger), "      ")
    return (
        "apiVersion: keda.sh/v1alpha1\n"
        "kind: ScaledObject\n"
        f"metadata:\n  name: {name}{ns}\n"
        "spec:\n"
        f"  scaleTargetRef:\n    name: {target}\n"
        f"{spec_lines}"
        "  triggers:\n"
        "    - type: prometheus\n"
        f"{trigger_lines}"
        "      metadata:\n"
        "        serverAddress: http://prometheus-operated.monitoring.svc:9090\n"
        f"        threshold: {threshold}\n"
        f"        query: {query}\n"
        f"{meta_lines}"
    )


def deployment(
    *,
    name: str = "web",
    gpu: str | None = "amd.com/gpu",
    pod_spec: str = "",
    resources: str | None = None,
    namespace: str | None = None,
    args: str = "",
) -> str:
    """A Deployment whose pods are labelled ``app: <name>``; optionally requesting a GPU."""
    ns = f"\n  namespace: {namespace}" if namespace else ""
    if resources is None:
        resources = f"resources:\n  limits:\n    {gpu}: 1\n" if gpu else "resources: {}\n"
    res = textwrap.indent(textwrap.dedent(resources), "          ")
    extra = textwrap.indent(textwrap.dedent(pod_spec), "      ")
    arg_lines = textwrap.indent(textwrap.dedent(args), "          ")
    return (
        "apiVersion: apps/v1\n"
        "kind: Deployment\n"
        f"metadata:\n  name: {name}{ns}\n"
        "spec:\n"
        f"  selector:\n    matchLabels:\n      app: {name}\n"
        "  template:\n"
        f"    metadata:\n      labels:\n        app: {name}\n"
        "    spec:\n"
        f"{extra}"
        "      containers:\n"
        "        - name: app\n"
        "          image: registry.example.com/web:1.0\n"
        f"{res}"
        f"{arg_lines}"
    )


def service(
    *, name: str = "web", port_name: str | None = "metrics", namespace: str | None = None
) -> str:
    ns = f"\n  namespace: {namespace}" if namespace else ""
    port = f"    - name: {port_name}\n      port: 8080\n" if port_name else "    - port: 8080\n"
    return (
        "apiVersion: v1\nkind: Service\n"
        f"metadata:\n  name: {name}{ns}\n  labels:\n    app: {name}\n"
        f"spec:\n  selector:\n    app: {name}\n  ports:\n{port}"
    )


def service_monitor(
    *,
    name: str = "web",
    app: str = "web",
    labels: str = "release: prometheus",
    port: str = "metrics",
    namespace_selector: str = "",
    endpoint: str = "",
    namespace: str | None = None,
) -> str:
    ns = f"\n  namespace: {namespace}" if namespace else ""
    label_lines = f"\n  labels:\n    {labels}" if labels else ""
    ns_sel = textwrap.indent(textwrap.dedent(namespace_selector), "  ")
    ep = textwrap.indent(textwrap.dedent(endpoint), "      ")
    return (
        "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\n"
        f"metadata:\n  name: {name}{ns}{label_lines}\n"
        f"spec:\n  selector:\n    matchLabels:\n      app: {app}\n"
        f"  endpoints:\n    - port: {port}\n{ep}"
        f"{ns_sel}"
    )


def docs(*parts: str) -> str:
    """Join manifests into one multi-document YAML text."""
    return "---\n".join(parts)
