"""The profile, ``gpuscale.yaml``: what manifests do not say (node pools, GPU prices,
provisioning and start-up times, per-replica capacity, Prometheus' scrape interval),
validated, with a documented default for every field. Pure apart from
:func:`load_profile`, the edge that reads the file.

```
gpuscale.yaml ─► load_profile ─► Profile (frozen; defaults and catalogue values filled)
                                  ├── cluster        ClusterSpec
                                  ├── node_pools     NodePool...   (labels/taints per provider)
                                  ├── autoscaler     AutoscalerSpec (cluster-autoscaler timings)
                                  ├── hpa            HpaSpec
                                  ├── prometheus     PrometheusSpec
                                  ├── keda           KedaSpec
                                  ├── workloads      {Deployment name: WorkloadSpec}
                                  └── catalogue      CatalogueEntry... (added to CATALOGUE)
```

Bad input raises :class:`~gpuscale.errors.ProfileError` with ``file:line`` and the fix.
``docs/profile.md`` documents every field.

Each name is imported on first use (PEP 562): the models cost about 40 ms to create
(pydantic reads every field's docstring from the source), which ``gpuscale lint`` without
``--profile`` need not pay for ``DOKS_LABEL_DOMAIN`` (``benchmarks/cli_startup.py``).
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuscale.profile._load import load_profile, load_profile_text
    from gpuscale.profile._model import (
        AutoscalerSpec,
        CatalogueEntry,
        ClusterSpec,
        HpaSpec,
        KedaSpec,
        NodePool,
        Profile,
        PrometheusSpec,
        TaintSpec,
        WorkloadSpec,
    )
    from gpuscale.profile.catalogue import (
        CATALOGUE,
        DOKS_LABEL_DOMAIN,
        PRICES_READ,
        Size,
        size_for,
    )

__all__ = [
    "CATALOGUE",
    "DOKS_LABEL_DOMAIN",
    "PRICES_READ",
    "AutoscalerSpec",
    "CatalogueEntry",
    "ClusterSpec",
    "HpaSpec",
    "KedaSpec",
    "NodePool",
    "Profile",
    "PrometheusSpec",
    "Size",
    "TaintSpec",
    "WorkloadSpec",
    "load_profile",
    "load_profile_text",
    "size_for",
]

# Where each name lives.
_HOMES = {
    "load_profile": "gpuscale.profile._load",
    "load_profile_text": "gpuscale.profile._load",
    "AutoscalerSpec": "gpuscale.profile._model",
    "CatalogueEntry": "gpuscale.profile._model",
    "ClusterSpec": "gpuscale.profile._model",
    "HpaSpec": "gpuscale.profile._model",
    "KedaSpec": "gpuscale.profile._model",
    "NodePool": "gpuscale.profile._model",
    "Profile": "gpuscale.profile._model",
    "PrometheusSpec": "gpuscale.profile._model",
    "TaintSpec": "gpuscale.profile._model",
    "WorkloadSpec": "gpuscale.profile._model",
    "CATALOGUE": "gpuscale.profile.catalogue",
    "DOKS_LABEL_DOMAIN": "gpuscale.profile.catalogue",
    "PRICES_READ": "gpuscale.profile.catalogue",
    "Size": "gpuscale.profile.catalogue",
    "size_for": "gpuscale.profile.catalogue",
}

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
