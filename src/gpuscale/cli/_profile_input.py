"""Which profile a run-it-for-real command uses, read with :func:`gpuscale.inputs.read_profile`.

``gpuscale cluster`` needs a profile (``--profile``, default ``./gpuscale.yaml``);
``install``, ``watch``, ``deploy`` and ``verify`` use ``--profile`` when given, else
``./gpuscale.yaml`` when it exists, else the defaults (``Profile.default()``). The
profile package (pydantic models) is imported on the first call, so the commands that
use this module start without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuscale.profile import Profile

__all__ = ["DEFAULT_PROFILE", "optional_profile"]

DEFAULT_PROFILE = Path("gpuscale.yaml")


def optional_profile(path: Path | None) -> tuple[Profile, str | None]:
    """The profile at ``path``, else ``./gpuscale.yaml`` if it exists, else the defaults;
    with the file it came from (None for the defaults)."""
    from gpuscale.inputs import read_profile  # noqa: PLC0415 - see module doc
    from gpuscale.profile import Profile  # noqa: PLC0415 - see module doc

    if path is None:
        if not DEFAULT_PROFILE.is_file():
            return Profile.default(), None
        path = DEFAULT_PROFILE
    return read_profile(path), str(path)
