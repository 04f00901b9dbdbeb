"""``gpuscale cluster ...`` against a fake DigitalOcean API through pydo's real client.

Each test checks what went on the wire: method, path, query, JSON body and headers, and
that the ``--dry-run`` plan is the same requests. Answers are shaped like the real API's
(see ``fake_do.py``). The token-leak check runs after every test (``conftest.py``).
"""

from __future__ import annotations

import io
import json
import re
import stat

import pytest

from tests.integration.cloud.conftest import Harness
from tests.integration.cloud.fake_do import TOKEN

pytestmark = pytest.mark.integration

EXPECTED_CREATE_BODY = {
    "name": "gpu-keda",
    "region": "atl1",
    "version": "latest",
    "node_pools": [
        {
            "name": "gpu",
            "size": "gpu-mi300x1-192gb",
            "count": 0,
            "auto_scale": True,
            "min_nodes": 0,
            "max_nodes": 2,
            "labels": {"workload": "gpu"},
            # DOKS puts amd.com/gpu:NoSchedule on GPU nodes itself: only the pool's own taint.
            "taints": [{"key": "dedicated", "value": "ml", "effect": "NoExecute"}],
        },
        {"name": "general", "size": "s-4vcpu-8gb", "count": 2},
    ],
    "amd_gpu_device_plugin": {"enabled": True},
    "amd_gpu_device_metrics_exporter_plugin": {"enabled": True},
}


def _plan(h: Harness, *argv: str) -> list[dict]:
    result = h.run(*argv, "--dry-run")
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_create_sends_the_checks_then_the_exact_body(harness: Harness) -> None:
    result = harness.run("cluster", "create", "--profile", str(harness.profile), "-o", "json")
    assert result.code == 0, result.err
    calls = harness.fake.calls()
    cluster_id = json.loads(result.out)["cluster"]["id"]
    assert calls[:4] == [
        ("GET", "/v2/kubernetes/clusters?per_page=200&page=1"),
        ("GET", "/v2/kubernetes/options"),
        ("GET", "/v2/sizes?per_page=200&page=1"),
        ("POST", "/v2/kubernetes/clusters"),
    ]
    assert set(calls[4:]) == {("GET", f"/v2/kubernetes/clusters/{cluster_id}")}
    post = harness.fake.sent[3]
    assert post.body == EXPECTED_CREATE_BODY
    assert post.headers["Authorization"] == f"Bearer {TOKEN}"
    assert post.headers["Content-Type"] == "application/json"
    assert post.headers["Accept"] == "application/json"
    assert "pydo/" in post.headers["User-Agent"]
    for sent in harness.fake.sent:
        assert sent.headers["Authorization"] == f"Bearer {TOKEN}"


def test_dry_run_prints_the_requests_a_real_create_sends(harness: Harness) -> None:
    plan = _plan(harness, "cluster", "create", "--profile", str(harness.profile))
    assert harness.fake.sent == [], "--dry-run must send nothing"
    result = harness.run("cluster", "create", "--profile", str(harness.profile), "-o", "json")
    assert result.code == 0, result.err
    cluster_id = json.loads(result.out)["cluster"]["id"]
    wire = harness.fake.sent
    for planned, sent in zip(plan[:4], wire[:4], strict=True):
        assert planned["method"] == sent.method
        assert planned["url"] == "https://api.digitalocean.com" + sent.url_text
        assert planned.get("body") == sent.body
        assert planned["headers"]["Authorization"].startswith("Bearer <redacted")
    poll = plan[4]
    assert poll["url"].replace("{cluster_id}", cluster_id) == (
        "https://api.digitalocean.com" + wire[4].url_text
    )
    assert TOKEN not in json.dumps(plan)


def test_dry_run_needs_no_token(harness: Harness) -> None:
    harness.environ.clear()
    for command in ("create", "status", "enable-gpu-metrics", "delete"):
        plan = _plan(harness, "cluster", command, "--profile", str(harness.profile))
        assert plan, command
    plan = _plan(harness, "cluster", "kubeconfig", "--profile", str(harness.profile), "--merge")
    assert plan[-1]["url"].endswith("/credentials?expiry_seconds=86400")
    assert harness.fake.sent == []


def test_create_waits_on_the_injected_clock_and_shows_progress(harness: Harness) -> None:
    harness.fake.polls_to_run = 5
    result = harness.run("cluster", "create", "--profile", str(harness.profile))
    assert result.code == 0, result.err
    polls = [c for c in harness.fake.calls() if c[0] == "GET" and "/clusters/" in c[1]]
    assert len(polls) == 6  # running after 5 polls, nodes running after 6
    assert harness.clock.sleeps == [10.0] * 5
    assert "gpu-keda: running, 2/2 nodes running" in result.err
    assert "cluster gpu-keda: running" in result.out
    assert "pool general: s-4vcpu-8gb, fixed 2; 2 running" in result.out


def test_create_shows_the_hourly_price_of_each_pool_at_its_largest(harness: Harness) -> None:
    result = harness.run("cluster", "create", "--profile", str(harness.profile), "-o", "json")
    assert result.code == 0, result.err
    assert "pool gpu: gpu-mi300x1-192gb at $1.99/h per node; at most 2 nodes = $3.98/h" in (
        result.err
    )
    assert "pool general: s-4vcpu-8gb at $0.07/h per node; at most 2 nodes = $0.14/h" in (
        result.err
    )
    doc = json.loads(result.out)
    assert doc["max_per_hour"] == pytest.approx(1.99 * 2 + 0.07143 * 2)
    assert any("scale-from-zero" in w for w in doc["warnings"])


def test_an_existing_cluster_is_reported_not_duplicated(harness: Harness) -> None:
    existing = harness.fake.add_cluster("gpu-keda")
    result = harness.run("cluster", "create", "--profile", str(harness.profile))
    assert result.code == 0, result.err
    assert ("POST", "/v2/kubernetes/clusters") not in harness.fake.calls()
    assert f"already exists (id {existing['id']}, state running)" in result.err
    assert len(harness.fake.clusters) == 1


def test_the_exporter_is_enabled_by_update_when_the_running_cluster_lacks_it(
    harness: Harness,
) -> None:
    original = harness.fake._new_cluster

    def drop_exporter(body: dict) -> dict:
        cluster = original(body)
        cluster.pop("amd_gpu_device_metrics_exporter_plugin", None)
        return cluster

    harness.fake._new_cluster = drop_exporter  # type: ignore[method-assign]
    result = harness.run("cluster", "create", "--profile", str(harness.profile), "-o", "json")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    put = harness.fake.sent[-1]
    assert (put.method, put.path) == ("PUT", f"/v2/kubernetes/clusters/{doc['cluster']['id']}")
    assert put.body == {
        "name": "gpu-keda",
        "amd_gpu_device_metrics_exporter_plugin": {"enabled": True},
    }
    assert doc["metrics_update_sent"] is True
    assert doc["cluster"]["addons"]["amd_gpu_device_metrics_exporter_plugin"] is True


def test_nvidia_pools_get_the_nvidia_device_plugin(harness: Harness) -> None:
    profile = harness.write_profile(
        "cluster: {name: h100, region: nyc2}\n"
        "node_pools:\n"
        "  - {name: gpu, size: gpu-h100x1-80gb, gpu: nvidia, min_nodes: 1, max_nodes: 3}\n"
        "  - {name: general, size: s-4vcpu-8gb, count: 1}\n",
        "nvidia.yaml",
    )
    result = harness.run("cluster", "create", "--profile", str(profile), "--no-wait")
    assert result.code == 0, result.err
    body = harness.fake.sent[3].body
    assert body["nvidia_gpu_device_plugin"] == {"enabled": True}
    assert "amd_gpu_device_plugin" not in body
    assert "amd_gpu_device_metrics_exporter_plugin" not in body
    assert body["node_pools"][0] == {
        "name": "gpu",
        "size": "gpu-h100x1-80gb",
        "count": 1,
        "auto_scale": True,
        "min_nodes": 1,
        "max_nodes": 3,
    }


@pytest.mark.parametrize(
    ("edit", "where", "message"),
    [
        (("region: atl1", "region: sfo9"), "cluster.region", "DOKS is not offered in region"),
        (("version: latest", "version: '1.20'"), "cluster.version", "DOKS has no version '1.20'"),
        (
            ("version: latest", "version: 1.20"),
            "cluster.version",
            "expected a version string, got the number 1.2 (YAML reads 1.20 as 1.2)",
        ),
        (
            (
                "size: gpu-mi300x1-192gb",
                # A size the catalogue does not know: the pool says what its nodes offer.
                "size: gpu-nope-1gb\n    cpu: 8\n    memory: 64Gi\n    price_per_hour: 2",
            ),
            "node_pools[0].size",
            "DigitalOcean has no size 'gpu-nope-1gb'",
        ),
        (
            ("size: gpu-mi300x1-192gb", "size: gpu-h100x1-80gb"),
            "node_pools[0].size",
            "size 'gpu-h100x1-80gb' is not offered in atl1",
        ),
    ],
)
def test_invalid_region_version_or_size_is_refused_before_anything_is_created(
    harness: Harness, edit: tuple[str, str], where: str, message: str
) -> None:
    profile = harness.write_profile(harness.profile.read_text().replace(*edit), "edited.yaml")
    result = harness.run("cluster", "create", "--profile", str(profile))
    assert result.code == 2
    assert ("POST", "/v2/kubernetes/clusters") not in harness.fake.calls()
    # Profile mistakes name file:line (gpuscale.profile); account checks name file: key.
    assert re.search(
        rf"{re.escape(str(profile))}(:\d+)?: {re.escape(f'{where}: {message}')}", result.err
    ), result.err
    assert "fix:" in result.err
    assert result.err.count("\n") == 1


# (request that fails, status, extra headers) -> (exit code, text in the one-line error)
API_ERRORS = [
    (
        ("GET /v2/kubernetes/clusters", 401, {}),
        (
            1,
            "rejected the token as invalid, expired or revoked (DigitalOcean: Unable to "
            "authenticate you) (fix: create a token at https://cloud.digitalocean.com",
        ),
    ),
    (("GET /v2/kubernetes/clusters", 403, {}), (1, "the token is not allowed to do this")),
    (
        ("GET /v2/kubernetes/options", 404, {}),
        (2, "GET /v2/kubernetes/options: DigitalOcean has no such resource"),
    ),
    (
        ("POST /v2/kubernetes/clusters", 422, {}),
        (
            2,
            "POST /v2/kubernetes/clusters: DigitalOcean rejected a value in the request "
            "(DigitalOcean: Unable to authenticate you)",
        ),
    ),
    (
        ("POST /v2/kubernetes/clusters", 429, {"Retry-After": "37"}),
        (
            1,
            "rate limited by DigitalOcean (429) (DigitalOcean: Unable to authenticate you) "
            "(fix: run the command again after 37s",
        ),
    ),
    (
        ("POST /v2/kubernetes/clusters", 503, {}),
        (
            1,
            "DigitalOcean failed with 503 (DigitalOcean: Unable to authenticate you) (fix: run "
            "the command again in a few minutes; it finds a cluster this request may have made",
        ),
    ),
]


@pytest.mark.parametrize(("failure", "expect"), API_ERRORS)
def test_api_errors_become_one_line_with_the_fix(
    harness: Harness,
    failure: tuple[str, int, dict[str, str]],
    expect: tuple[int, str],
) -> None:
    request, status, headers = failure
    method, path = request.split(" ")
    harness.fake.fail(method, path, status, "Unable to authenticate you", headers=headers)
    result = harness.run("cluster", "create", "--profile", str(harness.profile))
    assert result.code == expect[0]
    errors = [line for line in result.err.splitlines() if line.startswith("gpuscale: error: ")]
    assert len(errors) == 1, result.err
    assert expect[1] in errors[0]
    assert result.err.endswith(errors[0] + "\n")
    assert "Traceback" not in result.err


def test_429_on_a_read_is_retried_after_retry_after_then_reported(harness: Harness) -> None:
    harness.fake.fail(
        "GET",
        "/v2/kubernetes/clusters",
        429,
        "API Rate limit exceeded.",
        headers={"Retry-After": "20"},
        times=10,
    )
    result = harness.run("cluster", "status", "--profile", str(harness.profile))
    assert result.code == 1
    assert harness.transport.slept == [20.0, 20.0, 20.0]
    assert harness.fake.calls() == [("GET", "/v2/kubernetes/clusters?per_page=200&page=1")] * 4
    assert "run the command again after 20s" in result.err


def test_429_without_retry_after_uses_ratelimit_reset(harness: Harness) -> None:
    reset = int(harness.clock.now) + 42
    harness.fake.fail(
        "POST",
        "/v2/kubernetes/clusters",
        429,
        "API Rate limit exceeded.",
        headers={"ratelimit-reset": str(reset)},
    )
    result = harness.run("cluster", "create", "--profile", str(harness.profile))
    assert result.code == 1
    assert "run the command again after 42s" in result.err


def test_a_5xx_on_a_read_is_retried_and_then_succeeds(harness: Harness) -> None:
    harness.fake.add_cluster("gpu-keda")
    harness.fake.fail("GET", "/v2/sizes", 500, "Server Error", times=2)
    result = harness.run("cluster", "status", "--profile", str(harness.profile))
    assert result.code == 0, result.err
    assert harness.transport.slept == [1.6]  # azure-core: no backoff before the first retry
    assert harness.fake.calls().count(("GET", "/v2/sizes?per_page=200&page=1")) == 3


@pytest.mark.parametrize("status", [429, 500, 503])
def test_a_failed_create_post_is_never_retried(harness: Harness, status: int) -> None:
    harness.fake.fail(
        "POST", "/v2/kubernetes/clusters", status, "try later", headers={"Retry-After": "5"}
    )
    result = harness.run("cluster", "create", "--profile", str(harness.profile))
    assert result.code == 1
    assert harness.fake.calls().count(("POST", "/v2/kubernetes/clusters")) == 1
    assert harness.transport.slept == []


def test_no_connection_is_a_retryable_one_liner(harness: Harness) -> None:
    import requests

    def refuse(*args: object, **kwargs: object) -> None:
        raise requests.ConnectionError("Connection refused")

    harness.fake.handle = refuse  # type: ignore[method-assign]
    result = harness.run("cluster", "status", "--profile", str(harness.profile))
    assert result.code == 1
    assert "cannot reach https://api.digitalocean.com" in result.err
    assert result.err.count("\n") == 1


def test_missing_token_is_an_input_error_naming_the_variable(harness: Harness) -> None:
    harness.environ.clear()
    result = harness.run("cluster", "status", "--profile", str(harness.profile))
    assert result.code == 2
    assert "DIGITALOCEAN_ACCESS_TOKEN is not set" in result.err
    assert harness.fake.sent == []


def test_token_file_is_read_and_sent_as_bearer(harness: Harness) -> None:
    harness.environ.clear()
    token_file = harness.tmp / "token.txt"
    token_file.write_text(TOKEN + "\n", encoding="utf-8")
    harness.fake.add_cluster("gpu-keda")
    result = harness.run(
        "cluster", "status", "--profile", str(harness.profile), "--token-file", str(token_file)
    )
    assert result.code == 0, result.err
    assert harness.fake.sent[0].headers["Authorization"] == f"Bearer {TOKEN}"
    empty = harness.tmp / "token-empty.txt"
    empty.write_text("\n", encoding="utf-8")
    result = harness.run(
        "cluster", "status", "--profile", str(harness.profile), "--token-file", str(empty)
    )
    assert result.code == 2
    assert "the token file is empty" in result.err


def test_status_reports_pools_addons_and_the_cost_now(harness: Harness) -> None:
    harness.fake.add_cluster(
        "gpu-keda",
        pools=[
            {"name": "general", "size": "s-4vcpu-8gb", "count": 2},
            {
                "name": "gpu",
                "size": "gpu-mi300x1-192gb",
                "count": 1,
                "auto_scale": True,
                "min_nodes": 0,
                "max_nodes": 2,
            },
        ],
        amd_gpu_device_plugin={"enabled": True},
    )
    result = harness.run("cluster", "status", "--profile", str(harness.profile), "-o", "json")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["state"] == "running"
    assert doc["node_pools"][1]["nodes"] == {"running": 1}
    assert doc["addons"]["amd_gpu_device_plugin"] is True
    assert doc["addons"]["amd_gpu_device_metrics_exporter_plugin"] is None
    assert doc["cost_per_hour_now"] == pytest.approx(2 * 0.07143 + 1.99)
    text = harness.run("cluster", "status", "--profile", str(harness.profile))
    assert "pool gpu: gpu-mi300x1-192gb, autoscaled 0..2; 1 running" in text.out
    assert "nodes now cost $2.13/h" in text.out


def test_status_of_a_missing_cluster_names_the_profile_key(harness: Harness) -> None:
    result = harness.run("cluster", "status", "--profile", str(harness.profile))
    assert result.code == 2
    assert f"{harness.profile}: cluster.name: no cluster named 'gpu-keda'" in result.err


def test_lists_are_followed_across_pages(harness: Harness) -> None:
    harness.fake.sizes_page_size = 1
    result = harness.run("cluster", "create", "--profile", str(harness.profile), "--no-wait")
    assert result.code == 0, result.err
    assert [c for c in harness.fake.calls() if c[1].startswith("/v2/sizes")] == [
        ("GET", "/v2/sizes?per_page=200&page=1"),
        ("GET", "/v2/sizes?per_page=200&page=2"),
        ("GET", "/v2/sizes?per_page=200&page=3"),
    ]


def test_enable_gpu_metrics_sends_the_tutorials_update_once(harness: Harness) -> None:
    cluster = harness.fake.add_cluster("gpu-keda")
    first = harness.run("cluster", "enable-gpu-metrics", "--profile", str(harness.profile))
    assert first.code == 0, first.err
    put = harness.fake.sent[-1]
    assert (put.method, put.path) == ("PUT", f"/v2/kubernetes/clusters/{cluster['id']}")
    assert put.body == {
        "name": "gpu-keda",
        "amd_gpu_device_metrics_exporter_plugin": {"enabled": True},
    }
    assert put.headers["Content-Type"] == "application/json"
    assert "enabled" in first.out
    second = harness.run("cluster", "enable-gpu-metrics", "--profile", str(harness.profile))
    assert second.code == 0
    assert "already enabled" in second.out
    assert [c[0] for c in harness.fake.calls()].count("PUT") == 1


def test_enable_gpu_metrics_refuses_a_cluster_without_amd_pools(harness: Harness) -> None:
    profile = harness.write_profile(
        "cluster: {name: c, region: nyc2}\nnode_pools: [{name: g, size: gpu-h100x1-80gb, "
        "gpu: nvidia, count: 1}]\n",
        "nv.yaml",
    )
    result = harness.run("cluster", "enable-gpu-metrics", "--profile", str(profile))
    assert result.code == 2
    assert "dcgm-exporter" in result.err


def test_kubeconfig_file_is_built_from_credentials_with_mode_0600(harness: Harness) -> None:
    cluster = harness.fake.add_cluster("gpu-keda")
    target = harness.tmp / "out" / "kubeconfig"
    result = harness.run(
        "cluster",
        "kubeconfig",
        "--profile",
        str(harness.profile),
        "-f",
        str(target),
        "--expiry",
        "2h",
    )
    assert result.code == 0, result.err
    assert harness.fake.calls()[-1] == (
        "GET",
        f"/v2/kubernetes/clusters/{cluster['id']}/credentials?expiry_seconds=7200",
    )
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    from ruamel.yaml import YAML

    doc = YAML(typ="safe").load(target.read_text())
    assert doc["current-context"] == "do-atl1-gpu-keda"
    assert doc["clusters"][0]["cluster"]["server"] == (
        f"https://{cluster['id']}.k8s.ondigitalocean.com"
    )
    assert doc["users"][0] == {
        "name": "do-atl1-gpu-keda-admin",
        "user": {"token": "doks-cluster-token-ab12cd34ef56"},
    }
    assert "doks-cluster-token" not in result.out + result.err
    assert "expire 2026-12-01T11:50:28.889080521Z" in result.out


def test_kubeconfig_merge_keeps_other_contexts(harness: Harness) -> None:
    harness.fake.add_cluster("gpu-keda")
    existing = harness.tmp / "kube" / "config"
    existing.parent.mkdir()
    existing.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: kind\n"
        "clusters: [{name: kind, cluster: {server: 'https://127.0.0.1:6443'}}]\n"
        "users: [{name: kind, user: {token: abc}}]\n"
        "contexts: [{name: kind, context: {cluster: kind, user: kind}}]\n",
        encoding="utf-8",
    )
    harness.environ["KUBECONFIG"] = f"{existing}:/nonexistent/other"
    result = harness.run("cluster", "kubeconfig", "--profile", str(harness.profile), "--merge")
    assert result.code == 0, result.err
    from ruamel.yaml import YAML

    doc = YAML(typ="safe").load(existing.read_text())
    assert [c["name"] for c in doc["contexts"]] == ["kind", "do-atl1-gpu-keda"]
    assert doc["current-context"] == "do-atl1-gpu-keda"
    assert stat.S_IMODE(existing.stat().st_mode) == 0o600
    again = harness.run(
        "cluster", "kubeconfig", "--profile", str(harness.profile), "--merge", "--no-set-current"
    )
    assert again.code == 0
    doc = YAML(typ="safe").load(existing.read_text())
    assert [c["name"] for c in doc["contexts"]] == ["kind", "do-atl1-gpu-keda"]


def test_kubeconfig_refuses_to_merge_into_a_broken_file(harness: Harness) -> None:
    harness.fake.add_cluster("gpu-keda")
    broken = harness.tmp / "broken"
    broken.write_text("clusters: [\n  - name: x\n bad", encoding="utf-8")
    harness.environ["KUBECONFIG"] = str(broken)
    before = broken.read_text()
    result = harness.run("cluster", "kubeconfig", "--profile", str(harness.profile), "--merge")
    assert result.code == 2
    assert "not valid YAML" in result.err
    assert broken.read_text() == before


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((), "say where the kubeconfig goes"),
        (("--merge", "--expiry", "0s"), "the credentials must live at least 1s"),
        (("--merge", "--expiry", "soon"), "--expiry: expected a duration"),
    ],
)
def test_kubeconfig_flag_errors(harness: Harness, argv: tuple[str, ...], message: str) -> None:
    result = harness.run("cluster", "kubeconfig", "--profile", str(harness.profile), *argv)
    assert result.code == 2
    assert message in result.err
    assert harness.fake.sent == []


def test_kubeconfig_of_a_provisioning_cluster_is_refused(harness: Harness) -> None:
    harness.fake.add_cluster("gpu-keda", state="provisioning")
    result = harness.run("cluster", "kubeconfig", "--profile", str(harness.profile), "--merge")
    assert result.code == 1
    assert "is provisioning, not running" in result.err


def test_delete_lists_what_goes_and_stops_without_confirmation(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness.fake.add_cluster("gpu-keda")
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    result = harness.run("cluster", "delete", "--profile", str(harness.profile))
    assert result.code == 1
    assert "pool general: s-4vcpu-8gb, fixed 2; 2 running" in result.err
    assert "load_balancers: lb-001 -> keep (still billed)" in result.err
    assert "volumes: volume-001 -> keep (still billed)" in result.err
    assert "nothing deleted" in result.err
    assert "DELETE" not in [c[0] for c in harness.fake.calls()]
    assert len(harness.fake.clusters) == 1


def test_delete_with_confirmation_sends_delete(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = harness.fake.add_cluster("gpu-keda")
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    result = harness.run("cluster", "delete", "--profile", str(harness.profile))
    assert result.code == 0, result.err
    assert harness.fake.calls()[-2:] == [
        ("GET", f"/v2/kubernetes/clusters/{cluster['id']}/destroy_with_associated_resources"),
        ("DELETE", f"/v2/kubernetes/clusters/{cluster['id']}"),
    ]
    assert harness.fake.clusters == {}


def test_delete_yes_with_associated_resources_uses_the_dangerous_endpoint(
    harness: Harness,
) -> None:
    cluster = harness.fake.add_cluster("gpu-keda")
    plan = _plan(
        harness,
        "cluster",
        "delete",
        "--profile",
        str(harness.profile),
        "--with-associated-resources",
    )
    result = harness.run(
        "cluster",
        "delete",
        "--profile",
        str(harness.profile),
        "--yes",
        "--with-associated-resources",
    )
    assert result.code == 0, result.err
    last = harness.fake.calls()[-1]
    assert last == (
        "DELETE",
        f"/v2/kubernetes/clusters/{cluster['id']}/destroy_with_associated_resources/dangerous",
    )
    assert plan[-1]["url"].replace("{cluster_id}", cluster["id"]).endswith(last[1])
    assert "load_balancers: lb-001 -> delete" in result.err
