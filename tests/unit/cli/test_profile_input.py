"""The one rule for finding the profile (``gpuscale.cli._profile_input``), and that every
command that reads manifests follows it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpuscale.cli._profile_input import find_profile_file, optional_profile
from gpuscale.cli._simulate import find_profile

EXAMPLES = Path(__file__).parents[3] / "examples"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``gpuscale init``'s layout, DIR/gpuscale.yaml beside DIR/manifests/, in a
    working directory with a profile of its own."""
    (tmp_path / "DIR" / "manifests").mkdir(parents=True)
    shutil.copy(EXAMPLES / "tutorial" / "resources.yaml", tmp_path / "DIR" / "manifests")
    (tmp_path / "DIR" / "gpuscale.yaml").write_text("hpa: {sync_period: 20s}\n")
    (tmp_path / "gpuscale.yaml").write_text("hpa: {sync_period: 30s}\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_an_explicit_profile_wins(project: Path) -> None:
    (project / "other.yaml").write_text("")
    assert find_profile_file(Path("other.yaml"), ["DIR"]) == Path("other.yaml")


@pytest.mark.parametrize(
    "manifest", ["DIR", "DIR/manifests", "DIR/manifests/resources.yaml"], ids=str
)
def test_beside_the_manifests_or_one_level_up(project: Path, manifest: str) -> None:
    assert find_profile_file(None, [manifest]) == Path("DIR/gpuscale.yaml")
    profile, source = optional_profile(None, [manifest])
    assert (profile.hpa.sync_period, source) == (20.0, "DIR/gpuscale.yaml")


def test_beside_the_file_before_one_level_up(project: Path) -> None:
    (project / "DIR" / "manifests" / "gpuscale.yml").write_text("")
    assert find_profile_file(None, ["DIR/manifests/resources.yaml"]) == Path(
        "DIR/manifests/gpuscale.yml"
    )


def test_only_the_first_manifest_path_counts_then_the_working_directory(project: Path) -> None:
    (project / "elsewhere" / "deep").mkdir(parents=True)
    assert find_profile_file(None, ["elsewhere/deep", "DIR"]) == Path("gpuscale.yaml")
    assert find_profile_file(None, ["-", "DIR"]) == Path("gpuscale.yaml")
    assert find_profile_file(None, []) == Path("gpuscale.yaml")


def test_nothing_found_is_the_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m").mkdir()
    profile, source = optional_profile(None, ["m"])
    assert source is None
    assert profile.source == "defaults (no gpuscale.yaml found)"
    assert profile.hpa.sync_period == 15.0


def test_simulate_uses_the_same_rule_and_the_profiles_own_positions(project: Path) -> None:
    profile, source, locate = find_profile([Path("DIR/manifests")], None)
    assert (source, profile.hpa.sync_period) == ("DIR/gpuscale.yaml", 20.0)
    assert locate(("hpa", "sync_period")) == "DIR/gpuscale.yaml:1"
    _, source, locate = find_profile([Path("elsewhere")], None)
    assert source == "gpuscale.yaml"


@pytest.mark.parametrize("command", ["lint", "deploy", "verify"])
def test_the_commands_that_read_manifests_pass_them_to_the_rule(command: str) -> None:
    source = (Path(__file__).parents[3] / f"src/gpuscale/cli/{command}_cmd.py").read_text()
    assert "optional_profile(" in source
    call = source[source.index("optional_profile(", source.index("def ")) :].split(")", 1)[0]
    assert "," in call, f"{command} calls optional_profile without its manifests: {call}"


def test_lint_of_an_init_scaffold_finds_its_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``gpuscale init DIR`` then ``gpuscale lint DIR/manifests``, no --profile: the
    profile rule runs (it needs the profile), as it would with --profile DIR/gpuscale.yaml."""
    from gpuscale.cli.main import main

    monkeypatch.chdir(tmp_path)
    assert main(["init", "DIR"]) == 0
    capsys.readouterr()
    select = ["--select", "max-exceeds-gpu-capacity", "-o", "json"]
    main(["lint", "DIR/manifests", *select])
    found = capsys.readouterr().out
    main(["lint", "DIR/manifests", "--profile", "DIR/gpuscale.yaml", *select])
    assert found == capsys.readouterr().out
    assert json.loads(found)["notRun"] == [], "without the profile the rule would not run"
