"""``gpuscale app`` flags: one-line errors with exit code 2, and the hand-over to the server.

``os.execve`` is replaced in every test here, so a command line that passes the checks
cannot turn the test process into a server; the integration tests run the real thing.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
import typer
from typer.core import TyperGroup

from gpuscale.app import TOKEN_ENV, AppConfig
from gpuscale.app._launch import CONFIG_ENV
from gpuscale.cli.main import _register_commands, app, main


class ExecCalledError(Exception):
    """Raised by the fake ``execve`` with what the real one would have run."""

    def __init__(self, path: str, argv: list[str], env: dict[str, str]) -> None:
        super().__init__(path)
        self.path, self.argv, self.env = path, argv, env


@pytest.fixture(autouse=True)
def no_exec(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_execve(path: str, argv: list[str], env: dict[str, str]) -> None:
        raise ExecCalledError(path, argv, env)

    monkeypatch.setattr("gpuscale.app._launch.os.execve", fake_execve)
    monkeypatch.delenv(TOKEN_ENV, raising=False)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["app", *args])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (["--port", "eighty"], "--port"),
        (["--port", "70000"], "--port"),
        (["--port", "-1"], "--port"),
        (["--host", ""], "--host"),
        (["--log-level", "loud"], "--log-level"),
        (["--metric-name", "my-gauge"], "--metric-name"),
        (["--metric-name", "9lives"], "--metric-name"),
        (["--metric-name", "process_max_fds", "--runtime-metrics"], "--metric-name"),
        (["--grace-period", "forever"], "--grace-period"),
        (["--grace-period", "2s", "--shutdown-delay", "5s"], "--shutdown-delay"),
        (["--setter-token", "two words"], "--setter-token"),
        (["--setter-token", ""], "--setter-token"),
    ],
)
def test_bad_flag_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], where: str
) -> None:
    code, err = run_cli(capsys, *args)
    assert code == 2
    assert err.count("\n") == 1, err
    assert err.startswith(f"gpuscale: error: {where}: ")
    assert "(fix: " in err
    assert "Traceback" not in err


@pytest.mark.parametrize("value", ["", "white space", "ümlaut", "line\nbreak"])
def test_bad_token_in_the_environment_names_the_variable(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(TOKEN_ENV, value)
    code, err = run_cli(capsys)
    assert code == 2
    assert err.startswith(f"gpuscale: error: {TOKEN_ENV}: ")
    assert err.count("\n") == 1
    if value:
        assert value not in err


def test_good_flags_become_the_server_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, "from-env-token")
    with pytest.raises(ExecCalledError) as caught:
        main(["app", "--port", "0", "--host", "127.0.0.1", "--log-level", "DEBUG"])
    run = caught.value
    assert run.path == sys.executable
    assert run.argv == [sys.executable, "-m", "gpuscale.app"]
    assert run.env[TOKEN_ENV] == "from-env-token"
    assert "from-env-token" not in run.env[CONFIG_ENV]
    assert json.loads(run.env[CONFIG_ENV])["log_level"] == "debug"
    assert all("from-env-token" not in arg for arg in run.argv)


def test_flag_token_wins_over_the_environment(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "from-env")
    with pytest.raises(ExecCalledError) as caught:
        main(["app", "--setter-token", "from-flag"])
    assert caught.value.env[TOKEN_ENV] == "from-flag"
    err = capsys.readouterr().err
    assert err.startswith("gpuscale: warning: --setter-token's value shows in process listings")
    assert TOKEN_ENV in err
    assert "from-flag" not in err


def test_token_from_the_environment_needs_no_warning(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "from-env")
    with pytest.raises(ExecCalledError) as caught:
        main(["app"])
    assert caught.value.env[TOKEN_ENV] == "from-env"
    assert capsys.readouterr().err == ""


def test_cli_defaults_match_the_config_defaults() -> None:
    _register_commands()
    command = typer.main.get_command(app)
    assert isinstance(command, TyperGroup)
    params: dict[str, Any] = {p.name: p.default for p in command.commands["app"].params}
    defaults = AppConfig()
    assert params["host"] == defaults.host
    assert params["port"] is None  # the mode's default: AppConfig's 8080, LlmConfig's 8000
    assert params["metric_name"] == defaults.metric_name
    assert params["metric_help"] == defaults.metric_help
    assert params["log_level"] == defaults.log_level
    assert params["grace_period"] == "10s"
    assert defaults.grace_period == 10.0
    assert params["shutdown_delay"] == "0s"
    assert defaults.shutdown_delay == 0.0
    assert params["allow_non_finite"] is defaults.allow_non_finite
    assert params["runtime_metrics"] is defaults.runtime_metrics


def test_help_teaches_the_tutorial_steps(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["app", "--help"]) == 0
    out = capsys.readouterr().out
    assert "curl 'http://127.0.0.1:8080/?value=160'" in out
    for flag in ("--port", "--host", "--metric-name", "--metric-help", "--log-level"):
        assert flag in out
    assert "--grace-period" in out
    assert "--setter-token" in out
    assert TOKEN_ENV in out
