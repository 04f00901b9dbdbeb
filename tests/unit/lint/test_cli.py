"""``gpuscale lint`` as a command: flags, files, directories, stdin, outputs, exit codes.

The command is not registered in ``gpuscale.cli.main`` yet (it waits for the real
manifest loader), so these tests register it on a fresh Typer app with the test adapter.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from gpuscale.cli.lint_cmd import collect_files, register
from gpuscale.errors import ManifestError
from tests.unit.lint.adapter import load_text, read_profile
from tests.unit.lint.conftest import DATA, line_of

TUTORIAL = DATA / "tutorial" / "resources.yaml"
FIXED = DATA / "tutorial" / "fixed.yaml"


def _parse(text: str, file: str) -> list[object]:
    if "\t" in text.split("\n", 1)[0]:
        raise ManifestError("tabs are not allowed in YAML indentation", where=f"{file}:1")
    return list(load_text(text, file))


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """Test root."""

    register(app, parse=_parse, read_profile=read_profile)  # type: ignore[arg-type]
    return app


def _run(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(_app(), ["lint", *argv], input=stdin)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "k8s" / "nested").mkdir(parents=True)
    shutil.copy(TUTORIAL, tmp_path / "k8s" / "resources.yaml")
    shutil.copy(FIXED, tmp_path / "k8s" / "nested" / "fixed.yml")
    (tmp_path / "k8s" / "README.md").write_text("not a manifest")
    (tmp_path / "k8s" / ".hidden").mkdir()
    (tmp_path / "k8s" / ".hidden" / "x.yaml").write_text("kind: [")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_findings_exit_1_with_text(workdir: Path) -> None:
    code, out, _ = _run("k8s/resources.yaml")
    assert code == 1
    assert "k8s/resources.yaml" in out
    assert "query-divides-by-replicas" in out


def test_clean_manifests_exit_0(workdir: Path) -> None:
    code, out, _ = _run("k8s/nested/fixed.yml")
    assert code == 0
    assert "0 errors, 0 warnings, 0 info" in out


def test_fail_on_warning_and_ignore(workdir: Path) -> None:
    errors = "query-divides-by-replicas,servicemonitor-namespace-mismatch,gpu-node-selector"
    code, _, _ = _run("k8s/resources.yaml", "--ignore", errors)
    assert code == 0
    code, _, _ = _run("k8s/resources.yaml", "--ignore", errors, "--fail-on", "warning")
    assert code == 1


def test_directory_is_walked_and_hidden_entries_skipped(workdir: Path) -> None:
    assert collect_files(["k8s"]) == ["k8s/resources.yaml", "k8s/nested/fixed.yml"]
    code, out, _ = _run("k8s", "-o", "json")
    document = json.loads(out)
    assert code == 1
    assert document["summary"]["files"] == ["k8s/resources.yaml", "k8s/nested/fixed.yml"]
    assert document["summary"]["objects"] == 9


def test_stdin(workdir: Path) -> None:
    code, out, _ = _run(
        "-", "-o", "json", "--select", "cooldown-has-no-effect", stdin=TUTORIAL.read_text()
    )
    document = json.loads(out)
    assert code == 0
    [finding] = document["findings"]
    assert finding["location"]["file"] == "-"
    assert finding["location"]["line"] == line_of(TUTORIAL.read_text(), "cooldownPeriod:")


def test_sarif_uris_are_relative_to_the_working_directory(workdir: Path) -> None:
    code, out, _ = _run(str(workdir / "k8s" / "resources.yaml"), "-o", "sarif")
    log = json.loads(out)
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in log["runs"][0]["results"]
    }
    assert code == 1
    assert uris == {"k8s/resources.yaml"}


def test_namespace_flag(workdir: Path) -> None:
    _, out, _ = _run("k8s/resources.yaml", "-n", "kube-system", "-o", "json")
    rules = {f["rule"] for f in json.loads(out)["findings"]}
    assert "servicemonitor-namespace-mismatch" not in rules


def test_profile(workdir: Path) -> None:
    (workdir / "profile.yaml").write_text(
        "release_name: kps\nprometheus_namespace: monitoring\nnode_pools:\n"
        "  - {name: gpu, gpu_vendor: amd, gpus_per_node: 1, max_nodes: 2}\n"
    )
    _, out, _ = _run("k8s/resources.yaml", "--profile", "profile.yaml", "-o", "json")
    rules = {f["rule"] for f in json.loads(out)["findings"]}
    assert {"prometheus-address-namespace", "max-exceeds-gpu-capacity"} <= rules


def test_list_and_explain(workdir: Path) -> None:
    code, out, _ = _run("--list")
    assert code == 0
    assert "query-divides-by-replicas" in out
    code, out, _ = _run("--explain", "query-unscoped")
    assert code == 0
    assert out.startswith("query-unscoped: ")


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        ((), "PATH: no manifests given"),
        (("nope.yaml",), "nope.yaml: no such file or directory"),
        (("k8s/nested", "--select", "not-a-rule"), "--select: unknown rule not-a-rule"),
        (("--explain", "not-a-rule"), "--explain: unknown rule not-a-rule"),
        (("tabbed.yaml",), "tabbed.yaml:1: tabs are not allowed"),
        (("empty",), "empty: no .yaml, .yml or .json files"),
    ],
)
def test_input_errors_exit_2_with_one_line(
    workdir: Path, argv: tuple[str, ...], words: str
) -> None:
    (workdir / "tabbed.yaml").write_text("kind:\tService\n")
    (workdir / "empty").mkdir()
    code, out, err = _run(*argv)
    assert code == 2
    assert out == ""
    assert err.startswith("gpuscale: error: ")
    assert words in err
    assert len(err.strip().splitlines()) == 1


def test_usage_errors_exit_2(workdir: Path) -> None:
    code, _, _ = _run("k8s", "--output", "xml")
    assert code == 2
    code, _, _ = _run("k8s", "--fail-on", "fatal")
    assert code == 2
