"""Settings of ``gpuscale app``: every bad flag or variable is an ``InputError`` naming it."""

from __future__ import annotations

import json

import pytest

from gpuscale.app import TOKEN_ENV, AppConfig, config_from_flags
from gpuscale.app._launch import CONFIG_ENV, config_from_env, config_to_env
from gpuscale.errors import InputError

GOOD = {
    "host": "0.0.0.0",
    "port": "8080",
    "metric_name": "my_custom_gauge",
    "metric_help": "This is a custom gauge metric",
    "log_level": "info",
    "grace_period": "10s",
    "shutdown_delay": "0s",
    "allow_non_finite": False,
    "runtime_metrics": False,
    "setter_token": None,
    "token_from_env": False,
}


def test_defaults_are_the_tutorial_program() -> None:
    config = config_from_flags(**GOOD)  # type: ignore[arg-type]
    assert config == AppConfig()
    assert (config.host, config.port) == ("0.0.0.0", 8080)
    assert config.metric_name == "my_custom_gauge"
    assert config.metric_help == "This is a custom gauge metric"
    assert not config.allow_non_finite


def test_flags_are_parsed() -> None:
    config = config_from_flags(
        **{  # type: ignore[arg-type]
            **GOOD,
            "port": " 0 ",
            "log_level": "DEBUG",
            "grace_period": "1m30s",
            "shutdown_delay": "500ms",
            "setter_token": "abc-DEF_123.~+/==",
        }
    )
    assert config.port == 0
    assert config.log_level == "debug"
    assert config.grace_period == 90.0
    assert config.shutdown_delay == 0.5
    assert config.setter_token == "abc-DEF_123.~+/=="


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"port": "http"}, "--port"),
        ({"port": "80.5"}, "--port"),
        ({"port": "-1"}, "--port"),
        ({"port": "65536"}, "--port"),
        ({"port": ""}, "--port"),
        ({"port": "８０"}, "--port"),  # fullwidth digits: str.isdigit() says yes, we say no
        ({"host": ""}, "--host"),
        ({"host": "local host"}, "--host"),
        ({"metric_name": "1gauge"}, "--metric-name"),
        ({"metric_name": "my-gauge"}, "--metric-name"),
        ({"metric_name": "__reserved"}, "--metric-name"),
        ({"metric_name": ""}, "--metric-name"),
        ({"metric_name": "gauge\N{LATIN SMALL LETTER E WITH ACUTE}"}, "--metric-name"),
        ({"metric_help": "bad \udcff bytes"}, "--metric-help"),
        ({"log_level": "verbose"}, "--log-level"),
        ({"log_level": ""}, "--log-level"),
        ({"grace_period": "soon"}, "--grace-period"),
        ({"grace_period": "-5s"}, "--grace-period"),
        ({"shutdown_delay": "5 s"}, "--shutdown-delay"),
        ({"shutdown_delay": "30s"}, "--shutdown-delay"),
        ({"setter_token": ""}, "--setter-token"),
        ({"setter_token": "has space"}, "--setter-token"),
        ({"setter_token": "new\nline"}, "--setter-token"),
        ({"setter_token": "", "token_from_env": True}, TOKEN_ENV),
        ({"setter_token": "sécret", "token_from_env": True}, TOKEN_ENV),
    ],
)
def test_bad_flags_name_the_flag(change: dict[str, object], where: str) -> None:
    with pytest.raises(InputError) as caught:
        config_from_flags(**{**GOOD, **change})  # type: ignore[arg-type]
    error = caught.value
    assert error.where == where
    assert error.fix
    assert error.exit_code == 2
    assert "\n" not in error.one_line()


@pytest.mark.parametrize("token", ["has space", "sécret", "new\nline", "x" * 3 + "\t"])
def test_a_bad_token_is_never_echoed(token: str) -> None:
    with pytest.raises(InputError) as caught:
        config_from_flags(**{**GOOD, "setter_token": token, "token_from_env": True})  # type: ignore[arg-type]
    assert token.strip() not in caught.value.one_line()


def test_repr_hides_the_token() -> None:
    config = AppConfig(setter_token="s3cr3t-token-value")
    assert "s3cr3t" not in repr(config)
    assert "s3cr3t" not in str(config)


def test_settings_travel_to_the_server_process_without_the_token_in_json() -> None:
    config = AppConfig(port=0, metric_name="queue_depth", setter_token="tok123", grace_period=3)
    env = config_to_env(config, {"PATH": "/bin", TOKEN_ENV: "old"})
    assert env["PATH"] == "/bin"
    assert env[TOKEN_ENV] == "tok123"
    assert "tok123" not in env[CONFIG_ENV]
    assert json.loads(env[CONFIG_ENV])["metric_name"] == "queue_depth"
    assert config_from_env(env) == config


def test_no_token_removes_an_inherited_one() -> None:
    env = config_to_env(AppConfig(), {TOKEN_ENV: "inherited"})
    assert TOKEN_ENV not in env
    assert config_from_env(env).setter_token is None


@pytest.mark.parametrize(
    "environ",
    [{}, {CONFIG_ENV: "not json"}, {CONFIG_ENV: '{"colour": "red"}'}, {CONFIG_ENV: "[]"}],
)
def test_server_process_refuses_missing_or_foreign_settings(environ: dict[str, str]) -> None:
    with pytest.raises(InputError):
        config_from_env(environ)


def test_server_process_rechecks_the_settings() -> None:
    with pytest.raises(InputError, match="--port"):
        config_from_env({CONFIG_ENV: json.dumps({"port": 99999})})
