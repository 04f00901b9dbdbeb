"""Rules on pod specs: node selection, tolerations, GPU requests, building at start."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscale.inputs import read_manifests, read_profile
from gpuscale.lint import LintOptions, Severity, run_lint
from gpuscale.manifests import load_text
from gpuscale.manifests.scaffold import ScaffoldOptions, scaffold
from gpuscale.profile import Profile
from tests.unit.lint.conftest import gpu_pool, line_of, lint_yaml, make_profile, only
from tests.unit.lint.manifests import deployment, docs, scaled_object, service

AMD_TOLERATION = "tolerations:\n  - key: amd.com/gpu\n    operator: Exists\n"


def _selector(key: str, value: str = "amd", gpu: str = "amd.com/gpu") -> str:
    toleration = f"tolerations:\n  - key: {gpu}\n    operator: Exists\n"
    return deployment(gpu=gpu, pod_spec=f"nodeSelector:\n  {key}: {value}\n{toleration}")


# --- gpu-node-selector ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("doks.<provider-domain>/gpu-brand", "placeholder"),
        ("doks.linux-console.net/gpu-brand", "misspelling of doks.digitalocean.com"),
        ("doks.digitalocean.cm/gpu-brand", "misspelling of doks.digitalocean.com"),
        ("doks.digitalocean.com/gpu_brand", "did you mean doks.digitalocean.com/gpu-brand"),
        ("nvida.com/gpu.present", "misspelling of nvidia.com"),
    ],
)
def test_node_selector_key_that_cannot_exist(key: str, words: str) -> None:
    text = _selector(key)
    [finding] = only(lint_yaml(text), "gpu-node-selector")
    assert finding.severity is Severity.ERROR
    assert words in finding.message
    assert finding.location.line == line_of(text, key)
    if "doks" in key:
        assert "doks.digitalocean.com/gpu-brand: amd" in finding.fix


@pytest.mark.parametrize(
    ("value", "gpu", "words"),
    [
        ("AMD", "amd.com/gpu", "DOKS sets it to amd or nvidia"),
        ("mi300x", "amd.com/gpu", "DOKS sets it to amd or nvidia"),
        ("nvidia", "amd.com/gpu", "contradicts the requested amd.com/gpu"),
    ],
)
def test_gpu_brand_value(value: str, gpu: str, words: str) -> None:
    text = _selector("doks.digitalocean.com/gpu-brand", value, gpu)
    [finding] = only(lint_yaml(text), "gpu-node-selector")
    assert words in finding.message
    assert "gpu-brand: amd" in finding.fix


def test_node_affinity_keys_are_checked_too() -> None:
    affinity = (
        "affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n"
        "      nodeSelectorTerms:\n        - matchExpressions:\n"
        "            - key: doks.digitalocean.com/gpu-brand\n              operator: In\n"
        "              values: [nvidia]\n"
    )
    text = deployment(pod_spec=affinity + AMD_TOLERATION)
    [finding] = only(lint_yaml(text), "gpu-node-selector")
    assert "contradicts" in finding.message
    assert finding.location.line == line_of(text, "- key: doks.digitalocean.com/gpu-brand")


def test_node_pool_name_checked_against_the_profile() -> None:
    text = _selector("doks.digitalocean.com/node-pool", "gpu-pool")
    profile = make_profile(node_pools=[gpu_pool("gpu-mi300x", max_nodes=2)])
    [finding] = only(lint_yaml(text, profile=profile), "gpu-node-selector")
    assert "no node pool named gpu-pool" in finding.message
    assert only(lint_yaml(text), "gpu-node-selector") == []


def test_missing_selector_is_info_only_with_a_labelled_gpu_pool() -> None:
    text = deployment(pod_spec=AMD_TOLERATION)
    assert only(lint_yaml(text), "gpu-node-selector") == []
    [finding] = only(
        lint_yaml(text, profile=make_profile(node_pools=[gpu_pool()])), "gpu-node-selector"
    )
    assert finding.severity is Severity.INFO
    assert "doks.digitalocean.com/node-pool: gpu" in finding.fix
    unlabelled = make_profile(
        cluster={"provider": "generic"}, node_pools=[gpu_pool(labels={}, taints=[])]
    )
    assert only(lint_yaml(text, profile=unlabelled), "gpu-node-selector") == []


GENERIC_POOL = gpu_pool(
    "gpu",
    size="gpu-node",
    gpu="nvidia",
    gpus_per_node=1,
    cpu=16,
    memory="128Gi",
    price_per_hour=2.5,
    taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
)
"""The GPU pool ``gpuscale init --provider generic`` writes: tainted, no labels."""


def _generic(**pool: object) -> Profile:
    return make_profile(cluster={"provider": "generic"}, node_pools=[{**GENERIC_POOL, **pool}])


def test_init_generic_output_gets_no_doks_suggestion(tmp_path: Path) -> None:
    # Reproduces `gpuscale init b --gpu nvidia --provider generic` linted with its profile.
    files = scaffold(
        ScaffoldOptions(name="b", namespace="default", gpu="nvidia", provider="generic")
    )
    for item in files:
        (tmp_path / item.name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / item.name).write_text(item.text)
    profile = read_profile(tmp_path / "gpuscale.yaml")
    assert profile.cluster.provider == "generic"
    report = run_lint(read_manifests([tmp_path / "manifests"]), profile, LintOptions(validate=True))
    assert only(list(report.findings), "gpu-node-selector") == []
    assert "doks." not in "".join(f.fix for f in report.findings)


def test_generic_missing_selector_suggests_the_profile_s_label() -> None:
    text = deployment(gpu="nvidia.com/gpu", pod_spec=AMD_TOLERATION.replace("amd", "nvidia"))
    assert only(lint_yaml(text, profile=_generic()), "gpu-node-selector") == []
    labelled = _generic(labels={"node.kubernetes.io/instance-type": "g5.xlarge"})
    [finding] = only(lint_yaml(text, profile=labelled), "gpu-node-selector")
    assert finding.severity is Severity.INFO
    assert finding.fix == "nodeSelector:\n  node.kubernetes.io/instance-type: g5.xlarge"


@pytest.mark.parametrize(
    ("key", "profile", "fix"),
    [
        ("doks.<provider-domain>/gpu-brand", None, "doks.digitalocean.com/gpu-brand: nvidia"),
        (
            "doks.<provider-domain>/gpu-brand",
            make_profile(node_pools=[gpu_pool(size="gpu-h100x1-80gb")]),
            "doks.digitalocean.com/gpu-brand: nvidia",
        ),
        ("doks.<provider-domain>/gpu-brand", _generic(), "delete the nodeSelector"),
        (
            "doks.digitalocean.cm/gpu-brand",
            _generic(labels={"example.com/gpu": "h100"}),
            "example.com/gpu: h100",
        ),
    ],
    ids=["no-profile", "doks", "generic-unlabelled", "generic-labelled"],
)
def test_fixes_fit_the_provider(key: str, profile: Profile | None, fix: str) -> None:
    text = _selector(key, "nvidia", "nvidia.com/gpu")
    [finding] = only(lint_yaml(text, profile=profile), "gpu-node-selector")
    assert fix in finding.fix
    if profile is not None and profile.cluster.provider == "generic":
        assert "doks.digitalocean.com" not in finding.fix


def test_generic_fix_agrees_with_init() -> None:
    text = _selector("doks.<provider-domain>/gpu-brand", "nvidia", "nvidia.com/gpu")
    [finding] = only(lint_yaml(text, profile=_generic()), "gpu-node-selector")
    written = scaffold(
        ScaffoldOptions(name="b", namespace="default", gpu="nvidia", provider="generic")
    )
    deployment_text = next(f.text for f in written if f.name.endswith("deployment.yaml"))
    said = " ".join(finding.fix.replace("#", " ").split())
    assert "no GPU node label is common to all providers" in " ".join(
        deployment_text.replace("#", " ").split()
    )
    assert "no GPU node label is common to all providers" in said
    assert "nvidia.com/gpu request already keeps the pod off nodes without GPUs" in said


def test_doks_node_pool_names_are_not_checked_on_a_generic_cluster() -> None:
    text = _selector("doks.digitalocean.com/node-pool", "gpu-pool", "nvidia.com/gpu")
    found = only(lint_yaml(text, profile=_generic()), "gpu-node-selector")
    assert not any("no node pool named" in f.message for f in found)
    doks = make_profile(node_pools=[gpu_pool("gpu-h100", size="gpu-h100x1-80gb")])
    [finding] = only(lint_yaml(text, profile=doks), "gpu-node-selector")
    assert "no node pool named gpu-pool" in finding.message


@pytest.mark.parametrize(
    ("key", "value", "gpu"),
    [
        ("doks.digitalocean.com/gpu-brand", "amd", "amd.com/gpu"),
        ("doks.digitalocean.com/gpu-brand", "nvidia", "nvidia.com/gpu"),
        ("doks.digitalocean.com/node-pool", "gpu-pool", "amd.com/gpu"),
        ("eks.amazonaws.com/instance-family", "p5", "nvidia.com/gpu"),
        ("cloud.google.com/gke-accelerator", "nvidia-l4", "nvidia.com/gpu"),
        ("node.kubernetes.io/instance-type", "gpu-h100x1-80gb", "nvidia.com/gpu"),
        ("example.com/team", "ml", "amd.com/gpu"),
        ("ab.com/team", "ml", "amd.com/gpu"),
        ("karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia", "nvidia.com/gpu"),
        ("'{{ .Values.gpuLabel }}'", "amd", "amd.com/gpu"),
        ("doks.digitalocean.com/gpu-brand", "'${BRAND}'", "amd.com/gpu"),
    ],
    ids=[
        "amd",
        "nvidia",
        "pool",
        "eks",
        "gke",
        "instance-type",
        "custom",
        "short-custom-domain",
        "karpenter",
        "helm-key",
        "env",
    ],
)
def test_node_selector_near_misses(key: str, value: str, gpu: str) -> None:
    assert only(lint_yaml(_selector(key, value, gpu)), "gpu-node-selector") == []


# --- gpu-toleration-missing -------------------------------------------------------------


def test_toleration_missing_with_doks_defaults() -> None:
    text = deployment()
    [finding] = only(lint_yaml(text), "gpu-toleration-missing")
    assert finding.severity is Severity.WARNING
    assert finding.location.line == line_of(text, "resources:")
    assert "key: amd.com/gpu" in finding.fix
    assert "DOKS' default GPU taint" in finding.why


def test_toleration_missing_with_profile_taints() -> None:
    text = deployment(
        gpu="nvidia.com/gpu",
        pod_spec="tolerations:\n  - key: nvidia.com/gpu\n    operator: Exists\n",
    )
    taints = [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        {"key": "dedicated", "value": "ml", "effect": "NoExecute"},
    ]
    pool = gpu_pool("h100", "gpu-h100x1-80gb", 2, taints=taints)
    [finding] = only(
        lint_yaml(text, profile=make_profile(node_pools=[pool])), "gpu-toleration-missing"
    )
    assert "dedicated=ml:NoExecute" in finding.message
    assert finding.location.line == line_of(text, "tolerations:")
    assert "value: ml" in finding.fix


@pytest.mark.parametrize(
    "tolerations",
    [
        "tolerations:\n  - key: amd.com/gpu\n    operator: Exists\n",
        "tolerations:\n  - key: amd.com/gpu\n    operator: Exists\n    effect: NoSchedule\n",
        "tolerations:\n  - key: amd.com/gpu\n    operator: Equal\n    value: ''\n",
        "tolerations:\n  - operator: Exists\n",
        "tolerations:\n  - key: '${KEY}'\n    operator: Exists\n",
    ],
    ids=["exists", "exists-effect", "equal-empty", "tolerate-all", "templated"],
)
def test_toleration_near_misses(tolerations: str) -> None:
    assert only(lint_yaml(deployment(pod_spec=tolerations)), "gpu-toleration-missing") == []


def test_toleration_wrong_effect_does_not_match() -> None:
    text = deployment(
        pod_spec="tolerations:\n  - key: amd.com/gpu\n    operator: Exists\n    effect: NoExecute\n"
    )
    assert len(only(lint_yaml(text), "gpu-toleration-missing")) == 1


def test_cpu_workload_needs_no_gpu_toleration() -> None:
    assert only(lint_yaml(deployment(gpu=None)), "gpu-toleration-missing") == []


# --- unneeded-toleration ----------------------------------------------------------------


def test_critical_addons_toleration() -> None:
    pod = (
        "tolerations:\n  - key: CriticalAddonsOnly\n    operator: Exists\n"
        "  - key: amd.com/gpu\n    operator: Exists\n"
    )
    text = deployment(pod_spec=pod)
    [finding] = only(lint_yaml(text), "unneeded-toleration")
    assert finding.location.line == line_of(text, "CriticalAddonsOnly")
    assert "CriticalAddonsOnly" not in finding.fix
    assert "amd.com/gpu" in finding.fix


def test_tolerate_everything() -> None:
    text = deployment(pod_spec="tolerations:\n  - operator: Exists\n")
    [finding] = only(lint_yaml(text), "unneeded-toleration")
    assert "every taint" in finding.message


@pytest.mark.parametrize(
    ("text", "namespace"),
    [
        (deployment(pod_spec=AMD_TOLERATION), "default"),
        (
            deployment(
                pod_spec="tolerations:\n  - key: CriticalAddonsOnly\n    operator: Exists\n"
            ),
            "kube-system",
        ),
        (
            deployment(pod_spec="tolerations:\n  - operator: Exists\n").replace(
                "kind: Deployment", "kind: DaemonSet"
            ),
            "default",
        ),
    ],
    ids=["gpu-only", "kube-system", "daemonset"],
)
def test_unneeded_toleration_near_misses(text: str, namespace: str) -> None:
    assert only(lint_yaml(text, namespace=namespace), "unneeded-toleration") == []


# --- gpu-requests-limits ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("resources", "words"),
    [
        ("resources:\n  requests:\n    nvidia.com/gpu: 1\n", "without a limit"),
        (
            "resources:\n  requests:\n    amd.com/gpu: '2'\n  limits:\n    amd.com/gpu: '1'\n",
            "differs from its limit",
        ),
    ],
)
def test_gpu_requests_limits(resources: str, words: str) -> None:
    text = deployment(resources=resources)
    [finding] = only(lint_yaml(text), "gpu-requests-limits")
    assert words in finding.message
    assert finding.location.line == line_of(text, "/gpu:")
    assert "limits:" in finding.fix


@pytest.mark.parametrize(
    "resources",
    [
        "resources:\n  limits:\n    amd.com/gpu: 1\n",
        "resources:\n  requests:\n    amd.com/gpu: '1'\n  limits:\n    amd.com/gpu: 1\n",
        "resources:\n  requests:\n    amd.com/gpu: ${N}\n  limits:\n    amd.com/gpu: ${N}\n",
        "resources:\n  requests:\n    cpu: 500m\n",
    ],
    ids=["limit-only", "equal-mixed-types", "templated", "no-gpu"],
)
def test_gpu_requests_limits_near_misses(resources: str) -> None:
    assert only(lint_yaml(deployment(resources=resources)), "gpu-requests-limits") == []


# --- compile-at-start -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "steps", "where"),
    [
        ('args: ["go mod tidy && go run ."]\n', "go mod tidy, go run", "args:"),
        (
            "command: [sh, -c]\nargs:\n  - |\n    set -e\n    pip install -r requirements.txt\n"
            "    python serve.py\n",
            "pip install",
            "args:",
        ),
        ('command: ["/bin/sh", "-c", "npm ci; node server.js"]\n', "npm ci", "command:"),
        (
            'args: ["python3 -m pip install --no-cache-dir vllm && vllm serve m"]\n',
            "python3 -m pip install",
            "args:",
        ),
        ('args: ["FOO=1 /usr/local/go/bin/go build -o /app ."]\n', "go build", "args:"),
        ('command: ["go", "run", "main.go"]\n', "go run", "command:"),
        ('command: ["npm", "install"]\n', "npm install", "command:"),
        ('command: ["pip3", "install", "x"]\n', "pip3 install", "command:"),
        ('command: ["python", "-m", "pip", "install", "x"]\n', "python -m pip install", "command:"),
        ('command: ["go"]\nargs: ["run", "."]\n', "go run", "command:"),
        ('command: ["/usr/bin/env", "GOFLAGS=-mod=mod", "go", "run", "."]\n', "go run", "command:"),
        ('command: ["bash", "-lc", "npm ci && node s.js"]\n', "npm ci", "command:"),
        ('command: ["sh", "-ec"]\nargs: ["go mod tidy; ./app"]\n', "go mod tidy", "args:"),
        ('args: ["pip", "install", "-r", "req.txt"]\n', "pip install", "args:"),
    ],
)
def test_compile_at_start(args: str, steps: str, where: str) -> None:
    text = deployment(gpu=None, args=args)
    [finding] = only(lint_yaml(text), "compile-at-start")
    assert steps in finding.message
    assert finding.location.line == line_of(text, where)


@pytest.mark.parametrize(
    "args",
    [
        'command: ["/app/server"]\n',
        'args: ["--model", "/models/llama", "--port", "8000"]\n',
        'args: ["echo go run is how you start it"]\n',
        'command: ["vllm", "serve", "meta-llama/Llama-3-8B"]\n',
        'command: ["python", "serve.py"]\nargs: ["--setup", "pip install x"]\n',
        'command: ["/app/server", "--on-start", "go run ."]\n',
        'command: ["sh", "start.sh", "pip install"]\n',
        'command: ["echo", "npm", "install"]\n',
        'command: ["python", "-m", "vllm.entrypoints.api_server"]\n',
    ],
    ids=[
        "binary",
        "flags",
        "echo-mentions",
        "vllm-serve",
        "exec-arg-holds-text",
        "binary-arg-holds-text",
        "shell-without-c",
        "echo-exec",
        "python-module",
    ],
)
def test_compile_at_start_near_misses(args: str) -> None:
    assert only(lint_yaml(deployment(gpu=None, args=args)), "compile-at-start") == []


# --- no-readiness-probe -----------------------------------------------------------------

PORTS = "ports:\n  - name: http\n    containerPort: 8080\n"


def test_served_container_without_readiness_probe() -> None:
    text = docs(deployment(gpu=None, args=PORTS), service())
    [finding] = only(lint_yaml(text), "no-readiness-probe")
    assert finding.severity is Severity.WARNING
    assert finding.location.line == line_of(text, "- name: app")
    assert "its Service sends it requests" in finding.why
    assert "port: http" in finding.fix


def test_scaled_container_without_readiness_probe() -> None:
    text = docs(deployment(), scaled_object())
    [finding] = only(lint_yaml(text), "no-readiness-probe")
    assert "it is scaled by KEDA" in finding.why
    assert "port: <port>" in finding.fix


@pytest.mark.parametrize(
    ("extra", "companion"),
    [
        (PORTS + "readinessProbe:\n  httpGet:\n    path: /readyz\n    port: http\n", "svc"),
        (PORTS + "startupProbe:\n  tcpSocket:\n    port: http\n", "svc"),
        (PORTS, ""),
        (PORTS, "other-service"),
        (PORTS, "scaledobject-elsewhere"),
    ],
    ids=["probe", "startup-probe", "alone", "service-selects-others", "target-not-this"],
)
def test_readiness_probe_near_misses(extra: str, companion: str) -> None:
    work = deployment(gpu=None, args=extra)
    others = {
        "svc": [service()],
        "": [],
        "other-service": [service(name="api")],
        "scaledobject-elsewhere": [scaled_object(target="api")],
    }[companion]
    assert only(lint_yaml(docs(work, *others)), "no-readiness-probe") == []


def test_readiness_probe_checks_only_serving_containers() -> None:
    # A second container without ports (a sidecar) is not the one that serves.
    work = deployment(gpu=None, args=PORTS) + "        - name: sidecar\n          image: busybox\n"
    text = docs(work, service())
    [(manifest, *_)] = [load_text(text, "m.yaml")]
    assert [c["name"] for c in manifest.get(("spec", "template", "spec", "containers"))] == [
        "app",
        "sidecar",
    ]
    found = only(lint_yaml(text), "no-readiness-probe")
    assert [f.message.split()[1] for f in found] == ["app"]
