"""Kubernetes, KEDA and prometheus-operator manifests: load (with file and line for every
key), validate against their schemas, read through typed views, match label selectors,
render back to YAML. Pure: :func:`gpuscale.inputs.read_manifests` is the edge that reads
files, directories and stdin, and hands their text to :func:`load_text`.

```
load_text ─► ManifestSet of Manifest (body + Location of every key)
                             ├─► validate / validate_or_raise ─► ValidationProblem
                             │     (schemas, then what the API server's validation code
                             │      and KEDA refuse: _admission; docs/validation.md)
                             ├─► Workload / Service / ServiceMonitor (typed views)
                             └─► render ─► YAML for kubectl apply -f -
```

The Kubernetes values the views hold (taints, tolerations, selectors, quantities,
durations) are :mod:`gpuscale.kube`'s; ``gpuscale.manifests.scaffold`` builds the corrected
set ``gpuscale init`` writes.

Each name is imported from its module on first use (:func:`gpuscale._lazy.lazy_exports`):
``DEFAULT_KUBE_VERSION`` or the typed views do not bring the YAML parser (ruamel.yaml),
and only :func:`validate` brings jsonschema (``benchmarks/cli_startup.py``).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuscale.manifests._loader import (
        PROFILE_NAMES,
        STDIN,
        YamlDocument,
        load_text,
        parse_yaml,
    )
    from gpuscale.manifests._model import (
        IGNORE_COMMENT,
        KeyPath,
        Location,
        Manifest,
        ManifestSet,
        format_path,
        nearest_location,
    )
    from gpuscale.manifests._render import render
    from gpuscale.manifests._validate import (
        CRD_SCHEMAS,
        DEFAULT_KUBE_VERSION,
        ValidationProblem,
        kube_versions,
        validate,
        validate_or_raise,
    )
    from gpuscale.manifests._views import (
        GPU_RESOURCES,
        WORKLOAD_KINDS,
        Container,
        ContainerPort,
        Endpoint,
        NamespaceSelector,
        Probe,
        Service,
        ServiceMonitor,
        ServicePort,
        Workload,
        is_templated,
    )
else:
    from gpuscale._lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "gpuscale.manifests._loader": (
                "PROFILE_NAMES",
                "STDIN",
                "YamlDocument",
                "load_text",
                "parse_yaml",
            ),
            "gpuscale.manifests._model": (
                "IGNORE_COMMENT",
                "KeyPath",
                "Location",
                "Manifest",
                "ManifestSet",
                "format_path",
                "nearest_location",
            ),
            "gpuscale.manifests._render": ("render",),
            "gpuscale.manifests._validate": (
                "CRD_SCHEMAS",
                "DEFAULT_KUBE_VERSION",
                "ValidationProblem",
                "kube_versions",
                "validate",
                "validate_or_raise",
            ),
            "gpuscale.manifests._views": (
                "GPU_RESOURCES",
                "WORKLOAD_KINDS",
                "Container",
                "ContainerPort",
                "Endpoint",
                "NamespaceSelector",
                "Probe",
                "Service",
                "ServiceMonitor",
                "ServicePort",
                "Workload",
                "is_templated",
            ),
        },
    )

__all__ = [
    "CRD_SCHEMAS",
    "DEFAULT_KUBE_VERSION",
    "GPU_RESOURCES",
    "IGNORE_COMMENT",
    "PROFILE_NAMES",
    "STDIN",
    "WORKLOAD_KINDS",
    "Container",
    "ContainerPort",
    "Endpoint",
    "KeyPath",
    "Location",
    "Manifest",
    "ManifestSet",
    "NamespaceSelector",
    "Probe",
    "Service",
    "ServiceMonitor",
    "ServicePort",
    "ValidationProblem",
    "Workload",
    "YamlDocument",
    "format_path",
    "is_templated",
    "kube_versions",
    "load_text",
    "nearest_location",
    "parse_yaml",
    "render",
    "validate",
    "validate_or_raise",
]
