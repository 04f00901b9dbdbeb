"""``kubectl port-forward`` in-process: a loopback port that reaches a pod's port.

Each connection accepted on ``127.0.0.1:<local_port>`` opens its own port-forward
stream through the API server (``GET /api/v1/namespaces/{ns}/pods/{pod}/portforward``
upgraded to a WebSocket, subprotocol ``v4.channel.k8s.io``; the Python client's
``kubernetes.stream`` port-forward) and bytes are copied both ways until either side
closes. HTTP clients that keep connections alive therefore open few streams.

What kubelet reports on the stream's error channel (for instance "connection refused"
when nothing listens on the pod's port) is kept in :attr:`PortForwarder.errors` so the
caller can say why a request failed.

Shared by ``gpuscale load`` and ``watch`` (Prometheus behind a Service), and usable by
``verify``.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from types import TracebackType
from typing import Any

from kubernetes.client.exceptions import ApiException

from gpuscale.errors import GpuscaleError, RetryableError, UnavailableError
from gpuscale.live.kube import Kube, kube_error

__all__ = ["PortForwarder"]

_CHUNK = 64 * 1024


class PortForwarder:
    """Forwards ``127.0.0.1:local_port`` to ``pod:port`` in ``namespace``.

    Use as a context manager; :meth:`start` checks that a stream can be opened (so a
    wrong pod name or a missing permission fails at once, with the fix) before it
    starts accepting connections.
    """

    def __init__(
        self, kube: Kube, namespace: str, pod: str, port: int, *, local_port: int = 0
    ) -> None:
        self.kube = kube
        self.namespace = namespace
        self.pod = pod
        self.port = port
        self.local_port = local_port
        self.errors: list[str] = []
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._closing = threading.Event()
        self._connections: set[threading.Thread] = set()
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<local_port>``."""
        return f"http://127.0.0.1:{self.local_port}"

    def __enter__(self) -> PortForwarder:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def start(self) -> None:
        """Check the pod can be reached, then listen on loopback."""
        probe = self._open()
        probe.close()
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.local_port))
        listener.listen(64)
        self.local_port = listener.getsockname()[1]
        self._listener = listener
        self._thread = threading.Thread(
            target=self._accept, name=f"port-forward {self.pod}:{self.port}", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        """Stop accepting and close every open stream."""
        self._closing.set()
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            threads = list(self._connections)
        for thread in threads:
            thread.join(timeout=5)

    def _open(self) -> Any:
        try:
            return self.kube.portforward(self.namespace, self.pod, self.port)
        except ApiException as exc:
            raise self._error(exc) from None

    def _error(self, exc: ApiException) -> GpuscaleError:
        what = f"port-forward to pod/{self.namespace}/{self.pod}:{self.port}"
        if exc.status:
            return kube_error(exc, what, host=self.kube.target.host)
        reason = str(exc.reason or "")
        for code, error in (
            ("401", UnavailableError(
                "the API server rejected the credentials", where=what,
                fix="refresh them (DOKS: gpuscale cluster kubeconfig --merge)")),
            ("403", UnavailableError(
                "not allowed to port-forward", where=what,
                fix="the user needs create on pods/portforward in this namespace")),
            ("404", UnavailableError(
                "no such pod", where=what, fix="check --namespace and the pod name")),
        ):  # fmt: skip
            if f" {code} " in f" {reason} ":
                return error
        first = reason.splitlines()[0] if reason else "no reason"
        return RetryableError(
            f"cannot open the port-forward stream ({first})",
            where=what,
            fix="check the kubeconfig's server address and that the pod is Running",
        )

    def _accept(self) -> None:
        assert self._listener is not None
        while not self._closing.is_set():
            try:
                ready, _, _ = select.select([self._listener], [], [], 0.2)
                if not ready:
                    continue
                conn, _ = self._listener.accept()
            except (OSError, ValueError):
                return
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            with self._lock:
                self._connections.add(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            try:
                stream = self._open()
            except GpuscaleError as error:
                self.errors.append(error.one_line())
                return
            remote = stream.socket(self.port)
            try:
                _pump(conn, remote, self._closing)
            finally:
                stream.close()
            message = stream.error(self.port)
            if message:
                self.errors.append(" ".join(str(message).split()))
        finally:
            with contextlib.suppress(OSError):
                conn.close()
            with self._lock:
                self._connections.discard(threading.current_thread())


def _pump(local: socket.socket, remote: Any, closing: threading.Event) -> None:
    """Copy bytes both ways until one side closes (or the forwarder closes)."""
    sockets = [local, remote]
    while not closing.is_set():
        readable, _, _ = select.select(sockets, [], [], 0.2)
        for source in readable:
            target = remote if source is local else local
            try:
                data = source.recv(_CHUNK)
            except OSError:
                return
            if not data:
                return
            try:
                target.sendall(data)
            except OSError:
                return
