"""The Kubernetes client for the live commands: construction, raw reads, errors.

Shared by ``gpuscale load``, ``watch``, ``deploy`` and ``verify``:

- :func:`connect` builds one ``kubernetes.client.ApiClient`` on the kubeconfig and
  context :func:`~gpuscale.live.kubeconfig.choose_kubeconfig` chooses (an explicit file,
  ``$KUBECONFIG`` — several files joined with ``:`` are merged as kubectl does — or
  ``~/.kube/config``) or, inside a pod, on the service account. No global configuration
  is touched, so tests can run many clients side by side.
- :class:`Kube` sends GETs (and, for ``deploy``, server-side-apply PATCHes) through the
  client's connection pool and authentication and returns the API server's JSON as
  plain dicts (the shapes the tests' fake API server
  serves and the pure functions of :mod:`gpuscale.live.watch` read), and opens
  port-forward streams with ``kubernetes.stream``.
- :func:`status_error` turns an API answer's status and ``Status`` body into a one-line
  :class:`~gpuscale.errors.GpuscaleError` with the fix (``deploy``'s
  :func:`~gpuscale.live.apply.apply_error` builds on it); :func:`kube_error` does the
  same for an ``ApiException`` or a connection failure.

The ``kubernetes`` package is imported by the functions that use it, so the pure
modules that map errors (:mod:`gpuscale.live.apply`) and ``deploy --dry-run=client``
do not pay for it.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import urllib3

from gpuscale._http_errors import answer_message, error_for_status, is_retryable
from gpuscale._redact import register
from gpuscale.errors import GpuscaleError, InputError, RetryableError, UnavailableError
from gpuscale.live.kubeconfig import KUBECONFIG_FIX, NoKubeconfigError, choose_kubeconfig

__all__ = [
    "KUBECONFIG_FIX",
    "ApiUnreachableError",
    "Kube",
    "KubeTarget",
    "connect",
    "context_namespace",
    "kube_error",
    "label_selector",
    "status_error",
]


@dataclass(frozen=True, slots=True)
class KubeTarget:
    """Where the client points, for messages (never credentials)."""

    host: str
    context: str | None
    namespace: str
    """The context's namespace, else ``default``."""


class ApiUnreachableError(RetryableError):
    """No answer from the API server at all (refused, unresolvable, timed out): unlike a
    status answer, it says nothing about the object asked for."""


def connect(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> tuple[Any, KubeTarget]:
    """An ``ApiClient`` and where it points.

    The kubeconfig and context are :func:`~gpuscale.live.kubeconfig.choose_kubeconfig`'s
    (``--kubeconfig``, else ``$KUBECONFIG``, else ``~/.kube/config``); with none at all,
    inside a pod, the service account. Every kubeconfig problem raises
    :class:`InputError` (exit 2) with the fix; a failing service account
    :class:`UnavailableError`.
    """
    from kubernetes import config as k8s_config  # noqa: PLC0415 - see the module doc
    from kubernetes.config.config_exception import ConfigException  # noqa: PLC0415
    from yaml import YAMLError  # type: ignore[import-untyped]  # noqa: PLC0415

    env = os.environ if environ is None else environ
    try:
        choice = choose_kubeconfig(kubeconfig=kubeconfig, context=context, environ=env, home=home)
    except NoKubeconfigError:
        if not env.get("KUBERNETES_SERVICE_HOST"):
            raise
        return _in_cluster()
    if choice.exec_command and shutil.which(choice.exec_command) is None:
        raise InputError(
            f"context {choice.context!r} gets its credentials by running "
            f"{choice.exec_command!r}, which is not on PATH",
            where=choice.path,
            fix=f"install {choice.exec_command} (doctl: https://docs.digitalocean.com/reference/"
            "doctl/how-to/install/), or write a kubeconfig with its own credentials: "
            "gpuscale cluster kubeconfig --merge",
        )
    try:
        api = k8s_config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=choice.path, context=choice.context
        )
    except ConfigException as exc:
        raise InputError(
            f"cannot use context {choice.context!r} ({_first_line(str(exc))})",
            where=choice.path,
            fix=KUBECONFIG_FIX,
        ) from None
    except (OSError, ValueError, TypeError, AttributeError, YAMLError) as exc:
        raise InputError(
            f"cannot use context {choice.context!r} ({type(exc).__name__}: "
            f"{_first_line(str(exc))})",
            where=choice.path,
            fix=KUBECONFIG_FIX,
        ) from None
    _register_credentials(api.configuration)
    return api, KubeTarget(api.configuration.host, choice.context, choice.namespace)


def _register_credentials(configuration: Any) -> None:
    """Register what the client holds after loading the kubeconfig, the token an exec
    plugin (``doctl``) or auth provider returned included: those never were in a file."""
    for value in (getattr(configuration, "api_key", None) or {}).values():
        register(str(value))
    register(getattr(configuration, "password", None))


def context_namespace(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> str | None:
    """The namespace :func:`connect` would place objects in, read from the files alone
    (no client, no exec plugin): the chosen context's (``default`` when it names none),
    the service account's inside a pod, None when there is no kubeconfig at all. Other
    kubeconfig problems raise as in :func:`connect`."""
    env = os.environ if environ is None else environ
    try:
        return choose_kubeconfig(
            kubeconfig=kubeconfig, context=context, environ=env, home=home
        ).namespace
    except NoKubeconfigError:
        if env.get("KUBERNETES_SERVICE_HOST"):
            return _service_account_namespace()
        return None


def _in_cluster() -> tuple[Any, KubeTarget]:
    from kubernetes import client as k8s  # noqa: PLC0415 - see the module doc
    from kubernetes import config as k8s_config  # noqa: PLC0415
    from kubernetes.config.config_exception import ConfigException  # noqa: PLC0415

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
    _register_credentials(configuration)
    namespace = _service_account_namespace()
    return k8s.ApiClient(configuration), KubeTarget(configuration.host, None, namespace)


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
    """The one-line error for a failed Kubernetes call about ``what``: an
    ``ApiException`` from the generated client, or a connection failure."""
    from kubernetes.client.exceptions import ApiException  # noqa: PLC0415 - see module doc

    if isinstance(exc, ApiException) and exc.status:
        return status_error(int(exc.status), str(exc.body or exc.reason or ""), what)
    return ApiUnreachableError(
        f"cannot reach the Kubernetes API server {host}".rstrip() + f" ({type(exc).__name__})",
        where=what,
        fix="check the network and the kubeconfig's server address; " + KUBECONFIG_FIX,
    )


def status_error(
    status: int,
    body: Any,
    what: str,
    *,
    fixes: Mapping[int, str] | None = None,
    retry_fix: str = "retry in a moment",
) -> GpuscaleError:
    """The one-line error for an API answer with HTTP ``status`` and ``Status`` ``body``
    (JSON text, bytes or a dict) about ``what``; the error class is
    :func:`gpuscale._http_errors.error_for_status`'s. ``fixes`` replaces the fix for a
    status where the caller knows better (``gpuscale deploy`` names the verbs it needs);
    ``retry_fix`` is the fix for a 429 or 5xx."""
    message = answer_message(body)
    said = f" ({message})" if message else ""
    text, fix = _STATUS_ERRORS.get(status) or (
        f"the API server answered {status}",
        retry_fix if is_retryable(status) else None,
    )
    return error_for_status(status, text + said, where=what, fix=(fixes or {}).get(status, fix))


_STATUS_ERRORS = {
    401: (
        "the API server rejected the credentials",
        "refresh them (DOKS: gpuscale cluster kubeconfig --merge; they expire)",
    ),
    403: (
        "not allowed",
        "use a context whose user may read (and port-forward to) these objects",
    ),
    404: ("not found", "check the name and --namespace"),
}


class Kube:
    """Raw JSON reads and port-forward streams through one ``ApiClient``.

    The requests use the client's own connection pool (its TLS settings, proxy and CA)
    and its authentication (``Configuration.auth_settings()``, which refreshes tokens
    from exec plugins), but not the generated API classes: with kubernetes 37 building
    ``CoreV1Api`` and its siblings costs about 5 s per process (413 pydantic-validated
    methods on CoreV1Api alone), which every ``gpuscale load`` would pay for a handful
    of GETs. Answers are the API server's JSON as dicts.
    """

    def __init__(self, api_client: Any, target: KubeTarget | None = None) -> None:
        self.api_client = api_client
        self.configuration = api_client.configuration
        self.target = target or KubeTarget(self.configuration.host, None, "default")

    def headers(self) -> dict[str, str]:
        """``Accept`` and the authentication headers the client would send; their values
        are registered as secrets (a refreshed exec-plugin token is new each time)."""
        headers = {"Accept": "application/json"}
        for setting in (self.configuration.auth_settings() or {}).values():
            if setting.get("in") == "header" and setting.get("value"):
                headers[str(setting["key"])] = str(setting["value"])
                register(str(setting["value"]))
        return headers

    def url(self, path: str, query: Mapping[str, str] | None = None) -> str:
        base = str(self.configuration.host).rstrip("/")
        return f"{base}{path}" + (f"?{urlencode(dict(query))}" if query else "")

    def get_json(
        self,
        path: str,
        query: Mapping[str, str] | None = None,
        *,
        what: str,
        missing_ok: bool = False,
    ) -> Any:
        """``GET path`` as JSON; a 404 is None when ``missing_ok``, other failures raise
        the error :func:`kube_error` maps them to."""
        try:
            response = self.api_client.rest_client.pool_manager.request(
                "GET",
                self.url(path, query),
                headers=self.headers(),
                timeout=urllib3.Timeout(connect=10, read=60),
                retries=False,
            )
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise kube_error(exc, what, host=self.target.host) from None
        if response.status >= 400:
            if missing_ok and response.status == 404:
                return None
            raise status_error(
                response.status, response.data.decode("utf-8", "replace"), what
            ) from None
        return json.loads(response.data)

    def send(
        self,
        method: str,
        path: str,
        query: Mapping[str, str] | None = None,
        *,
        body: Any = None,
        content_type: str = "application/json",
        what: str,
    ) -> tuple[int, Any]:
        """``method path`` with ``body`` sent as JSON (valid YAML too, so also for
        ``application/apply-patch+yaml``); the status and the answer's JSON (None when
        the answer is not JSON). HTTP errors are the caller's to read; a connection
        failure raises what :func:`kube_error` maps it to."""
        headers = self.headers()
        data = None
        if body is not None:
            headers["Content-Type"] = content_type
            data = json.dumps(body).encode()
        try:
            response = self.api_client.rest_client.pool_manager.request(
                method,
                self.url(path, query),
                body=data,
                headers=headers,
                timeout=urllib3.Timeout(connect=10, read=60),
                retries=False,
            )
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise kube_error(exc, what, host=self.target.host) from None
        try:
            doc = json.loads(response.data) if response.data else None
        except ValueError:
            doc = None
        return int(response.status), doc

    def portforward(self, namespace: str, pod: str, port: int) -> Any:
        """A ``kubernetes.stream`` ``PortForward`` to ``pod:port`` (raises ``ApiException``)."""
        from kubernetes.stream.ws_client import portforward_call  # noqa: PLC0415 - websocket

        return portforward_call(  # type: ignore[no-untyped-call]
            self.configuration,
            "GET",
            self.url(f"/api/v1/namespaces/{namespace}/pods/{pod}/portforward"),
            query_params=[("ports", str(port))],
            headers={k.lower(): v for k, v in self.headers().items()},
        )

    def deployment(self, namespace: str, name: str) -> dict[str, Any]:
        doc: dict[str, Any] = self.get_json(
            f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}",
            what=f"deployment/{namespace}/{name}",
        )
        return doc

    def deployments(self, namespace: str) -> list[dict[str, Any]]:
        return self._items(
            f"/apis/apps/v1/namespaces/{namespace}/deployments", what=f"deployments in {namespace}"
        )

    def pods(self, namespace: str, selector: str) -> list[dict[str, Any]]:
        return self._items(
            f"/api/v1/namespaces/{namespace}/pods",
            {"labelSelector": selector},
            what=f"pods {selector} in {namespace}",
        )

    def nodes(self) -> list[dict[str, Any]]:
        return self._items("/api/v1/nodes", what="nodes")

    def service(self, namespace: str, name: str) -> dict[str, Any]:
        doc: dict[str, Any] = self.get_json(
            f"/api/v1/namespaces/{namespace}/services/{name}", what=f"service/{namespace}/{name}"
        )
        return doc

    def endpoint_slices(self, namespace: str, service: str) -> list[dict[str, Any]]:
        return self._items(
            f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices",
            {"labelSelector": f"kubernetes.io/service-name={service}"},
            what=f"endpointslices of service/{namespace}/{service}",
        )

    def hpas(self, namespace: str) -> list[dict[str, Any]]:
        return self._items(
            f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers",
            what=f"horizontalpodautoscalers in {namespace}",
        )

    def scaled_objects(self, namespace: str) -> list[dict[str, Any]]:
        """KEDA ScaledObjects; none when KEDA's CRD is not installed (404)."""
        return self._items(
            f"/apis/keda.sh/v1alpha1/namespaces/{namespace}/scaledobjects",
            what=f"scaledobjects in {namespace}",
            missing_ok=True,
        )

    def events(self, namespace: str) -> list[dict[str, Any]]:
        return self._items(f"/api/v1/namespaces/{namespace}/events", what=f"events in {namespace}")

    def _items(
        self,
        path: str,
        query: Mapping[str, str] | None = None,
        *,
        what: str,
        missing_ok: bool = False,
    ) -> list[dict[str, Any]]:
        doc = self.get_json(path, query, what=what, missing_ok=missing_ok)
        return list((doc or {}).get("items") or [])
