"""The fixtures agree with lint.

- ``examples/tutorial/README.md`` lists the tutorial's mistakes with their slug and
  ``file:line``: lint reports exactly those at warning and above, each on its line, the
  simulation-backed ``flaps-under-steady-load`` (row 2) included;
- ``examples/tutorial-fixed/`` and the output of ``gpuscale init`` (amd/nvidia ×
  doks/generic) report nothing at warning or above;
- the seed's own copy of the tutorial, whose mirror rewrote ``digitalocean.com`` in the
  nodeSelector key, is caught too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpuscale.cli.main import main
from gpuscale.inputs import read_manifests, read_profile
from gpuscale.lint import REGISTRY, LintOptions, Severity, run_lint
from gpuscale.manifests import load_text
from tests.unit.lint.conftest import EXAMPLES, line_of

TUTORIAL = EXAMPLES / "tutorial"
FIXED = EXAMPLES / "tutorial-fixed"
ROW = re.compile(
    r"^\| \d+ \| `(?P<slug>[a-z-]+)` \| `(?P<file>[\w.-]+\.yaml):(?P<line>\d+)` \|", re.M
)

EXTRA: set[tuple[str, str, int]] = set()
"""Findings at warning or above on examples/tutorial that its README does not list, each
justified here. None today: every warning lint has on the tutorial is a row."""

INFO_ROWS = {("null-values-ignored", "resources.yaml", 152)}
"""README rows lint reports at info (row 5: minReplicaCount 1, no fallback; the README says
so)."""


def _readme_rows() -> set[tuple[str, str, int]]:
    readme = (TUTORIAL / "README.md").read_text()
    return {(m["slug"], m["file"], int(m["line"])) for m in ROW.finditer(readme)}


def _warnings_and_errors(
    path: Path, profile: Path | None, at_least: Severity = Severity.WARNING
) -> set[tuple[str, str, int]]:
    report = run_lint(
        read_manifests([path]), read_profile(profile) if profile else None, LintOptions()
    )
    return {
        (f.rule, Path(f.location.file).name, f.location.line)
        for f in report.findings
        if f.severity.rank >= at_least.rank
    }


def test_the_readme_table_is_read() -> None:
    rows = _readme_rows()
    assert len(rows) == 11
    assert {slug for slug, _, _ in rows} <= set(REGISTRY), "every README slug is a rule"


@pytest.mark.parametrize("profile", [TUTORIAL / "gpuscale.yaml", None], ids=["profile", "none"])
def test_lint_reports_exactly_the_readme_mistakes(profile: Path | None) -> None:
    found = _warnings_and_errors(TUTORIAL, profile)
    assert found - EXTRA == _readme_rows() - INFO_ROWS
    assert _warnings_and_errors(TUTORIAL, profile, Severity.INFO) - found >= INFO_ROWS


def test_row_2_is_the_simulations_finding() -> None:
    [row] = [row for row in _readme_rows() if row[0] == "flaps-under-steady-load"]
    assert row == ("flaps-under-steady-load", "resources.yaml", 156)
    assert REGISTRY["flaps-under-steady-load"].requires == "simulator"


@pytest.mark.parametrize("profile", [FIXED / "gpuscale.yaml", None], ids=["profile", "none"])
def test_the_fixed_tutorial_has_nothing_at_warning_or_above(profile: Path | None) -> None:
    assert _warnings_and_errors(FIXED, profile) == set()


def test_the_seeds_misspelled_node_label_domain() -> None:
    text = (TUTORIAL / "resources.yaml").read_text()
    seed = text.replace("doks.digitalocean.com/gpu-brand", "doks.linux-console.net/gpu-brand")
    report = run_lint(load_text(seed, "resources.yaml"), None, LintOptions())
    [finding] = [f for f in report.findings if f.rule == "gpu-node-selector"]
    assert finding.severity is Severity.ERROR
    assert finding.location.line == line_of(seed, "doks.linux-console.net/gpu-brand")
    assert "doks.digitalocean.com/gpu-brand: amd" in finding.fix


@pytest.mark.parametrize("gpu", ["amd", "nvidia"])
@pytest.mark.parametrize("provider", ["doks", "generic"])
def test_gpuscale_init_output_has_nothing_at_warning_or_above(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], gpu: str, provider: str
) -> None:
    target = tmp_path / "app"
    assert main(["init", str(target), "--gpu", gpu, "--provider", provider]) == 0
    capsys.readouterr()
    for profile in (["--profile", str(target / "gpuscale.yaml")], []):
        code = main(["lint", str(target), *profile, "--fail-on", "warning", "-o", "json"])
        document = json.loads(capsys.readouterr().out)
        assert document["summary"]["objects"] == 4, "the profile is not read as a manifest"
        assert document["summary"]["error"] == document["summary"]["warning"] == 0, document
        if profile:  # with its profile, not even a note (pollingInterval drew one)
            assert document["findings"] == [], document
        assert code == 0
