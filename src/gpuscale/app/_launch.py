"""Hand a checked :class:`AppConfig` from the CLI process to a lean server process.

``gpuscale app`` parses its flags with the same Typer CLI as every other command, and
that CLI is heavy for a process that will idle in a container for weeks: Typer 0.2x
brings pydantic along to coerce parameters, and every command module the CLI registers
loads its own libraries. Measured through the real entry point, serving in the CLI
process idled at ~39 MB against a 40 MB budget.

So once the flags are checked, :func:`exec_server` replaces the CLI process (``execve``,
same PID, so SIGTERM from Docker or the kubelet reaches the server directly) with
``python -m gpuscale.app``, which imports only the server. The settings travel in the
environment: ``GPUSCALE_APP_CONFIG`` (JSON, no secrets) and the token in
``GPUSCALE_SETTER_TOKEN``, never on the command line where ``ps`` would show it; no other
secret of gpuscale's (``DIGITALOCEAN_ACCESS_TOKEN``) travels along.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from typing import NoReturn

from gpuscale._redact import child_environment
from gpuscale.app._config import TOKEN_ENV, AppConfig
from gpuscale.app._handler import new_registry
from gpuscale.errors import InputError

__all__ = ["CONFIG_ENV", "config_from_env", "config_to_env", "exec_server"]

CONFIG_ENV = "GPUSCALE_APP_CONFIG"


def config_to_env(config: AppConfig, environ: dict[str, str]) -> dict[str, str]:
    """``environ`` plus the variables that carry ``config`` to ``python -m gpuscale.app``."""
    fields = {
        field.name: getattr(config, field.name)
        for field in dataclasses.fields(config)
        if field.name != "setter_token"
    }
    env = dict(environ)
    env[CONFIG_ENV] = json.dumps(fields, sort_keys=True)
    if config.setter_token is None:
        env.pop(TOKEN_ENV, None)
    else:
        env[TOKEN_ENV] = config.setter_token
    return env


def config_from_env(environ: dict[str, str] | os._Environ[str]) -> AppConfig:
    """The :class:`AppConfig` that :func:`config_to_env` wrote; ``InputError`` otherwise."""
    text = environ.get(CONFIG_ENV)
    if text is None:
        raise InputError(
            f"{CONFIG_ENV} is not set",
            where="python -m gpuscale.app",
            fix="start the server with `gpuscale app`",
        )
    try:
        fields = json.loads(text)
        return AppConfig(**fields, setter_token=environ.get(TOKEN_ENV))
    except (ValueError, TypeError) as error:
        raise InputError(
            f"{CONFIG_ENV} does not hold gpuscale app settings ({error})",
            where=CONFIG_ENV,
            fix="start the server with `gpuscale app`",
        ) from None


def exec_server(config: AppConfig) -> NoReturn:
    """Replace this process with ``python -m gpuscale.app`` serving ``config``.

    Everything that can fail on the settings alone fails here first (a metric name that
    clashes with a runtime metric), so the one-line error comes from the CLI.
    """
    new_registry(config)
    env = config_to_env(config, child_environment(os.environ))
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-m", "gpuscale.app"], env)
