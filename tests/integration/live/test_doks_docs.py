"""The DOKS commands shown in ``docs/commands/cluster.md``, ``docs/commands/install.md``,
``docs/walkthrough-doks.md`` and README's "Run it on DOKS" section are what the commands
print today.

Each test runs the command (``--dry-run``: nothing is sent, no token is needed; install
with a fake ``helm`` on PATH that records calls, as ``test_install.py`` does, so a dry
run can be seen to run none) with the walkthrough's own profile, read from the
walkthrough page, and compares with the page's block. A failure names the page.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer.main

from gpuscale.cli.main import app, main

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
README = REPO / "README.md"
CLUSTER_MD = REPO / "docs" / "commands" / "cluster.md"
INSTALL_MD = REPO / "docs" / "commands" / "install.md"
WALKTHROUGH = REPO / "docs" / "walkthrough-doks.md"

FAKE_HELM = """#!/bin/sh
echo "$@" >> "$FAKE_HELM_LOG"
"""


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```$", text, flags=re.S | re.M)


def _block_after(page: Path, marker: str, lang: str) -> str:
    text = page.read_text(encoding="utf-8")
    start = text.index(marker)
    return _blocks(text[start:], lang)[0]


@pytest.fixture
def walkthrough(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The walkthrough's gpuscale.yaml in an empty directory, no token, a fake helm."""
    profile = tmp_path / "gpuscale.yaml"
    profile.write_text(_block_after(WALKTHROUGH, "for this\nwalkthrough:", "yaml"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "helm").write_text(FAKE_HELM)
    (bin_dir / "helm").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setenv("FAKE_HELM_LOG", str(tmp_path / "helm.log"))
    monkeypatch.delenv("DIGITALOCEAN_ACCESS_TOKEN", raising=False)
    monkeypatch.chdir(tmp_path)
    return profile


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def test_cluster_create_dry_run_is_the_one_documented(
    walkthrough: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    printed = json.loads(_run(capsys, "cluster", "create", "-p", str(walkthrough), "--dry-run"))
    documented = json.loads(
        _block_after(CLUSTER_MD, "generated with `gpuscale cluster create --dry-run`", "json")
    )
    assert printed == documented, "docs/commands/cluster.md: the create --dry-run block"
    post = [r for r in printed if r["method"] == "POST"]
    readme = json.loads(_block_after(README, "`gpuscale cluster create --dry-run` prints", "json"))
    assert [readme] == post, "README.md: the create --dry-run example"


@pytest.mark.parametrize(
    ("marker", "argv"),
    [
        ("`--dry-run` (`--merge --expiry 12h`)", ["kubeconfig", "--merge", "--expiry", "12h"]),
        ("dcgm-exporter instead). `--dry-run`", ["enable-gpu-metrics"]),
        ("exits 1. `--dry-run`", ["delete"]),
    ],
)
def test_the_other_cluster_dry_runs_are_the_ones_documented(
    walkthrough: Path, capsys: pytest.CaptureFixture[str], marker: str, argv: list[str]
) -> None:
    printed = json.loads(_run(capsys, "cluster", *argv, "-p", str(walkthrough), "--dry-run"))
    assert printed == json.loads(_block_after(CLUSTER_MD, marker, "json")), (
        f"docs/commands/cluster.md: the {argv[0]} --dry-run block"
    )


def test_install_dry_run_is_the_one_documented_and_runs_no_helm(
    walkthrough: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    printed = _run(capsys, "install", "-p", str(walkthrough), "--dry-run")
    documented = _block_after(INSTALL_MD, "for the\nwalkthrough's profile:", "")
    assert printed == documented, "docs/commands/install.md: the --dry-run block"
    assert not (walkthrough.parent / "helm.log").exists()


def test_install_prints_the_address_the_walkthrough_names(
    walkthrough: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    kubeconfig = walkthrough.parent / "kubeconfig"
    kubeconfig.write_text(
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:9'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: do-atl1-gpu-keda, context: {cluster: c, user: u}}]\n"
        "current-context: do-atl1-gpu-keda\n"
    )
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    printed = _run(capsys, "install", "-p", str(walkthrough))
    run_block = _block_after(INSTALL_MD, "then on stdout:", "")
    assert printed == run_block, "docs/commands/install.md: the output of a run"
    address = printed.splitlines()[1].rsplit(" ", 1)[1]
    assert f"`{address}`" in WALKTHROUGH.read_text(), "docs/walkthrough-doks.md: the address"
    assert "--wait" in (walkthrough.parent / "helm.log").read_text()


def _commands(page: Path, marker: str | None) -> list[list[str]]:
    """The ``gpuscale ...`` commands of the first ``sh`` block after ``marker``, or of
    every ``sh`` block of the page when ``marker`` is None."""
    text = page.read_text(encoding="utf-8")
    blocks = [_block_after(page, marker, "sh")] if marker else _blocks(text, "sh")
    found = []
    for line in "\n".join(blocks).replace("\\\n", " ").splitlines():
        code = line.split("#", 1)[0]
        for part in code.split("&&"):
            words = shlex.split(part)
            if words[:1] == ["gpuscale"]:
                found.append(words[1:])
    return found


def _check_flags(words: list[str]) -> None:
    """Every flag of ``gpuscale words...`` is one the command takes, and its arguments
    parse (Typer's own parser, which raises a usage error otherwise; nothing runs)."""
    command: Any = typer.main.get_command(app)
    rest = list(words)
    while hasattr(command, "get_command") and rest and not rest[0].startswith("-"):
        with typer.Context(command) as ctx:
            found = command.get_command(ctx, rest[0])
        assert found is not None, f"no command {rest[0]!r} in gpuscale {' '.join(words)}"
        command, rest = found, rest[1:]
    with command.make_context("gpuscale", rest) as ctx:
        assert ctx.command is command


@pytest.mark.parametrize(
    ("page", "marker"),
    [(README, "## Run it on DOKS"), (WALKTHROUGH, None)],
)
def test_documented_doks_commands_take_the_flags_shown(page: Path, marker: str | None) -> None:
    commands = _commands(page, marker)
    assert commands, f"{page.name}: no gpuscale command after {marker!r}"
    for words in commands:
        try:
            _check_flags(words)
        except Exception as exc:
            pytest.fail(f"{page.name}: gpuscale {' '.join(words)}: {exc}")


@pytest.mark.parametrize(
    "words",
    [["install", "--kube-context", "x"], ["cluster", "create", "--token", "t"], ["load", "-x"]],
)
def test_the_flag_check_refuses_flags_a_command_does_not_take(words: list[str]) -> None:
    with pytest.raises(Exception, match="No such option"):
        _check_flags(words)
