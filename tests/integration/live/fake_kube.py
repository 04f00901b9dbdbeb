"""A tiny Kubernetes API server on loopback, for the live commands' tests.

It answers the reads gpuscale makes (GET of objects and lists, label selectors) with
the JSON the real API server returns (object shapes from the Kubernetes API reference
and KEDA's CRDs), rejects requests without the expected bearer token with a real
``Status`` body, serves discovery (``/api/v1``, ``/apis/<group>/<version>`` as
``APIResourceList``; a CRD's group version only once the CRD is stored), implements
server-side apply (``PATCH`` with ``application/apply-patch+yaml``: 201 for a create, 200
for an update, the resourceVersion moving only when something changed, conflicts with
other field managers as 409 unless ``force=true``, ``dryRun=All`` storing nothing, a
missing namespace as 404), and the port-forward subresource the way the API server
and kubelet do for WebSocket clients: a ``101 Switching Protocols`` upgrade with
subprotocol ``v4.channel.k8s.io``, the two initial frames carrying the port number on
the data and error channels, then data frames prefixed with their channel byte,
relayed to a real TCP server standing in for the pod. The official Python client
talks to it unchanged, through a kubeconfig file that points at it.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import select
import socket
import struct
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

TOKEN = "kube-test-token-5f2b9c"
_WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any = None


# kind -> (groupVersion, plural, namespaced): the built-in resources the fake serves.
BUILTIN: dict[str, tuple[str, str, bool]] = {
    "Namespace": ("v1", "namespaces", False),
    "Node": ("v1", "nodes", False),
    "Pod": ("v1", "pods", True),
    "Service": ("v1", "services", True),
    "ConfigMap": ("v1", "configmaps", True),
    "Secret": ("v1", "secrets", True),
    "ServiceAccount": ("v1", "serviceaccounts", True),
    "Event": ("v1", "events", True),
    "Deployment": ("apps/v1", "deployments", True),
    "EndpointSlice": ("discovery.k8s.io/v1", "endpointslices", True),
    "HorizontalPodAutoscaler": ("autoscaling/v2", "horizontalpodautoscalers", True),
    "CustomResourceDefinition": (
        "apiextensions.k8s.io/v1", "customresourcedefinitions", False,
    ),
    "APIService": ("apiregistration.k8s.io/v1", "apiservices", False),
}  # fmt: skip
# Kinds whose objects tests put directly (their CRDs may or may not be stored).
CUSTOM: dict[str, tuple[str, str, bool]] = {
    "ScaledObject": ("keda.sh/v1alpha1", "scaledobjects", True),
    "TriggerAuthentication": ("keda.sh/v1alpha1", "triggerauthentications", True),
    "ServiceMonitor": ("monitoring.coreos.com/v1", "servicemonitors", True),
    "Prometheus": ("monitoring.coreos.com/v1", "prometheuses", True),
}
_SUBRESOURCES = {"deployments": ["deployments/scale", "deployments/status"],
                 "pods": ["pods/portforward", "pods/log", "pods/status"]}  # fmt: skip
_BOOKKEEPING = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")


def status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


class FakeKube:
    """Objects by API path; lists and selectors computed from them."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.backends: dict[tuple[str, str, int], tuple[str, int]] = {}
        self.seen: list[Seen] = []
        self.forwards: list[tuple[str, str, int]] = []
        self.denied: dict[str, int] = {}  # path (any method) or "PATCH <path>" -> status
        self.patch_errors: dict[str, tuple[int, dict[str, Any]]] = {}
        self.applied: dict[str, dict[str, Any]] = {}  # path -> {manager: last applied body}
        self.hidden_discovery: dict[str, int] = {}  # groupVersion -> GETs still answered 404
        self._version = 100
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- objects ------------------------------------------------------------
    def put(self, obj: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.objects[object_path(obj)] = obj
        return obj

    def delete(self, obj: dict[str, Any]) -> None:
        with self._lock:
            self.objects.pop(object_path(obj), None)

    def applied_as(self, obj: dict[str, Any], manager: str) -> None:
        """Record ``obj`` as applied by another field manager (kubectl, helm), so that a
        different value for one of its fields conflicts."""
        self.put(obj)
        self.applied.setdefault(object_path(obj), {})[manager] = json.loads(json.dumps(obj))

    # ---- resources and discovery ---------------------------------------------------
    def resources(self) -> dict[str, tuple[str, str, bool]]:
        """Every kind served now: the built-ins and those of the stored CRDs."""
        served = dict(BUILTIN)
        with self._lock:
            crds = [
                o for k, o in self.objects.items()
                if k.startswith("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/")
            ]  # fmt: skip
        for crd in crds:
            spec = crd["spec"]
            for version in spec.get("versions") or []:
                if version.get("served", True):
                    served[spec["names"]["kind"]] = (
                        f"{spec['group']}/{version['name']}",
                        spec["names"]["plural"],
                        spec.get("scope", "Namespaced") == "Namespaced",
                    )
        return served

    def discovery(self, path: str) -> tuple[int, dict[str, Any]] | None:
        if path == "/api/v1":
            group_version = "v1"
        elif path.startswith("/apis/") and path.count("/") == 3:
            group_version = path[len("/apis/") :]
        else:
            return None
        if self.hidden_discovery.get(group_version, 0) > 0:
            self.hidden_discovery[group_version] -= 1
            return 404, status(404, "NotFound", "the server could not find the requested resource")
        listed = []
        for kind, (gv, plural, namespaced) in sorted(self.resources().items()):
            if gv != group_version:
                continue
            verbs = ["create", "delete", "get", "list", "patch", "update", "watch"]
            listed.append({"name": plural, "singularName": kind.lower(),
                           "namespaced": namespaced, "kind": kind, "verbs": verbs})  # fmt: skip
            for sub in _SUBRESOURCES.get(plural, []):
                listed.append({"name": sub, "singularName": "", "namespaced": namespaced,
                               "kind": kind, "verbs": ["get", "patch", "update"]})  # fmt: skip
        if not listed:
            return 404, status(404, "NotFound", "the server could not find the requested resource")
        return 200, {"kind": "APIResourceList", "apiVersion": "v1",
                     "groupVersion": group_version, "resources": listed}  # fmt: skip

    def _route(self, path: str) -> tuple[str, str, str | None, str] | None:
        """``(kind, groupVersion, namespace, name)`` of an object path, if served."""
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "v1"]:
            group_version, rest = "v1", parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 3:
            group_version, rest = f"{parts[1]}/{parts[2]}", parts[3:]
        else:
            return None
        namespace = None
        if len(rest) == 4 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        if len(rest) != 2:
            return None
        for kind, (gv, plural, namespaced) in self.resources().items():
            if gv == group_version and plural == rest[0] and namespaced == (namespace is not None):
                return kind, gv, namespace, rest[1]
        return None

    # ---- server-side apply ------------------------------------------------------------
    def apply(
        self, path: str, query: dict[str, str], content_type: str, raw: bytes
    ) -> tuple[int, dict[str, Any]]:
        if path in self.denied or f"PATCH {path}" in self.denied:
            route = self._route(path)
            plural = path.rstrip("/").split("/")[-2]
            ns = route[2] if route else None
            return 403, status(
                403,
                "Forbidden",
                (
                    f'{plural} "{path.rsplit("/", 1)[-1]}" is forbidden: User "dev" cannot patch '
                    f'resource "{plural}"' + (f' in the namespace "{ns}"' if ns else "")
                ),
            )
        if path in self.patch_errors:
            return self.patch_errors[path]
        if content_type != "application/apply-patch+yaml":
            return 415, status(
                415,
                "UnsupportedMediaType",
                (
                    "the body of the request was in an unknown format - accepted media types "
                    "include: application/json-patch+json, application/merge-patch+json, "
                    "application/apply-patch+yaml"
                ),
            )
        manager = query.get("fieldManager", "")
        if not manager:
            return 400, status(400, "BadRequest", "PATCH, fieldManager is required for apply")
        route = self._route(path)
        if route is None:
            return 404, status(404, "NotFound", "the server could not find the requested resource")
        kind, group_version, namespace, name = route
        body = json.loads(raw)
        if body.get("kind") != kind or body.get("apiVersion") != group_version:
            return 400, status(
                400,
                "BadRequest",
                (
                    f"the API version in the data ({body.get('apiVersion')}) does not match the "
                    f"expected API version ({group_version})"
                ),
            )
        meta = body.get("metadata") or {}
        if meta.get("name") != name:
            return 400, status(
                400,
                "BadRequest",
                (
                    f"the name of the object ({meta.get('name')}) does not match the name on the "
                    f"URL ({name})"
                ),
            )
        if namespace is not None and f"/api/v1/namespaces/{namespace}" not in self.objects:
            return 404, status(404, "NotFound", f'namespaces "{namespace}" not found')
        with self._lock:
            existing = self.objects.get(path)
            managers = self.applied.get(path, {})
            conflicts = sorted(
                (other, field_path)
                for other, applied in managers.items() if other != manager
                for field_path, value in _leaves(body)
                if _differs(dict(_leaves(applied)), field_path, value)
                and not field_path.startswith(".metadata.")
            )  # fmt: skip
            if conflicts and query.get("force") != "true":
                causes = [{"reason": "FieldManagerConflict", "field": f,
                           "message": f'conflict with "{m}" using {group_version}'}
                          for m, f in conflicts]  # fmt: skip
                listed = "\n".join(f'- conflict with "{m}" using {group_version}: {f}'
                                    for m, f in conflicts)  # fmt: skip
                doc = status(
                    409,
                    "Conflict",
                    (
                        f"Apply failed with {len(conflicts)} conflict"
                        f"{'s' if len(conflicts) > 1 else ''}: " + listed.lstrip("- ")
                    ),
                )
                doc["details"] = {"name": name, "kind": kind.lower() + "s", "causes": causes}
                return 409, doc
            merged = _strip(existing) if existing else {}
            previous = managers.get(manager)
            if previous is not None:
                for field_path, _ in _leaves(previous):
                    if field_path not in dict(_leaves(body)) and not any(
                        field_path in dict(_leaves(a)) for m, a in managers.items() if m != manager
                    ):
                        _remove(merged, field_path)
            merged = _merge(merged, body)
            if namespace is not None:
                merged.setdefault("metadata", {})["namespace"] = namespace
            created = existing is None
            changed = created or merged != _strip(existing)
            result = json.loads(json.dumps(merged))
            old_meta = (existing or {}).get("metadata") or {}
            meta_out = result.setdefault("metadata", {})
            meta_out["uid"] = old_meta.get("uid") or f"uid-{name}"
            meta_out["creationTimestamp"] = (
                old_meta.get("creationTimestamp") or "2026-11-30T10:00:00Z"
            )
            generation = int(old_meta.get("generation") or 0)
            if created or (changed and result.get("spec") != (existing or {}).get("spec")):
                generation += 1
            meta_out["generation"] = generation
            dry_run = query.get("dryRun") == "All"
            if changed and not dry_run:
                self._version += 1
                meta_out["resourceVersion"] = str(self._version)
            else:
                meta_out["resourceVersion"] = old_meta.get("resourceVersion") or str(self._version)
            meta_out["managedFields"] = [
                {"manager": m, "operation": "Apply", "apiVersion": group_version,
                 "fieldsType": "FieldsV1", "fieldsV1": {}}
                for m in sorted({*managers, manager})
            ]  # fmt: skip
            if existing and "status" in existing:
                result["status"] = existing["status"]
            if kind == "CustomResourceDefinition":
                result["status"] = {"conditions": [
                    {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts"},
                    {"type": "Established", "status": "True", "reason": "InitialNamesAccepted"},
                ]}  # fmt: skip
            if not dry_run:
                self.objects[path] = result
                self.applied.setdefault(path, {})[manager] = body
        return (201 if created else 200), result

    def pod_backend(self, namespace: str, pod: str, port: int, address: tuple[str, int]) -> None:
        self.backends[(namespace, pod, port)] = address

    # ---- server -------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> None:
        fake = self

        class Handler(_Handler):
            kube = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def write_kubeconfig(
        self, path: Path, *, namespace: str = "default", token: str = TOKEN
    ) -> Path:
        path.write_text(
            "apiVersion: v1\nkind: Config\n"
            f"clusters: [{{name: fake, cluster: {{server: '{self.url}'}}}}]\n"
            f"users: [{{name: fake, user: {{token: {token}}}}}]\n"
            "contexts: [{name: fake, context: {cluster: fake, user: fake, "
            f"namespace: {namespace}}}}}]\n"
            "current-context: fake\n",
            encoding="utf-8",
        )
        return path

    def gets(self, prefix: str) -> list[Seen]:
        return [s for s in self.seen if s.path.startswith(prefix)]

    # ---- answers ----------------------------------------------------------------
    def answer(self, path: str, query: dict[str, str]) -> tuple[int, dict[str, Any]]:
        found = self.discovery(path)
        if found is not None and path not in self.objects:
            return found
        if path in self.denied:
            code = self.denied[path]
            reason = {403: "Forbidden", 500: "InternalError"}.get(code, "Error")
            message = (
                'nodes is forbidden: User "dev" cannot list resource "nodes" at the cluster scope'
                if code == 403
                else "etcdserver: request timed out"
            )
            return code, status(code, reason, message)
        with self._lock:
            if path in self.objects:
                return 200, self.objects[path]
            items = [
                obj
                for key, obj in sorted(self.objects.items())
                if key.rsplit("/", 1)[0] == path or _across_namespaces(key, path)
            ]
        selector = query.get("labelSelector", "")
        if selector:
            items = [o for o in items if _matches(o, selector)]
        if items or _is_collection(path):
            kind = _list_kind(path)
            return 200, {
                "kind": kind,
                "apiVersion": "v1",
                "metadata": {"resourceVersion": "1"},
                "items": items,
            }
        return 404, status(404, "NotFound", f"{path.rsplit('/', 1)[-1]} not found")


_COLLECTIONS = (
    "deployments", "pods", "nodes", "services", "events", "endpointslices",
    "horizontalpodautoscalers", "scaledobjects", "namespaces", "configmaps",
    "customresourcedefinitions", "apiservices", "servicemonitors", "prometheuses",
)  # fmt: skip


def _across_namespaces(key: str, path: str) -> bool:
    """Whether the object at ``key`` is in the all-namespaces list ``path``
    (``/apis/g/v/plural`` holds ``/apis/g/v/namespaces/<ns>/plural/<name>``)."""
    prefix, _, plural = path.rpartition("/")
    parts = key.split("/")
    return (
        "/namespaces/" not in path
        and key.startswith(f"{prefix}/namespaces/")
        and len(parts) == len(path.split("/")) + 3
        and parts[-2] == plural
    )


def _is_collection(path: str) -> bool:
    return path.rsplit("/", 1)[-1] in _COLLECTIONS


def _list_kind(path: str) -> str:
    return {
        "deployments": "DeploymentList",
        "pods": "PodList",
        "nodes": "NodeList",
        "services": "ServiceList",
        "events": "EventList",
        "endpointslices": "EndpointSliceList",
        "horizontalpodautoscalers": "HorizontalPodAutoscalerList",
        "scaledobjects": "ScaledObjectList",
    }.get(path.rsplit("/", 1)[-1], "List")


def _matches(obj: dict[str, Any], selector: str) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for term in selector.split(","):
        key, _, value = term.partition("=")
        if labels.get(key) != value:
            return False
    return True


def object_path(obj: dict[str, Any]) -> str:
    api = obj["apiVersion"]
    prefix = "/api/v1" if api == "v1" else f"/apis/{api}"
    plural = {kind: entry[1] for kind, entry in (BUILTIN | CUSTOM).items()}[obj["kind"]]
    meta = obj["metadata"]
    if "namespace" in meta:
        return f"{prefix}/namespaces/{meta['namespace']}/{plural}/{meta['name']}"
    return f"{prefix}/{plural}/{meta['name']}"


class _Handler(BaseHTTPRequestHandler):
    kube: FakeKube
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_PATCH(self) -> None:
        parts = urlsplit(self.path)
        query = dict(parse_qsl(parts.query))
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self.kube.seen.append(
            Seen("PATCH", parts.path, query,
                 {k.lower(): v for k, v in self.headers.items()}, body)
        )  # fmt: skip
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self._json(401, status(401, "Unauthorized", "Unauthorized"))
            return
        code, doc = self.kube.apply(parts.path, query, self.headers.get("Content-Type", ""), raw)
        self._json(code, doc)

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = dict(parse_qsl(parts.query))
        self.kube.seen.append(
            Seen("GET", parts.path, query, {k.lower(): v for k, v in self.headers.items()})
        )
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self._json(401, status(401, "Unauthorized", "Unauthorized"))
            return
        if parts.path.endswith("/portforward"):
            self._portforward(parts.path, query)
            return
        code, doc = self.kube.answer(parts.path, query)
        self._json(code, doc)

    def _json(self, code: int, doc: dict[str, Any]) -> None:
        body = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _portforward(self, path: str, query: dict[str, str]) -> None:
        segments = path.strip("/").split("/")
        namespace, pod = segments[3], segments[5]
        port = int(query.get("ports", "0"))
        if f"/api/v1/namespaces/{namespace}/pods/{pod}" not in self.kube.objects:
            self._json(404, status(404, "NotFound", f'pods "{pod}" not found'))
            return
        if self.headers.get("Upgrade", "").lower() != "websocket":
            self._json(400, status(400, "BadRequest", "upgrade request required"))
            return
        offered = [p.strip() for p in self.headers.get("Sec-WebSocket-Protocol", "").split(",")]
        if "v4.channel.k8s.io" not in offered:
            self._json(400, status(400, "BadRequest", "unsupported subprotocol"))
            return
        key = self.headers["Sec-WebSocket-Key"]
        accept = base64.b64encode(hashlib.sha1((key + _WS_GUID).encode()).digest()).decode()
        self.send_response(101, "Switching Protocols")
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.send_header("Sec-WebSocket-Protocol", "v4.channel.k8s.io")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        self.kube.forwards.append((namespace, pod, port))
        _relay(self.connection, self.kube.backends.get((namespace, pod, port)), port, pod)


def _leaves(doc: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Leaf fields as ``(.a.b, value)``; lists are atomic, as for untyped fields."""
    if isinstance(doc, dict) and doc:
        out: list[tuple[str, Any]] = []
        for key, value in doc.items():
            if prefix == "" and key in ("apiVersion", "kind", "status"):
                continue
            out.extend(_leaves(value, f"{prefix}.{key}"))
        return out
    return [(prefix, doc)]


def _differs(owned: dict[str, Any], field_path: str, value: Any) -> bool:
    return field_path in owned and owned[field_path] != value


def _strip(obj: dict[str, Any] | None) -> dict[str, Any]:
    doc = json.loads(json.dumps(obj or {}))
    doc.pop("status", None)
    for key in _BOOKKEEPING:
        (doc.get("metadata") or {}).pop(key, None)
    return doc


def _merge(base: Any, patch: Any) -> Any:
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for key, value in patch.items():
            out[key] = _merge(base.get(key), value)
        return out
    return json.loads(json.dumps(patch))


def _remove(doc: dict[str, Any], field_path: str) -> None:
    keys = field_path.strip(".").split(".")
    node: Any = doc
    for key in keys[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(keys[-1], None)


def _send_frame(sock: socket.socket, payload: bytes, opcode: int = 0x2) -> None:
    header = bytes([0x80 | opcode])
    n = len(payload)
    if n < 126:
        header += bytes([n])
    elif n < 1 << 16:
        header += bytes([126]) + struct.pack("!H", n)
    else:
        header += bytes([127]) + struct.pack("!Q", n)
    sock.sendall(header + payload)


class _Frames:
    """Parses client frames (always masked) from what has arrived on a socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def read_available(self) -> tuple[list[tuple[int, bytes]], bool]:
        """Frames complete after one ``recv``, and whether the peer closed."""
        chunk = self.sock.recv(65536)
        self.buffer += chunk
        frames = []
        while True:
            frame = self._parse()
            if frame is None:
                break
            frames.append(frame)
        return frames, not chunk

    def _parse(self) -> tuple[int, bytes] | None:
        buf = self.buffer
        if len(buf) < 2:
            return None
        opcode, length, offset = buf[0] & 0x0F, buf[1] & 0x7F, 2
        if length == 126:
            if len(buf) < 4:
                return None
            length, offset = struct.unpack("!H", buf[2:4])[0], 4
        elif length == 127:
            if len(buf) < 10:
                return None
            length, offset = struct.unpack("!Q", buf[2:10])[0], 10
        mask = b"\0\0\0\0"
        if buf[1] & 0x80:
            if len(buf) < offset + 4:
                return None
            mask, offset = buf[offset : offset + 4], offset + 4
        if len(buf) < offset + length:
            return None
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(buf[offset : offset + length]))
        self.buffer = buf[offset + length :]
        return opcode, payload


def _relay(ws: socket.socket, backend: tuple[str, int] | None, port: int, pod: str) -> None:
    port_bytes = struct.pack("<H", port)
    _send_frame(ws, b"\x00" + port_bytes)
    _send_frame(ws, b"\x01" + port_bytes)
    pod_sock: socket.socket | None = None
    try:
        if backend is None:
            raise OSError("connection refused")
        pod_sock = socket.create_connection(backend, timeout=5)
    except OSError:
        _send_frame(
            ws,
            b"\x01"
            + f"error forwarding port {port} to pod {pod}: dial tcp4 127.0.0.1:{port}: "
            "connect: connection refused".encode(),
        )
        _send_frame(ws, struct.pack("!H", 1000), opcode=0x8)
        return
    frames = _Frames(ws)
    try:
        while True:
            readable, _, _ = select.select([ws, pod_sock], [], [], 5)
            if not readable:
                continue
            if pod_sock in readable:
                data = pod_sock.recv(65536)
                if not data:
                    _send_frame(ws, struct.pack("!H", 1000), opcode=0x8)
                    return
                _send_frame(ws, b"\x00" + data)
            if ws in readable:
                received, closed = frames.read_available()
                for opcode, payload in received:
                    if opcode == 0x8:
                        return
                    if opcode == 0x9:
                        _send_frame(ws, payload, opcode=0xA)
                    elif opcode == 0x2 and payload[:1] == b"\x00":
                        pod_sock.sendall(payload[1:])
                if closed:
                    return
    except OSError:
        return
    finally:
        with contextlib.suppress(OSError):
            pod_sock.close()
