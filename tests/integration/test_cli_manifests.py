"""``gpuscale init``, ``render`` and ``profile check|show`` through the command line, on real
files: what is written, what is refused (and that nothing is then written), exit codes,
and one-line errors."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from gpuscale.cli.main import main
from gpuscale.inputs import read_manifests, read_profile
from gpuscale.manifests import load_text, validate

pytestmark = pytest.mark.integration

MANIFESTS = ["deployment.yaml", "scaledobject.yaml", "service.yaml", "servicemonitor.yaml"]


def _init(directory: Path, *extra: str) -> int:
    return main(
        [
            "init",
            str(directory),
            "--gpu",
            "nvidia",
            "--provider",
            "doks",
            "--name",
            "llm",
            "--namespace",
            "ml",
            *extra,
        ]
    )


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("gpuscale: error: ")
    return err


def test_init_writes_a_set_that_validates_and_loads(tmp_path: Path) -> None:
    target = tmp_path / "app"
    assert _init(target) == 0
    assert sorted(p.name for p in (target / "manifests").iterdir()) == MANIFESTS
    loaded = read_manifests([target])
    assert len(loaded) == 4
    assert validate(loaded) == []
    assert {m.namespace for m in loaded} == {"ml"}
    profile = read_profile(target / "gpuscale.yaml")
    assert profile.gpu_pools[0].gpu == "nvidia"
    assert not [p for p in target.rglob(".*") if p.is_file()]  # no temporary files left


def test_init_sets_the_image_and_scrape_interval_and_says_what_next(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "app"
    image = "registry.example.com/me/gpuscale-app:0.1.0"
    assert _init(target, "--image", image, "--scrape-interval", "30s") == 0
    err = capsys.readouterr().err.splitlines()
    assert err[-2:] == [
        f"next: gpuscale lint {target / 'manifests'} --profile {target / 'gpuscale.yaml'}",
        f"then: gpuscale deploy {target / 'manifests'} --profile {target / 'gpuscale.yaml'}",
    ]
    loaded = read_manifests([target])
    (deployment,) = loaded.by_kind("Deployment")
    assert deployment.body["spec"]["template"]["spec"]["containers"][0]["image"] == image
    (monitor,) = loaded.by_kind("ServiceMonitor")
    assert monitor.body["spec"]["endpoints"][0]["interval"] == "30s"
    assert read_profile(target / "gpuscale.yaml").prometheus.scrape_interval == 30.0


def test_init_refuses_to_overwrite_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "app"
    (target / "manifests").mkdir(parents=True)
    (target / "manifests" / "service.yaml").write_text("mine\n")
    assert _init(target) == 2
    err = _error_line(capsys)
    assert f"{target / 'manifests' / 'service.yaml'}: already exists" in err
    assert "--force" in err
    assert (target / "manifests" / "service.yaml").read_text() == "mine\n"
    assert sorted(p.name for p in target.rglob("*")) == ["manifests", "service.yaml"]


def test_init_force_overwrites(tmp_path: Path) -> None:
    target = tmp_path / "app"
    assert _init(target) == 0
    (target / "gpuscale.yaml").write_text("broken: [\n")
    assert _init(target, "--force") == 0
    read_profile(target / "gpuscale.yaml")


def test_init_stdout_prints_the_manifests_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", "--stdout", "--gpu", "amd", "--name", "a", "--namespace", "b"]) == 0
    out = capsys.readouterr().out
    loaded = load_text(out, "<stdout>")
    assert [m.kind for m in loaded] == ["Deployment", "Service", "ServiceMonitor", "ScaledObject"]
    assert validate(loaded) == []
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (["--gpu", "intel"], "--gpu"),
        (["--provider", "aws"], "--provider"),
        (["--name", "My_App"], "--name"),
        (["--name", "1app", "--namespace", "ml"], "--name"),
        (["--min-replicas", "0"], "--min-replicas"),
        (["--scrape-interval", "often"], "--scrape-interval"),
    ],
)
def test_init_bad_flags_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], where: str
) -> None:
    assert main(["init", str(tmp_path / "x"), *args]) == 2
    assert f"gpuscale: error: {where}: " in _error_line(capsys)
    assert not (tmp_path / "x").exists()


def test_init_into_a_file_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "file"
    target.write_text("")
    assert _init(target) == 2
    assert "is not a directory" in _error_line(capsys)


def test_render_prints_one_stream_with_namespaces_filled(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["render", "examples/tutorial", "-n", "gpu-demo"]) == 0
    out = capsys.readouterr().out
    loaded = load_text(out, "<stdout>")
    assert [m.kind for m in loaded] == [
        "ConfigMap",
        "Deployment",
        "Service",
        "ServiceMonitor",
        "ScaledObject",
    ]
    assert {m.namespace for m in loaded} == {"gpu-demo"}
    original = read_manifests(["examples/tutorial"])
    assert loaded[0].body["data"] == original[0].body["data"]


def test_render_reports_schema_errors_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  replicas: many\n"
        "  selector: {matchLabels: {a: b}}\n  template: {metadata: {labels: {a: b}}}\n"
        "---\napiVersion: example.com/v1\nkind: Widget\n"
    )
    assert main(["render", str(bad)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"gpuscale: error: {bad}:5: Deployment/a: spec.replicas: expected an integer, "
        "got 'many' (fix: write an integer)",
        f"gpuscale: info: {bad}:10: Widget/: kind: no schema known for example.com/v1 "
        "Widget (a custom resource of a group gpuscale does not know); not validated "
        "(fix: nothing, if this kind's CRD is installed in the cluster)",
    ]
    assert main(["render", "--no-validate", str(bad)]) == 0
    assert "replicas: many" in capsys.readouterr().out


def test_render_broken_yaml_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: X\nspec:\n  a: b: c\n")
    assert main(["render", str(bad)]) == 2
    assert f"{bad}:3: not valid YAML" in _error_line(capsys)
    assert main(["render", str(tmp_path / "missing.yaml")]) == 2
    assert "no such file or directory" in _error_line(capsys)


def test_render_refuses_an_object_defined_twice_naming_both_places(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tmp_path / "a.yaml"
    first.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n")
    second = tmp_path / "b.yaml"
    second.write_text(
        "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  namespace: default\n"
        "  name: web\n"
    )
    assert main(["render", "--no-validate", str(first), str(second)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (error,) = captured.err.splitlines()
    assert error.startswith(f"gpuscale: error: {second}:9: Deployment default/web "), error
    assert f"already defined at {first}:1" in error
    assert "(fix: keep one definition" in error
    # Placed in another namespace by -n, the first is a different object.
    assert main(["render", "--no-validate", "-n", "other", str(first), str(second)]) == 0
    assert len(load_text(capsys.readouterr().out, "<stdout>")) == 3


_SELF_ALIAS = "a: &a [*a]\n"
_LAUGHS = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n" + "".join(
    f"  l{n}: &l{n} [{', '.join([f'*l{n - 1}' if n else 'lol'] * 10)}]\n" for n in range(8)
)


@pytest.mark.parametrize("command", ["render", "lint"])
@pytest.mark.parametrize(
    "case",
    [(_SELF_ALIAS, 1, "would contain itself"), (_LAUGHS, 8, "excessive aliasing")],
    ids=["self-alias", "billion-laughs"],
)
def test_runaway_aliases_exit_2_with_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    case: tuple[str, int, str],
) -> None:
    """Was a RecursionError traceback, and a 7-level "billion laughs" took over 30 s."""
    text, line, words = case
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert main([command, "-"]) == 2
    error = _error_line(capsys)
    assert error.startswith(f"gpuscale: error: <stdin>:{line}: "), error
    assert words in error


_MERGE_CYCLE = "kind: X\nv: &v\n  <<: *v\n"


@pytest.mark.parametrize("command", ["profile", "scenario"])
@pytest.mark.parametrize(
    "case",
    [
        (_SELF_ALIAS, 1, "would contain itself"),
        (_MERGE_CYCLE, 2, "would contain itself"),
        (_LAUGHS, 8, "excessive aliasing"),
    ],
    ids=["self-alias", "merge-cycle", "billion-laughs"],
)
def test_runaway_aliases_in_a_profile_or_scenario_exit_2_with_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    case: tuple[str, int, str],
) -> None:
    """The scenario reader used ruamel's round-trip loader alone: a merge key that
    names its own anchor ended in an AttributeError traceback."""
    text, line, words = case
    bad = tmp_path / "bad.yaml"
    bad.write_text(text, encoding="utf-8")
    if command == "profile":
        argv = ["profile", "check", str(bad)]
    else:
        argv = ["simulate", "examples/tutorial-fixed", "--scenario", str(bad)]
    assert main(argv) == 2
    error = _error_line(capsys)
    assert error.startswith(f"gpuscale: error: {bad}:{line}: "), error
    assert words in error


def test_profile_check_ok_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "check", "examples/tutorial/gpuscale.yaml"]) == 0
    assert "ok (doks, 2 node pools of which 1 with GPUs" in capsys.readouterr().out
    bad = tmp_path / "gpuscale.yaml"
    bad.write_text("cluster:\n  provider: doks\nhpa:\n  sync_perod: 5s\n")
    assert main(["profile", "check", str(bad)]) == 2
    assert _error_line(capsys) == (
        f"gpuscale: error: {bad}:4: unknown key 'sync_perod' in hpa "
        "(fix: did you mean sync_period?)"
    )
    assert main(["profile", "check", str(tmp_path / "none.yaml")]) == 2
    assert "no such file" in _error_line(capsys)
    assert main(["profile", "check", str(tmp_path)]) == 2
    assert "is a directory" in _error_line(capsys)


def test_profile_show_fills_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "show", "examples/tutorial/gpuscale.yaml", "-o", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["autoscaler"]["scale_up_delay_gpu"] == "30s"
    assert data["prometheus"]["address"] == (
        "http://prometheus-operated.kube-system.svc.cluster.local:9090"
    )
    gpu = next(pool for pool in data["node_pools"] if pool["name"] == "gpu")
    assert gpu["price_per_hour"] == 1.99
    assert gpu["taints"] == [{"key": "amd.com/gpu", "value": "", "effect": "NoSchedule"}]
    assert data["workloads"]["go-from-configmap"]["startup_time"] == "30s"
    assert main(["profile", "show"]) == 0
    shown = capsys.readouterr().out
    assert "scan_interval: 10s" in shown
    assert main(["profile", "show", "-o", "xml"]) == 2
    assert "--output" in _error_line(capsys)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("prometheus:\n  scrape_intervl: 30s\n", 2, "unknown key 'scrape_intervl'"),
        ("hpa:\n  tolerance: lots\n", 2, "hpa.tolerance"),
        ("autoscaler:\n  scan_interval: often\n", 2, "expected a duration"),
        ("cluster:\n  provider: [doks\n", 3, "not valid YAML"),
        ("node_pools:\n  - name: x\n    size: my-node\n    count: 1\n", 3, "not in the catalogue"),
        ("node_pools:\n  - {name: x, size: s-2vcpu-4gb, count: 1, max_nodes: 2}\n", 2, "both set"),
        ("just text\n", 1, "must be a mapping"),
        ("a: 1\n---\nb: 2\n", 3, "one YAML document"),
        ("cluster: &a {x: *a}\n", 1, "would contain itself"),
    ],
)
def test_profile_check_bad_input_classes_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: int, words: str
) -> None:
    profile = tmp_path / "gpuscale.yaml"
    profile.write_text(text)
    assert main(["profile", "check", str(profile)]) == 2
    error = _error_line(capsys)
    assert error.startswith(f"gpuscale: error: {profile}:{line}: "), error
    assert words in error
    assert "(fix: " in error
    assert capsys.readouterr().out == ""
