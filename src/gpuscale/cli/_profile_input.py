"""Reading ``gpuscale.yaml`` as a plain mapping for the run-it-for-real commands.

``gpuscale cluster``, ``install`` and ``watch`` read a few keys of the profile through
small adapters (:func:`gpuscale.cloud.spec.cluster_spec_from_profile`,
:func:`gpuscale.live.helm.install_spec_from_profile`). This is the file-reading half;
when the typed :mod:`gpuscale.profile` lands, the lead swaps this for its loader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from gpuscale.errors import ProfileError

__all__ = ["read_profile_mapping"]


def read_profile_mapping(path: Path) -> dict[str, Any]:
    """The profile at ``path`` as a mapping; :class:`ProfileError` names the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProfileError(
            "no such profile",
            where=str(path),
            fix="pass --profile FILE, or create one with gpuscale init",
        ) from None
    except OSError as exc:
        raise ProfileError(
            f"cannot read the profile ({exc.strerror})", where=str(path), fix="check the path"
        ) from None
    try:
        doc = YAML(typ="safe", pure=True).load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ProfileError(
            f"not valid YAML ({problem})", where=where, fix="fix the YAML syntax at that line"
        ) from None
    if not isinstance(doc, dict):
        raise ProfileError(
            "the profile must be a YAML mapping",
            where=str(path),
            fix="see docs/commands/cluster.md for the keys",
        )
    return doc
