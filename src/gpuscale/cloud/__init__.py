"""DigitalOcean provisioning: DOKS clusters, GPU node pools and add-ons, through pydo.

Layout, from pure to I/O:

- :mod:`~gpuscale.cloud.spec`: :class:`DoksCluster`/:class:`PoolSpec`, made from the typed
  profile (:func:`cluster_spec_from_profile`).
- :mod:`~gpuscale.cloud.api`: every request as an :class:`ApiCall` value (what
  ``--dry-run`` prints) and the request bodies.
- :mod:`~gpuscale.cloud.plan`: checks against the API's options and sizes, prices,
  and the parsed state of a cluster.
- :mod:`~gpuscale.cloud.kubeconfig`: a kubeconfig from the credentials endpoint,
  written with mode 0600.
- :mod:`~gpuscale.cloud.client`: pydo with an injectable transport, the token, and the
  mapping of API errors to one-line errors with their fix.
- :mod:`~gpuscale.cloud.ops`: create, status, kubeconfig, enable-gpu-metrics, delete.
"""

from gpuscale.cloud.api import ApiCall
from gpuscale.cloud.client import DigitalOcean, make_client, read_token
from gpuscale.cloud.plan import ClusterStatus, CreateCheck, PriceRow
from gpuscale.cloud.spec import DoksCluster, PoolSpec, cluster_spec_from_profile

__all__ = [
    "ApiCall",
    "ClusterStatus",
    "CreateCheck",
    "DigitalOcean",
    "DoksCluster",
    "PoolSpec",
    "PriceRow",
    "cluster_spec_from_profile",
    "make_client",
    "read_token",
]
