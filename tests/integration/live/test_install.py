"""``gpuscale install`` with a fake ``helm`` executable on PATH.

There is no helm on these machines; the fake is a real executable that records its
argv and the values files it was given, and fails on demand the way helm does, so the
test sees exactly what gpuscale would run.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from gpuscale.cli.main import main

pytestmark = pytest.mark.integration

FAKE_HELM = """#!/bin/sh
# Records each call in $FAKE_HELM_LOG.d/<n>/: argv (one per line), the values files given.
log="$FAKE_HELM_LOG.d"
mkdir -p "$log"
n=$(ls "$log" | wc -l)
dir="$log/$n"
mkdir "$dir"
printf '%s\\n' "$@" > "$dir/argv"
prev=""
for a in "$@"; do
  if [ "$prev" = "--values" ]; then cp "$a" "$dir/"; dirname "$a" > "$dir/values_dir"; fi
  prev="$a"
done
if [ -n "$FAKE_HELM_FAIL" ]; then
  case " $* " in *"$FAKE_HELM_FAIL"*)
    echo "Error: UPGRADE FAILED: timed out waiting for the condition" >&2; exit 1;;
  esac
fi
echo "Release has been upgraded. Happy Helming!"
"""

PROMETHEUS_VALUES = {
    "prometheus": {
        "prometheusSpec": {
            "serviceMonitorSelectorNilUsesHelmValues": False,
            "podMonitorSelectorNilUsesHelmValues": False,
            "scrapeInterval": "30s",
        }
    }
}
KEDA_VALUES = {
    "crds": {"install": True},
    "prometheus": {
        "operator": {"enabled": True, "serviceMonitor": {"enabled": True}},
        "metricServer": {"enabled": True, "serviceMonitor": {"enabled": True}},
    },
}

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: t}}]
contexts:
- {name: do-atl1-c, context: {cluster: c, user: u}}
- {name: other, context: {cluster: c, user: u}}
current-context: other
"""


@pytest.fixture
def helm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "helm"
    script.write_text(FAKE_HELM, encoding="utf-8")
    script.chmod(0o755)
    log = tmp_path / "helm.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setenv("FAKE_HELM_LOG", str(log))
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG, encoding="utf-8")
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.chdir(tmp_path)
    return log


def _calls(log: Path) -> list[dict]:
    root = Path(f"{log}.d")
    calls = []
    for number in sorted((int(p.name) for p in root.iterdir()) if root.exists() else []):
        entry = root / str(number)
        call: dict = {"argv": (entry / "argv").read_text().splitlines(), "values": {}}
        for path in entry.glob("*.values.yaml"):
            call["values"][path.name] = path.read_text()
        if (entry / "values_dir").exists():
            call["values_dir"] = (entry / "values_dir").read_text().strip()
        calls.append(call)
    return calls


def test_install_runs_repo_setup_then_both_releases_with_wait(
    helm: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["install"]) == 0
    out = capsys.readouterr()
    calls = _calls(helm)
    assert [c["argv"][:3] for c in calls] == [
        ["repo", "add", "prometheus-community"],
        ["repo", "add", "kedacore"],
        ["repo", "update", "prometheus-community"],
        ["upgrade", "--install", "prometheus"],
        ["upgrade", "--install", "keda"],
    ]
    prom = calls[3]
    assert prom["argv"] == [
        "upgrade", "--install", "prometheus", "prometheus-community/kube-prometheus-stack",
        "--namespace", "monitoring", "--create-namespace",
        "--values", f"{prom['values_dir']}/kube-prometheus-stack.values.yaml",
        "--wait", "--timeout", "600s", "--version", "88.5.x",
    ]  # fmt: skip
    yaml = YAML(typ="safe")
    assert yaml.load(prom["values"]["kube-prometheus-stack.values.yaml"]) == PROMETHEUS_VALUES
    keda = calls[4]
    assert keda["argv"][3:7] == ["kedacore/keda", "--namespace", "keda", "--create-namespace"]
    assert yaml.load(keda["values"]["keda.values.yaml"]) == KEDA_VALUES
    assert not Path(prom["values_dir"]).exists(), "the values directory is cleaned up"
    assert out.out.splitlines() == [
        "installed kube-prometheus-stack (release prometheus, namespace monitoring) and KEDA "
        "(release keda, namespace keda); both ready",
        "Prometheus address for ScaledObject triggers: "
        "http://prometheus-operated.monitoring.svc.cluster.local:9090",
        "ServiceMonitors: Prometheus selects every ServiceMonitor in every namespace "
        "(serviceMonitorSelectorNilUsesHelmValues: false); no release label needed",
    ]
    assert "$ helm upgrade --install keda kedacore/keda" in out.err
    assert "Happy Helming!" in out.err
    assert keda["argv"][-2:] == ["--version", "2.20.x"], "pinned to the checked series"
    assert "gpuscale: note: chart versions: kube-prometheus-stack 88.5.x" in out.err


def test_a_null_chart_version_installs_the_newest(helm: Path, tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text("prometheus: {chart_version: null}\n", encoding="utf-8")
    assert main(["install", "--profile", str(profile)]) == 0
    calls = _calls(helm)
    assert "--version" not in calls[3]["argv"]
    assert calls[4]["argv"][-2:] == ["--version", "2.20.x"]


def test_install_is_the_same_commands_every_time(helm: Path) -> None:
    assert main(["install"]) == 0
    first = [c["argv"] for c in _calls(helm)]
    shutil.rmtree(f"{helm}.d")
    assert main(["install"]) == 0
    second = [c["argv"] for c in _calls(helm)]
    strip = [[a for a in argv if not a.endswith(".values.yaml")] for argv in (*first, *second)]
    assert strip[:5] == strip[5:]


def test_profile_names_the_namespaces_releases_and_versions(helm: Path, tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "prometheus: {release: kps, namespace: observability, chart_version: '77.0.1', "
        "scrape_interval: 15s}\nkeda: {namespace: autoscaling, chart_version: '2.20.2'}\n",
        encoding="utf-8",
    )
    assert main(["install", "--profile", str(profile), "--context", "do-atl1-c"]) == 0
    calls = _calls(helm)
    prom, keda = calls[3]["argv"], calls[4]["argv"]
    assert prom[2:6] == ["kps", "prometheus-community/kube-prometheus-stack", "--namespace",
                         "observability"]  # fmt: skip
    assert prom[-4:] == ["--version", "77.0.1", "--kube-context", "do-atl1-c"]
    assert keda[4:6] == ["--namespace", "autoscaling"]
    assert keda[-4:] == ["--version", "2.20.2", "--kube-context", "do-atl1-c"]
    values = YAML(typ="safe").load(calls[3]["values"]["kube-prometheus-stack.values.yaml"])
    assert values["prometheus"]["prometheusSpec"]["scrapeInterval"] == "15s"


def test_a_missing_helm_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.chdir(tmp_path)
    assert main(["install"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gpuscale: error: helm: helm is not on PATH (fix: install Helm 3")
    assert "https://helm.sh/docs/intro/install/" in err
    assert err.count("\n") == 1


def test_a_failing_release_stops_with_helms_reason_and_the_fix(
    helm: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FAKE_HELM_FAIL", "kedacore/keda")
    assert main(["install"]) == 1
    err = capsys.readouterr().err
    last = err.splitlines()[-1]
    assert last == (
        "gpuscale: error: helm: helm upgrade --install keda failed: Error: UPGRADE FAILED: "
        "timed out waiting for the condition (fix: pods did not become ready in time: look at "
        "kubectl get pods -n <namespace> and their events, then run gpuscale install again "
        "(it is idempotent))"
    )
    assert len(_calls(helm)) == 5


def test_dry_run_prints_commands_and_values_without_helm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert main(["install", "--dry-run", "--timeout", "15m"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == (
        "# chart versions: kube-prometheus-stack 88.5.x (the series gpuscale was checked "
        "against); keda 2.20.x (the series gpuscale was checked against)"
    )
    assert lines[8] == (
        "helm upgrade --install prometheus prometheus-community/kube-prometheus-stack "
        "--namespace monitoring --create-namespace --values kube-prometheus-stack.values.yaml "
        "--wait --timeout 900s --version 88.5.x"
    )
    documents = out.split("# --- ")[1:]
    parsed = {d.split("\n", 1)[0]: YAML(typ="safe").load(d.split("\n", 1)[1]) for d in documents}
    assert parsed == {
        "kube-prometheus-stack.values.yaml": PROMETHEUS_VALUES,
        "keda.values.yaml": KEDA_VALUES,
    }


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("prometheus: {release: Prom_1}\n", "prometheus.release"),
        ("keda: {namespace: ''}\n", "keda.namespace"),
        ("keda: {chart_version: 2.2}\n", "keda.chart_version"),
        ("prometheus: [a]\n", "prometheus"),
    ],
)
def test_bad_profile_values_name_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, where: str
) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(text, encoding="utf-8")
    assert main(["install", "--profile", str(profile), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert re.search(rf"{re.escape(str(profile))}:\d+: {re.escape(where)}: ", err), err
    assert "fix:" in err


def test_a_chart_selection_profile_says_which_label_servicemonitors_need(
    helm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "prometheus: {release: kps, selects_all_servicemonitors: false}\n", encoding="utf-8"
    )
    assert main(["install", "-p", str(profile)]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("ServiceMonitors: Prometheus selects only ServiceMonitors labelled ")
    assert "metadata.labels.release: kps" in last
    values = YAML(typ="safe").load(_calls(helm)[3]["values"]["kube-prometheus-stack.values.yaml"])
    assert "serviceMonitorSelectorNilUsesHelmValues" not in values["prometheus"]["prometheusSpec"]


def test_kube_context_is_now_context(helm: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install", "--kube-context", "do-atl1-c"]) == 2
    assert "--kube-context" in capsys.readouterr().err
    assert _calls(helm) == []


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--context", "typo"], ["no context 'typo'", "do-atl1-c, other"]),
        (["--kubeconfig", "missing.yaml"], ["missing.yaml", "does not exist"]),
    ],
)
def test_a_bad_kubeconfig_stops_install_before_helm_runs(
    helm: Path, capsys: pytest.CaptureFixture[str], argv: list[str], words: list[str]
) -> None:
    assert main(["install", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert all(w in err for w in words), err
    assert _calls(helm) == []
