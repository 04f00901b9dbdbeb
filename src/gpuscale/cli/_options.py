"""The options several commands share, defined once so their names, short forms and
meaning cannot drift apart: ``--kubeconfig``, ``--context``, ``-n/--namespace``,
``-p/--profile``, ``-o/--output`` and ``--setter-token``; and the trace replay's
``--trace-format``, ``--workload``, ``--speedup``, ``--until``, ``--seed`` and
``-n/--namespace`` (manifests' default namespace), which ``simulate`` and ``tune`` share.

``deploy``, ``verify``, ``load``, ``watch``, ``install`` and ``cluster`` take them from
here; ``load`` also takes ``--setter-token`` (its helpers fit ``app`` too). Each is a
:data:`typing.Annotated` type for a Typer parameter, or a function making one where the
help says what the command uses it for. Only Typer is imported, so every command's
``--help`` stays light.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from gpuscale.errors import InputError

__all__ = [
    "SETTER_TOKEN_ENV",
    "ContextOption",
    "KubeconfigOption",
    "ManifestNamespaceOption",
    "NamespaceOption",
    "OptionalProfile",
    "OutputOption",
    "SeedOption",
    "SpeedupOption",
    "TraceFormatOption",
    "WorkloadNamespaceOption",
    "check_output",
    "profile_option",
    "setter_token",
    "setter_token_option",
    "until_option",
    "warn_token_flag",
    "workload_option",
]

KubeconfigOption = Annotated[
    str | None,
    typer.Option(
        "--kubeconfig",
        metavar="FILE",
        help="Kubeconfig file (default: $KUBECONFIG, else ~/.kube/config).",
        show_default=False,
    ),
]
ContextOption = Annotated[
    str | None,
    typer.Option(
        "--context",
        metavar="CONTEXT",
        help="Kubeconfig context (default: its current-context).",
        show_default=False,
    ),
]
NamespaceOption = Annotated[
    str | None,
    typer.Option(
        "--namespace",
        "-n",
        metavar="NS",
        help="Namespace of objects that name none (default: the kubeconfig context's).",
        show_default=False,
    ),
]
WorkloadNamespaceOption = Annotated[
    str | None,
    typer.Option(
        "--namespace",
        "-n",
        metavar="NS",
        help="The Deployment's namespace (default: the kubeconfig context's).",
        show_default=False,
    ),
]
OutputOption = Annotated[str, typer.Option("--output", "-o", help="text or json.")]
ManifestNamespaceOption = Annotated[
    str,
    typer.Option(
        "--namespace",
        "-n",
        metavar="NS",
        help="Namespace of objects that set none (as kubectl -n).",
    ),
]
TraceFormatOption = Annotated[
    str,
    typer.Option(
        "--trace-format",
        metavar="auto|azure|mooncake|csv",
        help="auto, azure, mooncake or csv.",
    ),
]
SpeedupOption = Annotated[
    float,
    typer.Option("--speedup", metavar="FACTOR", help="Replay the trace this many times faster."),
]
SeedOption = Annotated[
    int, typer.Option("--seed", metavar="N", help="Random seed (same seed, same run).")
]


def workload_option(does: str) -> Any:
    """``--workload NAME``; ``does`` says what the named Deployment is for."""
    return typer.Option("--workload", metavar="NAME", help=does, show_default=False)


def until_option(default: str) -> Any:
    """``--until DURATION``; ``default`` says what runs when it is not given."""
    return typer.Option(
        "--until",
        metavar="DURATION",
        help=f"Virtual time to simulate (default: {default}).",
        show_default=False,
    )


def profile_option(uses: str) -> Any:
    """``-p/--profile FILE``; ``uses`` says which keys the command reads."""
    return typer.Option(
        "--profile", "-p", metavar="FILE", help=f"The profile ({uses}).", show_default=False
    )


OptionalProfile = Annotated[
    Path | None,
    profile_option("default ./gpuscale.yaml if it exists, else the defaults"),
]


def check_output(output: str) -> None:
    """Refuse an ``-o`` value other than ``text`` or ``json``."""
    if output not in ("text", "json"):
        raise InputError(
            f"unknown output format {output!r}", where="--output", fix="use text or json"
        )


SETTER_TOKEN_ENV = "GPUSCALE_SETTER_TOKEN"
"""The workload's setter token: ``gpuscale app`` requires it, ``gpuscale load`` sends it."""


def setter_token_option(does: str) -> Any:
    """``--setter-token TOKEN``, also read from ``$GPUSCALE_SETTER_TOKEN``; ``does`` says
    what the command does with it."""
    return typer.Option(
        "--setter-token",
        envvar=SETTER_TOKEN_ENV,
        show_envvar=True,
        metavar="TOKEN",
        help=f"{does} Prefer the environment variable: flags show up in process listings.",
    )


def setter_token(ctx: typer.Context, value: str | None) -> tuple[str | None, str]:
    """The setter token and where it came from: ``--setter-token`` or the variable.

    An empty ``$GPUSCALE_SETTER_TOKEN`` is returned as an empty token, not as none
    (Click reads an empty variable as unset), so that a Secret that failed to mount is
    an error, not a setter open to everyone. Once the token is checked, pass ``where``
    to :func:`warn_token_flag`. The token is registered as a secret
    (:mod:`gpuscale._redact`)."""
    from gpuscale._redact import register  # noqa: PLC0415 - keep start-up light

    source = ctx.get_parameter_source("setter_token")
    if value is not None and (source is None or source.name != "ENVIRONMENT"):
        register(value)
        return value, "--setter-token"
    if value is None and SETTER_TOKEN_ENV in os.environ:
        register(os.environ[SETTER_TOKEN_ENV])
        return os.environ[SETTER_TOKEN_ENV], SETTER_TOKEN_ENV
    register(value)
    return value, SETTER_TOKEN_ENV


def warn_token_flag(where: str) -> None:
    """Warn on stderr when the token came from ``--setter-token``: a flag value is
    visible to every user of the machine (``ps``, ``/proc/<pid>/cmdline``)."""
    if where == "--setter-token":
        sys.stderr.write(
            "gpuscale: warning: --setter-token's value shows in process listings (ps); set "
            f"{SETTER_TOKEN_ENV} instead\n"
        )
