"""The profile, ``gpuscale.yaml``: what manifests do not say (node pools, GPU prices,
provisioning and start-up times, per-replica capacity, Prometheus' scrape interval),
validated, with a documented default for every field. Pure:
:func:`gpuscale.inputs.read_profile` is the edge that reads the file.

```
gpuscale.yaml ─► load_profile_text ─► Profile (frozen; defaults and catalogue values filled)
                                  ├── cluster        ClusterSpec
                                  ├── node_pools     NodePool...   (labels/taints per provider)
                                  ├── autoscaler     AutoscalerSpec (cluster-autoscaler timings)
                                  ├── hpa            HpaSpec
                                  ├── prometheus     PrometheusSpec
                                  ├── keda           KedaSpec
                                  ├── timing         TimingSpec    (loop latencies)
                                  ├── workloads      {Deployment name: WorkloadSpec}
                                  │                    └── serving  ServingSpec (queue | vllm)
                                  └── catalogue      CatalogueEntry... (added to CATALOGUE)
```

Bad input raises :class:`~gpuscale.errors.ProfileError` with ``file:line`` and the fix.
``docs/profile.md`` documents every field.

Each name is imported from its module on first use (:func:`gpuscale._lazy.lazy_exports`):
the models take a while to create (pydantic builds a class per section), which
``gpuscale lint`` without ``--profile`` need not pay to read
``DOKS_LABEL_DOMAIN`` (``benchmarks/cli_startup.py``).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuscale.profile._load import load_profile_text
    from gpuscale.profile._model import (
        KEDA_CHART,
        KUBE_PROMETHEUS_STACK_CHART,
        TUNABLE,
        AutoscalerSpec,
        CalibrationSpec,
        CatalogueEntry,
        ClusterSpec,
        HpaSpec,
        KedaSpec,
        NodePool,
        Profile,
        PrometheusSpec,
        ServingSpec,
        StepCostSpec,
        TaintSpec,
        TimingSpec,
        Tunable,
        TuneSpec,
        WorkloadSpec,
    )
    from gpuscale.profile.catalogue import (
        CATALOGUE,
        DOKS_LABEL_DOMAIN,
        PRICES_READ,
        Size,
        size_for,
    )
else:
    from gpuscale._lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "gpuscale.profile._load": ("load_profile_text",),
            "gpuscale.profile._model": (
                "KEDA_CHART",
                "KUBE_PROMETHEUS_STACK_CHART",
                "AutoscalerSpec",
                "CalibrationSpec",
                "CatalogueEntry",
                "ClusterSpec",
                "HpaSpec",
                "KedaSpec",
                "NodePool",
                "Profile",
                "PrometheusSpec",
                "ServingSpec",
                "StepCostSpec",
                "TaintSpec",
                "TimingSpec",
                "TUNABLE",
                "TuneSpec",
                "Tunable",
                "WorkloadSpec",
            ),
            "gpuscale.profile.catalogue": (
                "CATALOGUE",
                "DOKS_LABEL_DOMAIN",
                "PRICES_READ",
                "Size",
                "size_for",
            ),
        },
    )

__all__ = [
    "CATALOGUE",
    "DOKS_LABEL_DOMAIN",
    "KEDA_CHART",
    "KUBE_PROMETHEUS_STACK_CHART",
    "PRICES_READ",
    "TUNABLE",
    "AutoscalerSpec",
    "CalibrationSpec",
    "CatalogueEntry",
    "ClusterSpec",
    "HpaSpec",
    "KedaSpec",
    "NodePool",
    "Profile",
    "PrometheusSpec",
    "ServingSpec",
    "Size",
    "StepCostSpec",
    "TaintSpec",
    "TimingSpec",
    "Tunable",
    "TuneSpec",
    "WorkloadSpec",
    "load_profile_text",
    "size_for",
]
