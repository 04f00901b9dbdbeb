"""Where the tutorial examples are: inside the installed package, or in a checkout.

The wheel carries ``examples/tutorial/``, ``examples/tutorial-fixed/`` and
``examples/tutorial-scenario.yaml`` as ``gpuscale/_examples/`` (hatch ``force-include``
in pyproject.toml; the repository keeps the only copy). A checkout (an editable install)
has no ``_examples``; the files are read from the repository's ``examples/`` instead.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from gpuscale.errors import UnavailableError

__all__ = ["examples_dir"]


def examples_dir() -> Path:
    """The directory holding ``tutorial/``, ``tutorial-fixed/`` and the scenario."""
    packaged = resources.files("gpuscale").joinpath("_examples")
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[3] / "examples"
    if (checkout / "tutorial").is_dir():
        return checkout
    raise UnavailableError(
        "the tutorial examples are not installed with this gpuscale",
        where=str(packaged),
        fix="reinstall gpuscale from its wheel (pip install gpuscale)",
    )
