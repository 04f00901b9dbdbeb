"""The Kubernetes client for the live commands: construction, raw reads, errors.

Shared by ``gpuscale load``, ``watch`` and (later) ``deploy`` and ``verify``:

- :func:`connect` builds one ``kubernetes.client.ApiClient`` from a kubeconfig (an
  explicit file, ``$KUBECONFIG`` — several files joined with ``:`` are merged as kubectl
  does — or ``~/.kube/config``) or, inside a pod, from the service account. No global
  configuration is touched, so tests can run many clients side by side.
- :class:`Kube` wraps the typed APIs and returns the API server's JSON as plain dicts
  (``_preload_content=False``), the same shapes the tests' fake API server serves and
  the pure functions of :mod:`gpuscale.live.watch` read.
- :func:`kube_error` turns an ``ApiException`` or a connection failure into a one-line
  :class:`~gpuscale.errors.GpuscaleError` with the fix.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import urllib3
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException

from gpuscale.errors import GpuscaleError, InputError, RetryableError, UnavailableError

__all__ = [
    "KUBECONFIG_FIX",
    "Kube",
    "KubeTarget",
    "connect",
    "kube_error",
    "label_selector",
]

KUBECONFIG_FIX = (
    "point KUBECONFIG at the cluster's kubeconfig (on DOKS: gpuscale cluster kubeconfig "
    "--merge) or pass --kubeconfig/--context"
)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class KubeTarget:
    """Where the client points, for messages (never credentials)."""

    host: str
    context: str | None
    namespace: str
    """The context's namespace, else ``default``."""


def connect(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> tuple[Any, KubeTarget]:
    """An ``ApiClient`` and where it points.

    Order: ``kubeconfig`` if given; else ``$KUBECONFIG``; else ``~/.kube/config`` if it
    exists; else the in-cluster service account. Raises :class:`UnavailableError` when
    none is usable, :class:`InputError` when a kubeconfig is broken or lacks ``context``.
    """
    env = os.environ if environ is None else environ
    path = kubeconfig or env.get("KUBECONFIG") or None
    if path is None:
        default = (home or Path.home()) / ".kube" / "config"
        if default.exists():
            path = str(default)
    if path is None:
        if env.get("KUBERNETES_SERVICE_HOST"):
            configuration = k8s.Configuration()
            try:
                k8s_config.load_incluster_config(  # type: ignore[no-untyped-call]
                    client_configuration=configuration
                )
            except ConfigException as exc:
                raise UnavailableError(
                    f"in-cluster configuration failed ({exc})",
                    where="service account",
                    fix=KUBECONFIG_FIX,
                ) from None
            namespace = _service_account_namespace()
            return k8s.ApiClient(configuration), KubeTarget(configuration.host, None, namespace)
        raise UnavailableError(
            "no kubeconfig: KUBECONFIG is not set and ~/.kube/config does not exist",
            where="KUBECONFIG",
            fix=KUBECONFIG_FIX,
        )
    try:
        contexts, active = k8s_config.list_kube_config_contexts(  # type: ignore[no-untyped-call]
            config_file=path
        )
        chosen = active
        if context is not None:
            chosen = next((c for c in contexts if c.get("name") == context), None)
            if chosen is None:
                names = ", ".join(sorted(str(c.get("name")) for c in contexts))
                raise InputError(
                    f"no context {context!r} in the kubeconfig",
                    where=path,
                    fix=f"use one of {names}",
                )
        api = k8s_config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=path, context=context
        )
    except ConfigException as exc:
        raise InputError(
            f"cannot use the kubeconfig ({_first_line(str(exc))})", where=path, fix=KUBECONFIG_FIX
        ) from None
    except OSError as exc:
        raise InputError(
            f"cannot read the kubeconfig ({exc.strerror})", where=path, fix=KUBECONFIG_FIX
        ) from None
    namespace = str(((chosen or {}).get("context") or {}).get("namespace") or "default")
    name = (chosen or {}).get("name")
    return api, KubeTarget(api.configuration.host, str(name) if name else None, namespace)


def _service_account_namespace() -> str:
    try:
        return Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace").read_text().strip()
    except OSError:
        return "default"


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "unknown error"


def label_selector(selector: Mapping[str, Any]) -> str:
    """A ``metav1.LabelSelector`` as the query string the API takes.

    ``matchLabels`` become ``k=v``; ``matchExpressions`` become ``k in (a,b)``,
    ``k notin (a,b)``, ``k`` (Exists) and ``!k`` (DoesNotExist), as
    ``apimachinery/pkg/labels/selector.go`` prints them.
    """
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        key, operator = expr.get("key"), expr.get("operator")
        values = ",".join(sorted(str(v) for v in expr.get("values") or []))
        if operator == "In":
            parts.append(f"{key} in ({values})")
        elif operator == "NotIn":
            parts.append(f"{key} notin ({values})")
        elif operator == "Exists":
            parts.append(str(key))
        elif operator == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


def kube_error(exc: BaseException, what: str, *, host: str = "") -> GpuscaleError:
    """The one-line error for a failed Kubernetes call about ``what``."""
    if isinstance(exc, ApiException) and exc.status:
        status = int(exc.status)
        message = _api_message(exc)
        said = f" ({message})" if message else ""
        if status == 401:
            return UnavailableError(
                f"the API server rejected the credentials{said}",
                where=what,
                fix="refresh them (DOKS: gpuscale cluster kubeconfig --merge; they expire)",
            )
        if status == 403:
            return UnavailableError(
                f"not allowed{said}",
                where=what,
                fix="use a context whose user may read (and port-forward to) these objects",
            )
        if status == 404:
            return InputError(f"not found{said}", where=what, fix="check the name and --namespace")
        if status == 429 or status >= 500:
            return RetryableError(
                f"the API server answered {status}{said}", where=what, fix="retry in a moment"
            )
        return GpuscaleError(f"the API server answered {status}{said}", where=what)
    return RetryableError(
        f"cannot reach the Kubernetes API server {host}".rstrip() + f" ({type(exc).__name__})",
        where=what,
        fix="check the network and the kubeconfig's server address; " + KUBECONFIG_FIX,
    )


def _api_message(exc: ApiException) -> str:
    try:
        doc = json.loads(exc.body or "")
    except (TypeError, ValueError):
        return str(exc.reason or "")
    if isinstance(doc, dict) and doc.get("message"):
        return " ".join(str(doc["message"]).split())[:200]
    return str(exc.reason or "")


class Kube:
    """Raw JSON reads through the typed APIs of one ``ApiClient``.

    Every read returns the API server's JSON as dicts; ``None`` for a 404 where the
    caller asked for ``missing_ok``.
    """

    def __init__(self, api_client: Any, target: KubeTarget | None = None) -> None:
        self.api_client = api_client
        self.target = target or KubeTarget(api_client.configuration.host, None, "default")
        self.core = k8s.CoreV1Api(api_client)
        self.apps = k8s.AppsV1Api(api_client)
        self.autoscaling = k8s.AutoscalingV2Api(api_client)
        self.discovery = k8s.DiscoveryV1Api(api_client)
        self.custom = k8s.CustomObjectsApi(api_client)

    def _json(
        self,
        what: str,
        call: Callable[..., Any],
        *args: Any,
        missing_ok: bool = False,
        **kwargs: Any,
    ) -> Any:
        try:
            response = call(*args, _preload_content=False, **kwargs)
        except ApiException as exc:
            if missing_ok and exc.status == 404:
                return None
            raise kube_error(exc, what, host=self.target.host) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise kube_error(exc, what, host=self.target.host) from None
        return json.loads(response.data)

    def deployment(self, namespace: str, name: str) -> dict[str, Any]:
        doc: dict[str, Any] = self._json(
            f"deployment/{namespace}/{name}", self.apps.read_namespaced_deployment, name, namespace
        )
        return doc

    def deployments(self, namespace: str) -> list[dict[str, Any]]:
        doc = self._json(
            f"deployments in {namespace}", self.apps.list_namespaced_deployment, namespace
        )
        return list(doc.get("items") or [])

    def pods(self, namespace: str, selector: str) -> list[dict[str, Any]]:
        doc = self._json(
            f"pods {selector} in {namespace}",
            self.core.list_namespaced_pod,
            namespace,
            label_selector=selector,
        )
        return list(doc.get("items") or [])

    def nodes(self) -> list[dict[str, Any]]:
        return list((self._json("nodes", self.core.list_node) or {}).get("items") or [])

    def service(self, namespace: str, name: str) -> dict[str, Any]:
        doc: dict[str, Any] = self._json(
            f"service/{namespace}/{name}", self.core.read_namespaced_service, name, namespace
        )
        return doc

    def endpoint_slices(self, namespace: str, service: str) -> list[dict[str, Any]]:
        doc = self._json(
            f"endpointslices of service/{namespace}/{service}",
            self.discovery.list_namespaced_endpoint_slice,
            namespace,
            label_selector=f"kubernetes.io/service-name={service}",
        )
        return list(doc.get("items") or [])

    def hpas(self, namespace: str) -> list[dict[str, Any]]:
        doc = self._json(
            f"horizontalpodautoscalers in {namespace}",
            self.autoscaling.list_namespaced_horizontal_pod_autoscaler,
            namespace,
        )
        return list(doc.get("items") or [])

    def scaled_objects(self, namespace: str) -> list[dict[str, Any]]:
        doc = self._json(
            f"scaledobjects in {namespace}",
            self.custom.list_namespaced_custom_object,
            "keda.sh",
            "v1alpha1",
            namespace,
            "scaledobjects",
            missing_ok=True,
        )
        return list((doc or {}).get("items") or [])

    def events(self, namespace: str) -> list[dict[str, Any]]:
        doc = self._json(f"events in {namespace}", self.core.list_namespaced_event, namespace)
        return list(doc.get("items") or [])
