"""``gpuscale lint`` as a command: flags, files, directories, stdin, outputs, exit codes.

Run through the real entry point (:func:`gpuscale.cli.main.main`), the real loader and
the real profile reader, on copies of ``examples/``.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from gpuscale.cli.main import COMMAND_MODULES, main
from gpuscale.lint import catalogue
from tests.unit.lint.conftest import EXAMPLES, line_of

TUTORIAL = EXAMPLES / "tutorial" / "resources.yaml"
FIXED = EXAMPLES / "tutorial-fixed" / "resources.yaml"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["lint", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "k8s" / "nested").mkdir(parents=True)
    shutil.copy(TUTORIAL, tmp_path / "k8s" / "resources.yaml")
    shutil.copy(FIXED, tmp_path / "k8s" / "nested" / "fixed.yml")
    shutil.copy(EXAMPLES / "tutorial" / "gpuscale.yaml", tmp_path / "k8s" / "gpuscale.yaml")
    (tmp_path / "k8s" / "README.md").write_text("not a manifest")
    (tmp_path / "k8s" / ".hidden").mkdir()
    (tmp_path / "k8s" / ".hidden" / "x.yaml").write_text("kind: [")
    # Manifests with no profile beside them, one level up or in the working directory.
    (tmp_path / "alone").mkdir()
    shutil.copy(TUTORIAL, tmp_path / "alone" / "resources.yaml")
    shutil.copy(FIXED, tmp_path / "alone" / "fixed.yml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_registered_after_profile() -> None:
    assert COMMAND_MODULES.index("lint_cmd") == COMMAND_MODULES.index("profile_cmd") + 1


def test_findings_exit_1_with_text(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "k8s/resources.yaml")
    assert code == 1
    assert err == ""
    assert "k8s/resources.yaml" in out
    assert "query-divides-by-replicas" in out


def test_clean_manifests_exit_0(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "alone/fixed.yml", "--fail-on", "warning")
    assert code == 0
    assert "0 errors, 0 warnings" in out


def test_fail_on_warning_and_ignore(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    errors = "query-divides-by-replicas,servicemonitor-namespace-mismatch"
    code, _, _ = _run(capsys, "k8s/resources.yaml", "--ignore", errors)
    assert code == 0
    code, _, _ = _run(capsys, "k8s/resources.yaml", "--ignore", errors, "--fail-on", "warning")
    assert code == 1


def test_directory_is_walked_and_the_profile_and_hidden_entries_skipped(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, "k8s", "-o", "json")
    document = json.loads(out)
    assert code == 1
    assert document["summary"]["files"] == ["k8s/nested/fixed.yml", "k8s/resources.yaml"]
    assert document["summary"]["objects"] == 9


def test_stdin(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(TUTORIAL.read_text()))
    code, out, _ = _run(capsys, "-", "-o", "json", "--select", "cooldown-has-no-effect")
    document = json.loads(out)
    assert code == 0
    [finding] = document["findings"]
    assert finding["location"]["file"] == "<stdin>"
    assert finding["location"]["line"] == line_of(TUTORIAL.read_text(), "cooldownPeriod:")


def test_sarif_uris_are_relative_to_the_working_directory(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, str(workdir / "k8s" / "resources.yaml"), "-o", "sarif")
    log = json.loads(out)
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in log["runs"][0]["results"]
    }
    assert code == 1
    assert uris == {"k8s/resources.yaml"}


def test_namespace_flag(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, "k8s/resources.yaml", "-n", "kube-system", "-o", "json")
    rules = {f["rule"] for f in json.loads(out)["findings"]}
    assert "servicemonitor-namespace-mismatch" not in rules
    _, out, _ = _run(capsys, "k8s/resources.yaml", "-o", "json")
    assert "servicemonitor-namespace-mismatch" in {f["rule"] for f in json.loads(out)["findings"]}


def test_profile(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "profile.yaml").write_text(
        "prometheus:\n  release: kps\n  namespace: monitoring\n"
        "  selects_all_servicemonitors: false\nnode_pools:\n"
        "  - {name: gpu, size: gpu-mi300x1-192gb, max_nodes: 2}\n"
    )
    _, out, _ = _run(capsys, "k8s/resources.yaml", "--profile", "profile.yaml", "-o", "json")
    rules = {f["rule"] for f in json.loads(out)["findings"]}
    assert {
        "prometheus-address-namespace",
        "max-exceeds-gpu-capacity",
        "servicemonitor-not-selected",
    } <= rules
    assert "prometheus-in-kube-system" not in rules


def test_list_and_explain(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--list")
    assert code == 0
    assert "query-divides-by-replicas" in out
    assert "flaps-under-steady-load" in out
    assert " ".join(out.split()).count("(needs the simulator)") == 1
    code, out, _ = _run(capsys, "--explain", "query-unscoped")
    assert code == 0
    assert out.startswith("query-unscoped: ")
    code, out, _ = _run(capsys, "--explain", "flaps-under-steady-load")
    assert code == 0
    assert "needs: simulator\n" in out


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        ((), "PATH: no manifests given"),
        (("nope.yaml",), "nope.yaml: no such file or directory"),
        (("k8s/nested", "--select", "not-a-rule"), "--select: unknown rule not-a-rule"),
        (("--explain", "not-a-rule"), "--explain: unknown rule not-a-rule"),
        (("broken.yaml",), "broken.yaml:3: not valid YAML"),
        (("empty",), "empty: the directory holds no *.yaml or *.yml files"),
        (("k8s", "--profile", "bad-profile.yaml"), "bad-profile.yaml:1: unknown key 'nodes'"),
        (("blank.yaml",), "blank.yaml: no objects found (fix: check the paths hold manifests)"),
        (("/dev/null",), "/dev/null: no objects found"),
        (("comments.yaml", "-o", "json"), "comments.yaml: no objects found"),
        (("k8s/nested", "--select", ""), "--select: names no rule"),
        (("k8s/nested", "--select", " , "), "--select: names no rule"),
        (("k8s/nested", "-n", "Bad_NS"), "--namespace: 'Bad_NS' is not a valid namespace"),
        (("k8s/nested", "-n", "a" * 64), "is not a valid namespace"),
        (("--explain", "query-unscoped", "k8s"), "--explain: takes no manifests, got k8s"),
        (("--list", "k8s"), "--list: takes no manifests, got k8s"),
        (("--list", "-o", "sarif"), "--list: prints text or JSON, not SARIF"),
        (("--list", "--explain", "query-unscoped"), "--list and --explain are exclusive"),
    ],
)
def test_input_errors_exit_2_with_one_line(
    workdir: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], words: str
) -> None:
    (workdir / "broken.yaml").write_text("kind: Service\nmetadata: [\n")
    (workdir / "empty").mkdir()
    (workdir / "bad-profile.yaml").write_text("nodes: 3\n")
    (workdir / "blank.yaml").write_text("")
    (workdir / "comments.yaml").write_text("# nothing yet\n---\n---\n")
    code, out, err = _run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.startswith("gpuscale: error: ")
    assert words in err
    assert len(err.strip().splitlines()) == 1


def test_usage_errors_exit_2(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = _run(capsys, "k8s", "--output", "xml")
    assert code == 2
    code, _, _ = _run(capsys, "k8s", "--fail-on", "fatal")
    assert code == 2


def test_nothing_to_lint_is_the_same_error_as_render(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "blank.yaml").write_text("")
    assert main(["render", "blank.yaml"]) == 2
    render_error = capsys.readouterr().err
    code, _, lint_error = _run(capsys, "blank.yaml")
    assert code == 2
    assert lint_error == render_error


def test_a_selected_rule_that_cannot_run_is_said_and_exits_2(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, "alone/resources.yaml", "--select", "max-exceeds-gpu-capacity")
    assert code == 2
    assert "note: rule max-exceeds-gpu-capacity was not run: it needs the profile" in out
    assert "none of the selected rules could run" in out
    code, out, _ = _run(
        capsys, "alone/resources.yaml", "--select", "max-exceeds-gpu-capacity", "-o", "json"
    )
    document = json.loads(out)
    assert code == 2
    [entry] = document["notRun"]
    assert entry["rule"] == "max-exceeds-gpu-capacity"
    assert entry["reason"].startswith("it needs the profile: pass --profile FILE")
    assert any("max-exceeds-gpu-capacity was not run" in note for note in document["notes"])
    code, out, _ = _run(
        capsys, "alone/resources.yaml", "--select", "max-exceeds-gpu-capacity", "-o", "sarif"
    )
    [invocation] = json.loads(out)["runs"][0]["invocations"]
    assert code == 2
    assert invocation["executionSuccessful"] is False
    assert "was not run" in invocation["toolExecutionNotifications"][0]["message"]["text"]


def test_a_rule_that_cannot_run_beside_one_that_can(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(
        capsys,
        "alone/resources.yaml",
        "--select",
        "max-exceeds-gpu-capacity,cooldown-has-no-effect",
        "-o",
        "json",
    )
    document = json.loads(out)
    assert code == 0
    assert [f["rule"] for f in document["findings"]] == ["cooldown-has-no-effect"]
    assert [entry["rule"] for entry in document["notRun"]] == ["max-exceeds-gpu-capacity"]


def test_the_simulation_rule_runs_when_selected(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(
        capsys, "alone/resources.yaml", "--select", "flaps-under-steady-load", "-o", "json"
    )
    document = json.loads(out)
    assert code == 0, "a warning does not fail the run by default"
    assert document["notRun"] == []
    [finding] = document["findings"]
    assert finding["rule"] == "flaps-under-steady-load"
    assert finding["location"]["line"] == line_of(TUTORIAL.read_text(), "query:")


def test_a_profile_rule_without_a_profile_is_said(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, "alone/resources.yaml", "--select", "max-exceeds-gpu-capacity")
    assert code == 2
    assert "max-exceeds-gpu-capacity was not run: it needs the profile" in " ".join(out.split())
    code, _, _ = _run(
        capsys,
        "alone/resources.yaml",
        "--select",
        "max-exceeds-gpu-capacity",
        "--profile",
        "k8s/gpuscale.yaml",
    )
    assert code == 0


def test_the_profile_is_found_by_the_rule_every_command_uses(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    select = ("--select", "prometheus-address-namespace", "-o", "json")
    code, _, _ = _run(capsys, "alone/resources.yaml", *select)
    assert code == 2, "no profile beside, above or in the working directory"
    (workdir / "gpuscale.yaml").write_text("prometheus:\n  namespace: monitoring\n")
    code, out, _ = _run(capsys, "alone/resources.yaml", *select)
    assert code == 1, "the working directory's, one level up from alone/"
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["prometheus-address-namespace"]
    code, out, _ = _run(capsys, "k8s/resources.yaml", *select)
    assert code == 0, "k8s/gpuscale.yaml (kube-system) beside the manifests wins"
    assert json.loads(out)["findings"] == []
    (workdir / "other.yaml").write_text("prometheus:\n  namespace: kube-system\n")
    code, out, _ = _run(capsys, "alone/resources.yaml", *select, "--profile", "other.yaml")
    assert code == 0
    assert json.loads(out)["findings"] == []


def test_help_says_where_the_profile_comes_from(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "--help"]) == 0
    words = capsys.readouterr().out.replace("│", " ").split()
    assert "default: the one beside the manifests (or one level up), else ./gpuscale.yaml" in (
        " ".join(words)
    )


def test_schema_problems_fail_the_command(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = FIXED.read_text().replace("  # No replicas:", "  replicas: two  # No replicas:")
    (workdir / "bad.yaml").write_text(text)
    code, out, _ = _run(capsys, "bad.yaml", "-o", "json")
    [finding] = [f for f in json.loads(out)["findings"] if f["rule"] == "schema-invalid"]
    assert code == 1
    assert finding["location"]["line"] == line_of(text, "replicas: two")
    assert finding["message"] == "spec.replicas: expected an integer, got 'two'"


def test_a_namespace_at_the_label_limit_is_accepted(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, "alone/fixed.yml", "-n", "a" * 63, "-o", "json")
    assert code == 0, err


def test_list_and_explain_honour_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--list", "-o", "json")
    assert code == 0
    document = json.loads(out)
    assert document["schema"] == "gpuscale.lint-rules/v1"
    assert [r["rule"] for r in document["rules"]] == [r.slug for r in catalogue()]
    flaps = next(r for r in document["rules"] if r["rule"] == "flaps-under-steady-load")
    assert flaps["requires"] == "simulator"
    code, out, _ = _run(capsys, "--explain", "query-unscoped", "-o", "json")
    assert code == 0
    (entry,) = json.loads(out)["rules"]
    assert entry["rule"] == "query-unscoped"
    assert entry["requires"] is None
    assert entry["fix"]
