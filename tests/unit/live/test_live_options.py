"""The live commands share their options (``gpuscale.cli._options``): the same names,
short forms and metavars everywhere, and no leftover spelling (``--kube-context``)."""

from __future__ import annotations

from typing import Any

import pytest
import typer.main

from gpuscale.cli.main import app

KUBE_COMMANDS = ["deploy", "verify", "load", "watch", "install"]
WITH_NAMESPACE = ["deploy", "verify", "load", "watch"]
WITH_OUTPUT = ["deploy", "verify", "load", "cluster create", "cluster status"]
WITH_PROFILE = ["deploy", "verify", "watch", "install", *[
    f"cluster {c}" for c in ("create", "status", "kubeconfig", "enable-gpu-metrics", "delete")
]]  # fmt: skip


def _command(path: str) -> Any:
    command: Any = typer.main.get_command(app)
    for name in path.split():
        with typer.Context(command) as ctx:
            command = command.get_command(ctx, name)
    return command


def _opts(path: str) -> dict[str, tuple[str, ...]]:
    """Each option's long flag -> all its flags."""
    return {
        max(p.opts, key=len): tuple(sorted(p.opts))
        for p in _command(path).params
        if getattr(p, "opts", None) and p.opts[0].startswith("-")
    }


@pytest.mark.parametrize("path", KUBE_COMMANDS)
def test_every_command_that_talks_to_kubernetes_takes_context_and_kubeconfig(path: str) -> None:
    opts = _opts(path)
    assert opts["--context"] == ("--context",)
    assert opts["--kubeconfig"] == ("--kubeconfig",)
    assert not any("kube-context" in flag for flags in opts.values() for flag in flags)


@pytest.mark.parametrize("path", WITH_NAMESPACE)
def test_namespace_is_n(path: str) -> None:
    assert _opts(path)["--namespace"] == ("--namespace", "-n")


@pytest.mark.parametrize("path", WITH_OUTPUT)
def test_output_is_o(path: str) -> None:
    assert _opts(path)["--output"] == ("--output", "-o")


@pytest.mark.parametrize("path", WITH_PROFILE)
def test_profile_is_p(path: str) -> None:
    assert _opts(path)["--profile"] == ("--profile", "-p")
