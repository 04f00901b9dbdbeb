"""``gpuscale install``: kube-prometheus-stack and KEDA through the ``helm`` binary.

There is no Helm for Python that does not shell out to ``helm`` or bundle young native
bindings (PyPI has no Linux ``helm`` wheel; ``pyhelm3`` runs the ``helm`` executable),
so gpuscale runs the real ``helm`` and says how to install it when it is missing.
Everything that decides what to run is pure (:func:`install_plan`); :class:`HelmRunner`
only executes.

Choices, and why (``docs/commands/install.md`` explains them to users):

- ``helm upgrade --install … --wait`` for both releases: idempotent, and it returns only
  when the Deployments are ready.
- kube-prometheus-stack first, because KEDA's chart creates ServiceMonitors for its own
  metrics, which need the prometheus-operator CRDs.
- ServiceMonitor selection: ``serviceMonitorSelectorNilUsesHelmValues: false`` (and the
  same for PodMonitors). With the chart's default (true) Prometheus selects only
  ServiceMonitors labelled ``release: <release name>``
  (``charts/kube-prometheus-stack/templates/prometheus/prometheus.yaml``), and a
  ServiceMonitor without the label is silently not scraped, which KEDA then reads as 0
  (the tutorial's mistakes 3 and 6). gpuscale installs a stack of its own, so selecting
  every ServiceMonitor in every namespace is the safe default; the ``release`` label still
  works, it is just no longer required. The profile's
  ``prometheus.selects_all_servicemonitors: false`` keeps the chart's selection instead
  (``gpuscale lint`` then requires the label).
- KEDA's metrics API server (``external.metrics.k8s.io``) is always part of the KEDA
  chart; gpuscale turns on the ServiceMonitors for KEDA's operator and metrics server so
  ``keda_scaler_metrics_value`` (what KEDA read from the trigger) lands in Prometheus.
"""

from __future__ import annotations

import io
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from gpuscale._redact import child_environment, redact
from gpuscale.errors import InputError, UnavailableError
from gpuscale.kube import format_duration
from gpuscale.profile import KEDA_CHART, KUBE_PROMETHEUS_STACK_CHART, Profile

__all__ = [
    "HELM_INSTALL_FIX",
    "KEDA_REPO",
    "PROMETHEUS_REPO",
    "HelmCommand",
    "HelmRunner",
    "InstallSpec",
    "Runner",
    "chart_versions",
    "find_helm",
    "install_plan",
    "install_spec_from_profile",
    "install_summary",
    "keda_values",
    "prometheus_duration",
    "prometheus_values",
    "values_yaml",
]

HELM_INSTALL_FIX = (
    "install Helm 3 (https://helm.sh/docs/intro/install/; e.g. "
    "curl -fsSL https://raw.githubusercontent.com/helm/helm/main/scripts/get-helm-3 | bash) "
    "and make sure `helm` is on PATH"
)
PROMETHEUS_REPO = ("prometheus-community", "https://prometheus-community.github.io/helm-charts")
KEDA_REPO = ("kedacore", "https://kedacore.github.io/charts")


@dataclass(frozen=True, slots=True)
class InstallSpec:
    """What ``gpuscale install`` installs and where."""

    prometheus_release: str = "prometheus"
    """Helm release name of kube-prometheus-stack."""
    prometheus_namespace: str = "monitoring"
    """Namespace for kube-prometheus-stack; the Prometheus URL is
    ``http://prometheus-operated.<namespace>.svc.cluster.local:9090``."""
    prometheus_chart_version: str | None = KUBE_PROMETHEUS_STACK_CHART
    """The kube-prometheus-stack chart version or constraint (``helm --version``); default
    the 88.5 series gpuscale's values were checked against; None installs the newest."""
    scrape_interval: str | None = None
    """Prometheus' global scrape interval (``30s``); None keeps the operator's default (30s).
    From the profile it is always set (``prometheus.scrape_interval``, default 30s)."""
    select_all_servicemonitors: bool = True
    """Make Prometheus select every ServiceMonitor and PodMonitor in every namespace
    (``*SelectorNilUsesHelmValues: false``); False keeps the chart's selection by the
    ``release: <release>`` label. From the profile's
    ``prometheus.selects_all_servicemonitors``."""
    keda_release: str = "keda"
    """Helm release name of KEDA."""
    keda_namespace: str = "keda"
    """Namespace for KEDA."""
    keda_chart_version: str | None = KEDA_CHART
    """The KEDA chart version or constraint (``helm --version``); default the 2.20 series
    gpuscale's values and KEDA model were checked against; None installs the newest."""
    timeout: str = "10m"
    """How long ``helm --wait`` waits for each release to become ready."""

    @property
    def prometheus_url(self) -> str:
        """The in-cluster address a ScaledObject's prometheus trigger should use."""
        return f"http://prometheus-operated.{self.prometheus_namespace}.svc.cluster.local:9090"


@dataclass(frozen=True, slots=True)
class HelmCommand:
    """One ``helm`` invocation, with the values files it reads."""

    args: tuple[str, ...]
    """Arguments after ``helm``; values files appear by their file name."""
    values: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """File name → the values document to write there before running."""
    note: str = ""

    def shell(self, directory: Path | None = None) -> str:
        """The command as a shell line, values files placed in ``directory``."""
        args = [
            str(directory / a) if directory is not None and a in self.values else a
            for a in self.args
        ]
        return shlex.join(["helm", *args])


def install_spec_from_profile(profile: Profile) -> InstallSpec:
    """The :class:`InstallSpec` of a loaded profile: its ``prometheus`` (release,
    namespace, chart_version, scrape_interval, selects_all_servicemonitors) and ``keda``
    (release, namespace, chart_version) sections, already validated by
    :mod:`gpuscale.profile`."""
    return InstallSpec(
        prometheus_release=profile.prometheus.release,
        prometheus_namespace=profile.prometheus.namespace,
        prometheus_chart_version=profile.prometheus.chart_version,
        scrape_interval=prometheus_duration(profile.prometheus.scrape_interval),
        select_all_servicemonitors=profile.prometheus.selects_all_servicemonitors,
        keda_release=profile.keda.release,
        keda_namespace=profile.keda.namespace,
        keda_chart_version=profile.keda.chart_version,
    )


def chart_versions(spec: InstallSpec) -> str:
    """Which chart versions ``spec`` installs, in one line, saying when one is not
    gpuscale's default (``prometheus.chart_version``/``keda.chart_version`` in the
    profile) or not pinned at all."""

    def one(chart: str, version: str | None, default: str, key: str) -> str:
        if version is None:
            return f"{chart} newest (unpinned: {key} is null)"
        if version == default:
            return f"{chart} {version} (the series gpuscale was checked against)"
        return f"{chart} {version} (from {key}; gpuscale was checked against {default})"

    return "chart versions: " + "; ".join(
        (
            one(
                "kube-prometheus-stack",
                spec.prometheus_chart_version,
                KUBE_PROMETHEUS_STACK_CHART,
                "prometheus.chart_version",
            ),
            one("keda", spec.keda_chart_version, KEDA_CHART, "keda.chart_version"),
        )
    )


def install_summary(spec: InstallSpec) -> list[str]:
    """What ``gpuscale install`` tells the user once both releases are ready: where they
    are, the Prometheus address for triggers, and what a ServiceMonitor needs to be
    scraped, which depends on :attr:`InstallSpec.select_all_servicemonitors` (the
    profile's ``prometheus.selects_all_servicemonitors``)."""
    if spec.select_all_servicemonitors:
        monitors = (
            "ServiceMonitors: Prometheus selects every ServiceMonitor in every namespace "
            "(serviceMonitorSelectorNilUsesHelmValues: false); no release label needed"
        )
    else:
        monitors = (
            "ServiceMonitors: Prometheus selects only ServiceMonitors labelled "
            f"release: {spec.prometheus_release} (the chart's selection, kept because the "
            "profile says prometheus.selects_all_servicemonitors: false); give yours "
            f"metadata.labels.release: {spec.prometheus_release}, or it is not scraped"
        )
    return [
        f"installed kube-prometheus-stack (release {spec.prometheus_release}, namespace "
        f"{spec.prometheus_namespace}) and KEDA (release {spec.keda_release}, namespace "
        f"{spec.keda_namespace}); both ready",
        f"Prometheus address for ScaledObject triggers: {spec.prometheus_url}",
        monitors,
    ]


def prometheus_duration(seconds: float) -> str:
    """Seconds as a prometheus-operator ``Duration`` (``30s``, ``1m30s``, ``1500ms``): whole
    numbers of each unit only, so fractions of a second are written in milliseconds."""
    if seconds != int(seconds):
        return f"{round(seconds * 1000)}ms"
    return format_duration(seconds)


def prometheus_values(spec: InstallSpec) -> dict[str, Any]:
    """Values for kube-prometheus-stack (see the module docstring for why)."""
    prometheus_spec: dict[str, Any] = {}
    if spec.select_all_servicemonitors:
        prometheus_spec["serviceMonitorSelectorNilUsesHelmValues"] = False
        prometheus_spec["podMonitorSelectorNilUsesHelmValues"] = False
    if spec.scrape_interval:
        prometheus_spec["scrapeInterval"] = spec.scrape_interval
    return {"prometheus": {"prometheusSpec": prometheus_spec}}


def keda_values(spec: InstallSpec) -> dict[str, Any]:
    """Values for KEDA: CRDs installed, ServiceMonitors for KEDA's own metrics."""
    del spec
    return {
        "crds": {"install": True},
        "prometheus": {
            "operator": {"enabled": True, "serviceMonitor": {"enabled": True}},
            "metricServer": {"enabled": True, "serviceMonitor": {"enabled": True}},
        },
    }


def install_plan(
    spec: InstallSpec, *, kube_context: str | None = None, kubeconfig: str | None = None
) -> list[HelmCommand]:
    """The helm commands ``gpuscale install`` runs, in order."""
    _check_spec(spec)
    cluster_args: list[str] = []
    if kubeconfig:
        cluster_args += ["--kubeconfig", kubeconfig]
    if kube_context:
        cluster_args += ["--kube-context", kube_context]
    prom_file = "kube-prometheus-stack.values.yaml"
    keda_file = "keda.values.yaml"
    prom = [
        "upgrade", "--install", spec.prometheus_release,
        f"{PROMETHEUS_REPO[0]}/kube-prometheus-stack",
        "--namespace", spec.prometheus_namespace, "--create-namespace",
        "--values", prom_file, "--wait", "--timeout", spec.timeout,
    ]  # fmt: skip
    if spec.prometheus_chart_version:
        prom += ["--version", spec.prometheus_chart_version]
    keda = [
        "upgrade", "--install", spec.keda_release, f"{KEDA_REPO[0]}/keda",
        "--namespace", spec.keda_namespace, "--create-namespace",
        "--values", keda_file, "--wait", "--timeout", spec.timeout,
    ]  # fmt: skip
    if spec.keda_chart_version:
        keda += ["--version", spec.keda_chart_version]
    return [
        HelmCommand(("repo", "add", *PROMETHEUS_REPO, "--force-update"), note="chart repository"),
        HelmCommand(("repo", "add", *KEDA_REPO, "--force-update"), note="chart repository"),
        HelmCommand(("repo", "update", PROMETHEUS_REPO[0], KEDA_REPO[0]), note="chart indexes"),
        HelmCommand(
            (*prom, *cluster_args),
            values={prom_file: prometheus_values(spec)},
            note="kube-prometheus-stack; waits until it is ready",
        ),
        HelmCommand(
            (*keda, *cluster_args),
            values={keda_file: keda_values(spec)},
            note="KEDA (operator, metrics API server, CRDs); waits until it is ready",
        ),
    ]


def find_helm(environ: Mapping[str, str] | None = None) -> str:
    """The path of ``helm`` on PATH; :class:`UnavailableError` with how to install it."""
    path = (environ if environ is not None else os.environ).get("PATH")
    found = shutil.which("helm", path=path)
    if found is None:
        raise UnavailableError("helm is not on PATH", where="helm", fix=HELM_INSTALL_FIX)
    return found


Runner = Callable[..., "subprocess.CompletedProcess[str]"]


class HelmRunner:
    """Runs :class:`HelmCommand` values with the real ``helm``.

    ``on_output`` receives helm's output line by line, secrets masked (the CLI sends
    it to stderr). helm runs without gpuscale's secrets in its environment
    (:func:`gpuscale._redact.child_environment`): it needs the kubeconfig, not the
    DigitalOcean or setter token.
    """

    def __init__(
        self,
        helm: str,
        *,
        on_output: Callable[[str], None],
        run: Runner = subprocess.run,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._helm = helm
        self._on_output = on_output
        self._run = run
        self._environ = dict(environ) if environ is not None else None

    def run_all(self, commands: Sequence[HelmCommand]) -> None:
        """Run ``commands`` in order; the first failure raises :class:`UnavailableError`."""
        with tempfile.TemporaryDirectory(prefix="gpuscale-install-") as tmp:
            directory = Path(tmp)
            for command in commands:
                for name, doc in command.values.items():
                    (directory / name).write_text(values_yaml(doc), encoding="utf-8")
                args = [str(directory / a) if a in command.values else a for a in command.args]
                self._on_output(f"$ {command.shell()}")
                environ = os.environ if self._environ is None else self._environ
                try:
                    done = self._run(
                        [self._helm, *args],
                        capture_output=True,
                        text=True,
                        check=False,
                        env=child_environment(environ),
                    )
                except OSError as exc:
                    raise UnavailableError(
                        f"cannot run helm ({exc.strerror})", where=self._helm, fix=HELM_INSTALL_FIX
                    ) from None
                for line in (done.stdout + done.stderr).splitlines():
                    if line.strip():
                        self._on_output(f"  {redact(line)}")
                if done.returncode != 0:
                    last = next(
                        (
                            line.strip()
                            for line in reversed(done.stderr.splitlines())
                            if line.strip()
                        ),
                        f"exit status {done.returncode}",
                    )
                    raise UnavailableError(
                        f"helm {' '.join(command.args[:3])} failed: {last}",
                        where="helm",
                        fix=_helm_fix(last),
                    )


def _helm_fix(message: str) -> str:
    lowered = message.lower()
    if "kubernetes cluster unreachable" in lowered or "connection refused" in lowered:
        return "check KUBECONFIG and the context (gpuscale cluster kubeconfig --merge)"
    if "timed out waiting" in lowered or "context deadline exceeded" in lowered:
        return (
            "pods did not become ready in time: look at kubectl get pods -n <namespace> and "
            "their events, then run gpuscale install again (it is idempotent)"
        )
    if "another operation" in lowered and "in progress" in lowered:
        return "wait for the other helm operation to finish, then run gpuscale install again"
    return "read helm's output above, fix the cause, and run gpuscale install again"


def values_yaml(doc: Mapping[str, Any]) -> str:
    """A values document as YAML text."""
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    stream = io.StringIO()
    yaml.dump(dict(doc), stream)
    return stream.getvalue()


def _check_spec(spec: InstallSpec) -> None:
    """Refuse specs whose two releases would collide."""
    if (
        spec.prometheus_release == spec.keda_release
        and spec.prometheus_namespace == spec.keda_namespace
    ):
        raise InputError(
            "kube-prometheus-stack and KEDA would share the release name "
            f"{spec.keda_release!r} in namespace {spec.keda_namespace!r}",
            where="prometheus.release/keda.release",
            fix="give them different release names or namespaces",
        )
