"""Which of gpuscale's dependencies the ``gpuscale app`` container image installs.

The image runs one command, ``gpuscale app``: Typer (and through it rich and pydantic)
parses its flags, then prometheus_client and httptools serve. The rest of gpuscale's
dependencies (numpy, matplotlib, the Kubernetes and DigitalOcean clients, jsonschema and
the Kubernetes schemas, ruamel.yaml, httpx, the PromQL parser) serve other commands and
would make the image's Python environment about 18 times larger. So the ``Dockerfile``
installs the gpuscale wheel with ``--no-deps`` and then only the requirements this module
prints::

    python -m gpuscale._app_requirements > app.txt && pip install -r app.txt

The version ranges come from the installed wheel's own metadata, so ``pyproject.toml``
stays the one place they are written. Standard library only: it runs before any
dependency is installed. ``tests/integration/app/test_entrypoint.py`` runs the entrypoint
with every other dependency made unimportable.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata

__all__ = ["APP_DISTRIBUTIONS", "app_requirements", "main"]

APP_DISTRIBUTIONS = ("httptools", "prometheus-client", "rich", "typer")
"""The distributions ``gpuscale app`` imports (normalised names, PEP 503); pip brings
their own dependencies (Typer's pydantic, click or shellingham) along."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _normalised(requirement: str) -> str:
    match = _NAME.match(requirement)
    if match is None:
        raise ValueError(f"not a requirement: {requirement!r}")
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def app_requirements(distribution: str = "gpuscale") -> list[str]:
    """The requirement strings (name, range, marker) of ``distribution``'s core
    dependencies that are in :data:`APP_DISTRIBUTIONS`, in that order.

    Raises :class:`LookupError` when one of them is not a core dependency any more.
    """
    found: dict[str, str] = {}
    for requirement in metadata.requires(distribution) or []:
        if re.search(r"\bextra\s*==", requirement.partition(";")[2]):
            continue  # an optional extra's (test tools), not a core dependency
        name = _normalised(requirement)
        if name in APP_DISTRIBUTIONS:
            found[name] = requirement
    missing = [name for name in APP_DISTRIBUTIONS if name not in found]
    if missing:
        raise LookupError(f"{distribution} does not depend on {', '.join(missing)}")
    return [found[name] for name in APP_DISTRIBUTIONS]


def main() -> None:
    """Print :func:`app_requirements`, one a line (a pip requirements file)."""
    sys.stdout.write("".join(f"{requirement}\n" for requirement in app_requirements()))


if __name__ == "__main__":
    main()
