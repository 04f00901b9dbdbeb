"""A fake DigitalOcean API behind pydo's real client.

:class:`FakeDigitalOcean` keeps clusters in memory and answers the endpoints gpuscale
uses with bodies shaped like the real API's (DigitalOcean OpenAPI
``specification/resources/kubernetes/models/*.yml``, ``sizes/models/size.yml``; the
cluster object mirrors the example in pydo's ``tests/mocked/data/kubernetes_data.py``).
:class:`FakeTransport` is an azure-core ``RequestsTransport`` whose ``requests`` session
routes to it, so pydo's whole pipeline (auth policy, headers, retry policy, JSON) runs
as in production and every request is recorded as it would have left the machine.
Retry sleeps are recorded, never slept.
"""

from __future__ import annotations

import io
import json
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import requests
from azure.core.pipeline.transport import RequestsTransport
from requests.adapters import HTTPAdapter
from urllib3 import HTTPResponse

TOKEN = "dop_v1_fake0123456789abcdef0123456789abcdef0123456789abcdef01234567"

OPTIONS = {
    "options": {
        "regions": [
            {"name": "Atlanta 1", "slug": "atl1"},
            {"name": "New York 2", "slug": "nyc2"},
            {"name": "Toronto 1", "slug": "tor1"},
            {"name": "Amsterdam 3", "slug": "ams3"},
        ],
        "versions": [
            {
                "slug": "1.33.1-do.0",
                "kubernetes_version": "1.33.1",
                "supported_features": ["cluster-autoscaler", "token-authentication"],
            },
            {
                "slug": "1.32.5-do.1",
                "kubernetes_version": "1.32.5",
                "supported_features": ["cluster-autoscaler", "token-authentication"],
            },
        ],
        "sizes": [
            {"name": "s-4vcpu-8gb", "slug": "s-4vcpu-8gb"},
            {"name": "gpu-mi300x1-192gb", "slug": "gpu-mi300x1-192gb"},
            {"name": "gpu-h100x1-80gb", "slug": "gpu-h100x1-80gb"},
        ],
    }
}


def size(slug: str, price: float, regions: list[str], gpu: dict[str, Any] | None = None) -> dict:
    doc: dict[str, Any] = {
        "slug": slug,
        "memory": 8192,
        "vcpus": 4,
        "disk": 160,
        "transfer": 5.0,
        "price_monthly": round(price * 672, 2),
        "price_hourly": price,
        "regions": regions,
        "available": True,
        "description": "Basic",
    }
    if gpu:
        doc["gpu_info"] = gpu
    return doc


SIZES = [
    size("s-4vcpu-8gb", 0.07143, ["atl1", "nyc2", "tor1", "ams3"]),
    size(
        "gpu-mi300x1-192gb",
        1.99,
        ["atl1", "nyc2", "tor1"],
        {"count": 1, "model": "amd_mi300x", "vram": {"amount": 192, "unit": "gib"}},
    ),
    size(
        "gpu-h100x1-80gb",
        3.39,
        ["nyc2", "tor1", "ams3"],
        {"count": 1, "model": "nvidia_h100", "vram": {"amount": 80, "unit": "gib"}},
    ),
]


@dataclass
class Sent:
    """One request as it reached the wire."""

    method: str
    path: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    body: Any
    raw: bytes

    @property
    def url_text(self) -> str:
        return self.path + ("?" + "&".join(f"{k}={v}" for k, v in self.query) if self.query else "")


@dataclass
class Fault:
    method: str
    path: str
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1


class FakeDigitalOcean:
    """In-memory DOKS: clusters advance from provisioning to running as they are polled."""

    def __init__(self, *, polls_to_run: int = 3, sizes_page_size: int | None = None) -> None:
        self.clusters: dict[str, dict[str, Any]] = {}
        self.sent: list[Sent] = []
        self.faults: list[Fault] = []
        self.polls_to_run = polls_to_run
        self.sizes_page_size = sizes_page_size
        self.associated: dict[str, Any] = {
            "load_balancers": [{"id": "4de7ac8b-495b-4884-9a69-1050c6793cd6", "name": "lb-001"}],
            "volumes": [{"id": "ba49449a-7435-11ea-b89e-0a58ac14480f", "name": "volume-001"}],
            "volume_snapshots": [],
        }
        self._polls: dict[str, int] = {}

    # ---- test helpers -------------------------------------------------
    def fail(self, method: str, path: str, status: int, message: str, **kw: Any) -> None:
        ids = {
            401: "unauthorized",
            403: "forbidden",
            404: "not_found",
            422: "unprocessable_entity",
            429: "too_many_requests",
            500: "server_error",
            503: "service_unavailable",
        }
        body = {
            "id": ids.get(status, "error"),
            "message": message,
            "request_id": "4851a473-1621-42ea-b2f9-5071c0ea8414",
        }
        self.faults.append(Fault(method, path, status, body, **kw))

    def add_cluster(
        self,
        name: str,
        *,
        state: str = "running",
        pools: list[dict] | None = None,
        region: str = "atl1",
        **extra: Any,
    ) -> dict[str, Any]:
        body = {
            "name": name,
            "region": region,
            "version": "1.33.1-do.0",
            "node_pools": pools or [{"name": "general", "size": "s-4vcpu-8gb", "count": 2}],
        }
        body.update(extra)
        cluster = self._new_cluster(body)
        cluster["status"] = {"state": state, "message": state}
        for pool in cluster["node_pools"]:
            for node in pool["nodes"]:
                node["status"]["state"] = "running" if state == "running" else "provisioning"
        self.clusters[cluster["id"]] = cluster
        return cluster

    def calls(self) -> list[tuple[str, str]]:
        return [(s.method, s.url_text) for s in self.sent]

    # ---- the API --------------------------------------------------------
    def handle(
        self, method: str, url: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(url)
        body = json.loads(raw) if raw else None
        self.sent.append(Sent(method, parts.path, parse_qsl(parts.query), headers, body, raw))
        for fault in self.faults:
            if fault.method == method and parts.path == fault.path and fault.times > 0:
                fault.times -= 1
                return (
                    fault.status,
                    {"content-type": "application/json", **fault.headers},
                    json.dumps(fault.body).encode(),
                )
        status, doc = self._route(method, parts.path, dict(parse_qsl(parts.query)), body)
        rate = {
            "ratelimit-limit": "5000",
            "ratelimit-remaining": "4990",
            "ratelimit-reset": "1767225600",
        }
        if doc is None:
            return status, rate, b""
        return (
            status,
            {"content-type": "application/json; charset=utf-8", **rate},
            json.dumps(doc).encode(),
        )

    def _route(self, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        segments = path.strip("/").split("/")
        if path == "/v2/kubernetes/options" and method == "GET":
            return 200, OPTIONS
        if path == "/v2/sizes" and method == "GET":
            return 200, self._page(SIZES, "sizes", query, self.sizes_page_size)
        if path == "/v2/kubernetes/clusters":
            if method == "GET":
                return 200, self._page(
                    list(self.clusters.values()), "kubernetes_clusters", query, None
                )
            if method == "POST":
                cluster = self._new_cluster(body)
                self.clusters[cluster["id"]] = cluster
                return 201, {"kubernetes_cluster": cluster}
        if len(segments) >= 4 and segments[:3] == ["v2", "kubernetes", "clusters"]:
            cluster = self.clusters.get(segments[3])
            if cluster is None:
                return 404, {
                    "id": "not_found",
                    "message": "The resource you were accessing could not be found.",
                }
            rest = segments[4:]
            if not rest and method == "GET":
                self._advance(cluster)
                return 200, {"kubernetes_cluster": cluster}
            if not rest and method == "PUT":
                for key, value in body.items():
                    cluster[key] = value
                return 202, {"kubernetes_cluster": cluster}
            if not rest and method == "DELETE":
                del self.clusters[cluster["id"]]
                return 204, None
            if rest == ["credentials"] and method == "GET":
                return 200, {
                    "server": f"https://{cluster['id']}.k8s.ondigitalocean.com",
                    "certificate_authority_data": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==",
                    "client_certificate_data": None,
                    "client_key_data": None,
                    "token": "doks-cluster-token-ab12cd34ef56",
                    "expires_at": "2026-12-01T11:50:28.889080521Z",
                }
            if rest == ["destroy_with_associated_resources"] and method == "GET":
                return 200, self.associated
            if rest == ["destroy_with_associated_resources", "dangerous"] and method == "DELETE":
                del self.clusters[cluster["id"]]
                return 204, None
        return 404, {
            "id": "not_found",
            "message": "The resource you were accessing could not be found.",
        }

    @staticmethod
    def _page(
        items: list[Any], key: str, query: dict[str, str], page_size: int | None
    ) -> dict[str, Any]:
        per_page = min(int(query.get("per_page", 20)), page_size or 10**9)
        page = int(query.get("page", 1))
        chunk = items[(page - 1) * per_page : page * per_page]
        pages: dict[str, str] = {}
        if page * per_page < len(items):
            pages["next"] = (
                f"https://api.digitalocean.com/v2/{key}?page={page + 1}&per_page={per_page}"
            )
        return {key: chunk, "links": {"pages": pages}, "meta": {"total": len(items)}}

    def _new_cluster(self, body: dict[str, Any]) -> dict[str, Any]:
        cid = str(uuid.uuid4())
        pools = []
        for pool in body["node_pools"]:
            pools.append(
                {
                    "id": str(uuid.uuid4()),
                    "name": pool["name"],
                    "size": pool["size"],
                    "count": pool["count"],
                    "tags": ["k8s", f"k8s:{cid}", "k8s:worker"],
                    "labels": pool.get("labels"),
                    "taints": pool.get("taints", []),
                    "auto_scale": pool.get("auto_scale", False),
                    "min_nodes": pool.get("min_nodes", 0) if pool.get("auto_scale") else 0,
                    "max_nodes": pool.get("max_nodes", 0) if pool.get("auto_scale") else 0,
                    "nodes": [
                        {
                            "id": str(uuid.uuid4()),
                            "name": "",
                            "status": {"state": "provisioning"},
                            "droplet_id": "",
                            "created_at": "2026-11-30T16:00:11Z",
                            "updated_at": "2026-11-30T16:00:11Z",
                        }
                        for _ in range(pool["count"])
                    ],
                }
            )
        cluster = {
            "id": cid,
            "name": body["name"],
            "region": body["region"],
            "version": "1.33.1-do.0"
            if body.get("version") in ("latest", "1.33")
            else body.get("version"),
            "cluster_subnet": "10.244.0.0/16",
            "service_subnet": "10.245.0.0/16",
            "vpc_uuid": body.get("vpc_uuid", "c33931f2-a26a-4e61-b85c-4e95a2ec431b"),
            "ipv4": "",
            "endpoint": "",
            "tags": ["k8s", f"k8s:{cid}"],
            "node_pools": pools,
            "maintenance_policy": {"start_time": "00:00", "duration": "4h0m0s", "day": "any"},
            "auto_upgrade": False,
            "status": {"state": "provisioning", "message": "provisioning"},
            "created_at": "2026-11-30T16:00:11Z",
            "updated_at": "2026-11-30T16:00:11Z",
            "surge_upgrade": False,
            "registry_enabled": False,
            "ha": bool(body.get("ha", False)),
        }
        for key in (
            "amd_gpu_device_plugin",
            "amd_gpu_device_metrics_exporter_plugin",
            "nvidia_gpu_device_plugin",
        ):
            if key in body:
                cluster[key] = body[key]
        self._polls[cid] = 0
        return cluster

    def _advance(self, cluster: dict[str, Any]) -> None:
        cid = cluster["id"]
        self._polls[cid] = self._polls.get(cid, 0) + 1
        if self._polls[cid] >= self.polls_to_run and cluster["status"]["state"] == "provisioning":
            cluster["status"] = {"state": "running", "message": ""}
            cluster["endpoint"] = f"https://{cid}.k8s.ondigitalocean.com"
        if self._polls[cid] >= self.polls_to_run + 1:
            for pool in cluster["node_pools"]:
                for node in pool["nodes"]:
                    node["status"]["state"] = "running"


class _Adapter(HTTPAdapter):
    """Answers from :class:`FakeDigitalOcean` instead of a socket; requests builds the
    response from a urllib3 response as it does for real ones."""

    def __init__(self, fake: FakeDigitalOcean) -> None:
        super().__init__()
        self.fake = fake

    def send(
        self, request: requests.PreparedRequest, *args: Any, **kwargs: Any
    ) -> requests.Response:
        raw = request.body or b""
        if isinstance(raw, str):
            raw = raw.encode()
        status, headers, content = self.fake.handle(
            request.method or "GET", request.url or "", dict(request.headers), raw
        )
        wire = HTTPResponse(
            body=io.BytesIO(content),
            headers={**headers, "content-length": str(len(content))},
            status=status,
            preload_content=False,
            decode_content=False,
        )
        return self.build_response(request, wire)


class FakeTransport(RequestsTransport):
    """pydo's default transport, its session wired to :class:`FakeDigitalOcean`."""

    def __init__(self, fake: FakeDigitalOcean) -> None:
        session = requests.Session()
        session.trust_env = False
        session.mount("https://", _Adapter(fake))
        session.mount("http://", _Adapter(fake))
        super().__init__(session=session, session_owner=False)
        self.slept: list[float] = []

    def sleep(self, duration: float) -> None:
        self.slept.append(duration)


class FakeClock:
    """A clock that moves only when ``sleep`` is called."""

    def __init__(self, start: float = 1_767_225_000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
