"""``gpuscale init --preset vllm``: a vLLM server as a careful engineer deploys it.

The set validates (schemas and the admission validator, through ``validate``), lints
clean at warning and above, scales on requests waiting + running with AverageValue
against the preset's capacity, and its profile names the serving preset."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscale.errors import InputError
from gpuscale.inputs import read_manifests
from gpuscale.lint import LintOptions, Severity, run_lint
from gpuscale.manifests import ServiceMonitor, Workload, load_text, validate
from gpuscale.manifests._scaffold_vllm import concurrency_target, startup_seconds
from gpuscale.manifests.scaffold import ScaffoldOptions, scaffold
from gpuscale.serving.presets import preset

CASES = [
    ScaffoldOptions(name="chat", namespace="ml", gpu=gpu, provider=provider, preset="vllm")
    for gpu in ("amd", "nvidia")
    for provider in ("doks", "generic")
]


def _write(tmp_path: Path, options: ScaffoldOptions) -> dict[str, str]:
    files = {f.name: f.text for f in scaffold(options)}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return files


@pytest.mark.parametrize("options", CASES, ids=lambda o: f"{o.gpu}-{o.provider}")
def test_vllm_scaffold_validates_and_lints_clean(options: ScaffoldOptions, tmp_path: Path) -> None:
    files = _write(tmp_path, options)
    manifests = [m for name, text in files.items() if name != "gpuscale.yaml"
                 for m in load_text(text, name)]  # fmt: skip
    assert [p for p in validate(manifests) if p.severity != "info"] == []
    by_kind = {m.kind: m for m in manifests}
    work = Workload.from_manifest(by_kind["Deployment"])
    (container,) = work.containers
    resource = "amd.com/gpu" if options.gpu == "amd" else "nvidia.com/gpu"
    assert container.requests[resource] == container.limits[resource] == 1.0
    assert container.image is not None
    assert ":" in container.image
    assert "latest" not in container.image
    assert container.readiness_probe is not None
    assert container.readiness_probe.path == "/health"
    body = by_kind["Deployment"].body["spec"]["template"]["spec"]["containers"][0]
    startup = body["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= startup_seconds(options)
    assert "--served-model-name" in container.args
    monitor = ServiceMonitor.from_manifest(by_kind["ServiceMonitor"])
    assert monitor.namespace == "ml"
    assert monitor.namespace_selector.covers("ml", own_namespace="ml")
    assert by_kind["Service"].body["spec"]["ports"][0]["port"] == 8000

    (trigger,) = by_kind["ScaledObject"].body["spec"]["triggers"]
    assert trigger["metricType"] == "AverageValue"
    query = trigger["metadata"]["query"]
    assert "vllm:num_requests_waiting" in query
    assert "vllm:num_requests_running" in query
    gpu = "mi300x" if options.gpu == "amd" else "h100"
    target, _ = concurrency_target(preset(gpu, "llama-3.1-8b"))
    assert trigger["metadata"]["threshold"] == str(target)

    from gpuscale.inputs import read_profile

    profile = read_profile(tmp_path / "gpuscale.yaml")
    spec = profile.workload("chat")
    assert spec.image_pull_time >= 60
    assert spec.startup_time >= 120
    report = run_lint(read_manifests([tmp_path / "manifests"]), profile, LintOptions())
    loud = [f for f in report.findings if f.severity >= Severity.WARNING]
    assert loud == [], [f.rule for f in loud]


def test_the_target_is_the_tightest_of_three_limits() -> None:
    chosen = preset("h100", "llama-3.1-8b")
    target, why = concurrency_target(chosen)
    cost = chosen.step_cost()
    per_seq = cost.decode_seq + cost.context_token * (1024 + 128)
    # At the target a decode step takes at most twice the idle one; one more does not.
    assert cost.base + per_seq * target <= 2 * cost.base < cost.base + per_seq * (target + 1)
    assert target <= chosen.engine_config().max_num_seqs
    assert f"= {target}" in why


def test_min_zero_gets_cooldowns_longer_than_a_cold_start(tmp_path: Path) -> None:
    options = ScaffoldOptions(name="chat", namespace="ml", preset="vllm", min_replicas=0)
    files = _write(tmp_path, options)
    (scaled,) = load_text(files["manifests/scaledobject.yaml"], "s.yaml")
    spec = scaled.body["spec"]
    assert spec["minReplicaCount"] == 0
    assert spec["initialCooldownPeriod"] >= startup_seconds(options) + 600
    assert spec["triggers"][0]["metadata"]["activationThreshold"] == "0"


def test_gauge_refusals_and_vllm_checks() -> None:
    with pytest.raises(InputError) as error:
        ScaffoldOptions(name="c", namespace="ml", min_replicas=0).check()
    assert error.value.where == "--min-replicas"
    with pytest.raises(InputError) as error:
        ScaffoldOptions(name="c", namespace="ml", preset="vllm", model="gpt-9").check()
    assert error.value.where == "--model"
    with pytest.raises(InputError) as error:
        ScaffoldOptions(
            name="c", namespace="ml", preset="vllm", gpu="nvidia", model="llama-3.1-70b"
        ).check()
    assert "does not fit" in str(error.value)


def test_the_gauge_scaffold_is_unchanged_by_default() -> None:
    files = {f.name: f.text for f in scaffold(ScaffoldOptions(name="llm", namespace="ml"))}
    assert "ghcr.io/gpuscale/gpuscale:" in files["manifests/deployment.yaml"]
    assert "threshold: '80'" in files["manifests/scaledobject.yaml"]
    assert "serving:" not in files["gpuscale.yaml"]
