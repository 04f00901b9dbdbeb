"""Kubernetes, KEDA and prometheus-operator manifests: load (with file and line for every
key), validate against their schemas, read through typed views, match label selectors,
render back to YAML. Pure apart from :func:`load_paths`, the edge that reads files.

```
load_paths / load_text ─► ManifestSet of Manifest (body + Location of every key)
                             ├─► validate / validate_or_raise ─► ValidationProblem
                             ├─► Workload / Service / ServiceMonitor (typed views)
                             └─► render ─► YAML for kubectl apply -f -
```

``gpuscale.manifests.selectors`` holds label-selector and node-affinity matching;
``gpuscale.manifests.scaffold`` builds the corrected set ``gpuscale init`` writes.
"""

from gpuscale.manifests._loader import (
    PROFILE_NAMES,
    STDIN,
    YamlDocument,
    load_paths,
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
    Taint,
    Toleration,
    Workload,
    is_templated,
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
    "Taint",
    "Toleration",
    "ValidationProblem",
    "Workload",
    "YamlDocument",
    "format_path",
    "is_templated",
    "kube_versions",
    "load_paths",
    "load_text",
    "parse_yaml",
    "render",
    "validate",
    "validate_or_raise",
]
