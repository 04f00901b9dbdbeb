"""A tiny Kubernetes API server on loopback, for the live commands' tests.

It answers the reads gpuscale makes (GET of objects and lists, label selectors) with
the JSON the real API server returns (object shapes from the Kubernetes API reference
and KEDA's CRDs), rejects requests without the expected bearer token with a real
``Status`` body, and implements the port-forward subresource the way the API server
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
        self.denied: dict[str, int] = {}
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
                obj for key, obj in sorted(self.objects.items()) if key.rsplit("/", 1)[0] == path
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
    "horizontalpodautoscalers", "scaledobjects",
)  # fmt: skip


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
    plural = {
        "Deployment": "deployments", "Pod": "pods", "Node": "nodes", "Service": "services",
        "Event": "events", "EndpointSlice": "endpointslices",
        "HorizontalPodAutoscaler": "horizontalpodautoscalers", "ScaledObject": "scaledobjects",
    }[obj["kind"]]  # fmt: skip
    meta = obj["metadata"]
    if "namespace" in meta:
        return f"{prefix}/namespaces/{meta['namespace']}/{plural}/{meta['name']}"
    return f"{prefix}/{plural}/{meta['name']}"


class _Handler(BaseHTTPRequestHandler):
    kube: FakeKube
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

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
