"""The DigitalOcean API requests gpuscale sends, as values, and the bodies it builds.

Each request is an :class:`ApiCall`: the pydo operation that sends it with its keyword
arguments, and the HTTP method, path, query and JSON body that operation puts on the
wire. ``--dry-run`` prints these values; a real run hands the same values to pydo
(:mod:`gpuscale.cloud.client`), and the integration tests check, request by request,
that what pydo sent equals what the dry run printed.

Paths, bodies and field names follow DigitalOcean's OpenAPI specification
(``digitalocean/openapi@7c1300c`` ``specification/resources/kubernetes/`` and ``sizes/``)
and pydo's generated operations (``digitalocean/pydo`` ``src/pydo/operations``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from gpuscale.cloud.spec import DoksCluster, PoolSpec

__all__ = [
    "ENDPOINT",
    "PER_PAGE",
    "REDACTED",
    "ApiCall",
    "addons_body",
    "cluster_create_body",
    "create_cluster",
    "delete_cluster",
    "destroy_cluster_and_resources",
    "get_cluster",
    "get_credentials",
    "list_associated_resources",
    "list_clusters",
    "list_options",
    "list_sizes",
    "metrics_exporter_body",
    "pool_body",
    "update_cluster",
]

ENDPOINT = "https://api.digitalocean.com"
PER_PAGE = 200
"""The largest page the list endpoints accept (pydo validates ``per_page <= 200``)."""
REDACTED = "Bearer <redacted: DIGITALOCEAN_ACCESS_TOKEN>"


@dataclass(frozen=True, slots=True)
class ApiCall:
    """One request to the DigitalOcean API."""

    operation: str
    """pydo's operation, ``group.method``: ``kubernetes.create_cluster``, ``sizes.list``."""
    arguments: Mapping[str, Any]
    """pydo's keyword arguments for the operation (ids, paging, body)."""
    method: str
    """The HTTP method pydo sends."""
    path: str
    """The URL path pydo sends, ids filled in (or ``{cluster_id}`` in a plan)."""
    query: tuple[tuple[str, str], ...] = ()
    """Query parameters in the order pydo sends them."""
    body: Mapping[str, Any] | None = None
    """The JSON body, or None."""
    note: str = field(default="", compare=False)
    """Why the request is sent (printed by ``--dry-run``)."""

    def url(self, endpoint: str = ENDPOINT) -> str:
        """The full URL, query included."""
        query = f"?{urlencode(self.query)}" if self.query else ""
        return f"{endpoint}{self.path}{query}"

    def headers(self) -> dict[str, str]:
        """The headers that matter, the token redacted."""
        headers = {"Accept": "application/json", "Authorization": REDACTED}
        if self.body is not None:
            headers["Content-Type"] = "application/json"
        return headers

    def describe(self, endpoint: str = ENDPOINT) -> dict[str, Any]:
        """The request as ``--dry-run`` prints it (JSON-ready; the token never appears)."""
        doc: dict[str, Any] = {
            "method": self.method,
            "url": self.url(endpoint),
            "headers": self.headers(),
        }
        if self.body is not None:
            doc["body"] = json.loads(json.dumps(self.body))
        if self.note:
            doc["note"] = self.note
        return doc


def list_clusters(page: int = 1) -> ApiCall:
    """``GET /v2/kubernetes/clusters``: one page of the account's clusters."""
    return ApiCall(
        operation="kubernetes.list_clusters",
        arguments={"per_page": PER_PAGE, "page": page},
        method="GET",
        path="/v2/kubernetes/clusters",
        query=(("per_page", str(PER_PAGE)), ("page", str(page))),
        note="find the cluster by name (later pages while links.pages.next is set)",
    )


def list_options() -> ApiCall:
    """``GET /v2/kubernetes/options``: DOKS regions, versions and sizes."""
    return ApiCall(
        operation="kubernetes.list_options",
        arguments={},
        method="GET",
        path="/v2/kubernetes/options",
        note="check the region and version",
    )


def list_sizes(page: int = 1) -> ApiCall:
    """``GET /v2/sizes``: one page of Droplet sizes with prices and regions."""
    return ApiCall(
        operation="sizes.list",
        arguments={"per_page": PER_PAGE, "page": page},
        method="GET",
        path="/v2/sizes",
        query=(("per_page", str(PER_PAGE)), ("page", str(page))),
        note="check each pool's size in the region and read its price_hourly",
    )


def create_cluster(spec: DoksCluster) -> ApiCall:
    """``POST /v2/kubernetes/clusters`` with :func:`cluster_create_body`."""
    body = cluster_create_body(spec)
    return ApiCall(
        operation="kubernetes.create_cluster",
        arguments={"body": body},
        method="POST",
        path="/v2/kubernetes/clusters",
        body=body,
        note="create the cluster",
    )


def get_cluster(cluster_id: str, *, note: str = "") -> ApiCall:
    """``GET /v2/kubernetes/clusters/{id}``."""
    return ApiCall(
        operation="kubernetes.get_cluster",
        arguments={"cluster_id": cluster_id},
        method="GET",
        path=f"/v2/kubernetes/clusters/{cluster_id}",
        note=note,
    )


def update_cluster(cluster_id: str, body: Mapping[str, Any], *, note: str = "") -> ApiCall:
    """``PUT /v2/kubernetes/clusters/{id}``."""
    return ApiCall(
        operation="kubernetes.update_cluster",
        arguments={"cluster_id": cluster_id, "body": dict(body)},
        method="PUT",
        path=f"/v2/kubernetes/clusters/{cluster_id}",
        body=dict(body),
        note=note,
    )


def get_credentials(cluster_id: str, expiry_seconds: int) -> ApiCall:
    """``GET /v2/kubernetes/clusters/{id}/credentials?expiry_seconds=N``.

    ``expiry_seconds`` must be at least 1: the API answers 500 for 0 (pydo's integration
    test, TODO CON-7205), and 0 would mean DigitalOcean's 7-day default anyway.
    """
    if expiry_seconds < 1:
        raise ValueError("expiry_seconds must be at least 1")
    return ApiCall(
        operation="kubernetes.get_credentials",
        arguments={"cluster_id": cluster_id, "expiry_seconds": expiry_seconds},
        method="GET",
        path=f"/v2/kubernetes/clusters/{cluster_id}/credentials",
        query=(("expiry_seconds", str(expiry_seconds)),),
        note="short-lived credentials; gpuscale writes the kubeconfig from them",
    )


def list_associated_resources(cluster_id: str) -> ApiCall:
    """``GET …/destroy_with_associated_resources``: load balancers and volumes the cluster made."""
    return ApiCall(
        operation="kubernetes.list_associated_resources",
        arguments={"cluster_id": cluster_id},
        method="GET",
        path=f"/v2/kubernetes/clusters/{cluster_id}/destroy_with_associated_resources",
        note="list the load balancers, volumes and snapshots the cluster created",
    )


def delete_cluster(cluster_id: str) -> ApiCall:
    """``DELETE /v2/kubernetes/clusters/{id}``: the cluster and its nodes only."""
    return ApiCall(
        operation="kubernetes.delete_cluster",
        arguments={"cluster_id": cluster_id},
        method="DELETE",
        path=f"/v2/kubernetes/clusters/{cluster_id}",
        note="delete the cluster and its node pools (load balancers and volumes stay)",
    )


def destroy_cluster_and_resources(cluster_id: str) -> ApiCall:
    """``DELETE …/destroy_with_associated_resources/dangerous``: the cluster and what it made."""
    return ApiCall(
        operation="kubernetes.destroy_associated_resources_dangerous",
        arguments={"cluster_id": cluster_id},
        method="DELETE",
        path=f"/v2/kubernetes/clusters/{cluster_id}/destroy_with_associated_resources/dangerous",
        note="delete the cluster with its load balancers, volumes and volume snapshots",
    )


def pool_body(pool: PoolSpec) -> dict[str, Any]:
    """A ``kubernetes_node_pool`` object (``models/node_pool.yml``)."""
    body: dict[str, Any] = {"name": pool.name, "size": pool.size, "count": pool.initial_count}
    if pool.autoscaled:
        body["auto_scale"] = True
        body["min_nodes"] = pool.min_nodes
        body["max_nodes"] = pool.max_nodes
    if pool.labels:
        body["labels"] = dict(pool.labels)
    if pool.taints:
        body["taints"] = [{"key": t.key, "value": t.value, "effect": t.effect} for t in pool.taints]
    return body


def addons_body(spec: DoksCluster) -> dict[str, Any]:
    """The GPU add-on fields for the cluster's vendors.

    The device plugins are on by default for clusters with a pool of their vendor
    (``models/amd_gpu_device_plugin.yml``, ``nvidia_gpu_device_plugin.yml``); gpuscale
    sends them anyway so the request says what it wants. The AMD metrics exporter is
    off unless asked for (Terraform provider docs: "If not specified, the component
    will not be installed"), so it is sent when ``spec.gpu_metrics`` is true.
    """
    body: dict[str, Any] = {}
    if "amd" in spec.vendors:
        body["amd_gpu_device_plugin"] = {"enabled": True}
        if spec.gpu_metrics:
            body["amd_gpu_device_metrics_exporter_plugin"] = {"enabled": True}
    if "nvidia" in spec.vendors:
        body["nvidia_gpu_device_plugin"] = {"enabled": True}
    return body


def cluster_create_body(spec: DoksCluster) -> dict[str, Any]:
    """The body of ``POST /v2/kubernetes/clusters`` (``models/cluster.yml``)."""
    body: dict[str, Any] = {
        "name": spec.name,
        "region": spec.region,
        "version": spec.version,
    }
    if spec.vpc_uuid:
        body["vpc_uuid"] = spec.vpc_uuid
    if spec.ha is not None:
        body["ha"] = spec.ha
    if spec.tags:
        body["tags"] = list(spec.tags)
    body["node_pools"] = [pool_body(p) for p in spec.pools]
    body.update(addons_body(spec))
    return body


def metrics_exporter_body(name: str) -> dict[str, Any]:
    """The tutorial's separate update: ``PUT`` with the name (required) and the exporter on."""
    return {"name": name, "amd_gpu_device_metrics_exporter_plugin": {"enabled": True}}
