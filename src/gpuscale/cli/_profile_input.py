"""Which profile a run-it-for-real command uses, read with :func:`gpuscale.profile.load_profile`.

``gpuscale cluster`` needs a profile (``--profile``, default ``./gpuscale.yaml``);
``install``, ``watch``, ``deploy`` and ``verify`` use ``--profile`` when given, else
``./gpuscale.yaml`` when it exists, else the defaults (``Profile.default()``).
"""

from __future__ import annotations

from pathlib import Path

from gpuscale.profile import Profile, load_profile

__all__ = ["DEFAULT_PROFILE", "optional_profile"]

DEFAULT_PROFILE = Path("gpuscale.yaml")


def optional_profile(path: Path | None) -> tuple[Profile, str | None]:
    """The profile at ``path``, else ``./gpuscale.yaml`` if it exists, else the defaults;
    with the file it came from (None for the defaults)."""
    if path is None:
        if not DEFAULT_PROFILE.is_file():
            return Profile.default(), None
        path = DEFAULT_PROFILE
    return load_profile(path), str(path)
